"""Secondary indexes and unique constraints: CREATE [UNIQUE] INDEX, UNIQUE in CREATE
TABLE and ALTER TABLE, DROP INDEX and DROP CONSTRAINT; queries and joins answered through
them; 23505 with PostgreSQL's fields; uniqueness inside a transaction, between
concurrent transactions and after a crash; snapshots that read an index while others
change it; psql's description of them. The expectations were taken from PostgreSQL 15
and hold there too."""

from __future__ import annotations

import threading
import time
from decimal import Decimal

import psycopg
import pytest

from conftest import module_tables
from crash_util import nodes  # noqa: F401  (fixture)

SETUP = [
    "create table ix_items (id int primary key, sku text unique, grp int, name varchar(20),"
    " price numeric(8,2), constraint ix_items_grp_name_key unique (grp, name))",
    "create index ix_items_grp on ix_items (grp)",
    "create index on ix_items (name, price)",
    "create table ix_orders (id bigint primary key, item_id int, qty int, note text)",
    "create unique index ix_orders_note on ix_orders (note)",
    "alter table ix_orders add constraint ix_orders_item_qty unique (item_id, qty)",
    "insert into ix_items select g, 'sku' || g, g % 7, 'n' || (g % 13) || '.' || (g / 91),"
    " g * 1.25 from generate_series(1, 300) g",
    "insert into ix_items values (301, null, null, null, null), (302, null, null, null, 5)",
    "insert into ix_orders select g, g % 50 + 1, g / 50, case when g % 3 = 0 then null"
    " else 'note' || g end from generate_series(1, 400) g",
]

QUERIES = [
    ('select count(*) from ix_items where grp = 3',
     [(43,)]),
    ('select id from ix_items where grp = 3 and id < 40 order by id',
     [(3,), (10,), (17,), (24,), (31,), (38,)]),
    ('select count(*) from ix_items where grp > 4',
     [(86,)]),
    ('select count(*) from ix_items where grp >= 2 and grp < 4',
     [(86,)]),
    ('select count(*) from ix_items where grp is null',
     [(2,)]),
    ("select id from ix_items where sku = 'sku17'",
     [(17,)]),
    ("select id from ix_items where sku = 'nope'",
     []),
    ("select count(*) from ix_items where name = 'n5.1'",
     [(7,)]),
    ("select id, price from ix_items where name = 'n5.1' and price > 300 order by id",
     []),
    ("select count(*) from ix_items where name = 'n5.1' and price between 100 and 200",
     [(5,)]),
    ('select id from ix_items where grp = 2.5',
     []),
    ('select count(*) from ix_items where grp = 3::bigint',
     [(43,)]),
    ("select id from ix_items where grp = 1 and name = 'n1.0' order by id",
     [(1,)]),
    ('select o.id, i.sku from ix_orders o join ix_items i on i.grp = o.item_id where o.id between 3 and 5 order by o.id, i.sku limit 5',
     [(3, 'sku102'), (3, 'sku109'), (3, 'sku11'), (3, 'sku116'), (3, 'sku123')]),
    ('select count(*) from ix_orders o join ix_items i on i.grp = o.qty',
     [(14958,)]),
    ('select count(*) from ix_items i left join ix_orders o on o.item_id = i.id',
     [(652,)]),
    ('select i.id, count(o.id) from ix_items i left join ix_orders o on o.item_id = i.id where i.id < 4 group by i.id order by i.id',
     [(1, 8), (2, 8), (3, 8)]),
    ("select count(*) from ix_orders where note = 'note1'",
     [(1,)]),
    ('select count(*) from ix_orders where note is null',
     [(133,)]),
    ('select item_id, qty from ix_orders where item_id = 7 order by qty',
     [(7, 0), (7, 1), (7, 2), (7, 3), (7, 4), (7, 5), (7, 6), (7, 7)]),
    ('select count(*) from ix_items where grp in (1, 2)',
     [(86,)]),
]

