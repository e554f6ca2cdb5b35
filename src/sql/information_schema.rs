//! `information_schema.tables` and `information_schema.columns`, generated from the
//! catalog as the scanning transaction sees it, with PostgreSQL's columns and values for
//! the tables of schema `public` (the only schema). Columns that describe what SteadyDB
//! has no notion of (user-defined types, identity and generated columns, collations) hold
//! what PostgreSQL shows for a table without them.

use super::system::CatalogView;
use crate::engine::Engine;
use crate::error::TABLE_SCHEMA;
use crate::storage::{Row, Table};
use crate::types::{DataType, Value};

/// The database every table is in.
const CATALOG: &str = "postgres";

pub const TABLES_COLUMNS: &[&str] = &[
    "table_catalog",
    "table_schema",
    "table_name",
    "table_type",
    "self_referencing_column_name",
    "reference_generation",
    "user_defined_type_catalog",
    "user_defined_type_schema",
    "user_defined_type_name",
    "is_insertable_into",
    "is_typed",
    "commit_action",
];

pub const COLUMNS_COLUMNS: &[(&str, DataType)] = &[
    ("table_catalog", DataType::Text),
    ("table_schema", DataType::Text),
    ("table_name", DataType::Text),
    ("column_name", DataType::Text),
    ("ordinal_position", DataType::Int4),
    ("column_default", DataType::Text),
    ("is_nullable", DataType::Text),
    ("data_type", DataType::Text),
    ("character_maximum_length", DataType::Int4),
    ("character_octet_length", DataType::Int4),
    ("numeric_precision", DataType::Int4),
    ("numeric_precision_radix", DataType::Int4),
    ("numeric_scale", DataType::Int4),
    ("datetime_precision", DataType::Int4),
    ("interval_type", DataType::Text),
    ("interval_precision", DataType::Int4),
    ("character_set_catalog", DataType::Text),
    ("character_set_schema", DataType::Text),
    ("character_set_name", DataType::Text),
    ("collation_catalog", DataType::Text),
    ("collation_schema", DataType::Text),
    ("collation_name", DataType::Text),
    ("domain_catalog", DataType::Text),
    ("domain_schema", DataType::Text),
    ("domain_name", DataType::Text),
    ("udt_catalog", DataType::Text),
    ("udt_schema", DataType::Text),
    ("udt_name", DataType::Text),
    ("scope_catalog", DataType::Text),
    ("scope_schema", DataType::Text),
    ("scope_name", DataType::Text),
    ("maximum_cardinality", DataType::Int4),
    ("dtd_identifier", DataType::Text),
    ("is_self_referencing", DataType::Text),
    ("is_identity", DataType::Text),
    ("identity_generation", DataType::Text),
    ("identity_start", DataType::Text),
    ("identity_increment", DataType::Text),
    ("identity_maximum", DataType::Text),
    ("identity_minimum", DataType::Text),
    ("identity_cycle", DataType::Text),
    ("is_generated", DataType::Text),
    ("generation_expression", DataType::Text),
    ("is_updatable", DataType::Text),
];

/// The tables the scanning transaction sees, by name.
pub(super) fn visible_tables(engine: &Engine, visible: &CatalogView) -> Vec<std::sync::Arc<Table>> {
    let catalog = &engine.txn.catalog;
    catalog.tables_seen(&|id| !visible.sees_id(id))
}

fn text(s: &str) -> Value {
    Value::Text(s.to_string())
}

pub fn tables(engine: &Engine, visible: &CatalogView) -> Vec<Row> {
    let row = |name: &str, kind: &str, insertable: &str| -> Row {
        vec![
            text(CATALOG),
            text(TABLE_SCHEMA),
            text(name),
            text(kind),
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            text(insertable),
            text("NO"),
            Value::Null,
        ]
        .into()
    };
    let mut rows: Vec<Row> = visible_tables(engine, visible)
        .iter()
        .map(|t| row(&visible.def(t).name, "BASE TABLE", "YES"))
        .collect();
    // Views here are read-only (PostgreSQL's simple views take writes).
    rows.extend(
        super::pg_catalog::visible_views(engine, visible)
            .iter()
            .map(|v| row(&v.name, "VIEW", "NO")),
    );
    rows
}

