//! The functions catalog queries call (`pg_get_userbyid`, `format_type`, casts to
//! `regclass` and `regtype`, ...) evaluated over the catalog `pg_catalog.rs` describes;
//! POSIX regular expression matches; array functions; and JSON construction
//! (`json_build_object`, `json_build_array`, `to_json`), formatted as PostgreSQL does.

use std::cell::RefCell;
use std::sync::Arc;

use regex::Regex;

use super::expr::{text_of, EvalContext, Func};
use super::pg_catalog::{self, NAMESPACE_PG_CATALOG, NAMESPACE_PUBLIC};
use crate::error::{Error, Result, SqlState};
use crate::types::Value;

/// The most compiled patterns a thread keeps.
const REGEX_CACHE_LIMIT: usize = 64;

thread_local! {
    static REGEX_CACHE: RefCell<Vec<(String, bool, Regex)>> = const { RefCell::new(Vec::new()) };
}

/// What a has_*_privilege function asks about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrivilegeOf {
    Table,
    Sequence,
    Schema,
    Database,
}

impl PrivilegeOf {
    pub fn by_function(name: &str) -> Option<PrivilegeOf> {
        Some(match name {
            "has_table_privilege" => PrivilegeOf::Table,
            "has_sequence_privilege" => PrivilegeOf::Sequence,
            "has_schema_privilege" => PrivilegeOf::Schema,
            "has_database_privilege" => PrivilegeOf::Database,
            _ => return None,
        })
    }

    /// The privileges a list names (`'select, insert'`), as ACL bits; 22023 for one
    /// this kind of object does not have.
    fn bits(self, list: &str) -> Result<u32> {
        use crate::storage::acl;
        let mut bits = 0;
        for word in list.split(',') {
            let word = word.trim().to_ascii_uppercase();
            if word.ends_with("WITH GRANT OPTION") {
                return Err(Error::unsupported(
                    "WITH GRANT OPTION in a privilege check is not supported yet",
                ));
            }
            let bit = match (self, word.as_str()) {
                (PrivilegeOf::Table, "SELECT") => acl::SELECT,
                (PrivilegeOf::Table, "INSERT") => acl::INSERT,
                (PrivilegeOf::Table, "UPDATE") => acl::UPDATE,
                (PrivilegeOf::Table, "DELETE") => acl::DELETE,
                (PrivilegeOf::Table, "TRUNCATE") => acl::TRUNCATE,
                (PrivilegeOf::Table, "REFERENCES") => acl::REFERENCES,
                (PrivilegeOf::Table, "TRIGGER") => acl::TRIGGER,
                (PrivilegeOf::Sequence, "USAGE") => acl::USAGE,
                (PrivilegeOf::Sequence, "SELECT") => acl::SELECT,
                (PrivilegeOf::Sequence, "UPDATE") => acl::UPDATE,
                (PrivilegeOf::Schema, "USAGE") => acl::USAGE,
                (PrivilegeOf::Schema, "CREATE") => acl::CREATE,
                (PrivilegeOf::Database, "CONNECT") => acl::CONNECT,
                (PrivilegeOf::Database, "CREATE") => acl::CREATE,
                (PrivilegeOf::Database, "TEMPORARY" | "TEMP") => acl::TEMPORARY,
                _ => {
                    return Err(Error::new(
                        SqlState::INVALID_PARAMETER_VALUE,
                        format!("unrecognized privilege type: \"{}\"", word.to_lowercase()),
                    ))
                }
            };
            bits |= bit;
        }
        Ok(bits)
    }
}

