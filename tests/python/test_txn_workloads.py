"""Randomized transaction workloads, checked against what PostgreSQL 15 guarantees.

- The "half a commit" race at READ COMMITTED: a statement that waited for a row lock or
  a unique key held by a transaction re-checks the row as PostgreSQL does, and the
  statement right after it must see all of that transaction's writes, never only part.
- A list-append and register workload in the style of Elle, at READ COMMITTED and
  REPEATABLE READ: every append that committed is in the final list exactly once, no
  aborted or uncommitted write is ever read, every read is a prefix of the final list and
  includes every transaction its client has already observed, and REPEATABLE READ reads
  come from one consistent snapshot.
- Bank transfers between accounts at READ COMMITTED and REPEATABLE READ: every snapshot
  sums to the same total.

Each run is seeded (the operations each client draws are reproducible; the interleaving
is up to the scheduler) and bounded in time. Overrides:

  STEADYDB_RACE_RUNS         repetitions of each lock-wait race     (default 200)
  STEADYDB_WORKLOAD_SECONDS  seconds each randomized workload runs  (default 5)
  STEADYDB_WORKLOAD_SEED     seed of the randomized workloads       (default 1)
"""

from __future__ import annotations

import itertools
import os
import random
import threading
import time
from dataclasses import dataclass, field

import psycopg
import pytest

RC = "read committed"
RR = "repeatable read"
LEVELS = pytest.mark.parametrize("level", [RC, RR], ids=["rc", "rr"])

RACE_RUNS = int(os.environ.get("STEADYDB_RACE_RUNS", "200"))
WORKLOAD_SECONDS = float(os.environ.get("STEADYDB_WORKLOAD_SECONDS", "5"))
SEED = int(os.environ.get("STEADYDB_WORKLOAD_SEED", "1"))

FINISH = 10.0  # how long any statement may take once nothing holds it up
LOCK_WAIT_SEEN = 5.0  # how long a statement may take to show up as waiting for a lock
JOIN_SLACK = 30.0  # how long workload threads may overrun their deadline before we call it a hang

ABORTS = {"40001", "40P01"}  # serialization failure, deadlock: a transaction may be rolled back
UNIQUE_VIOLATION = "23505"


class Background:
    """Run ``fn(*args)`` in a daemon thread so that a blocked or hung server cannot hang
    the test: every wait on it is bounded."""

    def __init__(self, fn, *args):
        self.result = None
        self.error: BaseException | None = None
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(fn, *args), daemon=True)
        self._thread.start()

    def _run(self, fn, *args) -> None:
        try:
            self.result = fn(*args)
        except BaseException as e:  # noqa: BLE001 - reported to the test
            self.error = e
        finally:
            self._done.set()

    def done(self) -> bool:
        return self._done.is_set()

    def get(self, timeout: float = FINISH):
        assert self._done.wait(timeout), f"background work did not finish within {timeout} s"
        if self.error is not None:
            raise self.error
        return self.result


def run_bounded(conn: psycopg.Connection, sql: str, params=None) -> None:
    """Execute a statement that must not wait for anything, failing after FINISH seconds."""
    Background(conn.execute, sql, params).get()


def wait_until_lock_wait(observer: psycopg.Connection, pid: int, work: Background) -> None:
    """Return once the session ``pid`` is waiting for a lock; fail if ``work`` finished
    instead (it should have blocked) or nothing shows within LOCK_WAIT_SEEN."""
    deadline = time.monotonic() + LOCK_WAIT_SEEN
    while time.monotonic() < deadline:
        assert not work.done(), f"the statement did not block: {work.error or work.result!r}"
        row = observer.execute("select wait_event_type from pg_stat_activity where pid = %s", (pid,)).fetchone()
        if row is not None and row[0] == "Lock":
            return
        time.sleep(0.001)
    raise AssertionError(f"session {pid} did not wait for a lock within {LOCK_WAIT_SEEN} s")


def join_all(threads: list[threading.Thread], deadline: float) -> None:
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))


class CommitTraffic:
    """Clients that commit small autocommit transactions to a table of their own until
    stopped, so that the commits of a test's transactions share log flushes with others
    (group commit) instead of always flushing alone."""

    CLIENTS = 2

    def __init__(self, db):
        self.table = db.table("traffic")
        with db.connect() as conn:
            conn.execute(f"create table {self.table} (k int primary key, n int)")
            for k in range(1, self.CLIENTS + 1):
                conn.execute(f"insert into {self.table} values (%s, 0)", (k,))
        self.stop = threading.Event()
        self.errors: list[str] = []
        self.threads = [
            threading.Thread(target=self._run, args=(db.connect(), k), daemon=True) for k in range(1, self.CLIENTS + 1)
        ]

    def _run(self, conn: psycopg.Connection, key: int) -> None:
        try:
            while not self.stop.is_set():
                conn.execute(f"update {self.table} set n = n + 1 where k = %s", (key,))
        except BaseException as e:  # noqa: BLE001 - reported to the test
            self.errors.append(f"commit traffic client {key}: {e!r}")

    def __enter__(self) -> CommitTraffic:
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        join_all(self.threads, time.monotonic() + FINISH)
        assert not any(t.is_alive() for t in self.threads), "commit traffic did not stop"
        assert not self.errors, "\n".join(self.errors)