pub fn columns(engine: &Engine, visible: &CatalogView) -> Vec<Row> {
    let mut rows = Vec::new();
    for t in visible_tables(engine, visible) {
        let def = visible.def(&t);
        for (i, c) in def.columns.iter().enumerate().filter(|(_, c)| !c.dropped) {
            let ty = TypeFacts::of(c.data_type);
            let int = |v: Option<i32>| v.map_or(Value::Null, Value::Int4);
            let mut row = vec![
                text(CATALOG),
                text(TABLE_SCHEMA),
                text(&def.name),
                text(&c.name),
                Value::Int4(i as i32 + 1),
                match c.default.as_deref() {
                    Some(d) if !c.identity => text(d),
                    _ => Value::Null,
                },
                text(if c.not_null { "NO" } else { "YES" }),
                text(ty.data_type),
                int(ty.max_length),
                int(ty.octet_length),
                int(ty.precision),
                int(ty.radix),
                int(ty.scale),
                int(ty.datetime_precision),
                Value::Null,
                Value::Null,
            ];
            row.extend([Value::Null, Value::Null, Value::Null]); // character set
            row.extend([Value::Null, Value::Null, Value::Null]); // collation
            row.extend([Value::Null, Value::Null, Value::Null]); // domain
            row.extend([text(CATALOG), text("pg_catalog"), text(ty.udt_name)]);
            row.extend([Value::Null, Value::Null, Value::Null, Value::Null]); // scope, cardinality
            row.push(text(&(i + 1).to_string()));
            row.push(text("NO"));
            if c.identity {
                // The sequence's defaults, which an identity made here has.
                let max = match c.data_type {
                    DataType::Int2 => i16::MAX as i64,
                    DataType::Int4 => i32::MAX as i64,
                    _ => i64::MAX,
                };
                row.extend([text("YES"), text("BY DEFAULT"), text("1"), text("1")]);
                row.extend([text(&max.to_string()), text("1"), text("NO")]);
            } else {
                row.push(text("NO"));
                row.extend(std::iter::repeat_n(Value::Null, 6)); // identity
            }
            row.extend([text("NEVER"), Value::Null, text("YES")]);
            debug_assert_eq!(row.len(), COLUMNS_COLUMNS.len());
            rows.push(row.into());
        }
    }
    rows
}

/// What information_schema says of a column's type.
struct TypeFacts {
    data_type: &'static str,
    udt_name: &'static str,
    max_length: Option<i32>,
    octet_length: Option<i32>,
    precision: Option<i32>,
    radix: Option<i32>,
    scale: Option<i32>,
    datetime_precision: Option<i32>,
}

