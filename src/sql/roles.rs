//! Role statements, planned: CREATE ROLE / USER, ALTER ROLE / USER, DROP ROLE / USER.
//!
//! The planner turns sqlparser's statements into a [`RoleStatement`]: names, and the
//! options given (each at most once, as PostgreSQL requires), with literals checked but
//! nothing looked up. `session/roles.rs` runs them against the catalog's roles: the
//! privilege checks, the password's verifier, the logged change.

use sqlparser::ast;

use crate::error::{Error, Result, SqlState};

/// A role statement ready to run.
#[derive(Debug, Clone)]
pub enum RoleStatement {
    Create {
        name: String,
        options: RoleOptions,
        /// IN ROLE / IN GROUP: roles the new role becomes a member of.
        in_role: Vec<String>,
        /// ROLE / USER: roles that become members of the new role.
        members: Vec<String>,
        /// ADMIN: members of the new role WITH ADMIN OPTION.
        admins: Vec<String>,
    },
    Alter {
        name: String,
        options: RoleOptions,
    },
    Drop {
        names: Vec<String>,
        if_exists: bool,
    },
    /// GRANT or REVOKE (`revoke`) of `privileges` (None: ALL) on `objects` to or from
    /// `grantees` (None: PUBLIC).
    Grant {
        revoke: bool,
        privileges: Option<Vec<Privilege>>,
        objects: GrantObjects,
        grantees: Vec<Option<String>>,
    },
    /// ALTER ROLE name SET setting TO value (`value` None: RESET, or SET ... TO DEFAULT;
    /// `setting` None: RESET ALL); `from_current`: SET ... FROM CURRENT.
    AlterSettings {
        name: String,
        setting: Option<String>,
        value: Option<String>,
        from_current: bool,
    },
    /// GRANT roles TO members [WITH ADMIN OPTION], or REVOKE [ADMIN OPTION FOR] roles
    /// FROM members (`admin`: the option alone).
    Membership {
        revoke: bool,
        roles: Vec<String>,
        members: Vec<String>,
        admin: bool,
    },
}

/// One privilege named in GRANT or REVOKE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Privilege {
    Select,
    Insert,
    Update,
    Delete,
    Truncate,
    References,
    Trigger,
    Usage,
    Connect,
    Temporary,
    Create,
}

impl Privilege {
    pub fn bit(self) -> u32 {
        use crate::storage::acl;
        match self {
            Privilege::Select => acl::SELECT,
            Privilege::Insert => acl::INSERT,
            Privilege::Update => acl::UPDATE,
            Privilege::Delete => acl::DELETE,
            Privilege::Truncate => acl::TRUNCATE,
            Privilege::References => acl::REFERENCES,
            Privilege::Trigger => acl::TRIGGER,
            Privilege::Usage => acl::USAGE,
            Privilege::Connect => acl::CONNECT,
            Privilege::Temporary => acl::TEMPORARY,
            Privilege::Create => acl::CREATE,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Privilege::Select => "SELECT",
            Privilege::Insert => "INSERT",
            Privilege::Update => "UPDATE",
            Privilege::Delete => "DELETE",
            Privilege::Truncate => "TRUNCATE",
            Privilege::References => "REFERENCES",
            Privilege::Trigger => "TRIGGER",
            Privilege::Usage => "USAGE",
            Privilege::Connect => "CONNECT",
            Privilege::Temporary => "TEMPORARY",
            Privilege::Create => "CREATE",
        }
    }
}

/// What GRANT or REVOKE acts on.
#[derive(Debug, Clone)]
pub enum GrantObjects {
    /// `TABLE a, b` (or no keyword): tables, views or sequences by name.
    Tables(Vec<String>),
    Sequences(Vec<String>),
    /// `ALL TABLES IN SCHEMA public` (tables and views).
    AllTables,
    AllSequences,
    Database(Vec<String>),
}