# =========================================================================== the half-commit race

# Each run: T1 (READ COMMITTED) writes row 2, then runs `t1_sql` on row 1; T2 runs `t2_sql`
# on row 1, which waits for T1. Before the run both rows hold run - 1 (`{old}`); T1 makes
# row 2 hold `run`. `returns_row`: whether T2's statement, once T1 commits, returns row 1
# as T1 left it (holding `run`), or nothing (the row no longer matches, or is gone).
UPDATE_RACES = {
    "update-rereads-row": (
        "update {t} set v = v + 1 where k = 1",
        "update {t} set v = v where k = 1 returning v",
        True,
    ),
    "update-recheck-fails": (
        "update {t} set v = v + 1 where k = 1",
        "update {t} set v = v where k = 1 and v = {old} returning v",
        False,
    ),
    "delete-recheck-fails": (
        "update {t} set v = v + 1 where k = 1",
        "delete from {t} where k = 1 and v = {old} returning v",
        False,
    ),
    "update-of-deleted-row": (
        "delete from {t} where k = 1",
        "update {t} set v = v where k = 1 returning v",
        False,
    ),
    # a new row under the same key is not the row T2's snapshot found: T2 leaves it alone
    "update-of-reinserted-key": (
        "delete from {t} where k = 1; insert into {t} values (1, {new})",
        "update {t} set v = v where k = 1 returning v",
        False,
    ),
}


@pytest.mark.timeout(300)
@pytest.mark.parametrize("race", UPDATE_RACES)
def test_waiter_sees_whole_commit_after_row_lock_wait(db, race):
    """READ COMMITTED, after a row lock wait: T1 writes row 2, then row 1; T2's statement on
    row 1 waits for T1. When T1 commits, T2's statement re-reads row 1 (PostgreSQL's
    EvalPlanQual) and returns T1's new row, or nothing where the row no longer matches or
    is gone (a row inserted under its key meanwhile is another row); either way T2's next
    statement (a new snapshot) must see T1's write to row 2 too. PostgreSQL wakes a lock
    waiter only once the commit is visible to every new snapshot, so T2 never sees the old
    row 2. Other clients commit meanwhile, so that T1's commit shares log flushes.
    Repeated STEADYDB_RACE_RUNS times; every run must pass."""
    t1_sql, t2_sql, returns_row = UPDATE_RACES[race]
    table = db.table("pair")
    setup = db.connect()
    setup.execute(f"create table {table} (k int primary key, v int)")
    setup.execute(f"insert into {table} values (1, 0), (2, 0)")
    t1, t2, observer = db.connect(), db.connect(), db.connect()
    pid2 = t2.info.backend_pid

    def t2_statement_then_read(sql: str):
        returned = t2.execute(sql).fetchall()
        seen = t2.execute(f"select v from {table} where k = 2").fetchall()
        return returned, seen

    failures = []
    with CommitTraffic(db):
        for run in range(1, RACE_RUNS + 1):
            run_bounded(t1, "begin isolation level read committed")
            run_bounded(t1, f"update {table} set v = v + 1 where k = 2")
            run_bounded(t1, t1_sql.format(t=table, new=run))
            run_bounded(t2, "begin isolation level read committed")
            waiter = Background(t2_statement_then_read, t2_sql.format(t=table, old=run - 1))
            wait_until_lock_wait(observer, pid2, waiter)
            run_bounded(t1, "commit")
            returned, seen = waiter.get()
            run_bounded(t2, "commit")
            expected = [(run,)] if returns_row else []
            if (returned, seen) != (expected, [(run,)]):
                failures.append(
                    f"run {run}: T2's statement returned {returned}, then row 2 read {seen}; "
                    f"expected {expected}, then [({run},)]"
                )
            restore = f"insert into {table} values (1, %s) on conflict (k) do update set v = excluded.v"
            run_bounded(setup, restore, (run,))
    assert not failures, f"{len(failures)} of {RACE_RUNS} runs went wrong:\n" + "\n".join(failures[:10])
    assert setup.execute(f"select k, v from {table} order by k").fetchall() == [(1, RACE_RUNS), (2, RACE_RUNS)]


