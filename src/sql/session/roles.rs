//! Running role statements: PostgreSQL's privilege rules for who may create, alter and
//! drop which roles, passwords turned into verifiers before anything is logged, and the
//! change logged and installed as one catalog change (`storage/roles.rs`).

use super::{Outcome, Session};
use crate::auth::scram;
use crate::error::{Error, Result, SqlState};
use crate::sql::pg_catalog;
use crate::sql::plan::Plan;
use crate::sql::roles::{check_new_role_name, GrantObjects, Privilege, RoleOptions, RoleStatement};
use crate::storage::roles::{Membership, BOOTSTRAP_ROLE_OID};
use crate::storage::{acl, Catalog, Role};
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
            RoleStatement::Alter { .. } | RoleStatement::AlterSettings { .. } => "ALTER ROLE",
            RoleStatement::Drop { .. } => "DROP ROLE",
            RoleStatement::Grant { revoke: false, .. } => "GRANT",
            RoleStatement::Grant { revoke: true, .. } => "REVOKE",
            RoleStatement::Membership { revoke: false, .. } => "GRANT ROLE",
            RoleStatement::Membership { revoke: true, .. } => "REVOKE ROLE",
        }
    }
}

impl Session {
    /// The role the session runs as, None if it was dropped meanwhile.
    pub(super) fn current_role(&self) -> Option<std::sync::Arc<Role>> {
        self.engine.txn.catalog.role(self.current_user())
    }

    /// `session_user`: the role the client authenticated as, or the one SET SESSION
    /// AUTHORIZATION chose.
    pub(super) fn session_user(&self) -> &str {
        identity(&self.overrides, &self.user).1
    }

    /// `current_user`: the role SET ROLE chose, else the session user. Privileges are
    /// this role's.
    pub(super) fn current_user(&self) -> &str {
        identity(&self.overrides, &self.user).0
    }

    /// SET ROLE and SET SESSION AUTHORIZATION (`name` is `role` or
    /// `session_authorization`; `value` None: back to the default), checked as
    /// PostgreSQL checks them: the role exists (22023); SET ROLE to a role the session
    /// user is a member of (or any, for a superuser); SET SESSION AUTHORIZATION only for a
    /// client that authenticated as a superuser (42501). A new session authorization
    /// also ends SET ROLE. Returns the value to keep (None for `none` / DEFAULT).
    pub(super) fn check_identity_change(
        &mut self,
        name: &'static str,
        value: Option<String>,
        local: bool,
    ) -> Result<Option<String>> {
        if name != "role" && name != "session_authorization" {
            return Ok(value);
        }
        let value = value.filter(|v| !(name == "role" && v.eq_ignore_ascii_case("none")));
        let Some(target) = &value else {
            if name == "session_authorization" {
                self.end_set_role(local);
            }
            return Ok(None);
        };
        let engine = self.engine.clone();
        let catalog = &engine.txn.catalog;
        let Some(role) = catalog.role(target) else {
            return Err(Error::new(
                SqlState::INVALID_PARAMETER_VALUE,
                format!("role \"{target}\" does not exist"),
            ));
        };
        // An engine without authentication (in-process tests) runs as a superuser.
        let superuser = |name: &str| {
            catalog
                .role(name)
                .map_or(engine.auth.get().is_none(), |r| r.superuser)
        };
        if name == "role" {
            let session = catalog.role(self.session_user());
            let member = session
                .as_ref()
                .is_some_and(|s| catalog.roles_of(s, false).contains(&role.oid));
            if !member && !superuser(self.session_user()) {
                return Err(permission_denied(&format!(
                    "permission denied to set role \"{target}\""
                )));
            }
        } else {
            if *target != self.user && !superuser(&self.user) {
                return Err(permission_denied(&format!(
                    "permission denied to set session authorization \"{target}\""
                )));
            }
            self.end_set_role(local);
        }
        Ok(value)
    }

