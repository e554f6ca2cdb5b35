"""Where the machine's CPU time went in each second of a run, from `/proc/stat`.

The CPU probe (`cpu_probe.py`) says how fast the machine ran; this says how busy it was.
Together they tell the two kinds of slow second apart: one where the CPUs were as busy as
ever and the same work simply took longer, and one where they sat idle or in I/O wait, that
is, everything waited on something (a flush, a lock, the device). Steal is time the
hypervisor gave to someone else, when the host reports it.

A thread reads the aggregate `cpu` line every `INTERVAL_S`: one small file read, about
nothing next to the work measured. Linux only; elsewhere it records nothing.
"""

from __future__ import annotations

import bisect
import threading
import time
from pathlib import Path

INTERVAL_S = 0.1
PROC_STAT = Path("/proc/stat")

# Fields of the `cpu` line, in clock ticks: user nice system idle iowait irq softirq steal ...
_BUSY = (0, 1, 2, 5, 6)
_IDLE = 3
_IOWAIT = 4
_STEAL = 7


def read_cpu_ticks(text: str) -> list[int] | None:
    """The aggregate `cpu` line's counters, or None if the text has none."""
    for line in text.splitlines():
        if line.startswith("cpu "):
            try:
                ticks = [int(x) for x in line.split()[1:]]
            except ValueError:
                return None
            return ticks + [0] * max(0, _STEAL + 1 - len(ticks))
    return None


class CpuTimeSampler(threading.Thread):
    """Samples `/proc/stat` until `stop()`; `samples` holds (epoch_s, ticks) in time order."""

    def __init__(self, interval_s: float = INTERVAL_S):
        super().__init__(daemon=True, name="cpu-time")
        self.interval_s = interval_s
        self.stop_event = threading.Event()
        self.samples: list[tuple[float, list[int]]] = []

    def run(self) -> None:
        while True:
            try:
                ticks = read_cpu_ticks(PROC_STAT.read_text())
            except OSError:
                return
            if ticks is None:
                return
            self.samples.append((time.time(), ticks))
            if self.stop_event.wait(self.interval_s):
                return

    def stop(self) -> list[tuple[float, list[int]]]:
        self.stop_event.set()
        if self.is_alive():
            self.join(timeout=10)
        return self.samples


def shares_per_interval(samples: list[tuple[float, list[int]]],
                        intervals: list[tuple[float, float]]) -> list[dict | None]:
    """For each (start_epoch_s, end_epoch_s): the shares of CPU time that were busy, idle, in
    I/O wait and stolen, between the samples nearest its two ends (None when there are no two
    distinct samples for it, or no ticks passed between them)."""
    out: list[dict | None] = []
    if len(samples) < 2:
        return [None] * len(intervals)
    times = [t for t, _ in samples]

    def nearest(t: float) -> int:
        # index of the sample closest to t
        i = min(bisect.bisect_left(times, t), len(times) - 1)
        if i > 0 and abs(times[i - 1] - t) <= abs(times[i] - t):
            return i - 1
        return i

    for a, b in intervals:
        i, j = nearest(a), nearest(b)
        if j <= i:
            out.append(None)
            continue
        d = [y - x for x, y in zip(samples[i][1], samples[j][1])]
        total = sum(d[:_STEAL + 1])
        if total <= 0:
            out.append(None)
            continue
        out.append({"cpu_busy": round(sum(d[k] for k in _BUSY) / total, 3),
                    "cpu_idle": round(d[_IDLE] / total, 3),
                    "cpu_iowait": round(d[_IOWAIT] / total, 3),
                    "cpu_steal": round(d[_STEAL] / total, 3)})
    return out
