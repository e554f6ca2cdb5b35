"""CREATE SEQUENCE, CREATE VIEW, DROP SEQUENCE and DROP VIEW inside a transaction block,
as migration tools and SQLAlchemy's create_all run them: they commit or roll back with
the block, others see nothing of them until it commits, and what an open block made is
gone after a crash. The expectations were taken from PostgreSQL 15 and hold there too."""

from __future__ import annotations

import threading

import psycopg
import pytest

from crash_util import nodes  # noqa: F401  (fixture)

CLEANUP = [
    "drop view if exists bv, bv2",
    "drop table if exists bt, bt2",
    "drop sequence if exists bs, bs2",
]


@pytest.fixture
def two(server):
    """Two autocommit connections: the one that runs the block, and another."""
    with server.connect() as a, server.connect() as b:
        for sql in CLEANUP:
            a.execute(sql)
        try:
            yield a, b
        finally:
            if a.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                a.execute("rollback")
            for sql in CLEANUP:
                a.execute(sql)


def seen(c: psycopg.Connection, name: str) -> bool:
    """Whether `name` is in pg_class for this connection, as psql's \\d finds it."""
    return c.execute(
        "select count(*) from pg_class where relname = %s and pg_table_is_visible(oid)", (name,)
    ).fetchone() == (1,)


def fails(c: psycopg.Connection, sql: str, error: type) -> None:
    """`sql` fails with `error`; inside a block, under a savepoint that keeps the block."""
    in_block = c.info.transaction_status != psycopg.pq.TransactionStatus.IDLE
    if in_block:
        c.execute("savepoint check_fails")
    with pytest.raises(error):
        c.execute(sql)
    if in_block:
        c.execute("rollback to savepoint check_fails")


def test_created_in_a_block(two):
    a, b = two
    a.execute("begin")
    a.execute("create sequence bs start 10")
    assert a.execute("select nextval('bs')").fetchone() == (10,)
    a.execute("create table bt (id int default nextval('bs') primary key, x int)")
    a.execute("insert into bt (x) values (1), (2)")
    a.execute("create view bv as select id, x from bt")
    assert a.execute("select * from bv order by id").fetchall() == [(11, 1), (12, 2)]
    assert seen(a, "bs") and seen(a, "bv")
    # Others see none of it until the block commits.
    assert not seen(b, "bs") and not seen(b, "bv")
    with pytest.raises(psycopg.errors.UndefinedTable):
        b.execute("select nextval('bs')")
    with pytest.raises(psycopg.errors.UndefinedTable):
        b.execute("select * from bv")
    a.execute("commit")
    assert b.execute("select * from bv order by id").fetchall() == [(11, 1), (12, 2)]
    assert b.execute("select nextval('bs')").fetchone() == (13,)
    assert seen(b, "bs") and seen(b, "bv")


def test_rolled_back_in_a_block(two):
    a, b = two
    a.execute("begin")
    a.execute("create sequence bs")
    a.execute("create view bv as select 1 as one")
    a.execute("savepoint s")
    a.execute("create sequence bs2")
    a.execute("create view bv2 as select * from bv")
    a.execute("rollback to savepoint s")
    fails(a, "select * from bv2", psycopg.errors.UndefinedTable)
    fails(a, "select nextval('bs2')", psycopg.errors.UndefinedTable)
    assert a.execute("select * from bv").fetchall() == [(1,)]
    a.execute("rollback")
    for c in (a, b):
        for name in ("bs", "bs2", "bv", "bv2"):
            assert not seen(c, name), name
        with pytest.raises(psycopg.errors.UndefinedTable):
            c.execute("select nextval('bs')")
    # The names are free again.
    a.execute("create sequence bs")
    a.execute("create view bv as select 2 as two")
    assert b.execute("select * from bv").fetchall() == [(2,)]