# Each run: T1 inserts keys b, then a ({a}), with v = 1; T2 (autocommit) runs this on key
# a, which waits for T1, and gets the SQLSTATE or the rows given once T1 commits.
INSERT_RACES = {
    "insert-unique-violation": ("insert into {t} values ({a}, 2)", UNIQUE_VIOLATION),
    "insert-on-conflict-do-nothing": ("insert into {t} values ({a}, 2) on conflict (k) do nothing returning v", []),
    "upsert-updates": (
        "insert into {t} values ({a}, 2) on conflict (k) do update set v = {t}.v + 10 returning v",
        [(11,)],
    ),
}


@pytest.mark.timeout(300)
@pytest.mark.parametrize("race", INSERT_RACES)
def test_waiter_sees_whole_commit_after_unique_key_wait(db, race):
    """READ COMMITTED, after a unique-key wait: T1 inserts keys b then a; T2's insert of key
    a waits for T1. When T1 commits, T2's insert fails 23505 (or does nothing, or updates
    T1's row, with ON CONFLICT), and T2's next statement (in autocommit, a new snapshot)
    must see key b, which T1 committed together with a. Other clients commit meanwhile, so
    that T1's commit shares log flushes. Repeated STEADYDB_RACE_RUNS times with fresh keys;
    every run must pass."""
    t2_sql, expected = INSERT_RACES[race]
    table = db.table("pairins")
    setup = db.connect()
    setup.execute(f"create table {table} (k int primary key, v int)")
    t1, t2, observer = db.connect(), db.connect(), db.connect()
    pid2 = t2.info.backend_pid

    def t2_insert_then_read(sql: str, key_b: int):
        try:
            outcome = t2.execute(sql).fetchall()
        except psycopg.Error as e:
            outcome = e.sqlstate
        seen = t2.execute(f"select k, v from {table} where k = %s", (key_b,)).fetchall()
        return outcome, seen

    failures = []
    with CommitTraffic(db):
        for run in range(1, RACE_RUNS + 1):
            key_a, key_b = 2 * run, 2 * run + 1
            run_bounded(t1, "begin isolation level read committed")
            run_bounded(t1, f"insert into {table} values (%s, 1)", (key_b,))
            run_bounded(t1, f"insert into {table} values (%s, 1)", (key_a,))
            waiter = Background(t2_insert_then_read, t2_sql.format(t=table, a=key_a), key_b)
            wait_until_lock_wait(observer, pid2, waiter)
            run_bounded(t1, "commit")
            outcome, seen = waiter.get()
            if (outcome, seen) != (expected, [(key_b, 1)]):
                failures.append(
                    f"run {run}: T2's insert of {key_a} gave {outcome}, then key {key_b} read {seen}; "
                    f"expected {expected} and [({key_b}, 1)]"
                )
    assert not failures, f"{len(failures)} of {RACE_RUNS} runs went wrong:\n" + "\n".join(failures[:10])
    assert setup.execute(f"select count(*) from {table}").fetchone() == (2 * RACE_RUNS,)


# =========================================================================== list-append + registers

LIST_KEYS = range(1, 9)
REGISTER_KEYS = range(1, 5)
CLIENTS = 8
MAX_OPS = 4


@dataclass
class Op:
    kind: str  # "read", "append" (list keys), "get", "set" (register keys)
    key: int
    value: object = None  # appended element / written value; what a read returned
    start: float = 0.0
    end: float | None = None


@dataclass
class Txn:
    client: int
    ops: list[Op] = field(default_factory=list)
    committed: bool = False
    commit_start: float | None = None
    commit_end: float | None = None

    def appended(self, key: int, before: int | None = None) -> list[int]:
        """This transaction's appends to ``key``, of its first ``before`` operations."""
        ops = self.ops if before is None else self.ops[:before]
        return [op.value for op in ops if op.kind == "append" and op.key == key and op.end is not None]

    @property
    def first_start(self) -> float:
        return self.ops[0].start


def draw_ops(rng: random.Random) -> list[tuple[str, int]]:
    """One transaction's operations: 1 to MAX_OPS of read/append (list keys) and get/set
    (register keys). The writes, which hold their row's lock to the end, come in one global
    order (list keys, then registers, each by key), so that transactions never deadlock:
    PostgreSQL takes deadlock_timeout (1 s) to find one, which would stall the workload.
    Reads fall in between the writes at random."""
    ops = []
    for _ in range(rng.randint(1, MAX_OPS)):
        kind = rng.choice(["read", "append", "get", "set"])
        ops.append((kind, rng.choice(LIST_KEYS if kind in ("read", "append") else REGISTER_KEYS)))
    write_slots = [i for i, (kind, _) in enumerate(ops) if kind in ("append", "set")]
    in_lock_order = sorted((ops[i] for i in write_slots), key=lambda op: (op[0] == "set", op[1]))
    for slot, op in zip(write_slots, in_lock_order):
        ops[slot] = op
    return ops


