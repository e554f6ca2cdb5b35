"""Concurrency and isolation behaviour with two connections (PostgreSQL docs, chapter 13.2)."""

from __future__ import annotations

import threading
import time

import psycopg
import pytest

RC = "read committed"
RR = "repeatable read"
BLOCK_CHECK = 0.5  # how long a statement must stay blocked
FINISH = 15.0  # how long a statement may take once it can proceed


class Bg:
    """Run one statement in a daemon thread so a hung server cannot hang the test."""

    def __init__(self, conn: psycopg.Connection, sql: str, params=None, prepare=None):
        self.conn = conn
        self.sql = sql
        self.params = params
        self.prepare = prepare
        self.result = None
        self.error: BaseException | None = None
        self.rowcount = None
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        try:
            cur = self.conn.execute(self.sql, self.params, prepare=self.prepare)
            self.rowcount = cur.rowcount
            self.result = cur.fetchall() if cur.description else None
        except BaseException as e:  # noqa: BLE001 - reported to the test
            self.error = e
        finally:
            self.done.set()

    def still_blocked(self, seconds: float = BLOCK_CHECK) -> bool:
        return not self.done.wait(seconds)

    def wait(self, timeout: float = FINISH):
        assert self.done.wait(timeout), f"{self.sql!r} did not finish within {timeout} s"
        return self

    def ok(self, timeout: float = FINISH):
        self.wait(timeout)
        if self.error is not None:
            raise AssertionError(f"{self.sql!r} failed: {self.error!r}") from self.error
        return self.result

    def sqlstate(self, timeout: float = FINISH):
        self.wait(timeout)
        assert self.error is not None, f"{self.sql!r} succeeded, an error was expected"
        assert isinstance(self.error, psycopg.Error), repr(self.error)
        return self.error.sqlstate


def q(conn, sql, params=None):
    cur = conn.execute(sql, params)
    return cur.fetchall() if cur.description else cur.rowcount


def val(conn, sql, params=None):
    res = q(conn, sql, params)
    assert len(res) == 1 and len(res[0]) == 1, res
    return res[0][0]


def sqlstate_of(conn, sql):
    with pytest.raises(psycopg.Error) as ei:
        conn.execute(sql)
    return ei.value.sqlstate


@pytest.fixture
def acct(db):
    t = db.table("acct")
    with db.connect() as c:
        c.execute(f"create table {t} (id int primary key, balance int not null, owner text)")
        c.execute(f"insert into {t} values (1, 100, 'a'), (2, 100, 'b')")
    return t


@pytest.fixture
def two(db):
    return db.connect(), db.connect()


# --------------------------------------------------------------------------- dirty reads


@pytest.mark.parametrize("level", [RC, RR])
def test_no_dirty_read(acct, two, level):
    a, b = two
    a.execute("begin")
    a.execute(f"update {acct} set balance = 999 where id = 1")
    b.execute(f"begin isolation level {level}")
    # a reader is not blocked by a writer and does not see uncommitted data
    assert Bg(b, f"select balance from {acct} where id = 1").ok(timeout=5) == [(100,)]
    assert val(b, f"select sum(balance) from {acct}") == 200
    a.execute("rollback")
    assert val(b, f"select balance from {acct} where id = 1") == 100
    b.execute("commit")
    assert val(b, f"select balance from {acct} where id = 1") == 100


def test_no_dirty_read_of_uncommitted_insert_and_delete(acct, two):
    a, b = two
    a.execute("begin")
    a.execute(f"insert into {acct} values (3, 300, 'c')")
    a.execute(f"delete from {acct} where id = 2")
    assert q(b, f"select id from {acct} order by id") == [(1,), (2,)]
    a.execute("commit")
    assert q(b, f"select id from {acct} order by id") == [(1,), (3,)]


# --------------------------------------------------------------------------- non-repeatable reads / phantoms


def test_non_repeatable_read_happens_in_read_committed(acct, two):
    a, b = two
    a.execute("begin isolation level read committed")
    assert val(a, f"select balance from {acct} where id = 1") == 100
    b.execute(f"update {acct} set balance = balance + 10 where id = 1")
    assert val(a, f"select balance from {acct} where id = 1") == 110
    b.execute(f"insert into {acct} values (3, 1, 'c')")
    assert val(a, f"select count(*) from {acct}") == 3  # phantom visible
    a.execute("commit")


