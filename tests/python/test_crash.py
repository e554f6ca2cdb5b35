"""Crash recovery: acknowledged commits survive SIGKILL, transactions are atomic.

Every test starts its own servers (see ``crash_util.Node``) on fresh data directories,
kills them with SIGKILL at random points under load and restarts them on the same
directory. Random choices are seeded; the seed is printed (override it with
``STEADYDB_CRASH_SEED``).

Overrides for quick local runs (defaults are the acceptance values):
  STEADYDB_CRASH_CYCLES       kill/restart cycles under the insert load   (default 22)
  STEADYDB_CRASH_CLIENTS      client connections of the insert load       (default 32)
  STEADYDB_CRASH_TPCB_SCALE   pgbench -i scale for the TPC-B crash test   (default 2)
  STEADYDB_CRASH_TPCB_RUNS    TPC-B runs killed after 3 s                 (default 3)
"""

from __future__ import annotations

import random
import subprocess
import threading
import time

import psycopg
import pytest

from conftest import find_pg_tool
from crash_util import (
    ACKED,
    COMMIT_SENT,
    CRASH_TABLE_DDL,
    ID_STRIDE,
    NOT_COMMITTED,
    OPEN,
    InsertLoad,
    Ledger,
    Txn,
    env_int,
    nodes,  # noqa: F401  (fixture)
    seed_from_env,
)
from pgbench_util import parse_report, run_pgbench
from wal_format import segment_path

pytestmark = pytest.mark.steadydb_only

CYCLES = env_int("STEADYDB_CRASH_CYCLES", 22)
CLIENTS = env_int("STEADYDB_CRASH_CLIENTS", 32)
TPCB_SCALE = env_int("STEADYDB_CRASH_TPCB_SCALE", 2)
TPCB_RUNS = env_int("STEADYDB_CRASH_TPCB_RUNS", 3)
COPY_ROWS = 200_000


def lsn_value(text: str) -> int:
    hi, lo = text.split("/")
    return (int(hi, 16) << 32) | int(lo, 16)


class CheckpointLoop:
    """Issues CHECKPOINT over and over, with short random pauses, until the server dies:
    so kills land before, during and after checkpoints."""

    def __init__(self, node, seed: int):
        self.node = node
        self.rng = random.Random(seed)
        self.completed = 0
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> "CheckpointLoop":
        self.thread.start()
        return self

    def _run(self) -> None:
        try:
            with self.node.connect() as conn:
                while True:
                    conn.execute("checkpoint")
                    self.completed += 1
                    time.sleep(self.rng.uniform(0.0, 0.15))
        except psycopg.Error:
            pass  # the server was killed

    def join(self) -> None:
        self.thread.join(timeout=30)


@pytest.mark.timeout(90 + 15 * CYCLES)
def test_acknowledged_commits_survive_sigkill(nodes):
    """CYCLES kill points on one growing data directory: every cycle runs the insert load
    and a loop of CHECKPOINTs, SIGKILLs the server 0.2-1.5 s into it, restarts it and
    checks the whole table."""
    seed = seed_from_env()
    rng = random.Random(seed)
    node = nodes().start()
    with node.connect() as conn:
        conn.execute(CRASH_TABLE_DDL)
    ledger = Ledger()
    last_end = 0
    total_acked = 0
    from_checkpoint = 0
    for cycle in range(1, CYCLES + 1):
        delay = rng.uniform(0.2, 1.5)
        load = InsertLoad(node, prefix_base=cycle * 100, clients=CLIENTS, seed=seed + cycle).start()
        checkpoints = CheckpointLoop(node, seed + cycle).start()
        time.sleep(delay)
        kill_at = time.monotonic()
        node.kill()
        load.join()
        checkpoints.join()
        load.assert_errors_only_after(kill_at)
        acked = load.count(ACKED)
        assert acked > 0, f"cycle {cycle}: no transaction was acknowledged in {delay:.2f} s of load"
        total_acked += acked
        node.start()
        end, records, nbytes = node.redo_done()
        redo = node.redo_start()
        from_checkpoint += redo > 0
        assert nbytes == lsn_value(end) - redo, node.log()
        # Nothing recovered before is ever cut: the log only grows from one recovery to the next.
        assert lsn_value(end) >= last_end, f"log end went back from {last_end:X} to {end}\n{node.log()}"
        last_end = lsn_value(end)
        with node.connect() as conn:
            res = ledger.check(conn, load.all_txns())
        torn = "invalid record at" in node.log()
        print(
            f"cycle {cycle:2}: killed after {delay:.2f} s; {load.summary()}; "
            f"in doubt present/absent {res['in_doubt_present']}/{res['in_doubt_absent']}; "
            f"{checkpoints.completed} checkpoints; redo {records} records from {redo:X} to {end}"
            f"{' (torn tail cut)' if torn else ''}; table {res['rows']} rows"
        )
    assert total_acked >= CYCLES
    assert from_checkpoint > 0, "no recovery started from a checkpoint"
    node.stop_clean()


