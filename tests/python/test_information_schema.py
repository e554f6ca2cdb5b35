"""information_schema.tables and information_schema.columns, as drivers and ORMs query
them. The expectations were taken from PostgreSQL 15 and hold there too."""

from __future__ import annotations

import pytest

COLUMNS_QUERY = (
    "select column_name, ordinal_position, is_nullable, data_type, character_maximum_length,"
    " character_octet_length, numeric_precision, numeric_precision_radix, numeric_scale,"
    " datetime_precision, udt_name, dtd_identifier, is_identity, is_generated, is_updatable"
    " from information_schema.columns where table_name = %s order by ordinal_position"
)

EXPECTED_COLUMNS = [
    ('id', 1, 'NO', 'integer', None, None, 32, 2, 0, None, 'int4', '1', 'NO', 'NEVER', 'YES'),
    ('a', 2, 'NO', 'smallint', None, None, 16, 2, 0, None, 'int2', '2', 'NO', 'NEVER', 'YES'),
    ('b', 3, 'YES', 'bigint', None, None, 64, 2, 0, None, 'int8', '3', 'NO', 'NEVER', 'YES'),
    ('c', 4, 'YES', 'real', None, None, 24, 2, None, None, 'float4', '4', 'NO', 'NEVER', 'YES'),
    ('d', 5, 'YES', 'double precision', None, None, 53, 2, None, None, 'float8', '5', 'NO', 'NEVER',
     'YES'),
    ('e', 6, 'YES', 'numeric', None, None, 10, 10, 2, None, 'numeric', '6', 'NO', 'NEVER', 'YES'),
    ('f', 7, 'YES', 'numeric', None, None, None, 10, None, None, 'numeric', '7', 'NO', 'NEVER', 'YES'),
    ('g', 8, 'YES', 'text', None, 1073741824, None, None, None, None, 'text', '8', 'NO', 'NEVER',
     'YES'),
    ('h', 9, 'YES', 'character varying', 20, 80, None, None, None, None, 'varchar', '9', 'NO',
     'NEVER', 'YES'),
    ('i', 10, 'YES', 'character', 3, 12, None, None, None, None, 'bpchar', '10', 'NO', 'NEVER',
     'YES'),
    ('j', 11, 'YES', 'boolean', None, None, None, None, None, None, 'bool', '11', 'NO', 'NEVER',
     'YES'),
    ('k', 12, 'YES', 'bytea', None, None, None, None, None, None, 'bytea', '12', 'NO', 'NEVER',
     'YES'),
    ('l', 13, 'YES', 'date', None, None, None, None, None, 0, 'date', '13', 'NO', 'NEVER', 'YES'),
    ('m', 14, 'YES', 'timestamp without time zone', None, None, None, None, None, 6, 'timestamp',
     '14', 'NO', 'NEVER', 'YES'),
    ('n', 15, 'YES', 'timestamp with time zone', None, None, None, None, None, 6, 'timestamptz',
     '15', 'NO', 'NEVER', 'YES'),
    ('o', 16, 'YES', 'character varying', None, 1073741824, None, None, None, None, 'varchar',
     '16', 'NO', 'NEVER', 'YES'),
]


@pytest.fixture
def typed(db, conn):
    t = db.table("istest")
    conn.execute(
        f"create table {t} (id int primary key, a smallint not null, b bigint, c real,"
        " d double precision, e numeric(10,2), f numeric, g text, h varchar(20), i char(3),"
        " j boolean, k bytea, l date, m timestamp, n timestamptz, o varchar)"
    )
    return t


def test_columns(conn, typed):
    assert conn.execute(COLUMNS_QUERY, (typed,)).fetchall() == EXPECTED_COLUMNS


