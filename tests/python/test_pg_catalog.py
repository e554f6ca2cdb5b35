"""pg_catalog: psql's describe commands print what PostgreSQL 15 prints for the same
schema, and the catalog queries drivers run (psycopg's TypeInfo, pgx's regtype lookup,
format_type, regclass casts, serial sequences) answer as PostgreSQL's do. The expected
outputs were taken from PostgreSQL 15 and hold there too."""

from __future__ import annotations

import psycopg
import pytest
from psycopg.types import TypeInfo

from conftest import module_tables, run_steps

SETUP = [
    "create table pgc_items (id serial primary key, name varchar(20) not null default 'x',"
    " price numeric(8,2), created timestamptz default now())",
    "create table pgc_tags (item_id int, tag text, primary key (item_id, tag))",
    "create table pgc_log (at timestamptz, msg text)",
]

DESCRIBE = {
    r"\dt pgc_*": """\
           List of relations
 Schema |   Name    | Type  |  Owner   
--------+-----------+-------+----------
 public | pgc_items | table | postgres
 public | pgc_log   | table | postgres
 public | pgc_tags  | table | postgres
(3 rows)

""",
    r"\di pgc_*": """\
                   List of relations
 Schema |      Name      | Type  |  Owner   |   Table   
--------+----------------+-------+----------+-----------
 public | pgc_items_pkey | index | postgres | pgc_items
 public | pgc_tags_pkey  | index | postgres | pgc_tags
(2 rows)

""",
    r"\ds pgc_*": """\
                List of relations
 Schema |       Name       |   Type   |  Owner   
--------+------------------+----------+----------
 public | pgc_items_id_seq | sequence | postgres
(1 row)

""",
    r"\d pgc_*": """\
                                     Table "public.pgc_items"
 Column  |           Type           | Collation | Nullable |                Default                
---------+--------------------------+-----------+----------+---------------------------------------
 id      | integer                  |           | not null | nextval('pgc_items_id_seq'::regclass)
 name    | character varying(20)    |           | not null | 'x'::character varying
 price   | numeric(8,2)             |           |          | 
 created | timestamp with time zone |           |          | now()
Indexes:
    "pgc_items_pkey" PRIMARY KEY, btree (id)

                  Sequence "public.pgc_items_id_seq"
  Type   | Start | Minimum |  Maximum   | Increment | Cycles? | Cache 
---------+-------+---------+------------+-----------+---------+-------
 integer |     1 |       1 | 2147483647 |         1 | no      |     1
Owned by: public.pgc_items.id

    Index "public.pgc_items_pkey"
 Column |  Type   | Key? | Definition 
--------+---------+------+------------
 id     | integer | yes  | id
primary key, btree, for table "public.pgc_items"

                       Table "public.pgc_log"
 Column |           Type           | Collation | Nullable | Default 
--------+--------------------------+-----------+----------+---------
 at     | timestamp with time zone |           |          | 
 msg    | text                     |           |          | 

              Table "public.pgc_tags"
 Column  |  Type   | Collation | Nullable | Default 
---------+---------+-----------+----------+---------
 item_id | integer |           | not null | 
 tag     | text    |           | not null | 
Indexes:
    "pgc_tags_pkey" PRIMARY KEY, btree (item_id, tag)

     Index "public.pgc_tags_pkey"
 Column  |  Type   | Key? | Definition 
---------+---------+------+------------
 item_id | integer | yes  | item_id
 tag     | text    | yes  | tag
primary key, btree, for table "public.pgc_tags"

""",
    r"\du": """\
                                   List of roles
 Role name |                         Attributes                         | Member of 
-----------+------------------------------------------------------------+-----------
 postgres  | Superuser, Create role, Create DB, Replication, Bypass RLS | {}

""",
    r"\dn": """\
      List of schemas
  Name  |       Owner       
--------+-------------------
 public | pg_database_owner
(1 row)

""",
}