def parse_list(text: str) -> list[int]:
    return [int(x) for x in text.split(",")[1:]]


def run_list_append_clients(db, level: str, lists: str, registers: str, seconds: float):
    """Run the clients until ``seconds`` have passed; returns (history, client errors)."""
    elements = itertools.count(1)  # append elements and register values, all distinct
    history: list[Txn] = []
    errors: list[str] = []
    deadline = time.monotonic() + seconds
    history_lock = threading.Lock()

    def client(index: int) -> None:
        rng = random.Random(SEED * 1000 + index)
        try:
            conn = db.connect()
            while time.monotonic() < deadline:
                txn = Txn(index)
                try:
                    conn.execute(f"begin isolation level {level}")
                    for kind, key in draw_ops(rng):
                        run_op(conn, txn, kind, key)
                    txn.commit_start = time.monotonic()
                    conn.execute("commit")
                    txn.commit_end = time.monotonic()
                    txn.committed = True
                except psycopg.Error as e:
                    if e.sqlstate not in ABORTS:
                        raise
                    conn.execute("rollback")
                with history_lock:
                    history.append(txn)
        except BaseException as e:  # noqa: BLE001 - reported to the test
            errors.append(f"client {index}: {e!r}")

    def run_op(conn, txn: Txn, kind: str, key: int) -> None:
        op = Op(kind, key)
        txn.ops.append(op)
        if kind in ("append", "set"):
            op.value = next(elements)
        op.start = time.monotonic()
        if kind == "read":
            rows = conn.execute(f"select v from {lists} where k = %s", (op.key,)).fetchall()
            assert len(rows) == 1, f"list key {op.key} read {len(rows)} rows"
            op.value = parse_list(rows[0][0])
        elif kind == "append":
            cur = conn.execute(f"update {lists} set v = v || %s where k = %s", (f",{op.value}", op.key))
            assert cur.rowcount == 1, f"append to list key {op.key} updated {cur.rowcount} rows"
        elif kind == "get":
            rows = conn.execute(f"select v from {registers} where k = %s", (op.key,)).fetchall()
            assert len(rows) == 1, f"register {op.key} read {len(rows)} rows"
            op.value = rows[0][0]
        else:
            cur = conn.execute(f"update {registers} set v = %s where k = %s", (op.value, op.key))
            assert cur.rowcount == 1, f"write of register {op.key} updated {cur.rowcount} rows"
        op.end = time.monotonic()

    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(CLIENTS)]
    for t in threads:
        t.start()
    join_all(threads, deadline + JOIN_SLACK)
    hung = sum(t.is_alive() for t in threads)
    assert not hung, f"{hung} clients still running {JOIN_SLACK} s after the deadline"
    return history, errors


INF = float("inf")


def commit_start(txn: Txn | None) -> float:
    return INF if txn is None or txn.commit_start is None else txn.commit_start


def commit_end(txn: Txn | None) -> float:
    return INF if txn is None or txn.commit_end is None else txn.commit_end