# (statement, (sqlstate, message, detail, constraint, table)); a detail of None is not
# compared (which duplicate a unique index build names depends on its order).
ERRORS = [
    ("insert into ix_items values (1000, 'sku5', 99, 'x', 1)",
     ('23505', 'duplicate key value violates unique constraint "ix_items_sku_key"', 'Key (sku)=(sku5) already exists.', 'ix_items_sku_key', 'ix_items')),
    ("update ix_items set sku = 'sku9' where id = 10",
     ('23505', 'duplicate key value violates unique constraint "ix_items_sku_key"', 'Key (sku)=(sku9) already exists.', 'ix_items_sku_key', 'ix_items')),
    ("update ix_orders set note = 'note2' where id = 1",
     ('23505', 'duplicate key value violates unique constraint "ix_orders_note"', 'Key (note)=(note2) already exists.', 'ix_orders_note', 'ix_orders')),
    ("insert into ix_orders values (1000, 7, 0, 'fresh')",
     ('23505', 'duplicate key value violates unique constraint "ix_orders_item_qty"', 'Key (item_id, qty)=(7, 0) already exists.', 'ix_orders_item_qty', 'ix_orders')),
    ('create unique index ix_bad on ix_items (grp)',
     ('23505', 'could not create unique index "ix_bad"', None, 'ix_bad', 'ix_items')),
    ('alter table ix_orders add constraint ix_bad2 unique (qty)',
     ('23505', 'could not create unique index "ix_bad2"', None, 'ix_bad2', 'ix_orders')),
    ('create index ix_items_grp on ix_items (name)',
     ('42P07', 'relation "ix_items_grp" already exists', None, None, None)),
    ('create index ix_x on ix_items (nope)',
     ('42703', 'column "nope" does not exist', None, None, None)),
    ('create index ix_x on nope (a)',
     ('42P01', 'relation "nope" does not exist', None, None, None)),
    ('drop index nope',
     ('42704', 'index "nope" does not exist', None, None, None)),
    ('drop index ix_items_sku_key',
     ('2BP01', 'cannot drop index ix_items_sku_key because constraint ix_items_sku_key on table ix_items requires it', None, None, None)),
    ('drop index ix_items_pkey',
     ('2BP01', 'cannot drop index ix_items_pkey because constraint ix_items_pkey on table ix_items requires it', None, None, None)),
    ('alter table ix_items drop constraint nope',
     ('42704', 'constraint "nope" of relation "ix_items" does not exist', None, None, None)),
    ('alter table ix_items add constraint ix_items_grp unique (price)',
     ('42P07', 'relation "ix_items_grp" already exists', None, None, None)),
]