/// GRANT / REVOKE.
pub fn plan_grant(
    revoke: bool,
    privileges: &ast::Privileges,
    objects: Option<&ast::GrantObjects>,
    grantees: &[ast::Grantee],
    with_grant_option: bool,
    granted_by: bool,
) -> Result<RoleStatement> {
    if with_grant_option {
        return Err(Error::unsupported("WITH GRANT OPTION is not supported yet"));
    }
    if granted_by {
        return Err(Error::unsupported("GRANTED BY is not supported yet"));
    }
    let privileges = match privileges {
        ast::Privileges::All { .. } => None,
        ast::Privileges::Actions(actions) => {
            Some(actions.iter().map(privilege).collect::<Result<Vec<_>>>()?)
        }
    };
    let in_public = |schemas: &[ast::ObjectName]| -> Result<()> {
        for s in schemas {
            let name = role_name(s)?;
            if name != "public" {
                return Err(Error::new(
                    SqlState::INVALID_SCHEMA_NAME,
                    format!("schema \"{name}\" does not exist"),
                ));
            }
        }
        Ok(())
    };
    let names = |list: &[ast::ObjectName]| list.iter().map(role_name).collect::<Result<Vec<_>>>();
    let objects = match objects {
        Some(ast::GrantObjects::Tables(list)) | Some(ast::GrantObjects::Views(list)) => {
            GrantObjects::Tables(names(list)?)
        }
        Some(ast::GrantObjects::Sequences(list)) => GrantObjects::Sequences(names(list)?),
        Some(ast::GrantObjects::AllTablesInSchema { schemas }) => {
            in_public(schemas)?;
            GrantObjects::AllTables
        }
        Some(ast::GrantObjects::AllSequencesInSchema { schemas }) => {
            in_public(schemas)?;
            GrantObjects::AllSequences
        }
        Some(ast::GrantObjects::Databases(list)) => GrantObjects::Database(names(list)?),
        // A GRANT without ON is a role's (`parser.rs` reads those itself).
        None => return Err(Error::syntax("syntax error at or near \"TO\"")),
        Some(_) => {
            return Err(Error::unsupported(
                "GRANT and REVOKE on this kind of object are not supported yet",
            ))
        }
    };
    let grantees = grantees
        .iter()
        .map(|g| match (&g.grantee_type, &g.name) {
            (ast::GranteesType::Public, _) => Ok(None),
            (_, Some(ast::GranteeName::ObjectName(n))) => {
                let name = role_name(n)?;
                Ok((!name.eq_ignore_ascii_case("public")).then_some(name))
            }
            _ => Err(Error::unsupported("this kind of grantee is not supported")),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(RoleStatement::Grant {
        revoke,
        privileges,
        objects,
        grantees,
    })
}

fn privilege(action: &ast::Action) -> Result<Privilege> {
    let no_columns = |columns: &Option<Vec<ast::Ident>>, p: Privilege| match columns {
        Some(c) if !c.is_empty() => Err(Error::unsupported(
            "column privileges are not supported yet",
        )),
        _ => Ok(p),
    };
    match action {
        ast::Action::Select { columns } => no_columns(columns, Privilege::Select),
        ast::Action::Insert { columns } => no_columns(columns, Privilege::Insert),
        ast::Action::Update { columns } => no_columns(columns, Privilege::Update),
        ast::Action::References { columns } => no_columns(columns, Privilege::References),
        ast::Action::Delete => Ok(Privilege::Delete),
        ast::Action::Truncate => Ok(Privilege::Truncate),
        ast::Action::Trigger => Ok(Privilege::Trigger),
        ast::Action::Usage => Ok(Privilege::Usage),
        ast::Action::Connect => Ok(Privilege::Connect),
        ast::Action::Temporary => Ok(Privilege::Temporary),
        ast::Action::Create { .. } => Ok(Privilege::Create),
        other => Err(Error::syntax(format!(
            "unrecognized privilege type \"{other}\""
        ))),
    }
}

/// The options a statement gives; None: not given.
#[derive(Debug, Clone, Default)]
pub struct RoleOptions {
    pub superuser: Option<bool>,
    pub create_db: Option<bool>,
    pub create_role: Option<bool>,
    pub inherit: Option<bool>,
    pub login: Option<bool>,
    pub replication: Option<bool>,
    pub bypass_rls: Option<bool>,
    pub connection_limit: Option<i32>,
    /// `PASSWORD 'text'` (Some(Some)) or `PASSWORD NULL` (Some(None)).
    pub password: Option<Option<String>>,
    /// `VALID UNTIL 'timestamp'`, as written.
    pub valid_until: Option<String>,
}

fn string_literal(e: &ast::Expr, what: &str) -> Result<String> {
    match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(s)
            | ast::Value::EscapedStringLiteral(s)
            | ast::Value::DollarQuotedString(ast::DollarQuotedString { value: s, .. }) => {
                Ok(s.clone())
            }
            _ => Err(Error::syntax(format!(
                "syntax error: {what} must be a string constant"
            ))),
        },
        _ => Err(Error::syntax(format!(
            "syntax error: {what} must be a string constant"
        ))),
    }
}

