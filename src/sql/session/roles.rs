//! Running role statements: PostgreSQL's privilege rules for who may create, alter and
//! drop which roles, passwords turned into verifiers before anything is logged, and the
//! change logged and installed as one catalog change (`storage/roles.rs`).

use super::{Outcome, Session};
use crate::auth::scram;
use crate::error::{Error, Result, SqlState};
use crate::sql::roles::{check_new_role_name, RoleOptions, RoleStatement};
use crate::storage::Role;
use crate::txn::ddl;
use crate::wal::RecordKind;

fn permission_denied(message: &str) -> Error {
    Error::new(SqlState::INSUFFICIENT_PRIVILEGE, message)
}

fn no_such_role(name: &str) -> Error {
    Error::new(
        SqlState::UNDEFINED_OBJECT,
        format!("role \"{name}\" does not exist"),
    )
}

impl RoleStatement {
    pub fn tag(&self) -> &'static str {
        match self {
            RoleStatement::Create { .. } => "CREATE ROLE",
            RoleStatement::Alter { .. } => "ALTER ROLE",
            RoleStatement::Drop { .. } => "DROP ROLE",
        }
    }
}

impl Session {
    /// The role the session runs as, None if it was dropped meanwhile.
    pub(super) fn current_role(&self) -> Option<std::sync::Arc<Role>> {
        self.engine.txn.catalog.role(&self.user)
    }

    /// Whether the session's role is a superuser now (`is_superuser`). A session of an
    /// engine without authentication (in-process tests) may run as a role the catalog
    /// does not have: it is one.
    pub(super) fn superuser_now(&self) -> bool {
        if self.engine.auth.get().is_none() {
            return self.current_role().is_none_or(|r| r.superuser);
        }
        self.current_role().is_some_and(|r| r.superuser)
    }

    pub(super) fn run_role_statement(&mut self, stmt: &RoleStatement) -> Result<Outcome> {
        self.refuse_in_block(stmt.tag(), None)?;
        match stmt {
            RoleStatement::Create { name, options } => self.create_role(name, options)?,
            RoleStatement::Alter { name, options } => self.alter_role(name, options)?,
            RoleStatement::Drop { names, if_exists } => {
                for name in names {
                    self.drop_role(name, *if_exists)?;
                }
            }
        }
        Ok(Outcome::Command {
            tag: stmt.tag().to_string(),
        })
    }

    fn create_role(&mut self, name: &str, options: &RoleOptions) -> Result<()> {
        let me = self.current_role();
        let superuser = self.superuser_now();
        let create_role = me.as_ref().is_some_and(|r| r.create_role);
        if options.superuser == Some(true) && !superuser {
            return Err(permission_denied("must be superuser to create superusers"));
        }
        if options.replication == Some(true) && !superuser {
            return Err(permission_denied(
                "must be superuser to create replication users",
            ));
        }
        if options.bypass_rls == Some(true) && !superuser {
            return Err(permission_denied(
                "must be superuser to create bypassrls users",
            ));
        }
        if !superuser && !create_role {
            return Err(permission_denied("permission denied to create role"));
        }
        check_new_role_name(name)?;
        let catalog = &self.engine.txn.catalog;
        if catalog.role(name).is_some() {
            return Err(Error::new(
                SqlState::DUPLICATE_OBJECT,
                format!("role \"{name}\" already exists"),
            ));
        }
        let oid = crate::sql::pg_catalog::id_oid(catalog.allocate_table_id());
        let mut role = Role::new(name, oid);
        self.apply_role_options(&mut role, options)?;
        self.log_role(role, true)
    }

    fn alter_role(&mut self, name: &str, options: &RoleOptions) -> Result<()> {
        let catalog = &self.engine.txn.catalog;
        let Some(old) = catalog.role(name) else {
            return Err(no_such_role(name));
        };
        let me = self.current_role();
        let superuser = self.superuser_now();
        let create_role = me.as_ref().is_some_and(|r| r.create_role);
        if (old.superuser || options.superuser.is_some()) && !superuser {
            return Err(permission_denied(
                "must be superuser to alter superuser roles or change superuser attribute",
            ));
        }
        if (old.replication || options.replication.is_some()) && !superuser {
            return Err(permission_denied(
                "must be superuser to alter replication roles or change replication attribute",
            ));
        }
        if options.bypass_rls.is_some() && !superuser {
            return Err(permission_denied(
                "must be superuser to change bypassrls attribute",
            ));
        }
        // Without CREATEROLE a role may change only its own password.
        let only_own_password = name == self.user
            && options.password.is_some()
            && RoleOptions {
                password: None,
                ..options.clone()
            }
            .is_empty();
        if !superuser && !create_role && !only_own_password {
            return Err(permission_denied("permission denied"));
        }
        if old.is_bootstrap() && options.superuser == Some(false) {
            return Err(permission_denied(
                "permission denied: bootstrap user must be superuser",
            ));
        }
        let mut role = (*old).clone();
        self.apply_role_options(&mut role, options)?;
        self.log_role(role, false)
    }