def test_dropped_in_a_block(two):
    a, b = two
    a.execute("create table bt (id int primary key, x int)")
    a.execute("insert into bt values (1, 10)")
    a.execute("create sequence bs")
    a.execute("create view bv as select id from bt")
    a.execute("begin")
    a.execute("drop view bv")
    a.execute("drop sequence bs")
    fails(a, "select * from bv", psycopg.errors.UndefinedTable)
    fails(a, "select nextval('bs')", psycopg.errors.UndefinedTable)
    assert not seen(a, "bv") and seen(b, "bv")
    a.execute("rollback")
    assert a.execute("select * from bv").fetchall() == [(1,)]
    assert a.execute("select nextval('bs')").fetchone() == (1,)
    # A migration's way to change a view's columns: drop it and create it again.
    a.execute("begin")
    a.execute("drop view bv")
    a.execute("create view bv as select id, x, x * 2 as y from bt")
    assert a.execute("select * from bv").fetchall() == [(1, 10, 20)]
    assert seen(b, "bv")
    a.execute("drop sequence bs")
    a.execute("commit")
    assert b.execute("select * from bv").fetchall() == [(1, 10, 20)]
    assert not seen(b, "bs")
    # DROP TABLE ... CASCADE drops the views that read it with the block.
    a.execute("begin")
    a.execute("drop table bt cascade")
    assert seen(b, "bv") and not seen(a, "bv")
    a.execute("commit")
    assert not seen(b, "bv") and not seen(b, "bt")


def test_a_dropped_sequence_a_dropped_table_used(two):
    """A sequence that a table's default uses may go once the block dropped the table."""
    a, _ = two
    a.execute("create sequence bs")
    a.execute("create table bt (id int default nextval('bs'))")
    a.execute("begin")
    fails(a, "drop sequence bs", psycopg.errors.DependentObjectsStillExist)
    a.execute("rollback")
    a.execute("begin")
    a.execute("drop table bt")
    a.execute("drop sequence bs")
    a.execute("commit")
    assert not seen(a, "bs")


def test_if_not_exists_notices(two):
    a, _ = two
    notices = []
    a.add_notice_handler(lambda d: notices.append(d.message_primary))
    a.execute("create sequence bs")
    a.execute("create sequence if not exists bs")
    assert notices == ['relation "bs" already exists, skipping']


@pytest.mark.steadydb_only
def test_alter_system_is_not_supported(server):
    with server.connect() as c:
        with pytest.raises(psycopg.errors.FeatureNotSupported) as ei:
            c.execute("alter system set work_mem = '8MB'")
        assert ei.value.diag.message_primary == "ALTER SYSTEM is not supported"


def test_an_open_blocks_creations_are_gone_after_a_crash(nodes):  # noqa: F811
    """What a committed block created or dropped survives a crash; what an open one
    created, across a checkpoint, does not; a rolled-back creation stays undone."""
    node = nodes().start()
    with node.connect(autocommit=False) as c:
        c.execute("create table kt (id int primary key)")
        c.execute("insert into kt values (1), (2)")
        c.execute("create sequence kept_seq start 100")
        c.execute("select nextval('kept_seq')")
        c.execute("create view kept_view as select count(*) as n from kt")
        c.execute("create view dropped_view as select 1 as one")
        c.execute("create view rolled_view as select 1 as one")
        c.commit()
    with node.connect(autocommit=False) as c:
        c.execute("drop view dropped_view")
        c.commit()
    with node.connect(autocommit=False) as c:
        c.execute("drop view rolled_view")
        c.execute("create sequence undone_seq")
        c.execute("create view undone_view as select 1 as one")
        c.rollback()
    open_block = node.connect(autocommit=False)
    open_block.execute("create sequence open_seq")
    open_block.execute("create view open_view as select * from kt")
    open_block.execute("drop view kept_view")
    with node.connect() as c:
        c.execute("checkpoint")
    for _ in range(2):
        node.kill()
        node.start()
        with node.connect() as c:
            names = [r[0] for r in c.execute(
                "select relname from pg_class where relkind in ('S', 'v')"
                " and relnamespace = 'public'::regnamespace order by 1").fetchall()]
            assert names == ["kept_seq", "kept_view", "rolled_view"]
            assert c.execute("select * from kept_view").fetchall() == [(2,)]
            assert c.execute("select nextval('kept_seq')").fetchone()[0] > 100
            # The names are free.
            c.execute("create view open_view as select 2 as two")
            c.execute("drop view open_view")
            c.execute("checkpoint")


