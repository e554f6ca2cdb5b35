//! `pg_catalog`: PostgreSQL's system catalogs, generated from SteadyDB's catalog as the
//! scanning transaction sees it, with PostgreSQL's column names and types, so that psql,
//! drivers and ORMs can introspect a database as they do PostgreSQL's.
//!
//! Object identifiers are stable: they are computed from a table's `TableId`, which never
//! changes (TRUNCATE and ALTER keep it), and survive restarts.
//!
//! - Built-in objects (schemas, types, access methods, the database, the bootstrap role,
//!   the catalogs themselves) have PostgreSQL's OIDs.
//! - Table `id` has OID [`FIRST_TABLE_OID`] + `id` × [`OIDS_PER_TABLE`]; the objects that
//!   belong to it follow it: its primary key index (+1), its primary key constraint (+2),
//!   its rowtype... is not modelled (`reltype` is 0), its owned sequences (+16 + k, for
//!   the k-th), its column defaults (+1024 + attnum), its secondary indexes (+2048 + 2n
//!   for index number n, and +1 for a unique constraint's), its CHECK constraints
//!   (+3072 + k) and its FOREIGN KEY constraints (+3584 + k).
//!
//! Only what SteadyDB has is listed: tables, their indexes and constraints, sequences,
//! views (and their `_RETURN` rules), column defaults, the schemas' initdb privileges and
//! comment. Catalogs of objects SteadyDB does not have (inheritance, triggers, policies,
//! extensions, user-defined functions, operators and casts, text search, foreign data)
//! exist and are empty, so psql's, drivers' and pg_dump's queries run; a table with foreign keys, or
//! referenced by one, shows `relhastriggers` as PostgreSQL's (whose foreign keys are
//! triggers) does, so psql lists them.

use std::sync::Arc;

use super::system::CatalogView;
use crate::engine::Engine;
use crate::storage::{CheckDef, FkAction, ForeignKeyDef, Row, Table, TableDef};
use crate::types::{oid, DataType, Value};

/// The first OID of user objects, as in PostgreSQL.
pub const FIRST_TABLE_OID: u32 = 16384;
/// OIDs reserved for each table and the objects that belong to it.
pub const OIDS_PER_TABLE: u32 = 4096;
const PKEY_INDEX: u32 = 1;
const PKEY_CONSTRAINT: u32 = 2;
const FIRST_SEQUENCE: u32 = 16;
const LAST_SEQUENCE: u32 = 1023;
const FIRST_ATTRDEF: u32 = 1024;
/// Index `n` of a table is `FIRST_INDEX + 2n`, its constraint (if any) the next.
const FIRST_INDEX: u32 = 2048;
/// Indexes a table may have: their OIDs stay below its checks'.
pub const MAX_INDEXES: u32 = (FIRST_CHECK - FIRST_INDEX) / 2;
/// CHECK constraint `k` of a table is `FIRST_CHECK + k`.
const FIRST_CHECK: u32 = 3072;
/// CHECK constraints a table may have: their OIDs stay below its foreign keys'.
pub const MAX_CHECKS: u32 = FIRST_FOREIGN_KEY - FIRST_CHECK;
/// FOREIGN KEY constraint `k` of a table is `FIRST_FOREIGN_KEY + k`.
const FIRST_FOREIGN_KEY: u32 = 3584;
/// FOREIGN KEY constraints a table may have: their OIDs stay within the table's.
pub const MAX_FOREIGN_KEYS: u32 = OIDS_PER_TABLE - FIRST_FOREIGN_KEY;

pub const NAMESPACE_PG_CATALOG: u32 = 11;
pub const NAMESPACE_PG_TOAST: u32 = 99;
pub const NAMESPACE_PUBLIC: u32 = 2200;
pub const NAMESPACE_INFORMATION_SCHEMA: u32 = 13000;
/// The bootstrap superuser, `postgres`: every object's owner.
pub const BOOTSTRAP_ROLE: u32 = 10;
/// The predefined role that owns schema `public`: whoever owns the database.
pub const DATABASE_OWNER_ROLE: u32 = 6171;
pub const DATABASE_OWNER_ROLE_NAME: &str = "pg_database_owner";
pub const DATABASE_OID: u32 = 5;
const HEAP_AM: u32 = 2;
const BTREE_AM: u32 = 403;
const DEFAULT_COLLATION: u32 = 100;

/// The catalogs this module provides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PgCatalog {
    Namespace,
    Class,
    Attribute,
    Type,
    Index,
    Constraint,
    AttrDef,
    Database,
    Roles,
    AuthId,
    User,
    Am,
    Settings,
    Description,
    Collation,
    Inherits,
    Trigger,
    Tablespace,
    Policy,
    StatisticExt,
    Publication,
    PublicationNamespace,
    PublicationRel,
    Sequence,
    Depend,
    AuthMembers,
    DbRoleSetting,
    OpClass,
    Extension,
    Proc,
    Language,
    Operator,
    OpFamily,
    Cast,
    Conversion,
    Transform,
    EventTrigger,
    TsParser,
    TsTemplate,
    TsDict,
    TsConfig,
    ForeignDataWrapper,
    ForeignServer,
    ForeignTable,
    DefaultAcl,
    PartitionedTable,
    Rewrite,
    Subscription,
    LargeObjectMetadata,
    AmOp,
    AmProc,
    InitPrivs,
    SecLabels,
    Aggregate,
    Range,
    Enum,
    Stats,
    Tables,
    Indexes,
    Views,
    Sequences,
    TimezoneNames,
}

/// (name, OID, whether PostgreSQL's is a table rather than a view) of each catalog.
const CATALOGS: &[(PgCatalog, &str, u32, bool)] = &[
    (PgCatalog::Namespace, "pg_namespace", 2615, true),
    (PgCatalog::Class, "pg_class", 1259, true),
    (PgCatalog::Attribute, "pg_attribute", 1249, true),
    (PgCatalog::Type, "pg_type", 1247, true),
    (PgCatalog::Index, "pg_index", 2610, true),
    (PgCatalog::Constraint, "pg_constraint", 2606, true),
    (PgCatalog::AttrDef, "pg_attrdef", 2604, true),
    (PgCatalog::Database, "pg_database", 1262, true),
    (PgCatalog::Roles, "pg_roles", 12001, false),
    (PgCatalog::AuthId, "pg_authid", 1260, true),
    (PgCatalog::User, "pg_user", 12010, false),
    (PgCatalog::Am, "pg_am", 2601, true),
    (PgCatalog::Settings, "pg_settings", 12002, false),
    (PgCatalog::Description, "pg_description", 2609, true),
    (PgCatalog::Collation, "pg_collation", 3456, true),
    (PgCatalog::Inherits, "pg_inherits", 2611, true),
    (PgCatalog::Trigger, "pg_trigger", 2620, true),
    (PgCatalog::Tablespace, "pg_tablespace", 1213, true),
    (PgCatalog::Policy, "pg_policy", 3256, true),
    (PgCatalog::StatisticExt, "pg_statistic_ext", 3381, true),
    (PgCatalog::Publication, "pg_publication", 6104, true),
    (
        PgCatalog::PublicationNamespace,
        "pg_publication_namespace",
        6237,
        true,
    ),
    (PgCatalog::PublicationRel, "pg_publication_rel", 6106, true),
    (PgCatalog::Sequence, "pg_sequence", 2224, true),
    (PgCatalog::Depend, "pg_depend", 2608, true),
    (PgCatalog::AuthMembers, "pg_auth_members", 1261, true),
    (PgCatalog::DbRoleSetting, "pg_db_role_setting", 2964, true),
    (PgCatalog::OpClass, "pg_opclass", 2616, true),
    (PgCatalog::Extension, "pg_extension", 3079, true),
    (PgCatalog::Proc, "pg_proc", 1255, true),
    (PgCatalog::Language, "pg_language", 2612, true),
    (PgCatalog::Operator, "pg_operator", 2617, true),
    (PgCatalog::OpFamily, "pg_opfamily", 2753, true),
    (PgCatalog::Cast, "pg_cast", 2605, true),
    (PgCatalog::Conversion, "pg_conversion", 2607, true),
    (PgCatalog::Transform, "pg_transform", 3576, true),
    (PgCatalog::EventTrigger, "pg_event_trigger", 3466, true),
    (PgCatalog::TsParser, "pg_ts_parser", 3601, true),
    (PgCatalog::TsTemplate, "pg_ts_template", 3764, true),
    (PgCatalog::TsDict, "pg_ts_dict", 3600, true),
    (PgCatalog::TsConfig, "pg_ts_config", 3602, true),
    (
        PgCatalog::ForeignDataWrapper,
        "pg_foreign_data_wrapper",
        2328,
        true,
    ),
    (PgCatalog::ForeignServer, "pg_foreign_server", 1417, true),
    (PgCatalog::ForeignTable, "pg_foreign_table", 3118, true),
    (PgCatalog::DefaultAcl, "pg_default_acl", 826, true),
    (
        PgCatalog::PartitionedTable,
        "pg_partitioned_table",
        3350,
        true,
    ),
    (PgCatalog::Rewrite, "pg_rewrite", 2618, true),
    (PgCatalog::Subscription, "pg_subscription", 6100, true),
    (
        PgCatalog::LargeObjectMetadata,
        "pg_largeobject_metadata",
        2995,
        true,
    ),
    (PgCatalog::AmOp, "pg_amop", 2602, true),
    (PgCatalog::AmProc, "pg_amproc", 2603, true),
    (PgCatalog::InitPrivs, "pg_init_privs", 3394, true),
    (PgCatalog::SecLabels, "pg_seclabels", 12003, false),
    (PgCatalog::Aggregate, "pg_aggregate", 2600, true),
    (PgCatalog::Range, "pg_range", 3541, true),
    (PgCatalog::Enum, "pg_enum", 3501, true),
    (PgCatalog::Stats, "pg_stats", 12004, false),
    (PgCatalog::Tables, "pg_tables", 12033, false),
    (PgCatalog::Indexes, "pg_indexes", 12043, false),
    (PgCatalog::Views, "pg_views", 12028, false),
    (PgCatalog::Sequences, "pg_sequences", 12048, false),
    (PgCatalog::TimezoneNames, "pg_timezone_names", 12058, false),
];

/// The default btree operator classes of the types there are: (OID, name, type).
const OPCLASSES: &[(u32, &str, u32)] = &[
    (424, "bool_ops", 16),
    (428, "bytea_ops", 17),
    (429, "char_ops", 18),
    (1986, "name_ops", 19),
    (3124, "int8_ops", 20),
    (1979, "int2_ops", 21),
    (1978, "int4_ops", 23),
    (3126, "text_ops", 25),
    (1981, "oid_ops", 26),
    (1970, "float4_ops", 700),
    (1971, "float8_ops", 701),
    (426, "bpchar_ops", 1042),
    (3122, "date_ops", 1082),
    (3128, "timestamp_ops", 1114),
    (3127, "timestamptz_ops", 1184),
    (3125, "numeric_ops", 1700),
];

/// `pg_class`'s OID, the `classid` of relations in `pg_depend`.
const PG_CLASS: u32 = 1259;
const PG_CONSTRAINT: u32 = 2606;
const PG_ATTRDEF: u32 = 2604;
const PG_NAMESPACE: u32 = 2615;
const PG_REWRITE: u32 = 2618;
/// A view's ON SELECT rule's OID, after the view's.
const VIEW_RULE: u32 = 1;

/// A built-in type: (OID, name, length, passed by value, category, alignment, the type).
struct BuiltinType {
    oid: u32,
    name: &'static str,
    len: i16,
    by_value: bool,
    category: &'static str,
    align: &'static str,
    array: u32,
    data_type: DataType,
}

/// A [`BuiltinType`] from its fields in order.
macro_rules! builtin {
    ($oid:expr, $name:expr, $len:expr, $by_value:expr, $category:expr, $align:expr, $array:expr, $t:expr $(,)?) => {
        BuiltinType {
            oid: $oid,
            name: $name,
            len: $len,
            by_value: $by_value,
            category: $category,
            align: $align,
            array: $array,
            data_type: $t,
        }
    };
}