    fn drop_role(&mut self, name: &str, if_exists: bool) -> Result<()> {
        let catalog = &self.engine.txn.catalog;
        let Some(role) = catalog.role(name) else {
            if if_exists {
                self.skipping("role", name);
                return Ok(());
            }
            return Err(no_such_role(name));
        };
        let me = self.current_role();
        let superuser = self.superuser_now();
        if !superuser && !me.as_ref().is_some_and(|r| r.create_role) {
            return Err(permission_denied("permission denied to drop role"));
        }
        if role.superuser && !superuser {
            return Err(permission_denied("must be superuser to drop superusers"));
        }
        if name == self.user {
            return Err(Error::new(
                SqlState::OBJECT_IN_USE,
                "current user cannot be dropped",
            ));
        }
        if role.is_bootstrap() {
            return Err(Error::new(
                SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
                format!("cannot drop role {name} because it is required by the database system"),
            ));
        }
        let txn = self.engine.txn.clone();
        let flight = {
            let _ddl = txn.catalog.ddl_lock();
            ddl::commit_catalog_change(
                &txn,
                RecordKind::DropRole,
                &crate::txn::records::encode_sequence_name(name),
                self.sync_level(),
                |_| txn.catalog.drop_role(name),
            )?
        };
        self.finish_catalog_change(flight);
        Ok(())
    }

    /// Give `role` the options: the password as a verifier, VALID UNTIL as a time.
    fn apply_role_options(&mut self, role: &mut Role, options: &RoleOptions) -> Result<()> {
        let flags = [
            (options.superuser, &mut role.superuser),
            (options.create_db, &mut role.create_db),
            (options.create_role, &mut role.create_role),
            (options.inherit, &mut role.inherit),
            (options.login, &mut role.login),
            (options.replication, &mut role.replication),
            (options.bypass_rls, &mut role.bypass_rls),
        ];
        for (given, flag) in flags {
            if let Some(on) = given {
                *flag = on;
            }
        }
        if let Some(limit) = options.connection_limit {
            role.connection_limit = limit;
        }
        if let Some(until) = &options.valid_until {
            role.valid_until_us = Some(crate::types::parse_timestamp(until, true)?);
        }
        match &options.password {
            None => {}
            Some(None) => role.password = None,
            Some(Some(p)) if p.is_empty() => {
                self.warn(Error::new(
                    SqlState::SUCCESSFUL_COMPLETION,
                    "empty string is not a valid password, clearing password",
                ));
                role.password = None;
            }
            Some(Some(p)) if scram::is_verifier(p) => role.password = Some(p.clone()),
            Some(Some(p)) => {
                role.password = Some(if self.setting_is("password_encryption", "md5") {
                    scram::md5_verifier(p, &role.name)
                } else {
                    scram::Verifier::generate(p).to_string()
                });
            }
        }
        Ok(())
    }

    /// Log `role`'s definition and install it, unless a concurrent statement created
    /// (`new`) or dropped (not `new`) the name meanwhile.
    fn log_role(&mut self, role: Role, new: bool) -> Result<()> {
        let txn = self.engine.txn.clone();
        let flight = {
            let _ddl = txn.catalog.ddl_lock();
            let exists = txn.catalog.role(&role.name).is_some();
            if new && exists {
                return Err(Error::new(
                    SqlState::DUPLICATE_OBJECT,
                    format!("role \"{}\" already exists", role.name),
                ));
            }
            if !new && !exists {
                return Err(no_such_role(&role.name));
            }
            let mut payload = crate::wal::Writer::default();
            role.put(&mut payload);
            ddl::commit_catalog_change(
                &txn,
                RecordKind::SetRole,
                &payload.buf,
                self.sync_level(),
                |_| txn.catalog.set_role(role),
            )?
        };
        self.finish_catalog_change(flight);
        Ok(())
    }
}

impl RoleOptions {
    fn is_empty(&self) -> bool {
        self.superuser.is_none()
            && self.create_db.is_none()
            && self.create_role.is_none()
            && self.inherit.is_none()
            && self.login.is_none()
            && self.replication.is_none()
            && self.bypass_rls.is_none()
            && self.connection_limit.is_none()
            && self.password.is_none()
            && self.valid_until.is_none()
    }
}