def test_a_unique_index_on_a_table_the_block_created_and_wrote(two):
    """The block's rows are checked when the index is made (PostgreSQL's 23505 'could
    not create unique index'), and its later rows are checked against them."""
    a, _ = two

    def block(*statements):
        a.execute("begin")
        try:
            a.execute("create table bt (id int, v int)")
            for sql in statements:
                a.execute(sql)
        finally:
            a.execute("rollback")

    with pytest.raises(psycopg.errors.UniqueViolation) as ei:
        block("insert into bt values (1, 1), (1, 2)", "create unique index bt_id on bt (id)")
    assert (ei.value.diag.message_primary, ei.value.diag.message_detail) == (
        'could not create unique index "bt_id"', "Key (id)=(1) is duplicated.")
    with pytest.raises(psycopg.errors.UniqueViolation) as ei:
        block("insert into bt values (1, 1), (2, 2), (null, 3), (null, 4)",
              "alter table bt add constraint bt_id unique (id)",
              "insert into bt values (2, 5)")
    assert ei.value.diag.message_detail == "Key (id)=(2) already exists."
    with pytest.raises(psycopg.errors.UniqueViolation):
        block("insert into bt values (1, 1), (2, 2)", "create unique index bt_id on bt (id)",
              "insert into bt values (3, 5)", "update bt set id = 1 where id = 3")
    # A value freed by the block may be taken again.
    block("insert into bt values (1, 1), (2, 2)", "create unique index bt_id on bt (id)",
          "delete from bt where id = 2", "insert into bt values (2, 5)")


def test_a_primary_key_on_a_table_the_block_created_and_filled(two):
    """As pg_dump's output restored in one transaction: CREATE TABLE, its rows, then
    ADD PRIMARY KEY: the rows are checked for the key and keep their values; the key
    holds for the block's later rows and after it commits."""
    a, b = two
    a.execute("begin")
    a.execute("create table bt (id int not null, name text)")
    a.execute("insert into bt select g, 'n' || g from generate_series(1, 500) g")
    a.execute("alter table bt add constraint bt_pkey primary key (id)")
    assert a.execute("select count(*), sum(id) from bt").fetchone() == (500, 125250)
    assert a.execute("select name from bt where id = 77").fetchone() == ("n77",)
    fails(a, "insert into bt values (5, 'again')", psycopg.errors.UniqueViolation)
    a.execute("insert into bt values (501, 'n501')")
    a.execute("commit")
    assert b.execute("select count(*), max(id) from bt").fetchone() == (501, 501)
    with pytest.raises(psycopg.errors.UniqueViolation):
        b.execute("insert into bt values (1, 'x')")
    assert b.execute(
        "select conname, contype from pg_constraint where conrelid = 'bt'::regclass"
    ).fetchall() == [("bt_pkey", "p")]
    # Rows that cannot take the key: the block fails, as in PostgreSQL.
    for rows, error in [("(1, 'a'), (1, 'b')", psycopg.errors.UniqueViolation),
                        ("(1, 'a'), (null, 'b')", psycopg.errors.NotNullViolation)]:
        a.execute("begin")
        a.execute("create table bt2 (id int, name text)")
        a.execute(f"insert into bt2 values {rows}")
        with pytest.raises(error):
            a.execute("alter table bt2 add primary key (id)")
        a.execute("rollback")


def copy_rows(c: psycopg.Connection, table: str, rows) -> None:
    with c.cursor().copy(f"copy {table} from stdin") as copy:
        for row in rows:
            copy.write_row(row)


def test_a_primary_key_on_a_table_the_block_created_and_copied(two):
    """As a restored dump: CREATE TABLE, COPY of its rows (in reverse key order here),
    then ADD PRIMARY KEY: the copied rows are checked for the key and found by it."""
    a, b = two
    a.execute("begin")
    a.execute("create table bt (id int not null, name text)")
    copy_rows(a, "bt", ((g, f"n{g}") for g in range(2000, 0, -1)))
    a.execute("alter table bt add constraint bt_pkey primary key (id)")
    assert a.execute("select count(*), sum(id) from bt").fetchone() == (2000, 2001000)
    assert a.execute("select name from bt where id = 77").fetchone() == ("n77",)
    assert a.execute("select id from bt order by id limit 3").fetchall() == [(1,), (2,), (3,)]
    a.execute("commit")
    assert b.execute("select count(*), max(id) from bt").fetchone() == (2000, 2000)
    assert b.execute("select name from bt where id = 1999").fetchone() == ("n1999",)
    with pytest.raises(psycopg.errors.UniqueViolation):
        b.execute("insert into bt values (1, 'x')")
    b.execute("insert into bt values (2001, 'n2001')")
    for rows, error in [([(1, "a"), (1, "b")], psycopg.errors.UniqueViolation),
                        ([(1, "a"), (None, "b")], psycopg.errors.NotNullViolation)]:
        a.execute("begin")
        a.execute("create table bt2 (id int, name text)")
        copy_rows(a, "bt2", rows)
        with pytest.raises(error):
            a.execute("alter table bt2 add primary key (id)")
        a.execute("rollback")