/// has_table_privilege([role,] table, privileges) and its relatives: whether the role
/// (the current one when `role` is NULL) holds any of the privileges. A superuser and
/// the owner (every object's is the bootstrap role) hold all of them.
fn has_privilege(of: PrivilegeOf, vals: &[Value], ctx: &EvalContext) -> Result<Value> {
    use crate::storage::roles::BOOTSTRAP_ROLE_OID;
    let catalog = &ctx.engine.txn.catalog;
    let roles: Option<Vec<u32>> = match &vals[0] {
        Value::Null => ctx.roles.map(|r| r.to_vec()),
        role => {
            let found = match role {
                Value::Oid(oid) => catalog.role_by_oid(*oid),
                other => catalog.role(&text_of(other)),
            };
            let Some(role) = found else {
                return Err(Error::new(
                    SqlState::UNDEFINED_OBJECT,
                    format!("role \"{}\" does not exist", text_of(role)),
                ));
            };
            (!role.superuser).then(|| catalog.roles_of(&role, true))
        }
    };
    let bits = of.bits(&text_of(&vals[2]))?;
    let engine = ctx.engine;
    let oid = match (of, &vals[1]) {
        (PrivilegeOf::Table | PrivilegeOf::Sequence, Value::Oid(oid)) => {
            match pg_catalog::relation_by_oid(engine, *oid) {
                Some(r) => r.oid,
                None => return Ok(Value::Null),
            }
        }
        (PrivilegeOf::Table | PrivilegeOf::Sequence, name) => {
            let name = text_of(name);
            let Some(r) = pg_catalog::relation_by_name(engine, &name) else {
                return Err(Error::new(
                    SqlState::UNDEFINED_TABLE,
                    format!("relation \"{name}\" does not exist"),
                ));
            };
            if of == PrivilegeOf::Sequence && r.kind != 'S' {
                return Err(Error::new(
                    SqlState::WRONG_OBJECT_TYPE,
                    format!("\"{name}\" is not a sequence"),
                ));
            }
            r.oid
        }
        (PrivilegeOf::Schema, v) => {
            let schema = match v {
                Value::Oid(oid) => match *oid {
                    NAMESPACE_PUBLIC => "public".to_string(),
                    NAMESPACE_PG_CATALOG => "pg_catalog".to_string(),
                    _ => return Ok(Value::Null),
                },
                other => text_of(other),
            };
            let public = match schema.as_str() {
                "public" => true,
                "pg_catalog" | "information_schema" => false,
                _ => {
                    return Err(Error::new(
                        SqlState::INVALID_SCHEMA_NAME,
                        format!("schema \"{schema}\" does not exist"),
                    ))
                }
            };
            let Some(roles) = roles else {
                return Ok(Value::Bool(true));
            };
            // Everyone may use them; only the owner may create in public.
            let usage = bits & crate::storage::acl::USAGE != 0;
            return Ok(Value::Bool(
                usage || (public && roles.contains(&BOOTSTRAP_ROLE_OID)),
            ));
        }
        (PrivilegeOf::Database, v) => {
            let known = match v {
                Value::Oid(oid) => *oid == pg_catalog::DATABASE_OID,
                other => text_of(other) == "postgres",
            };
            if !known {
                return match v {
                    Value::Oid(_) => Ok(Value::Null),
                    other => Err(Error::new(
                        SqlState::UNDEFINED_DATABASE,
                        format!("database \"{}\" does not exist", text_of(other)),
                    )),
                };
            }
            pg_catalog::DATABASE_OID
        }
    };
    let Some(roles) = roles else {
        return Ok(Value::Bool(true));
    };
    use crate::storage::acl;
    Ok(Value::Bool(match catalog.acl(oid) {
        Some(list) => acl::allows_any(&list, &roles, bits),
        // Before any GRANT, the database lets PUBLIC connect and create temporary
        // tables; everything else is the owner's.
        None if of == PrivilegeOf::Database && bits & (acl::CONNECT | acl::TEMPORARY) != 0 => true,
        None => roles.contains(&BOOTSTRAP_ROLE_OID),
    }))
}

