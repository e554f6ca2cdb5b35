"""SQL feature coverage with exact results and exact SQLSTATEs (psycopg 3)."""

from __future__ import annotations

import datetime as dt
import threading
import time
from decimal import Decimal

import psycopg
import pytest

import pgraw

INT8_OID = 20
INT4_OID = 23
NUMERIC_OID = 1700
FLOAT8_OID = 701
TEXT_OID = 25


def rows(cur, sql, params=None):
    cur.execute(sql, params)
    return cur.fetchall()


def one(cur, sql, params=None):
    cur.execute(sql, params)
    res = cur.fetchall()
    assert len(res) == 1, res
    return res[0]


def val(cur, sql, params=None):
    r = one(cur, sql, params)
    assert len(r) == 1, r
    return r[0]


def expect_error(cur, sql, code, params=None):
    with pytest.raises(psycopg.Error) as ei:
        cur.execute(sql, params)
    assert ei.value.sqlstate == code, f"{sql!r}: got {ei.value.sqlstate} ({ei.value})"
    return ei.value


# --------------------------------------------------------------------------- DDL


def test_create_table_all_types_and_if_not_exists(db, cur):
    t = db.table("alltypes")
    ddl = f"""create table {t} (
        a smallint, b int, c bigint, d serial, e bigserial, f real, g double precision,
        h numeric(10,2), i boolean, j text, k varchar(10), l char(3), m timestamp,
        n timestamptz, o date, p bytea)"""
    cur.execute(ddl)
    assert cur.statusmessage == "CREATE TABLE"
    cur.execute(ddl.replace("create table", "create table if not exists"))
    assert cur.statusmessage == "CREATE TABLE"
    expect_error(cur, ddl, "42P07")
    cur.execute(f"select * from {t}")
    assert [c.name for c in cur.description] == list("abcdefghijklmnop")
    assert cur.fetchall() == []


def test_create_table_with_options_and_not_null_default(db, cur):
    t = db.table("opts")
    cur.execute(
        f"create table {t} (id int not null primary key, qty int not null default 7, "
        f"note text default 'none', made timestamp default now()) with (fillfactor = 90)"
    )
    cur.execute(f"insert into {t} (id) values (1)")
    r = one(cur, f"select id, qty, note, made from {t}")
    assert r[:3] == (1, 7, "none")
    assert isinstance(r[3], dt.datetime) and r[3].tzinfo is None
    expect_error(cur, f"insert into {t} (id, qty) values (2, null)", "23502")
    expect_error(cur, f"insert into {t} (qty) values (3)", "23502")  # pk is not null
    expect_error(cur, f"update {t} set qty = null where id = 1", "23502")
    assert val(cur, f"select count(*) from {t}") == 1


def test_primary_key_variants(db, cur):
    t1, t2, t3 = db.table("pk1"), db.table("pk2"), db.table("pk3")
    cur.execute(f"create table {t1} (id int primary key, v text)")
    cur.execute(f"create table {t2} (a int, b text, v int, primary key (a, b))")
    cur.execute(f"create table {t3} (id bigint, v text, constraint {t3}_named primary key (id))")
    cur.execute(f"insert into {t1} values (1, 'x')")
    expect_error(cur, f"insert into {t1} values (1, 'y')", "23505")
    expect_error(cur, f"insert into {t1} values (null, 'y')", "23502")
    cur.execute(f"insert into {t2} values (1, 'a', 1), (1, 'b', 2), (2, 'a', 3)")
    expect_error(cur, f"insert into {t2} values (1, 'b', 9)", "23505")
    expect_error(cur, f"insert into {t2} values (3, 'a', 1), (3, 'a', 2)", "23505")
    assert val(cur, f"select count(*) from {t2}") == 3
    cur.execute(f"insert into {t3} values (5, 'five')")
    expect_error(cur, f"insert into {t3} values (5, 'again')", "23505")
    # default and explicit constraint names are usable in ON CONFLICT ON CONSTRAINT
    cur.execute(f"insert into {t1} values (1, 'z') on conflict on constraint {t1}_pkey do nothing")
    assert cur.rowcount == 0
    cur.execute(
        f"insert into {t3} values (5, 'z') on conflict on constraint {t3}_named do update set v = excluded.v"
    )
    assert cur.rowcount == 1
    assert rows(cur, f"select id, v from {t3}") == [(5, "z")]
    # an update that creates a duplicate key fails as a whole
    cur.execute(f"insert into {t1} values (2, 'two')")
    expect_error(cur, f"update {t1} set id = 1 where id = 2", "23505")
    assert rows(cur, f"select id, v from {t1} order by id") == [(1, "x"), (2, "two")]


def test_drop_table_variants(db, cur):
    a, b, c = db.table("dra"), db.table("drb"), db.table("drc")
    for t in (a, b, c):
        cur.execute(f"create table {t} (id int)")
    cur.execute(f"drop table {a}, {b}")
    assert cur.statusmessage == "DROP TABLE"
    expect_error(cur, f"select * from {a}", "42P01")
    expect_error(cur, f"select * from {b}", "42P01")
    assert rows(cur, f"select * from {c}") == []
    expect_error(cur, f"drop table {a}", "42P01")
    # IF EXISTS with one missing and one existing table drops the existing one
    cur.execute(f"drop table if exists {a}, {c}")
    assert cur.statusmessage == "DROP TABLE"
    expect_error(cur, f"select * from {c}", "42P01")
    # a failed multi-table drop drops nothing
    cur.execute(f"create table {a} (id int)")
    expect_error(cur, f"drop table {a}, {b}", "42P01")
    assert rows(cur, f"select * from {a}") == []
    # the name can be reused
    cur.execute(f"create table {b} (x text)")
    cur.execute(f"insert into {b} values ('again')")
    assert rows(cur, f"select x from {b}") == [("again",)]


def test_truncate(db, cur):
    a, b = db.table("tra"), db.table("trb")
    cur.execute(f"create table {a} (id int primary key)")
    cur.execute(f"create table {b} (id int)")
    cur.execute(f"insert into {a} values (1), (2), (3)")
    cur.execute(f"insert into {b} values (1), (1)")
    cur.execute(f"truncate {a}, {b}")
    assert cur.statusmessage == "TRUNCATE TABLE"
    assert val(cur, f"select count(*) from {a}") == 0
    assert val(cur, f"select count(*) from {b}") == 0
    cur.execute(f"insert into {a} values (1)")  # the key is free again
    cur.execute(f"truncate table {a}")
    assert val(cur, f"select count(*) from {a}") == 0


def test_truncate_in_transaction_rollback_restores(db, cur):
    a, b = db.table("trx"), db.table("try")
    cur.execute(f"create table {a} (id int primary key, v text)")
    cur.execute(f"create table {b} (id int)")
    cur.execute(f"insert into {a} values (1, 'one'), (2, 'two')")
    cur.execute(f"insert into {b} values (10)")
    cur.execute("begin")
    cur.execute(f"truncate {a}, {b}")
    assert val(cur, f"select count(*) from {a}") == 0
    cur.execute(f"insert into {a} values (1, 'new')")
    cur.execute("rollback")
    assert rows(cur, f"select id, v from {a} order by id") == [(1, "one"), (2, "two")]
    assert rows(cur, f"select id from {b}") == [(10,)]
    cur.execute("begin")
    cur.execute(f"truncate {a}")
    cur.execute("commit")
    assert val(cur, f"select count(*) from {a}") == 0