const TYPES: &[BuiltinType] = &[
    builtin!(16, "bool", 1, true, "B", "c", 1000, DataType::Bool),
    builtin!(17, "bytea", -1, false, "U", "i", 1001, DataType::Bytea),
    builtin!(18, "char", 1, true, "Z", "c", 1002, DataType::InternalChar),
    builtin!(19, "name", 64, false, "S", "c", 1003, DataType::Name),
    builtin!(20, "int8", 8, true, "N", "d", 1016, DataType::Int8),
    builtin!(21, "int2", 2, true, "N", "s", 1005, DataType::Int2),
    builtin!(23, "int4", 4, true, "N", "i", 1007, DataType::Int4),
    builtin!(25, "text", -1, false, "S", "i", 1009, DataType::Text),
    builtin!(114, "json", -1, false, "U", "i", 199, DataType::Json),
    builtin!(26, "oid", 4, true, "N", "i", 1028, DataType::Oid),
    builtin!(700, "float4", 4, true, "N", "i", 1021, DataType::Float4),
    builtin!(701, "float8", 8, true, "N", "d", 1022, DataType::Float8),
    builtin!(705, "unknown", -2, false, "X", "c", 0, DataType::Unknown),
    builtin!(1042, "bpchar", -1, false, "S", "i", 1014, DataType::Char(1)),
    builtin!(
        1043,
        "varchar",
        -1,
        false,
        "S",
        "i",
        1015,
        DataType::Varchar(None),
    ),
    builtin!(1082, "date", 4, true, "D", "i", 1182, DataType::Date),
    builtin!(
        1114,
        "timestamp",
        8,
        true,
        "D",
        "d",
        1115,
        DataType::Timestamp,
    ),
    builtin!(
        1184,
        "timestamptz",
        8,
        true,
        "D",
        "d",
        1185,
        DataType::TimestampTz,
    ),
    builtin!(
        1700,
        "numeric",
        -1,
        false,
        "N",
        "i",
        1231,
        DataType::Numeric(None),
    ),
    builtin!(
        2205,
        "regclass",
        4,
        true,
        "N",
        "i",
        2210,
        DataType::RegClass,
    ),
    builtin!(2206, "regtype", 4, true, "N", "i", 2211, DataType::RegType),
    builtin!(24, "regproc", 4, true, "N", "i", 0, DataType::RegProc),
    builtin!(2950, "uuid", 16, false, "U", "c", 2951, DataType::Uuid),
    builtin!(3802, "jsonb", -1, false, "U", "i", 3807, DataType::Jsonb),
    builtin!(
        1186,
        "interval",
        16,
        false,
        "T",
        "d",
        1187,
        DataType::Interval
    ),
    builtin!(
        22,
        "int2vector",
        -1,
        false,
        "A",
        "i",
        0,
        DataType::Int2Vector
    ),
    builtin!(30, "oidvector", -1, false, "A", "i", 0, DataType::OidVector),
    builtin!(2278, "void", 4, true, "P", "i", 0, DataType::Void),
];

impl PgCatalog {
    pub fn by_name(name: &str) -> Option<PgCatalog> {
        CATALOGS.iter().find(|c| c.1 == name).map(|c| c.0)
    }

