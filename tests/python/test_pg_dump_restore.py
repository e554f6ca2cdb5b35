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