QUERIES = [
    ("select 'int4'::text::regtype::oid", [(23,)]),
    ("select 'pgc_items'::regclass::text, 'pgc_items_pkey'::regclass::text", [("pgc_items", "pgc_items_pkey")]),
    ("select 'pg_class'::regclass::oid, 'pg_catalog.pg_type'::regclass::oid", [(1259, 1247)]),
    ("select to_regclass('nosuch'), to_regtype('nosuch')", [(None, None)]),
    ("select 'character varying'::regtype::text, 'int8'::regtype::text, 1184::regtype::text",
     [("character varying", "bigint", "timestamp with time zone")]),
    ("select format_type(1043, 24), format_type(1700, 327686), format_type(23, null),"
     " format_type(1042, -1), format_type(1042, 5), format_type(99999, null)",
     [("character varying(20)", "numeric(5,2)", "integer", "bpchar", "character(1)", "???")]),
    ("select 'abc' ~ '^a', 'abc' !~ 'b$', 'ABC' ~* 'abc', 'ABC' !~* 'x'", [(True, True, True, True)]),
    ("select 'abc' operator(pg_catalog.~) '^(abc)$' collate pg_catalog.default", [(True,)]),
    ("select 'b' < 'a' collate \"C\", 'B' < 'a' collate \"C\"", [(False, True)]),
    ("select pg_get_serial_sequence('pgc_items', 'id'), pg_get_serial_sequence('pgc_items', 'name')",
     [("public.pgc_items_id_seq", None)]),
    ("select relname, relkind, relnatts from pg_class where relname like 'pgc%' order by 1",
     [("pgc_items", "r", 4), ("pgc_items_id_seq", "S", 3), ("pgc_items_pkey", "i", 1),
      ("pgc_log", "r", 2), ("pgc_tags", "r", 2), ("pgc_tags_pkey", "i", 2)]),
    ("select attname, format_type(atttypid, atttypmod), attnotnull, atthasdef, attnum"
     " from pg_attribute where attrelid = 'pgc_items'::regclass and attnum > 0 order by attnum",
     [("id", "integer", True, True, 1), ("name", "character varying(20)", True, True, 2),
      ("price", "numeric(8,2)", False, False, 3), ("created", "timestamp with time zone", False, True, 4)]),
    ("select pg_get_expr(adbin, adrelid) from pg_attrdef where adrelid = 'pgc_items'::regclass order by adnum",
     [("nextval('pgc_items_id_seq'::regclass)",), ("'x'::character varying",), ("now()",)]),
    ("select conname, contype, pg_get_constraintdef(oid) from pg_constraint"
     " where conrelid = 'pgc_tags'::regclass",
     [("pgc_tags_pkey", "p", "PRIMARY KEY (item_id, tag)")]),
    ("select pg_get_indexdef(indexrelid), indisprimary, indisunique, indnatts from pg_index"
     " where indrelid = 'pgc_tags'::regclass",
     [("CREATE UNIQUE INDEX pgc_tags_pkey ON public.pgc_tags USING btree (item_id, tag)", True, True, 2)]),
    ("select typname, typlen, typcategory, typarray from pg_type where oid in (16, 23, 1043, 1184) order by oid",
     [("bool", 1, "B", 1000), ("int4", 4, "N", 1007), ("varchar", -1, "S", 1015), ("timestamptz", 8, "D", 1185)]),
    ("select nspname from pg_namespace where nspname !~ '^pg_toast' order by 1",
     [("information_schema",), ("pg_catalog",), ("public",)]),
    ("select pg_encoding_to_char(encoding), datallowconn from pg_database where datname = 'postgres'",
     [("UTF8", True)]),
    ("select name, setting, unit, vartype from pg_settings"
     " where name in ('statement_timeout', 'application_name', 'synchronous_commit') order by 1",
     [("application_name", "", None, "string"), ("statement_timeout", "0", "ms", "integer"),
      ("synchronous_commit", "on", None, "enum")]),
    ("select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace"
     " where n.nspname = 'public' and c.relkind = 'r' and c.relname like 'pgc%'"
     " and pg_table_is_visible(c.oid) order by 1",
     [("pgc_items",), ("pgc_log",), ("pgc_tags",)]),
    ("select 'pgc_items'::regclass = (select oid from pg_class where relname = 'pgc_items')", [(True,)]),
    ("select pg_get_userbyid(relowner), relhasindex from pg_class where oid = 'pgc_log'::regclass",
     [("postgres", False)]),
    ("select rolname, rolsuper from pg_roles where rolname = 'postgres'", [("postgres", True)]),
    ("select count(*) from pg_description where objoid = 'pgc_items'::regclass", [(0,)]),
]

ERRORS = [
    ("select 'nosuch'::regclass", "42P01", 'relation "nosuch" does not exist'),
    ("select 'nosuch'::regtype", "42704", 'type "nosuch" does not exist'),
    ("select 'x' ~ '('", "2201B", None),
    ("select 'a' collate \"de_DE\"", "42704", 'collation "de_DE" for encoding "UTF8" does not exist'),
]


@pytest.fixture(scope="module")
def tables(server):
    yield from module_tables(server, "pgc_items, pgc_tags, pgc_log", SETUP)


@pytest.mark.parametrize("command", list(DESCRIBE))
def test_psql_describe(tables, db, command):
    assert db.psql(command=command).stdout == DESCRIBE[command]


@pytest.mark.parametrize("sql, rows", QUERIES)
def test_catalog_query(tables, conn, sql, rows):
    assert conn.execute(sql).fetchall() == rows


@pytest.mark.parametrize("sql, sqlstate, message", ERRORS)
def test_catalog_errors(tables, conn, sql, sqlstate, message):
    with pytest.raises(psycopg.Error) as ei:
        conn.execute(sql)
    assert ei.value.sqlstate == sqlstate
    if message is not None:
        assert ei.value.diag.message_primary == message