    fn name(self) -> &'static str {
        CATALOGS.iter().find(|c| c.0 == self).map_or("", |c| c.1)
    }

    /// The catalog's own OID (its `tableoid`).
    pub fn oid(self) -> u32 {
        CATALOGS.iter().find(|c| c.0 == self).map_or(0, |c| c.2)
    }

    pub fn def(self) -> TableDef {
        use DataType::{Bool, Int2, Int4, Int8, InternalChar as Ch, Name, Oid, Text};
        const fn array(e: &'static DataType) -> DataType {
            DataType::Array(e)
        }
        let cols: &[(&str, DataType)] = match self {
            PgCatalog::Namespace => &[
                ("oid", Oid),
                ("nspname", Name),
                ("nspowner", Oid),
                ("nspacl", array(&Text)),
            ],
            PgCatalog::Class => &[
                ("oid", Oid),
                ("relname", Name),
                ("relnamespace", Oid),
                ("reltype", Oid),
                ("reloftype", Oid),
                ("relowner", Oid),
                ("relam", Oid),
                ("relfilenode", Oid),
                ("reltablespace", Oid),
                ("relpages", Int4),
                ("reltuples", DataType::Float4),
                ("relallvisible", Int4),
                ("reltoastrelid", Oid),
                ("relhasindex", Bool),
                ("relisshared", Bool),
                ("relpersistence", Ch),
                ("relkind", Ch),
                ("relnatts", Int2),
                ("relchecks", Int2),
                ("relhasrules", Bool),
                ("relhastriggers", Bool),
                ("relhassubclass", Bool),
                ("relrowsecurity", Bool),
                ("relforcerowsecurity", Bool),
                ("relispopulated", Bool),
                ("relreplident", Ch),
                ("relispartition", Bool),
                ("relrewrite", Oid),
                ("relpartbound", Text),
                ("relacl", array(&Text)),
                ("reloptions", array(&Text)),
                // Transaction ids are not modelled: NULL.
                ("relfrozenxid", Text),
                ("relminmxid", Text),
            ],
            PgCatalog::Attribute => &[
                ("attrelid", Oid),
                ("attname", Name),
                ("atttypid", Oid),
                ("attstattarget", Int4),
                ("attlen", Int2),
                ("attnum", Int2),
                ("attndims", Int4),
                ("attcacheoff", Int4),
                ("atttypmod", Int4),
                ("attbyval", Bool),
                ("attalign", Ch),
                ("attstorage", Ch),
                ("attcompression", Ch),
                ("attnotnull", Bool),
                ("atthasdef", Bool),
                ("atthasmissing", Bool),
                ("attidentity", Ch),
                ("attgenerated", Ch),
                ("attisdropped", Bool),
                ("attislocal", Bool),
                ("attinhcount", Int4),
                ("attcollation", Oid),
                ("attacl", array(&Text)),
                ("attoptions", array(&Text)),
                ("attfdwoptions", array(&Text)),
                ("attmissingval", Text),
            ],
            PgCatalog::Type => &[
                ("oid", Oid),
                ("typname", Name),
                ("typnamespace", Oid),
                ("typowner", Oid),
                ("typlen", Int2),
                ("typbyval", Bool),
                ("typtype", Ch),
                ("typcategory", Ch),
                ("typispreferred", Bool),
                ("typisdefined", Bool),
                ("typdelim", Ch),
                ("typrelid", Oid),
                ("typelem", Oid),
                ("typarray", Oid),
                ("typalign", Ch),
                ("typstorage", Ch),
                ("typnotnull", Bool),
                ("typbasetype", Oid),
                ("typtypmod", Int4),
                ("typndims", Int4),
                ("typcollation", Oid),
                ("typdefault", Text),
                ("typacl", array(&Text)),
            ],
            PgCatalog::Index => &[
                ("indexrelid", Oid),
                ("indrelid", Oid),
                ("indnatts", Int2),
                ("indnkeyatts", Int2),
                ("indisunique", Bool),
                ("indnullsnotdistinct", Bool),
                ("indisprimary", Bool),
                ("indisexclusion", Bool),
                ("indimmediate", Bool),
                ("indisclustered", Bool),
                ("indisvalid", Bool),
                ("indcheckxmin", Bool),
                ("indisready", Bool),
                ("indislive", Bool),
                ("indisreplident", Bool),
                ("indexprs", Text),
                ("indpred", Text),
                ("indkey", DataType::Int2Vector),
                ("indcollation", DataType::OidVector),
                ("indclass", DataType::OidVector),
                ("indoption", DataType::Int2Vector),
            ],
            PgCatalog::Constraint => &[
                ("oid", Oid),
                ("conname", Name),
                ("connamespace", Oid),
                ("contype", Ch),
                ("condeferrable", Bool),
                ("condeferred", Bool),
                ("convalidated", Bool),
                ("conrelid", Oid),
                ("contypid", Oid),
                ("conindid", Oid),
                ("conparentid", Oid),
                ("confrelid", Oid),
                ("confupdtype", Ch),
                ("confdeltype", Ch),
                ("confmatchtype", Ch),
                ("conislocal", Bool),
                ("coninhcount", Int4),
                ("connoinherit", Bool),
                ("conbin", Text),
                ("conkey", array(&Int2)),
                ("confkey", array(&Int2)),
            ],
            PgCatalog::AttrDef => &[
                ("oid", Oid),
                ("adrelid", Oid),
                ("adnum", Int2),
                ("adbin", Text),
            ],
            PgCatalog::Database => &[
                ("oid", Oid),
                ("datname", Name),
                ("datdba", Oid),
                ("encoding", Int4),
                ("datlocprovider", Ch),
                ("datistemplate", Bool),
                ("datallowconn", Bool),
                ("datconnlimit", Int4),
                ("dattablespace", Oid),
                ("datcollate", Text),
                ("datctype", Text),
                ("daticulocale", Text),
                ("datcollversion", Text),
                ("datacl", array(&Text)),
            ],
            PgCatalog::User => &[
                ("usename", Name),
                ("usesysid", Oid),
                ("usecreatedb", Bool),
                ("usesuper", Bool),
                ("userepl", Bool),
                ("usebypassrls", Bool),
                ("passwd", Text),
                ("valuntil", DataType::TimestampTz),
                ("useconfig", array(&Text)),
            ],
            PgCatalog::AuthId => &[
                ("oid", Oid),
                ("rolname", Name),
                ("rolsuper", Bool),
                ("rolinherit", Bool),
                ("rolcreaterole", Bool),
                ("rolcreatedb", Bool),
                ("rolcanlogin", Bool),
                ("rolreplication", Bool),
                ("rolbypassrls", Bool),
                ("rolconnlimit", Int4),
                ("rolpassword", Text),
                ("rolvaliduntil", DataType::TimestampTz),
            ],
            PgCatalog::Roles => &[
                ("rolname", Name),
                ("rolsuper", Bool),
                ("rolinherit", Bool),
                ("rolcreaterole", Bool),
                ("rolcreatedb", Bool),
                ("rolcanlogin", Bool),
                ("rolreplication", Bool),
                ("rolconnlimit", Int4),
                ("rolpassword", Text),
                ("rolvaliduntil", DataType::TimestampTz),
                ("rolbypassrls", Bool),
                ("rolconfig", array(&Text)),
                ("oid", Oid),
            ],
            PgCatalog::Am => &[
                ("oid", Oid),
                ("amname", Name),
                ("amhandler", DataType::RegProc),
                ("amtype", Ch),
            ],
            PgCatalog::Settings => &[
                ("name", Text),
                ("setting", Text),
                ("unit", Text),
                ("category", Text),
                ("short_desc", Text),
                ("extra_desc", Text),
                ("context", Text),
                ("vartype", Text),
                ("source", Text),
                ("min_val", Text),
                ("max_val", Text),
                ("boot_val", Text),
                ("reset_val", Text),
                ("sourcefile", Text),
                ("sourceline", Int4),
                ("pending_restart", Bool),
            ],
            PgCatalog::Description => &[
                ("objoid", Oid),
                ("classoid", Oid),
                ("objsubid", Int4),
                ("description", Text),
            ],
            PgCatalog::Collation => &[
                ("oid", Oid),
                ("collname", Name),
                ("collnamespace", Oid),
                ("collowner", Oid),
                ("collprovider", Ch),
                ("collisdeterministic", Bool),
                ("collencoding", Int4),
                ("collcollate", Text),
                ("collctype", Text),
            ],
            PgCatalog::Inherits => &[
                ("inhrelid", Oid),
                ("inhparent", Oid),
                ("inhseqno", Int4),
                ("inhdetachpending", Bool),
            ],
            PgCatalog::Trigger => &[
                ("oid", Oid),
                ("tgrelid", Oid),
                ("tgparentid", Oid),
                ("tgname", Name),
                ("tgfoid", Oid),
                ("tgtype", Int2),
                ("tgenabled", Ch),
                ("tgisinternal", Bool),
                ("tgconstrrelid", Oid),
                ("tgconstrindid", Oid),
                ("tgconstraint", Oid),
                ("tgdeferrable", Bool),
                ("tginitdeferred", Bool),
                ("tgnargs", Int2),
            ],
            PgCatalog::Tablespace => &[("oid", Oid), ("spcname", Name), ("spcowner", Oid)],
            PgCatalog::Policy => &[
                ("oid", Oid),
                ("polname", Name),
                ("polrelid", Oid),
                ("polcmd", Ch),
                ("polpermissive", Bool),
                ("polroles", array(&Oid)),
                ("polqual", Text),
                ("polwithcheck", Text),
            ],
            PgCatalog::StatisticExt => &[
                ("oid", Oid),
                ("stxrelid", Oid),
                ("stxname", Name),
                ("stxnamespace", Oid),
                ("stxowner", Oid),
                ("stxstattarget", Int4),
                ("stxkeys", DataType::Int2Vector),
                ("stxkind", array(&Ch)),
            ],
            PgCatalog::Publication => &[
                ("oid", Oid),
                ("pubname", Name),
                ("pubowner", Oid),
                ("puballtables", Bool),
                ("pubinsert", Bool),
                ("pubupdate", Bool),
                ("pubdelete", Bool),
                ("pubtruncate", Bool),
                ("pubviaroot", Bool),
            ],
            PgCatalog::PublicationNamespace => &[("oid", Oid), ("pnpubid", Oid), ("pnnspid", Oid)],
            PgCatalog::PublicationRel => &[
                ("oid", Oid),
                ("prpubid", Oid),
                ("prrelid", Oid),
                ("prqual", Text),
                ("prattrs", array(&Int2)),
            ],
            PgCatalog::Sequence => &[
                ("seqrelid", Oid),
                ("seqtypid", Oid),
                ("seqstart", Int8),
                ("seqincrement", Int8),
                ("seqmax", Int8),
                ("seqmin", Int8),
                ("seqcache", Int8),
                ("seqcycle", Bool),
            ],
            PgCatalog::Depend => &[
                ("classid", Oid),
                ("objid", Oid),
                ("objsubid", Int4),
                ("refclassid", Oid),
                ("refobjid", Oid),
                ("refobjsubid", Int4),
                ("deptype", Ch),
            ],
            PgCatalog::OpClass => &[
                ("oid", Oid),
                ("opcmethod", Oid),
                ("opcname", Name),
                ("opcnamespace", Oid),
                ("opcowner", Oid),
                ("opcintype", Oid),
                ("opcdefault", Bool),
                ("opckeytype", Oid),
            ],
            PgCatalog::DbRoleSetting => &[
                ("setdatabase", Oid),
                ("setrole", Oid),
                ("setconfig", array(&Text)),
            ],
            PgCatalog::AuthMembers => &[
                ("roleid", Oid),
                ("member", Oid),
                ("grantor", Oid),
                ("admin_option", Bool),
            ],
            PgCatalog::Extension => &[
                ("oid", Oid),
                ("extname", Name),
                ("extowner", Oid),
                ("extnamespace", Oid),
                ("extrelocatable", Bool),
                ("extversion", Text),
                ("extconfig", array(&Oid)),
                ("extcondition", array(&Text)),
            ],
            PgCatalog::Proc => &[
                ("oid", Oid),
                ("proname", Name),
                ("pronamespace", Oid),
                ("proowner", Oid),
                ("prolang", Oid),
                ("procost", DataType::Float4),
                ("prorows", DataType::Float4),
                ("provariadic", Oid),
                ("prosupport", DataType::RegProc),
                ("prokind", Ch),
                ("prosecdef", Bool),
                ("proleakproof", Bool),
                ("proisstrict", Bool),
                ("proretset", Bool),
                ("provolatile", Ch),
                ("proparallel", Ch),
                ("pronargs", Int2),
                ("pronargdefaults", Int2),
                ("prorettype", Oid),
                ("proargtypes", DataType::OidVector),
                ("proallargtypes", array(&Oid)),
                ("proargmodes", array(&Ch)),
                ("proargnames", array(&Text)),
                ("proargdefaults", Text),
                ("protrftypes", array(&Oid)),
                ("prosrc", Text),
                ("probin", Text),
                ("prosqlbody", Text),
                ("proconfig", array(&Text)),
                ("proacl", array(&Text)),
            ],
            PgCatalog::Language => &[
                ("oid", Oid),
                ("lanname", Name),
                ("lanowner", Oid),
                ("lanispl", Bool),
                ("lanpltrusted", Bool),
                ("lanplcallfoid", Oid),
                ("laninline", Oid),
                ("lanvalidator", Oid),
                ("lanacl", array(&Text)),
            ],
            PgCatalog::Operator => &[
                ("oid", Oid),
                ("oprname", Name),
                ("oprnamespace", Oid),
                ("oprowner", Oid),
                ("oprkind", Ch),
                ("oprcanmerge", Bool),
                ("oprcanhash", Bool),
                ("oprleft", Oid),
                ("oprright", Oid),
                ("oprresult", Oid),
                ("oprcom", Oid),
                ("oprnegate", Oid),
                ("oprcode", DataType::RegProc),
                ("oprrest", DataType::RegProc),
                ("oprjoin", DataType::RegProc),
            ],
            PgCatalog::OpFamily => &[
                ("oid", Oid),
                ("opfmethod", Oid),
                ("opfname", Name),
                ("opfnamespace", Oid),
                ("opfowner", Oid),
            ],
            PgCatalog::Cast => &[
                ("oid", Oid),
                ("castsource", Oid),
                ("casttarget", Oid),
                ("castfunc", Oid),
                ("castcontext", Ch),
                ("castmethod", Ch),
            ],
            PgCatalog::Conversion => &[
                ("oid", Oid),
                ("conname", Name),
                ("connamespace", Oid),
                ("conowner", Oid),
                ("conforencoding", Int4),
                ("contoencoding", Int4),
                ("conproc", DataType::RegProc),
                ("condefault", Bool),
            ],
            PgCatalog::Transform => &[
                ("oid", Oid),
                ("trftype", Oid),
                ("trflang", Oid),
                ("trffromsql", DataType::RegProc),
                ("trftosql", DataType::RegProc),
            ],
            PgCatalog::EventTrigger => &[
                ("oid", Oid),
                ("evtname", Name),
                ("evtevent", Name),
                ("evtowner", Oid),
                ("evtfoid", Oid),
                ("evtenabled", Ch),
                ("evttags", array(&Text)),
            ],
            PgCatalog::TsParser => &[
                ("oid", Oid),
                ("prsname", Name),
                ("prsnamespace", Oid),
                ("prsstart", DataType::RegProc),
                ("prstoken", DataType::RegProc),
                ("prsend", DataType::RegProc),
                ("prsheadline", DataType::RegProc),
                ("prslextype", DataType::RegProc),
            ],
            PgCatalog::TsTemplate => &[
                ("oid", Oid),
                ("tmplname", Name),
                ("tmplnamespace", Oid),
                ("tmplinit", DataType::RegProc),
                ("tmpllexize", DataType::RegProc),
            ],
            PgCatalog::TsDict => &[
                ("oid", Oid),
                ("dictname", Name),
                ("dictnamespace", Oid),
                ("dictowner", Oid),
                ("dicttemplate", Oid),
                ("dictinitoption", Text),
            ],
            PgCatalog::TsConfig => &[
                ("oid", Oid),
                ("cfgname", Name),
                ("cfgnamespace", Oid),
                ("cfgowner", Oid),
                ("cfgparser", Oid),
            ],
            PgCatalog::ForeignDataWrapper => &[
                ("oid", Oid),
                ("fdwname", Name),
                ("fdwowner", Oid),
                ("fdwhandler", Oid),
                ("fdwvalidator", Oid),
                ("fdwacl", array(&Text)),
                ("fdwoptions", array(&Text)),
            ],
            PgCatalog::ForeignServer => &[
                ("oid", Oid),
                ("srvname", Name),
                ("srvowner", Oid),
                ("srvfdw", Oid),
                ("srvtype", Text),
                ("srvversion", Text),
                ("srvacl", array(&Text)),
                ("srvoptions", array(&Text)),
            ],
            PgCatalog::ForeignTable => &[
                ("ftrelid", Oid),
                ("ftserver", Oid),
                ("ftoptions", array(&Text)),
            ],
            PgCatalog::DefaultAcl => &[
                ("oid", Oid),
                ("defaclrole", Oid),
                ("defaclnamespace", Oid),
                ("defaclobjtype", Ch),
                ("defaclacl", array(&Text)),
            ],
            PgCatalog::PartitionedTable => &[
                ("partrelid", Oid),
                ("partstrat", Ch),
                ("partnatts", Int2),
                ("partdefid", Oid),
                ("partattrs", DataType::Int2Vector),
                ("partclass", DataType::OidVector),
                ("partcollation", DataType::OidVector),
                ("partexprs", Text),
            ],
            PgCatalog::Rewrite => &[
                ("oid", Oid),
                ("rulename", Name),
                ("ev_class", Oid),
                ("ev_type", Ch),
                ("ev_enabled", Ch),
                ("is_instead", Bool),
                ("ev_qual", Text),
                ("ev_action", Text),
            ],
            PgCatalog::Subscription => &[
                ("oid", Oid),
                ("subdbid", Oid),
                ("subskiplsn", Text),
                ("subname", Name),
                ("subowner", Oid),
                ("subenabled", Bool),
                ("subbinary", Bool),
                ("substream", Bool),
                ("subtwophasestate", Ch),
                ("subdisableonerr", Bool),
                ("subconninfo", Text),
                ("subslotname", Name),
                ("subsynccommit", Text),
                ("subpublications", array(&Text)),
            ],
            PgCatalog::LargeObjectMetadata => {
                &[("oid", Oid), ("lomowner", Oid), ("lomacl", array(&Text))]
            }
            PgCatalog::AmOp => &[
                ("oid", Oid),
                ("amopfamily", Oid),
                ("amoplefttype", Oid),
                ("amoprighttype", Oid),
                ("amopstrategy", Int2),
                ("amoppurpose", Ch),
                ("amopopr", Oid),
                ("amopmethod", Oid),
                ("amopsortfamily", Oid),
            ],
            PgCatalog::AmProc => &[
                ("oid", Oid),
                ("amprocfamily", Oid),
                ("amproclefttype", Oid),
                ("amprocrighttype", Oid),
                ("amprocnum", Int2),
                ("amproc", DataType::RegProc),
            ],
            PgCatalog::InitPrivs => &[
                ("objoid", Oid),
                ("classoid", Oid),
                ("objsubid", Int4),
                ("privtype", Ch),
                ("initprivs", array(&Text)),
            ],
            PgCatalog::SecLabels => &[
                ("objoid", Oid),
                ("classoid", Oid),
                ("objsubid", Int4),
                ("objtype", Text),
                ("objnamespace", Oid),
                ("objname", Text),
                ("provider", Text),
                ("label", Text),
            ],
            PgCatalog::Aggregate => &[
                ("aggfnoid", DataType::RegProc),
                ("aggkind", Ch),
                ("aggnumdirectargs", Int2),
                ("aggtransfn", DataType::RegProc),
                ("aggfinalfn", DataType::RegProc),
                ("aggcombinefn", DataType::RegProc),
                ("aggserialfn", DataType::RegProc),
                ("aggdeserialfn", DataType::RegProc),
                ("aggmtransfn", DataType::RegProc),
                ("aggminvtransfn", DataType::RegProc),
                ("aggmfinalfn", DataType::RegProc),
                ("aggfinalextra", Bool),
                ("aggmfinalextra", Bool),
                ("aggfinalmodify", Ch),
                ("aggmfinalmodify", Ch),
                ("aggsortop", Oid),
                ("aggtranstype", Oid),
                ("aggtransspace", Int4),
                ("aggmtranstype", Oid),
                ("aggmtransspace", Int4),
                ("agginitval", Text),
                ("aggminitval", Text),
            ],
            PgCatalog::Range => &[
                ("rngtypid", Oid),
                ("rngsubtype", Oid),
                ("rngmultitypid", Oid),
                ("rngcollation", Oid),
                ("rngsubopc", Oid),
                ("rngcanonical", DataType::RegProc),
                ("rngsubdiff", DataType::RegProc),
            ],
            PgCatalog::Enum => &[
                ("oid", Oid),
                ("enumtypid", Oid),
                ("enumsortorder", DataType::Float4),
                ("enumlabel", Name),
            ],
            // The sampled values are shown as text (PostgreSQL's column is `anyarray`).
            PgCatalog::Tables => &[
                ("schemaname", Name),
                ("tablename", Name),
                ("tableowner", Name),
                ("tablespace", Name),
                ("hasindexes", Bool),
                ("hasrules", Bool),
                ("hastriggers", Bool),
                ("rowsecurity", Bool),
            ],
            PgCatalog::Indexes => &[
                ("schemaname", Name),
                ("tablename", Name),
                ("indexname", Name),
                ("tablespace", Name),
                ("indexdef", Text),
            ],
            PgCatalog::Views => &[
                ("schemaname", Name),
                ("viewname", Name),
                ("viewowner", Name),
                ("definition", Text),
            ],
            PgCatalog::TimezoneNames => &[
                ("name", Text),
                ("abbrev", Text),
                ("utc_offset", DataType::Interval),
                ("is_dst", Bool),
            ],
            PgCatalog::Sequences => &[
                ("schemaname", Name),
                ("sequencename", Name),
                ("sequenceowner", Name),
                ("data_type", DataType::RegType),
                ("start_value", Int8),
                ("min_value", Int8),
                ("max_value", Int8),
                ("increment_by", Int8),
                ("cycle", Bool),
                ("cache_size", Int8),
                ("last_value", Int8),
            ],
            PgCatalog::Stats => &[
                ("schemaname", Name),
                ("tablename", Name),
                ("attname", Name),
                ("inherited", Bool),
                ("null_frac", DataType::Float4),
                ("avg_width", Int4),
                ("n_distinct", DataType::Float4),
                ("most_common_vals", array(&Text)),
                ("most_common_freqs", array(&DataType::Float4)),
                ("histogram_bounds", array(&Text)),
                ("correlation", DataType::Float4),
                ("most_common_elems", array(&Text)),
                ("most_common_elem_freqs", array(&DataType::Float4)),
                ("elem_count_histogram", array(&DataType::Float4)),
            ],
        };
        TableDef::of_columns(self.name(), cols.iter().copied())
    }

    /// The catalog's rows. `settings` shows a setting as the scanning session sees it.
    pub fn rows(
        self,
        engine: &Engine,
        visible: &CatalogView,
        settings: &dyn Fn(&str) -> Option<String>,
    ) -> Vec<Row> {
        let rows: Vec<Vec<Value>> = match self {
            PgCatalog::Namespace => [
                (NAMESPACE_PG_CATALOG, "pg_catalog"),
                (NAMESPACE_PG_TOAST, "pg_toast"),
                (NAMESPACE_PUBLIC, "public"),
                (NAMESPACE_INFORMATION_SCHEMA, "information_schema"),
            ]
            .iter()
            .map(|(o, n)| {
                let owner = if *o == NAMESPACE_PUBLIC {
                    DATABASE_OWNER_ROLE
                } else {
                    BOOTSTRAP_ROLE
                };
                vec![
                    Value::Oid(*o),
                    name(n),
                    Value::Oid(owner),
                    namespace_acl(*o).map_or(Value::Null, text_array),
                ]
            })
            .collect(),
            PgCatalog::Class => relations(engine, visible)
                .iter()
                .map(|r| {
                    let mut row = class_row(r);
                    if let Some(acl) = engine.txn.catalog.acl(r.oid) {
                        // relacl, before reloptions (the transaction ids come after).
                        let at = row.len() - 2;
                        row[at] = acl_value(engine, &acl);
                    }
                    row
                })
                .collect(),
            PgCatalog::Attribute => attributes(engine, visible),
            PgCatalog::Type => TYPES
                .iter()
                .map(type_row)
                .chain(TYPES.iter().filter_map(array_type_row))
                .collect(),
            PgCatalog::Index => tables(engine, visible)
                .iter()
                .flat_map(|(t, def)| {
                    table_indexes(t, def)
                        .into_iter()
                        .map(move |index| index_row(t, def, &index))
                })
                .collect(),
            PgCatalog::OpClass => OPCLASSES
                .iter()
                .map(|(o, n, t)| {
                    vec![
                        Value::Oid(*o),
                        Value::Oid(BTREE_AM),
                        name(n),
                        Value::Oid(NAMESPACE_PG_CATALOG),
                        Value::Oid(BOOTSTRAP_ROLE),
                        Value::Oid(*t),
                        Value::Bool(true),
                        Value::Oid(0),
                    ]
                })
                .collect(),
            PgCatalog::Constraint => tables(engine, visible)
                .iter()
                .flat_map(|(t, def)| {
                    table_indexes(t, def)
                        .into_iter()
                        .filter(|index| index.constraint.is_some())
                        .map(move |index| constraint_row(t, &index))
                        .chain(
                            def.checks
                                .iter()
                                .enumerate()
                                .map(move |(k, c)| check_row(t, k, c)),
                        )
                        .chain(
                            def.foreign_keys
                                .iter()
                                .enumerate()
                                .filter_map(move |(k, fk)| foreign_key_row(engine, t, k, fk)),
                        )
                })
                .collect(),
            PgCatalog::AttrDef => {
                let mut rows = Vec::new();
                for (t, def) in tables(engine, visible) {
                    for (i, c) in def.columns.iter().enumerate().filter(|(_, c)| !c.identity) {
                        if let Some(d) = &c.default {
                            rows.push(vec![
                                Value::Oid(table_oid(&t) + FIRST_ATTRDEF + i as u32 + 1),
                                Value::Oid(table_oid(&t)),
                                Value::Int2(i as i16 + 1),
                                Value::Text(default_expression(d, c.data_type)),
                            ]);
                        }
                    }
                }
                rows
            }
            PgCatalog::Database => vec![vec![
                Value::Oid(DATABASE_OID),
                name("postgres"),
                Value::Oid(BOOTSTRAP_ROLE),
                Value::Int4(6),
                char_value('c'),
                Value::Bool(false),
                Value::Bool(true),
                Value::Int4(-1),
                Value::Oid(1663),
                Value::Text("C".into()),
                Value::Text("C".into()),
                Value::Null,
                Value::Null,
                engine
                    .txn
                    .catalog
                    .acl(DATABASE_OID)
                    .map_or(Value::Null, |acl| acl_value(engine, &acl)),
            ]],
            PgCatalog::Roles => role_rows(engine, false),
            PgCatalog::AuthId => role_rows(engine, true),
            // ALTER ROLE ... SET (for every database: setdatabase 0).
            PgCatalog::DbRoleSetting => engine
                .txn
                .catalog
                .roles()
                .iter()
                .filter(|r| !r.settings.is_empty())
                .map(|r| vec![Value::Oid(0), Value::Oid(r.oid), role_config(&r.settings)])
                .collect(),
            // In PostgreSQL's (member, roleid) index order.
            PgCatalog::AuthMembers => {
                let mut rows: Vec<_> = engine
                    .txn
                    .catalog
                    .roles()
                    .iter()
                    .flat_map(|r| r.member_of.iter().map(|m| (r.oid, *m)).collect::<Vec<_>>())
                    .collect();
                rows.sort_by_key(|(member, m)| (*member, m.role));
                rows.into_iter()
                    .map(|(member, m)| {
                        vec![
                            Value::Oid(m.role),
                            Value::Oid(member),
                            Value::Oid(m.grantor),
                            Value::Bool(m.admin),
                        ]
                    })
                    .collect()
            }
            PgCatalog::User => engine
                .txn
                .catalog
                .roles()
                .iter()
                .filter(|r| r.login)
                .map(|r| {
                    vec![
                        name(&r.name),
                        Value::Oid(r.oid),
                        Value::Bool(r.create_db),
                        Value::Bool(r.superuser),
                        Value::Bool(r.replication),
                        Value::Bool(r.bypass_rls),
                        Value::Text("********".into()),
                        r.valid_until_us.map_or(Value::Null, Value::TimestampTz),
                        Value::Null,
                    ]
                })
                .collect(),
            PgCatalog::Am => vec![
                vec![
                    Value::Oid(HEAP_AM),
                    name("heap"),
                    Value::Reg(3, "heap_tableam_handler".into()),
                    char_value('t'),
                ],
                vec![
                    Value::Oid(BTREE_AM),
                    name("btree"),
                    Value::Reg(330, "bthandler".into()),
                    char_value('i'),
                ],
            ],
            // Functions are built in, in language `internal`; none is user-defined.
            PgCatalog::Language => vec![vec![
                Value::Oid(12),
                name("internal"),
                Value::Oid(BOOTSTRAP_ROLE),
                Value::Bool(false),
                Value::Bool(false),
                Value::Oid(0),
                Value::Oid(0),
                Value::Oid(2246),
            ]],
            PgCatalog::Settings => crate::settings::DEFS
                .iter()
                .map(|d| settings_row(d, settings))
                .collect(),
            PgCatalog::Collation => [
                (DEFAULT_COLLATION, "default", 'd', -1, None),
                (950, "C", 'c', -1, Some("C")),
                (951, "POSIX", 'c', -1, Some("POSIX")),
            ]
            .iter()
            .map(|(o, n, provider, encoding, locale)| {
                vec![
                    Value::Oid(*o),
                    name(n),
                    Value::Oid(NAMESPACE_PG_CATALOG),
                    Value::Oid(BOOTSTRAP_ROLE),
                    char_value(*provider),
                    Value::Bool(true),
                    Value::Int4(*encoding),
                    locale.map_or(Value::Null, |l| Value::Text(l.into())),
                    locale.map_or(Value::Null, |l| Value::Text(l.into())),
                ]
            })
            .collect(),
            PgCatalog::Tablespace => [(1663, "pg_default"), (1664, "pg_global")]
                .iter()
                .map(|(o, n)| vec![Value::Oid(*o), name(n), Value::Oid(BOOTSTRAP_ROLE)])
                .collect(),
            PgCatalog::Sequence => sequence_entries(engine, visible)
                .into_iter()
                .map(|e| {
                    let o = e.options;
                    vec![
                        Value::Oid(e.oid),
                        Value::Oid(o.data_type.oid()),
                        Value::Int8(o.start),
                        Value::Int8(o.increment),
                        Value::Int8(o.max),
                        Value::Int8(o.min),
                        Value::Int8(o.cache),
                        Value::Bool(o.cycle),
                    ]
                })
                .collect(),
            PgCatalog::Depend => dependencies(engine, visible),
            PgCatalog::Tables => table_view_rows(engine, visible),
            PgCatalog::Indexes => tables(engine, visible)
                .iter()
                .flat_map(|(t, def)| {
                    table_indexes(t, def).into_iter().map(move |index| {
                        vec![
                            name("public"),
                            name(&def.name),
                            name(&index.name),
                            Value::Null,
                            index_definition(engine, index.oid, 0).map_or(Value::Null, Value::Text),
                        ]
                    })
                })
                .collect(),
            PgCatalog::Views => {
                let owner = owner_name(engine);
                let mut views = visible_views(engine, visible);
                views.sort_by(|a, b| a.name.cmp(&b.name));
                views
                    .iter()
                    .map(|v| {
                        vec![
                            name("public"),
                            name(&v.name),
                            name(&owner),
                            view_definition(engine, id_oid(v.id), false)
                                .map_or(Value::Null, Value::Text),
                        ]
                    })
                    .collect()
            }
            PgCatalog::TimezoneNames => timezone_names(),
            PgCatalog::Sequences => {
                let owner = owner_name(engine);
                sequence_entries(engine, visible)
                    .into_iter()
                    .map(|e| {
                        let o = e.options;
                        let last = engine
                            .txn
                            .catalog
                            .sequence(&e.name)
                            .map(|s| s.last_value())
                            .filter(|(_, called)| *called)
                            .map_or(Value::Null, |(v, _)| Value::Int8(v));
                        vec![
                            name("public"),
                            name(&e.name),
                            name(&owner),
                            Value::Reg(o.data_type.oid(), o.data_type.name().into()),
                            Value::Int8(o.start),
                            Value::Int8(o.min),
                            Value::Int8(o.max),
                            Value::Int8(o.increment),
                            Value::Bool(o.cycle),
                            Value::Int8(o.cache),
                            last,
                        ]
                    })
                    .collect()
            }
            // The schemas' privileges are initdb's ('i').
            PgCatalog::InitPrivs => [
                NAMESPACE_PG_CATALOG,
                NAMESPACE_PUBLIC,
                NAMESPACE_INFORMATION_SCHEMA,
            ]
            .iter()
            .filter_map(|&o| {
                Some(vec![
                    Value::Oid(o),
                    Value::Oid(PG_NAMESPACE),
                    Value::Int4(0),
                    char_value('i'),
                    text_array(namespace_acl(o)?),
                ])
            })
            .collect(),
            // The comment initdb gives schema public, and those of tables and columns.
            PgCatalog::Description => {
                let mut rows = vec![vec![
                    Value::Oid(NAMESPACE_PUBLIC),
                    Value::Oid(PG_NAMESPACE),
                    Value::Int4(0),
                    Value::Text("standard public schema".into()),
                ]];
                for (t, def) in tables(engine, visible) {
                    for (attnum, text) in table_descriptions(&def) {
                        rows.push(vec![
                            Value::Oid(table_oid(&t)),
                            Value::Oid(PG_CLASS),
                            Value::Int4(attnum),
                            Value::Text(text.to_string()),
                        ]);
                    }
                }
                rows
            }
            // A view's query is its ON SELECT rule, "_RETURN", as in PostgreSQL.
            PgCatalog::Rewrite => visible_views(engine, visible)
                .iter()
                .map(|v| {
                    vec![
                        Value::Oid(id_oid(v.id) + VIEW_RULE),
                        name("_RETURN"),
                        Value::Oid(id_oid(v.id)),
                        char_value('1'),
                        char_value('O'),
                        Value::Bool(true),
                    ]
                })
                .collect(),
            // SteadyDB has no comments, inheritance, triggers, row security policies,
            // extended statistics or publications.
            PgCatalog::Inherits
            | PgCatalog::Trigger
            | PgCatalog::Policy
            | PgCatalog::StatisticExt
            | PgCatalog::Publication
            | PgCatalog::PublicationNamespace
            | PgCatalog::PublicationRel => Vec::new(),
            // Nor extensions, user-defined functions, operators, casts, aggregates or
            // types, text search, foreign data, default privileges, partitioning, rules,
            // subscriptions, large objects or security labels. (The built-in functions,
            // operators and casts are not listed.)
            PgCatalog::Extension
            | PgCatalog::Proc
            | PgCatalog::Operator
            | PgCatalog::OpFamily
            | PgCatalog::Cast
            | PgCatalog::Conversion
            | PgCatalog::Transform
            | PgCatalog::EventTrigger
            | PgCatalog::TsParser
            | PgCatalog::TsTemplate
            | PgCatalog::TsDict
            | PgCatalog::TsConfig
            | PgCatalog::ForeignDataWrapper
            | PgCatalog::ForeignServer
            | PgCatalog::ForeignTable
            | PgCatalog::DefaultAcl
            | PgCatalog::PartitionedTable
            | PgCatalog::Subscription
            | PgCatalog::LargeObjectMetadata
            | PgCatalog::AmOp
            | PgCatalog::AmProc
            | PgCatalog::SecLabels
            | PgCatalog::Aggregate
            | PgCatalog::Range
            | PgCatalog::Enum => Vec::new(),
            PgCatalog::Stats => stats_rows(engine, visible),
        };
        // Columns no row above gives (access privileges, options, ...) are NULL.
        let width = self.def().columns.len();
        rows.into_iter()
            .map(|mut row| {
                debug_assert!(
                    row.len() <= width,
                    "{} row wider than its catalog",
                    self.name()
                );
                row.resize(width, Value::Null);
                Row::from(row)
            })
            .collect()
    }
}