class CopyTxn:
    """One transaction loading COPY_ROWS rows into ``crash`` with COPY, in a thread."""

    def __init__(self, node, prefix: int):
        self.node = node
        self.txn = Txn(prefix * ID_STRIDE + 1, COPY_ROWS)
        self.copy_started = threading.Event()
        self.commit_started = threading.Event()
        self.done = threading.Event()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> "CopyTxn":
        self.thread.start()
        return self

    def _run(self) -> None:
        t = self.txn
        try:
            conn = psycopg.connect(self.node.conninfo(), autocommit=False)
        except Exception as e:
            self.error = e
            t.state = NOT_COMMITTED
            self.done.set()
            return
        try:
            try:
                with conn.cursor() as cur:
                    with cur.copy("copy crash (id, txn, n) from stdin") as cp:
                        ids = list(t.ids)
                        for lo in range(0, len(ids), 10_000):
                            cp.write("".join(f"{i}\t{t.txn}\t{t.n}\n" for i in ids[lo : lo + 10_000]))
                            self.copy_started.set()
                    assert cur.rowcount == t.n, cur.rowcount
            except Exception as e:
                t.state = NOT_COMMITTED
                self.error = e
                return
            t.state = COMMIT_SENT
            self.commit_started.set()
            try:
                conn.commit()
            except Exception as e:
                self.error = e
                return
            t.acked_at = time.monotonic()
            t.state = ACKED
        finally:
            self.copy_started.set()
            self.commit_started.set()
            self.done.set()
            try:
                conn.close()
            except Exception:
                pass


@pytest.mark.timeout(180)
def test_large_copy_transaction_is_all_or_nothing(nodes):
    """A COPY of 200k rows in one transaction, next to a small insert load, killed during
    the COPY, during its COMMIT, and after it was acknowledged."""
    seed = seed_from_env()
    rng = random.Random(seed)
    node = nodes().start()
    with node.connect() as conn:
        conn.execute(CRASH_TABLE_DDL)
    ledger = Ledger()
    outcomes = []
    for phase, when in enumerate(["during copy", "during commit", "after ack", "during commit"], start=1):
        load = InsertLoad(node, prefix_base=phase * 100, clients=4, seed=seed + phase).start()
        cp = CopyTxn(node, prefix=phase * 100 + 99).start()
        if when == "during copy":
            assert cp.copy_started.wait(30)
            time.sleep(rng.uniform(0.0, 0.1))
        elif when == "during commit":
            assert cp.commit_started.wait(60)
            time.sleep(rng.uniform(0.0, 0.15))
        else:
            assert cp.done.wait(60)
            assert cp.txn.state == ACKED, f"COPY transaction failed: {cp.error!r}"
            time.sleep(0.2)
        kill_at = time.monotonic()
        node.kill()
        load.join()
        cp.thread.join(30)
        assert not cp.thread.is_alive(), "COPY client still running 30 s after the kill"
        load.assert_errors_only_after(kill_at)
        if cp.error is not None:
            assert isinstance(cp.error, psycopg.OperationalError), f"COPY failed before the kill: {cp.error!r}"
        node.start()
        with node.connect() as conn:
            ledger.check(conn, load.all_txns() + [cp.txn])
            copied = conn.execute("select count(*) from crash where txn = %s", (cp.txn.txn,)).fetchone()[0]
        assert copied in (0, COPY_ROWS), copied
        if cp.txn.state == ACKED:
            assert copied == COPY_ROWS
        if cp.txn.state in (OPEN, NOT_COMMITTED):
            assert copied == 0
        outcomes.append(f"{when}: COPY {cp.txn.state}, {copied} rows after recovery")
        print(f"phase {phase}: killed {when}; COPY {cp.txn.state}, {copied} rows present; load {load.summary()}")
    node.stop_clean()
    print("\n".join(outcomes))