def test_tables(conn, typed):
    rows = conn.execute(
        "select table_catalog, table_schema, table_name, table_type, is_insertable_into, is_typed"
        " from information_schema.tables where table_name = %s", (typed,)).fetchall()
    assert rows == [("postgres", "public", typed, "BASE TABLE", "YES", "NO")]
    names = [r[0] for r in conn.execute(
        "select table_name from information_schema.tables where table_schema = 'public'"
        " order by table_name").fetchall()]
    assert typed in names


def test_a_transaction_sees_its_own_catalog(db, conn, two_conns):
    other = two_conns
    t = db.table("is_uncommitted")
    conn.execute("begin")
    conn.execute(f"create table {t} (k int)")
    query = "select count(*) from information_schema.columns where table_name = %s"
    assert conn.execute(query, (t,)).fetchone() == (1,)
    assert other.execute(query, (t,)).fetchone() == (0,)
    conn.execute("commit")
    assert other.execute(query, (t,)).fetchone() == (1,)


def test_joined_with_a_table(db, conn, typed):
    rows = conn.execute(
        "select c.column_name from information_schema.tables t join information_schema.columns c"
        " on c.table_name = t.table_name and c.table_schema = t.table_schema"
        " where t.table_name = %s and c.is_nullable = 'NO' order by c.ordinal_position",
        (typed,)).fetchall()
    assert rows == [("id",), ("a",)]


@pytest.fixture
def two_conns(db):
    return db.connect()


CONSTRAINT_QUERIES = [
    ("select constraint_name, table_name, constraint_type, is_deferrable, initially_deferred, enforced,"
     " nulls_distinct from information_schema.table_constraints where table_name = 'ist'"
     " and constraint_type <> 'CHECK' order by 1",
     [('ist_a_key', 'ist', 'UNIQUE', 'NO', 'NO', 'YES', 'YES'), ('ist_bc', 'ist', 'UNIQUE', 'NO', 'NO', 'YES', 'YES'),
      ('ist_pkey', 'ist', 'PRIMARY KEY', 'NO', 'NO', 'YES', None)]),
    ("select constraint_name, constraint_type from information_schema.table_constraints where table_name = 'ist'"
     " and constraint_name not like '%not_null' order by 1",
     [('ist_a_key', 'UNIQUE'), ('ist_b_check', 'CHECK'), ('ist_bc', 'UNIQUE'), ('ist_pkey', 'PRIMARY KEY')]),
    ("select count(*) from information_schema.table_constraints where table_name = 'ist'"
     " and constraint_name like '%not_null'",
     [(2,)]),
    ("select constraint_name, table_name, column_name, ordinal_position, position_in_unique_constraint"
     " from information_schema.key_column_usage where table_name = 'ist' order by 1, 4",
     [('ist_a_key', 'ist', 'a', 1, None), ('ist_bc', 'ist', 'b', 1, None), ('ist_bc', 'ist', 'c', 2, None),
      ('ist_pkey', 'ist', 'id', 1, None)]),
    ("select table_name, table_type from information_schema.tables where table_name in ('ist', 'isv') order by 1",
     [('ist', 'BASE TABLE'), ('isv', 'VIEW')]),
    ("select kcu.column_name from information_schema.table_constraints tc join information_schema.key_column_usage kcu"
     " on kcu.constraint_name = tc.constraint_name where tc.table_name = 'ist' and tc.constraint_type = 'PRIMARY KEY'",
     [('id',)]),
]


def test_constraints_and_key_columns(server):
    """table_constraints and key_column_usage as PostgreSQL 15 gives them (NOT NULL
    columns count as CHECK constraints there, named from OIDs)."""
    with server.connect() as c:
        c.execute("drop view if exists isv")
        c.execute("drop table if exists ist")
        c.execute("create table ist (id int primary key, a text not null unique, b int check (b > 0), c int,"
                  " constraint ist_bc unique (b, c))")
        c.execute("create view isv as select id from ist")
        try:
            for sql, rows in CONSTRAINT_QUERIES:
                assert c.execute(sql).fetchall() == rows, sql
        finally:
            c.execute("drop view if exists isv")
            c.execute("drop table if exists ist")
