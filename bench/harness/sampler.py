"""Reading a server's cumulative counters once per second while pgbench runs.

Each sampler is a thread with its own connection. Samples are stamped with the middle of the
query, in seconds since `launched_at` (when pgbench was launched), the same base as the `t` of
the parsed -P 1 progress lines, so every series of a run lines up with its tps.
"""

from __future__ import annotations

import threading
import time
from decimal import InvalidOperation

from . import pgwire


class PeriodicSampler(threading.Thread):
    """Calls `read()` once per `interval_s` (on whole intervals after launch) until stopped or
    until a read fails; `samples` holds {t_s, epoch_s, **read()} dicts."""

    thread_name = "sampler"

    def __init__(self, conn: pgwire.Connection, launched_at: float, interval_s: float = 1.0):
        super().__init__(daemon=True, name=self.thread_name)
        self.conn = conn
        self.launched_at = launched_at
        self.interval_s = interval_s
        self.stop_event = threading.Event()
        self.samples: list[dict] = []
        self.error: str | None = None
        self.exception: Exception | None = None

    def read(self) -> dict:
        raise NotImplementedError

    def sample(self) -> bool:
        """Take one sample (stamped with the middle of the query); False after an error."""
        if self.error is not None:
            return False
        t0 = time.time()
        try:
            values = self.read()
        except (pgwire.PgError, OSError, IndexError, KeyError, TypeError, ValueError, InvalidOperation) as e:
            self.exception = e
            self.error = f"{type(e).__name__}: {e}"
            return False
        t = (t0 + time.time()) / 2
        self.samples.append({"t_s": round(t - self.launched_at, 3), "epoch_s": round(t, 3), **values})
        return True

    def run(self) -> None:
        while self.sample():
            # next whole interval after launch (skipping any missed while a query was slow)
            elapsed_s = time.time() - self.launched_at
            next_s = (int(elapsed_s / self.interval_s) + 1) * self.interval_s
            if self.stop_event.wait(max(0.0, self.launched_at + next_s - time.time())):
                break