class FinalLists:
    """The final lists, indexed so that each read is checked in constant time. A read that
    returned a prefix of a key's final list is described by the prefix's length L."""

    def __init__(self, final_lists: dict[int, list[int]], writer: dict[int, Txn]):
        self.lists = final_lists
        self.where: dict[int, list[tuple[int, int]]] = {}  # element -> [(key, index)]
        self.spans: dict[int, dict[int, tuple[int, int]]] = {}  # id(txn) -> key -> first, last index
        self.txns: dict[int, Txn] = {}
        for key, elems in final_lists.items():
            for i, e in enumerate(elems):
                self.where.setdefault(e, []).append((key, i))
                w = writer.get(e)
                if w is not None:
                    self.txns[id(w)] = w
                    spans = self.spans.setdefault(id(w), {})
                    spans[key] = (spans.get(key, (i, i))[0], i)
        self.latest_commit_start: dict[int, list[float]] = {}  # key -> [L]: max over the first L
        self.earliest_commit_end: dict[int, list[float]] = {}  # key -> [L]: min over all but the first L
        self.straddling: dict[int, list[Txn | None]] = {}  # key -> [L]: a txn appending on both sides of L
        for key, elems in final_lists.items():
            writers = [writer.get(e) for e in elems]
            starts = [-INF]
            for w in writers:
                starts.append(max(starts[-1], commit_start(w)))
            ends = [INF] * (len(elems) + 1)
            for i in reversed(range(len(elems))):
                ends[i] = min(ends[i + 1], commit_end(writers[i]))
            self.latest_commit_start[key] = starts
            self.earliest_commit_end[key] = ends
            self.straddling[key] = [None] * (len(elems) + 1)
        for tid, spans in self.spans.items():
            for key, (first, last) in spans.items():
                for boundary in range(first + 1, last + 1):
                    self.straddling[key][boundary] = self.txns[tid]
        self._apart: dict[tuple[int, int], list] = {}

    def apart(self, key1: int, len1: int, key2: int, len2: int) -> Txn | None:
        """A transaction whose appends to key1 all lie in the first len1 elements and whose
        appends to key2 all lie beyond the first len2: seen on one key, unseen on the other."""
        best = self._apart.get((key1, key2))
        if best is None:
            # best[L]: of the transactions appending to both keys, with all key1 appends in
            # the first L elements, the one whose first key2 append comes latest
            best = [None] * (len(self.lists.get(key1, [])) + 1)
            for tid, spans in self.spans.items():
                if key1 in spans and key2 in spans:
                    boundary = spans[key1][1] + 1
                    if best[boundary] is None or spans[key2][0] > best[boundary][0]:
                        best[boundary] = (spans[key2][0], tid)
            for boundary in range(1, len(best)):
                earlier, here = best[boundary - 1], best[boundary]
                if earlier is not None and (here is None or earlier[0] > here[0]):
                    best[boundary] = earlier
            self._apart[(key1, key2)] = best
        hit = best[len1]
        return self.txns[hit[1]] if hit is not None and hit[0] >= len2 else None


def check_list_append_history(history: list[Txn], final_lists: dict, final_registers: dict, level: str) -> list[str]:
    """Every anomaly in the history, as readable lines (none: all is well)."""
    writer: dict[int, Txn] = {}  # element or register value -> the transaction that wrote it
    for txn in history:
        for op in txn.ops:
            if op.kind in ("append", "set"):
                writer[op.value] = txn
    lists = FinalLists(final_lists, writer)
    committed_writes: dict[int, set] = {k: {0} for k in REGISTER_KEYS}  # register -> final values; 0 is initial
    for txn in history:
        if txn.committed:
            for key, value in {op.key: op.value for op in txn.ops if op.kind == "set"}.items():
                committed_writes[key].add(value)

    problems = check_final_state(history, lists, final_registers, committed_writes, writer)
    views = {client: ClientView(lists) for client in range(CLIENTS)}
    for txn in sorted((t for t in history if t.ops), key=lambda t: t.first_start):
        problems += check_reads(txn, level, lists, committed_writes, writer, views[txn.client])
    return problems


class ClientView:
    """What one client has observed, which every later snapshot of it must include.

    A client that read a transaction's write, or whose append landed right after one of
    its appends (building on its version of the row, as after waiting for its lock),
    has observed that transaction: in PostgreSQL it was visible to every new snapshot
    by then (a lock waiter wakes only after the commit is visible), so every later read
    of this client must show all of that transaction's appends, on every key."""

    def __init__(self, lists: FinalLists):
        self.lists = lists
        # list key -> (prefix length, how the client learnt of it, the transaction observed)
        self.must_see: dict[int, tuple[int, str, Txn | None]] = {}

    def require(self, key: int, length: int, how: str, other: Txn | None = None) -> None:
        if length > self.must_see.get(key, (0,))[0]:
            self.must_see[key] = (length, how, other)

    def observed(self, other: Txn | None, how: str) -> None:
        if other is None or not other.committed:
            return
        for key, (_, last) in self.lists.spans.get(id(other), {}).items():
            self.require(key, last + 1, how, other)

    def missing(self, key: int, length: int) -> str | None:
        needed, how, other = self.must_see.get(key, (0, "", None))
        if length >= needed:
            return None
        return f"the first {needed} elements: the client had {how}{' ' + describe(other) if other else ''}"