fn name(s: &str) -> Value {
    Value::Text(s.to_string())
}

/// `pg_stats`: per column of each table ANALYZE has measured, what it found.
fn stats_rows(engine: &Engine, visible: &CatalogView) -> Vec<Vec<Value>> {
    static TEXT: DataType = DataType::Text;
    static FLOAT4: DataType = DataType::Float4;
    let mut out = Vec::new();
    for (t, def) in tables(engine, visible) {
        let Some(stats) = t.stats() else {
            continue;
        };
        for (i, c) in def.columns.iter().enumerate() {
            let Some(cs) = stats.columns.get(i).filter(|_| !c.dropped) else {
                continue;
            };
            let (values, freqs): (Vec<Value>, Vec<Value>) = cs
                .most_common
                .iter()
                .map(|(v, f)| {
                    (
                        Value::Text(crate::types::format_text(v)),
                        Value::Float4(*f as f32),
                    )
                })
                .unzip();
            let some = |items: Vec<Value>, e: &'static DataType| match items.is_empty() {
                true => Value::Null,
                false => Value::Array(e, items.into()),
            };
            out.push(vec![
                name(crate::error::TABLE_SCHEMA),
                name(&def.name),
                name(&c.name),
                Value::Bool(false),
                Value::Float4(cs.null_frac as f32),
                Value::Int4(cs.avg_width),
                Value::Float4(cs.n_distinct as f32),
                some(values, &TEXT),
                some(freqs, &FLOAT4),
            ]);
        }
    }
    out
}