@pytest.mark.parametrize(
    "name, expected",
    [
        ("int4", ("int4", 23, 1007, "integer", ",")),
        ("character varying", ("varchar", 1043, 1015, "character varying", ",")),
        ("timestamptz", ("timestamptz", 1184, 1185, "timestamp with time zone", ",")),
        ("numeric", ("numeric", 1700, 1231, "numeric", ",")),
    ],
)
def test_psycopg_type_info(tables, conn, name, expected):
    info = TypeInfo.fetch(conn, name)
    assert (info.name, info.oid, info.array_oid, info.regtype, info.delimiter) == expected


def test_oid_parameters_in_binary(tables, conn):
    """An oid sent and returned in binary, as drivers that declare parameter types do."""
    with conn.cursor(binary=True) as cur:
        cur.execute("select relname from pg_class where oid = %s::oid", (1259,))
        assert cur.fetchall() == [("pg_class",)]
        cur.execute("select 'pgc_log'::regclass::oid = %s", (psycopg.types.numeric.Int4(0),))
        assert cur.fetchall() == [(False,)]


def test_expandarray_records_as_pgjdbc_reads_them(db, conn):
    """`information_schema._pg_expandarray`: rows `(x, n)` as a record, one field of it,
    or two columns in FROM; and the primary-key query pgjdbc's getPrimaryKeys runs, which
    reads a field of such a record. Expectations from PostgreSQL 15."""
    t = db.table("rk")
    conn.execute(f"create table {t} (a int, b text, c int, primary key (c, a))")
    q = "information_schema._pg_expandarray(array[3,1,2])"
    assert conn.execute(f"select {q}").fetchall() == [(("3", "1"),), (("1", "2"),), (("2", "3"),)]
    assert conn.execute(f"select ({q}).n, ({q}).x").fetchall() == [(1, 3), (2, 1), (3, 2)]
    assert conn.execute(
        "select * from information_schema._pg_expandarray(array['a','b'])"
    ).fetchall() == [("a", 1), ("b", 2)]
    with pytest.raises(psycopg.errors.WrongObjectType):
        conn.execute("select (1).x")
    pk = conn.execute(
        "SELECT result.COLUMN_NAME, result.KEY_SEQ, result.PK_NAME FROM (SELECT NULL AS TABLE_CAT,"
        " n.nspname AS TABLE_SCHEM, ct.relname AS TABLE_NAME, a.attname AS COLUMN_NAME,"
        " (information_schema._pg_expandarray(i.indkey)).n AS KEY_SEQ, ci.relname AS PK_NAME,"
        " information_schema._pg_expandarray(i.indkey) AS KEYS, a.attnum AS A_ATTNUM"
        " FROM pg_catalog.pg_class ct JOIN pg_catalog.pg_attribute a ON (ct.oid = a.attrelid)"
        " JOIN pg_catalog.pg_namespace n ON (ct.relnamespace = n.oid)"
        " JOIN pg_catalog.pg_index i ON (a.attrelid = i.indrelid)"
        " JOIN pg_catalog.pg_class ci ON (ci.oid = i.indexrelid)"
        f" WHERE true AND ct.relname = E'{t}' AND i.indisprimary) result"
        " where result.A_ATTNUM = (result.KEYS).x ORDER BY result.table_name, result.pk_name, result.key_seq"
    ).fetchall()
    assert pk == [("c", 1, f"{t}_pkey"), ("a", 2, f"{t}_pkey")]


SIZES = [
    ("select pg_size_pretty(v) from (values (0::bigint), (10239), (10240), (10485247), (10485248),"
     " (10485760), (21474836480), (1099511627776), (-10240), (-10239), (123456789012345),"
     " (9223372036854775807), (-9223372036854775807)) t(v)",
     [("0 bytes",), ("10239 bytes",), ("10 kB",), ("10239 kB",), ("10 MB",), ("10 MB",), ("20 GB",),
      ("1024 GB",), ("-10 kB",), ("-10239 bytes",), ("112 TB",), ("8192 PB",), ("-8192 PB",)]),
    ("create table szt (id int primary key, v text)", "CREATE TABLE"),
    ("insert into szt select g, repeat('x', 100) from generate_series(1, 5000) g", "INSERT 0 5000"),
    ("create index szt_v on szt (v)", "CREATE INDEX"),
    ("select pg_relation_size('szt') > 0, pg_relation_size('szt', 'fsm') >= 0, pg_indexes_size('szt') > 0,"
     " pg_total_relation_size('szt') = pg_table_size('szt') + pg_indexes_size('szt'), pg_relation_size(0),"
     " pg_database_size('postgres') > 0, pg_database_size(current_database()) > 0",
     [(True, True, True, True, None, True, True)]),
    ("select pg_relation_size('szt_v') > 0", [(True,)]),
    ("select pg_database_size('nodb')", ("3D000", 'database "nodb" does not exist')),
    ("drop table szt", "DROP TABLE"),
]