def test_a_key_added_in_a_block_survives_a_crash(nodes):  # noqa: F811
    node = nodes().start()
    with node.connect(autocommit=False) as c:
        c.execute("create table pk_rows (id int, v text)")
        c.execute("insert into pk_rows select g, repeat('v', g % 50) from generate_series(1, 3000) g")
        c.execute("alter table pk_rows add primary key (id)")
        c.execute("create index pk_rows_v on pk_rows (v)")
        c.commit()
    with node.connect(autocommit=False) as c:
        c.execute("create table pk_copied (id int, v text)")
        copy_rows(c, "pk_copied", ((g, str(g)) for g in range(3000, 0, -1)))
        c.execute("alter table pk_copied add primary key (id)")
        c.commit()
    open_block = node.connect(autocommit=False)
    open_block.execute("create table pk_open (id int)")
    open_block.execute("insert into pk_open values (1)")
    open_block.execute("alter table pk_open add primary key (id)")
    for _ in range(2):
        node.kill()
        node.start()
        with node.connect() as c:
            assert c.execute("select count(*), sum(id), sum(length(v)) from pk_rows").fetchone() == (
                3000, 4501500, sum(g % 50 for g in range(1, 3001)))
            assert c.execute("select v from pk_rows where id = 49").fetchone() == ("v" * 49,)
            assert c.execute("select count(*) from pk_rows where v = 'vv'").fetchone() == (60,)
            assert c.execute("select count(*), sum(id) from pk_copied").fetchone() == (3000, 4501500)
            assert c.execute("select v from pk_copied where id = 2999").fetchone() == ("2999",)
            with pytest.raises(psycopg.errors.UniqueViolation):
                c.execute("insert into pk_copied values (1, 'x')")
            with pytest.raises(psycopg.errors.UniqueViolation):
                c.execute("insert into pk_rows values (3000, 'x')")
            with pytest.raises(psycopg.errors.UndefinedTable):
                c.execute("select * from pk_open")
            c.execute("checkpoint")


def test_a_block_drops_a_table_and_creates_one_of_its_name(two):
    """As a migration's `DROP TABLE IF EXISTS t; CREATE TABLE t ...` or `pg_dump --clean`
    restored in one transaction: the new table takes the name (and its key's and
    indexes' names) at once for the block; the others see the old one until the block
    commits, and wait for it as for any dropped table; a rollback brings it back."""
    a, b = two
    a.execute("create table bt (id serial primary key, v text unique)")
    a.execute("insert into bt (v) values ('old1'), ('old2')")
    a.execute("begin")
    a.execute("drop table bt")
    a.execute("create table bt (id serial primary key, w int, v text unique)")
    a.execute("insert into bt (w, v) values (7, 'new')")
    assert a.execute("select id, w, v from bt").fetchall() == [(1, 7, "new")]
    names = "select relname from pg_class where relname like 'bt%%' order by 1"
    assert [r[0] for r in a.execute(names).fetchall()] == ["bt", "bt_id_seq", "bt_pkey", "bt_v_key"]
    columns = ("select column_name from information_schema.columns"
               " where table_name = 'bt' order by ordinal_position")
    assert [r[0] for r in b.execute(columns).fetchall()] == ["id", "v"]
    a.execute("rollback")
    assert b.execute("select id, v from bt order by id").fetchall() == [(1, "old1"), (2, "old2")]
    b.execute("insert into bt (v) values ('old3')")
    assert b.execute("select max(id) from bt").fetchone() == (3,)
    # Committed, with a reader waiting at the old table: it reads the new one.
    a.execute("begin")
    a.execute("drop table bt")
    a.execute("create table bt (k int primary key)")
    a.execute("insert into bt values (42)")
    read: list = []
    reader = threading.Thread(target=lambda: read.append(b.execute("select * from bt").fetchall()))
    reader.start()
    reader.join(0.5)
    assert reader.is_alive()
    a.execute("commit")
    reader.join(30)
    assert read == [[(42,)]]
    # Dropped and created twice over, then a sequence in place of its dropped one.
    a.execute("begin")
    a.execute("drop table bt")
    a.execute("create table bt (x int)")
    a.execute("drop table bt")
    a.execute("create table bt (y int)")
    a.execute("insert into bt values (5)")
    a.execute("create sequence bs start 3")
    a.execute("commit")
    assert b.execute("select * from bt").fetchall() == [(5,)]
    a.execute("begin")
    a.execute("drop sequence bs")
    a.execute("create sequence bs start 100")
    assert a.execute("select nextval('bs')").fetchone() == (100,)
    a.execute("rollback")
    assert b.execute("select nextval('bs')").fetchone() == (3,)
    a.execute("begin")
    a.execute("drop sequence bs")
    a.execute("create sequence bs start 100")
    a.execute("commit")
    assert b.execute("select nextval('bs')").fetchone() == (100,)
    # Only the block that dropped the table may take its name.
    with pytest.raises(psycopg.errors.DuplicateTable):
        a.execute("create table bt (z int)")