def test_read_committed_sees_latest_committed_per_statement(acct, two):
    a, b = two
    a.execute("begin")
    assert val(a, f"select sum(balance) from {acct}") == 200
    b.execute("begin")
    b.execute(f"update {acct} set balance = 0 where id = 2")
    assert val(a, f"select sum(balance) from {acct}") == 200  # not committed yet
    b.execute("commit")
    assert val(a, f"select sum(balance) from {acct}") == 100
    b.execute(f"delete from {acct} where id = 1")
    assert q(a, f"select id, balance from {acct} order by id") == [(2, 0)]
    a.execute("commit")


def test_no_non_repeatable_read_in_repeatable_read(acct, two):
    a, b = two
    a.execute("begin isolation level repeatable read")
    assert val(a, f"select balance from {acct} where id = 1") == 100
    b.execute(f"update {acct} set balance = balance + 10 where id = 1")
    b.execute(f"insert into {acct} values (3, 1, 'c')")
    b.execute(f"delete from {acct} where id = 2")
    assert val(a, f"select balance from {acct} where id = 1") == 100
    assert q(a, f"select id, balance from {acct} order by id") == [(1, 100), (2, 100)]
    assert val(a, f"select count(*) from {acct}") == 2  # no phantom either
    a.execute("commit")
    assert q(a, f"select id, balance from {acct} order by id") == [(1, 110), (3, 1)]


def test_repeatable_read_snapshot_starts_at_first_statement(acct, two):
    a, b = two
    a.execute("begin isolation level repeatable read")
    b.execute(f"update {acct} set balance = 555 where id = 1")  # before a's first query
    assert val(a, f"select balance from {acct} where id = 1") == 555
    b.execute(f"update {acct} set balance = 666 where id = 1")
    assert val(a, f"select balance from {acct} where id = 1") == 555
    a.execute("commit")


def test_repeatable_read_sees_own_writes(acct, two):
    a, b = two
    a.execute("begin isolation level repeatable read")
    assert val(a, f"select count(*) from {acct}") == 2
    a.execute(f"insert into {acct} values (7, 7, 'own')")
    a.execute(f"update {acct} set balance = balance - 1 where id = 1")
    assert q(a, f"select id, balance from {acct} order by id") == [(1, 99), (2, 100), (7, 7)]
    assert q(b, f"select id, balance from {acct} order by id") == [(1, 100), (2, 100)]
    a.execute("commit")
    assert q(b, f"select id, balance from {acct} order by id") == [(1, 99), (2, 100), (7, 7)]


# --------------------------------------------------------------------------- lost updates


def test_lost_update_prevented_in_read_committed(acct, two):
    a, b = two
    a.execute("begin")
    b.execute("begin")
    assert q(a, f"update {acct} set balance = balance + 10 where id = 1") == 1
    bg = Bg(b, f"update {acct} set balance = balance + 10 where id = 1 returning balance")
    assert bg.still_blocked(), "second UPDATE of the same row did not wait for the first"
    a.execute("commit")
    assert bg.ok() == [(120,)]  # re-evaluated against the committed row
    b.execute("commit")
    assert val(a, f"select balance from {acct} where id = 1") == 120


def test_read_committed_update_waits_then_rolls_forward_after_rollback(acct, two):
    a, b = two
    a.execute("begin")
    b.execute("begin")
    a.execute(f"update {acct} set balance = 0 where id = 1")
    bg = Bg(b, f"update {acct} set balance = balance + 1 where id = 1 returning balance")
    assert bg.still_blocked()
    a.execute("rollback")
    assert bg.ok() == [(101,)]
    b.execute("commit")
    assert val(a, f"select balance from {acct} where id = 1") == 101


