"""Resident memory of a server while one transaction inserts many rows and commits.

Starts the release binary on a fresh data directory, inserts ROWS rows of
`(k int primary key, v int)` in one transaction, 1,000 rows per INSERT, and samples the
server's RSS (from /proc) as it goes, during COMMIT and after. Prints one line per sample
and a summary.

    python bench/memory/large_txn.py --rows 5000000 --data /mnt/tmpfs/d [-c name=value]...

With `--conninfo`, it runs against a PostgreSQL server on this machine instead and samples
the RSS of the backend process serving it (`pg_backend_pid()`), which includes the shared
buffers that backend touched.
"""

from __future__ import annotations

import argparse
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

import psycopg


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def measure(conn, pid: int, rows: int) -> None:
    """Insert `rows` rows in one transaction on `conn`, sampling the RSS of process `pid`."""
    baseline = rss_mb(pid)
    peak = [baseline]
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            peak[0] = max(peak[0], rss_mb(pid))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    started = time.monotonic()
    conn.execute("create table big (k int primary key, v int)")
    conn.execute("begin")
    batch = 1000
    sql = "insert into big values " + ",".join(["(%s, %s)"] * batch)
    for i in range(0, rows, batch):
        conn.execute(sql, [v for k in range(i, i + batch) for v in (k, k % 97)])
        if (i + batch) % (rows // 10) == 0:
            print(f"{i + batch:>10,} rows: RSS {rss_mb(pid):,.0f} MB", flush=True)
    before_commit = rss_mb(pid)
    insert_peak = peak[0]
    commit_started = time.monotonic()
    conn.execute("commit")
    commit_s = time.monotonic() - commit_started
    total_s = time.monotonic() - started
    count = conn.execute("select count(*) from big").fetchone()[0]
    stop.set()
    sampler.join()
    print(
        f"rows {count:,}; RSS baseline {baseline:,.0f} MB, before COMMIT {before_commit:,.0f} MB, "
        f"peak while inserting {insert_peak:,.0f} MB, peak overall {peak[0]:,.0f} MB; "
        f"COMMIT {commit_s:.1f} s, {total_s:.0f} s in all"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=5_000_000)
    ap.add_argument("--data", help="data directory (removed first)")
    ap.add_argument("--conninfo", help="measure this PostgreSQL server's backend instead")
    ap.add_argument("--binary", default=str(Path(__file__).resolve().parents[2] / "target/release/steadydb"))
    ap.add_argument("-c", action="append", default=[], help="server setting name=value")
    args = ap.parse_args()
    if args.conninfo:
        with psycopg.connect(args.conninfo, autocommit=True) as conn:
            conn.execute("drop table if exists big")
            pid = conn.execute("select pg_backend_pid()").fetchone()[0]
            measure(conn, pid, args.rows)
        return
    if not args.data:
        ap.error("--data is required")
    shutil.rmtree(args.data, ignore_errors=True)
    port = free_port()
    cmd = [args.binary, "server", "--auth", "trust", "-D", args.data, "-p", str(port)]
    for setting in args.c:
        cmd += ["-c", setting]
    server = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        conninfo = f"host=127.0.0.1 port={port} user=postgres dbname=postgres"
        for _ in range(100):
            try:
                conn = psycopg.connect(conninfo, autocommit=True)
                break
            except psycopg.OperationalError:
                time.sleep(0.1)
        measure(conn, server.pid, args.rows)
        conn.close()
    finally:
        server.terminate()
        server.wait(60)


if __name__ == "__main__":
    main()
