//! Privileges granted on tables, views, sequences and the database: access control lists
//! as PostgreSQL keeps them, kept in the catalog by object OID.
//!
//! An object without a list has its default: its owner (always a superuser here, see
//! `sql/session/roles.rs`) may do everything, and nobody else anything, except that
//! PUBLIC may CONNECT to the database and create TEMPORARY tables there. GRANT and
//! REVOKE give an object a list; each item says what one grantee (a role, or PUBLIC)
//! may do. Superusers are never checked.
//!
//! # Invariants
//!
//! - **A change is logged whole**: GRANT and REVOKE log every changed object's new list
//!   in one record (`RecordKind::SetAcls`), so a statement on several objects is all or
//!   nothing across a crash; replay and standbys install the same lists; a checkpoint's
//!   catalog image holds them all.
//! - **The owner's implicit rights are written out once a list exists** (as PostgreSQL
//!   does), so `relacl` shows them as `postgres=arwdDxt/postgres`.

use crate::error::Result;
use crate::wal::{Reader, Writer};

/// Privilege bits, in PostgreSQL's order (`ACL_INSERT` ... `ACL_CONNECT`).
pub const INSERT: u32 = 1 << 0;
pub const SELECT: u32 = 1 << 1;
pub const UPDATE: u32 = 1 << 2;
pub const DELETE: u32 = 1 << 3;
pub const TRUNCATE: u32 = 1 << 4;
pub const REFERENCES: u32 = 1 << 5;
pub const TRIGGER: u32 = 1 << 6;
pub const USAGE: u32 = 1 << 8;
pub const CREATE: u32 = 1 << 9;
pub const TEMPORARY: u32 = 1 << 10;
pub const CONNECT: u32 = 1 << 11;

/// Every privilege a table or view has.
pub const ALL_ON_TABLE: u32 = INSERT | SELECT | UPDATE | DELETE | TRUNCATE | REFERENCES | TRIGGER;
/// Every privilege a sequence has.
pub const ALL_ON_SEQUENCE: u32 = USAGE | SELECT | UPDATE;
/// Every privilege a database has.
pub const ALL_ON_DATABASE: u32 = CREATE | TEMPORARY | CONNECT;

/// The grantee OID that stands for PUBLIC (every role).
pub const PUBLIC: u32 = 0;

/// In a statement's needed privileges (`planner::Required`): any one of the other bits
/// suffices (LOCK TABLE's check), not all of them.
pub const ANY_OF: u32 = 1 << 31;

/// PostgreSQL's letter for each privilege bit, in its `aclitem` order.
const LETTERS: [(u32, char); 11] = [
    (INSERT, 'a'),
    (SELECT, 'r'),
    (UPDATE, 'w'),
    (DELETE, 'd'),
    (TRUNCATE, 'D'),
    (REFERENCES, 'x'),
    (TRIGGER, 't'),
    (CREATE, 'C'),
    (TEMPORARY, 'T'),
    (CONNECT, 'c'),
    (USAGE, 'U'),
];

/// What one grantee may do with an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AclItem {
    /// A role's OID, or [`PUBLIC`].
    pub grantee: u32,
    pub grantor: u32,
    pub privileges: u32,
}

/// An object's list; empty grants nothing to anyone but superusers.
pub type Acl = Vec<AclItem>;

/// The privileges' letters in PostgreSQL's order (`arwdDxt`).
pub fn letters(privileges: u32) -> String {
    let mut out = String::new();
    for (bit, letter) in LETTERS {
        if privileges & bit != 0 {
            out.push(letter);
        }
    }
    out
}

/// Whether `acl` lets a role whose privileges are those of `roles` (itself and the roles
/// it inherits from, `Catalog::roles_of`) do all of `wanted`: their items and PUBLIC's
/// together.
pub fn allows(acl: &[AclItem], roles: &[u32], wanted: u32) -> bool {
    let granted = acl
        .iter()
        .filter(|i| i.grantee == PUBLIC || roles.contains(&i.grantee))
        .fold(0, |acc, i| acc | i.privileges);
    granted & wanted == wanted
}

/// Whether `acl` lets such a role do at least one of `wanted`.
pub fn allows_any(acl: &[AclItem], roles: &[u32], wanted: u32) -> bool {
    acl.iter()
        .filter(|i| i.grantee == PUBLIC || roles.contains(&i.grantee))
        .any(|i| i.privileges & wanted != 0)
}

pub fn put_acl(w: &mut Writer, oid: u32, acl: &[AclItem]) {
    w.u32(oid);
    w.varint(acl.len() as u64);
    for item in acl {
        w.u32(item.grantee);
        w.u32(item.grantor);
        w.u32(item.privileges);
    }
}

pub fn get_acl(r: &mut Reader) -> Result<(u32, Acl)> {
    let oid = r.u32()?;
    let n = r.varint()?;
    let mut acl = Vec::new();
    for _ in 0..n {
        acl.push(AclItem {
            grantee: r.u32()?,
            grantor: r.u32()?,
            privileges: r.u32()?,
        });
    }
    Ok((oid, acl))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_are_in_postgresql_order() {
        assert_eq!(letters(ALL_ON_TABLE), "arwdDxt");
        assert_eq!(letters(ALL_ON_SEQUENCE), "rwU");
        assert_eq!(letters(ALL_ON_DATABASE), "CTc");
        assert_eq!(letters(SELECT | INSERT), "ar");
    }

    #[test]
    fn public_items_count_for_everyone() {
        let acl = vec![
            AclItem {
                grantee: PUBLIC,
                grantor: 10,
                privileges: SELECT,
            },
            AclItem {
                grantee: 20,
                grantor: 10,
                privileges: INSERT,
            },
        ];
        assert!(allows(&acl, &[20], SELECT | INSERT));
        assert!(allows(&acl, &[30], SELECT));
        assert!(!allows(&acl, &[30], INSERT));
        assert!(!allows(&[], &[30], SELECT));
    }

    #[test]
    fn an_acl_reads_back_as_written() {
        let acl = vec![AclItem {
            grantee: 7,
            grantor: 10,
            privileges: ALL_ON_TABLE,
        }];
        let mut w = Writer::default();
        put_acl(&mut w, 16_400, &acl);
        let mut r = Reader::new(&w.buf);
        assert_eq!(get_acl(&mut r).unwrap(), (16_400, acl));
        assert!(r.is_done());
        for len in 0..w.buf.len() {
            assert!(get_acl(&mut Reader::new(&w.buf[..len])).is_err());
        }
    }
}