def test_size_functions_answer_as_postgresql(server):
    """pg_size_pretty's units and rounding, and the size functions psql's `\\dt+`,
    `\\di+` and `\\l+` call (the sizes themselves are SteadyDB's pages)."""
    with server.connect() as c:
        c.execute("drop table if exists szt")
        run_steps(c, SIZES)


def test_psql_df_and_dt_plus(db, conn):
    """`\\df` lists no functions (there are no user-defined ones), as PostgreSQL does
    for a new database; `\\dt+` lists a table with its size."""
    assert db.psql(command="\\df").stdout == """\
                       List of functions
 Schema | Name | Result data type | Argument data types | Type 
--------+------+------------------+---------------------+------
(0 rows)

"""
    t = db.table("dtp")
    conn.execute(f"create table {t} (id int primary key)")
    out = db.psql(command=f"\\dt+ {t}").stdout.splitlines()
    assert [c.strip() for c in out[1].split("|")] == ["Schema", "Name", "Type", "Owner", "Persistence",
                                                      "Access method", "Size", "Description"], out
    cells = [c.strip() for c in out[3].split("|")]
    assert cells[:6] == ["public", t, "table", "postgres", "permanent", "heap"] and cells[6].endswith(("bytes", "kB")), out


def test_pg_tables_indexes_views_and_sequences(db, conn):
    """The system views scripts and tools read most: pg_tables, pg_indexes, pg_views,
    pg_sequences and information_schema.views, as PostgreSQL shows them."""
    p, c, n = (db.table(x) for x in ("pvp", "pvc", "pvn"))
    s, v = f"{p}_s", f"{p}_v"
    conn.execute(f"create table {p} (id serial primary key, name text unique)")
    conn.execute(f"create table {c} (id bigint generated by default as identity primary key, "
                 f"p int references {p}, note text)")
    conn.execute(f"create index {c}_note on {c} (note)")
    conn.execute(f"create table {n} (x int)")
    conn.execute(f"create sequence {s} start 5 increment 2")
    conn.execute(f"select nextval('{s}')")
    conn.execute(f"create view {v} as select id, name from {p}")
    names = (p, c, n)
    assert conn.execute(
        "select tablename, tableowner, tablespace, hasindexes, hasrules, hastriggers, rowsecurity "
        "from pg_tables where schemaname = 'public' and tablename = any(%s) order by 1",
        (list(names),)).fetchall() == sorted([
            (c, "postgres", None, True, False, True, False),
            (n, "postgres", None, False, False, False, False),
            (p, "postgres", None, True, False, True, False),
        ])
    assert conn.execute(
        "select tablename, indexname, indexdef from pg_indexes where tablename = any(%s) "
        "order by 1, 2", (list(names),)).fetchall() == sorted([
            (c, f"{c}_note", f"CREATE INDEX {c}_note ON public.{c} USING btree (note)"),
            (c, f"{c}_pkey", f"CREATE UNIQUE INDEX {c}_pkey ON public.{c} USING btree (id)"),
            (p, f"{p}_name_key", f"CREATE UNIQUE INDEX {p}_name_key ON public.{p} USING btree (name)"),
            (p, f"{p}_pkey", f"CREATE UNIQUE INDEX {p}_pkey ON public.{p} USING btree (id)"),
        ])
    assert conn.execute(
        "select schemaname, viewowner, definition like '%%SELECT%%' from pg_views where viewname = %s",
        (v,)).fetchall() == [("public", "postgres", True)]
    assert conn.execute(
        "select sequencename, data_type::text, start_value, min_value, max_value, increment_by, "
        "cycle, cache_size, last_value from pg_sequences where sequencename = any(%s) order by 1",
        ([s, f"{p}_id_seq", f"{c}_id_seq"],)).fetchall() == sorted([
            (f"{c}_id_seq", "bigint", 1, 1, 9223372036854775807, 1, False, 1, None),
            (f"{p}_id_seq", "integer", 1, 1, 2147483647, 1, False, 1, None),
            (s, "bigint", 5, 1, 9223372036854775807, 2, False, 1, 5),
        ])
    # (is_updatable says NO here, YES in PostgreSQL: writes through views are refused.)
    assert conn.execute(
        "select table_schema, check_option from information_schema.views "
        "where table_name = %s", (v,)).fetchall() == [("public", "NONE")]
    assert conn.execute("select count(*) > 5 from pg_tables where schemaname = 'pg_catalog'"
                        ).fetchone() == (True,)
    conn.execute(f"drop view {v}")
    conn.execute(f"drop sequence {s}")
