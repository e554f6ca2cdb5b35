"""Tables larger than the buffer pool: with shared_buffers = 64MB, `pgbench -i -s 50`
(about 750 MB of tables in PostgreSQL, about 350 MB here) loads, TPC-B runs with zero
failures and balanced sums, and a SIGKILL in the middle of a run loses nothing that was
acknowledged. The page file never holds more than two images of each page (the durable
checkpoint's and the newest: shadow paging reuses the slots of older ones), whatever the
runs and the recovery did and however fast the machine ran them."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from conftest import find_pg_tool
from crash_util import env_int, nodes  # noqa: F401  (fixture)
from pgbench_util import assert_clean_run, run_pgbench
from test_pgbench import separate_balances

pytestmark = pytest.mark.steadydb_only

SCALE = env_int("STEADYDB_LARGE_SCALE", 50)
CLIENTS = 8


def balanced(node) -> int:
    """Check the TPC-B invariant; return the number of history rows."""
    with node.connect() as conn:
        a, b, t, d, n = separate_balances(conn)
    assert a == b == t == (d or 0), f"sum(abalance)={a} sum(bbalance)={b} sum(tbalance)={t} sum(delta)={d}"
    return n


@pytest.mark.timeout(1200)
def test_tpcb_on_tables_larger_than_shared_buffers_survives_a_sigkill(nodes):
    node = nodes({"shared_buffers": "64MB"}).start()
    init = run_pgbench(node.server, "-i", "-s", str(SCALE), timeout=900)
    assert init.returncode == 0, init.describe()
    page_file = os.path.join(node.datadir, "storage", "pages")
    pages = os.path.getsize(page_file)
    # About 344 MB at scale 50: pgbench_accounts' blank char(84) filler is not stored.
    assert pages > 5 * 64 * 1024 * 1024, f"the page file holds only {pages} bytes"

    def page_file_bounded(when: str, history_rows: int) -> None:
        # Two images of every page the load wrote and of every page the history rows
        # added (generously 128 bytes a row), and a little for the maps' own growth.
        bound = 2 * pages + 2 * 128 * history_rows + 16 * 1024 * 1024
        now = os.path.getsize(page_file)
        assert now <= bound, f"{when}: the page file holds {now} bytes, more than two images of every page ({bound})"

    with node.connect() as conn:
        assert conn.execute("select count(*) from pgbench_accounts").fetchone() == (100_000 * SCALE,)

    run = run_pgbench(node.server, "-M", "prepared", "-c", str(CLIENTS), "-j", "2", "-T", "15", timeout=300)
    assert_clean_run(run)
    history = balanced(node)
    assert run.processed <= history <= run.processed + CLIENTS, (run.processed, history)
    page_file_bounded("after a 15 s run", history)

    # A run without pgbench's own vacuum (-n keeps the history), killed in its middle.
    cmd = [find_pg_tool("pgbench"), "-h", "127.0.0.1", "-p", str(node.port), "-U", "postgres",
           "-M", "prepared", "-n", "-c", str(CLIENTS), "-j", "2", "-T", "60", "postgres"]
    bench = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(10)
    node.kill()
    bench.communicate(timeout=120)
    node.start()
    after = balanced(node)
    assert after > history, (history, after)
    page_file_bounded("after recovery", after)

    run = run_pgbench(node.server, "-M", "prepared", "-n", "-c", str(CLIENTS), "-j", "2", "-T", "5", timeout=300)
    assert_clean_run(run)
    last = balanced(node)
    assert last >= after + run.processed
    page_file_bounded("after the last run", last)
    node.stop_clean()