DESCRIBE = {
    r"\d+ ix_items": """\
                                                Table "public.ix_items"
 Column |         Type          | Collation | Nullable | Default | Storage  | Compression | Stats target | Description 
--------+-----------------------+-----------+----------+---------+----------+-------------+--------------+-------------
 id     | integer               |           | not null |         | plain    |             |              | 
 sku    | text                  |           |          |         | extended |             |              | 
 grp    | integer               |           |          |         | plain    |             |              | 
 name   | character varying(20) |           |          |         | extended |             |              | 
 price  | numeric(8,2)          |           |          |         | main     |             |              | 
Indexes:
    "ix_items_pkey" PRIMARY KEY, btree (id)
    "ix_items_grp" btree (grp)
    "ix_items_grp_name_key" UNIQUE CONSTRAINT, btree (grp, name)
    "ix_items_name_price_idx" btree (name, price)
    "ix_items_sku_key" UNIQUE CONSTRAINT, btree (sku)
Access method: heap

""",
    r"\d ix_items": """\
                     Table "public.ix_items"
 Column |         Type          | Collation | Nullable | Default 
--------+-----------------------+-----------+----------+---------
 id     | integer               |           | not null | 
 sku    | text                  |           |          | 
 grp    | integer               |           |          | 
 name   | character varying(20) |           |          | 
 price  | numeric(8,2)          |           |          | 
Indexes:
    "ix_items_pkey" PRIMARY KEY, btree (id)
    "ix_items_grp" btree (grp)
    "ix_items_grp_name_key" UNIQUE CONSTRAINT, btree (grp, name)
    "ix_items_name_price_idx" btree (name, price)
    "ix_items_sku_key" UNIQUE CONSTRAINT, btree (sku)

""",
    r"\d ix_orders": """\
              Table "public.ix_orders"
 Column  |  Type   | Collation | Nullable | Default 
---------+---------+-----------+----------+---------
 id      | bigint  |           | not null | 
 item_id | integer |           |          | 
 qty     | integer |           |          | 
 note    | text    |           |          | 
Indexes:
    "ix_orders_pkey" PRIMARY KEY, btree (id)
    "ix_orders_item_qty" UNIQUE CONSTRAINT, btree (item_id, qty)
    "ix_orders_note" UNIQUE, btree (note)

""",
    r"\di ix_*": """\
                        List of relations
 Schema |          Name           | Type  |  Owner   |   Table   
--------+-------------------------+-------+----------+-----------
 public | ix_items_grp            | index | postgres | ix_items
 public | ix_items_grp_name_key   | index | postgres | ix_items
 public | ix_items_name_price_idx | index | postgres | ix_items
 public | ix_items_pkey           | index | postgres | ix_items
 public | ix_items_sku_key        | index | postgres | ix_items
 public | ix_orders_item_qty      | index | postgres | ix_orders
 public | ix_orders_note          | index | postgres | ix_orders
 public | ix_orders_pkey          | index | postgres | ix_orders
(8 rows)

""",
}


@pytest.fixture(scope="module")
def tables(server):
    yield from module_tables(server, "ix_items, ix_orders", SETUP)


@pytest.mark.parametrize("sql, rows", QUERIES)
def test_query_through_indexes(tables, conn, sql, rows):
    assert conn.execute(sql).fetchall() == rows


@pytest.mark.parametrize("sql, error", ERRORS)
def test_index_errors(tables, conn, sql, error):
    with pytest.raises(psycopg.Error) as ei:
        conn.execute(sql)
    d = ei.value.diag
    got = (ei.value.sqlstate, d.message_primary, d.message_detail, d.constraint_name, d.table_name)
    if error[2] is None:
        got = got[:2] + (None,) + got[3:]
    assert got == error


@pytest.mark.parametrize("command", list(DESCRIBE))
def test_psql_describes_indexes(tables, db, command):
    assert db.psql(command=command).stdout == DESCRIBE[command]


def test_index_and_table_scans_agree_as_rows_change(db, conn):
    """Every change to indexed columns (inserts, updates of the indexed column and of
    others, deletes, rows moving between values) leaves lookups through the index
    answering what a scan of the table answers."""
    t = db.table("ixc")
    conn.execute(f"create table {t} (id int primary key, k int, s text)")
    conn.execute(f"create index {t}_k on {t} (k)")
    conn.execute(f"create index {t}_s_k on {t} (s, k)")
    conn.execute(f"insert into {t} select g, g % 10, 's' || (g % 4) from generate_series(1, 200) g")
    conn.execute(f"update {t} set k = k + 1 where id % 3 = 0")
    conn.execute(f"update {t} set s = 'moved' where id % 5 = 0")
    conn.execute(f"delete from {t} where id % 7 = 0")
    conn.execute(f"insert into {t} select g, g % 3, null from generate_series(201, 230) g")
    for k in range(-1, 12):
        by_index = conn.execute(f"select id from {t} where k = %s order by id", (k,)).fetchall()
        by_scan = conn.execute(f"select id from {t} where k + 0 = %s order by id", (k,)).fetchall()
        assert by_index == by_scan, k
        pair = conn.execute(f"select id from {t} where s = 'moved' and k = %s order by id", (k,)).fetchall()
        pair_scan = conn.execute(
            f"select id from {t} where s || '' = 'moved' and k + 0 = %s order by id", (k,)
        ).fetchall()
        assert pair == pair_scan, k
    assert conn.execute(f"select count(*) from {t} where k > 4 and k <= 8").fetchone() == conn.execute(
        f"select count(*) from {t} where k + 0 > 4 and k + 0 <= 8"
    ).fetchone()


