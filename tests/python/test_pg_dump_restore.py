"""A database dumped from PostgreSQL 15 with pg_dump restores into SteadyDB with psql:
the same rows (digests of every table, taken on PostgreSQL), the same description by
psql, sequences that go on where they were, and constraints (a foreign key among them)
that hold. The fixture
`data/pg15_dump.sql` is pg_dump 15's plain output for the schema in its header comment
(its psql `\\restrict` lines removed, which older psql builds do not know). Also
CREATE SEQUENCE, setval and ALTER SEQUENCE with PostgreSQL's answers and errors."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import psycopg
import pytest

from conftest import find_pg_tool, run_steps

DUMP = Path(__file__).resolve().parent / "data" / "pg15_dump.sql"

# Per table: rows and the digest of its rows in key order, as PostgreSQL 15 gives them.
DIGESTS = {
    "dump_items": (200, "f8fadddeb03d8f94099faddf0f594493741f0848093cbc07010f3062864f92d3"),
    "dump_orders": (800, "849a6a93a7d00f8115bc3873d667ab850345dd16d6ebfd029acfdf809814e74d"),
    "dump_notes": (30, "8c5e68571f19d9d8f5fb6193d524a8c32fbea3b8d1df5b2b3eaceedecead1306"),
}
KEYS = {"dump_items": "id", "dump_orders": "id", "dump_notes": "k"}

DESCRIBE = {
    r"\d dump_items": """\
                                    Table "public.dump_items"
  Column  |         Type          | Collation | Nullable |                Default                 
----------+-----------------------+-----------+----------+----------------------------------------
 id       | integer               |           | not null | nextval('dump_items_id_seq'::regclass)
 sku      | character varying(20) |           | not null | 
 name     | text                  |           |          | 
 price    | numeric(10,2)         |           |          | 0
 in_stock | boolean               |           |          | true
 added    | date                  |           |          | 
 tags     | text[]                |           |          | 
Indexes:
    "dump_items_pkey" PRIMARY KEY, btree (id)
    "dump_items_sku_key" UNIQUE CONSTRAINT, btree (sku)
Referenced by:
    TABLE "dump_orders" CONSTRAINT "dump_orders_item_fk" FOREIGN KEY (item_id) REFERENCES dump_items(id) ON DELETE RESTRICT

""",
    r"\d dump_orders": """\
                                     Table "public.dump_orders"
 Column  |           Type           | Collation | Nullable |                 Default                 
---------+--------------------------+-----------+----------+-----------------------------------------
 id      | bigint                   |           | not null | nextval('dump_orders_id_seq'::regclass)
 item_id | integer                  |           | not null | 
 qty     | integer                  |           |          | 
 placed  | timestamp with time zone |           |          | now()
 note    | text                     |           |          | 
Indexes:
    "dump_orders_pkey" PRIMARY KEY, btree (id)
    "dump_orders_item" btree (item_id)
    "dump_orders_item_placed" UNIQUE, btree (item_id, placed)
Foreign-key constraints:
    "dump_orders_item_fk" FOREIGN KEY (item_id) REFERENCES dump_items(id) ON DELETE RESTRICT

""",
    r"\ds dump_*": """\
                 List of relations
 Schema |        Name        |   Type   |  Owner   
--------+--------------------+----------+----------
 public | dump_items_id_seq  | sequence | postgres
 public | dump_orders_id_seq | sequence | postgres
(2 rows)

