"""Servers that can be crashed and restarted, and a ledger-keeping insert load.

``Node`` runs the server binary (``STEADYDB_BIN``, as in conftest) on its own data
directory; ``kill()`` is a crash (SIGKILL), ``terminate()`` a clean shutdown (SIGTERM),
and ``start()`` again recovers from the same directory. The ``nodes`` fixture creates
nodes and kills every one still running when the test ends, whatever happened.

``InsertLoad`` runs client threads that insert rows into
``crash(id bigint primary key, txn bigint, n int)`` and remember what happened to every
transaction; ``Ledger`` checks a recovered table against that history.

Transaction ids: every client thread owns a range of ids ``prefix * 10_000_000 + seq``
(``prefix`` unique per thread and load) and takes consecutive ids for the rows of each
transaction; ``txn`` is the transaction's first id and ``n`` its number of rows. So a
complete transaction is exactly the ids ``txn .. txn + n - 1``, which the checks verify
with ``count(*) = n, min(id) = txn, max(id) = txn + n - 1`` (ids are a primary key).
"""

from __future__ import annotations

import os
import random
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
import pytest

from conftest import Server, _resolve_bin, free_port

READY_TIMEOUT = float(os.environ.get("STEADYDB_CRASH_READY_TIMEOUT", "90"))
TERM_TIMEOUT = 15.0
ID_STRIDE = 10_000_000

CRASH_TABLE_DDL = "create table crash(id bigint primary key, txn bigint, n int)"


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    return int(raw) if raw else default


def seed_from_env(name: str = "STEADYDB_CRASH_SEED") -> int:
    raw = os.environ.get(name)
    seed = int(raw) if raw else random.SystemRandom().randrange(1, 1 << 31)
    print(f"\nrandom seed: {seed} (rerun with {name}={seed})")
    return seed