def test_unique_inside_a_transaction(db, server):
    """A transaction's own rows count: a second row with a value fails; a value its own
    update or delete freed can be taken; NULLs repeat."""
    t = db.table("ixu")
    with server.connect() as c:
        c.execute(f"create table {t} (id int primary key, u text unique)")
        c.execute(f"insert into {t} values (1, 'a'), (2, 'b'), (3, null), (4, null)")
    with server.connect(autocommit=False) as c:
        c.execute(f"insert into {t} values (5, 'c')")
        with pytest.raises(psycopg.errors.UniqueViolation) as ei:
            c.execute(f"insert into {t} values (6, 'c')")
        assert ei.value.diag.constraint_name == f"{t}_u_key"
        c.rollback()
        c.execute(f"update {t} set u = 'z' where id = 1")
        c.execute(f"insert into {t} values (7, 'a')")
        c.execute(f"delete from {t} where id = 2")
        c.execute(f"insert into {t} values (8, 'b')")
        c.execute(f"insert into {t} values (9, null)")
        with pytest.raises(psycopg.errors.UniqueViolation):
            c.execute(f"update {t} set u = 'a' where id = 8")
        c.rollback()
        c.execute(f"update {t} set u = 'z' where id = 1")
        c.execute(f"update {t} set u = 'a' where id = 2")
        c.execute(f"update {t} set u = 'b' where id = 1")
        c.commit()
        assert c.execute(f"select id, u from {t} order by id").fetchall() == [
            (1, "b"), (2, "a"), (3, None), (4, None)]


def _insert_in_thread(server, sql, out):
    def run():
        try:
            with server.connect() as c:
                c.execute(sql)
            out.append("ok")
        except psycopg.Error as e:
            out.append(e.sqlstate)
    th = threading.Thread(target=run)
    th.start()
    return th


@pytest.mark.parametrize("first_ends", ["commit", "rollback"])
def test_concurrent_writers_of_one_value_take_turns(db, server, first_ends):
    """A second writer of a value waits for the first: after its commit it gets 23505,
    after its rollback it writes."""
    t = db.table("ixw")
    with server.connect() as c:
        c.execute(f"create table {t} (id int primary key, u int)")
        c.execute(f"create unique index {t}_u on {t} (u)")
    with server.connect(autocommit=False) as first:
        first.execute(f"insert into {t} values (1, 42)")
        out: list = []
        th = _insert_in_thread(server, f"insert into {t} values (2, 42)", out)
        time.sleep(0.5)
        assert out == [], "the second writer waits"
        getattr(first, first_ends)()
    th.join(30)
    assert out == (["23505"] if first_ends == "commit" else ["ok"])
    with server.connect() as c:
        assert c.execute(f"select count(*) from {t} where u = 42").fetchone() == (1,)