def _balances(conn) -> tuple:
    return tuple(
        conn.execute(sql).fetchone()[0]
        for sql in [
            "select sum(abalance) from pgbench_accounts",
            "select sum(bbalance) from pgbench_branches",
            "select sum(tbalance) from pgbench_tellers",
            "select coalesce(sum(delta), 0) from pgbench_history",
            "select count(*) from pgbench_history",
            "select count(*) from pgbench_accounts",
        ]
    )


@pytest.mark.timeout(240 + 60 * TPCB_RUNS)
def test_tpcb_balances_consistent_after_crashes(nodes):
    """pgbench TPC-B killed 3 s into a 30 s run, TPCB_RUNS times; after each recovery the
    balance sums agree and every transaction pgbench counted as processed is there."""
    node = nodes().start()
    res = run_pgbench(node.server, "-i", "-s", str(TPCB_SCALE), timeout=600)
    assert res.returncode == 0, res.describe()
    clients = 8
    with node.connect() as conn:
        before = _balances(conn)
    assert before == (0, 0, 0, 0, 0, 100_000 * TPCB_SCALE), before
    for run in range(1, TPCB_RUNS + 1):
        server = node.server
        cmd = [find_pg_tool("pgbench"), "-h", server.host, "-p", str(server.port), "-U", server.user,
               "-n", "-M", "prepared", "-c", str(clients), "-j", "2", "-T", "30", server.dbname]
        bench = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 env=server.client_env())
        try:
            time.sleep(3)
            node.kill()
            out, err = bench.communicate(timeout=60)
        finally:
            if bench.poll() is None:
                bench.kill()
                bench.wait()
        processed, _failed, _tps = parse_report(out)
        assert processed is not None and processed > 0, f"pgbench did no work before the kill\n{out}\n{err[-3000:]}"
        node.start()
        with node.connect() as conn:
            after = _balances(conn)
        a, b, t, d, hist, accounts = after
        print(f"run {run}: pgbench processed {processed} transactions; history {before[4]} -> {hist}; sums {a} {b} {t} {d}")
        assert a == b == t == d, f"balances disagree after recovery: accounts {a}, branches {b}, tellers {t}, history {d}"
        assert accounts == 100_000 * TPCB_SCALE
        # Each processed TPC-B transaction inserted one history row and was acknowledged;
        # at most one more per client can have committed without its acknowledgement.
        new = hist - before[4]
        assert processed <= new <= processed + clients, (
            f"pgbench acknowledged {processed} transactions, {new} history rows were recovered"
        )
        before = after
    node.stop_clean()


@pytest.mark.parametrize("synchronous_commit", ["on", "off"])
@pytest.mark.timeout(120)
def test_sigterm_is_clean_shutdown(nodes, synchronous_commit):
    """SIGTERM under load exits 0, leaves a clean log end, and keeps every acknowledged
    commit (with synchronous_commit = off too: shutdown flushes everything appended)."""
    seed = seed_from_env()
    node = nodes({"synchronous_commit": synchronous_commit}).start()
    with node.connect() as conn:
        conn.execute(CRASH_TABLE_DDL)
        assert conn.execute("show synchronous_commit").fetchone()[0] == synchronous_commit
    ledger = Ledger()
    for rnd in range(1, 3):
        load = InsertLoad(node, prefix_base=rnd * 100, clients=16, seed=seed + rnd).start()
        time.sleep(1.0)
        term_at = time.monotonic()
        rc = node.terminate()
        took = time.monotonic() - term_at
        log = node.log()
        load.join()
        assert rc == 0, f"server exited with code {rc} after SIGTERM:\n{log}"
        assert took < 10, f"shutdown took {took:.1f} s"
        assert "database system is shut down" in log, log
        load.assert_errors_only_after(term_at)
        assert load.count(ACKED) > 0
        node.start()
        assert "invalid record at" not in node.log(), f"clean shutdown left a torn log:\n{node.log()}"
        with node.connect() as conn:
            res = ledger.check(conn, load.all_txns())
        print(f"round {rnd}: shutdown in {took:.2f} s; {load.summary()}; in doubt present {res['in_doubt_present']}")
    # And a shutdown with no load at all: everything is there, nothing is cut.
    node.stop_clean()
    node.start()
    assert "invalid record at" not in node.log()
    with node.connect() as conn:
        ledger.check(conn, [])
    node.stop_clean()


