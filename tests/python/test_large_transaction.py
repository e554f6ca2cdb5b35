"""A transaction whose own rows pass `write_set_work_mem` spills them out of memory: it
still reads its own writes, rolls back to savepoints, holds its rows against other
writers, commits (its log record written in pieces) and survives a crash.

The read and lock checks pass against PostgreSQL 15 too (STEADYDB_TEST_EXTERNAL), where
the setting does not exist and is not set."""

from __future__ import annotations

import threading
import time

import psycopg
import pytest

from crash_util import nodes  # noqa: F401  (fixture)
from wal_format import KIND_WRITE_SET_PIECE, Log


def insert_rows(conn, table: str, rows: list[tuple[int, str]], batch: int = 500) -> None:
    for i in range(0, len(rows), batch):
        chunk = rows[i : i + batch]
        values = ",".join(["(%s, %s)"] * len(chunk))
        conn.execute(
            f"insert into {table} values {values}",
            [v for row in chunk for v in row],
        )


def spill_small(conn, db) -> None:
    if not db.external:
        conn.execute("set write_set_work_mem = '64kB'")


def test_spilled_rows_read_like_rows_in_memory(db, conn):
    t = db.table()
    conn.execute(f"create table {t} (a int primary key, b text)")
    insert_rows(conn, t, [(i, f"old {i}") for i in range(1, 1001)])
    spill_small(conn, db)
    model = {i: f"old {i}" for i in range(1, 1001)}
    conn.execute("begin")
    insert_rows(conn, t, [(i, f"row {i}") for i in range(1001, 30001)])
    model.update({i: f"row {i}" for i in range(1001, 30001)})
    conn.execute(f"update {t} set b = 'upd' where a between 10 and 20")
    conn.execute(f"update {t} set b = 'upd2' where a between 2000 and 2100")
    for i in list(range(10, 21)) + list(range(2000, 2101)):
        model[i] = "upd" if i <= 20 else "upd2"
    conn.execute(f"delete from {t} where a between 30 and 40 or a between 5000 and 5999")
    for i in list(range(30, 41)) + list(range(5000, 6000)):
        del model[i]
    # Deleted (spilled by now), then inserted again.
    insert_rows(conn, t, [(5500, "reborn"), (35, "back")])
    model[5500], model[35] = "reborn", "back"
    assert conn.execute(f"select count(*), min(a), max(a) from {t}").fetchone() == (
        len(model),
        min(model),
        max(model),
    )
    got = conn.execute(f"select a, b from {t} where a between 4990 and 5510 order by a").fetchall()
    assert got == [(k, v) for k, v in sorted(model.items()) if 4990 <= k <= 5510]
    for key in (5, 15, 35, 5500, 5501, 29999, 30000, 30001):
        row = conn.execute(f"select b from {t} where a = %s", (key,)).fetchone()
        assert row == ((model[key],) if key in model else None), key
    desc = conn.execute(f"select a from {t} order by a desc limit 3").fetchall()
    assert desc == [(k,) for k in sorted(model, reverse=True)[:3]]
    # A duplicate of a spilled key is 23505 in a savepoint, which rolls back cleanly.
    conn.execute("savepoint s1")
    with pytest.raises(psycopg.errors.UniqueViolation):
        conn.execute(f"insert into {t} values (29000, 'dup')")
    conn.execute("rollback to savepoint s1")
    conn.execute("savepoint s2")
    insert_rows(conn, t, [(i, "sp") for i in range(30001, 32001)])
    conn.execute(f"update {t} set b = 'sp-upd' where a = 1500")
    conn.execute(f"delete from {t} where a = 1501")
    conn.execute("rollback to savepoint s2")
    assert conn.execute(f"select count(*) from {t}").fetchone() == (len(model),)
    assert conn.execute(f"select b from {t} where a = 1500").fetchone() == (model[1500],)
    conn.execute("commit")
    got = conn.execute(f"select a, b from {t} order by a").fetchall()
    assert got == sorted(model.items())