def check_final_state(history, lists: FinalLists, final_registers, committed_writes, writer) -> list[str]:
    problems = []
    if sorted(lists.lists) != list(LIST_KEYS) or sorted(final_registers) != list(REGISTER_KEYS):
        problems.append(f"rows vanished or appeared: lists {sorted(lists.lists)}, registers {sorted(final_registers)}")
    for e, places in lists.where.items():
        if len(places) > 1:
            problems.append(f"element {e} is in the final lists more than once: (key, index) {places}")
        w = writer.get(e)
        if w is None:
            problems.append(f"element {e} at (key, index) {places[0]} was never appended")
        elif not w.committed:
            problems.append(f"element {e} at (key, index) {places[0]} is of an aborted {describe(w)} (G1a)")
    for txn in history:
        if not txn.committed:
            continue
        for key in {op.key for op in txn.ops if op.kind == "append"}:
            mine = txn.appended(key)
            places = [lists.where.get(e, [(None, None)])[0] for e in mine]
            if any(k != key for k, _ in places):
                problems.append(f"committed appends {mine} to key {key} ended up at {places} (lost update)")
            elif [i for _, i in places] != list(range(places[0][1], places[0][1] + len(mine))):
                problems.append(f"appends {mine} to key {key} of one transaction are not adjacent: {places}")
    for key, value in final_registers.items():
        if value not in committed_writes.get(key, ()):
            problems.append(f"register {key} ends as {value}, not a committed write of {describe(writer.get(value))}")
    return problems


def check_reads(txn: Txn, level: str, lists: FinalLists, committed_writes, writer, view: ClientView) -> list[str]:
    """The reads of one transaction: what it saw of the final state, and when."""
    problems = []
    list_snapshot: dict[int, int] = {}  # list key -> prefix length seen (less own appends)
    register_snapshot: dict[int, int] = {}  # register -> value seen before writing it
    for i, op in enumerate(txn.ops):
        if op.end is None:
            continue
        if op.kind == "append":
            places = lists.where.get(op.value, [])
            if txn.committed and len(places) == 1 and places[0][1] > 0:
                key, index = places[0]
                before = writer.get(lists.lists[key][index - 1])
                if before is not txn:
                    view.observed(before, f"appended to key {key} right after")
            continue
        if op.kind == "set":
            continue
        # a snapshot taken after a commit returned must see it (the client sends the
        # statement, and at REPEATABLE READ the transaction's first one, only after that)
        snapshot_start = txn.first_start if level == RR else op.start
        if op.kind == "read":
            own = txn.appended(op.key, before=i)
            seen = op.value[: len(op.value) - len(own)]
            if op.value[len(seen) :] != own:
                problems.append(f"{describe(txn)} read key {op.key} = {show(op.value)} without its own appends last")
                continue
            final = lists.lists.get(op.key, [])
            if final[: len(seen)] != seen:
                strangers = [f"{e}: {describe(writer.get(e))}" for e in seen if e not in final]
                problems.append(
                    f"{describe(txn)} read key {op.key} = {seen}, not a prefix of the final list {final}; "
                    f"not in the final list: {strangers}"
                )
                continue
            length = len(seen)
            if lists.latest_commit_start[op.key][length] > op.end:
                early = next(e for e in seen if commit_start(writer.get(e)) > op.end)
                problems.append(f"{describe(txn)} read {early} of {describe(writer.get(early))} before its commit")
            if lists.earliest_commit_end[op.key][length] < snapshot_start:
                missed = next(e for e in final[length:] if commit_end(writer.get(e)) < snapshot_start)
                ago = snapshot_start - commit_end(writer.get(missed))
                problems.append(
                    f"{describe(txn)} read key {op.key} = {show(seen)}, without {missed}, whose transaction's "
                    f"commit had returned {ago * 1000:.2f} ms before (stale read)"
                )
            missing = view.missing(op.key, length)
            if missing:
                problems.append(f"{describe(txn)} read key {op.key} = {show(seen)}, without {missing}")
            view.require(op.key, length, "read as much before")
            if length > 0 and writer.get(seen[-1]) is not txn:
                view.observed(writer.get(seen[-1]), f"read key {op.key} up to an append of")
            if level == RR and list_snapshot.setdefault(op.key, length) != length:
                problems.append(
                    f"{describe(txn)} read key {op.key} as {show(final[: list_snapshot[op.key]])}, "
                    f"then as {show(seen)} (non-repeatable read)"
                )
        else:
            own = [o.value for o in txn.ops[:i] if o.kind == "set" and o.key == op.key and o.end is not None]
            if own:
                if op.value != own[-1]:
                    problems.append(f"{describe(txn)} wrote register {op.key} = {own[-1]}, then read {op.value}")
                continue
            w = writer.get(op.value)
            if op.value not in committed_writes[op.key]:
                problems.append(
                    f"{describe(txn)} read register {op.key} = {op.value}, not a committed final write "
                    f"(G1a/G1b): {describe(w)}"
                )
            elif commit_start(w) > op.end and w is not None:
                problems.append(f"{describe(txn)} read {op.value} of {describe(w)} before its commit")
            if w is not txn:
                view.observed(w, f"read register {op.key} = {op.value} of")
            if level == RR and register_snapshot.setdefault(op.key, op.value) != op.value:
                problems.append(
                    f"{describe(txn)} read register {op.key} as {register_snapshot[op.key]}, then as {op.value} "
                    f"(non-repeatable read)"
                )
    if level == RR:
        problems += check_snapshot(txn, list_snapshot, register_snapshot, lists, writer)
    return problems