fn char_value(c: char) -> Value {
    Value::Text(c.to_string())
}

/// A sequence as the catalogs show it.
/// The OID pg_class gives the sequence `name` (what its privileges are kept under).
pub(crate) fn sequence_oid(engine: &Engine, name: &str) -> Option<u32> {
    let everything = CatalogView::new(|_| true, |_| false);
    sequence_entries(engine, &everything)
        .into_iter()
        .find(|s| s.name == name)
        .map(|s| s.oid)
}

struct SequenceEntry {
    oid: u32,
    name: String,
    /// The table that owns it and the column (1-based; 0: none found) whose default
    /// draws from it.
    owner: Option<(u32, usize)>,
    options: crate::storage::SequenceOptions,
}

/// Every sequence the scanning transaction sees: those tables own (a serial column's is
/// numbered in its table's OIDs, a created one by its own), then created ones no table
/// owns.
fn sequence_entries(engine: &Engine, visible: &CatalogView) -> Vec<SequenceEntry> {
    let catalog = &engine.txn.catalog;
    let mut out = Vec::new();
    for (t, def) in tables(engine, visible) {
        for (k, seq) in def.owned_sequences.iter().enumerate() {
            let k = k as u32;
            let column = def.columns.iter().position(|c| {
                c.default
                    .as_deref()
                    .and_then(|d| d.strip_prefix("nextval('"))
                    .and_then(|d| d.strip_suffix("')"))
                    == Some(seq.as_str())
            });
            let created = catalog.sequence(seq).and_then(|s| s.created());
            let (oid, options) = match created {
                Some((id, options)) => (id_oid(id), options),
                None if FIRST_SEQUENCE + k <= LAST_SEQUENCE => {
                    let ty = column.map_or(DataType::Int8, |i| def.columns[i].data_type);
                    (
                        table_oid(&t) + FIRST_SEQUENCE + k,
                        crate::storage::SequenceOptions::defaults(ty),
                    )
                }
                None => continue,
            };
            out.push(SequenceEntry {
                oid,
                name: seq.clone(),
                owner: Some((table_oid(&t), column.map_or(0, |i| i + 1))),
                options,
            });
        }
    }
    let owned: Vec<String> = out.iter().map(|e| e.name.clone()).collect();
    for seq in catalog.created_sequences() {
        if let Some((id, options)) = seq.created() {
            if !owned.contains(&seq.name) && visible.sees_id(id) {
                out.push(SequenceEntry {
                    oid: id_oid(id),
                    name: seq.name.clone(),
                    owner: None,
                    options,
                });
            }
        }
    }
    out
}

/// The name of the role that owns every table, view and sequence (the bootstrap
/// superuser).
fn owner_name(engine: &Engine) -> String {
    engine
        .txn
        .catalog
        .role_by_oid(BOOTSTRAP_ROLE)
        .map_or_else(|| "postgres".to_string(), |r| r.name.clone())
}

/// `pg_tables`: the tables of schema public, then the system catalogs that PostgreSQL
/// keeps as tables (schema pg_catalog). `hastriggers` is PostgreSQL's: a table with a
/// foreign key, or one a foreign key references, has its constraint triggers.
fn table_view_rows(engine: &Engine, visible: &CatalogView) -> Vec<Vec<Value>> {
    let owner = owner_name(engine);
    let catalog = &engine.txn.catalog;
    let row = |schema: &str, table: &str, indexes: bool, triggers: bool| -> Vec<Value> {
        vec![
            name(schema),
            name(table),
            name(&owner),
            Value::Null,
            Value::Bool(indexes),
            Value::Bool(false),
            Value::Bool(triggers),
            Value::Bool(false),
        ]
    };
    let mut rows: Vec<Vec<Value>> = tables(engine, visible)
        .iter()
        .map(|(t, def)| {
            let indexes = !def.primary_key.is_empty() || !def.indexes.is_empty();
            let triggers = !def.foreign_keys.is_empty() || !catalog.referencing(t.id).is_empty();
            row("public", &def.name, indexes, triggers)
        })
        .collect();
    rows.extend(
        CATALOGS
            .iter()
            .filter(|(_, _, _, table)| *table)
            .map(|(_, n, _, _)| row("pg_catalog", n, true, false)),
    );
    rows
}

/// `pg_depend`: an owned sequence on its column (`a`), a primary key index on its
/// constraint (`i`), the constraint and each default on their columns (`a`).
fn dependencies(engine: &Engine, visible: &CatalogView) -> Vec<Vec<Value>> {
    let row = |class: u32, obj: u32, refclass: u32, refobj: u32, refsub: usize, kind: char| {
        vec![
            Value::Oid(class),
            Value::Oid(obj),
            Value::Int4(0),
            Value::Oid(refclass),
            Value::Oid(refobj),
            Value::Int4(refsub as i32),
            char_value(kind),
        ]
    };
    let mut rows = Vec::new();
    // An identity's sequence is internal to its column ('i'), a serial's automatic.
    let identities: Vec<(u32, usize)> = tables(engine, visible)
        .iter()
        .flat_map(|(t, def)| {
            let oid = table_oid(t);
            def.columns
                .iter()
                .enumerate()
                .filter(|(_, c)| c.identity)
                .map(move |(i, _)| (oid, i + 1))
                .collect::<Vec<_>>()
        })
        .collect();
    let sequences = sequence_entries(engine, visible);
    for seq in &sequences {
        if let Some((table, attnum)) = seq.owner {
            let kind = if identities.contains(&(table, attnum)) {
                'i'
            } else {
                'a'
            };
            rows.push(row(PG_CLASS, seq.oid, PG_CLASS, table, attnum, kind));
        }
    }
    for (t, def) in tables(engine, visible) {
        let oid = table_oid(&t);
        for index in table_indexes(&t, &def) {
            match index.constraint {
                Some((constraint, _)) => {
                    rows.push(row(PG_CLASS, index.oid, PG_CONSTRAINT, constraint, 0, 'i'));
                    for &i in &index.columns {
                        rows.push(row(PG_CONSTRAINT, constraint, PG_CLASS, oid, i + 1, 'a'));
                    }
                }
                None => {
                    for &i in &index.columns {
                        rows.push(row(PG_CLASS, index.oid, PG_CLASS, oid, i + 1, 'a'));
                    }
                }
            }
        }
        for (i, c) in def.columns.iter().enumerate() {
            if c.default.is_some() && !c.identity {
                let attrdef = oid + FIRST_ATTRDEF + i as u32 + 1;
                rows.push(row(PG_ATTRDEF, attrdef, PG_CLASS, oid, i + 1, 'a'));
                // A default drawing from a sequence depends on it.
                if let Some(seq) = c.default.as_deref().and_then(nextval_sequence) {
                    if let Some(s) = sequences.iter().find(|s| s.name == seq) {
                        rows.push(row(PG_ATTRDEF, attrdef, PG_CLASS, s.oid, 0, 'n'));
                    }
                }
            }
        }
    }
    // A view's rule belongs to it and depends on what it reads.
    let relations = relations(engine, visible);
    for view in visible_views(engine, visible) {
        let rule = id_oid(view.id) + VIEW_RULE;
        rows.push(row(PG_REWRITE, rule, PG_CLASS, id_oid(view.id), 0, 'i'));
        for read in &view.depends_on {
            if let Some(r) = relations
                .iter()
                .find(|r| r.name == *read && r.namespace == NAMESPACE_PUBLIC)
            {
                rows.push(row(PG_REWRITE, rule, PG_CLASS, r.oid, 0, 'n'));
            }
        }
    }
    rows
}

/// The sequence a default `nextval('name'::regclass)` draws from.
fn nextval_sequence(default: &str) -> Option<String> {
    let rest = default.trim().strip_prefix("nextval('")?;
    let name = &rest[..rest.find('\'')?];
    Some(name.trim_start_matches("public.").to_string())
}

const NAMESPACES: &[(u32, &str)] = &[
    (NAMESPACE_PG_CATALOG, "pg_catalog"),
    (NAMESPACE_PG_TOAST, "pg_toast"),
    (NAMESPACE_PUBLIC, "public"),
    (NAMESPACE_INFORMATION_SCHEMA, "information_schema"),
];

/// A schema's name.
/// The schemas of `search_path` that exist, in its order; with `implicit`, `pg_catalog`
/// first unless the path names it (`current_schemas(true)`).
pub fn search_path_schemas(path: &str, implicit: bool) -> Vec<String> {
    let mut schemas: Vec<String> = path
        .split(',')
        .map(|p| {
            let p = p.trim();
            match p.strip_prefix('"').and_then(|q| q.strip_suffix('"')) {
                Some(quoted) => quoted.replace("\"\"", "\""),
                None => p.to_lowercase(),
            }
        })
        .filter(|s| namespace_by_name(s).is_some())
        .collect();
    if implicit && !schemas.iter().any(|s| s == "pg_catalog") {
        schemas.insert(0, "pg_catalog".into());
    }
    schemas
}

/// A schema's privileges as initdb leaves them: everyone may use `public`,
/// `pg_catalog` and `information_schema`; the owner may also create in them.
fn namespace_acl(oid: u32) -> Option<[&'static str; 2]> {
    match oid {
        NAMESPACE_PUBLIC => Some([
            "pg_database_owner=UC/pg_database_owner",
            "=U/pg_database_owner",
        ]),
        NAMESPACE_PG_CATALOG | NAMESPACE_INFORMATION_SCHEMA => {
            Some(["postgres=UC/postgres", "=U/postgres"])
        }
        _ => None,
    }
}

/// An object's privileges as PostgreSQL prints `aclitem[]`: `grantee=privileges/grantor`
/// (an empty grantee is PUBLIC).
pub(crate) fn acl_value(engine: &Engine, acl: &[crate::storage::acl::AclItem]) -> Value {
    let roles = engine.txn.catalog.roles();
    let role_name = |oid: u32| {
        roles
            .iter()
            .find(|r| r.oid == oid)
            .map_or_else(|| oid.to_string(), |r| r.name.clone())
    };
    let items: Vec<Value> = acl
        .iter()
        .map(|item| {
            let grantee = match item.grantee {
                crate::storage::acl::PUBLIC => String::new(),
                oid => role_name(oid),
            };
            Value::Text(format!(
                "{grantee}={}/{}",
                crate::storage::acl::letters(item.privileges),
                role_name(item.grantor)
            ))
        })
        .collect();
    Value::Array(&DataType::Text, items.into())
}

/// A role's settings as `rolconfig` and `setconfig` show them (`name=value`), or NULL.
fn role_config(settings: &[(String, String)]) -> Value {
    if settings.is_empty() {
        return Value::Null;
    }
    let items: Vec<Value> = settings
        .iter()
        .map(|(n, v)| Value::Text(format!("{n}={v}")))
        .collect();
    Value::Array(&DataType::Text, items.into())
}

fn text_array(items: [&str; 2]) -> Value {
    Value::Array(
        &DataType::Text,
        items
            .iter()
            .map(|s| Value::Text(s.to_string()))
            .collect::<Vec<_>>()
            .into(),
    )
}