def test_read_committed_recheck_where_clause(acct, two):
    """PostgreSQL docs 13.2.1: the waiting UPDATE re-evaluates its WHERE on the new row version."""
    a, b = two
    a.execute("begin")
    b.execute("begin")
    a.execute(f"update {acct} set balance = balance + 10 where id = 1")
    bg = Bg(b, f"update {acct} set balance = balance * 2 where id = 1 and balance = 100")
    assert bg.still_blocked()
    a.execute("commit")
    bg.ok()
    assert bg.rowcount == 0  # the row no longer matches
    b.execute("commit")
    assert val(a, f"select balance from {acct} where id = 1") == 110


def test_read_committed_update_of_row_deleted_meanwhile(acct, two):
    a, b = two
    a.execute("begin")
    a.execute(f"delete from {acct} where id = 2")
    bg = Bg(b, f"update {acct} set balance = 1 where id = 2")
    assert bg.still_blocked()
    a.execute("commit")
    bg.ok()
    assert bg.rowcount == 0
    assert q(a, f"select id from {acct} order by id") == [(1,)]


def test_repeatable_read_concurrent_update_fails_40001(acct, two):
    a, b = two
    a.execute("begin isolation level repeatable read")
    b.execute("begin isolation level repeatable read")
    assert val(a, f"select balance from {acct} where id = 1") == 100
    assert val(b, f"select balance from {acct} where id = 1") == 100
    a.execute(f"update {acct} set balance = balance + 10 where id = 1")
    bg = Bg(b, f"update {acct} set balance = balance + 10 where id = 1")
    assert bg.still_blocked()
    a.execute("commit")
    assert bg.sqlstate() == "40001"
    assert sqlstate_of(b, "select 1") == "25P02"
    b.execute("rollback")
    assert val(b, f"select balance from {acct} where id = 1") == 110


def test_repeatable_read_concurrent_update_proceeds_if_first_rolls_back(acct, two):
    a, b = two
    a.execute("begin isolation level repeatable read")
    b.execute("begin isolation level repeatable read")
    assert val(a, f"select balance from {acct} where id = 1") == 100
    assert val(b, f"select balance from {acct} where id = 1") == 100
    a.execute(f"update {acct} set balance = balance + 10 where id = 1")
    bg = Bg(b, f"update {acct} set balance = balance + 5 where id = 1 returning balance")
    assert bg.still_blocked()
    a.execute("rollback")
    assert bg.ok() == [(105,)]
    b.execute("commit")
    assert val(a, f"select balance from {acct} where id = 1") == 105


def test_repeatable_read_update_of_row_changed_after_snapshot(acct, two):
    a, b = two
    a.execute("begin isolation level repeatable read")
    assert val(a, f"select balance from {acct} where id = 2") == 100
    b.execute(f"update {acct} set balance = 1 where id = 2")  # committed after a's snapshot
    assert sqlstate_of(a, f"update {acct} set balance = balance + 1 where id = 2") == "40001"
    a.execute("rollback")
    a.execute("begin isolation level repeatable read")
    assert val(a, f"select balance from {acct} where id = 1") == 100
    b.execute(f"delete from {acct} where id = 1")
    assert sqlstate_of(a, f"delete from {acct} where id = 1") == "40001"
    a.execute("rollback")
    # rows not touched by others can be updated normally
    a.execute("begin isolation level repeatable read")
    assert val(a, f"select count(*) from {acct}") == 1
    b.execute(f"insert into {acct} values (9, 9, 'z')")
    assert q(a, f"update {acct} set balance = balance + 1 where id = 2") == 1
    a.execute("commit")
    assert q(a, f"select id, balance from {acct} order by id") == [(2, 2), (9, 9)]


# --------------------------------------------------------------------------- read skew / write skew


def test_read_skew_happens_in_read_committed(acct, two):
    a, b = two
    a.execute("begin isolation level read committed")
    x = val(a, f"select balance from {acct} where id = 1")
    b.execute("begin")
    b.execute(f"update {acct} set balance = balance - 40 where id = 1")
    b.execute(f"update {acct} set balance = balance + 40 where id = 2")
    b.execute("commit")
    y = val(a, f"select balance from {acct} where id = 2")
    a.execute("commit")
    assert (x, y) == (100, 140)  # inconsistent view: sum 240


