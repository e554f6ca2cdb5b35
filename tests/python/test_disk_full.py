"""A full disk is an error, not a crash: the real server on a small tmpfs, filled by
writers. Writers get 53100, readers go on, a crash while the disk is full recovers on
the same full disk with every acknowledged commit, and once space is freed writes resume
without a restart.

Needs to mount a tmpfs (root, as in CI); skipped where it cannot."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import psycopg
import pytest

from conftest import Server, _resolve_bin, _server_ready, free_port

pytestmark = pytest.mark.steadydb_only

FS_BYTES = 200 * 1024 * 1024
# Taken from the file system first and given back to free space.
FILLER_BYTES = 40 * 1024 * 1024


@pytest.fixture
def small_fs():
    mount = Path(tempfile.mkdtemp(prefix="steadydb-fullfs-"))
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={FS_BYTES}", "tmpfs", str(mount)],
        capture_output=True,
    )
    if done.returncode != 0:
        mount.rmdir()
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)
        shutil.rmtree(mount, ignore_errors=True)


def start(data: Path, log_path: Path) -> Server:
    port = free_port()
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(
            [str(_resolve_bin()), "server", "--auth", "trust", "-D", str(data), "-p", str(port)],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log,
        )
    server = Server("127.0.0.1", port, "postgres", "postgres", False, proc, str(data),
                    str(log_path))
    deadline = time.monotonic() + 60
    while not _server_ready(server):
        assert proc.poll() is None and time.monotonic() < deadline, server.log_tail()
        time.sleep(0.2)
    return server


def row(k: int) -> str:
    return f"({k}, '{os.urandom(500).hex()}')"


class Writer(threading.Thread):
    """Inserts batches of rows with keys of its own until told to stop; keeps the keys
    of every acknowledged commit and the SQLSTATE of every failure."""

    def __init__(self, server: Server, first: int):
        super().__init__(daemon=True)
        self.server, self.next = server, first
        self.acked: list[range] = []
        self.failures: dict[str | None, int] = {}
        self.stop = threading.Event()

    def run(self):
        try:
            conn = psycopg.connect(self.server.conninfo(), autocommit=True, connect_timeout=10)
        except psycopg.Error as e:
            self.failures["connect"] = 1
            self.failures[str(e)] = 1
            return
        with conn:
            while not self.stop.is_set():
                keys = range(self.next, self.next + 100)
                try:
                    conn.execute("insert into f values " + ",".join(row(k) for k in keys))
                    self.acked.append(keys)
                except psycopg.Error as e:
                    self.failures[e.sqlstate] = self.failures.get(e.sqlstate, 0) + 1
                    if conn.closed:
                        return
                    time.sleep(0.05)
                self.next += 100


def run_writers(server: Server, first: int, until) -> list[Writer]:
    writers = [Writer(server, first + i * 10_000_000) for i in range(4)]
    for w in writers:
        w.start()
    deadline = time.monotonic() + 240
    while not until(writers):
        assert time.monotonic() < deadline, server.log_tail()
        assert all(w.is_alive() for w in writers), [w.failures for w in writers]
        time.sleep(0.2)
    for w in writers:
        w.stop.set()
    for w in writers:
        w.join(timeout=60)
    return writers


def acked_keys(writers: list[Writer]) -> set[int]:
    return {k for w in writers for keys in w.acked for k in keys}


def check_all_present(server: Server, acked: set[int]):
    with psycopg.connect(server.conninfo(), autocommit=True) as c:
        stored = {k for (k,) in c.execute("select k from f")}
    missing = acked - stored
    assert not missing, f"{len(missing)} acknowledged rows lost, e.g. {sorted(missing)[:5]}"


def test_full_disk_refuses_writers_and_recovers(small_fs, tmp_path):
    filler = small_fs / "filler"
    with open(filler, "wb") as f:
        f.write(b"\0" * FILLER_BYTES)
    data = small_fs / "data"
    server = start(data, tmp_path / "server.log")
    try:
        with psycopg.connect(server.conninfo(), autocommit=True) as c:
            c.execute("create table f (k int primary key, v text)")
        # Writers until the disk is full: every failure is 53100, and while they fail a
        # reader still reads.
        full = run_writers(server, 0, lambda ws: sum(w.failures.get("53100", 0) for w in ws) >= 20)
        for w in full:
            assert set(w.failures) <= {"53100"}, w.failures
        acked = acked_keys(full)
        assert len(acked) > 10_000
        with psycopg.connect(server.conninfo(), autocommit=True, connect_timeout=5) as c:
            assert c.execute("select 1").fetchone() == (1,)
            assert c.execute("select count(*) from f").fetchone()[0] >= len(acked)
            with pytest.raises(psycopg.Error) as e:
                c.execute("insert into f values " + ",".join(row(-k) for k in range(1, 200)))
            assert e.value.sqlstate == "53100"
        assert server.proc.poll() is None

        # A crash while the disk is full recovers on the same full disk.
        server.proc.kill()
        server.proc.wait()
        server = start(data, tmp_path / "server.log")
        check_all_present(server, acked)

        # Space freed: writes resume without a restart.
        filler.unlink()
        resumed = run_writers(server, 100_000_000, lambda ws: sum(len(w.acked) for w in ws) >= 20)
        acked |= acked_keys(resumed)
        check_all_present(server, acked)
    finally:
        if server.proc.poll() is None:
            server.proc.terminate()
            server.proc.wait(timeout=60)
    log = Path(server.log_path).read_text(errors="replace")
    assert "PANIC" not in log, log[-3000:]