pub fn namespace_by_oid(oid: u32) -> Option<&'static str> {
    NAMESPACES.iter().find(|n| n.0 == oid).map(|n| n.1)
}

/// A schema by name.
pub fn namespace_by_name(text: &str) -> Option<(u32, &'static str)> {
    let (_, bare) = split_qualified(text);
    NAMESPACES.iter().find(|n| n.1 == bare).copied()
}

/// A table's OID.
pub fn table_oid(t: &Table) -> u32 {
    id_oid(t.id)
}

/// A table's comments, as pg_description keys them: (0, the table's), then (attnum,
/// a column's) for each column that has one and is not dropped.
fn table_descriptions(def: &TableDef) -> Vec<(i32, &str)> {
    let table = def.description.as_deref().map(|d| (0, d));
    let columns = def.columns.iter().enumerate().filter_map(|(i, c)| {
        let text = c.description.as_deref().filter(|_| !c.dropped)?;
        Some((i as i32 + 1, text))
    });
    table.into_iter().chain(columns).collect()
}

/// The comment on relation `oid` (`attnum` 0) or one of its columns, as the
/// transaction `visible` describes sees it.
pub fn description(
    engine: &Engine,
    visible: &CatalogView,
    oid: u32,
    attnum: i32,
) -> Option<String> {
    let (_, def) = tables(engine, visible)
        .into_iter()
        .find(|(t, _)| table_oid(t) == oid)?;
    table_descriptions(&def)
        .into_iter()
        .find(|(n, _)| *n == attnum)
        .map(|(_, text)| text.to_string())
}

/// The OID of the object numbered `id` (a table, or a sequence CREATE SEQUENCE made).
pub(crate) fn id_oid(id: crate::storage::TableId) -> u32 {
    FIRST_TABLE_OID.wrapping_add(id.0.wrapping_mul(OIDS_PER_TABLE))
}

/// pg_roles' rows (`authid`: pg_authid's, with the password's verifier and the columns
/// in pg_authid's order): every role of the catalog, and the predefined
/// `pg_database_owner`.
fn role_rows(engine: &Engine, authid: bool) -> Vec<Vec<Value>> {
    let mut roles: Vec<crate::storage::Role> = engine
        .txn
        .catalog
        .roles()
        .iter()
        .map(|r| (**r).clone())
        .collect();
    let mut owner = crate::storage::Role::new(DATABASE_OWNER_ROLE_NAME, DATABASE_OWNER_ROLE);
    owner.inherit = true;
    roles.push(owner);
    roles.sort_by_key(|r| r.oid);
    roles
        .into_iter()
        .map(|r| {
            let until = r.valid_until_us.map_or(Value::Null, Value::TimestampTz);
            let b = Value::Bool;
            if authid {
                vec![
                    Value::Oid(r.oid),
                    name(&r.name),
                    b(r.superuser),
                    b(r.inherit),
                    b(r.create_role),
                    b(r.create_db),
                    b(r.login),
                    b(r.replication),
                    b(r.bypass_rls),
                    Value::Int4(r.connection_limit),
                    r.password.map_or(Value::Null, Value::Text),
                    until,
                ]
            } else {
                vec![
                    name(&r.name),
                    b(r.superuser),
                    b(r.inherit),
                    b(r.create_role),
                    b(r.create_db),
                    b(r.login),
                    b(r.replication),
                    Value::Int4(r.connection_limit),
                    Value::Text("********".into()),
                    until,
                    b(r.bypass_rls),
                    role_config(&r.settings),
                    Value::Oid(r.oid),
                ]
            }
        })
        .collect()
}

fn tables(engine: &Engine, visible: &CatalogView) -> Vec<(Arc<Table>, Arc<TableDef>)> {
    super::information_schema::visible_tables(engine, visible)
        .into_iter()
        .map(|t| {
            let def = visible.def(&t);
            (t, def)
        })
        .collect()
}

/// What `pg_class` lists: a relation and how it is shown.
pub struct Relation {
    pub oid: u32,
    pub name: String,
    pub namespace: u32,
    /// `relkind`: `r` table, `i` index, `S` sequence, `v` view.
    pub kind: char,
    pub natts: i16,
    pub has_index: bool,
    /// For an index, its table's definition.
    pub table: Option<Arc<TableDef>>,
    /// For an index, which.
    pub index: Option<IndexInfo>,
    /// `relchecks`: a table's CHECK constraints.
    pub checks: i16,
    /// `relhastriggers`: a table with foreign keys or referenced by one.
    pub has_triggers: bool,
    /// `reltuples`: a table's rows when ANALYZE last measured them, -1 before.
    pub tuples: f32,
}

/// An index as the catalogs show it: a primary key's or a secondary one.
#[derive(Clone, Debug)]
pub struct IndexInfo {
    pub oid: u32,
    pub name: String,
    /// Column positions in the table.
    pub columns: Vec<usize>,
    pub unique: bool,
    pub primary: bool,
    /// The constraint the index is for: its OID and `contype` (`p`, `u`).
    pub constraint: Option<(u32, char)>,
}

/// A table's indexes: its primary key's, then the secondary ones.
pub fn table_indexes(t: &Table, def: &TableDef) -> Vec<IndexInfo> {
    let oid = table_oid(t);
    let mut out = Vec::new();
    if let Some(pkey) = def
        .pkey_name
        .as_ref()
        .filter(|_| !def.primary_key.is_empty())
    {
        out.push(IndexInfo {
            oid: oid + PKEY_INDEX,
            name: pkey.clone(),
            columns: def.primary_key.clone(),
            unique: true,
            primary: true,
            constraint: Some((oid + PKEY_CONSTRAINT, 'p')),
        });
    }
    for index in &def.indexes {
        let index_oid = oid + FIRST_INDEX + 2 * index.number;
        out.push(IndexInfo {
            oid: index_oid,
            name: index.name.clone(),
            columns: index.columns.clone(),
            unique: index.unique,
            primary: false,
            constraint: index.constraint.then_some((index_oid + 1, 'u')),
        });
    }
    out
}

fn int2_array(values: impl Iterator<Item = i16>) -> Value {
    Value::Array(
        &DataType::Int2,
        values.map(Value::Int2).collect::<Vec<_>>().into(),
    )
}

fn int2_vector(values: impl Iterator<Item = i16>) -> Value {
    crate::types::vector_value(&crate::types::INT2VECTOR, values.map(Value::Int2).collect())
}

fn oid_vector(values: impl Iterator<Item = u32>) -> Value {
    crate::types::vector_value(&crate::types::OIDVECTOR, values.map(Value::Oid).collect())
}

/// A `pg_index` row.
fn index_row(t: &Table, def: &TableDef, index: &IndexInfo) -> Vec<Value> {
    let n = Value::Int2(index.columns.len() as i16);
    let f = Value::Bool(false);
    let tr = Value::Bool(true);
    vec![
        Value::Oid(index.oid),
        Value::Oid(table_oid(t)),
        n.clone(),
        n,
        Value::Bool(index.unique),
        f.clone(),
        Value::Bool(index.primary),
        f.clone(),
        tr.clone(),
        f.clone(),
        tr.clone(),
        f.clone(),
        tr.clone(),
        tr,
        f,
        Value::Null,
        Value::Null,
        int2_vector(index.columns.iter().map(|&i| i as i16 + 1)),
        oid_vector(
            index
                .columns
                .iter()
                .map(|&i| collation_of(def.columns[i].data_type)),
        ),
        oid_vector(
            index
                .columns
                .iter()
                .map(|&i| opclass_of(def.columns[i].data_type)),
        ),
        int2_vector(index.columns.iter().map(|_| 0)),
    ]
}

/// A `pg_constraint` row for CHECK constraint `k` of a table.
fn check_row(t: &Table, k: usize, check: &CheckDef) -> Vec<Value> {
    let f = Value::Bool(false);
    let tr = Value::Bool(true);
    let blank = || char_value(' ');
    vec![
        Value::Oid(table_oid(t) + FIRST_CHECK + k as u32),
        name(&check.name),
        Value::Oid(NAMESPACE_PUBLIC),
        char_value('c'),
        f.clone(),
        f.clone(),
        Value::Bool(check.validated),
        Value::Oid(table_oid(t)),
        Value::Oid(0),
        Value::Oid(0),
        Value::Oid(0),
        Value::Oid(0),
        blank(),
        blank(),
        blank(),
        tr.clone(),
        Value::Int4(0),
        f,
        Value::Null,
        Value::Null,
        Value::Null,
    ]
}

/// The index that enforces the uniqueness a foreign key relies on: the referenced
/// table's primary key index, or the unique index on exactly the referenced columns.
fn referenced_index(parent: &Table, def: &TableDef, fk: &ForeignKeyDef) -> Option<IndexInfo> {
    table_indexes(parent, def).into_iter().find(|i| {
        i.unique && i.columns.len() == fk.referenced_columns.len() && {
            let mut a = i.columns.clone();
            let mut b = fk.referenced_columns.clone();
            a.sort_unstable();
            b.sort_unstable();
            a == b
        }
    })
}

/// A `pg_constraint` row for foreign key `k` of table `t` (None while the table it
/// references is not to be seen).
fn foreign_key_row(engine: &Engine, t: &Table, k: usize, fk: &ForeignKeyDef) -> Option<Vec<Value>> {
    let parent = engine.txn.catalog.table_by_id(fk.referenced)?;
    let parent_def = parent.def();
    let index_oid = referenced_index(&parent, &parent_def, fk).map_or(0, |i| i.oid);
    let tr = Value::Bool(true);
    Some(vec![
        Value::Oid(table_oid(t) + FIRST_FOREIGN_KEY + k as u32),
        name(&fk.name),
        Value::Oid(NAMESPACE_PUBLIC),
        char_value('f'),
        Value::Bool(fk.deferrable),
        Value::Bool(fk.initially_deferred),
        Value::Bool(fk.validated),
        Value::Oid(table_oid(t)),
        Value::Oid(0),
        Value::Oid(index_oid),
        Value::Oid(0),
        Value::Oid(table_oid(&parent)),
        char_value(fk.on_update.code()),
        char_value(fk.on_delete.code()),
        char_value(if fk.match_full { 'f' } else { 's' }),
        tr.clone(),
        Value::Int4(0),
        tr,
        Value::Null,
        int2_array(fk.columns.iter().map(|&i| i as i16 + 1)),
        int2_array(fk.referenced_columns.iter().map(|&i| i as i16 + 1)),
    ])
}

/// `pg_get_constraintdef` of a foreign key: PostgreSQL's text.
pub fn foreign_key_definition(
    engine: &Engine,
    def: &TableDef,
    fk: &ForeignKeyDef,
    qualify: bool,
) -> Option<String> {
    let parent = engine.txn.catalog.table_by_id(fk.referenced)?;
    let parent_def = parent.def();
    let schema = if qualify { "public." } else { "" };
    let mut text = format!(
        "FOREIGN KEY ({}) REFERENCES {schema}{}({})",
        column_list(def, &fk.columns),
        quote_ident(&parent_def.name),
        column_list(&parent_def, &fk.referenced_columns)
    );
    if fk.match_full {
        text.push_str(" MATCH FULL");
    }
    if fk.on_update != FkAction::NoAction {
        text.push_str(&format!(" ON UPDATE {}", fk.on_update.sql()));
    }
    if fk.on_delete != FkAction::NoAction {
        text.push_str(&format!(" ON DELETE {}", fk.on_delete.sql()));
    }
    if fk.deferrable {
        text.push_str(" DEFERRABLE");
    }
    if fk.initially_deferred {
        text.push_str(" INITIALLY DEFERRED");
    }
    if !fk.validated {
        text.push_str(" NOT VALID");
    }
    Some(text)
}

/// A `pg_constraint` row, for an index made by a constraint.
fn constraint_row(t: &Table, index: &IndexInfo) -> Vec<Value> {
    let f = Value::Bool(false);
    let tr = Value::Bool(true);
    let blank = || char_value(' ');
    let (oid, kind) = index.constraint.unwrap_or((0, 'p'));
    vec![
        Value::Oid(oid),
        name(&index.name),
        Value::Oid(NAMESPACE_PUBLIC),
        char_value(kind),
        f.clone(),
        f.clone(),
        tr.clone(),
        Value::Oid(table_oid(t)),
        Value::Oid(0),
        Value::Oid(index.oid),
        Value::Oid(0),
        Value::Oid(0),
        blank(),
        blank(),
        blank(),
        tr.clone(),
        Value::Int4(0),
        tr,
        Value::Null,
        int2_array(index.columns.iter().map(|&i| i as i16 + 1)),
        Value::Null,
    ]
}