def test_a_replaced_table_survives_a_crash_as_its_block_ended(nodes):  # noqa: F811
    """A committed replacement stays; an open block's, across a checkpoint, is undone:
    the old table, its rows and its sequences are back."""
    node = nodes().start()
    with node.connect(autocommit=False) as c:
        c.execute("create table kept (id serial primary key, v text)")
        c.execute("insert into kept (v) select 'k' || g from generate_series(1, 100) g")
        c.execute("create table swapped (id int primary key)")
        c.execute("insert into swapped values (1)")
        c.execute("create sequence kept_seq start 10")
        c.execute("select nextval('kept_seq')")
        c.commit()
    with node.connect(autocommit=False) as c:
        c.execute("drop table swapped")
        c.execute("create table swapped (name text primary key)")
        c.execute("insert into swapped values ('two')")
        c.commit()
    open_block = node.connect(autocommit=False)
    open_block.execute("drop table kept")
    open_block.execute("create table kept (id serial primary key, other int)")
    open_block.execute("insert into kept (other) values (1)")
    open_block.execute("drop sequence kept_seq")
    open_block.execute("create sequence kept_seq start 500")
    with node.connect() as c:
        c.execute("checkpoint")
    for _ in range(2):
        node.kill()
        node.start()
        with node.connect() as c:
            assert c.execute("select count(*), min(v) from kept").fetchone() == (100, "k1")
            c.execute("insert into kept (v) values ('k101')")
            assert c.execute("select max(id) from kept").fetchone()[0] > 100
            assert c.execute("select nextval('kept_seq')").fetchone()[0] < 500
            assert c.execute("select * from swapped").fetchall() == [("two",)]
            c.execute("delete from kept where v = 'k101'")
            c.execute("checkpoint")


def test_a_rolled_back_referencing_table_references_nothing(two):
    a, _ = two
    a.execute("create table bt (id int primary key)")
    a.execute("begin")
    a.execute("create table bt2 (pid int references bt)")
    a.execute("rollback")
    a.execute("drop table bt")


def test_a_block_drops_a_primary_key_and_a_serial_sequence(two):
    """As `pg_dump --clean` output restored in one transaction drops them before their
    tables: others wait for the table until the block ends; the block reads the rows; a
    rollback keeps key and sequence. (Here the block may not write the rows then, as
    after a COPY into a table it truncated: 0A000.)"""
    a, b = two
    a.execute("create table bt (id serial primary key, v text)")
    a.execute("insert into bt (v) select 'v' || g from generate_series(1, 200) g")
    for end in ("rollback", "commit"):
        a.execute("begin")
        a.execute("alter table bt drop constraint bt_pkey")
        a.execute("alter table bt alter column id drop default")
        a.execute("drop sequence bt_id_seq")
        assert a.execute("select count(*), sum(id) from bt").fetchone() == (200, 20100)
        assert a.execute("select v from bt where id = 7").fetchone() == ("v7",)
        read: list = []
        reader = threading.Thread(target=lambda: read.append(b.execute("select count(*) from bt").fetchone()))
        reader.start()
        reader.join(0.5)
        assert reader.is_alive()
        a.execute(end)
        reader.join(30)
        assert read == [(200,)]
    a.execute("insert into bt values (1, 'again')")
    assert b.execute("select count(*), count(distinct id) from bt").fetchone() == (201, 200)
    assert b.execute("select count(*) from pg_class where relname in ('bt_pkey', 'bt_id_seq')").fetchone() == (0,)