/// Evaluate `f` if it is one of this module's functions (its arguments are not NULL).
pub fn eval(f: Func, vals: &[Value], ctx: &EvalContext) -> Result<Option<Value>> {
    let engine = ctx.engine;
    let oid = |i: usize| vals.get(i).and_then(Value::as_i64).unwrap_or(0) as u32;
    Ok(Some(match f {
        Func::HasPrivilege(of) => has_privilege(of, vals, ctx)?,
        Func::UserById => Value::Text(role_name(oid(0))),
        Func::TableIsVisible => {
            // What the transaction sees: its own uncommitted relations too.
            let catalog = &engine.txn.catalog;
            let visible =
                super::system::CatalogView::new(|id| !ctx.pending.hides(catalog, id), |_| true);
            Value::Bool(
                pg_catalog::relation_seen_by_oid(engine, &visible, oid(0)).is_some_and(|r| {
                    matches!(r.namespace, NAMESPACE_PUBLIC | NAMESPACE_PG_CATALOG)
                }),
            )
        }
        Func::TypeIsVisible => Value::Bool(pg_catalog::type_by_oid(oid(0)).is_some()),
        Func::CollationIsVisible => Value::Bool(pg_catalog::collation_exists(oid(0))),
        Func::FormatType => {
            let typmod = vals.get(1).and_then(Value::as_i64).map(|m| m as i32);
            Value::Text(pg_catalog::format_type(oid(0), typmod))
        }
        Func::GetExpr => match public_visible(ctx) {
            true => vals[0].clone(),
            false => Value::Text(qualify_sequence_names(&text_of(&vals[0]))),
        },
        Func::IndexDef => {
            let column = vals.get(1).and_then(Value::as_i64).unwrap_or(0);
            pg_catalog::index_definition(engine, oid(0), column).map_or(Value::Null, Value::Text)
        }
        Func::QuoteIdent => Value::Text(pg_catalog::quote_ident(&text_of(&vals[0]))),
        Func::QuoteLiteral => Value::Text(quote_literal(&text_of(&vals[0]))),
        Func::RelationSize | Func::TableSize | Func::IndexesSize | Func::TotalRelationSize => {
            use pg_catalog::SizeOf;
            let what = match f {
                Func::IndexesSize => SizeOf::Indexes,
                Func::TotalRelationSize => SizeOf::Total,
                _ => SizeOf::Relation,
            };
            // Only the main fork has pages.
            let main = vals.get(1).is_none_or(|fork| text_of(fork) == "main");
            match pg_catalog::relation_size(engine, oid(0), what)? {
                Some(bytes) if main => Value::Int8(bytes as i64),
                Some(_) => Value::Int8(0),
                None => Value::Null,
            }
        }
        Func::DatabaseSize => match &vals[0] {
            Value::Text(name) if name != "postgres" => {
                return Err(Error::new(
                    SqlState::UNDEFINED_DATABASE,
                    format!("database \"{name}\" does not exist"),
                ))
            }
            Value::Text(_) => Value::Int8(pg_catalog::database_size(engine)? as i64),
            _ if oid(0) == pg_catalog::DATABASE_OID => {
                Value::Int8(pg_catalog::database_size(engine)? as i64)
            }
            _ => Value::Null,
        },
        Func::SizePretty => Value::Text(size_pretty(vals[0].as_i64().unwrap_or(0))),
        // pg_proc lists no functions: there is none to be visible, or to describe.
        Func::FunctionIsVisible | Func::FunctionDef => Value::Null,
        Func::NameChar => {
            let name = text_of(&vals[0]);
            match vals[1].as_i64() {
                Some(i @ 0..=63) => Value::Text(
                    name.as_bytes()
                        .get(i as usize)
                        .map_or(String::new(), |b| char::from(*b).to_string()),
                ),
                _ => Value::Null,
            }
        }
        Func::StatisticsColumns => Value::Null,
        Func::RelationIsPublishable => Value::Bool(
            pg_catalog::relation_by_oid(engine, oid(0))
                .is_some_and(|r| r.kind == 'r' && r.namespace == NAMESPACE_PUBLIC),
        ),
        Func::RegNamespaceIn => {
            let text = text_of(&vals[0]);
            if let Ok(n) = text.trim().parse::<u32>() {
                return Ok(Some(reg_namespace_of_oid(n)));
            }
            match pg_catalog::namespace_by_name(&text) {
                Some((oid, name)) => Value::Reg(oid, pg_catalog::quote_ident(name).into()),
                None => {
                    return Err(Error::new(
                        SqlState::INVALID_SCHEMA_NAME,
                        format!("schema \"{text}\" does not exist"),
                    ))
                }
            }
        }
        Func::RegNamespaceOfOid => reg_namespace_of_oid(oid(0)),
        Func::RegProcIn => {
            let text = text_of(&vals[0]);
            match text.trim() {
                "-" => reg_proc_of_oid(0),
                t => match t.parse::<u32>() {
                    Ok(n) => reg_proc_of_oid(n),
                    // pg_proc lists no functions by name (see pg_catalog).
                    Err(_) => {
                        return Err(Error::new(
                            SqlState::UNDEFINED_FUNCTION,
                            format!("function \"{text}\" does not exist"),
                        ))
                    }
                },
            }
        }
        Func::RegProcOfOid => reg_proc_of_oid(oid(0)),
        Func::AclDefault => {
            let owner = role_name(oid(1));
            let kind = text_of(&vals[0]);
            match acl_default(&kind, &owner) {
                Some(items) => Value::Array(
                    &crate::types::DataType::Text,
                    items
                        .into_iter()
                        .map(Value::Text)
                        .collect::<Vec<_>>()
                        .into(),
                ),
                None => {
                    return Err(Error::internal(format!(
                        "unrecognized object type abbreviation: {kind}"
                    )))
                }
            }
        }
        Func::ArrayRemove => {
            let Value::Array(t, items) = &vals[0] else {
                return Ok(Some(Value::Null));
            };
            let kept: Vec<Value> = items
                .iter()
                .filter(|v| crate::types::compare(v, &vals[1]) != Some(std::cmp::Ordering::Equal))
                .cloned()
                .collect();
            Value::Array(t, kept.into())
        }
        Func::ConstraintDef => {
            let pretty = vals.get(1) == Some(&Value::Bool(true));
            pg_catalog::constraint_definition(engine, oid(0), pretty, !public_visible(ctx))
                .map_or(Value::Null, Value::Text)
        }
        Func::EncodingToChar => Value::Text(if oid(0) == 6 { "UTF8" } else { "" }.into()),
        // initdb's comment on schema public, and those COMMENT ON gave tables and
        // columns (a third argument: col_description's column number).
        Func::Description => match (oid(0), text_of(&vals[1]).as_str(), vals.get(2)) {
            (NAMESPACE_PUBLIC, "pg_namespace", None) => {
                Value::Text("standard public schema".into())
            }
            (relation, "pg_class", attnum) => {
                let attnum = attnum.and_then(Value::as_i64).unwrap_or(0) as i32;
                let catalog = &engine.txn.catalog;
                let visible = super::system::CatalogView::new(
                    |id| !ctx.pending.hides(catalog, id),
                    |t| ctx.pending.altered.contains(&t.id),
                );
                pg_catalog::description(engine, &visible, relation, attnum)
                    .map_or(Value::Null, Value::Text)
            }
            _ => Value::Null,
        },
        Func::ViewDef => pg_catalog::view_definition(engine, oid(0), !public_visible(ctx))
            .map_or(Value::Null, Value::Text),
        Func::SerialSequence => {
            let table = text_of(&vals[0]);
            if pg_catalog::relation_by_name(engine, &table).is_none() {
                return Err(Error::new(
                    SqlState::UNDEFINED_TABLE,
                    format!("relation \"{table}\" does not exist"),
                ));
            }
            pg_catalog::serial_sequence(engine, &table, &text_of(&vals[1]))
                .map_or(Value::Null, Value::Text)
        }
        Func::RegClassIn | Func::ToRegClass => {
            let text = text_of(&vals[0]);
            if let Ok(n) = text.trim().parse::<u32>() {
                return Ok(Some(reg_class_of_oid(engine, n)));
            }
            match pg_catalog::relation_by_name(engine, &text) {
                Some(r) => Value::Reg(r.oid, shown_relation_name(&r).into()),
                None if f == Func::ToRegClass => Value::Null,
                None => {
                    return Err(Error::new(
                        SqlState::UNDEFINED_TABLE,
                        format!("relation \"{text}\" does not exist"),
                    ))
                }
            }
        }
        Func::RegClassOfOid => reg_class_of_oid(engine, oid(0)),
        Func::RegTypeIn | Func::ToRegType => {
            let text = text_of(&vals[0]);
            if let Ok(n) = text.trim().parse::<u32>() {
                return Ok(Some(reg_type_of_oid(n)));
            }
            match pg_catalog::type_by_name(&text) {
                Some(t) => Value::Reg(t.oid(), pg_catalog::type_display_name(t).into()),
                None if f == Func::ToRegType => Value::Null,
                None => {
                    return Err(Error::new(
                        SqlState::UNDEFINED_OBJECT,
                        format!("type \"{text}\" does not exist"),
                    ))
                }
            }
        }
        Func::RegTypeOfOid => reg_type_of_oid(oid(0)),
        Func::RegexMatch | Func::RegexIMatch => {
            let pattern = text_of(&vals[1]);
            let matched = with_regex(&pattern, f == Func::RegexIMatch, |re| {
                re.is_match(&text_of(&vals[0]))
            })?;
            Value::Bool(matched)
        }
        Func::RecordField => {
            let (Value::Record(_, fields), Some(i)) = (&vals[0], vals[1].as_i64()) else {
                return Ok(Some(Value::Null));
            };
            usize::try_from(i)
                .ok()
                .and_then(|i| fields.get(i).cloned())
                .unwrap_or(Value::Null)
        }
        Func::ArrayElement => {
            let (Value::Array(_, items), Some(i)) = (&vals[0], vals[1].as_i64()) else {
                return Ok(Some(Value::Null));
            };
            usize::try_from(i - 1)
                .ok()
                .and_then(|i| items.get(i).cloned())
                .unwrap_or(Value::Null)
        }
        Func::ArrayCat => {
            // The third argument says which side is an element: 1 left, 2 right, 0 none.
            let side = vals.get(2).and_then(Value::as_i64).unwrap_or(0);
            let part = |v: &Value, element: bool| -> Vec<Value> {
                match (v, element) {
                    (_, true) => vec![v.clone()],
                    (Value::Array(_, items), false) => items.to_vec(),
                    _ => Vec::new(),
                }
            };
            let element_type = [&vals[0], &vals[1]].iter().find_map(|v| match v {
                Value::Array(e, _) => Some(*e),
                _ => None,
            });
            // A NULL array with an element: an array of the element's type.
            let of_element = || {
                let oid = vals.get(3).and_then(Value::as_i64)? as u32;
                crate::types::static_element(&pg_catalog::type_by_oid(oid)?)
            };
            let Some(element_type) = element_type.or_else(|| of_element().filter(|_| side != 0))
            else {
                // Both arrays NULL: NULL, as PostgreSQL's array_cat gives.
                return Ok(Some(Value::Null));
            };
            let mut items = part(&vals[0], side == 1);
            items.extend(part(&vals[1], side == 2));
            Value::Array(element_type, items.into())
        }
        Func::ArrayToString => {
            let Value::Array(_, items) = &vals[0] else {
                return Ok(Some(Value::Null));
            };
            let delimiter = text_of(&vals[1]);
            let null_text = vals.get(2).filter(|v| !v.is_null()).map(text_of);
            let shown: Vec<String> = items
                .iter()
                .filter_map(|v| match v {
                    Value::Null => null_text.clone(),
                    v => Some(text_of(v)),
                })
                .collect();
            Value::Text(shown.join(&delimiter))
        }
        Func::ArrayUpper | Func::ArrayLower | Func::ArrayLength => {
            let (Value::Array(_, items), Some(dim)) = (&vals[0], vals[1].as_i64()) else {
                return Ok(Some(Value::Null));
            };
            if dim != 1 || items.is_empty() {
                return Ok(Some(Value::Null));
            }
            Value::Int4(match f {
                Func::ArrayLower => 1,
                _ => items.len() as i32,
            })
        }
        Func::Cardinality => match &vals[0] {
            Value::Array(_, items) => Value::Int4(items.len() as i32),
            _ => Value::Null,
        },
        Func::JsonBuildObject => {
            if !vals.len().is_multiple_of(2) {
                return Err(Error::new(
                    SqlState::INVALID_PARAMETER_VALUE,
                    "argument list must have even number of elements",
                )
                .with_hint("The arguments of json_build_object() must consist of alternating keys and values."));
            }
            let mut out = String::from("{");
            for (i, pair) in vals.chunks(2).enumerate() {
                if pair[0].is_null() {
                    return Err(Error::new(
                        SqlState::INVALID_PARAMETER_VALUE,
                        format!("argument {} cannot be null", i * 2 + 1),
                    )
                    .with_hint("Object keys should be text."));
                }
                if i > 0 {
                    out.push_str(", ");
                }
                json_string(&text_of(&pair[0]), &mut out);
                out.push_str(" : ");
                embed_json(&pair[1], &mut out);
            }
            out.push('}');
            Value::Text(out)
        }
        Func::JsonBuildArray => {
            let mut out = String::from("[");
            for (i, v) in vals.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                embed_json(v, &mut out);
            }
            out.push(']');
            Value::Text(out)
        }
        Func::NullIf => {
            match super::expr::compare_values(super::expr::CmpOp::Eq, &vals[0], &vals[1])? {
                Value::Bool(true) => Value::Null,
                _ => vals[0].clone(),
            }
        }
        Func::ToJson => {
            let mut out = String::new();
            to_json(&vals[0], &mut out);
            Value::Text(out)
        }
        _ => return Ok(None),
    }))
}