def check_snapshot(txn: Txn, list_snapshot: dict, register_snapshot: dict, lists: FinalLists, writer) -> list[str]:
    """REPEATABLE READ: what ``txn`` read (less its own writes) comes from one snapshot:
    every other transaction's appends are all seen or all unseen, and a transaction
    whose register value it read is seen. If ``txn`` committed, its appends directly
    follow what it read of the key (first committer wins: none came in between)."""
    problems = []
    keys = sorted(list_snapshot)
    for key in keys:
        other = lists.straddling[key][list_snapshot[key]]
        if other is not None and other is not txn:
            problems.append(f"{describe(txn)} saw only some appends to key {key} of {describe(other)} (fractured read)")
        for key2 in keys:
            other = lists.apart(key, list_snapshot[key], key2, list_snapshot[key2]) if key2 != key else None
            if other is not None and other is not txn:
                problems.append(
                    f"{describe(txn)} saw the appends of {describe(other)} to key {key} but not to key {key2} "
                    f"(fractured read)"
                )
    for register, value in register_snapshot.items():
        other = writer.get(value)
        spans = lists.spans.get(id(other), {}) if other is not None and other is not txn else {}
        for key in keys:
            if key in spans and spans[key][1] >= list_snapshot[key]:
                problems.append(
                    f"{describe(txn)} read register {register} of {describe(other)} but not its appends to "
                    f"key {key} (fractured read)"
                )
    if txn.committed:
        for key in keys:
            mine = txn.appended(key)
            span = lists.spans.get(id(txn), {}).get(key)
            if mine and span is not None and span[0] != list_snapshot[key]:
                problems.append(
                    f"{describe(txn)} read {list_snapshot[key]} elements of key {key}, but its appends follow "
                    f"element {span[0]} of the final list {lists.lists[key]} (lost update)"
                )
    return problems


def describe(txn: Txn | None) -> str:
    if txn is None:
        return "no transaction"
    ops = ", ".join(f"{o.kind} {o.key}{'' if o.value is None else ' ' + show(o.value)}" for o in txn.ops)
    return f"client {txn.client}'s {'committed' if txn.committed else 'aborted'} txn [{ops}]"


def show(value) -> str:
    """A list read, shortened to its length and last elements."""
    if isinstance(value, list) and len(value) > 4:
        return f"[({len(value) - 3} more) {', '.join(map(str, value[-3:]))}]"
    return str(value)


@LEVELS
@pytest.mark.timeout(int(WORKLOAD_SECONDS) + 120)
def test_list_append_and_registers(db, level):
    """Elle-style list-append and register workload: CLIENTS clients run transactions of
    one to MAX_OPS random operations (read or append a list, read or write a register) at
    ``level`` for STEADYDB_WORKLOAD_SECONDS, retrying nothing; 40001 and 40P01 abort a
    transaction. PostgreSQL 15 then satisfies: no committed append is lost or duplicated,
    no aborted or uncommitted write (nor an intermediate register value) is ever read,
    every read is a prefix of the final list, a read sees everything committed before its
    snapshot, each client's reads of a key only grow; at REPEATABLE READ each transaction
    reads one atomic snapshot and its appends directly follow what it read."""
    lists, registers = db.table("la"), db.table("reg")
    setup = db.connect()
    setup.execute(f"create table {lists} (k int primary key, v text not null)")
    setup.execute(f"create table {registers} (k int primary key, v int)")
    for k in LIST_KEYS:
        setup.execute(f"insert into {lists} values (%s, '')", (k,))
    for k in REGISTER_KEYS:
        setup.execute(f"insert into {registers} values (%s, 0)", (k,))

    history, errors = run_list_append_clients(db, level, lists, registers, WORKLOAD_SECONDS)
    assert not errors, "\n".join(errors)

    final_lists = {k: parse_list(v) for k, v in setup.execute(f"select k, v from {lists}").fetchall()}
    final_registers = dict(setup.execute(f"select k, v from {registers}").fetchall())
    committed = sum(t.committed for t in history)
    ops = sum(len(t.ops) for t in history)
    print(f"\n{level}: {len(history)} transactions ({committed} committed), {ops} operations")
    assert committed >= 50, f"only {committed} transactions committed: the workload hardly ran"
    problems = check_list_append_history(history, final_lists, final_registers, level)
    assert not problems, f"{len(problems)} anomalies, the first ones:\n" + "\n".join(problems[:15])


# =========================================================================== bank transfers