/// Every relation the scanning transaction sees: the catalogs, then each table with its
/// primary key index and sequences.
pub fn relations(engine: &Engine, visible: &CatalogView) -> Vec<Relation> {
    let mut out: Vec<Relation> = CATALOGS
        .iter()
        .map(|(c, n, o, is_table)| Relation {
            oid: *o,
            name: n.to_string(),
            namespace: NAMESPACE_PG_CATALOG,
            kind: if *is_table { 'r' } else { 'v' },
            natts: c.def().columns.len() as i16,
            has_index: false,
            table: None,
            index: None,
            checks: 0,
            has_triggers: false,
            tuples: -1.0,
        })
        .collect();
    let tables = tables(engine, visible);
    let referenced: Vec<crate::storage::TableId> = tables
        .iter()
        .flat_map(|(_, def)| def.foreign_keys.iter().map(|fk| fk.referenced))
        .collect();
    for (t, def) in tables {
        let oid = table_oid(&t);
        out.push(Relation {
            oid,
            name: def.name.clone(),
            namespace: NAMESPACE_PUBLIC,
            kind: 'r',
            natts: def.columns.len() as i16,
            has_index: !def.primary_key.is_empty() || !def.indexes.is_empty(),
            table: None,
            index: None,
            checks: def.checks.len() as i16,
            has_triggers: !def.foreign_keys.is_empty() || referenced.contains(&t.id),
            tuples: t.stats().map_or(-1.0, |s| s.rows as f32),
        });
        for index in table_indexes(&t, &def) {
            out.push(Relation {
                oid: index.oid,
                name: index.name.clone(),
                namespace: NAMESPACE_PUBLIC,
                kind: 'i',
                natts: index.columns.len() as i16,
                has_index: false,
                table: Some(def.clone()),
                index: Some(index),
                checks: 0,
                has_triggers: false,
                tuples: -1.0,
            });
        }
    }
    for view in visible_views(engine, visible) {
        out.push(Relation {
            oid: id_oid(view.id),
            name: view.name.clone(),
            namespace: NAMESPACE_PUBLIC,
            kind: 'v',
            natts: view.columns.len() as i16,
            has_index: false,
            table: None,
            index: None,
            checks: 0,
            has_triggers: false,
            tuples: -1.0,
        });
    }
    for seq in sequence_entries(engine, visible) {
        out.push(Relation {
            oid: seq.oid,
            name: seq.name,
            namespace: NAMESPACE_PUBLIC,
            kind: 'S',
            natts: 3,
            has_index: false,
            table: None,
            index: None,
            checks: 0,
            has_triggers: false,
            tuples: -1.0,
        });
    }
    out
}

/// The relation of an OID.
pub fn relation_by_oid(engine: &Engine, oid: u32) -> Option<Relation> {
    relation_seen_by_oid(engine, &CatalogView::confirmed(engine), oid)
}

/// The relation with this OID, if `visible` sees it.
pub fn relation_seen_by_oid(engine: &Engine, visible: &CatalogView, oid: u32) -> Option<Relation> {
    relations(engine, visible)
        .into_iter()
        .find(|r| r.oid == oid)
}

/// What a size function measures of a relation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizeOf {
    /// `pg_relation_size`, `pg_table_size`: its own pages.
    Relation,
    /// `pg_indexes_size`: its indexes' pages.
    Indexes,
    /// `pg_total_relation_size`: both.
    Total,
}

/// The bytes `what` measures of relation `oid`; None for no such relation. A table's
/// primary key is its own tree (its index relation has no pages of its own); a
/// sequence has one page, a view none.
pub fn relation_size(engine: &Engine, oid: u32, what: SizeOf) -> crate::error::Result<Option<u64>> {
    let Some(r) = relation_by_oid(engine, oid) else {
        return Ok(None);
    };
    let visible = CatalogView::confirmed(engine);
    let own = match r.kind {
        'S' => crate::storage::page::PAGE_BYTES as u64,
        'v' => 0,
        'i' => {
            let (Some(def), Some(index)) = (&r.table, &r.index) else {
                return Ok(Some(0));
            };
            let table = tables(engine, &visible)
                .into_iter()
                .find(|(_, d)| d.name == def.name)
                .map(|(t, _)| t);
            match (table, index.constraint.map(|c| c.1)) {
                (_, Some('p')) | (None, _) => 0,
                (Some(t), _) => t.index_size_bytes(&r.name)?.unwrap_or(0),
            }
        }
        _ => {
            let Some((t, _)) = tables(engine, &visible)
                .into_iter()
                .find(|(t, _)| table_oid(t) == oid)
            else {
                return Ok(Some(0));
            };
            return Ok(Some(match what {
                SizeOf::Relation => t.size_bytes()?,
                SizeOf::Indexes => t.indexes_size_bytes()?,
                SizeOf::Total => t.size_bytes()? + t.indexes_size_bytes()?,
            }));
        }
    };
    Ok(Some(match what {
        SizeOf::Indexes => 0,
        SizeOf::Relation | SizeOf::Total => own,
    }))
}

/// The bytes of every table and index (`pg_database_size`).
pub fn database_size(engine: &Engine) -> crate::error::Result<u64> {
    let visible = CatalogView::confirmed(engine);
    let mut total = 0;
    for (t, _) in tables(engine, &visible) {
        total += t.size_bytes()? + t.indexes_size_bytes()?;
    }
    Ok(total)
}

/// The relation of a name (`public.` or `pg_catalog.` may qualify it).
pub fn relation_by_name(engine: &Engine, text: &str) -> Option<Relation> {
    let (schema, bare) = split_qualified(text);
    relations(engine, &CatalogView::confirmed(engine))
        .into_iter()
        .find(|r| {
            r.name == bare
                && match schema.as_deref() {
                    None => true,
                    Some("public") => r.namespace == NAMESPACE_PUBLIC,
                    Some("pg_catalog") => r.namespace == NAMESPACE_PG_CATALOG,
                    Some(_) => false,
                }
        })
}

/// `schema.name` or `name`, with double quotes removed and unquoted parts lower-cased.
fn split_qualified(text: &str) -> (Option<String>, String) {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    let mut chars = text.trim().chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                current.push('"');
            }
            '"' => quoted = !quoted,
            '.' if !quoted => parts.push(std::mem::take(&mut current)),
            c if quoted => current.push(c),
            c => current.extend(c.to_lowercase()),
        }
    }
    parts.push(current);
    match parts.len() {
        1 => (None, parts.pop().unwrap_or_default()),
        _ => {
            let bare = parts.pop().unwrap_or_default();
            (parts.pop(), bare)
        }
    }
}

fn class_row(r: &Relation) -> Vec<Value> {
    let f = Value::Bool(false);
    let am = match r.kind {
        'r' => HEAP_AM,
        'i' => BTREE_AM,
        _ => 0,
    };
    vec![
        Value::Oid(r.oid),
        name(&r.name),
        Value::Oid(r.namespace),
        Value::Oid(0),
        Value::Oid(0),
        Value::Oid(BOOTSTRAP_ROLE),
        Value::Oid(am),
        Value::Oid(if r.kind == 'v' { 0 } else { r.oid }),
        Value::Oid(0),
        Value::Int4(0),
        Value::Float4(r.tuples),
        Value::Int4(0),
        Value::Oid(0),
        Value::Bool(r.has_index),
        f.clone(),
        char_value('p'),
        char_value(r.kind),
        Value::Int2(r.natts),
        Value::Int2(r.checks),
        f.clone(),
        Value::Bool(r.has_triggers),
        f.clone(),
        f.clone(),
        f.clone(),
        Value::Bool(true),
        char_value(if r.kind == 'r' { 'd' } else { 'n' }),
        f,
        Value::Oid(0),
        Value::Null,
        Value::Null,
        Value::Null,
    ]
}

/// One `pg_attribute` row.
fn attribute_row(
    rel: u32,
    attname: &str,
    num: usize,
    t: DataType,
    not_null: bool,
    has_def: bool,
) -> Vec<Value> {
    let builtin = type_of(t);
    let f = Value::Bool(false);
    vec![
        Value::Oid(rel),
        name(attname),
        Value::Oid(t.oid()),
        Value::Int4(-1),
        Value::Int2(t.typlen()),
        Value::Int2(num as i16),
        Value::Int4(0),
        Value::Int4(-1),
        Value::Int4(t.typmod()),
        Value::Bool(builtin.is_some_and(|b| b.by_value)),
        char_value(builtin.map_or('i', |b| b.align.chars().next().unwrap_or('i'))),
        char_value(match t {
            // numeric is stored compressed in place, never out of line: `main`.
            DataType::Numeric(_) => 'm',
            t if t.typlen() == -1 => 'x',
            _ => 'p',
        }),
        Value::Text(String::new()),
        Value::Bool(not_null),
        Value::Bool(has_def),
        f.clone(),
        Value::Text(String::new()),
        Value::Text(String::new()),
        f,
        Value::Bool(true),
        Value::Int4(0),
        Value::Oid(collation_of(t)),
    ]
}

/// `pg_get_viewdef(oid)`: a view's query as it was written.
/// `pg_get_viewdef`: the view's query as written; with `qualify` (schema public is not
/// on the search path, as under pg_dump) the tables and views it reads are named
/// `public.x`, so that the definition means the same wherever it is run.
pub fn view_definition(engine: &Engine, oid: u32, qualify: bool) -> Option<String> {
    let view = engine
        .txn
        .catalog
        .views()
        .into_iter()
        .find(|v| id_oid(v.id) == oid)?;
    if qualify {
        if let Some(q) = qualified_query(engine, &view.query) {
            return Some(format!(" {q};"));
        }
    }
    Some(format!(" {};", view.query))
}

/// `query` with its relations in schema public named so (not the names of its WITH
/// queries, nor table functions); None if it does not parse as a query.
fn qualified_query(engine: &Engine, query: &str) -> Option<String> {
    use sqlparser::ast::{self, Visit, Visitor};
    use std::ops::ControlFlow;

    struct WithNames(Vec<String>);
    impl Visitor for WithNames {
        type Break = ();
        fn pre_visit_query(&mut self, q: &ast::Query) -> ControlFlow<()> {
            if let Some(with) = &q.with {
                for cte in &with.cte_tables {
                    self.0.push(super::bind::ident_name(&cte.alias.name));
                }
            }
            ControlFlow::Continue(())
        }
    }

    let super::parser::Statement::Ast(parsed) = super::parser::parse_statement(query).ok()? else {
        return None;
    };
    let ast::Statement::Query(mut q) = *parsed else {
        return None;
    };
    let mut with_names = WithNames(Vec::new());
    let _ = q.visit(&mut with_names);
    let catalog = &engine.txn.catalog;
    let _ = ast::visit_relations_mut(&mut q, |name: &mut ast::ObjectName| {
        if let [ast::ObjectNamePart::Identifier(id)] = name.0.as_slice() {
            let n = super::bind::ident_name(id);
            let relation = catalog.table(&n).is_some() || catalog.view(&n).is_some();
            if relation && !with_names.0.contains(&n) {
                name.0.insert(
                    0,
                    ast::ObjectNamePart::Identifier(ast::Ident::new("public")),
                );
            }
        }
        ControlFlow::<()>::Continue(())
    });
    Some(q.to_string())
}

/// The views `visible` sees.
pub fn visible_views(engine: &Engine, visible: &CatalogView) -> Vec<Arc<crate::storage::View>> {
    let mut views = engine.txn.catalog.views();
    views.retain(|v| visible.sees_id(v.id));
    views
}

fn attributes(engine: &Engine, visible: &CatalogView) -> Vec<Vec<Value>> {
    let mut rows = Vec::new();
    for view in visible_views(engine, visible) {
        for (i, (n, t)) in view.columns.iter().enumerate() {
            rows.push(attribute_row(id_oid(view.id), n, i + 1, *t, false, false));
        }
    }
    for (t, def) in tables(engine, visible) {
        let oid = table_oid(&t);
        for (i, c) in def.columns.iter().enumerate() {
            let mut row = attribute_row(
                oid,
                &c.name,
                i + 1,
                c.data_type,
                c.not_null,
                c.default.is_some(),
            );
            if c.dropped {
                // As PostgreSQL shows one: no type, `attisdropped`.
                row[2] = Value::Oid(0);
                row[18] = Value::Bool(true);
            }
            if c.identity {
                // `attidentity` 'd'; its default is the identity's, not an attrdef.
                row[14] = Value::Bool(false);
                row[16] = char_value('d');
            }
            rows.push(row);
        }
        for index in table_indexes(&t, &def) {
            for (k, &i) in index.columns.iter().enumerate() {
                let c = &def.columns[i];
                rows.push(attribute_row(
                    index.oid,
                    &c.name,
                    k + 1,
                    c.data_type,
                    false,
                    false,
                ));
            }
        }
    }
    rows
}

/// The default btree operator class of a key column's type.
fn opclass_of(t: DataType) -> u32 {
    let type_oid = match t {
        DataType::Varchar(_) => oid::TEXT,
        t => t.oid(),
    };
    OPCLASSES
        .iter()
        .find(|(_, _, t)| *t == type_oid)
        .map_or(0, |(o, _, _)| *o)
}