/// A value as JSON, as PostgreSQL's `to_json` writes it. Strings among the values are
/// not known to be json (a json value is text here), so text is always quoted.
pub(super) fn to_json(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int2(_) | Value::Int4(_) | Value::Int8(_) | Value::Numeric(_) | Value::Oid(_) => {
            out.push_str(&text_of(v))
        }
        Value::Float4(_) | Value::Float8(_) => {
            let s = text_of(v);
            if s.parse::<f64>().is_ok_and(f64::is_finite) {
                out.push_str(&s);
            } else {
                json_string(&s, out);
            }
        }
        Value::Timestamp(_) | Value::TimestampTz(_) => {
            let mut s = text_of(v).replacen(' ', "T", 1);
            // An offset of whole hours gets its minutes, as in JSON's ISO 8601 form.
            if matches!(v, Value::TimestampTz(_)) {
                let tail = s.rsplit(['+', '-']).next().unwrap_or("");
                if tail.len() == 2 && tail.chars().all(|c| c.is_ascii_digit()) {
                    s.push_str(":00");
                }
            }
            json_string(&s, out);
        }
        Value::Jsonb(j) => j.write(out),
        // A record is an object of its fields.
        Value::Record(fields, values) => {
            out.push('{');
            for (i, ((name, ty), v)) in fields.iter().zip(values.iter()).enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json_string(name, out);
                out.push(':');
                match ty {
                    crate::types::DataType::Json => embed_json(v, out),
                    _ => to_json(v, out),
                }
            }
            out.push('}');
        }
        Value::Array(element, items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                match element {
                    crate::types::DataType::Json => embed_json(item, out),
                    _ => to_json(item, out),
                }
            }
            out.push(']');
        }
        other => json_string(&text_of(other), out),
    }
}

