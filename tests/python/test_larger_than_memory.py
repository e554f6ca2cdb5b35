"""Tables larger than the buffer pool: with shared_buffers = 64MB, `pgbench -i -s 50`
(about 750 MB of tables in PostgreSQL, about 350 MB here) loads, TPC-B runs with zero
failures and balanced sums, and a SIGKILL in the middle of a run loses nothing that was
acknowledged. Once the first run has given pages their second image, the page file does
not grow with the runs or the recovery: space freed by old page versions is reused."""

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

    def page_file_within(when: str, limit: float, of: int) -> int:
        now = os.path.getsize(page_file)
        assert now <= of * limit, f"{when}: the page file grew from {of} to {now} bytes"
        return now

    with node.connect() as conn:
        assert conn.execute("select count(*) from pgbench_accounts").fetchone() == (100_000 * SCALE,)

    run = run_pgbench(node.server, "-M", "prepared", "-c", str(CLIENTS), "-j", "2", "-T", "15", timeout=300)
    assert_clean_run(run)
    history = balanced(node)
    assert run.processed <= history <= run.processed + CLIENTS, (run.processed, history)
    # Updates write each page to a free slot (shadow paging), so a page can have two
    # images in the file, the durable checkpoint's and the newest: the first run may
    # grow the file up to about twice the load's pages. From then on the slots of
    # replaced images are reused.
    after_first_run = page_file_within("after a 15 s run", 2.0, pages)

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
    page_file_within("after recovery", 1.15, after_first_run)

    run = run_pgbench(node.server, "-M", "prepared", "-n", "-c", str(CLIENTS), "-j", "2", "-T", "5", timeout=300)
    assert_clean_run(run)
    assert balanced(node) >= after + run.processed
    page_file_within("after the last run", 1.15, after_first_run)
    node.stop_clean()