    /// SET ROLE NONE, as a new session authorization implies.
    fn end_set_role(&mut self, local: bool) {
        if self.overrides.contains_key("role") {
            self.note_setting_change("role", local);
            self.overrides.remove("role");
        }
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

    /// Whether the session's role may do what a statement needs (`Planned::privileges`):
    /// 42501 `permission denied for table t` if not. Superusers may do everything; an
    /// object nobody granted anything on is its owner's (a superuser's) alone.
    pub(super) fn check_privileges(
        &self,
        required: &[crate::sql::planner::Required],
    ) -> Result<()> {
        if required.is_empty() || self.superuser_now() {
            return Ok(());
        }
        let roles = self.privileges_of();
        let catalog = &self.engine.txn.catalog;
        for (oid, bits, kind, name) in required {
            let allowed = match catalog.acl(*oid) {
                Some(list) if bits & acl::ANY_OF != 0 => {
                    acl::allows_any(&list, &roles, bits & !acl::ANY_OF)
                }
                Some(list) => acl::allows(&list, &roles, *bits),
                None => roles.contains(&BOOTSTRAP_ROLE_OID),
            };
            if !allowed {
                return Err(permission_denied(&format!(
                    "permission denied for {kind} {name}"
                )));
            }
        }
        Ok(())
    }

    /// The roles whose privileges the session's role has: itself and those it inherits
    /// from (`Catalog::roles_of`); none if it was dropped.
    /// Kept while neither the catalog (`Catalog::version`) nor `current_user` changes,
    /// so a statement does not walk the roles again.
    pub(super) fn privileges_of(&self) -> std::sync::Arc<[u32]> {
        let version = self.engine.txn.catalog.version();
        let user = self.current_user();
        let mut cache = self.privileges_cache.lock();
        if let Some((v, u, roles)) = cache.as_ref() {
            if *v == version && u == user {
                return roles.clone();
            }
        }
        let roles: std::sync::Arc<[u32]> = self
            .current_role()
            .map(|r| self.engine.txn.catalog.roles_of(&r, true))
            .unwrap_or_default()
            .into();
        *cache = Some((version, user.to_string(), roles.clone()));
        roles
    }

    /// Whether the session's role may act as the owner of every table, index, sequence
    /// and view: a superuser, or a role with the bootstrap superuser's privileges.
    pub(super) fn owns_every_table(&self) -> bool {
        self.superuser_now() || self.privileges_of().contains(&BOOTSTRAP_ROLE_OID)
    }

    /// Every table, index, sequence and view belongs to the bootstrap superuser
    /// (PostgreSQL 15 lets no other role create in schema `public`): a role that is not a
    /// superuser and does not inherit its privileges may not create, alter or drop them,
    /// nor force a checkpoint (42501, PostgreSQL's messages). What it may read and write
    /// is granted ([`Session::check_privileges`]).
    pub(super) fn refuse_unless_owner(&self, plan: &Plan) -> Result<()> {
        if self.superuser_now() || (!matches!(plan, Plan::Checkpoint) && self.owns_every_table()) {
            return Ok(());
        }
        let owner = |kind: &str, name: &str| {
            Err(permission_denied(&format!(
                "must be owner of {kind} {name}"
            )))
        };
        let first = |names: &[String]| names.first().cloned().unwrap_or_default();
        match plan {
            Plan::CreateTable { .. } | Plan::CreateSequence { .. } | Plan::CreateView { .. } => {
                Err(permission_denied("permission denied for schema public"))
            }
            Plan::DropTable { names, .. } => owner("table", &first(names)),
            Plan::AddIdentity { table, .. }
            | Plan::AddPrimaryKey { table, .. }
            | Plan::DropPrimaryKey { table, .. }
            | Plan::CreateIndex { table, .. }
            | Plan::AddColumn { table, .. }
            | Plan::Rename { table, .. }
            | Plan::Comment { table, .. }
            | Plan::AddForeignKey { table, .. }
            | Plan::DropForeignKey { table, .. }
            | Plan::AddCheck { table, .. }
            | Plan::DropCheck { table, .. }
            | Plan::ValidateConstraint { table, .. }
            | Plan::DropColumn { table, .. }
            | Plan::SetNotNull { table, .. }
            | Plan::SetColumnType { table, .. }
            | Plan::RewriteColumnType { table, .. }
            | Plan::SetColumnDefault { table, .. } => owner("table", &table.def().name),
            Plan::DropIndex { indexes, .. } => match indexes.first() {
                Some((_, name)) => owner("index", name),
                None => Ok(()),
            },
            Plan::DropSequence { names, .. } => owner("sequence", &first(names)),
            Plan::SequenceOwner { name, .. } | Plan::RestartSequence { name, .. } => {
                owner("sequence", name)
            }
            Plan::DropView { names, .. } => owner("view", &first(names)),
            Plan::Checkpoint => Err(permission_denied(
                "must be superuser or have privileges of pg_checkpoint to do CHECKPOINT",
            )),
            _ => Ok(()),
        }
    }

    pub(super) fn run_role_statement(&mut self, stmt: &RoleStatement) -> Result<Outcome> {
        self.refuse_in_block(stmt.tag(), None)?;
        match stmt {
            RoleStatement::Create {
                name,
                options,
                in_role,
                members,
                admins,
            } => self.create_role(name, options, in_role, members, admins)?,
            RoleStatement::Membership {
                revoke,
                roles,
                members,
                admin,
            } => self.grant_roles(*revoke, roles, members, *admin)?,
            RoleStatement::Alter { name, options } => self.alter_role(name, options)?,
            RoleStatement::AlterSettings {
                name,
                setting,
                value,
                from_current,
            } => {
                self.alter_role_settings(name, setting.as_deref(), value.clone(), *from_current)?
            }
            RoleStatement::Drop { names, if_exists } => {
                for name in names {
                    self.drop_role(name, *if_exists)?;
                }
            }
            RoleStatement::Grant {
                revoke,
                privileges,
                objects,
                grantees,
            } => self.grant(*revoke, privileges.as_deref(), objects, grantees)?,
        }
        Ok(Outcome::Command {
            tag: stmt.tag().to_string(),
        })
    }

    fn create_role(
        &mut self,
        name: &str,
        options: &RoleOptions,
        in_role: &[String],
        members: &[String],
        admins: &[String],
    ) -> Result<()> {
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
        let grantor = self.grantor();
        let name = name.to_string();
        self.change_roles(|catalog| {
            if catalog.role(&name).is_some() {
                return Err(Error::new(
                    SqlState::DUPLICATE_OBJECT,
                    format!("role \"{name}\" already exists"),
                ));
            }
            for group in in_role {
                let granted = catalog.role(group).ok_or_else(|| no_such_role(group))?;
                grantor.may_grant(catalog, &granted)?;
                add_membership(&mut role, granted.oid, grantor.oid, false);
            }
            let mut changed = vec![role];
            let given = members.iter().map(|m| (m, false));
            for (member, admin) in given.chain(admins.iter().map(|m| (m, true))) {
                let mut m = catalog.role(member).ok_or_else(|| no_such_role(member))?;
                if let Some(done) = changed.iter().find(|r| r.name == *member) {
                    m = std::sync::Arc::new(done.clone());
                }
                let mut m = (*m).clone();
                add_membership(&mut m, oid, grantor.oid, admin);
                changed.retain(|r| r.name != m.name);
                changed.push(m);
            }
            Ok(changed)
        })
        .map(drop)
    }

    /// Who grants roles in this statement: the session's role, and what lets it.
    fn grantor(&self) -> Grantor {
        let me = self.current_role();
        Grantor {
            oid: me.as_ref().map_or(BOOTSTRAP_ROLE_OID, |r| r.oid),
            superuser: self.superuser_now(),
            create_role: me.as_ref().is_some_and(|r| r.create_role),
            me,
        }
    }

    /// GRANT roles TO members / REVOKE roles FROM members: each member's new memberships,
    /// logged together as one change. PostgreSQL's notices for what changes nothing.
    fn grant_roles(
        &mut self,
        revoke: bool,
        roles: &[String],
        members: &[String],
        admin: bool,
    ) -> Result<()> {
        let grantor = self.grantor();
        let session_user = self.session_user().to_string();
        let current = grantor.me.as_ref().map(|r| r.name.clone());
        let resolve = |name: &String| -> String {
            match name.as_str() {
                "current_user" | "current_role" => current.clone().unwrap_or_default(),
                "session_user" => session_user.clone(),
                _ => name.clone(),
            }
        };
        let roles: Vec<String> = roles.iter().map(resolve).collect();
        let members: Vec<String> = members.iter().map(resolve).collect();
        let mut notices = Vec::new();
        self.change_roles(|catalog| {
            let mut changed: Vec<Role> = Vec::new();
            for role_name in &roles {
                let granted = catalog
                    .role(role_name)
                    .ok_or_else(|| no_such_role(role_name))?;
                grantor.may_grant(catalog, &granted)?;
                for member_name in &members {
                    let mut member = match changed.iter().position(|r| r.name == *member_name) {
                        Some(i) => changed.remove(i),
                        None => (*catalog
                            .role(member_name)
                            .ok_or_else(|| no_such_role(member_name))?)
                        .clone(),
                    };
                    let held = member.member_of.iter().position(|m| m.role == granted.oid);
                    match (revoke, held) {
                        (false, Some(i)) if !admin || member.member_of[i].admin => {
                            notices.push(format!(
                                "role \"{member_name}\" is already a member of role \"{role_name}\""
                            ));
                        }
                        (false, Some(i)) => member.member_of[i].admin = true,
                        (false, None) => {
                            if catalog.roles_of(&granted, false).contains(&member.oid) {
                                return Err(Error::new(
                                    SqlState::INVALID_GRANT_OPERATION,
                                    format!(
                                        "role \"{role_name}\" is a member of role \"{member_name}\""
                                    ),
                                ));
                            }
                            add_membership(&mut member, granted.oid, grantor.oid, admin);
                        }
                        (true, None) => notices.push(format!(
                            "role \"{member_name}\" is not a member of role \"{role_name}\""
                        )),
                        (true, Some(i)) if admin => member.member_of[i].admin = false,
                        (true, Some(i)) => {
                            member.member_of.remove(i);
                        }
                    }
                    changed.push(member);
                }
            }
            Ok(changed)
        })?;
        for notice in notices {
            // GRANT's is a NOTICE, REVOKE's a WARNING, as in PostgreSQL.
            let code = if revoke {
                SqlState::WARNING
            } else {
                SqlState::SUCCESSFUL_COMPLETION
            };
            self.warn(Error::new(code, notice));
        }
        Ok(())
    }

    /// Log new definitions of roles, computed by `change` under the catalog's DDL lock
    /// from the roles as they are then (so no concurrent change is lost), in one
    /// `SetRole` record, and install them. Nothing is logged when `change` fails or
    /// changes nothing. Returns how many roles changed.
    fn change_roles(
        &mut self,
        change: impl FnOnce(&crate::storage::Catalog) -> Result<Vec<Role>>,
    ) -> Result<usize> {
        let txn = self.engine.txn.clone();
        let level = self.sync_level();
        let flight = {
            let _ddl = txn.catalog.ddl_lock();
            let roles = change(&txn.catalog)?;
            if roles.is_empty() {
                return Ok(0);
            }
            let mut payload = crate::wal::Writer::default();
            for role in &roles {
                role.put(&mut payload);
            }
            let changed = roles.len();
            let flight =
                ddl::commit_catalog_change(&txn, RecordKind::SetRole, &payload.buf, level, |_| {
                    for role in roles {
                        txn.catalog.set_role(role);
                    }
                })?;
            (flight, changed)
        };
        self.finish_catalog_change(flight.0);
        Ok(flight.1)
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
        let only_own_password = name == self.current_user()
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
        self.change_roles(|catalog| {
            // Memberships as they are now: a GRANT meanwhile is kept.
            let now = catalog
                .role(&role.name)
                .ok_or_else(|| no_such_role(&role.name))?;
            role.member_of = now.member_of.clone();
            Ok(vec![role])
        })
        .map(drop)
    }

    /// ALTER ROLE name SET / RESET: the settings its sessions start with. A superuser
    /// role's only by a superuser; another's with CREATEROLE or by itself. The value is
    /// checked as SET checks it, now.
    fn alter_role_settings(
        &mut self,
        name: &str,
        setting: Option<&str>,
        value: Option<String>,
        from_current: bool,
    ) -> Result<()> {
        let catalog = &self.engine.txn.catalog;
        let Some(role) = catalog.role(name) else {
            return Err(no_such_role(name));
        };
        let superuser = self.superuser_now();
        if role.superuser && !superuser {
            return Err(permission_denied("must be superuser to alter superusers"));
        }
        let create_role = self.current_role().is_some_and(|r| r.create_role);
        if !role.superuser && !superuser && !create_role && name != self.current_user() {
            return Err(permission_denied("permission denied"));
        }
        // (canonical name, new value or None to remove); None: every setting goes.
        let change: Option<(&'static str, Option<String>)> = match setting {
            None => None,
            Some(setting) => {
                let def = crate::settings::def(setting).ok_or_else(|| {
                    Error::new(
                        SqlState::UNDEFINED_OBJECT,
                        format!("unrecognized configuration parameter \"{setting}\""),
                    )
                })?;
                if matches!(def.name, "role" | "session_authorization") {
                    return Err(Error::unsupported(format!(
                        "ALTER ROLE ... SET {} is not supported",
                        def.name
                    )));
                }
                let value = match (value, from_current) {
                    (_, true) => self.show(def.name),
                    (value, false) => value,
                };
                // Kept as given (as PostgreSQL keeps it), once SET would take it.
                if let Some(v) = &value {
                    crate::settings::check_session_set(def.name, v)?;
                }
                Some((def.name, value))
            }
        };
        let name = name.to_string();
        self.change_roles(|catalog| {
            let mut role = (*catalog.role(&name).ok_or_else(|| no_such_role(&name))?).clone();
            match &change {
                None => role.settings.clear(),
                Some((setting, value)) => {
                    let at = role.settings.iter().position(|(n, _)| n == setting);
                    match (at, value) {
                        (Some(i), Some(v)) => role.settings[i].1 = v.clone(),
                        (None, Some(v)) => role.settings.push((setting.to_string(), v.clone())),
                        (Some(i), None) => {
                            role.settings.remove(i);
                        }
                        (None, None) => {}
                    }
                }
            }
            Ok(vec![role])
        })
        .map(drop)
    }

    /// The settings a session of `user` starts with (ALTER ROLE ... SET), before the
    /// client's own.
    pub fn apply_role_settings(&mut self, user: &str) {
        let Some(role) = self.engine.txn.catalog.role(user) else {
            return;
        };
        for (name, value) in &role.settings {
            if let Err(e) = self.apply_startup_setting(name, value) {
                tracing::warn!("ignoring role setting {name}: {}", e.message);
            }
        }
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
        if name == self.current_user() {
            return Err(Error::new(
                SqlState::OBJECT_IN_USE,
                "current user cannot be dropped",
            ));
        }
        if name == self.session_user() {
            return Err(Error::new(
                SqlState::OBJECT_IN_USE,
                "session user cannot be dropped",
            ));
        }
        if role.is_bootstrap() {
            return Err(Error::new(
                SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
                format!("cannot drop role {name} because it is required by the database system"),
            ));
        }
        let granted = self.privileges_granted_to(role.oid);
        if !granted.is_empty() {
            return Err(Error::new(
                SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
                format!("role \"{name}\" cannot be dropped because some objects depend on it"),
            )
            .with_detail(granted.join("\n")));
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
}

impl Session {
    /// What still names the role `oid` in a privilege list, as PostgreSQL's DETAIL
    /// lines (`privileges for table t`); objects since dropped are not.
    fn privileges_granted_to(&self, oid: u32) -> Vec<String> {
        let everything = GrantObjects::AllTables;
        let mut targets = self.grant_targets(&everything).unwrap_or_default();
        targets.extend(
            self.grant_targets(&GrantObjects::AllSequences)
                .unwrap_or_default(),
        );
        targets.extend(
            self.grant_targets(&GrantObjects::Database(vec!["postgres".into()]))
                .unwrap_or_default(),
        );
        let catalog = &self.engine.txn.catalog;
        // The database first, then the objects in the order they were made.
        targets.sort_by_key(|t| (t.kind != "database", t.oid));
        targets
            .iter()
            .filter(|t| {
                catalog
                    .acl(t.oid)
                    .is_some_and(|list| list.iter().any(|i| i.grantee == oid))
            })
            .map(|t| format!("privileges for {} {}", t.kind, t.name))
            .collect()
    }
}

/// An object GRANT or REVOKE acts on: its OID, kind, name and every privilege it has.
struct GrantTarget {
    oid: u32,
    kind: &'static str,
    name: String,
    all: u32,
}

impl Session {
    /// The objects `objects` names, or the error PostgreSQL gives for a name that is not
    /// one.
    fn grant_targets(&self, objects: &GrantObjects) -> Result<Vec<GrantTarget>> {
        let engine = &self.engine;
        let catalog = &engine.txn.catalog;
        let hidden = self.hidden_tables();
        let relation = |name: &str| -> Result<GrantTarget> {
            if let Some(t) = catalog.table_seen(name, &hidden) {
                return Ok(GrantTarget {
                    oid: pg_catalog::table_oid(&t),
                    kind: "table",
                    name: name.to_string(),
                    all: acl::ALL_ON_TABLE,
                });
            }
            if let Some(v) = catalog.view(name) {
                return Ok(GrantTarget {
                    oid: pg_catalog::id_oid(v.id),
                    kind: "view",
                    name: name.to_string(),
                    all: acl::ALL_ON_TABLE,
                });
            }
            match pg_catalog::sequence_oid(engine, name) {
                Some(oid) => Ok(GrantTarget {
                    oid,
                    kind: "sequence",
                    name: name.to_string(),
                    all: acl::ALL_ON_SEQUENCE,
                }),
                None => Err(Error::new(
                    SqlState::UNDEFINED_TABLE,
                    format!("relation \"{name}\" does not exist"),
                )),
            }
        };
        Ok(match objects {
            GrantObjects::Tables(names) => {
                names.iter().map(|n| relation(n)).collect::<Result<_>>()?
            }
            GrantObjects::Sequences(names) => {
                let mut targets = Vec::new();
                for name in names {
                    let target = relation(name)?;
                    if target.kind != "sequence" {
                        return Err(Error::new(
                            SqlState::WRONG_OBJECT_TYPE,
                            format!("\"{name}\" is not a sequence"),
                        ));
                    }
                    targets.push(target);
                }
                targets
            }
            GrantObjects::AllTables => {
                let mut names: Vec<String> = catalog
                    .tables_seen(&hidden)
                    .iter()
                    .map(|t| t.def().name.clone())
                    .collect();
                names.extend(catalog.views().iter().map(|v| v.name.clone()));
                names.sort();
                names.iter().map(|n| relation(n)).collect::<Result<_>>()?
            }
            GrantObjects::AllSequences => {
                let mut names: Vec<String> = catalog.sequence_names().into_iter().collect();
                names.sort();
                names
                    .iter()
                    .filter_map(|n| pg_catalog::sequence_oid(engine, n).map(|oid| (n, oid)))
                    .map(|(n, oid)| GrantTarget {
                        oid,
                        kind: "sequence",
                        name: n.clone(),
                        all: acl::ALL_ON_SEQUENCE,
                    })
                    .collect()
            }
            GrantObjects::Database(names) => names
                .iter()
                .map(|n| {
                    if n != "postgres" {
                        return Err(Error::new(
                            SqlState::INVALID_CATALOG_NAME,
                            format!("database \"{n}\" does not exist"),
                        ));
                    }
                    Ok(GrantTarget {
                        oid: pg_catalog::DATABASE_OID,
                        kind: "database",
                        name: n.clone(),
                        all: acl::ALL_ON_DATABASE,
                    })
                })
                .collect::<Result<_>>()?,
        })
    }

    /// GRANT or REVOKE: every object's new list logged in one record and installed.
    fn grant(
        &mut self,
        revoke: bool,
        privileges: Option<&[Privilege]>,
        objects: &GrantObjects,
        grantees: &[Option<String>],
    ) -> Result<()> {
        let targets = self.grant_targets(objects)?;
        let engine = self.engine.clone();
        let catalog = &engine.txn.catalog;
        if !self.owns_every_table() {
            // Without a grant option (none is ever given here) nothing is granted: a
            // role with some privilege on an object is warned, others refused, as in
            // PostgreSQL.
            let roles = self.privileges_of();
            for t in &targets {
                let held = catalog
                    .acl(t.oid)
                    .is_some_and(|list| acl::allows_any(&list, &roles, t.all));
                if !held {
                    return Err(permission_denied(&format!(
                        "permission denied for {} {}",
                        t.kind, t.name
                    )));
                }
            }
            for t in &targets {
                self.warn(Error::new(
                    SqlState::WARNING,
                    match revoke {
                        false => format!("no privileges were granted for \"{}\"", t.name),
                        true => format!("no privileges could be revoked for \"{}\"", t.name),
                    },
                ));
            }
            return Ok(());
        }
        let mut grantee_oids = Vec::new();
        for grantee in grantees {
            grantee_oids.push(match grantee {
                None => acl::PUBLIC,
                Some(name) => catalog.role(name).ok_or_else(|| no_such_role(name))?.oid,
            });
        }
        let mut lists = Vec::new();
        for target in &targets {
            let bits = match privileges {
                None => target.all,
                Some(list) => {
                    let mut bits = 0;
                    for p in list {
                        if p.bit() & target.all != 0 {
                            bits |= p.bit();
                        } else if target.kind == "sequence" {
                            self.warn(Error::new(
                                SqlState::SUCCESSFUL_COMPLETION,
                                format!(
                                    "sequence \"{}\" only supports USAGE, SELECT, and UPDATE privileges",
                                    target.name
                                ),
                            ));
                        } else {
                            return Err(Error::new(
                                SqlState::INVALID_GRANT_OPERATION,
                                format!("invalid privilege type {} for {}", p.name(), target.kind),
                            ));
                        }
                    }
                    bits
                }
            };
            let mut list: acl::Acl = match catalog.acl(target.oid) {
                Some(list) => (*list).clone(),
                None => default_acl(target),
            };
            for &grantee in &grantee_oids {
                match list.iter_mut().find(|i| i.grantee == grantee) {
                    Some(item) if revoke => item.privileges &= !bits,
                    Some(item) => item.privileges |= bits,
                    None if revoke => {}
                    None => list.push(acl::AclItem {
                        grantee,
                        grantor: crate::storage::roles::BOOTSTRAP_ROLE_OID,
                        privileges: bits,
                    }),
                }
            }
            list.retain(|i| i.privileges != 0);
            lists.push((target.oid, list));
        }
        let txn = self.engine.txn.clone();
        let flight = {
            let _ddl = txn.catalog.ddl_lock();
            let mut payload = crate::wal::Writer::default();
            payload.varint(lists.len() as u64);
            for (oid, list) in &lists {
                acl::put_acl(&mut payload, *oid, list);
            }
            ddl::commit_catalog_change(
                &txn,
                RecordKind::SetAcls,
                &payload.buf,
                self.sync_level(),
                |_| txn.catalog.set_acls(lists),
            )?
        };
        self.finish_catalog_change(flight);
        Ok(())
    }
}

/// An object's list before any GRANT: its owner (the bootstrap superuser) may do
/// everything; on the database, PUBLIC may also connect and create temporary tables.
fn default_acl(target: &GrantTarget) -> acl::Acl {
    let owner = crate::storage::roles::BOOTSTRAP_ROLE_OID;
    let mut list = Vec::new();
    if target.kind == "database" {
        list.push(acl::AclItem {
            grantee: acl::PUBLIC,
            grantor: owner,
            privileges: acl::TEMPORARY | acl::CONNECT,
        });
    }
    list.push(acl::AclItem {
        grantee: owner,
        grantor: owner,
        privileges: target.all,
    });
    list
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

/// Who grants or revokes roles, and what lets it (PostgreSQL's `AddRoleMems` checks).
struct Grantor {
    oid: u32,
    superuser: bool,
    create_role: bool,
    me: Option<std::sync::Arc<Role>>,
}

impl Grantor {
    /// Whether it may grant or revoke `granted`: a superuser role only by a superuser;
    /// any other with CREATEROLE or the admin option on it (held directly, or by a role
    /// it is a member of).
    fn may_grant(&self, catalog: &Catalog, granted: &Role) -> Result<()> {
        if granted.superuser {
            if !self.superuser {
                return Err(permission_denied("must be superuser to alter superusers"));
            }
            return Ok(());
        }
        if self.superuser || self.create_role || self.is_admin_of(catalog, granted.oid) {
            return Ok(());
        }
        Err(permission_denied(&format!(
            "must have admin option on role \"{}\"",
            granted.name
        )))
    }

    /// Whether some role it is a member of (itself included) holds `role` WITH ADMIN
    /// OPTION. A role never has the admin option on itself.
    fn is_admin_of(&self, catalog: &Catalog, role: u32) -> bool {
        let Some(me) = &self.me else { return false };
        if me.oid == role {
            return false;
        }
        catalog.roles_of(me, false).iter().any(|&oid| {
            catalog
                .role_by_oid(oid)
                .is_some_and(|r| r.member_of.iter().any(|m| m.role == role && m.admin))
        })
    }
}

/// Make `member` a member of `role`.
fn add_membership(member: &mut Role, role: u32, grantor: u32, admin: bool) {
    member.member_of.push(Membership {
        role,
        grantor,
        admin,
    });
}

/// The roles whose privileges `current_user` had: (catalog version, current_user, roles).
pub(super) type PrivilegesOf = (u64, String, std::sync::Arc<[u32]>);

/// (`current_user`, `session_user`) of a session that authenticated as `login`, from its
/// settings `role` and `session_authorization`.
pub(super) fn identity<'a>(
    overrides: &'a rustc_hash::FxHashMap<&'static str, String>,
    login: &'a str,
) -> (&'a str, &'a str) {
    let session = overrides
        .get("session_authorization")
        .map_or(login, String::as_str);
    (
        overrides.get("role").map_or(session, String::as_str),
        session,
    )
}