def test_alter_table_add_primary_key(db, cur):
    t = db.table("alt")
    cur.execute(f"create table {t} (id int, v text)")
    cur.execute(f"insert into {t} values (1, 'a'), (2, 'b')")
    cur.execute(f"alter table {t} add primary key (id)")
    assert cur.statusmessage == "ALTER TABLE"
    expect_error(cur, f"insert into {t} values (1, 'dup')", "23505")
    cur.execute(f"insert into {t} values (3, 'c') on conflict on constraint {t}_pkey do nothing")
    assert cur.rowcount == 1
    assert rows(cur, f"select id, v from {t} order by id") == [(1, "a"), (2, "b"), (3, "c")]


def test_alter_table_add_named_primary_key(db, cur):
    t = db.table("altn")
    cur.execute(f"create table {t} (a int, b int, v text)")
    cur.execute(f"insert into {t} values (1, 1, 'x'), (1, 2, 'y')")
    cur.execute(f"alter table {t} add constraint {t}_ab primary key (a, b)")
    cur.execute(
        f"insert into {t} values (1, 2, 'z') on conflict on constraint {t}_ab "
        f"do update set v = excluded.v returning a, b, v"
    )
    assert cur.fetchall() == [(1, 2, "z")]
    expect_error(cur, f"insert into {t} values (1, 1, 'dup')", "23505")


def test_alter_table_add_primary_key_with_duplicates_fails(db, cur):
    t = db.table("altdup")
    cur.execute(f"create table {t} (id int, v text)")
    cur.execute(f"insert into {t} values (1, 'a'), (2, 'b'), (1, 'c')")
    expect_error(cur, f"alter table {t} add primary key (id)", "23505")
    # no constraint was created: duplicates are still accepted
    cur.execute(f"insert into {t} values (2, 'd')")
    assert val(cur, f"select count(*) from {t}") == 4


def test_alter_table_add_primary_key_with_nulls_fails(db, cur):
    t = db.table("altnull")
    cur.execute(f"create table {t} (id int, v text)")
    cur.execute(f"insert into {t} values (1, 'a'), (null, 'b')")
    expect_error(cur, f"alter table {t} add primary key (id)", "23502")
    cur.execute(f"insert into {t} values (1, 'again')")
    assert val(cur, f"select count(*) from {t}") == 3


@pytest.mark.steadydb_only  # PostgreSQL's DDL is transactional; ours is not yet
def test_alter_table_add_primary_key_belongs_to_its_block(db, cur, server):
    """Inside a transaction block, or beside other statements in one query string, the
    new key commits or rolls back with the block."""
    t = db.table("altblk")
    cur.execute(f"create table {t} (id int, v text)")
    cur.execute(f"insert into {t} values (1, 'a')")
    cur.execute("begin")
    cur.execute(f"alter table {t} add primary key (id)")
    assert rows(cur, f"select v from {t} where id = 1") == [("a",)]
    cur.execute("rollback")
    # Rolled back: no key.
    cur.execute(f"insert into {t} values (1, 'again')")
    assert rows(cur, f"select id, v from {t} order by id, v") == [(1, "a"), (1, "again")]
    cur.execute(f"delete from {t} where v = 'again'")
    with pgraw.RawConn(server.host, server.port) as raw:
        raw.startup()
        msgs = raw.simple_query(f"alter table {t} add primary key (id); select 1")
        assert pgraw.errors(msgs) == []
    expect_error(cur, f"insert into {t} values (1, 'dup')", "23505")