impl TypeFacts {
    fn of(t: DataType) -> TypeFacts {
        let base = |data_type, udt_name| TypeFacts {
            data_type,
            udt_name,
            max_length: None,
            octet_length: None,
            precision: None,
            radix: None,
            scale: None,
            datetime_precision: None,
        };
        let number = |data_type, udt_name, bits, scale| TypeFacts {
            precision: Some(bits),
            radix: Some(2),
            scale,
            ..base(data_type, udt_name)
        };
        // Longest text, in bytes: 1 GB, as PostgreSQL reports it.
        let unbounded = 1_073_741_824;
        let chars = |data_type, udt_name, n: Option<u32>| TypeFacts {
            max_length: n.map(|n| n as i32),
            octet_length: Some(n.map_or(unbounded, |n| (n as i32).saturating_mul(4))),
            ..base(data_type, udt_name)
        };
        match t {
            DataType::Bool => base("boolean", "bool"),
            DataType::Int2 => number("smallint", "int2", 16, Some(0)),
            DataType::Int4 => number("integer", "int4", 32, Some(0)),
            DataType::Int8 => number("bigint", "int8", 64, Some(0)),
            DataType::Float4 => number("real", "float4", 24, None),
            DataType::Float8 => number("double precision", "float8", 53, None),
            DataType::Numeric(p) => TypeFacts {
                precision: p.map(|(p, _)| p.into()),
                radix: Some(10),
                scale: p.map(|(_, s)| s.into()),
                ..base("numeric", "numeric")
            },
            DataType::Text | DataType::Unknown => chars("text", "text", None),
            DataType::Varchar(n) => chars("character varying", "varchar", n),
            DataType::Char(n) => chars("character", "bpchar", Some(n)),
            DataType::Bytea => base("bytea", "bytea"),
            DataType::Date => TypeFacts {
                datetime_precision: Some(0),
                ..base("date", "date")
            },
            DataType::Timestamp => TypeFacts {
                datetime_precision: Some(6),
                ..base("timestamp without time zone", "timestamp")
            },
            DataType::TimestampTz => TypeFacts {
                datetime_precision: Some(6),
                ..base("timestamp with time zone", "timestamptz")
            },
            DataType::Oid => base("oid", "oid"),
            DataType::Name => base("name", "name"),
            DataType::InternalChar => base("\"char\"", "char"),
            DataType::Json => base("json", "json"),
            DataType::RegClass => base("regclass", "regclass"),
            DataType::RegType => base("regtype", "regtype"),
            DataType::RegNamespace => base("regnamespace", "regnamespace"),
            DataType::RegProc => base("regproc", "regproc"),
            DataType::Int2Vector => base("int2vector", "int2vector"),
            DataType::Uuid => base("uuid", "uuid"),
            DataType::Interval => base("interval", "interval"),
            DataType::Jsonb => base("jsonb", "jsonb"),
            DataType::OidVector => base("oidvector", "oidvector"),
            DataType::Array(e) => base("ARRAY", array_udt_name(*e)),
            DataType::Record(_) => base("record", "record"),
            DataType::Void => base("void", "void"),
        }
    }
}

/// `udt_name` of an array column: the array type's name.
fn array_udt_name(element: DataType) -> &'static str {
    match element {
        DataType::Bool => "_bool",
        DataType::Bytea => "_bytea",
        DataType::InternalChar => "_char",
        DataType::Json => "_json",
        DataType::Name => "_name",
        DataType::Int2 => "_int2",
        DataType::Int4 => "_int4",
        DataType::Int8 => "_int8",
        DataType::Text => "_text",
        DataType::Char(_) => "_bpchar",
        DataType::Varchar(_) => "_varchar",
        DataType::Float4 => "_float4",
        DataType::Float8 => "_float8",
        DataType::Oid => "_oid",
        DataType::Date => "_date",
        DataType::Timestamp => "_timestamp",
        DataType::TimestampTz => "_timestamptz",
        DataType::Numeric(_) => "_numeric",
        DataType::RegClass => "_regclass",
        DataType::RegType => "_regtype",
        DataType::RegNamespace => "_regnamespace",
        DataType::RegProc => "_regproc",
        DataType::Int2Vector => "_int2vector",
        DataType::Uuid => "_uuid",
        DataType::Interval => "_interval",
        DataType::Jsonb => "_jsonb",
        DataType::OidVector => "_oidvector",
        DataType::Unknown | DataType::Array(_) | DataType::Record(_) | DataType::Void => "",
    }
}

pub const TABLE_CONSTRAINTS_COLUMNS: &[(&str, DataType)] = &[
    ("constraint_catalog", DataType::Text),
    ("constraint_schema", DataType::Text),
    ("constraint_name", DataType::Text),
    ("table_catalog", DataType::Text),
    ("table_schema", DataType::Text),
    ("table_name", DataType::Text),
    ("constraint_type", DataType::Text),
    ("is_deferrable", DataType::Text),
    ("initially_deferred", DataType::Text),
    ("enforced", DataType::Text),
    ("nulls_distinct", DataType::Text),
];