/// A value already made JSON (NULL is `null`).
fn embed_json(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        v => out.push_str(&text_of(v)),
    }
}

use crate::types::jsonb::write_string as json_string;

/// A relation's name as `regclass` shows it: qualified unless its schema is searched.
fn shown_relation_name(r: &pg_catalog::Relation) -> String {
    pg_catalog::quote_ident(&r.name)
}

fn reg_class_of_oid(engine: &crate::engine::Engine, oid: u32) -> Value {
    match pg_catalog::relation_by_oid(engine, oid) {
        Some(r) => Value::Reg(oid, shown_relation_name(&r).into()),
        None => Value::Reg(oid, Arc::from(oid.to_string())),
    }
}

fn reg_namespace_of_oid(oid: u32) -> Value {
    match pg_catalog::namespace_by_oid(oid) {
        Some(name) => Value::Reg(oid, pg_catalog::quote_ident(name).into()),
        None => Value::Reg(oid, Arc::from(oid.to_string())),
    }
}

/// `pg_size_pretty`: bytes below 10 kB, else the largest unit (kB, MB, GB, TB, PB)
/// in which the value stays below 20 thousand, rounded half away from zero.
pub fn size_pretty(bytes: i64) -> String {
    const LIMIT: i64 = 10 * 1024;
    if bytes.abs() < LIMIT {
        return format!("{bytes} bytes");
    }
    // In units of half the unit, to round the last step.
    let mut halves = bytes / 512;
    let units = ["kB", "MB", "GB", "TB", "PB"];
    for (i, unit) in units.iter().enumerate() {
        if halves.abs() < 2 * LIMIT - 1 || i == units.len() - 1 {
            let rounded = (halves + if halves < 0 { -1 } else { 1 }) / 2;
            return format!("{rounded} {unit}");
        }
        halves /= 1024;
    }
    format!("{bytes} bytes")
}