def test_snapshot_reads_through_an_index_while_rows_change(db, server):
    """REPEATABLE READ keeps finding, through the index, the rows its snapshot saw,
    whatever others commit to the indexed column meanwhile."""
    t = db.table("ixs")
    with server.connect() as c:
        c.execute(f"create table {t} (id int primary key, k int)")
        c.execute(f"create index {t}_k on {t} (k)")
        c.execute(f"insert into {t} select g, g % 5 from generate_series(1, 100) g")
    with server.connect(autocommit=False) as reader:
        reader.execute("set transaction isolation level repeatable read")
        before = reader.execute(f"select id from {t} where k = 2 order by id").fetchall()
        with server.connect() as w:
            w.execute(f"update {t} set k = 9 where k = 2 and id < 50")
            w.execute(f"delete from {t} where k = 2 and id > 80")
            w.execute(f"insert into {t} values (1000, 2)")
        assert reader.execute(f"select id from {t} where k = 2 order by id").fetchall() == before
        assert reader.execute(f"select count(*) from {t} where k = 9").fetchone() == (0,)
        reader.rollback()
        now = reader.execute(f"select id from {t} where k = 2 order by id").fetchall()
        assert now == [(i,) for i in range(52, 81, 5)] + [(1000,)]


def test_index_in_a_transaction_that_created_the_table(db, server):
    """ORMs create a table and its indexes in one transaction: the indexes exist once it
    commits, and not at all after a rollback."""
    t = db.table("ixt")
    with server.connect(autocommit=False) as c:
        c.execute(f"create table {t} (id int primary key, k int)")
        c.execute(f"insert into {t} values (1, 10)")
        c.execute(f"create unique index {t}_k on {t} (k)")
        c.execute(f"insert into {t} values (2, 20)")
        with pytest.raises(psycopg.errors.UniqueViolation):
            c.execute(f"insert into {t} values (3, 20)")
        c.rollback()
        assert c.execute("select count(*) from pg_class where relname = %s", (f"{t}_k",)).fetchone() == (0,)
        c.execute(f"create table {t} (id int primary key, k int)")
        c.execute(f"create index {t}_k on {t} (k)")
        c.execute(f"insert into {t} values (1, 10), (2, 20)")
        c.commit()
        assert c.execute(f"select id from {t} where k = 20").fetchall() == [(2,)]
        assert c.execute(
            "select indexrelid::regclass::text from pg_index where indrelid = %s::regclass order by 1", (t,)
        ).fetchall() == [(f"{t}_k",), (f"{t}_pkey",)]


@pytest.mark.steadydb_only
def test_indexes_survive_a_crash(nodes):  # noqa: F811
    """Indexes made, changed and dropped, then a crash: recovery (from a checkpoint and
    the log after it) gives indexes that answer as the table does, and still enforce
    uniqueness."""
    node = nodes().start()
    with node.connect() as c:
        c.execute("create table cr (id int primary key, k int, u text)")
        c.execute("insert into cr select g, g % 13, 'u' || g from generate_series(1, 2000) g")
        c.execute("create index cr_k on cr (k)")
        c.execute("create unique index cr_u on cr (u)")
        c.execute("create index cr_gone on cr (k, u)")
        c.execute("update cr set k = k + 100 where id % 4 = 0")
        c.execute("checkpoint")
        c.execute("delete from cr where id % 9 = 0")
        c.execute("drop index cr_gone")
        c.execute("create index cr_late on cr (u, k)")
        c.execute("update cr set u = 'v' || id where id % 5 = 0")
    node.kill()
    node.start()
    with node.connect() as c:
        for k in [0, 5, 12, 100, 104, 112]:
            assert c.execute("select array_agg(id order by id) from cr where k = %s", (k,)).fetchone() == \
                c.execute("select array_agg(id order by id) from cr where k + 0 = %s", (k,)).fetchone()
        assert c.execute("select id from cr where u = 'v10'").fetchall() == [(10,)]
        assert c.execute("select id from cr where u = 'u10'").fetchall() == []
        assert c.execute("select count(*) from cr where u = 'u11' and k = 11").fetchone() == (1,)
        with pytest.raises(psycopg.errors.UniqueViolation):
            c.execute("insert into cr values (5000, 1, 'u11')")
        assert c.execute(
            "select relname from pg_class where relname like 'cr\\_%' and relkind = 'i' order by 1"
        ).fetchall() == [("cr_k",), ("cr_late",), ("cr_pkey",), ("cr_u",)]