/// `information_schema.table_constraints`: primary keys, unique and check constraints,
/// and each NOT NULL column as the CHECK constraint PostgreSQL shows it as (named
/// `<schema oid>_<table oid>_<column>_not_null`).
pub fn table_constraints(engine: &Engine, visible: &CatalogView) -> Vec<Row> {
    let mut rows = Vec::new();
    for t in visible_tables(engine, visible) {
        let def = visible.def(&t);
        let row = |name: &str, kind: &str, nulls_distinct: Option<&str>| -> Row {
            vec![
                text(CATALOG),
                text(TABLE_SCHEMA),
                text(name),
                text(CATALOG),
                text(TABLE_SCHEMA),
                text(&def.name),
                text(kind),
                text("NO"),
                text("NO"),
                text("YES"),
                nulls_distinct.map_or(Value::Null, text),
            ]
            .into()
        };
        for index in super::pg_catalog::table_indexes(&t, &def) {
            match index.constraint {
                Some((_, 'p')) => rows.push(row(&index.name, "PRIMARY KEY", None)),
                Some(_) => rows.push(row(&index.name, "UNIQUE", Some("YES"))),
                None => {}
            }
        }
        for check in &def.checks {
            rows.push(row(&check.name, "CHECK", None));
        }
        for fk in &def.foreign_keys {
            let mut r = row(&fk.name, "FOREIGN KEY", None).to_vec();
            r[7] = text(if fk.deferrable { "YES" } else { "NO" });
            r[8] = text(if fk.initially_deferred { "YES" } else { "NO" });
            rows.push(r.into());
        }
        let oid = super::pg_catalog::table_oid(&t);
        for (i, c) in def.columns.iter().enumerate() {
            if c.not_null {
                let name = format!(
                    "{}_{oid}_{}_not_null",
                    super::pg_catalog::NAMESPACE_PUBLIC,
                    i + 1
                );
                rows.push(row(&name, "CHECK", None));
            }
        }
    }
    rows
}

pub const KEY_COLUMN_USAGE_COLUMNS: &[(&str, DataType)] = &[
    ("constraint_catalog", DataType::Text),
    ("constraint_schema", DataType::Text),
    ("constraint_name", DataType::Text),
    ("table_catalog", DataType::Text),
    ("table_schema", DataType::Text),
    ("table_name", DataType::Text),
    ("column_name", DataType::Text),
    ("ordinal_position", DataType::Int4),
    ("position_in_unique_constraint", DataType::Int4),
];

/// `information_schema.key_column_usage`: the columns of primary keys, unique
/// constraints and foreign keys, in key order (a foreign key's with the position of the
/// column it references in that key).
pub fn key_column_usage(engine: &Engine, visible: &CatalogView) -> Vec<Row> {
    let mut rows = Vec::new();
    let row = |constraint: &str, table: &str, column: &str, k: usize, position: Value| -> Row {
        vec![
            text(CATALOG),
            text(TABLE_SCHEMA),
            text(constraint),
            text(CATALOG),
            text(TABLE_SCHEMA),
            text(table),
            text(column),
            Value::Int4(k as i32 + 1),
            position,
        ]
        .into()
    };
    for_each_foreign_key(engine, visible, |def, fk, key| {
        for (k, (&c, r)) in fk.columns.iter().zip(&fk.referenced_columns).enumerate() {
            let position = key
                .and_then(|(_, cols)| cols.iter().position(|x| x == r))
                .map_or(Value::Null, |p| Value::Int4(p as i32 + 1));
            rows.push(row(&fk.name, &def.name, &def.columns[c].name, k, position));
        }
    });
    for t in visible_tables(engine, visible) {
        let def = visible.def(&t);
        for index in super::pg_catalog::table_indexes(&t, &def) {
            if index.constraint.is_none() {
                continue;
            }
            for (k, &c) in index.columns.iter().enumerate() {
                rows.push(row(
                    &index.name,
                    &def.name,
                    &def.columns[c].name,
                    k,
                    Value::Null,
                ));
            }
        }
    }
    rows
}

