"""The checkpoint-dip statistic applied to the machine itself, with no database running.

The checkpoint-dip target asks that the lowest one-second throughput in a 20 s window be at
least 90% of the run's median. A server that keeps both CPUs busy (SteadyDB under update_pk
at 32 clients does) can only do that on a machine whose own speed holds that steady. This
measures whether it does: one process per CPU, pinned to it, does fixed chunks of CPU work
in a closed loop, like a CPU-bound server's clients, and counts the chunks finished in each
wall-clock second. Time the CPU was taken away from the guest shows here as fewer chunks
(unlike `cpu_probe.py`, which times against the thread's CPU clock), and so does a slower
core. The same statistic is then computed as for the database: each 20 s window's lowest
second over the median second of the whole run.

Run from the repository root: `python3 bench/harness/machine_noise.py [SECONDS]` (default
120). It keeps every CPU busy for that long; run it with nothing else on the machine.
"""

from __future__ import annotations

import multiprocessing
import os
import statistics
import sys
import time

try:
    from .dip import MIN_TPS_WINDOW_S, TARGET_MIN_TO_MEDIAN_TPS
except ImportError:  # run as a script: this folder is on the path
    from dip import MIN_TPS_WINDOW_S, TARGET_MIN_TO_MEDIAN_TPS

CHUNK_ITERATIONS = 10_000  # about 0.3 ms of one CPU
# The checkpoint-dip window and target, so that the machine is held to the same statistic.
WINDOW_S = int(MIN_TPS_WINDOW_S)


def _count_chunks(cpu: int, seconds: int, out: "multiprocessing.Queue") -> None:
    """Pinned to `cpu`: chunks of work finished in each whole wall-clock second, as
    (second's end epoch, chunks), for `seconds` seconds."""
    os.sched_setaffinity(0, {cpu})
    start_s = time.time()
    next_s = int(start_s) + 1
    end_s = start_s + seconds
    counts: list[tuple[int, int]] = []
    chunks = 0
    while True:
        for _ in range(CHUNK_ITERATIONS):
            pass
        chunks += 1
        now_s = time.time()
        if now_s >= next_s:
            counts.append((next_s, chunks))
            chunks = 0
            next_s += 1
            if now_s >= end_s:
                break
    out.put(counts)


def work_per_second(per_cpu: list[list[tuple[int, int]]]) -> list[int]:
    """The machine's work in each second that every CPU measured whole, in time order: the
    chunks of all CPUs summed. The first second of each CPU is partial and is dropped."""
    seconds = [dict(counts[1:]) for counts in per_cpu]
    common = set(seconds[0]).intersection(*seconds[1:]) if seconds else set()
    return [sum(s[t] for s in seconds) for t in sorted(common)]


def window_lows(values: list[int] | list[float], window: int = WINDOW_S) -> list[float]:
    """The lowest value of each whole, non-overlapping `window` over the median of all."""
    if not values:
        return []
    median = statistics.median(values)
    return [min(values[i:i + window]) / median for i in range(0, len(values) - window + 1, window)]


def measure(seconds: int) -> list[int]:
    out: multiprocessing.Queue = multiprocessing.Queue()
    procs = [multiprocessing.Process(target=_count_chunks, args=(cpu, seconds, out))
             for cpu in sorted(os.sched_getaffinity(0))]
    for p in procs:
        p.start()
    per_cpu = [out.get() for _ in procs]
    for p in procs:
        p.join()
    return work_per_second(per_cpu)


def main(argv: list[str]) -> int:
    seconds = int(argv[1]) if len(argv) > 1 else 120
    if seconds < WINDOW_S + 2:
        print(f"need at least {WINDOW_S + 2} seconds", file=sys.stderr)
        return 2
    work = measure(seconds)
    median = statistics.median(work)
    relative = [w / median for w in work]
    print(f"{len(work)} whole seconds on {len(os.sched_getaffinity(0))} CPUs, median "
          f"{median:,.0f} chunks per second")
    print("each second over the median: " + " ".join(f"{r:.2f}" for r in relative))
    lows = window_lows(work)
    print(f"lowest second of each {WINDOW_S} s window over the median: "
          + " ".join(f"{low:.2f}" for low in lows))
    below = sum(low < TARGET_MIN_TO_MEDIAN_TPS for low in lows)
    print(f"windows whose lowest second is below {TARGET_MIN_TO_MEDIAN_TPS:.2f}: {below} of {len(lows)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