/// `quote_literal`: a string constant of `s`, in the escape form (`E'...'`) when it has
/// backslashes, as PostgreSQL writes it.
pub fn quote_literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 3);
    if s.contains('\\') {
        out.push('E');
    }
    out.push('\'');
    for c in s.chars() {
        if c == '\'' || c == '\\' {
            out.push(c);
        }
        out.push(c);
    }
    out.push('\'');
    out
}

/// Whether schema `public` is on the session's `search_path`: if not, the names of its
/// objects in definitions are qualified (`public.t`), as PostgreSQL's regclass output
/// and `ruleutils` do (pg_dump sets an empty path).
fn public_visible(ctx: &EvalContext) -> bool {
    let path = super::expr::session_setting(ctx, "search_path").unwrap_or_default();
    pg_catalog::search_path_schemas(&path, false)
        .iter()
        .any(|s| s == "public")
}

/// A column default with its `nextval('seq'::regclass)` calls naming `public.seq`.
fn qualify_sequence_names(expr: &str) -> String {
    let mut out = String::with_capacity(expr.len() + 8);
    let mut rest = expr;
    while let Some(at) = rest.find("nextval('") {
        let (before, after) = rest.split_at(at + "nextval('".len());
        out.push_str(before);
        let name_end = after.find('\'').unwrap_or(after.len());
        if !after[..name_end].contains('.') {
            out.push_str("public.");
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// The name of role `oid` as `pg_get_userbyid` gives it.
fn role_name(oid: u32) -> String {
    match oid {
        pg_catalog::BOOTSTRAP_ROLE => "postgres".into(),
        pg_catalog::DATABASE_OWNER_ROLE => pg_catalog::DATABASE_OWNER_ROLE_NAME.into(),
        other => format!("unknown (OID={other})"),
    }
}

/// `acldefault(kind, owner)`: the privileges an object of `kind` has before any GRANT
/// (PostgreSQL 15's), as aclitem texts.
fn acl_default(kind: &str, owner: &str) -> Option<Vec<String>> {
    let o = pg_catalog::quote_ident(owner);
    let (public, owner_privileges) = match kind {
        "c" => (None, "arwU"),
        "r" => (None, "arwdDxt"),
        "s" => (None, "rwU"),
        "d" => (Some("Tc"), "CTc"),
        "f" => (Some("X"), "X"),
        "l" => (Some("U"), "U"),
        "L" => (None, "rw"),
        "n" => (None, "UC"),
        "t" => (None, "C"),
        "F" | "S" => (None, "U"),
        "T" => (Some("U"), "U"),
        "p" => (None, "sA"),
        _ => return None,
    };
    let mut items = Vec::new();
    if let Some(p) = public {
        items.push(format!("={p}/{o}"));
    }
    items.push(format!("{o}={owner_privileges}/{o}"));
    Some(items)
}

/// A function as `regproc` shows it: `-` for none, else its OID (pg_proc lists none).
fn reg_proc_of_oid(oid: u32) -> Value {
    match oid {
        0 => Value::Reg(0, Arc::from("-")),
        _ => Value::Reg(oid, Arc::from(oid.to_string())),
    }
}

fn reg_type_of_oid(oid: u32) -> Value {
    match pg_catalog::type_by_oid(oid) {
        Some(t) => Value::Reg(oid, pg_catalog::type_display_name(t).into()),
        None => Value::Reg(oid, Arc::from(oid.to_string())),
    }
}

/// Run `f` with the compiled pattern (cached per thread). PostgreSQL's advanced regular
/// expressions and the `regex` crate agree on the common syntax; what the crate lacks
/// (back references, lookaround) is refused with 2201B.
fn with_regex<R>(pattern: &str, case_insensitive: bool, f: impl FnOnce(&Regex) -> R) -> Result<R> {
    REGEX_CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        if let Some((_, _, re)) = cache
            .iter()
            .find(|(p, ci, _)| p == pattern && *ci == case_insensitive)
        {
            return Ok(f(re));
        }
        let re = regex::RegexBuilder::new(pattern)
            .case_insensitive(case_insensitive)
            .size_limit(1 << 20)
            .build()
            .map_err(|e| {
                Error::new(
                    SqlState::INVALID_REGULAR_EXPRESSION,
                    format!("invalid regular expression: {}", first_line(&e.to_string())),
                )
            })?;
        let out = f(&re);
        if cache.len() >= REGEX_CACHE_LIMIT {
            cache.remove(0);
        }
        cache.push((pattern.to_string(), case_insensitive, re));
        Ok(out)
    })
}

/// `regexp_replace(text, pattern, replacement, flags)`: flags `g` (every match), `i`
/// (ignore case) and `c`. In the replacement `\n` (1-9) is the nth group, `\&` the
/// match and `\\` a backslash.
pub fn regexp_replace(text: &str, pattern: &str, replacement: &str, flags: &str) -> Result<String> {
    let (global, case_insensitive) = regexp_flags(flags)?;
    with_regex(pattern, case_insensitive, |re| {
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        for caps in re.captures_iter(text) {
            let Some(whole) = caps.get(0) else { continue };
            out.push_str(&text[last..whole.start()]);
            expand_replacement(replacement, &caps, &mut out);
            last = whole.end();
            if !global {
                break;
            }
        }
        out.push_str(&text[last..]);
        out
    })
}

/// `regexp_split_to_table` / `regexp_split_to_array`: the pieces of `text` between the
/// pattern's matches. As in PostgreSQL, an empty match at the start or end of the text,
/// or just where the previous match ended, does not split.
pub fn regexp_split(text: &str, pattern: &str, flags: &str, name: &str) -> Result<Vec<String>> {
    let (global, case_insensitive) = regexp_flags(flags)?;
    if global {
        return Err(Error::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!("{name}() does not support the \"global\" option"),
        ));
    }
    with_regex(pattern, case_insensitive, |re| {
        let mut pieces = Vec::new();
        let (mut last, mut previous_end) = (0, 0);
        for m in re.find_iter(text) {
            if m.start() < text.len() && m.end() > previous_end {
                pieces.push(text[last..m.start()].to_string());
                last = m.end();
                previous_end = m.end();
            }
        }
        pieces.push(text[last..].to_string());
        pieces
    })
}

