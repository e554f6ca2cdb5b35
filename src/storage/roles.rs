//! Roles: who may connect and what they may do, kept in the catalog.
//!
//! A role is a name with attributes (LOGIN, SUPERUSER, REPLICATION, CREATEDB,
//! CREATEROLE, INHERIT, BYPASSRLS, CONNECTION LIMIT, VALID UNTIL) and, optionally, a
//! password, stored only as a verifier (`SCRAM-SHA-256$...` or `md5...`, see
//! `auth::scram`): the clear text is never kept, logged or written to the WAL.
//!
//! # Invariants
//!
//! - **The bootstrap superuser always exists.** [`BOOTSTRAP_ROLE_NAME`] (OID
//!   [`BOOTSTRAP_ROLE_OID`]) is in every catalog from its creation, cannot be dropped, and
//!   keeps SUPERUSER and LOGIN; its password and other attributes may change.
//! - **A role change is logged whole.** CREATE and ALTER log the role's full new
//!   definition (`RecordKind::SetRole`), DROP its name (`RecordKind::DropRole`); replay
//!   installs them as they come, so a standby and a recovered server know the same roles.
//!   A checkpoint's catalog image holds every role.
//! - **A membership names roles that exist.** A role's memberships (`member_of`, what
//!   pg_auth_members shows) are part of its definition, logged with it; dropping a role
//!   removes it from every other role's memberships, in the catalog as in replay, so no
//!   membership outlives the role it names. Memberships never form a cycle (GRANT refuses
//!   one).
//! - **OIDs are unique across tables and roles**: a role's OID is made from a table id
//!   the catalog allocates, as a table's is.

use crate::error::Result;
use crate::wal::{Reader, Writer};

/// The superuser every catalog starts with (PostgreSQL's bootstrap superuser is OID 10).
pub const BOOTSTRAP_ROLE_NAME: &str = "postgres";
pub const BOOTSTRAP_ROLE_OID: u32 = 10;

/// A role's definition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Role {
    pub name: String,
    pub oid: u32,
    pub superuser: bool,
    pub create_db: bool,
    pub create_role: bool,
    pub inherit: bool,
    pub login: bool,
    pub replication: bool,
    pub bypass_rls: bool,
    /// -1: no limit.
    pub connection_limit: i32,
    /// The password's verifier (`SCRAM-SHA-256$...` or `md5...`), never the password.
    pub password: Option<String>,
    /// When the password stops being valid: microseconds since 2000-01-01 UTC.
    pub valid_until_us: Option<i64>,
    /// The roles this one is a direct member of (pg_auth_members rows whose `member` it
    /// is), in the order granted.
    pub member_of: Vec<Membership>,
    /// ALTER ROLE ... SET: settings given to its sessions at login, (name, value) with
    /// the setting's canonical name, in the order set.
    pub settings: Vec<(String, String)>,
}

/// One role granted to another: pg_auth_members' `roleid`, `grantor` and `admin_option`
/// (the member is the role that holds it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Membership {
    /// The role granted (its OID).
    pub role: u32,
    /// Who granted it (its OID).
    pub grantor: u32,
    /// WITH ADMIN OPTION: the member may grant the role to others.
    pub admin: bool,
}

impl Role {
    /// A role with PostgreSQL's defaults for CREATE ROLE (CREATE USER adds LOGIN).
    pub fn new(name: &str, oid: u32) -> Role {
        Role {
            name: name.to_string(),
            oid,
            superuser: false,
            create_db: false,
            create_role: false,
            inherit: true,
            login: false,
            replication: false,
            bypass_rls: false,
            connection_limit: -1,
            password: None,
            valid_until_us: None,
            member_of: Vec::new(),
            settings: Vec::new(),
        }
    }