fn integer_literal(e: &ast::Expr) -> Result<i64> {
    let text = match e {
        ast::Expr::UnaryOp {
            op: ast::UnaryOperator::Minus,
            expr,
        } => format!("-{}", integer_literal(expr)?),
        ast::Expr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => n.clone(),
            _ => String::new(),
        },
        _ => String::new(),
    };
    text.parse::<i64>()
        .map_err(|_| Error::syntax("syntax error: CONNECTION LIMIT must be an integer"))
}

fn connection_limit(e: &ast::Expr) -> Result<i32> {
    let n = integer_literal(e)?;
    if !(-1..=i32::MAX as i64).contains(&n) {
        return Err(Error::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!("invalid connection limit: {n}"),
        ));
    }
    Ok(n as i32)
}

fn password(p: &ast::Password) -> Result<Option<String>> {
    match p {
        ast::Password::Password(e) => string_literal(e, "a password").map(Some),
        ast::Password::NullPassword => Ok(None),
    }
}

fn role_name(name: &ast::ObjectName) -> Result<String> {
    match name.0.as_slice() {
        [part] => Ok(part
            .as_ident()
            .map(|i| i.value.clone())
            .unwrap_or_else(|| part.to_string())),
        _ => Err(Error::syntax(format!(
            "syntax error at or near \"{}\"",
            name
        ))),
    }
}

fn conflicting() -> Error {
    Error::syntax("conflicting or redundant options")
}

/// Set `slot` once: a second value is PostgreSQL's 42601.
fn once<T>(slot: &mut Option<T>, value: T) -> Result<()> {
    if slot.is_some() {
        return Err(conflicting());
    }
    *slot = Some(value);
    Ok(())
}

/// CREATE ROLE (CREATE USER arrives as a CREATE ROLE with LOGIN unless it said
/// NOLOGIN: `parser.rs`).
pub fn plan_create(cr: &ast::CreateRole) -> Result<RoleStatement> {
    if cr.if_not_exists {
        return Err(Error::syntax("syntax error at or near \"IF\""));
    }
    let idents = |list: &[ast::Ident]| list.iter().map(|i| i.value.clone()).collect::<Vec<_>>();
    let mut in_role = idents(&cr.in_role);
    in_role.extend(idents(&cr.in_group));
    let mut members = idents(&cr.role);
    members.extend(idents(&cr.user));
    let admins = idents(&cr.admin);
    let [name] = cr.names.as_slice() else {
        return Err(Error::syntax("syntax error at or near \",\""));
    };
    let options = RoleOptions {
        superuser: cr.superuser,
        create_db: cr.create_db,
        create_role: cr.create_role,
        inherit: cr.inherit,
        login: cr.login,
        replication: cr.replication,
        bypass_rls: cr.bypassrls,
        connection_limit: cr
            .connection_limit
            .as_ref()
            .map(connection_limit)
            .transpose()?,
        password: cr.password.as_ref().map(password).transpose()?,
        valid_until: cr
            .valid_until
            .as_ref()
            .map(|e| string_literal(e, "VALID UNTIL"))
            .transpose()?,
    };
    Ok(RoleStatement::Create {
        name: role_name(name)?,
        options,
        in_role,
        members,
        admins,
    })
}

