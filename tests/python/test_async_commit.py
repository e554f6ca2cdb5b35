"""``synchronous_commit = off``: a crash may lose only the most recent commits.

One client commits 2-row transactions (ids ``2k-1, 2k`` with ``k`` = the transaction
number) in autocommit mode as fast as it can and records when each was acknowledged;
the server is SIGKILLed while it runs. After recovery the table must hold exactly the
first ``m`` transactions (commits are logged in order: no gaps, no half transaction),
and every acknowledged transaction that was lost must have been acknowledged within
``wal_writer_delay`` (200 ms) plus a margin before the kill.

Overrides: STEADYDB_ASYNC_ROUNDS  kill points per variant (default 3)
"""

from __future__ import annotations

import random
import threading
import time

import psycopg
import pytest

from crash_util import env_int, nodes, seed_from_env  # noqa: F401  (nodes is a fixture)

pytestmark = pytest.mark.steadydb_only

ROUNDS = env_int("STEADYDB_ASYNC_ROUNDS", 3)
WAL_WRITER_DELAY = 0.2
MARGIN = 0.3  # scheduling slack on a loaded 2-core machine


class SequentialWriter:
    def __init__(self, node, first_k: int, session_set: bool):
        self.node = node
        self.first_k = first_k
        self.session_set = session_set
        self.acked_at: dict[int, float] = {}  # k -> time.monotonic() of the acknowledgement
        self.last_sent = first_k - 1
        self.error: BaseException | None = None
        self.ready = threading.Event()
        self.setting: str | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> "SequentialWriter":
        self.thread.start()
        assert self.ready.wait(30), f"writer did not start: {self.error!r}"
        assert self.error is None, repr(self.error)
        return self

    def _run(self) -> None:
        try:
            conn = psycopg.connect(self.node.conninfo(), autocommit=True)
            if self.session_set:
                conn.execute("set synchronous_commit = off")
            self.setting = conn.execute("show synchronous_commit").fetchone()[0]
        except Exception as e:
            self.error = e
            self.ready.set()
            return
        self.ready.set()
        k = self.first_k
        try:
            while True:
                self.last_sent = k
                conn.execute("insert into pairs (id, k) values (%s, %s), (%s, %s)", (2 * k - 1, k, 2 * k, k))
                self.acked_at[k] = time.monotonic()
                k += 1
        except Exception as e:
            self.error = e
        finally:
            try:
                conn.close()
            except Exception:
                pass


@pytest.mark.parametrize("how", ["server_setting", "session_set"])
@pytest.mark.timeout(120)
def test_async_commit_crash_loses_only_recent_commits(nodes, how):
    seed = seed_from_env()
    rng = random.Random(seed)
    node = nodes({"synchronous_commit": "off"} if how == "server_setting" else {}).start()
    with node.connect() as conn:
        conn.execute("create table pairs (id bigint primary key, k bigint not null)")
    have = 0  # transactions 1..have are present
    for rnd in range(1, ROUNDS + 1):
        writer = SequentialWriter(node, have + 1, session_set=(how == "session_set")).start()
        assert writer.setting == "off", f"synchronous_commit is {writer.setting!r} in the writing session"
        delay = rng.uniform(1.0, 2.0)
        time.sleep(delay)
        kill_at = time.monotonic()
        node.kill()
        writer.thread.join(30)
        assert not writer.thread.is_alive(), "writer still running 30 s after the kill"
        assert isinstance(writer.error, psycopg.OperationalError), f"writer failed: {writer.error!r}"
        acked = max(writer.acked_at, default=have)
        assert acked - have > 100, f"only {acked - have} transactions acknowledged in {delay:.1f} s"
        assert all(k in writer.acked_at for k in range(have + 1, acked + 1))
        node.start()
        with node.connect() as conn:
            rows = conn.execute("select id, k from pairs order by id").fetchall()
        m = len(rows) // 2
        # A prefix of whole transactions: ids 1..2m, each pair from its own transaction.
        expected = [(i, (i + 1) // 2) for i in range(1, 2 * m + 1)]
        if rows != expected:
            bad = next(i for i, (got, want) in enumerate(zip(rows + [None], expected + [None])) if got != want)
            raise AssertionError(
                f"recovered rows are not a prefix of whole transactions: first difference at position {bad}: "
                f"got {rows[bad:bad + 4]}, expected {expected[bad:bad + 4]} ({len(rows)} rows)"
            )
        assert m >= have, f"transactions recovered earlier are gone: had {have}, now {m}"
        assert m <= writer.last_sent, f"{m} transactions present, only {writer.last_sent} were ever sent"
        lost = [k for k in range(m + 1, acked + 1)]
        too_old = [(k, kill_at - writer.acked_at[k]) for k in lost if kill_at - writer.acked_at[k] > WAL_WRITER_DELAY + MARGIN]
        assert not too_old, (
            f"{len(lost)} acknowledged transactions lost; {len(too_old)} of them were acknowledged more than "
            f"{WAL_WRITER_DELAY + MARGIN:.1f} s before the kill, e.g. k={too_old[0][0]} {too_old[0][1]:.3f} s before"
        )
        window = kill_at - writer.acked_at[lost[0]] if lost else 0.0
        print(
            f"round {rnd}: killed after {delay:.2f} s; acknowledged up to {acked}, sent up to {writer.last_sent}; "
            f"recovered {m}; lost {len(lost)} acknowledged (oldest {window * 1000:.0f} ms before the kill)"
        )
        have = m
    node.stop_clean()