class Node:
    """One server process at a time on a fixed data directory."""

    def __init__(self, root: Path, settings: dict[str, str] | None = None):
        self.root = root
        self.datadir = str(root / "data")
        self.settings = dict(settings or {})
        self.proc: subprocess.Popen | None = None
        self.port: int | None = None
        self.starts = 0
        self.log_path: str | None = None  # log of the current (or last) incarnation
        # Keep one port across restarts (a standby's primary_conninfo names it).
        self.fixed_port: int | None = None

    # -- lifecycle -------------------------------------------------------------------
    def start(self, settings: dict[str, str] | None = None) -> "Node":
        assert self.proc is None or self.proc.poll() is not None, "server already running"
        binary = _resolve_bin()
        waited = 0.0
        while not binary.exists() and waited < 60:  # being rebuilt right now
            time.sleep(1)
            waited += 1
        assert binary.exists(), f"server binary {binary} does not exist (set STEADYDB_BIN)"
        merged = {**self.settings, **(settings or {})}
        args = []
        for k, v in merged.items():
            args += ["-c", f"{k}={v}"]
        last = ""
        for _attempt in range(3):  # a free port can be taken by someone else in between
            self.starts += 1
            self.port = self.fixed_port or free_port()
            self.log_path = str(self.root / f"server-{self.starts}.log")
            self.proc = self._spawn(binary, args)
            deadline = time.monotonic() + READY_TIMEOUT
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    break
                if self._ready():
                    return self
                time.sleep(0.05)
            if self.proc.poll() is None:
                self.kill()
                raise AssertionError(f"server did not become ready within {READY_TIMEOUT} s:\n{self.log()}")
            last = f"server exited with code {self.proc.returncode} during startup:\n{self.log()}"
            if "in use" not in self.log().lower():
                break
        raise AssertionError(last)

    def _spawn(self, binary: Path, args: list[str]) -> subprocess.Popen:
        # The binary may be replaced by a rebuild at any moment: retry briefly when it is
        # missing or not yet complete.
        deadline = time.monotonic() + 60
        while True:
            try:
                with open(self.log_path, "wb") as log:
                    return subprocess.Popen(
                        [str(binary), "server", "--auth", "trust", "-D", self.datadir, "-p", str(self.port), *args],
                        stdin=subprocess.DEVNULL,
                        stdout=log,
                        stderr=log,
                    )
            except OSError as e:
                if time.monotonic() > deadline:
                    raise AssertionError(f"could not start {binary}: {e}") from None
                time.sleep(0.5)

    def _ready(self) -> bool:
        try:
            with psycopg.connect(self.conninfo(connect_timeout=2), autocommit=True) as conn:
                return conn.execute("select 1").fetchone() == (1,)
        except psycopg.Error:
            return False

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        """Crash: SIGKILL, and wait until the process is gone."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def terminate(self, timeout: float = TERM_TIMEOUT) -> int:
        """Clean shutdown: SIGTERM; returns the exit code (kills and fails after ``timeout``)."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"server did not exit within {timeout} s of SIGTERM:\n{self.log()}") from None

    def stop_clean(self) -> None:
        rc = self.terminate()
        assert rc == 0, f"server exited with code {rc} after SIGTERM:\n{self.log()}"

    def restart_after_crash(self) -> "Node":
        self.kill()
        return self.start()

    # -- clients ---------------------------------------------------------------------
    def conninfo(self, **overrides) -> str:
        return self.server.conninfo(**overrides)

    def connect(self, autocommit: bool = True, **kwargs) -> psycopg.Connection:
        return psycopg.connect(self.conninfo(), autocommit=autocommit, **kwargs)

    @property
    def server(self) -> Server:
        """The conftest view of this node (for pgbench_util and psql helpers)."""
        assert self.port is not None, "node was never started"
        return Server("127.0.0.1", self.port, "postgres", "postgres", False, self.proc, self.datadir, self.log_path)

    # -- logs ------------------------------------------------------------------------
    def log(self, start: int | None = None) -> str:
        """The server log of one incarnation (default: the current or last one)."""
        path = self.log_path if start is None else str(self.root / f"server-{start}.log")
        if not path or not os.path.exists(path):
            return ""
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def redo_start(self) -> int:
        """The LSN replay started from: the redo LSN of the checkpoint recovery loaded (0
        without one), from the current incarnation's ``starting up`` line."""
        m = re.search(r"starting up from checkpoint \d+ \(redo lsn ([0-9A-F]+)/([0-9A-F]+)\)", self.log())
        return (int(m.group(1), 16) << 32 | int(m.group(2), 16)) if m else 0

    def redo_done(self) -> tuple[str, int, int]:
        """(end LSN text, records, bytes) from the current incarnation's ``redo done`` line."""
        m = re.search(r"redo done at ([0-9A-F]+/[0-9A-F]+): (\d+) records, (\d+) bytes replayed", self.log())
        assert m, f"no 'redo done' line in the server log:\n{self.log()}"
        return m.group(1), int(m.group(2)), int(m.group(3))


@pytest.fixture
def nodes(request):
    """Factory: ``nodes()`` makes a Node on a fresh temporary data directory.

    Every node still running at the end of the test is killed. The directories are
    removed when the test passed. When it failed, the server logs are kept (and their
    directory printed) but the data directories are removed, so that one failed test
    on a large data set does not fill the disk under every test after it; set
    STEADYDB_KEEP_DATA=1 to keep them too.
    """
    made: list[Node] = []
    tmp = Path(tempfile.mkdtemp(prefix="steadydb-crash-"))
    failed_before = request.session.testsfailed

    def make(settings: dict[str, str] | None = None) -> Node:
        node = Node(tmp / f"node{len(made) + 1}", settings)
        node.root.mkdir(parents=True)
        made.append(node)
        return node

    try:
        yield make
    finally:
        for node in made:
            try:
                node.kill()
            except Exception as e:  # keep killing the others
                print(f"could not kill server {node.proc and node.proc.pid}: {e}")
        if os.environ.get("STEADYDB_KEEP_DATA"):
            print(f"\ndata directories and server logs kept in {tmp}")
        elif request.session.testsfailed > failed_before:
            for node in made:
                shutil.rmtree(node.datadir, ignore_errors=True)
            print(f"\nserver logs kept in {tmp} (STEADYDB_KEEP_DATA=1 keeps the data too)")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