""",
}


def digest(rows) -> str:
    norm = [tuple(v.isoformat() if hasattr(v, "isoformat") else v for v in r) for r in rows]
    return hashlib.sha256(repr(norm).encode()).hexdigest()


@pytest.fixture(scope="module")
def restored(server):
    with server.connect() as c:
        c.execute("drop table if exists dump_orders, dump_items, dump_notes")
    cmd = [find_pg_tool("psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", server.host,
           "-p", str(server.port), "-U", server.user, "-d", server.dbname, "-f", str(DUMP)]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=server.client_env())
    assert res.returncode == 0, res.stderr
    yield
    with server.connect() as c:
        c.execute("drop table if exists dump_orders, dump_items, dump_notes")


@pytest.mark.parametrize("table", list(DIGESTS))
def test_restored_rows_are_postgresql_s(restored, conn, table):
    rows = conn.execute(f"select * from {table} order by {KEYS[table]}").fetchall()
    assert (len(rows), digest(rows)) == DIGESTS[table]


@pytest.mark.parametrize("command", list(DESCRIBE))
def test_restored_schema_is_described_as_postgresql_s(restored, db, command):
    assert db.psql(command=command).stdout == DESCRIBE[command]


def test_restored_sequences_and_constraints_work(restored, server):
    with server.connect(autocommit=False) as c:
        try:
            assert c.execute("insert into dump_items (sku) values ('new') returning id, price, in_stock").fetchall() == [
                (251, 0, True)]
            assert c.execute("insert into dump_orders (item_id) values (1) returning id").fetchone() == (801,)
            with pytest.raises(psycopg.errors.UniqueViolation) as ei:
                c.execute("insert into dump_items (sku) values ('SKU-7')")
            assert ei.value.diag.constraint_name == "dump_items_sku_key"
        finally:
            c.rollback()
        with pytest.raises(psycopg.errors.ForeignKeyViolation) as ei:
            c.execute("insert into dump_orders (item_id) values (999)")
        assert ei.value.diag.constraint_name == "dump_orders_item_fk"
        c.rollback()
        with pytest.raises(psycopg.errors.ForeignKeyViolation):
            c.execute("delete from dump_items where id = 17")
        c.rollback()
        c.execute("set transaction isolation level read committed")
        assert c.execute("select count(*) from dump_orders where item_id = 17").fetchone() == (4,)
        c.rollback()


SEQUENCES = [
    ("create sequence sq_a", "CREATE SEQUENCE"),
    ("select nextval('sq_a'), nextval('sq_a'), nextval('public.sq_a'::regclass)", [(1, 2, 3)]),
    ("select setval('sq_a', 10)", [(10,)]),
    ("select nextval('sq_a')", [(11,)]),
    ("select setval('sq_a', 20, false)", [(20,)]),
    ("select nextval('sq_a')", [(20,)]),
    ("create sequence sq_b as integer start with 5 increment by 3 minvalue 2 maxvalue 12 cache 1", "CREATE SEQUENCE"),
    ("select nextval('sq_b'), nextval('sq_b'), nextval('sq_b')", [(5, 8, 11)]),
    ("select nextval('sq_b')", ("2200H", 'nextval: reached maximum value of sequence "sq_b" (12)')),
    ("select setval('sq_b', 100)", ("22003", 'setval: value 100 is out of bounds for sequence "sq_b" (2..12)')),
    ("select seqstart, seqincrement, seqmax, seqmin, seqcache, seqcycle, format_type(seqtypid, null)"
     " from pg_sequence where seqrelid = 'sq_b'::regclass", [(5, 3, 12, 2, 1, False, "integer")]),
    ("alter sequence sq_b restart with 6", "ALTER SEQUENCE"),
    ("select nextval('sq_b')", [(6,)]),
    ("create sequence sq_a", ("42P07", 'relation "sq_a" already exists')),
    ("create sequence if not exists sq_a", "CREATE SEQUENCE"),
    ("create sequence sq_c increment 0", ("22023", "INCREMENT must not be zero")),
    ("create sequence sq_c minvalue 10 maxvalue 5", ("22023", "MINVALUE (10) must be less than MAXVALUE (5)")),
    ("create sequence sq_c start 0", ("22023", "START value (0) cannot be less than MINVALUE (1)")),
    ("create sequence sq_c as text", ("22023", "sequence type must be smallint, integer, or bigint")),
    ("create sequence sq_c as smallint maxvalue 100000",
     ("22023", "MAXVALUE (100000) is out of range for sequence data type smallint")),
    ("create table sq_t (id integer not null, name text)", "CREATE TABLE"),
    ("alter sequence sq_a owned by sq_t.id", "ALTER SEQUENCE"),
    ("alter table sq_t alter column id set default nextval('sq_a'::regclass)", "ALTER TABLE"),
    ("insert into sq_t (name) values ('a') returning id", [(21,)]),
    ("drop sequence sq_a", ("2BP01", "cannot drop sequence sq_a because other objects depend on it")),
    ("alter table sq_t alter column id drop default", "ALTER TABLE"),
    ("alter table sq_t owner to nobody", ("42704", 'role "nobody" does not exist')),
    ("alter table sq_t owner to postgres", "ALTER TABLE"),
    ("drop table sq_t", "DROP TABLE"),
    ("select count(*) from pg_class where relname = 'sq_a'", [(0,)]),
    ("drop sequence sq_b", "DROP SEQUENCE"),
    ("drop sequence sq_b", ("42P01", 'sequence "sq_b" does not exist')),
    ("drop sequence if exists sq_b", "DROP SEQUENCE"),
]


def test_sequences_answer_as_postgresql(server):
    with server.connect() as c:
        c.execute("drop table if exists sq_t")
        c.execute("drop sequence if exists sq_a")
        c.execute("drop sequence if exists sq_b")
        run_steps(c, SEQUENCES)


def dump_lines(text: str) -> list[str]:
    """A plain dump's statements and data: no comments, blank lines or psql's
    `\\restrict` guard lines (whose key is random)."""
    return [line for line in text.splitlines()
            if line and not line.startswith("--") and not line.startswith(("\\restrict", "\\unrestrict"))]


def pg_dump(server, *args: str) -> str:
    cmd = [find_pg_tool("pg_dump"), "-h", server.host, "-p", str(server.port), "-U", server.user,
           "-d", server.dbname, *args]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=server.client_env())
    assert res.returncode == 0, res.stderr
    return res.stdout


def psql_file(server, path: Path, *args: str) -> None:
    cmd = [find_pg_tool("psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", server.host,
           "-p", str(server.port), "-U", server.user, "-d", server.dbname, *args, "-f", str(path)]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=server.client_env())
    assert res.returncode == 0, res.stderr


def test_pg_dump_of_steadydb_writes_what_it_wrote_of_postgresql(restored, server):
    """pg_dump 15 run against SteadyDB writes the restored tables exactly as it wrote
    them run against PostgreSQL 15 (the fixture): definitions, sequences, rows, keys,
    indexes and the foreign key, in the same order."""
    # The sequences' positions are left out: the tests before this one drew from them.
    def without_setval(lines: list[str]) -> list[str]:
        return [line for line in lines if not line.startswith("SELECT pg_catalog.setval(")]

    fixture = dump_lines(DUMP.read_text())
    dumped = dump_lines(pg_dump(server, "-t", "dump_*"))
    assert without_setval(dumped) == without_setval(fixture)
    with server.connect() as c:
        for seq in ("dump_items_id_seq", "dump_orders_id_seq"):
            last, called = c.execute(f"select last_value, is_called from {seq}").fetchone()
            assert f"SELECT pg_catalog.setval('public.{seq}', {last}, {str(called).lower()});" in dumped


ROUND_TRIP_SETUP = [
    "create table rt_b (id serial primary key, name varchar(20) not null unique,"
    " n integer default 0 check (n >= 0), added date)",
    "create table rt_c (id integer generated by default as identity primary key,"
    " b_id integer references rt_b (id) on delete cascade, note text, tags text[])",
    "create index rt_c_note on rt_c (note)",
    "comment on table rt_b is 'Names ''and'' numbers'",
    "comment on column rt_c.note is 'A note, if any'",
    # Named to sort before the tables it reads: pg_dump must order it by its rule's
    # dependencies.
    "create view rt_a_view as select b.name, count(c.id) as notes from rt_b b"
    " left join rt_c c on c.b_id = b.id group by b.name",
    "create sequence rt_seq start 100",
    "select nextval('rt_seq'), nextval('rt_seq')",
    "insert into rt_b (name, n, added) select 'name ' || g, g % 7, date '2024-01-01' + g"
    " from generate_series(1, 300) g",
    "insert into rt_c (b_id, note, tags) select 1 + g % 300, case when g % 5 = 0 then null"
    " else 'note ''' || g || E'\\\\' end, array['x', 'y ' || g] from generate_series(1, 900) g",
]
ROUND_TRIP_QUERIES = [
    "select * from rt_b order by id",
    "select * from rt_c order by id",
    "select * from rt_a_view order by name",
    "select last_value, is_called from rt_seq",
    "select c.relname, d.objsubid, d.description from pg_description d"
    " join pg_class c on c.oid = d.objoid where c.relname like 'rt\\_%' order by 1, 2",
]


def round_trip_state(server) -> list:
    with server.connect() as c:
        return [c.execute(q).fetchall() for q in ROUND_TRIP_QUERIES]


@pytest.mark.parametrize("dump_args, psql_args", [
    ((), ()), ((), ("--single-transaction",)), (("--clean",), ()), (("--clean",), ("--single-transaction",)),
], ids=["", "single-transaction", "clean", "clean-single-transaction"])
def test_pg_dump_of_steadydb_restores_into_steadydb(server, db, tmp_path, dump_args, psql_args):
    """A database dumped from SteadyDB with pg_dump (tables with serial and identity
    keys, a unique and a CHECK constraint, a foreign key, an index, a view named to sort
    before the tables it reads, a sequence past its start, comments) restores with psql into it
    again: the same rows, view, sequence positions and psql description; also in one
    transaction (`psql -1`), where the keys and constraints are added to tables the
    transaction created and filled; and with `--clean` over the objects it dumped, whose
    constraints, keys, sequences and tables its first statements drop (in one
    transaction too, where the new tables take the names of those it dropped)."""
    with server.connect() as c:
        c.execute("drop view if exists rt_a_view")
        c.execute("drop table if exists rt_c, rt_b")
        c.execute("drop sequence if exists rt_seq")
        for s in ROUND_TRIP_SETUP:
            c.execute(s)
    before = round_trip_state(server)
    described = [db.psql(command=f"\\d {t}").stdout for t in ("rt_b", "rt_c", "rt_a_view")]
    dump = tmp_path / "rt.sql"
    dump.write_text(pg_dump(server, "-t", "rt_*", *dump_args))
    if "--clean" not in dump_args:
        with server.connect() as c:
            c.execute("drop view rt_a_view")
            c.execute("drop table rt_c, rt_b")
            c.execute("drop sequence rt_seq")
    psql_file(server, dump, *psql_args)
    try:
        assert round_trip_state(server) == before
        assert [db.psql(command=f"\\d {t}").stdout for t in ("rt_b", "rt_c", "rt_a_view")] == described
        with server.connect() as c:
            assert c.execute("insert into rt_b (name) values ('new') returning id").fetchone() == (301,)
            assert c.execute("insert into rt_c (b_id) values (301) returning id").fetchone() == (901,)
            assert c.execute("select nextval('rt_seq')").fetchone() == (102,)
            with pytest.raises(psycopg.errors.ForeignKeyViolation):
                c.execute("insert into rt_c (b_id) values (999)")
            with pytest.raises(psycopg.errors.CheckViolation):
                c.execute("insert into rt_b (name, n) values ('neg', -1)")
    finally:
        with server.connect() as c:
            c.execute("drop view if exists rt_a_view")
            c.execute("drop table if exists rt_c, rt_b")
            c.execute("drop sequence if exists rt_seq")


ADD_IDENTITY = [
    ('DROP TABLE IF EXISTS idt',
     'DROP TABLE'),
    ('CREATE TABLE idt (a int NOT NULL, b int, c text NOT NULL, d int NOT NULL DEFAULT 5)',
     'CREATE TABLE'),
    ('ALTER TABLE idt ALTER COLUMN b ADD GENERATED BY DEFAULT AS IDENTITY',
     ('55000', 'column "b" of relation "idt" must be declared NOT NULL before identity can be added', None, None)),
    ('ALTER TABLE idt ALTER COLUMN c ADD GENERATED BY DEFAULT AS IDENTITY',
     ('22023', 'identity column type must be smallint, integer, or bigint', None, None)),
    ('ALTER TABLE idt ALTER COLUMN d ADD GENERATED BY DEFAULT AS IDENTITY',
     ('55000', 'column "d" of relation "idt" already has a default value', None, None)),
    ('ALTER TABLE idt ALTER COLUMN zz ADD GENERATED BY DEFAULT AS IDENTITY',
     ('42703', 'column "zz" of relation "idt" does not exist', None, None)),
    ('ALTER TABLE idt ALTER COLUMN a ADD GENERATED BY DEFAULT AS IDENTITY (START WITH 10 INCREMENT BY 5)',
     'ALTER TABLE'),
    ('ALTER TABLE idt ALTER COLUMN a ADD GENERATED BY DEFAULT AS IDENTITY',
     ('55000', 'column "a" of relation "idt" is already an identity column', None, None)),
    ("INSERT INTO idt (c) VALUES ('x'), ('y') RETURNING a, d",
     [(10, 5), (15, 5)]),
    ("SELECT attname, attidentity FROM pg_attribute WHERE attrelid = 'idt'::regclass AND attnum > 0 ORDER BY attnum",
     [('a', 'd'), ('b', ''), ('c', ''), ('d', '')]),
    ("SELECT column_name, is_identity FROM information_schema.columns WHERE table_name = 'idt' ORDER BY ordinal_position",
     [('a', 'YES'), ('b', 'NO'), ('c', 'NO'), ('d', 'NO')]),
    ("SELECT pg_get_serial_sequence('idt', 'a')",
     [('public.idt_a_seq',)]),
    ("SELECT seqstart, seqincrement FROM pg_sequence WHERE seqrelid = 'idt_a_seq'::regclass",
     [(10, 5)]),
    ('DROP TABLE idt',
     'DROP TABLE'),
    ("SELECT count(*) FROM pg_class WHERE relname = 'idt_a_seq'",
     [(0,)]),
]


def test_add_identity_answers_as_postgresql(server):
    """ALTER TABLE ... ADD GENERATED BY DEFAULT AS IDENTITY (how pg_dump writes an
    identity column), with its sequence options and PostgreSQL's errors."""
    with server.connect() as c:
        run_steps(c, ADD_IDENTITY)
