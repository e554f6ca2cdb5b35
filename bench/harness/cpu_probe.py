"""A probe of the machine's own speed, measured while a benchmark runs.

On a shared virtual machine the CPU itself changes speed from one second to the next: a
neighbour on the same physical core, or the host's frequency, can make the same code take half
as long again, for seconds at a time, with nothing to show for it in the guest's steal time.
Every "lowest second" figure is then partly a measurement of the machine, not of the database.

The probe makes that visible. One small process per CPU, pinned to it, runs the same fixed
piece of work every `INTERVAL_S` and records how much of that work one CPU-second does
(`CLOCK_THREAD_CPUTIME_ID`, so time the process spent waiting for the CPU does not count, but
a slower core does). Each chunk is about a millisecond, so the probe takes about 1% of each
CPU, the same for every system measured. It only measures: nothing in the harness adjusts a
throughput figure by it.

Run as a script it is one such process: `python3 cpu_probe.py CPU` prints one line per chunk,
`epoch_s speed` (millions of loop iterations per CPU-second), until it is terminated.
"""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

INTERVAL_S = 0.1
WORK_ITERATIONS = 30_000  # about 1 ms of one CPU


def _work() -> None:
    for _ in range(WORK_ITERATIONS):
        pass


def probe_forever(cpu: int) -> None:
    """The probe process: pin to `cpu`, then one timed chunk of work per interval, forever."""
    os.sched_setaffinity(0, {cpu})
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    next_t = time.monotonic()
    while True:
        cpu0 = time.thread_time_ns()
        _work()
        cpu_ns = time.thread_time_ns() - cpu0
        if cpu_ns > 0:
            print(f"{time.time():.3f} {WORK_ITERATIONS * 1e3 / cpu_ns:.3f}", flush=True)
        next_t += INTERVAL_S
        delay = next_t - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        else:
            next_t = time.monotonic()


class CpuProbe:
    """One probe process per CPU this process may use; `stop()` returns their samples as
    dicts {epoch_s, cpu, speed}, in time order."""

    def __init__(self) -> None:
        self.cpus = sorted(os.sched_getaffinity(0))
        self.procs: list[subprocess.Popen] = []
        self.readers: list[threading.Thread] = []
        self.samples: list[dict] = []
        self.lock = threading.Lock()

    def start(self) -> "CpuProbe":
        for cpu in self.cpus:
            proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), str(cpu)],
                                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, text=True, start_new_session=True)
            reader = threading.Thread(target=self._read, args=(cpu, proc), daemon=True,
                                      name=f"cpu-probe-{cpu}")
            reader.start()
            self.procs.append(proc)
            self.readers.append(reader)
        return self

    def _read(self, cpu: int, proc: subprocess.Popen) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            try:
                epoch_s, speed = (float(x) for x in line.split())
            except ValueError:
                continue
            with self.lock:
                self.samples.append({"epoch_s": epoch_s, "cpu": cpu, "speed": speed})

    def stop(self) -> list[dict]:
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for reader in self.readers:
            reader.join(timeout=10)
        with self.lock:
            return sorted(self.samples, key=lambda s: s["epoch_s"])


def speed_per_interval(samples: list[dict], intervals: list[tuple[float, float]]) -> list[float | None]:
    """The machine's speed in each (start_epoch_s, end_epoch_s) interval: the mean over CPUs of
    each CPU's median sample in it (None when some CPU has no sample there)."""
    cpus = sorted({s["cpu"] for s in samples})
    out: list[float | None] = []
    for a, b in intervals:
        per_cpu = []
        for cpu in cpus:
            speeds = [s["speed"] for s in samples if s["cpu"] == cpu and a < s["epoch_s"] <= b]
            if not speeds:
                per_cpu = []
                break
            per_cpu.append(statistics.median(speeds))
        out.append(statistics.fmean(per_cpu) if per_cpu else None)
    return out


if __name__ == "__main__":
    probe_forever(int(sys.argv[1]))