def test_read_skew_prevented_in_repeatable_read(acct, two):
    a, b = two
    a.execute("begin isolation level repeatable read")
    x = val(a, f"select balance from {acct} where id = 1")
    b.execute("begin")
    b.execute(f"update {acct} set balance = balance - 40 where id = 1")
    b.execute(f"update {acct} set balance = balance + 40 where id = 2")
    b.execute("commit")
    y = val(a, f"select balance from {acct} where id = 2")
    total = val(a, f"select sum(balance) from {acct}")
    a.execute("commit")
    assert (x, y, total) == (100, 100, 200)
    assert q(a, f"select id, balance from {acct} order by id") == [(1, 60), (2, 140)]


def test_write_skew_allowed_in_repeatable_read(db, two):
    """Snapshot isolation: two doctors both go off call (both commits succeed)."""
    t = db.table("oncall")
    a, b = two
    a.execute(f"create table {t} (name text primary key, on_call boolean not null)")
    a.execute(f"insert into {t} values ('alice', true), ('bob', true)")
    a.execute("begin isolation level repeatable read")
    b.execute("begin isolation level repeatable read")
    assert val(a, f"select count(*) from {t} where on_call") == 2
    assert val(b, f"select count(*) from {t} where on_call") == 2
    assert q(a, f"update {t} set on_call = false where name = 'alice'") == 1
    assert Bg(b, f"update {t} set on_call = false where name = 'bob'").wait(5).error is None
    a.execute("commit")
    b.execute("commit")
    assert val(a, f"select count(*) from {t} where on_call") == 0


# --------------------------------------------------------------------------- unique keys under concurrency


def test_concurrent_insert_same_key_waits_then_23505(acct, two):
    a, b = two
    a.execute("begin")
    a.execute(f"insert into {acct} values (5, 5, 'first')")
    bg = Bg(b, f"insert into {acct} values (5, 50, 'second')")
    assert bg.still_blocked(), "insert of a key being inserted by another transaction must wait"
    a.execute("commit")
    assert bg.sqlstate() == "23505"
    assert q(a, f"select balance, owner from {acct} where id = 5") == [(5, "first")]


def test_concurrent_insert_same_key_proceeds_after_rollback(acct, two):
    a, b = two
    a.execute("begin")
    a.execute(f"insert into {acct} values (5, 5, 'first')")
    bg = Bg(b, f"insert into {acct} values (5, 50, 'second')")
    assert bg.still_blocked()
    a.execute("rollback")
    bg.ok()
    assert bg.rowcount == 1
    assert q(a, f"select balance, owner from {acct} where id = 5") == [(50, "second")]


def test_concurrent_upsert_waits_and_updates(acct, two):
    a, b = two
    a.execute("begin")
    a.execute(f"insert into {acct} values (6, 1, 'first')")
    bg = Bg(
        b,
        f"insert into {acct} values (6, 10, 'second') on conflict (id) "
        f"do update set balance = {acct}.balance + excluded.balance returning balance, owner",
    )
    assert bg.still_blocked()
    a.execute("commit")
    assert bg.ok() == [(11, "first")]


# --------------------------------------------------------------------------- deadlock / cancel


def test_deadlock_detected_40p01(acct, two):
    a, b = two
    a.execute("begin")
    b.execute("begin")
    a.execute(f"update {acct} set balance = balance + 1 where id = 1")
    b.execute(f"update {acct} set balance = balance + 1 where id = 2")
    bga = Bg(a, f"update {acct} set balance = balance + 1 where id = 2")
    assert bga.still_blocked()
    bgb = Bg(b, f"update {acct} set balance = balance + 1 where id = 1")
    bga.wait(30)
    bgb.wait(30)
    outcomes = sorted([("error", x.error.sqlstate) if x.error else ("ok", x.rowcount) for x in (bga, bgb)])
    assert outcomes == [("error", "40P01"), ("ok", 1)], outcomes
    victim, survivor = (a, b) if bga.error else (b, a)
    assert sqlstate_of(victim, "select 1") == "25P02"
    victim.execute("rollback")
    survivor.execute("commit")
    # the survivor's two updates are committed, the victim's first update is gone
    balances = q(a, f"select id, balance from {acct} order by id")
    assert balances == [(1, 101), (2, 101)]