def test_a_spilled_key_holds_off_other_writers_until_commit(db, conn, server):
    t = db.table()
    conn.execute(f"create table {t} (a int primary key, b text)")
    spill_small(conn, db)
    conn.execute("begin")
    insert_rows(conn, t, [(i, f"row {i}") for i in range(1, 20001)])
    outcome: list[object] = []

    def other_writer():
        with psycopg.connect(server.conninfo(), autocommit=True) as other:
            try:
                other.execute(f"insert into {t} values (7, 'other')")
                outcome.append("inserted")
            except psycopg.Error as e:
                outcome.append(e.sqlstate)

    waiter = threading.Thread(target=other_writer)
    waiter.start()
    time.sleep(1.0)
    assert outcome == [], "the other insert did not wait for the transaction holding key 7"
    conn.execute("commit")
    waiter.join(30)
    assert outcome == ["23505"]
    # A key the transaction never wrote was free all along; the rows are all there.
    conn.execute(f"insert into {t} values (20001, 'after')")
    assert conn.execute(f"select count(*) from {t}").fetchone() == (20001,)


def test_spilled_rows_roll_back(db, conn):
    t = db.table()
    conn.execute(f"create table {t} (a int primary key, b text)")
    spill_small(conn, db)
    conn.execute("begin")
    insert_rows(conn, t, [(i, "x" * 50) for i in range(1, 20001)])
    conn.execute("rollback")
    assert conn.execute(f"select count(*) from {t}").fetchone() == (0,)
    conn.execute(f"insert into {t} values (1, 'one')")
    assert conn.execute(f"select count(*) from {t}").fetchone() == (1,)


@pytest.mark.timeout(300)
def test_commit_logged_in_pieces_survives_a_crash(nodes):  # noqa: F811
    """Commits logged in pieces, with checkpoints running meanwhile, then kill -9: every
    acknowledged one is whole after recovery, which reads its pieces back."""
    node = nodes({"write_set_work_mem": "64kB"}).start()
    with node.connect() as conn:
        conn.execute("create table big (a int primary key, txn int, b text)")
    stop = threading.Event()

    def checkpoints():
        with node.connect() as c:
            while not stop.is_set():
                try:
                    c.execute("checkpoint")
                except psycopg.Error:
                    return

    def big_transaction(conn, txn):
        conn.execute("begin")
        rows = [(txn * 100_000 + i, txn, f"t{txn} row {i}") for i in range(20_000)]
        for i in range(0, len(rows), 500):
            chunk = rows[i : i + 500]
            conn.execute(
                "insert into big values " + ",".join(["(%s, %s, %s)"] * len(chunk)),
                [v for row in chunk for v in row],
            )
        conn.execute("update big set b = 'changed' where txn = %s and a %% 7 = 0", (txn,))
        conn.execute("commit")
        expected[txn] = 20_000

    cp = threading.Thread(target=checkpoints)
    cp.start()
    expected = {}
    try:
        with node.connect() as conn:
            for txn in range(1, 4):
                big_transaction(conn, txn)
    finally:
        stop.set()
        cp.join(30)
    # The last one only recovery can bring back: no checkpoint follows it.
    with node.connect() as conn:
        big_transaction(conn, 4)
    node.kill()
    records, _, _ = Log(node.datadir).walk()
    pieces = [r for r in records if r.kind == KIND_WRITE_SET_PIECE]
    assert pieces, "no commit was logged in pieces"
    assert all(r.length < 300 * 1024 for r in records), "a record was not written in pieces"

    node.start()
    with node.connect() as conn:
        got = dict(conn.execute("select txn, count(*) from big group by txn").fetchall())
        assert got == expected
        changed = conn.execute("select count(*) from big where b = 'changed'").fetchone()[0]
        assert changed == sum(len([a for a in range(t * 100_000, t * 100_000 + 20_000) if a % 7 == 0]) for t in expected)
    node.stop_clean()