def test_index_on_an_existing_table_in_a_block(db, server):
    """A migration's CREATE INDEX / ADD UNIQUE on an existing table inside a transaction
    block: the block uses it; a rollback (also to a savepoint) takes it back; a commit
    keeps it; a duplicate aborts the block with 23505; writers wait for the block, as
    behind PostgreSQL's lock, until it ends."""
    t = db.table("ixb")
    with server.connect() as c:
        c.execute(f"create table {t} (id int primary key, k int, s text)")
        c.execute(f"insert into {t} select g, g % 50, 's' || g from generate_series(1, 1000) g")
    count = "select count(*) from pg_class where relname = %s"
    with server.connect(autocommit=False) as c:
        c.execute(f"create index {t}_k on {t} (k)")
        assert c.execute(f"select count(*) from {t} where k = 7").fetchone() == (20,)
        assert c.execute(count, (f"{t}_k",)).fetchone() == (1,)
        c.rollback()
        assert c.execute(count, (f"{t}_k",)).fetchone() == (0,)
        c.execute("savepoint a")
        c.execute(f"create index {t}_k on {t} (k)")
        c.execute("rollback to savepoint a")
        assert c.execute(count, (f"{t}_k",)).fetchone() == (0,)
        c.execute(f"create index {t}_k on {t} (k)")
        c.execute(f"alter table {t} add constraint {t}_s_key unique (s)")
        c.commit()
        with pytest.raises(psycopg.errors.UniqueViolation) as ei:
            c.execute(f"insert into {t} values (1001, 1, 's5')")
        assert ei.value.diag.constraint_name == f"{t}_s_key"
        c.rollback()
        with pytest.raises(psycopg.errors.UniqueViolation) as ei:
            c.execute(f"create unique index {t}_k2 on {t} (k)")
        assert ei.value.diag.message_detail == "Key (k)=(1) is duplicated."
        c.rollback()
        assert c.execute(count, (f"{t}_k2",)).fetchone() == (0,)
        # A writer waits for the block that indexes the table.
        c.execute(f"create index {t}_s on {t} (s, k)")
        with server.connect() as other:
            other.execute("set statement_timeout = '300ms'")
            with pytest.raises(psycopg.errors.QueryCanceled):
                other.execute(f"insert into {t} values (2000, 1, 'x')")
        c.commit()
        assert c.execute(f"select id from {t} where s = 's77' and k = 27").fetchall() == [(77,)]
        c.commit()
        with server.connect() as other:
            other.execute(f"insert into {t} values (2000, 1, 'x')")
        assert c.execute(
            "select indexrelid::regclass::text from pg_index where indrelid = %s::regclass order by 1", (t,)
        ).fetchall() == [(f"{t}_k",), (f"{t}_pkey",), (f"{t}_s",), (f"{t}_s_key",)]


@pytest.mark.steadydb_only
def test_index_made_in_a_block_survives_a_crash(nodes):  # noqa: F811
    """An index a committed block made is there after a crash (replay builds it from the
    rows); one an open block made before a checkpoint is not."""
    node = nodes().start()
    with node.connect() as c:
        c.execute("create table ibc (id int primary key, k int)")
        c.execute("insert into ibc select g, g % 10 from generate_series(1, 500) g")
    with node.connect(autocommit=False) as c:
        c.execute("create index ibc_k on ibc (k)")
        c.commit()
    open_block = node.connect(autocommit=False)
    open_block.execute("create unique index ibc_id2 on ibc (id, k)")
    with node.connect() as c:
        c.execute("checkpoint")
    node.kill()
    node.start()
    with node.connect() as c:
        assert c.execute(
            "select indexrelid::regclass::text from pg_index where indrelid = 'ibc'::regclass order by 1"
        ).fetchall() == [("ibc_k",), ("ibc_pkey",)]
        assert c.execute("select count(*) from ibc where k = 3").fetchone() == (50,)
        c.execute("insert into ibc values (501, 3)")
        assert c.execute("select count(*) from ibc where k = 3").fetchone() == (51,)
    node.kill()
    node.start()
    with node.connect() as c:
        assert c.execute("select count(*) from ibc where k = 3").fetchone() == (51,)