/// Call `f` with each foreign key of the visible tables: its table's definition, the
/// constraint, and the key it references (name and columns), if that is there.
fn for_each_foreign_key(
    engine: &Engine,
    visible: &CatalogView,
    mut f: impl FnMut(
        &crate::storage::TableDef,
        &crate::storage::ForeignKeyDef,
        Option<&(String, Vec<usize>)>,
    ),
) {
    for t in visible_tables(engine, visible) {
        let def = visible.def(&t);
        for fk in &def.foreign_keys {
            let Some(parent) = engine.txn.catalog.table_by_id(fk.referenced) else {
                continue;
            };
            let key = unique_key_of(&parent, &parent.def(), &fk.referenced_columns);
            f(&def, fk, key.as_ref());
        }
    }
}

/// The primary key or unique constraint of `t` on exactly `columns` (what a foreign key
/// references): its name and columns in key order.
fn unique_key_of(
    t: &Table,
    def: &crate::storage::TableDef,
    columns: &[usize],
) -> Option<(String, Vec<usize>)> {
    let mut wanted = columns.to_vec();
    wanted.sort_unstable();
    super::pg_catalog::table_indexes(t, def)
        .into_iter()
        .filter(|i| i.unique && i.constraint.is_some())
        .find(|i| {
            let mut have = i.columns.clone();
            have.sort_unstable();
            have == wanted
        })
        .map(|i| (i.name, i.columns))
}

pub const REFERENTIAL_CONSTRAINTS_COLUMNS: &[(&str, DataType)] = &[
    ("constraint_catalog", DataType::Text),
    ("constraint_schema", DataType::Text),
    ("constraint_name", DataType::Text),
    ("unique_constraint_catalog", DataType::Text),
    ("unique_constraint_schema", DataType::Text),
    ("unique_constraint_name", DataType::Text),
    ("match_option", DataType::Text),
    ("update_rule", DataType::Text),
    ("delete_rule", DataType::Text),
];

pub const VIEWS_COLUMNS: &[(&str, DataType)] = &[
    ("table_catalog", DataType::Text),
    ("table_schema", DataType::Text),
    ("table_name", DataType::Text),
    ("view_definition", DataType::Text),
    ("check_option", DataType::Text),
    ("is_updatable", DataType::Text),
    ("is_insertable_into", DataType::Text),
    ("is_trigger_updatable", DataType::Text),
    ("is_trigger_deletable", DataType::Text),
    ("is_trigger_insertable_into", DataType::Text),
];

/// `information_schema.views`: each view and its query. Writes through views are
/// refused here, so none is updatable or insertable (PostgreSQL's simple views are).
pub fn views(engine: &Engine, visible: &CatalogView) -> Vec<Row> {
    let mut views = super::pg_catalog::visible_views(engine, visible);
    views.sort_by(|a, b| a.name.cmp(&b.name));
    views
        .iter()
        .map(|v| {
            let definition =
                super::pg_catalog::view_definition(engine, super::pg_catalog::id_oid(v.id), false);
            vec![
                text(CATALOG),
                text(TABLE_SCHEMA),
                text(&v.name),
                definition.map_or(Value::Null, Value::Text),
                text("NONE"),
                text("NO"),
                text("NO"),
                text("NO"),
                text("NO"),
                text("NO"),
            ]
            .into()
        })
        .collect()
}

/// `information_schema.referential_constraints`: each foreign key, with the key it
/// references and its actions.
pub fn referential_constraints(engine: &Engine, visible: &CatalogView) -> Vec<Row> {
    let mut rows = Vec::new();
    for_each_foreign_key(engine, visible, |_, fk, key| {
        rows.push(
            vec![
                text(CATALOG),
                text(TABLE_SCHEMA),
                text(&fk.name),
                text(CATALOG),
                text(TABLE_SCHEMA),
                key.map_or(Value::Null, |(name, _)| text(name)),
                text("NONE"),
                text(fk.on_update.sql()),
                text(fk.on_delete.sql()),
            ]
            .into(),
        );
    });
    rows
}