fn collation_of(t: DataType) -> u32 {
    match t {
        DataType::Text | DataType::Varchar(_) | DataType::Char(_) => DEFAULT_COLLATION,
        DataType::Name => 950,
        _ => 0,
    }
}

fn type_of(t: DataType) -> Option<&'static BuiltinType> {
    TYPES.iter().find(|b| b.oid == t.oid())
}

fn type_row(b: &BuiltinType) -> Vec<Value> {
    let f = Value::Bool(false);
    vec![
        Value::Oid(b.oid),
        name(b.name),
        Value::Oid(NAMESPACE_PG_CATALOG),
        Value::Oid(BOOTSTRAP_ROLE),
        Value::Int2(b.len),
        Value::Bool(b.by_value),
        char_value(if matches!(b.oid, oid::UNKNOWN | oid::VOID) {
            'p'
        } else {
            'b'
        }),
        Value::Text(b.category.into()),
        Value::Bool(matches!(b.oid, 16 | 25 | 701 | 1184 | 26)),
        Value::Bool(true),
        char_value(','),
        Value::Oid(0),
        // A vector's elements.
        Value::Oid(match b.data_type {
            t if t.is_vector() => t.element().map_or(0, |e| e.oid()),
            _ => 0,
        }),
        Value::Oid(b.array),
        Value::Text(b.align.into()),
        char_value(match (b.len, b.oid) {
            (_, 1700) => 'm',
            (-1, _) => 'x',
            _ => 'p',
        }),
        f,
        Value::Oid(0),
        Value::Int4(-1),
        Value::Int4(0),
        Value::Oid(collation_of(b.data_type)),
        Value::Null,
    ]
}

/// Whether a collation of that OID exists (all are in `pg_catalog`, so visible).
pub fn collation_exists(oid: u32) -> bool {
    matches!(oid, DEFAULT_COLLATION | 950 | 951)
}

/// The `pg_type` row of a built-in type's array type, if arrays of it are supported.
fn array_type_row(b: &BuiltinType) -> Option<Vec<Value>> {
    let array = crate::types::array_of(b.data_type)?;
    let mut row = type_row(b);
    row[0] = Value::Oid(array.oid());
    row[1] = name(&format!("_{}", b.name));
    row[4] = Value::Int2(-1);
    row[5] = Value::Bool(false);
    row[7] = Value::Text("A".into());
    row[8] = Value::Bool(false);
    row[12] = Value::Oid(b.oid);
    row[13] = Value::Oid(0);
    row[15] = char_value('x');
    Some(row)
}

/// A type by OID.
pub fn type_by_oid(oid: u32) -> Option<DataType> {
    TYPES
        .iter()
        .find(|b| b.oid == oid)
        .map(|b| b.data_type)
        .or_else(|| crate::types::array_type_of_oid(oid))
}

/// `format_type(oid, typmod)`: the SQL name of a type, with its modifier.
pub fn format_type(type_oid: u32, typmod: Option<i32>) -> String {
    if let Some(DataType::Array(e)) = crate::types::array_type_of_oid(type_oid) {
        return format!("{}[]", format_type(e.oid(), typmod));
    }
    let Some(b) = TYPES.iter().find(|b| b.oid == type_oid) else {
        return "???".into();
    };
    let m = typmod.filter(|m| *m >= 0);
    match (b.data_type, m) {
        (DataType::Varchar(_), Some(m)) => format!("character varying({})", m - 4),
        (DataType::Char(_), Some(m)) => format!("character({})", m - 4),
        (DataType::Char(_), None) => "bpchar".into(),
        (DataType::Numeric(_), Some(m)) => {
            let m = m - 4;
            format!("numeric({},{})", (m >> 16) & 0xffff, m & 0xffff)
        }
        (DataType::Unknown, _) => "unknown".into(),
        (t, _) => t.without_typmod().name(),
    }
}

/// A column default as `pg_get_expr` shows it: PostgreSQL's deparsed form for the forms
/// SteadyDB stores (a literal gets a cast to the column's type where PostgreSQL adds one),
/// the stored text otherwise.
fn default_expression(stored: &str, t: DataType) -> String {
    let s = stored.trim();
    if let Some(seq) = s
        .strip_prefix("nextval('")
        .and_then(|r| r.strip_suffix("')"))
    {
        return format!("nextval('{seq}'::regclass)");
    }
    if s.starts_with('\'') && s.ends_with('\'') && s.len() >= 2 {
        return match t {
            DataType::Text => s.to_string(),
            t => format!("{s}::{}", format_type(t.oid(), None)),
        };
    }
    if let Some(digits) = s.strip_prefix('-') {
        if !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit() || c == '.') {
            return format!("'{s}'::{}", format_type(t.oid(), None));
        }
    }
    match s.to_ascii_lowercase().as_str() {
        "current_timestamp" => "CURRENT_TIMESTAMP".into(),
        "now()" => "now()".into(),
        "true" | "false" => s.to_ascii_lowercase(),
        _ => s.to_string(),
    }
}

/// `pg_get_indexdef(oid[, column])`: the statement that would create the index, or
/// (`column` > 0) that index column.
pub fn index_definition(engine: &Engine, index_oid: u32, column: i64) -> Option<String> {
    let r = relation_by_oid(engine, index_oid)?;
    let def = r.table?;
    let index = r.index?;
    if column > 0 {
        let i = *index.columns.get(usize::try_from(column - 1).ok()?)?;
        return Some(quote_ident(&def.columns[i].name));
    }
    let opclasses = def
        .indexes
        .iter()
        .find(|i| i.name == index.name)
        .map(|i| i.opclasses.clone())
        .unwrap_or_default();
    let columns: Vec<String> = index
        .columns
        .iter()
        .enumerate()
        .map(
            |(k, &i)| match opclasses.get(k).and_then(|o| o.as_deref()) {
                Some(opclass) => format!("{} {opclass}", quote_ident(&def.columns[i].name)),
                None => quote_ident(&def.columns[i].name),
            },
        )
        .collect();
    Some(format!(
        "CREATE {}INDEX {} ON public.{} USING btree ({})",
        if index.unique { "UNIQUE " } else { "" },
        quote_ident(&r.name),
        quote_ident(&def.name),
        columns.join(", ")
    ))
}

fn column_list(def: &TableDef, columns: &[usize]) -> String {
    columns
        .iter()
        .map(|&i| quote_ident(&def.columns[i].name))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `pg_get_constraintdef(oid[, pretty])` for a primary key, unique or check constraint.
/// `pg_get_constraintdef`; with `qualify`, a referenced table is named with its schema
/// (it is not on the search path).
pub fn constraint_definition(
    engine: &Engine,
    constraint_oid: u32,
    pretty: bool,
    qualify: bool,
) -> Option<String> {
    let visible = CatalogView::confirmed(engine);
    for (t, def) in tables(engine, &visible) {
        let first = table_oid(&t) + FIRST_CHECK;
        if (first..first + def.checks.len() as u32).contains(&constraint_oid) {
            let check = &def.checks[(constraint_oid - first) as usize];
            let not_valid = if check.validated { "" } else { " NOT VALID" };
            return Some(if pretty {
                format!("CHECK ({}){not_valid}", check.expr)
            } else {
                format!("CHECK (({})){not_valid}", check.expr)
            });
        }
        let first = table_oid(&t) + FIRST_FOREIGN_KEY;
        if (first..first + def.foreign_keys.len() as u32).contains(&constraint_oid) {
            let fk = &def.foreign_keys[(constraint_oid - first) as usize];
            return foreign_key_definition(engine, &def, fk, qualify);
        }
    }
    let r = relations(engine, &CatalogView::confirmed(engine))
        .into_iter()
        .find(|r| {
            r.index
                .as_ref()
                .is_some_and(|i| i.constraint.is_some_and(|(oid, _)| oid == constraint_oid))
        })?;
    let def = r.table?;
    let index = r.index?;
    let columns = column_list(&def, &index.columns);
    Some(match index.constraint?.1 {
        'p' => format!("PRIMARY KEY ({columns})"),
        _ => format!("UNIQUE ({columns})"),
    })
}

/// `pg_get_serial_sequence(table, column)`: the sequence a serial column's default draws
/// from, qualified.
pub fn serial_sequence(engine: &Engine, table: &str, column: &str) -> Option<String> {
    let r = relation_by_name(engine, table)?;
    let t = engine.txn.catalog.table(&r.name)?;
    let def = t.def();
    let column = split_qualified(column).1;
    let c = def.columns.iter().find(|c| c.name == column)?;
    let d = c.default.as_deref()?;
    let seq = d.strip_prefix("nextval('")?.strip_suffix("')")?;
    Some(format!("public.{}", quote_ident(seq)))
}

/// An identifier as PostgreSQL's `quote_ident` writes it.
pub fn quote_ident(s: &str) -> String {
    let plain = s
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !super::bind::is_reserved(s);
    if plain {
        s.to_string()
    } else {
        format!("\"{}\"", s.replace('"', "\"\""))
    }
}

/// The type a name (as `::regtype` reads it) denotes.
pub fn type_by_name(text: &str) -> Option<DataType> {
    let (_, bare) = split_qualified(text);
    let bare = bare.trim();
    if let Some(b) = TYPES.iter().find(|b| b.name == bare) {
        return Some(b.data_type);
    }
    let sql = format!("SELECT NULL::{bare}");
    let ast = sqlparser::parser::Parser::parse_sql(&sqlparser::dialect::PostgreSqlDialect {}, &sql)
        .ok()?;
    let sqlparser::ast::Statement::Query(q) = ast.first()? else {
        return None;
    };
    let sqlparser::ast::SetExpr::Select(s) = q.body.as_ref() else {
        return None;
    };
    match s.projection.first()? {
        sqlparser::ast::SelectItem::UnnamedExpr(sqlparser::ast::Expr::Cast {
            data_type, ..
        }) => super::bind::data_type(data_type).ok().map(|(t, _)| t),
        _ => None,
    }
}

/// The name `regtype` shows for a type.
pub fn type_display_name(t: DataType) -> String {
    match t {
        DataType::Char(_) => "character".into(),
        DataType::Unknown => "unknown".into(),
        t => t.without_typmod().name(),
    }
}

fn settings_row(d: &crate::settings::Def, settings: &dyn Fn(&str) -> Option<String>) -> Vec<Value> {
    use crate::settings::{Context, Kind, Unit};
    let shown = settings(d.name).unwrap_or_default();
    let text = |s: &str| Value::Text(s.to_string());
    let (setting, unit, vartype, min, max) = match d.kind {
        Kind::Bool => (shown.clone(), None, "bool", None, None),
        Kind::Int { min, max, unit } => {
            let (setting, unit) = match unit {
                Unit::Kb => (
                    crate::settings::kilobytes(&shown).map_or(shown.clone(), |k| k.to_string()),
                    Some("kB"),
                ),
                Unit::Ms => (
                    crate::settings::millis(&shown).map_or(shown.clone(), |m| m.to_string()),
                    Some("ms"),
                ),
                Unit::S => (
                    crate::settings::millis(&shown)
                        .map_or(shown.clone(), |m| (m / 1000).to_string()),
                    Some("s"),
                ),
                Unit::None | Unit::Octal => (shown.clone(), None),
            };
            (
                setting,
                unit,
                "integer",
                Some(min.to_string()),
                Some(max.to_string()),
            )
        }
        Kind::Real { min, max } => (
            shown.clone(),
            None,
            "real",
            Some(min.to_string()),
            Some(max.to_string()),
        ),
        Kind::Enum(_) => (shown.clone(), None, "enum", None, None),
        Kind::Str => (shown.clone(), None, "string", None, None),
    };
    let context = match d.context {
        Context::Internal => "internal",
        Context::Postmaster => "postmaster",
        Context::Sighup => "sighup",
        Context::User => "user",
    };
    let opt = |v: Option<String>| v.map_or(Value::Null, Value::Text);
    vec![
        text(d.name),
        Value::Text(setting.clone()),
        opt(unit.map(str::to_string)),
        Value::Null,
        text(d.description),
        Value::Null,
        text(context),
        text(vartype),
        text(if shown == d.default {
            "default"
        } else {
            "session"
        }),
        opt(min),
        opt(max),
        text(d.default),
        Value::Text(setting),
        Value::Null,
        Value::Null,
        Value::Bool(false),
    ]
}

/// pg_timezone_names: each zone of the database with its abbreviation, offset and
/// whether daylight-saving time is in force, now.
fn timezone_names() -> Vec<Vec<Value>> {
    use crate::types::zone::Zone;
    let now = crate::types::now_us();
    chrono_tz::TZ_VARIANTS
        .iter()
        .map(|tz| {
            let zone = Zone::Named(*tz);
            let offset_secs = zone.offset_at(now);
            vec![
                Value::Text(tz.name().to_string()),
                Value::Text(zone.abbrev_at(now)),
                Value::Interval(crate::types::Interval {
                    months: 0,
                    days: 0,
                    micros: i64::from(offset_secs) * 1_000_000,
                }),
                Value::Bool(zone.is_dst_at(now)),
            ]
        })
        .collect()
}