def test_drop_index_on_an_existing_table_in_a_block(db, server):
    """A migration's DROP INDEX / DROP CONSTRAINT (unique) inside a transaction block:
    gone for the block at once (a duplicate is allowed), back after a rollback (also to
    a savepoint, and enforced again), gone for good after a commit."""
    t = db.table("ixd")
    with server.connect() as c:
        c.execute(f"create table {t} (id int primary key, k int, s text)")
        c.execute(f"alter table {t} add constraint {t}_s_key unique (s)")
        c.execute(f"create index {t}_k on {t} (k)")
        c.execute(f"insert into {t} select g, g % 5, 's' || g from generate_series(1, 100) g")
    count = "select count(*) from pg_class where relname = %s"
    with server.connect(autocommit=False) as c:
        c.execute(f"alter table {t} drop constraint {t}_s_key")
        c.execute(f"insert into {t} values (101, 1, 's1')")
        assert c.execute(f"select count(*) from {t} where s = 's1'").fetchone() == (2,)
        assert c.execute(count, (f"{t}_s_key",)).fetchone() == (0,)
        c.rollback()
        assert c.execute(count, (f"{t}_s_key",)).fetchone() == (1,)
        with pytest.raises(psycopg.errors.UniqueViolation):
            c.execute(f"insert into {t} values (101, 1, 's1')")
        c.rollback()
        c.execute("savepoint a")
        c.execute(f"drop index {t}_k")
        assert c.execute(count, (f"{t}_k",)).fetchone() == (0,)
        c.execute("rollback to savepoint a")
        assert c.execute(f"select count(*) from {t} where k = 3").fetchone() == (20,)
        c.execute(f"drop index {t}_k")
        c.execute(f"create index {t}_k on {t} (k, s)")
        c.commit()
        assert c.execute(f"select count(*) from {t} where k = 3").fetchone() == (20,)
        c.execute(f"alter table {t} drop constraint {t}_s_key")
        c.commit()
        c.execute(f"insert into {t} values (101, 1, 's1')")
        c.commit()
        assert c.execute(
            "select indexrelid::regclass::text from pg_index where indrelid = %s::regclass order by 1", (t,)
        ).fetchall() == [(f"{t}_k",), (f"{t}_pkey",)]
        assert c.execute("select pg_get_indexdef(%s::regclass)", (f"{t}_k",)).fetchone() == (
            f"CREATE INDEX {t}_k ON public.{t} USING btree (k, s)",)


@pytest.mark.steadydb_only
def test_index_dropped_in_a_block_survives_a_crash(nodes):  # noqa: F811
    """An index an open block dropped is still there after a checkpoint and a crash; one
    a committed block dropped is not."""
    node = nodes().start()
    with node.connect() as c:
        c.execute("create table ibd (id int primary key, k int)")
        c.execute("create index ibd_k on ibd (k)")
        c.execute("create index ibd_k2 on ibd (k, id)")
        c.execute("insert into ibd select g, g % 10 from generate_series(1, 500) g")
    with node.connect(autocommit=False) as c:
        c.execute("drop index ibd_k2")
        c.commit()
    open_block = node.connect(autocommit=False)
    open_block.execute("drop index ibd_k")
    with node.connect() as c:
        c.execute("checkpoint")
    node.kill()
    node.start()
    with node.connect() as c:
        assert c.execute(
            "select indexrelid::regclass::text from pg_index where indrelid = 'ibd'::regclass order by 1"
        ).fetchall() == [("ibd_k",), ("ibd_pkey",)]
        c.execute("insert into ibd values (501, 3)")
        assert c.execute("select count(*) from ibd where k = 3").fetchone() == (51,)