    /// The bootstrap superuser, as a fresh catalog has it.
    pub fn bootstrap() -> Role {
        Role {
            superuser: true,
            create_db: true,
            create_role: true,
            login: true,
            replication: true,
            bypass_rls: true,
            ..Role::new(BOOTSTRAP_ROLE_NAME, BOOTSTRAP_ROLE_OID)
        }
    }

    pub fn is_bootstrap(&self) -> bool {
        self.oid == BOOTSTRAP_ROLE_OID
    }

    /// Its encoding in a WAL record and a checkpoint's catalog image.
    pub fn put(&self, w: &mut Writer) {
        w.str(&self.name);
        w.u32(self.oid);
        let flags = [
            self.superuser,
            self.create_db,
            self.create_role,
            self.inherit,
            self.login,
            self.replication,
            self.bypass_rls,
        ]
        .iter()
        .enumerate()
        .fold(0u8, |acc, (i, &on)| acc | (on as u8) << i);
        // Bit 7: memberships and settings follow (records written before they existed
        // have none).
        let extended = !self.member_of.is_empty() || !self.settings.is_empty();
        w.u8(flags | (extended as u8) << 7);
        w.u32(self.connection_limit as u32);
        w.opt_str(self.password.as_deref());
        match self.valid_until_us {
            None => w.u8(0),
            Some(us) => {
                w.u8(1);
                w.u64(us as u64);
            }
        }
        if extended {
            w.varint(self.member_of.len() as u64);
            for m in &self.member_of {
                w.u32(m.role);
                w.u32(m.grantor);
                w.u8(m.admin as u8);
            }
            w.varint(self.settings.len() as u64);
            for (name, value) in &self.settings {
                w.str(name);
                w.str(value);
            }
        }
    }

    pub fn get(r: &mut Reader) -> Result<Role> {
        let name = r.str()?;
        let oid = r.u32()?;
        let flags = r.u8()?;
        let flag = |i: u8| flags & (1 << i) != 0;
        let connection_limit = r.u32()? as i32;
        let password = r.opt_str()?;
        let valid_until_us = match r.u8()? {
            0 => None,
            _ => Some(r.u64()? as i64),
        };
        let (mut member_of, mut settings) = (Vec::new(), Vec::new());
        if flag(7) {
            for _ in 0..r.varint()? {
                member_of.push(Membership {
                    role: r.u32()?,
                    grantor: r.u32()?,
                    admin: r.u8()? != 0,
                });
            }
            for _ in 0..r.varint()? {
                settings.push((r.str()?, r.str()?));
            }
        }
        Ok(Role {
            name,
            oid,
            superuser: flag(0),
            create_db: flag(1),
            create_role: flag(2),
            inherit: flag(3),
            login: flag(4),
            replication: flag(5),
            bypass_rls: flag(6),
            connection_limit,
            password,
            valid_until_us,
            member_of,
            settings,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_role_reads_back_as_written() {
        let mut role = Role::new("alice", 16_400);
        role.login = true;
        role.replication = true;
        role.connection_limit = 3;
        role.password = Some("SCRAM-SHA-256$4096:c2FsdA==$a2V5:a2V5".into());
        role.valid_until_us = Some(-5);
        role.member_of = vec![
            Membership {
                role: 16_401,
                grantor: 10,
                admin: true,
            },
            Membership {
                role: 16_402,
                grantor: 16_401,
                admin: false,
            },
        ];
        role.settings = vec![("statement_timeout".into(), "5s".into())];
        for r in [role, Role::bootstrap()] {
            let mut w = Writer::default();
            r.put(&mut w);
            let mut reader = Reader::new(&w.buf);
            assert_eq!(Role::get(&mut reader).unwrap(), r);
            assert!(reader.is_done());
        }
    }

    #[test]
    fn a_truncated_role_is_an_error() {
        let mut w = Writer::default();
        Role::bootstrap().put(&mut w);
        for len in 0..w.buf.len() {
            assert!(Role::get(&mut Reader::new(&w.buf[..len])).is_err());
        }
    }
}