def _waits_on_relation(cur, query_start: str, timeout: float = 10.0) -> bool:
    """Whether a backend running a statement that starts with `query_start` waits on a
    relation lock (PostgreSQL) or a table's write gate (SteadyDB), within `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        cur.execute(
            "select wait_event_type, wait_event from pg_stat_activity where query like %s",
            (query_start + "%",),
        )
        if ("Lock", "relation") in cur.fetchall():
            return True
        time.sleep(0.05)
    return False


def _alter_in_thread(db, t: str):
    """Run `alter table t add primary key (id)` on its own connection in a thread; returns
    the connection, the thread and its outcome ({"done": True} or {"error": sqlstate})."""
    alter = db.connect()
    outcome = {}

    def run_alter():
        try:
            alter.execute(f"alter table {t} add primary key (id)")
            outcome["done"] = True
        except psycopg.Error as e:
            outcome["error"] = e.sqlstate

    thread = threading.Thread(target=run_alter)
    thread.start()
    return alter, thread, outcome


def test_alter_table_add_primary_key_waits_for_open_writers(db, cur):
    t = db.table("altwait")
    cur.execute(f"create table {t} (id int, v text)")
    cur.execute(f"insert into {t} values (1, 'a'), (2, 'b')")
    writer = db.connect(autocommit=False)
    writer.execute(f"insert into {t} values (3, 'c')")
    alter, thread, outcome = _alter_in_thread(db, t)
    try:
        # The ALTER waits for the open transaction that wrote the table.
        assert _waits_on_relation(cur, f"alter table {t}")
        assert thread.is_alive()
        writer.commit()
        thread.join(10)
        assert outcome == {"done": True}
    finally:
        writer.rollback()
        thread.join(10)
    expect_error(cur, f"insert into {t} values (3, 'dup')", "23505")
    assert rows(cur, f"select id, v from {t} order by id") == [(1, "a"), (2, "b"), (3, "c")]
    writer.close()
    alter.close()


def test_alter_table_add_primary_key_waiting_can_be_cancelled(db, cur):
    t = db.table("altcancel")
    cur.execute(f"create table {t} (id int, v text)")
    writer = db.connect(autocommit=False)
    writer.execute(f"insert into {t} values (1, 'a')")
    alter, thread, outcome = _alter_in_thread(db, t)
    try:
        assert _waits_on_relation(cur, f"alter table {t}")
        alter.cancel()
        thread.join(10)
        assert outcome == {"error": "57014"}
    finally:
        writer.commit()
        thread.join(10)
    # No key was added: the duplicate goes in.
    cur.execute(f"insert into {t} values (1, 'again')")
    assert val(cur, f"select count(*) from {t}") == 2
    writer.close()
    alter.close()


# --------------------------------------------------------------------------- INSERT


def test_insert_multirow_columns_defaults(db, cur):
    t = db.table("ins")
    cur.execute(
        f"create table {t} (id int primary key, a text default 'dflt', b int, c int not null default 5)"
    )
    cur.execute(f"insert into {t} values (1, 'x', 10, 1), (2, 'y', 20, 2), (3, default, null, default)")
    assert cur.statusmessage == "INSERT 0 3"
    assert cur.rowcount == 3
    cur.execute(f"insert into {t} (c, id) values (9, 4)")
    cur.execute(f"insert into {t} (id, b) values (5, default)")
    assert rows(cur, f"select id, a, b, c from {t} order by id") == [
        (1, "x", 10, 1),
        (2, "y", 20, 2),
        (3, "dflt", None, 5),
        (4, "dflt", None, 9),
        (5, "dflt", None, 5),
    ]
    expect_error(cur, f"insert into {t} (id, nosuchcol) values (6, 1)", "42703")
    expect_error(cur, "insert into no_such_table_ins values (1)", "42P01")
    expect_error(cur, f"insert into {t} (id) values ('abc')", "22P02")
    assert val(cur, f"select count(*) from {t}") == 5


def test_insert_with_more_literals_than_a_statement_has_parameters(db, cur):
    # Literals the server lifts into parameters for its plan cache: past 65,535 of them
    # the statement runs as written, as it does on PostgreSQL.
    t = db.table("many")
    cur.execute(f"create table {t} (id int primary key, k int, s text)")
    n = 30_000
    values = ",".join(f"({i}, {i % 7}, 'v{i}')" for i in range(n))
    cur.execute(f"insert into {t} values {values}")
    assert cur.rowcount == n
    assert rows(cur, f"select count(*), sum(k), max(s) from {t}") == [(n, sum(i % 7 for i in range(n)), "v9999")]


def test_insert_is_atomic(db, cur):
    t = db.table("insatom")
    cur.execute(f"create table {t} (id int primary key, v varchar(3))")
    expect_error(cur, f"insert into {t} values (1, 'a'), (2, 'b'), (1, 'c')", "23505")
    expect_error(cur, f"insert into {t} values (1, 'a'), (2, 'toolong')", "22001")
    assert val(cur, f"select count(*) from {t}") == 0


def test_insert_returning(db, cur):
    t = db.table("insret")
    cur.execute(f"create table {t} (id serial primary key, name text, qty int default 1)")
    cur.execute(f"insert into {t} (name) values ('a'), ('b') returning id, name, qty * 10 as q10")
    assert [c.name for c in cur.description] == ["id", "name", "q10"]
    assert cur.fetchall() == [(1, "a", 10), (2, "b", 10)]
    cur.execute(f"insert into {t} (name, qty) values ('c', 3) returning *")
    assert cur.fetchall() == [(3, "c", 3)]
    assert cur.statusmessage == "INSERT 0 1"


def test_insert_select(db, cur):
    src, dst = db.table("isrc"), db.table("idst")
    cur.execute(f"create table {src} (id int, name text, score int)")
    cur.execute(f"create table {dst} (id int primary key, label text, doubled bigint)")
    cur.execute(f"insert into {src} values (1, 'a', 5), (2, 'b', 6), (3, 'c', 7), (4, null, 8)")
    cur.execute(
        f"insert into {dst} (id, label, doubled) select id, upper(name), score * 2 from {src} where score > 5"
    )
    assert cur.statusmessage == "INSERT 0 3"
    assert rows(cur, f"select * from {dst} order by id") == [
        (2, "B", 12),
        (3, "C", 14),
        (4, None, 16),
    ]
    # INSERT ... SELECT without FROM, and from the same table
    cur.execute(f"insert into {dst} select 10, 'ten', 20")
    cur.execute(f"insert into {dst} select id + 100, label, doubled from {dst} where id < 4")
    assert rows(cur, f"select id from {dst} order by id") == [(2,), (3,), (4,), (10,), (102,), (103,)]
    # a duplicate produced by INSERT ... SELECT fails the whole statement
    expect_error(cur, f"insert into {dst} select id, name, score from {src}", "23505")
    assert val(cur, f"select count(*) from {dst}") == 6


def test_serial_and_bigserial(db, cur):
    t = db.table("ser")
    cur.execute(f"create table {t} (id serial primary key, big bigserial, v text)")
    cur.execute(f"insert into {t} (v) values ('a'), ('b') returning id, big")
    assert cur.fetchall() == [(1, 1), (2, 2)]
    cur.execute(f"insert into {t} (v) values ('c') returning id, big")
    assert cur.fetchall() == [(3, 3)]
    cur.execute(f"insert into {t} (id, big, v) values (100, 200, 'explicit')")
    cur.execute(f"insert into {t} (v) values ('d') returning id, big")
    assert cur.fetchall() == [(4, 4)]  # explicit values do not move the sequence
    cur.execute(f"select id, big, v from {t} order by id")
    assert cur.fetchall() == [(1, 1, "a"), (2, 2, "b"), (3, 3, "c"), (4, 4, "d"), (100, 200, "explicit")]
    assert cur.description[0].type_code == INT4_OID
    assert cur.description[1].type_code == INT8_OID


# --------------------------------------------------------------------------- ON CONFLICT


@pytest.fixture
def ups(db, cur):
    t = db.table("ups")
    cur.execute(f"create table {t} (id int primary key, v int, note text)")
    cur.execute(f"insert into {t} values (1, 10, 'one'), (2, 20, 'two')")
    return t


def test_on_conflict_do_nothing(cur, ups):
    t = ups
    cur.execute(f"insert into {t} values (1, 99, 'x') on conflict do nothing")
    assert cur.statusmessage == "INSERT 0 0"
    cur.execute(f"insert into {t} values (1, 99, 'x'), (3, 30, 'three') on conflict (id) do nothing")
    assert cur.statusmessage == "INSERT 0 1"
    cur.execute(f"insert into {t} values (2, 0, 'y'), (4, 40, 'four') on conflict do nothing returning id, v")
    assert cur.fetchall() == [(4, 40)]
    assert rows(cur, f"select id, v, note from {t} order by id") == [
        (1, 10, "one"),
        (2, 20, "two"),
        (3, 30, "three"),
        (4, 40, "four"),
    ]


def test_on_conflict_do_update_excluded(cur, ups):
    t = ups
    cur.execute(
        f"insert into {t} values (1, 11, 'uno'), (5, 50, 'five') "
        f"on conflict (id) do update set v = excluded.v, note = excluded.note || '!' "
        f"returning id, v, note"
    )
    assert sorted(cur.fetchall()) == [(1, 11, "uno!"), (5, 50, "five")]
    assert cur.statusmessage == "INSERT 0 2"
    # referencing the existing row by table name
    cur.execute(
        f"insert into {t} values (2, 5, 'ignored') on conflict (id) do update set v = {t}.v + excluded.v"
    )
    assert rows(cur, f"select id, v, note from {t} order by id") == [
        (1, 11, "uno!"),
        (2, 25, "two"),
        (5, 50, "five"),
    ]


def test_on_conflict_on_constraint(cur, ups):
    t = ups
    cur.execute(
        f"insert into {t} (id, v, note) values (2, 21, 'deux') "
        f"on conflict on constraint {t}_pkey do update set v = excluded.v, note = excluded.note"
    )
    assert cur.rowcount == 1
    assert one(cur, f"select v, note from {t} where id = 2") == (21, "deux")
    expect_error(
        cur,
        f"insert into {t} values (2, 0, '') on conflict on constraint no_such_constraint do nothing",
        "42704",
    )


def test_on_conflict_do_update_where(cur, ups):
    t = ups
    # only update when the incoming value is larger
    cur.execute(
        f"insert into {t} values (1, 5, 'smaller') on conflict (id) do update "
        f"set v = excluded.v, note = excluded.note where {t}.v < excluded.v returning id"
    )
    assert cur.fetchall() == []
    assert cur.statusmessage == "INSERT 0 0"
    cur.execute(
        f"insert into {t} values (1, 15, 'larger') on conflict (id) do update "
        f"set v = excluded.v, note = excluded.note where {t}.v < excluded.v returning id, v"
    )
    assert cur.fetchall() == [(1, 15)]
    assert rows(cur, f"select id, v, note from {t} order by id") == [(1, 15, "larger"), (2, 20, "two")]


def test_on_conflict_without_unique_constraint_target_fails(db, cur):
    t = db.table("upsnopk")
    cur.execute(f"create table {t} (id int, v int)")
    expect_error(cur, f"insert into {t} values (1, 1) on conflict (id) do nothing", "42P10")
    cur.execute(f"insert into {t} values (1, 1) on conflict do nothing")
    assert cur.rowcount == 1


def test_on_conflict_with_parameters(cur, ups):
    t = ups
    sql = (
        f"insert into {t} (id, v, note) values (%s, %s, %s) "
        f"on conflict (id) do update set v = {t}.v + excluded.v returning v"
    )
    cur.execute(sql, (7, 1, "seven"))
    assert cur.fetchall() == [(1,)]
    for _ in range(5):
        cur.execute(sql, (7, 1, "seven"))
    assert cur.fetchall() == [(6,)]
    cur.execute(sql, (7, 1, "seven"), prepare=True)
    cur.execute(sql, (7, 1, "seven"), prepare=True)
    assert cur.fetchall() == [(8,)]


# --------------------------------------------------------------------------- UPDATE / DELETE


def test_update_and_delete(db, cur):
    t = db.table("upd")
    cur.execute(f"create table {t} (id int primary key, a int, b int, s text)")
    cur.execute(f"insert into {t} values (1, 1, 10, 'x'), (2, 2, 20, 'y'), (3, 3, 30, null)")
    cur.execute(f"update {t} set a = b, b = a where id <= 2")  # uses old values
    assert cur.statusmessage == "UPDATE 2"
    cur.execute(f"update {t} set s = s || '!' , a = a + 1 where id = 3 returning id, a, s")
    assert cur.fetchall() == [(3, 4, None)]
    cur.execute(f"update {t} set a = 0 where id = 99")
    assert cur.statusmessage == "UPDATE 0"
    assert rows(cur, f"select id, a, b, s from {t} order by id") == [
        (1, 10, 1, "x"),
        (2, 20, 2, "y"),
        (3, 4, 30, None),
    ]
    cur.execute(f"update {t} set id = id + 10 where id = 3 returning *")
    assert cur.fetchall() == [(13, 4, 30, None)]
    expect_error(cur, f"update {t} set nosuch = 1", "42703")
    cur.execute(f"delete from {t} where a > 15 returning id, s")
    assert cur.fetchall() == [(2, "y")]
    assert cur.statusmessage == "DELETE 1"
    cur.execute(f"delete from {t} where id = 42")
    assert cur.statusmessage == "DELETE 0"
    cur.execute(f"delete from {t}")
    assert cur.statusmessage == "DELETE 2"
    assert val(cur, f"select count(*) from {t}") == 0


def test_update_with_parameters(db, cur):
    t = db.table("updp")
    cur.execute(f"create table {t} (id int primary key, balance bigint)")
    cur.executemany(f"insert into {t} values (%s, %s)", [(i, 100) for i in range(1, 11)])
    for i in range(1, 11):
        cur.execute(f"update {t} set balance = balance + %s where id = %s", (i, i))
        assert cur.rowcount == 1
    assert val(cur, f"select sum(balance) from {t}") == 1055


# --------------------------------------------------------------------------- SELECT


@pytest.fixture
def people(db, cur):
    t = db.table("people")
    cur.execute(f"create table {t} (id int primary key, name text, dept text, age int, salary numeric(10,2))")
    cur.execute(
        f"""insert into {t} values
        (1, 'ann', 'eng', 30, 100.00),
        (2, 'bob', 'eng', null, 80.50),
        (3, 'cat', 'ops', 41, 70.00),
        (4, 'dan', null, 25, null),
        (5, 'eve', 'ops', 30, 90.25),
        (6, 'fay', 'eng', 52, 120.00),
        (7, 'gus', null, null, 60.00)"""
    )
    return t


def test_select_where_order_limit(cur, people):
    t = people
    assert rows(cur, f"select name from {t} where age > 29 and dept = 'eng' order by name") == [
        ("ann",),
        ("fay",),
    ]
    # ascending: NULLs sort last; descending: NULLs sort first (PostgreSQL default)
    assert rows(cur, f"select id from {t} order by age, id") == [(4,), (1,), (5,), (3,), (6,), (2,), (7,)]
    assert rows(cur, f"select id from {t} order by age desc, id desc") == [
        (7,),
        (2,),
        (6,),
        (3,),
        (5,),
        (1,),
        (4,),
    ]
    assert rows(cur, f"select dept, name from {t} order by dept desc, name asc") == [
        (None, "dan"),
        (None, "gus"),
        ("ops", "cat"),
        ("ops", "eve"),
        ("eng", "ann"),
        ("eng", "bob"),
        ("eng", "fay"),
    ]
    assert rows(cur, f"select id from {t} order by id limit 3") == [(1,), (2,), (3,)]
    assert rows(cur, f"select id from {t} order by id limit 2 offset 3") == [(4,), (5,)]
    assert rows(cur, f"select id from {t} order by id desc offset 5") == [(2,), (1,)]
    assert rows(cur, f"select id from {t} order by id limit 0") == []
    assert rows(cur, f"select id from {t} order by id offset 100") == []
    assert rows(cur, f"select id from {t} order by id limit %s offset %s", (2, 1)) == [(2,), (3,)]


def test_select_star_and_column_names(cur, people):
    t = people
    cur.execute(f"select * from {t} where id = 1")
    assert [c.name for c in cur.description] == ["id", "name", "dept", "age", "salary"]
    assert cur.fetchall() == [(1, "ann", "eng", 30, Decimal("100.00"))]
    cur.execute(f"select id as ident, name, 1, count(*) from {t} group by id, name order by id limit 1")
    assert [c.name for c in cur.description] == ["ident", "name", "?column?", "count"]
    assert cur.fetchall() == [(1, "ann", 1, 1)]
    expect_error(cur, f"select nosuch from {t}", "42703")
    expect_error(cur, "select * from no_such_table_sel", "42P01")


def test_group_by_aggregates(cur, people):
    t = people
    cur.execute(
        f"select dept, count(*), count(age), sum(age), min(age), max(age), avg(age), "
        f"sum(salary), min(name), max(name) from {t} group by dept order by dept"
    )
    assert [c.type_code for c in cur.description[1:7]] == [
        INT8_OID,
        INT8_OID,
        INT8_OID,
        INT4_OID,
        INT4_OID,
        NUMERIC_OID,
    ]
    assert cur.description[7].type_code == NUMERIC_OID
    res = cur.fetchall()
    assert res == [
        ("eng", 3, 2, 82, 30, 52, Decimal(41), Decimal("300.50"), "ann", "fay"),
        ("ops", 2, 2, 71, 30, 41, Decimal("35.5"), Decimal("160.25"), "cat", "eve"),
        (None, 2, 1, 25, 25, 25, Decimal(25), Decimal("60.00"), "dan", "gus"),
    ]
    for r in res:
        assert isinstance(r[6], Decimal)


def test_aggregates_without_group_by(cur, people):
    t = people
    assert one(cur, f"select count(*), count(dept), sum(age), min(salary), max(salary) from {t}") == (
        7,
        5,
        178,
        Decimal("60.00"),
        Decimal("120.00"),
    )
    r = one(cur, f"select avg(age) from {t}")[0]
    assert isinstance(r, Decimal) and r.quantize(Decimal("0.0001")) == Decimal("35.6000")
    assert one(cur, f"select count(*), sum(age), avg(age), min(age), max(name) from {t} where id > 100") == (
        0,
        None,
        None,
        None,
        None,
    )
    assert rows(cur, f"select dept, count(*) from {t} where id > 100 group by dept") == []
    assert val(cur, f"select count(*) from {t} where age is null") == 2


def test_aggregate_result_types(db, cur):
    t = db.table("aggt")
    cur.execute(f"create table {t} (s smallint, i int, b bigint, f double precision, r real)")
    cur.execute(f"insert into {t} values (1, 1, 1, 0.5, 0.25), (2, 2, 2, 1.5, 0.5)")
    cur.execute(f"select sum(s), sum(i), sum(b), sum(f), avg(i), avg(b), avg(f), count(*) from {t}")
    assert [c.type_code for c in cur.description] == [
        INT8_OID,
        INT8_OID,
        NUMERIC_OID,
        FLOAT8_OID,
        NUMERIC_OID,
        NUMERIC_OID,
        FLOAT8_OID,
        INT8_OID,
    ]
    assert cur.fetchone() == (3, 3, Decimal(3), 2.0, Decimal("1.5"), Decimal("1.5"), 1.0, 2)


def test_group_by_order_by_aggregate_alias(cur, people):
    t = people
    assert rows(
        cur, f"select dept, count(*) as n from {t} where dept is not null group by dept order by n desc, dept"
    ) == [("eng", 3), ("ops", 2)]


def test_select_without_from(cur):
    assert one(cur, "select 1 + 2 * 3, (1 + 2) * 3, 'a' || 'b', null::int") == (7, 9, "ab", None)
    assert one(cur, "select 7 / 2, -7 / 2, 7 % 3, 7.0 / 2, 2 - 5") == (3, -3, 1, Decimal("3.5"), -3)
    assert one(cur, "select 0.1 + 0.2 = 0.3, 1.5::float8 * 2") == (True, 3.0)


def test_comparisons_and_null_logic(cur):
    assert one(cur, "select 1 < 2, 2 <= 2, 3 > 4, 'abc' = 'abc', 'abc' <> 'abd', 2 != 2") == (
        True,
        True,
        False,
        True,
        True,
        False,
    )
    assert one(
        cur,
        "select null::boolean and false, null::boolean and true, null::boolean or true, "
        "null::boolean or false, not null::boolean, true and not false",
    ) == (False, None, True, None, None, True)
    assert one(cur, "select null = null, null <> 1, 1 = null::int, null::int is null, 1 is not null") == (
        None,
        None,
        None,
        True,
        True,
    )
    assert one(cur, "select 5 between 1 and 5, 0 between 1 and 5, 3 not between 1 and 2") == (
        True,
        False,
        True,
    )
    assert one(
        cur, "select 3 in (1, 2, 3), 4 in (1, 2, 3), 4 not in (1, 2), 4 in (1, null), 4 not in (1, null)"
    ) == (True, False, True, None, None)
    assert one(
        cur, "select 'a' < 'b', 'abc' < 'abd', 'ab' < 'abc', '2024-01-02'::date > '2023-12-31'::date"
    ) == (True, True, True, True)


def test_like(cur):
    assert one(
        cur,
        "select 'hello' like 'h%', 'hello' like '_ello', 'hello' like '%ll%', 'hello' like 'H%', "
        "'hello' not like 'x%', 'h_llo' like 'h\\_llo', 'hallo' like 'h\\_llo', 'abc' like 'abc', "
        "'abc' like 'ab', null::text like 'a%'",
    ) == (True, True, True, False, True, True, False, True, False, None)


def test_like_in_where(cur, people):
    assert rows(cur, f"select name from {people} where name like '%a%' order by name") == [
        ("ann",),
        ("cat",),
        ("dan",),
        ("fay",),
    ]
    assert rows(cur, f"select id from {people} where name in ('bob', 'eve', 'zed') order by id") == [
        (2,),
        (5,),
    ]
    assert rows(cur, f"select id from {people} where age between 30 and 41 order by id") == [(1,), (3,), (5,)]
    assert rows(cur, f"select id from {people} where dept is null or age is null order by id") == [
        (2,),
        (4,),
        (7,),
    ]
    assert rows(cur, f"select id from {people} where not (age > 29) order by id") == [(4,)]


def test_concat(cur):
    assert one(cur, "select 'foo' || 'bar', 'a' || null::text, 'n=' || 42, 'x' || 'y' || 'z'") == (
        "foobar",
        None,
        "n=42",
        "xyz",
    )


def test_casts(cur):
    assert one(
        cur,
        "select '42'::int, cast('42' as bigint), 42::text, '3.14159'::numeric(5,2), "
        "cast(2.5 as int), 3.5::int, -2.5::numeric::int, '1e3'::float8, 'yes'::boolean, "
        "'f'::boolean, true::text, '2024-02-29'::date, '2024-02-29 13:14:15.5'::timestamp, "
        "'  7 '::int, 12::smallint, 7::double precision / 2",
    ) == (
        42,
        42,
        "42",
        Decimal("3.14"),
        3,
        4,
        -3,
        1000.0,
        True,
        False,
        "true",
        dt.date(2024, 2, 29),
        dt.datetime(2024, 2, 29, 13, 14, 15, 500000),
        7,
        12,
        3.5,
    )
    assert one(cur, "select 2.5::float8::int, 3.5::float8::int, 2.4::float8::int") == (2, 4, 2)
    assert one(cur, "select 'abc'::varchar(2), 'a'::char(3), length('a'::char(3))") == ("ab", "a  ", 1)
    assert one(cur, "select '\\x0001ff'::bytea, 'ab'::bytea") == (b"\x00\x01\xff", b"ab")
    expect_error(cur, "select 'abc'::int", "22P02")
    expect_error(cur, "select ''::int", "22P02")
    expect_error(cur, "select '1.5'::int", "22P02")
    expect_error(cur, "select 'maybe'::boolean", "22P02")
    expect_error(cur, "select '2024-13-01'::date", "22008")
    expect_error(cur, "select 'x'::numeric", "22P02")
    expect_error(cur, "select '99999999999'::int", "22003")
    expect_error(cur, "select 70000::smallint", "22003")
    # '::' binds tighter than unary minus
    expect_error(cur, "select -32768::smallint", "22003")
    assert val(cur, "select (-32768)::smallint") == -32768


def test_arithmetic_errors(cur):
    expect_error(cur, "select 1 / 0", "22012")
    expect_error(cur, "select 1.0 / 0", "22012")
    expect_error(cur, "select 5 % 0", "22012")
    expect_error(cur, "select 2147483647 + 1", "22003")
    expect_error(cur, "select 9223372036854775807::bigint * 2", "22003")
    assert val(cur, "select 2147483647::bigint + 1") == 2147483648


def test_case(cur, people):
    assert one(
        cur,
        "select case when 1 > 2 then 'a' when 2 > 1 then 'b' else 'c' end, "
        "case 3 when 1 then 'one' when 3 then 'three' end, "
        "case when false then 1 end, case null::int when null then 'x' else 'y' end",
    ) == ("b", "three", None, "y")
    assert rows(
        cur,
        f"select id, case when age is null then 'unknown' when age >= 40 then 'senior' else 'junior' end "
        f"from {people} order by id",
    ) == [
        (1, "junior"),
        (2, "unknown"),
        (3, "senior"),
        (4, "junior"),
        (5, "junior"),
        (6, "senior"),
        (7, "unknown"),
    ]


def test_functions(cur):
    assert one(
        cur,
        "select md5('abc'), md5(''), length('héllo'), length(''), lower('MiXeD'), upper('MiXeD'), "
        "coalesce(null, 2, 3), coalesce(null::text, null, 'z'), coalesce(null::int, null), "
        "abs(-5), abs(5), abs(-2.50), abs(-1.5::float8), length(null::text), upper(null::text)",
    ) == (
        "900150983cd24fb0d6963f7d28e17f72",
        "d41d8cd98f00b204e9800998ecf8427e",
        5,
        0,
        "mixed",
        "MIXED",
        2,
        "z",
        None,
        5,
        5,
        Decimal("2.50"),
        1.5,
        None,
        None,
    )
    assert val(cur, "select md5('héllo wörld')") == "ed0c22cc110ede12327851863c078138"


def test_random(cur):
    values = [val(cur, "select random()") for _ in range(20)]
    assert all(isinstance(v, float) and 0.0 <= v < 1.0 for v in values)
    assert len(set(values)) == 20
    a, b = one(cur, "select random(), random()")
    assert a != b
    assert len(val(cur, "select md5(random()::text)")) == 32


def test_now_and_clock_timestamp(conn, cur):
    cur.execute("begin")
    t1, c1, ts = one(cur, "select now(), clock_timestamp(), current_timestamp")
    time.sleep(0.05)
    t2, c2 = one(cur, "select now(), clock_timestamp()")
    cur.execute("commit")
    assert t1.tzinfo is not None and c1.tzinfo is not None
    assert t1 == t2 == ts  # transaction timestamp is constant within a transaction
    assert c2 - c1 >= dt.timedelta(milliseconds=40)  # wall clock advances
    assert abs(dt.datetime.now(dt.timezone.utc) - t1) < dt.timedelta(seconds=30)
    t3 = val(cur, "select now()")
    assert t3 > t1
    a, b = one(cur, "select now()::timestamp, now()::date")
    assert isinstance(a, dt.datetime) and a.tzinfo is None
    assert isinstance(b, dt.date)


def test_syntax_and_undefined_errors(cur):
    expect_error(cur, "frobnicate the table", "42601")
    expect_error(cur, "select from where", "42601")
    expect_error(cur, "select 1 +", "42601")
    expect_error(cur, "select * from no_such_table_err", "42P01")
    expect_error(cur, "select no_such_column", "42703")
    assert val(cur, "select 1") == 1  # autocommit connection is fine after errors


# --------------------------------------------------------------------------- types / constraints


def test_varchar_and_char_lengths(db, cur):
    t = db.table("vc")
    cur.execute(f"create table {t} (v varchar(5), c char(4))")
    cur.execute(f"insert into {t} values ('abcde', 'ab'), ('', ''), ('héllo', 'wxyz')")
    expect_error(cur, f"insert into {t} values ('abcdef', 'a')", "22001")
    expect_error(cur, f"insert into {t} values ('a', 'abcde')", "22001")
    expect_error(cur, f"insert into {t} (v) values (%s)", "22001", ("123456",))
    expect_error(cur, f"update {t} set v = v || 'x' where v = 'abcde'", "22001")
    assert rows(cur, f"select v, c, length(v), length(c) from {t} order by v") == [
        ("", "    ", 0, 0),
        ("abcde", "ab  ", 5, 2),
        ("héllo", "wxyz", 5, 4),
    ]


def test_numeric_rounding_and_overflow(db, cur):
    t = db.table("num")
    cur.execute(f"create table {t} (id int, n numeric(5,2))")
    cur.execute(
        f"insert into {t} values (1, 1.005), (2, 2.345), (3, -2.345), (4, 999.994), (5, 0.001), (6, 12)"
    )
    assert rows(cur, f"select id, n from {t} order by id") == [
        (1, Decimal("1.01")),
        (2, Decimal("2.35")),
        (3, Decimal("-2.35")),
        (4, Decimal("999.99")),
        (5, Decimal("0.00")),
        (6, Decimal("12.00")),
    ]
    cur.execute(f"select n from {t} where id = 6")
    assert str(cur.fetchone()[0]) == "12.00"
    expect_error(cur, f"insert into {t} values (7, 999.995)", "22003")
    expect_error(cur, f"insert into {t} values (8, 1000)", "22003")
    assert one(cur, f"select sum(n), max(n) from {t}") == (Decimal("1013.00"), Decimal("999.99"))
    assert val(cur, "select 1.23456::numeric(4,2) * 2") == Decimal("2.46")


def test_timestamp_date_columns(db, cur):
    t = db.table("tsc")
    cur.execute(f"create table {t} (id int, ts timestamp, d date)")
    cur.execute(
        f"insert into {t} values (1, '2024-01-02 03:04:05.123456', '1999-12-31'), "
        f"(2, '2000-02-29 00:00:00', '2000-01-01')"
    )
    assert rows(cur, f"select id from {t} where ts > '2010-01-01' order by id") == [(1,)]
    assert rows(cur, f"select ts, d from {t} order by ts") == [
        (dt.datetime(2000, 2, 29), dt.date(2000, 1, 1)),
        (dt.datetime(2024, 1, 2, 3, 4, 5, 123456), dt.date(1999, 12, 31)),
    ]


def test_boolean_columns(db, cur):
    t = db.table("bools")
    cur.execute(f"create table {t} (id int, b boolean)")
    cur.execute(f"insert into {t} values (1, true), (2, false), (3, null), (4, 't'), (5, 'off')")
    assert rows(cur, f"select id from {t} where b order by id") == [(1,), (4,)]
    assert rows(cur, f"select id from {t} where not b order by id") == [(2,), (5,)]
    assert rows(cur, f"select id from {t} where b is null") == [(3,)]


# --------------------------------------------------------------------------- transactions


def test_failed_transaction_25p02_until_rollback(db, cur):
    t = db.table("failtx")
    cur.execute(f"create table {t} (id int primary key)")
    cur.execute("begin")
    cur.execute(f"insert into {t} values (1)")
    expect_error(cur, f"insert into {t} values (1)", "23505")
    expect_error(cur, "select 1", "25P02")
    expect_error(cur, f"insert into {t} values (2)", "25P02")
    expect_error(cur, "select 1", "25P02")
    cur.execute("rollback")
    assert cur.statusmessage == "ROLLBACK"
    assert val(cur, f"select count(*) from {t}") == 0
    assert val(cur, "select 1") == 1


def test_commit_of_failed_transaction_rolls_back(db, cur):
    t = db.table("failcommit")
    cur.execute(f"create table {t} (id int primary key)")
    cur.execute("begin")
    cur.execute(f"insert into {t} values (1)")
    expect_error(cur, "select 1/0", "22012")
    cur.execute("commit")
    assert cur.statusmessage == "ROLLBACK"
    assert val(cur, f"select count(*) from {t}") == 0


def test_transaction_statement_variants(db, cur):
    t = db.table("txv")
    cur.execute(f"create table {t} (id int)")
    for begin, end, kept in [
        ("begin", "commit", True),
        ("start transaction", "end", True),
        ("begin transaction", "rollback", False),
        ("begin", "abort", False),
        ("start transaction isolation level read committed", "commit", True),
        ("begin isolation level repeatable read", "commit", True),
        ("begin transaction isolation level repeatable read", "rollback", False),
    ]:
        cur.execute(f"truncate {t}")
        cur.execute(begin)
        assert cur.statusmessage in ("BEGIN", "START TRANSACTION")
        cur.execute(f"insert into {t} values (1)")
        cur.execute(end)
        assert cur.statusmessage == ("COMMIT" if kept else "ROLLBACK"), (begin, end)
        assert val(cur, f"select count(*) from {t}") == (1 if kept else 0), (begin, end)


def test_transaction_isolation_show(cur):
    assert val(cur, "show transaction_isolation") == "read committed"
    cur.execute("begin isolation level repeatable read")
    assert val(cur, "show transaction_isolation") == "repeatable read"
    cur.execute("commit")
    cur.execute("start transaction isolation level read committed")
    assert val(cur, "show transaction_isolation") == "read committed"
    cur.execute("rollback")


def test_psycopg_managed_transactions(db):
    t = db.table("pytx")
    conn = db.connect(autocommit=False)
    with conn.cursor() as c:
        c.execute(f"create table {t} (id int)")
        conn.commit()
        c.execute(f"insert into {t} values (1)")
        conn.rollback()
        c.execute(f"insert into {t} values (2)")
        conn.commit()
        c.execute(f"select id from {t}")
        assert c.fetchall() == [(2,)]
        conn.rollback()
    with conn.transaction():
        conn.execute(f"insert into {t} values (3)")
    with pytest.raises(psycopg.errors.DivisionByZero):
        with conn.transaction():
            conn.execute(f"insert into {t} values (4)")
            conn.execute("select 1/0")
    assert conn.execute(f"select id from {t} order by id").fetchall() == [(2,), (3,)]
    conn.rollback()


def test_transaction_warnings_are_not_errors(cur):
    cur.execute("commit")  # no transaction in progress: a warning, not an error
    assert cur.statusmessage == "COMMIT"
    cur.execute("rollback")
    assert cur.statusmessage == "ROLLBACK"


# --------------------------------------------------------------------------- settings / maintenance


def test_set_show_reset(cur):
    original = val(cur, "show application_name")
    cur.execute("set application_name = 'steady_test'")
    assert cur.statusmessage == "SET"
    assert val(cur, "show application_name") == "steady_test"
    cur.execute("set application_name to other_name")
    assert val(cur, "show application_name") == "other_name"
    cur.execute("reset application_name")
    assert cur.statusmessage == "RESET"
    assert val(cur, "show application_name") == original

    assert val(cur, "show synchronous_commit") == "on"
    cur.execute("set synchronous_commit = off")
    assert val(cur, "show synchronous_commit") == "off"
    cur.execute("set synchronous_commit to default")
    assert val(cur, "show synchronous_commit") == "on"
    cur.execute("set synchronous_commit = 'off'")
    cur.execute("reset synchronous_commit")
    assert val(cur, "show synchronous_commit") == "on"

    assert val(cur, "show DateStyle") == "ISO, MDY"
    cur.execute("show server_version")
    assert [c.name for c in cur.description] == ["server_version"]
    assert cur.fetchone()[0].split(".")[0] == "15"
    assert val(cur, "show transaction_isolation") == "read committed"


def test_settings_are_per_connection(db):
    c1, c2 = db.connect(), db.connect()
    c1.execute("set application_name = 'conn_one'")
    assert c1.execute("show application_name").fetchone() == ("conn_one",)
    assert c2.execute("show application_name").fetchone() != ("conn_one",)


def test_application_name_from_startup(db):
    c = db.connect(application_name="from_startup")
    assert c.execute("show application_name").fetchone() == ("from_startup",)


def test_server_reports_parameter_status(conn):
    assert conn.info.parameter_status("server_version").split(".")[0] == "15"
    assert conn.info.parameter_status("client_encoding") == "UTF8"
    assert conn.info.parameter_status("DateStyle") == "ISO, MDY"
    assert conn.info.parameter_status("integer_datetimes") == "on"
    assert conn.info.parameter_status("standard_conforming_strings") == "on"
    assert conn.info.server_version // 10000 == 15


def test_checkpoint_vacuum_analyze(db, cur):
    t = db.table("maint")
    cur.execute(f"create table {t} (id int primary key, v text)")
    cur.execute(f"insert into {t} values (1, 'a'), (2, 'b')")
    cur.execute(f"delete from {t} where id = 1")
    cur.execute("checkpoint")
    assert cur.statusmessage == "CHECKPOINT"
    cur.execute("vacuum")
    assert cur.statusmessage == "VACUUM"
    cur.execute(f"vacuum {t}")
    assert cur.statusmessage == "VACUUM"
    cur.execute(f"analyze {t}")
    assert cur.statusmessage == "ANALYZE"
    cur.execute("analyze")
    assert cur.statusmessage == "ANALYZE"
    cur.execute(f"vacuum analyze {t}")
    assert cur.statusmessage == "VACUUM"
    assert rows(cur, f"select id, v from {t}") == [(2, "b")]


def test_unknown_database_3d000(server):
    with pgraw.RawConn(server.host, server.port) as raw:
        msgs = raw.startup(database="nosuchdb")
        errs = pgraw.errors(msgs)
        assert len(errs) == 1, msgs
        assert errs[0]["S"] == "FATAL"
        assert errs[0]["C"] == "3D000"
        assert "nosuchdb" in errs[0]["M"]
        assert msgs[-1] == pgraw.CLOSED  # the server closes the connection after FATAL


def test_unknown_database_psycopg(server):
    with pytest.raises(psycopg.OperationalError) as ei:
        psycopg.connect(server.conninfo(dbname="nosuchdb"))
    assert "nosuchdb" in str(ei.value)


# --------------------------------------------------------------------------- COPY


def test_copy_text_format(db, cur):
    t = db.table("cptext")
    cur.execute(f"create table {t} (id int primary key, name text, amount numeric(8,2), d date)")
    data = (
        "1\tplain\t1.50\t2024-01-01\n"
        "2\t\\N\t\\N\t\\N\n"
        "3\ttab\\there\t-3\t1999-12-31\n"
        "4\tback\\\\slash\t0\t2000-02-29\n"
        "5\tnew\\nline\t4.125\t2020-06-15\n"
        "6\t\t7\t2021-01-01\n"
        "7\tünïcødé\t8\t2022-01-01\n"
    )
    with cur.copy(f"copy {t} from stdin") as cp:
        cp.write(data)
    assert cur.rowcount == 7
    assert rows(cur, f"select id, name, amount, d from {t} order by id") == [
        (1, "plain", Decimal("1.50"), dt.date(2024, 1, 1)),
        (2, None, None, None),
        (3, "tab\there", Decimal("-3.00"), dt.date(1999, 12, 31)),
        (4, "back\\slash", Decimal("0.00"), dt.date(2000, 2, 29)),
        (5, "new\nline", Decimal("4.13"), dt.date(2020, 6, 15)),
        (6, "", Decimal("7.00"), dt.date(2021, 1, 1)),
        (7, "ünïcødé", Decimal("8.00"), dt.date(2022, 1, 1)),
    ]


def test_copy_text_with_column_list_and_format_option(db, cur):
    t = db.table("cpcols")
    cur.execute(f"create table {t} (id serial primary key, a text, b int default 42)")
    with cur.copy(f"copy {t} (a) from stdin with (format text)") as cp:
        cp.write("x\ny\n")
        cp.write("z\n")
    assert cur.rowcount == 3
    assert rows(cur, f"select id, a, b from {t} order by id") == [(1, "x", 42), (2, "y", 42), (3, "z", 42)]


def test_copy_csv(db, cur):
    t = db.table("cpcsv")
    cur.execute(f"create table {t} (id int, name text, note varchar(20))")
    data = (
        "1,simple,x\n"
        '2,"quoted, with comma","say ""hi"""\n'
        '3,,""\n'
        '4,"multi\nline",tab\there\n'
        "5,\\N,back\\slash\n"
    )
    with cur.copy(f"copy {t} (id, name, note) from stdin with (format csv)") as cp:
        cp.write(data)
    assert cur.rowcount == 5
    assert rows(cur, f"select id, name, note from {t} order by id") == [
        (1, "simple", "x"),
        (2, "quoted, with comma", 'say "hi"'),
        (3, None, ""),  # unquoted empty is NULL, quoted empty is an empty string
        (4, "multi\nline", "tab\there"),
        (5, "\\N", "back\\slash"),  # no backslash escapes in CSV
    ]