/// `regexp_matches(text, pattern[, flags])`: per match (the first, or with `g` every
/// one), its groups' texts (NULL for a group that took no part), or the whole match when
/// the pattern has no groups.
pub fn regexp_matches(text: &str, pattern: &str, flags: &str) -> Result<Vec<Vec<Option<String>>>> {
    let (global, case_insensitive) = regexp_flags(flags)?;
    with_regex(pattern, case_insensitive, |re| {
        let mut rows = Vec::new();
        for caps in re.captures_iter(text) {
            let groups: Vec<Option<String>> = if caps.len() == 1 {
                vec![caps.get(0).map(|m| m.as_str().to_string())]
            } else {
                (1..caps.len())
                    .map(|g| caps.get(g).map(|m| m.as_str().to_string()))
                    .collect()
            };
            rows.push(groups);
            if !global {
                break;
            }
        }
        rows
    })
}

/// A regular expression function's flags: (`g`, case-insensitive).
fn regexp_flags(flags: &str) -> Result<(bool, bool)> {
    let (mut global, mut case_insensitive) = (false, false);
    for flag in flags.chars() {
        match flag {
            'g' => global = true,
            'i' => case_insensitive = true,
            'c' => case_insensitive = false,
            'b' | 'e' | 'm' | 'n' | 'p' | 'q' | 's' | 't' | 'w' | 'x' => {
                return Err(Error::unsupported(format!(
                    "regular expression option \"{flag}\" is not supported yet"
                )))
            }
            _ => {
                return Err(Error::new(
                    SqlState::INVALID_PARAMETER_VALUE,
                    format!("invalid regular expression option: \"{flag}\""),
                ))
            }
        }
    }
    Ok((global, case_insensitive))
}

fn expand_replacement(replacement: &str, caps: &regex::Captures, out: &mut String) {
    let mut chars = replacement.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some(d @ '1'..='9') => {
                let group = d as usize - '0' as usize;
                out.push_str(caps.get(group).map_or("", |m| m.as_str()));
            }
            Some('&') => out.push_str(caps.get(0).map_or("", |m| m.as_str())),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
}

fn first_line(s: &str) -> &str {
    s.lines().last().unwrap_or(s).trim()
}