def test_cancel_lock_wait_57014(acct, two):
    a, b = two
    a.execute("begin")
    a.execute(f"update {acct} set balance = 0 where id = 1")
    b.execute("begin")
    assert q(b, f"update {acct} set balance = balance + 1 where id = 2") == 1
    bg = Bg(b, f"update {acct} set balance = balance + 1 where id = 1")
    assert bg.still_blocked()
    start = time.monotonic()
    canceller = threading.Thread(target=b.cancel, daemon=True)
    canceller.start()
    canceller.join(10)
    assert bg.sqlstate(timeout=10) == "57014"
    assert time.monotonic() - start < 10
    assert sqlstate_of(b, "select 1") == "25P02"
    b.execute("rollback")
    assert val(b, "select 1") == 1
    a.execute("commit")
    # b's earlier update was rolled back; b can now update the previously locked row
    assert q(b, f"update {acct} set balance = balance + 5 where id = 1") == 1
    assert q(b, f"select id, balance from {acct} order by id") == [(1, 5), (2, 100)]


def test_cancel_lock_wait_autocommit(acct, two):
    a, b = two
    a.execute("begin")
    a.execute(f"update {acct} set balance = 0 where id = 2")
    bg = Bg(b, f"delete from {acct} where id = 2")
    assert bg.still_blocked()
    b.cancel()
    assert bg.sqlstate(timeout=10) == "57014"
    assert val(b, "select 42") == 42  # no transaction was open: usable right away
    a.execute("rollback")
    assert q(b, f"select id, balance from {acct} order by id") == [(1, 100), (2, 100)]


def test_cancel_idle_connection_is_harmless(two):
    a, _ = two
    a.cancel()
    time.sleep(0.2)
    assert val(a, "select 7") == 7


# -------------------------------------------------------------------- deferred increments
# UPDATE ... SET c = c + e WHERE <key> = ... in an explicit READ COMMITTED transaction holds
# its row with a deferred increment that other increments share, and is applied to the
# latest version at commit. A statement defers once a transaction that ran it committed
# without touching its table again (see `plan::DeferIncrements`), so these tests run each
# connection's increment once first, as a prepared statement (one plan per connection).

INC = "update {t} set balance = balance + %s where id = %s"


def _inc(conn, acct, delta, row):
    return conn.execute(INC.format(t=acct), (delta, row), prepare=True).rowcount


def _learn(conn, acct):
    conn.execute("begin")
    assert _inc(conn, acct, 0, 2) == 1
    conn.execute("commit")


def _both_begin(acct, a, b):
    """Both connections defer their increments, and each has a transaction open."""
    for conn in (a, b):
        _learn(conn, acct)
        conn.execute("begin")


def test_increments_to_one_row_do_not_wait_for_each_other(acct, db, two):
    a, b = two
    _both_begin(acct, a, b)
    assert _inc(a, acct, 10, 1) == 1
    bg = Bg(b, INC.format(t=acct), (5, 1), prepare=True)
    assert bg.ok(timeout=5) is None and bg.rowcount == 1, "the second increment waited"
    with db.connect() as other:
        assert val(other, f"select balance from {acct} where id = 1") == 100, "nothing committed"
    b.execute("commit")
    a.execute("commit")
    assert val(a, f"select balance from {acct} where id = 1") == 115


def test_reading_an_incremented_row_waits_for_earlier_increments(acct, two):
    a, b = two
    _both_begin(acct, a, b)
    assert _inc(a, acct, 10, 1) == 1
    assert _inc(b, acct, 5, 1) == 1
    read = Bg(b, f"select balance from {acct} where id = 1")
    assert read.still_blocked(), "b read its row before the increment ahead of it was done"
    a.execute("commit")
    assert read.ok() == [(115,)], "b sees what it will commit"
    assert _inc(b, acct, 1, 1) == 1
    assert val(b, f"select balance from {acct} where id = 1") == 116
    b.execute("commit")
    assert val(a, f"select balance from {acct} where id = 1") == 116