# -- the insert load and its ledger -----------------------------------------------------

OPEN = "open"  # statements running; COMMIT never sent
COMMIT_SENT = "commit sent"  # COMMIT sent, no answer: in doubt
ACKED = "acked"  # COMMIT returned successfully
NOT_COMMITTED = "not committed"  # failed before COMMIT was sent: must be absent


@dataclass
class Txn:
    txn: int  # = its first id
    n: int
    state: str = OPEN
    acked_at: float | None = None  # time.monotonic() when COMMIT returned

    @property
    def ids(self) -> range:
        return range(self.txn, self.txn + self.n)


@dataclass
class ClientError:
    client: int
    at: float  # time.monotonic()
    exc: BaseException
    during: str


class InsertLoad:
    """``clients`` threads, each with its own connection (autocommit off), committing
    transactions of 1..``max_rows`` single-row INSERT statements into ``crash`` until the
    server goes away or ``stop()`` is called."""

    def __init__(self, node: Node, prefix_base: int, clients: int, seed: int, max_rows: int = 5):
        assert prefix_base % 100 == 0 and clients < 100
        self.node = node
        self.prefix_base = prefix_base
        self.clients = clients
        self.seed = seed
        self.max_rows = max_rows
        self.txns: list[list[Txn]] = [[] for _ in range(clients)]
        self.errors: list[ClientError] = []
        self._stop = threading.Event()
        self._barrier = threading.Barrier(clients + 1)
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self.started_at: float | None = None

    def start(self) -> "InsertLoad":
        for i in range(self.clients):
            t = threading.Thread(target=self._run, args=(i,), name=f"load-{i}", daemon=True)
            t.start()
            self._threads.append(t)
        try:
            self._barrier.wait(timeout=60)
        except threading.BrokenBarrierError:
            self._stop.set()
            raise AssertionError(f"load clients could not connect: {self.errors}") from None
        self.started_at = time.monotonic()
        return self

    def _run(self, i: int) -> None:
        rng = random.Random(self.seed * 1000 + i)
        next_id = (self.prefix_base + i) * ID_STRIDE + 1
        try:
            conn = psycopg.connect(self.node.conninfo(), autocommit=False)
        except Exception as e:
            with self._lock:
                self.errors.append(ClientError(i, time.monotonic(), e, "connect"))
            self._barrier.abort()
            return
        try:
            self._barrier.wait(timeout=60)
            mine = self.txns[i]
            while not self._stop.is_set():
                t = Txn(next_id, rng.randint(1, self.max_rows))
                next_id += t.n
                mine.append(t)
                try:
                    with conn.cursor() as cur:
                        for row_id in t.ids:
                            cur.execute("insert into crash (id, txn, n) values (%s, %s, %s)", (row_id, t.txn, t.n))
                except Exception as e:
                    t.state = NOT_COMMITTED
                    with self._lock:
                        self.errors.append(ClientError(i, time.monotonic(), e, "insert"))
                    return
                t.state = COMMIT_SENT
                try:
                    conn.commit()
                except Exception as e:
                    with self._lock:
                        self.errors.append(ClientError(i, time.monotonic(), e, "commit"))
                    return
                t.acked_at = time.monotonic()
                t.state = ACKED
        except threading.BrokenBarrierError:
            return
        finally:
            try:
                conn.close()
            except Exception:
                pass

    def stop(self) -> None:
        self._stop.set()

    def join(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        for t in self._threads:
            t.join(max(0.0, deadline - time.monotonic()))
        hung = [t.name for t in self._threads if t.is_alive()]
        assert not hung, f"client threads still running {timeout} s after the end of the load: {hung}"

    def all_txns(self) -> list[Txn]:
        return [t for per in self.txns for t in per]

    def count(self, state: str) -> int:
        return sum(1 for t in self.all_txns() if t.state == state)

    def assert_errors_only_after(self, kill_at: float | None) -> None:
        """Every client error must be a lost connection seen after the server was stopped."""
        bad = []
        for e in self.errors:
            if kill_at is None or e.at < kill_at or not isinstance(e.exc, psycopg.OperationalError):
                bad.append(e)
        assert not bad, "unexpected client errors:\n" + "\n".join(
            f"client {e.client} during {e.during} at {e.at - (self.started_at or 0):.3f} s: "
            f"{type(e.exc).__name__}: {e.exc}"
            for e in bad[:20]
        )

    def summary(self) -> str:
        return (
            f"{self.count(ACKED)} acked, {self.count(COMMIT_SENT)} in doubt, "
            f"{self.count(NOT_COMMITTED)} not committed, {len(self.errors)} client errors"
        )


@dataclass
class Ledger:
    """What the ``crash`` table must hold: transactions known present and known absent."""

    present: dict[int, int] = field(default_factory=dict)  # txn -> n
    absent: set[int] = field(default_factory=set)

    def expected_totals(self) -> tuple[int, int]:
        rows = sum(self.present.values())
        id_sum = sum(t * n + n * (n - 1) // 2 for t, n in self.present.items())
        return rows, id_sum

    def check(self, conn: psycopg.Connection, txns: list[Txn]) -> dict[str, int]:
        """Check the recovered table against the ledger plus ``txns`` (the transactions of
        the load that ran since the last check), then add ``txns`` to the ledger."""
        groups = conn.execute(
            "select txn, count(*), min(n), max(n), min(id), max(id) from crash group by txn"
        ).fetchall()
        found: dict[int, int] = {}
        partial = []
        for txn, cnt, min_n, max_n, min_id, max_id in groups:
            if not (cnt == min_n == max_n and min_id == txn and max_id == txn + cnt - 1):
                partial.append((txn, cnt, min_n, max_n, min_id, max_id))
            found[txn] = cnt
        assert not partial, (
            "transactions only partly present (txn, count, min(n), max(n), min(id), max(id)):\n"
            + "\n".join(map(str, partial[:20]))
        )
        new = {t.txn: t for t in txns}
        lost = [t for t in self.present if t not in found]
        assert not lost, f"{len(lost)} transactions present after an earlier recovery are gone: {lost[:10]}"
        resurrected = [t for t in self.absent if t in found]
        assert not resurrected, f"{len(resurrected)} transactions absent after an earlier recovery reappeared: {resurrected[:10]}"
        unexpected = [t for t in found if t not in self.present and t not in new]
        assert not unexpected, f"{len(unexpected)} unexpected transactions in the table: {unexpected[:10]}"
        lost_acked = [t for t in txns if t.state == ACKED and t.txn not in found]
        assert not lost_acked, (
            f"{len(lost_acked)} acknowledged transactions lost, e.g. "
            + ", ".join(f"txn {t.txn} ({t.n} rows)" for t in lost_acked[:10])
        )
        never_committed = [t for t in txns if t.state in (OPEN, NOT_COMMITTED) and t.txn in found]
        assert not never_committed, (
            f"{len(never_committed)} transactions whose COMMIT was never sent are present: "
            + ", ".join(str(t.txn) for t in never_committed[:10])
        )
        wrong_n = [(t.txn, t.n, found[t.txn]) for t in txns if t.txn in found and found[t.txn] != t.n]
        assert not wrong_n, f"transactions with the wrong number of rows (txn, n, found): {wrong_n[:10]}"
        in_doubt_present = sum(1 for t in txns if t.state == COMMIT_SENT and t.txn in found)
        in_doubt_absent = sum(1 for t in txns if t.state == COMMIT_SENT and t.txn not in found)
        for t in txns:
            if t.txn in found:
                self.present[t.txn] = t.n
            else:
                self.absent.add(t.txn)
        rows, id_sum = self.expected_totals()
        got = conn.execute("select count(*), coalesce(sum(id), 0) from crash").fetchone()
        assert tuple(got) == (rows, id_sum), f"table totals {tuple(got)} != expected {(rows, id_sum)}"
        return {"rows": rows, "in_doubt_present": in_doubt_present, "in_doubt_absent": in_doubt_absent}