@pytest.mark.timeout(180)
def test_crash_while_a_new_segment_is_created(nodes):
    """SIGKILL just as the log moves into a new segment file (while it is being created and
    zero-filled): recovery must still start and keep every acknowledged commit."""
    node = nodes().start()
    with node.connect() as conn:
        conn.execute("create table seg (id bigint primary key, pad text)")
    writers = 4
    pad = "s" * 4000
    have: dict[int, int] = {w: 0 for w in range(writers)}  # writer -> rows 1..have present
    for rnd, (segno, delay) in enumerate([(1, 0.0), (2, 0.002), (3, 0.010)], start=1):
        acked = dict(have)
        errors: list = []
        stop = threading.Event()

        def write(w: int) -> None:
            try:
                with psycopg.connect(node.conninfo(), autocommit=True) as conn:
                    k = acked[w]
                    while not stop.is_set():
                        conn.execute("insert into seg values (%s, %s)", (w * ID_STRIDE + k + 1, pad))
                        k += 1
                        acked[w] = k
            except psycopg.OperationalError:
                pass
            except Exception as e:
                errors.append(e)

        threads = [threading.Thread(target=write, args=(w,), daemon=True) for w in range(writers)]
        for th in threads:
            th.start()
        path = segment_path(node.datadir, segno)
        deadline = time.monotonic() + 60
        while not path.exists() and time.monotonic() < deadline and node.running:
            time.sleep(0.0002)
        assert node.running, f"server died under the load:\n{node.log()}"
        assert path.exists(), f"the log did not reach segment {segno} within 60 s"
        time.sleep(delay)
        node.kill()
        size = path.stat().st_size
        stop.set()
        for th in threads:
            th.join(30)
        assert not errors, errors
        print(f"round {rnd}: killed {delay * 1000:.0f} ms after segment {segno} appeared ({size} bytes at the kill)")
        node.start()
        with node.connect() as conn:
            for w in range(writers):
                lo, hi = w * ID_STRIDE, (w + 1) * ID_STRIDE
                cnt, mx = conn.execute(
                    "select count(*), coalesce(max(id), %s) from seg where id > %s and id < %s", (lo, lo, hi)
                ).fetchone()
                # Writer w's rows are a prefix 1..k with every acknowledged row in it (and
                # possibly the one whose commit was in flight).
                assert cnt == mx - lo, f"writer {w}: {cnt} rows but max id {mx - lo}: a gap"
                assert acked[w] <= cnt <= acked[w] + 1, f"writer {w}: {acked[w]} acknowledged, {cnt} present"
                have[w] = cnt
    node.stop_clean()


@pytest.mark.timeout(60)
def test_uncommitted_ddl_does_not_survive_a_crash(nodes):
    """A crash rolls back an open transaction entirely, its CREATE TABLE and DROP TABLE too."""
    node = nodes().start()
    with node.connect() as conn:
        conn.execute("create table kept (id int primary key)")
        conn.execute("insert into kept values (1), (2), (3)")
    creating = node.connect(autocommit=False)
    creating.execute("create table never_committed (id int primary key)")
    creating.execute("insert into never_committed values (1)")
    dropping = node.connect(autocommit=False)
    dropping.execute("drop table kept")
    time.sleep(0.3)
    node.kill()
    for c in (creating, dropping):
        c.close()
    node.start()
    with node.connect() as conn:
        assert conn.execute("select count(*) from kept").fetchone() == (3,)
        with pytest.raises(psycopg.errors.UndefinedTable):
            conn.execute("select count(*) from never_committed")
        # The name is free again.
        conn.execute("create table never_committed (id int primary key)")
    node.stop_clean()


@pytest.mark.timeout(60)
def test_sequence_values_are_not_handed_out_twice_after_a_crash(nodes):
    """Values returned by nextval() before a crash are never returned again after it.

    ``commit_delay`` holds each log flush back for up to 100 ms, so the crash reliably
    lands while the sequence's log record is still unflushed."""
    node = nodes({"commit_delay": "100000"}).start()
    with node.connect() as conn:
        conn.execute("create table s (id serial primary key, v int)")
        time.sleep(0.3)  # the flusher is idle again
        handed_out = [conn.execute("select nextval('s_id_seq')").fetchone()[0] for _ in range(3)]
    assert handed_out == [1, 2, 3]
    node.kill()
    node.start()
    with node.connect() as conn:
        nxt = conn.execute("select nextval('s_id_seq')").fetchone()[0]
        assert nxt > max(handed_out), f"nextval() returned {nxt} again after the crash (had returned {handed_out})"
        conn.execute("insert into s (v) values (1)")
        assert conn.execute("select id from s").fetchone()[0] > max(handed_out)
    node.stop_clean()