/// ALTER ROLE / ALTER USER.
pub fn plan_alter(name: &ast::Ident, operation: &ast::AlterRoleOperation) -> Result<RoleStatement> {
    let in_database = |db: &Option<ast::ObjectName>| match db {
        Some(_) => Err(Error::unsupported(
            "ALTER ROLE ... IN DATABASE is not supported yet",
        )),
        None => Ok(()),
    };
    match operation {
        ast::AlterRoleOperation::Set {
            config_name,
            config_value,
            in_database: db,
        } => {
            in_database(db)?;
            let (value, from_current) = match config_value {
                ast::SetConfigValue::Default => (None, false),
                ast::SetConfigValue::FromCurrent => (None, true),
                ast::SetConfigValue::Value(e) => (Some(setting_value(e)), false),
            };
            return Ok(RoleStatement::AlterSettings {
                name: name.value.clone(),
                setting: Some(config_name.to_string()),
                value,
                from_current,
            });
        }
        ast::AlterRoleOperation::Reset {
            config_name,
            in_database: db,
        } => {
            in_database(db)?;
            return Ok(RoleStatement::AlterSettings {
                name: name.value.clone(),
                setting: match config_name {
                    ast::ResetConfig::ALL => None,
                    ast::ResetConfig::ConfigName(n) => Some(n.to_string()),
                },
                value: None,
                from_current: false,
            });
        }
        _ => {}
    }
    let ast::AlterRoleOperation::WithOptions { options: given } = operation else {
        return Err(Error::unsupported(format!(
            "ALTER ROLE {} is not supported yet",
            match operation {
                ast::AlterRoleOperation::RenameRole { .. } => "RENAME",
                ast::AlterRoleOperation::Set { .. } => "SET",
                ast::AlterRoleOperation::Reset { .. } => "RESET",
                _ => "with this clause",
            }
        )));
    };
    let mut options = RoleOptions::default();
    for option in given {
        match option {
            ast::RoleOption::BypassRLS(b) => once(&mut options.bypass_rls, *b)?,
            ast::RoleOption::ConnectionLimit(e) => {
                once(&mut options.connection_limit, connection_limit(e)?)?
            }
            ast::RoleOption::CreateDB(b) => once(&mut options.create_db, *b)?,
            ast::RoleOption::CreateRole(b) => once(&mut options.create_role, *b)?,
            ast::RoleOption::Inherit(b) => once(&mut options.inherit, *b)?,
            ast::RoleOption::Login(b) => once(&mut options.login, *b)?,
            ast::RoleOption::Password(p) => once(&mut options.password, password(p)?)?,
            ast::RoleOption::Replication(b) => once(&mut options.replication, *b)?,
            ast::RoleOption::SuperUser(b) => once(&mut options.superuser, *b)?,
            ast::RoleOption::ValidUntil(e) => {
                once(&mut options.valid_until, string_literal(e, "VALID UNTIL")?)?
            }
        }
    }
    Ok(RoleStatement::Alter {
        name: name.value.clone(),
        options,
    })
}

/// A setting's value as SET takes it: a string's text, a number's digits, a word.
pub(super) fn setting_value(e: &ast::Expr) -> String {
    match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(s) => s.clone(),
            ast::Value::Number(n, _) => n.clone(),
            other => other.to_string(),
        },
        ast::Expr::Identifier(i) => i.value.clone(),
        other => other.to_string(),
    }
}

/// DROP ROLE / DROP USER.
pub fn plan_drop(names: &[ast::ObjectName], if_exists: bool) -> Result<RoleStatement> {
    Ok(RoleStatement::Drop {
        names: names.iter().map(role_name).collect::<Result<_>>()?,
        if_exists,
    })
}

/// Whether `name` may name a new role: PostgreSQL reserves `pg_` names.
pub fn check_new_role_name(name: &str) -> Result<()> {
    if name.starts_with("pg_") {
        return Err(Error::new(
            SqlState::RESERVED_NAME,
            format!("role name \"{name}\" is reserved"),
        )
        .with_detail("Role names starting with \"pg_\" are reserved."));
    }
    if name == "public" || name == "none" {
        return Err(Error::new(
            SqlState::RESERVED_NAME,
            format!("role name \"{name}\" is reserved"),
        ));
    }
    Ok(())
}