ACCOUNTS = 8
OPENING_BALANCE = 1000
TRANSFER_CLIENTS = 4


@LEVELS
@pytest.mark.timeout(int(WORKLOAD_SECONDS) + 120)
def test_bank_transfers_keep_the_total(db, level):
    """Bank transfers: TRANSFER_CLIENTS clients move random amounts between two random
    accounts at ``level`` (at REPEATABLE READ half of them read both balances first and
    write the new values, which only first-committer-wins keeps from losing updates);
    40001 and 40P01 abort a transfer. A reader checks that ``select sum(balance)`` always
    equals the total and, at REPEATABLE READ, that reading the accounts one by one in one
    transaction adds up to it too. PostgreSQL 15 never shows another sum."""
    table = db.table("bank")
    setup = db.connect()
    setup.execute(f"create table {table} (id int primary key, balance int not null)")
    for i in range(1, ACCOUNTS + 1):
        setup.execute(f"insert into {table} values (%s, %s)", (i, OPENING_BALANCE))
    total = ACCOUNTS * OPENING_BALANCE
    deadline = time.monotonic() + WORKLOAD_SECONDS
    errors: list[str] = []
    bad_sums: list[str] = []
    counts = {"transfers": 0, "aborted": 0, "sums": 0, "walks": 0}
    counts_lock = threading.Lock()

    def count(what: str) -> None:
        with counts_lock:
            counts[what] += 1

    def transfer(conn, rng: random.Random) -> None:
        src, dst = rng.sample(range(1, ACCOUNTS + 1), 2)
        amount = rng.randint(1, 50)
        change = {src: -amount, dst: amount}
        in_lock_order = sorted(change)  # no deadlocks: PostgreSQL takes 1 s to find one
        conn.execute(f"begin isolation level {level}")
        if level == RR and rng.random() < 0.5:
            balance = {
                acct: conn.execute(f"select balance from {table} where id = %s", (acct,)).fetchone()[0]
                for acct in (src, dst)
            }
            for acct in in_lock_order:
                conn.execute(f"update {table} set balance = %s where id = %s", (balance[acct] + change[acct], acct))
        else:
            for acct in in_lock_order:
                conn.execute(f"update {table} set balance = balance + %s where id = %s", (change[acct], acct))
        conn.execute("commit")

    def transfer_client(index: int) -> None:
        rng = random.Random(SEED * 1000 + index)
        try:
            conn = db.connect()
            while time.monotonic() < deadline:
                try:
                    transfer(conn, rng)
                    count("transfers")
                except psycopg.Error as e:
                    if e.sqlstate not in ABORTS:
                        raise
                    conn.execute("rollback")
                    count("aborted")
        except BaseException as e:  # noqa: BLE001 - reported to the test
            errors.append(f"transfer client {index}: {e!r}")

    def reader() -> None:
        try:
            conn = db.connect()
            while time.monotonic() < deadline:
                seen = conn.execute(f"select sum(balance), count(*) from {table}").fetchone()
                if seen != (total, ACCOUNTS):
                    bad_sums.append(f"select sum(balance), count(*) returned {seen}, expected {(total, ACCOUNTS)}")
                count("sums")
                if level == RR:
                    conn.execute("begin isolation level repeatable read")
                    balances = [
                        conn.execute(f"select balance from {table} where id = %s", (i,)).fetchone()[0]
                        for i in range(1, ACCOUNTS + 1)
                    ]
                    again = conn.execute(f"select sum(balance) from {table}").fetchone()[0]
                    conn.execute("commit")
                    if sum(balances) != total or again != total:
                        bad_sums.append(f"one snapshot read {balances} (sum {sum(balances)}), then sum {again}")
                    count("walks")
        except BaseException as e:  # noqa: BLE001 - reported to the test
            errors.append(f"reader: {e!r}")

    threads = [threading.Thread(target=transfer_client, args=(i,), daemon=True) for i in range(TRANSFER_CLIENTS)]
    threads.append(threading.Thread(target=reader, daemon=True))
    for t in threads:
        t.start()
    join_all(threads, deadline + JOIN_SLACK)
    hung = sum(t.is_alive() for t in threads)
    assert not hung, f"{hung} clients still running {JOIN_SLACK} s after the deadline"
    print(f"\n{level}: {counts}")
    assert not errors, "\n".join(errors)
    assert not bad_sums, f"{len(bad_sums)} reads saw money appear or vanish:\n" + "\n".join(bad_sums[:10])
    assert setup.execute(f"select sum(balance), count(*) from {table}").fetchone() == (total, ACCOUNTS)
    assert counts["transfers"] >= 20 and counts["sums"] >= 20, f"the workload hardly ran: {counts}"