def test_a_writer_waits_for_increments_and_new_ones_wait_behind_it(acct, db, two):
    a, b = two
    c = db.connect()
    for conn in (a, b, c):
        _learn(conn, acct)
    a.execute("begin")
    assert _inc(a, acct, 10, 1) == 1
    b.execute("begin")
    writer = Bg(b, f"update {acct} set balance = 0 where id = 1")
    assert writer.still_blocked(), "an ordinary UPDATE did not wait for the increment"
    c.execute("begin")
    late = Bg(c, INC.format(t=acct), (1, 1), prepare=True)
    assert late.still_blocked(), "an increment overtook a waiting writer"
    a.execute("commit")
    writer.ok()
    assert late.still_blocked(), "an increment shared the row with an ordinary writer"
    b.execute("commit")
    late.ok()
    c.execute("commit")
    assert val(a, f"select balance from {acct} where id = 1") == 1


def test_an_increment_that_could_overflow_waits_for_the_others(acct, two):
    """An increment that overflows only if another pending increment commits waits for that
    one, as PostgreSQL's UPDATE waits for the row lock, and then fails at the statement (or
    succeeds, if the other rolled back): never at COMMIT."""
    from psycopg.types.numeric import Int4

    def inc(conn, delta):
        # One parameter type throughout, so each connection runs one prepared statement.
        return conn.execute(INC.format(t=acct), (Int4(delta), Int4(1)), prepare=True).rowcount

    def learn_and_begin(conn):
        conn.execute("begin")
        assert inc(conn, 0) == 1
        conn.execute("commit")
        conn.execute("begin")

    a, b = two
    learn_and_begin(a)
    learn_and_begin(b)
    assert inc(a, 2147483000) == 1
    late = Bg(b, INC.format(t=acct), (Int4(600), Int4(1)), prepare=True)
    assert late.still_blocked(), "an increment that may overflow did not wait"
    a.execute("commit")
    assert late.sqlstate(timeout=5) == "22003"
    b.execute("rollback")
    # A plan prepared again after a rollback learns again (`plan::DeferIncrements`).
    learn_and_begin(a)
    learn_and_begin(b)
    assert inc(a, -2147483000) == 1
    assert inc(b, -2147483000) == 1, "in range whichever commits: no wait"
    a.execute("rollback")
    b.execute("commit")
    assert val(a, f"select balance from {acct} where id = 1") == 100


def test_an_increment_rolled_back_leaves_the_others(acct, two):
    a, b = two
    _both_begin(acct, a, b)
    assert _inc(a, acct, 1000, 1) == 1
    assert _inc(b, acct, 7, 1) == 1
    a.execute("rollback")
    b.execute("commit")
    assert val(a, f"select balance from {acct} where id = 1") == 107


def test_mixed_writers_on_hot_rows_lose_nothing(acct, db):
    """Pure increments, increments read back, and ordinary writes, on two hot rows in the
    same order: nothing deadlocks (as with exclusive locks taken in one order) and the
    balances count every committed increment."""
    rounds = 60
    errors: list[BaseException] = []
    added = [0, 0]
    lock = threading.Lock()

    def worker(kind: int):
        try:
            with db.connect() as conn:
                _learn(conn, acct)
                mine = [0, 0]
                for i in range(rounds):
                    conn.execute("begin")
                    if kind == 2:
                        conn.execute(f"update {acct} set owner = %s where id = 1", (f"w{i}",))
                    else:
                        assert _inc(conn, acct, 1, 1) == 1
                        mine[0] += 1
                    if kind == 1:
                        seen = val(conn, f"select balance from {acct} where id = 1")
                        assert seen >= 100 + mine[0]
                    assert _inc(conn, acct, 2, 2) == 1
                    mine[1] += 2
                    conn.execute("commit")
                with lock:
                    added[0] += mine[0]
                    added[1] += mine[1]
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k % 3,), daemon=True) for k in range(9)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads), "a worker hung"
    assert not errors, errors
    with db.connect() as conn:
        assert q(conn, f"select id, balance from {acct} order by id") == [
            (1, 100 + added[0]),
            (2, 100 + added[1]),
        ]