def test_copy_csv_header(db, cur):
    t = db.table("cpcsvh")
    cur.execute(f"create table {t} (id int, v text)")
    with cur.copy(f"copy {t} from stdin with (format csv, header true)") as cp:
        cp.write("id,v\n1,one\n2,two\n")
    assert cur.rowcount == 2
    assert rows(cur, f"select id, v from {t} order by id") == [(1, "one"), (2, "two")]


def test_copy_bad_row_leaves_table_unchanged(db, cur):
    t = db.table("cpbad")
    cur.execute(f"create table {t} (id int primary key, v text)")
    cur.execute(f"insert into {t} values (100, 'existing')")
    with pytest.raises(psycopg.Error) as ei:
        with cur.copy(f"copy {t} from stdin") as cp:
            cp.write("1\tok\n2\tok\nnot_a_number\tbad\n4\tok\n")
    assert ei.value.sqlstate == "22P02"
    assert rows(cur, f"select id, v from {t}") == [(100, "existing")]
    with pytest.raises(psycopg.Error) as ei:
        with cur.copy(f"copy {t} from stdin with (format csv)") as cp:
            cp.write("1,ok\nx,bad\n")
    assert ei.value.sqlstate == "22P02"
    # duplicate key inside COPY also rolls back the whole COPY
    with pytest.raises(psycopg.Error) as ei:
        with cur.copy(f"copy {t} from stdin") as cp:
            cp.write("1\ta\n2\tb\n100\tdup\n")
    assert ei.value.sqlstate == "23505"
    assert rows(cur, f"select id, v from {t}") == [(100, "existing")]
    # the connection is usable afterwards
    with cur.copy(f"copy {t} from stdin") as cp:
        cp.write("1\tgood\n")
    assert val(cur, f"select count(*) from {t}") == 2


