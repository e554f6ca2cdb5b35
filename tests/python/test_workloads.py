"""Every pgbench script in bench/workloads/ runs cleanly with real pgbench.

Overrides for quick local runs (defaults are the acceptance values):
  STEADYDB_WORKLOAD_TIME      seconds per script (-T)            (default 5)
  STEADYDB_WORKLOAD_CLIENTS   clients (-c)                       (default 32)
  STEADYDB_UPDATE_PK_ROWS     rows loaded into tbl for update_pk (default 1000000)
"""

from __future__ import annotations

import time
from pathlib import Path

import psycopg
import pytest

from conftest import REPO_ROOT
from pgbench_util import assert_clean_run, env_int, run_pgbench

WORKLOAD_DIR = REPO_ROOT / "bench" / "workloads"
DURATION = env_int("STEADYDB_WORKLOAD_TIME", 5)
CLIENTS = env_int("STEADYDB_WORKLOAD_CLIENTS", 32)
THREADS = 2
UPDATE_PK_ROWS = env_int("STEADYDB_UPDATE_PK_ROWS", 1_000_000)

EXPECTED_SCRIPTS = {
    "insert_nopk.sql",
    "insert_serial.sql",
    "join_history.sql",
    "join_order.sql",
    "join_pk.sql",
    "select_pk.sql",
    "update_balance.sql",
    "update_pk.sql",
    "upsert.sql",
}

SCRIPTS = sorted(p.name for p in WORKLOAD_DIR.glob("*.sql"))

# tables created for one script only (dropped after a successful run)
OWN_TABLES = {
    "insert_serial.sql": "test",
    "insert_nopk.sql": "test_nopk",
    "upsert.sql": "test_ups",
    "update_pk.sql": "tbl",
}


def test_workload_directory_is_complete():
    # every script needs a setup below; a new script must be added here too
    assert set(SCRIPTS) == EXPECTED_SCRIPTS


def _pgbench_init(server, conn):
    res = run_pgbench(server, "-i", "-s", "1", timeout=600)
    assert res.returncode == 0, res.describe()
    assert conn.execute("select count(*) from pgbench_accounts").fetchone() == (100_000,)


def _load_tbl(conn, rows: int):
    conn.execute("drop table if exists tbl")
    conn.execute("create table tbl(id int primary key, info text, crt_time timestamp)")
    start = time.monotonic()
    with conn.cursor() as cur:
        with cur.copy("copy tbl (id) from stdin") as cp:
            chunk = 20_000
            for lo in range(1, rows + 1, chunk):
                hi = min(lo + chunk, rows + 1)
                cp.write("\n".join(map(str, range(lo, hi))) + "\n")
        assert cur.rowcount == rows
    print(f"loaded {rows} rows into tbl in {time.monotonic() - start:.1f} s")
    assert conn.execute("select count(*), min(id), max(id) from tbl").fetchone() == (rows, 1, rows)


def setup_workload(name: str, server, conn):
    if name == "insert_serial.sql":
        conn.execute("drop table if exists test")
        conn.execute("create table test(id serial primary key, info text, crt_time timestamp)")
    elif name == "insert_nopk.sql":
        conn.execute("drop table if exists test_nopk")
        conn.execute("create table test_nopk(id int, info text)")
    elif name == "upsert.sql":
        conn.execute("drop table if exists test_ups")
        conn.execute("create table test_ups(id int primary key, info text, crt_time timestamp)")
    elif name == "update_pk.sql":
        _load_tbl(conn, UPDATE_PK_ROWS)
    elif name in ("select_pk.sql", "update_balance.sql", "join_pk.sql"):
        _pgbench_init(server, conn)
    elif name == "join_order.sql":
        _pgbench_init(server, conn)
        conn.execute("analyze")
    elif name == "join_history.sql":
        _pgbench_init(server, conn)
        conn.execute(
            "insert into pgbench_history (tid, bid, aid, delta, mtime)"
            " select g % 10 + 1, 1, g, g % 1000, now() from generate_series(1, 100000) g"
        )
        conn.execute("create index pgbench_history_aid on pgbench_history (aid)")
    else:
        pytest.fail(f"no setup known for workload {name}")


def check_after(name: str, conn, processed: int):
    """Table contents match the number of transactions pgbench reported.

    A statement that was in flight when the run ended may have committed without
    being counted, hence the slack of one transaction per client.
    """
    one = lambda sql: conn.execute(sql).fetchone()  # noqa: E731
    upper = processed + CLIENTS
    if name == "insert_serial.sql":
        n, lo, hi, infos = one("select count(*), min(id), max(id), count(info) from test")
        assert processed <= n <= upper, (n, processed)
        assert infos == 0
        assert lo >= 1 and hi >= lo + n - 1  # ids are distinct (primary key)
    elif name == "insert_nopk.sql":
        n, total, lo, hi = one("select count(*), sum(id), min(info), max(info) from test_nopk")
        assert processed <= n <= upper, (n, processed)
        assert (total, lo, hi) == (n, "test", "test")
    elif name == "upsert.sql":
        n, timed = one("select count(*), count(crt_time) from test_ups")
        assert 0 < n <= upper
        assert timed == n
        assert one("select count(*) from test_ups where length(info) <> 32 or info is null") == (0,)
    elif name == "update_pk.sql":
        n, touched, timed = one("select count(*), count(info), count(crt_time) from tbl")
        assert n == UPDATE_PK_ROWS
        assert 0 < touched <= upper
        assert timed == touched
    elif name == "update_balance.sql":
        assert one("select count(*) from pgbench_accounts") == (100_000,)
    elif name in ("select_pk.sql", "join_pk.sql", "join_order.sql"):
        assert one("select count(*), sum(abalance) from pgbench_accounts") == (100_000, 0)
    elif name == "join_history.sql":
        assert one("select count(*), sum(abalance) from pgbench_accounts") == (100_000, 0)
        assert one("select count(*), min(aid), max(aid), sum(aid) from pgbench_history") == (
            100_000, 1, 100_000, 5_000_050_000)


@pytest.mark.timeout(DURATION * 6 + 900)
@pytest.mark.parametrize("script", SCRIPTS)
def test_workload(server, script):
    path = WORKLOAD_DIR / script
    with psycopg.connect(server.conninfo(), autocommit=True) as conn:
        setup_workload(script, server, conn)
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
        "-f",
        str(Path(path)),
        timeout=DURATION * 6 + 60,
    )
    assert_clean_run(res)
    assert f"number of clients: {CLIENTS}" in res.stdout
    with psycopg.connect(server.conninfo(), autocommit=True) as conn:
        check_after(script, conn, res.processed)
        if script in OWN_TABLES:
            conn.execute(f"drop table {OWN_TABLES[script]}")