def test_a_block_dropped_key_and_sequence_survive_a_crash(nodes):  # noqa: F811
    node = nodes().start()
    with node.connect(autocommit=False) as c:
        c.execute("create table dk (id serial primary key, v text)")
        c.execute("insert into dk (v) select 'v' || g from generate_series(1, 100) g")
        c.execute("create table dk2 (id serial primary key)")
        c.execute("insert into dk2 select generate_series(1, 50)")
        c.commit()
    with node.connect(autocommit=False) as c:
        c.execute("alter table dk alter column id drop default")
        c.execute("drop sequence dk_id_seq")
        c.rollback()
    with node.connect(autocommit=False) as c:
        c.execute("alter table dk2 drop constraint dk2_pkey")
        c.execute("create table dk3 (id int, v text)")
        c.commit()
    with node.connect() as c:
        c.execute("insert into dk2 values (1)")
        c.execute("insert into dk3 select g, 'v' from generate_series(1, 40) g")
    with node.connect(autocommit=False) as c:
        c.execute("alter table dk3 add primary key (id)")
        c.commit()
    open_block = node.connect(autocommit=False)
    open_block.execute("alter table dk drop constraint dk_pkey")
    for _ in range(2):
        node.kill()
        node.start()
        with node.connect() as c:
            assert c.execute("select count(*), count(distinct id) from dk2").fetchone() == (51, 50)
            assert c.execute("select v from dk3 where id = 40").fetchone() == ("v",)
            with pytest.raises(psycopg.errors.UniqueViolation):
                c.execute("insert into dk3 values (5, 'x')")
            assert c.execute("select nextval('dk_id_seq')").fetchone()[0] > 100
            with pytest.raises(psycopg.errors.UniqueViolation):
                c.execute("insert into dk values (5, 'x')")
            c.execute("checkpoint")


def test_a_block_adds_a_primary_key_to_a_table_it_did_not_create(two):
    """As a migration run in one transaction: the rows are checked for the key (23505,
    23502 roll the block back), others wait for the table until the block ends, and a
    rollback leaves the table without its key."""
    a, b = two
    a.execute("create table bt (id int, v text)")
    a.execute("insert into bt select g, 'v' || g from generate_series(1, 300) g")
    for end in ("rollback", "commit"):
        a.execute("begin")
        a.execute("alter table bt add constraint bt_pkey primary key (id)")
        assert a.execute("select v from bt where id = 150").fetchone() == ("v150",)
        assert a.execute("select count(*) from pg_constraint where conname = 'bt_pkey'").fetchone() == (1,)
        read: list = []
        reader = threading.Thread(target=lambda: read.append(b.execute("select count(*) from bt").fetchone()))
        reader.start()
        reader.join(0.5)
        assert reader.is_alive()
        a.execute(end)
        reader.join(30)
        assert read == [(300,)]
        if end == "rollback":
            b.execute("insert into bt values (1, 'twice')")
            b.execute("delete from bt where v = 'twice'")
    with pytest.raises(psycopg.errors.UniqueViolation):
        b.execute("insert into bt values (1, 'twice')")
    a.execute("create table bt2 (id int, v text)")
    a.execute("insert into bt2 values (1, 'a'), (1, 'b')")
    a.execute("begin")
    with pytest.raises(psycopg.errors.UniqueViolation):
        a.execute("alter table bt2 add primary key (id)")
    a.execute("rollback")