def test_copy_column_count_mismatch(db, cur):
    t = db.table("cpcnt")
    cur.execute(f"create table {t} (id int, v text)")
    with pytest.raises(psycopg.Error) as ei:
        with cur.copy(f"copy {t} from stdin") as cp:
            cp.write("1\n")
    assert ei.value.sqlstate == "22P04"
    with pytest.raises(psycopg.Error) as ei:
        with cur.copy(f"copy {t} from stdin") as cp:
            cp.write("1\ta\textra\n")
    assert ei.value.sqlstate == "22P04"
    assert val(cur, f"select count(*) from {t}") == 0


def test_copy_into_missing_table(cur):
    with pytest.raises(psycopg.Error) as ei:
        with cur.copy("copy no_such_table_copy from stdin") as cp:
            cp.write("1\n")
    assert ei.value.sqlstate == "42P01"


def test_copy_inside_transaction(db, cur):
    t = db.table("cptx")
    cur.execute(f"create table {t} (id int)")
    cur.execute("begin")
    with cur.copy(f"copy {t} from stdin") as cp:
        cp.write("1\n2\n3\n")
    assert val(cur, f"select count(*) from {t}") == 3
    cur.execute("rollback")
    assert val(cur, f"select count(*) from {t}") == 0


def test_copy_large_streamed(db, cur):
    t = db.table("cpbig")
    cur.execute(f"create table {t} (id int primary key, v text)")
    n = 50_000
    with cur.copy(f"copy {t} from stdin") as cp:
        for start in range(1, n + 1, 5000):
            cp.write("".join(f"{i}\tvalue {i}\n" for i in range(start, min(start + 5000, n + 1))))
    assert cur.rowcount == n
    assert one(cur, f"select count(*), sum(id), min(v), max(id) from {t}") == (
        n,
        n * (n + 1) // 2,
        "value 1",
        n,
    )


