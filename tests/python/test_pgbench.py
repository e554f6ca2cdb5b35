"""The real pgbench: initialization and the built-in TPC-B-like workload.

Overrides for quick local runs (defaults are the acceptance values):
  STEADYDB_PGBENCH_SCALE   scale factor for pgbench -i        (default 10)
  STEADYDB_PGBENCH_TIME    seconds per TPC-B run (-T)         (default 10)
  STEADYDB_PGBENCH_INIT_TIMEOUT  limit for pgbench -i, seconds (default 1200)

The tests in this module run in file order: init, then simple, then prepared.
"""

from __future__ import annotations

import time

import psycopg
import pytest

from pgbench_util import assert_clean_run, env_int, run_pgbench

SCALE = env_int("STEADYDB_PGBENCH_SCALE", 10)
DURATION = env_int("STEADYDB_PGBENCH_TIME", 10)
INIT_TIMEOUT = env_int("STEADYDB_PGBENCH_INIT_TIMEOUT", 1200)
CLIENTS = 8
THREADS = 2


def separate_balances(conn):
    """Balance sums and history size, with single-table statements only."""
    out = []
    for sql in [
        "select sum(abalance) from pgbench_accounts",
        "select sum(bbalance) from pgbench_branches",
        "select sum(tbalance) from pgbench_tellers",
        "select sum(delta) from pgbench_history",
        "select count(*) from pgbench_history",
    ]:
        out.append(conn.execute(sql).fetchone()[0])
    return tuple(out)


@pytest.fixture(scope="module")
def initialized(server):
    start = time.monotonic()
    res = run_pgbench(server, "-i", "-s", str(SCALE), timeout=INIT_TIMEOUT)
    elapsed = time.monotonic() - start
    print(f"pgbench -i -s {SCALE} took {elapsed:.1f} s")
    assert res.returncode == 0, res.describe()
    assert "done in" in res.stderr, res.describe()
    assert not [l for l in res.stderr.splitlines() if "error" in l.lower()], res.describe()
    return elapsed


@pytest.mark.timeout(INIT_TIMEOUT + 120)
def test_pgbench_init(server, initialized):
    with psycopg.connect(server.conninfo(), autocommit=True) as conn:
        counts = [
            conn.execute(f"select count(*) from {t}").fetchone()[0]
            for t in ("pgbench_branches", "pgbench_tellers", "pgbench_accounts", "pgbench_history")
        ]
        assert counts == [SCALE, 10 * SCALE, 100_000 * SCALE, 0]
        assert separate_balances(conn) == (0, 0, 0, None, 0)
        assert conn.execute(
            "select min(aid), max(aid), min(bid), max(bid) from pgbench_accounts"
        ).fetchone() == (1, 100_000 * SCALE, 1, SCALE)
        # pgbench -i adds primary keys with ALTER TABLE ... ADD PRIMARY KEY
        for sql in [
            "insert into pgbench_branches (bid, bbalance) values (1, 0)",
            "insert into pgbench_tellers (tid, bid, tbalance) values (1, 1, 0)",
            "insert into pgbench_accounts (aid, bid, abalance) values (1, 1, 0)",
        ]:
            with pytest.raises(psycopg.Error) as ei:
                conn.execute(sql)
            assert ei.value.sqlstate == "23505", sql
        row = conn.execute(
            "select aid, bid, abalance, length(filler) from pgbench_accounts where aid = %s",
            (100_000 * SCALE,),
        ).fetchone()
        assert row == (100_000 * SCALE, SCALE, 0, 0)


def _check_consistency(server, processed_before, processed_now):
    with psycopg.connect(server.conninfo(), autocommit=True) as conn:
        a, b, t, d, n = separate_balances(conn)
        assert a == b == t == d, f"sum(abalance)={a} sum(bbalance)={b} sum(tbalance)={t} sum(delta)={d}"
        # every committed transaction inserted one history row; a transaction that was
        # in flight when the run ended may have committed without being counted
        assert processed_before + processed_now <= n <= processed_before + processed_now + CLIENTS, (
            n,
            processed_before,
            processed_now,
        )
        return n


@pytest.mark.timeout(DURATION * 4 + 120)
def test_pgbench_tpcb_simple(server, initialized):
    # without -n: pgbench vacuums branches/tellers and truncates the history first
    res = run_pgbench(
        server,
        "-M",
        "simple",
        "-c",
        str(CLIENTS),
        "-j",
        str(THREADS),
        "-T",
        str(DURATION),
        timeout=DURATION * 4 + 60,
    )
    assert_clean_run(res)
    assert "query mode: simple" in res.stdout
    assert f"scaling factor: {SCALE}" in res.stdout
    _check_consistency(server, 0, res.processed)


@pytest.mark.timeout(DURATION * 4 + 120)
def test_pgbench_tpcb_prepared(server, initialized):
    with psycopg.connect(server.conninfo(), autocommit=True) as conn:
        before = conn.execute("select count(*) from pgbench_history").fetchone()[0]
    # -n keeps the history of the previous run so the balance invariant covers both runs
    res = run_pgbench(
        server,
        "-M",
        "prepared",
        "-n",
        "-c",
        str(CLIENTS),
        "-j",
        str(THREADS),
        "-T",
        str(DURATION),
        timeout=DURATION * 4 + 60,
    )
    assert_clean_run(res)
    assert "query mode: prepared" in res.stdout
    _check_consistency(server, before, res.processed)