def test_a_block_rebuilds_a_table_twice(two):
    """As a Django migration altering two fields of one model: each rebuild of the rows
    starts from the block's own rebuilt rows; others see the table as it was until the
    block commits."""
    a, b = two
    a.execute("create table bt (id text, n text, v varchar(5))")
    a.execute("insert into bt select g::text, (g * 10)::text, 'v' from generate_series(1, 100) g")
    for end in ("rollback", "commit"):
        a.execute("begin")
        a.execute("alter table bt alter column id type int using id::int")
        a.execute("alter table bt alter column n type bigint using n::bigint")
        a.execute("alter table bt add primary key (id)")
        a.execute("alter table bt alter column v type text")
        assert a.execute("select sum(id), sum(n) from bt").fetchone() == (5050, 50500)
        assert a.execute("select n from bt where id = 42").fetchone() == (420,)
        a.execute(end)
    assert b.execute("select pg_typeof(id)::text, pg_typeof(n)::text from bt limit 1").fetchone() == (
        "integer", "bigint")
    assert b.execute("select n from bt where id = 7").fetchone() == (70,)
    with pytest.raises(psycopg.errors.UniqueViolation):
        b.execute("insert into bt values (7, 1, 'x')")


def test_an_index_on_a_table_the_block_wrote(two):
    """As a migration run in one transaction (Alembic's default): rows written, then
    CREATE INDEX on the same table. The index finds the block's rows at once, and every
    row after the commit; a unique one checks the block's rows against the committed
    ones it did not replace and against each other."""
    a, b = two
    a.execute("create table bt (id int primary key, email text, n int)")
    a.execute("insert into bt select g, 'e' || g, g % 5 from generate_series(1, 200) g")
    a.execute("begin")
    a.execute("insert into bt values (201, 'e201', 3), (202, 'new', 3)")
    a.execute("update bt set n = 3, email = 'moved' where id = 7")
    a.execute("delete from bt where id = 8")
    a.execute("create index bt_n on bt (n)")
    assert a.execute("select count(*) from bt where n = 3").fetchone() == (42,)
    assert a.execute("select id from bt where n = 3 and id > 198 order by id").fetchall() == [
        (201,), (202,)]
    # The unique index: 'e7' is free again (row 7 moved away from it), 'new' is taken.
    a.execute("insert into bt values (203, 'e7', 0)")
    a.execute("create unique index bt_email on bt (email)")
    fails(a, "insert into bt values (204, 'new', 0)", psycopg.errors.UniqueViolation)
    fails(a, "insert into bt values (205, 'e100', 0)", psycopg.errors.UniqueViolation)
    a.execute("commit")
    assert b.execute("select count(*) from bt where n = 3").fetchone() == (42,)
    assert b.execute("select id from bt where email = 'e7'").fetchone() == (203,)
    assert b.execute("select id from bt where email = 'moved'").fetchone() == (7,)
    assert b.execute("select count(*) from bt where email = 'e8'").fetchone() == (0,)
    with pytest.raises(psycopg.errors.UniqueViolation):
        b.execute("insert into bt values (300, 'e201', 1)")
    # The block's rows hold a committed row's value, or each other's: no index.
    b.execute("drop index bt_email")
    for rows in ["(301, 'e5', 0)", "(301, 'twice', 0), (302, 'twice', 0)"]:
        a.execute("begin")
        a.execute(f"insert into bt values {rows}")
        with pytest.raises(psycopg.errors.UniqueViolation) as raised:
            a.execute("create unique index bt_again on bt (email)")
        assert raised.value.diag.message_primary == 'could not create unique index "bt_again"'
        a.execute("rollback")
    assert not seen(b, "bt_again")


def test_an_index_on_a_table_the_block_wrote_survives_a_crash(nodes):  # noqa: F811
    node = nodes().start()
    with node.connect(autocommit=False) as c:
        c.execute("create table ix_rows (id int primary key, tag text)")
        c.execute("insert into ix_rows select g, 't' || (g % 7) from generate_series(1, 700) g")
        c.commit()
        c.execute("insert into ix_rows select g, 'late' from generate_series(701, 750) g")
        c.execute("update ix_rows set tag = 'late' where id <= 10")
        c.execute("create index ix_rows_tag on ix_rows (tag)")
        c.commit()
    for _ in range(2):
        node.kill()
        node.start()
        with node.connect() as c:
            assert c.execute("select count(*) from ix_rows where tag = 'late'").fetchone() == (60,)
            assert c.execute("select count(*) from ix_rows where tag = 't3'").fetchone() == (98,)
            plan = [r[0] for r in c.execute(
                "explain (costs off) select * from ix_rows where tag = 'late'")]
            assert plan[0] == "Index Scan using ix_rows_tag on ix_rows", plan
            c.execute("checkpoint")