def test_deallocate_drops_prepared_statements(db):
    """psycopg deallocates its prepared statements after a ROLLBACK (DEALLOCATE ALL)."""
    with db.connect() as conn:
        assert conn.execute("select %s::int + 1", (1,), prepare=True).fetchone() == (2,)
        conn.execute("begin")
        assert conn.execute("select %s::int + 1", (2,), prepare=True).fetchone() == (3,)
        conn.execute("rollback")
        assert conn.execute("select %s::int + 1", (3,), prepare=True).fetchone() == (4,)
        cur = conn.cursor()
        expect_error(cur, "deallocate no_such_statement", "26000")
        cur.execute("deallocate all")
        assert cur.statusmessage == "DEALLOCATE ALL"
    server = db.server
    with pgraw.RawConn(server.host, server.port) as raw:
        raw.startup()
        raw.send(
            pgraw.message(b"P", pgraw.cstr("s1") + pgraw.cstr("select 1") + b"\0\0")
            + pgraw.message(b"S")
        )
        assert not pgraw.errors(raw.read_until_ready())
        msgs = raw.simple_query("deallocate prepare s1")
        assert not pgraw.errors(msgs)
        raw.send(
            pgraw.message(b"B", b"\0" + pgraw.cstr("s1") + b"\0\0\0\0\0\0")
            + pgraw.message(b"S")
        )
        assert [e["C"] for e in pgraw.errors(raw.read_until_ready())] == ["26000"]
