"""Running one measured pgbench and turning its output into numbers."""

from __future__ import annotations

import csv
import json
import re
import signal
import statistics
import subprocess
import threading
import time
from collections import Counter
from decimal import Decimal
from pathlib import Path

from . import pgwire
from .cpu_probe import CpuProbe, speed_per_interval
from .cpu_time import CpuTimeSampler, shares_per_interval
from .sampler import PeriodicSampler
from .servers import REGISTRY, Server, clean_env, kill_group, warn
from .stages import StageSampler

# ---------------------------------------------------------------- parsing

_SUMMARY = {
    "tps": re.compile(r"^tps = ([0-9.]+) \(without initial connection time\)", re.M),
    "transactions": re.compile(r"^number of transactions actually processed: (\d+)", re.M),
    "failed_transactions": re.compile(r"^number of failed transactions: (\d+)", re.M),
    "latency_avg_ms": re.compile(r"^latency average = ([0-9.]+) ms", re.M),
    "latency_stddev_ms": re.compile(r"^latency stddev = ([0-9.]+) ms", re.M),
    "initial_connection_ms": re.compile(r"^initial connection time = ([0-9.]+) ms", re.M),
    "retried_transactions": re.compile(r"^number of transactions retried: (\d+)", re.M),
}

_PROGRESS = re.compile(
    r"^progress: (?P<ts>[0-9.]+) s, (?P<tps>[0-9.]+|nan|-?inf) tps, "
    r"lat (?P<lat>[0-9.]+|nan|-?inf) ms stddev (?P<sd>[0-9.]+|nan|-?inf)"
    r"(?:, (?P<failed>\d+) failed)?", re.I)


def parse_summary(stdout: str) -> dict:
    out: dict = {}
    for key, rx in _SUMMARY.items():
        m = rx.search(stdout)
        if m:
            out[key] = float(m.group(1)) if "." in m.group(1) else int(m.group(1))
    return out


def parse_progress(stderr: str, launched_at: float) -> list[dict]:
    """-P 1 --progress-timestamp lines -> [{t (s since launch), epoch, tps, lat_ms, stddev_ms, failed}]"""
    series = []
    for line in stderr.splitlines():
        m = _PROGRESS.match(line.strip())
        if not m:
            continue
        ts = float(m.group("ts"))
        series.append({
            "t": round(ts - launched_at, 3), "epoch": ts, "tps": float(m.group("tps")),
            "lat_ms": float(m.group("lat")), "stddev_ms": float(m.group("sd")),
            "failed": int(m.group("failed")) if m.group("failed") else None,
        })
    return series


def _percentile(counts: Counter, total: int, q: float) -> float:
    """Nearest-rank percentile from a {latency_us: count} histogram."""
    rank = max(1, int(-(-q * total // 1)))  # ceil(q*total)
    seen = 0
    for value in sorted(counts):
        seen += counts[value]
        if seen >= rank:
            return value
    return max(counts)


def latency_from_logs(files: list[Path]) -> dict:
    """Exact percentiles of the per-transaction latencies in pgbench --log files.
    Line format (PostgreSQL 15): client_id transaction_no time script_no time_epoch time_us [...];
    `time` is `failed` or `skipped` for transactions without a latency."""
    counts: Counter = Counter()
    failed = skipped = bad = 0
    for f in files:
        with open(f, "rb") as fh:
            for line in fh:
                parts = line.split(None, 3)
                if len(parts) < 3:
                    bad += 1
                    continue
                v = parts[2]
                if v.isdigit():
                    counts[int(v)] += 1
                elif v == b"failed":
                    failed += 1
                elif v == b"skipped":
                    skipped += 1
                else:
                    bad += 1
    total = sum(counts.values())
    out = {"logged_transactions": total, "logged_failed": failed, "logged_skipped": skipped}
    if bad:
        out["unparsed_lines"] = bad
    if total:
        to_ms = lambda us: round(us / 1000.0, 3)  # noqa: E731
        out.update({
            "p50_ms": to_ms(_percentile(counts, total, 0.50)),
            "p90_ms": to_ms(_percentile(counts, total, 0.90)),
            "p99_ms": to_ms(_percentile(counts, total, 0.99)),
            "p999_ms": to_ms(_percentile(counts, total, 0.999)),
            "max_ms": to_ms(max(counts)),
            "mean_ms": round(sum(k * n for k, n in counts.items()) / total / 1000.0, 3),
        })
    return out


# ---------------------------------------------------------------- pg_stat_wal

def stat_wal(conn: pgwire.Connection | None) -> dict:
    if conn is None:
        return {"error": "no control connection"}
    try:
        r = conn.query("select * from pg_stat_wal")
        return r.dicts()[0] if r.rows else {"error": "pg_stat_wal returned no rows"}
    except (pgwire.PgError, OSError) as e:
        return {"error": str(e)}


def stat_wal_delta(before: dict, after: dict) -> dict | None:
    if "error" in before or "error" in after:
        return None
    delta = {}
    for k, v in after.items():
        try:
            a, b = float(v), float(before.get(k))
        except (TypeError, ValueError):
            continue
        d = a - b
        delta[k] = int(d) if d.is_integer() and "time" not in k else round(d, 3)
    return delta


class WalSampler(PeriodicSampler):
    """Reads the cumulative pg_stat_wal counters once per second on its own connection while
    pgbench runs (times as in `sampler.py`)."""

    thread_name = "wal-sampler"
    QUERY = "select wal_bytes, wal_fpi, wal_records, wal_sync from pg_stat_wal"
    COLUMNS = ("wal_bytes", "wal_fpi", "wal_records", "wal_sync")

    def read(self) -> dict:
        row = self.conn.query(self.QUERY).dicts()[0]
        return {k: int(Decimal(row[k])) for k in self.COLUMNS}


def write_wal_csv(path: Path, samples: list[dict]) -> None:
    fields = ["t_s", "epoch_s", *WalSampler.COLUMNS]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(samples)


def _epoch_intervals(series: list[dict]) -> list[tuple[float, float]]:
    """Each -P 1 second as (start_epoch_s, end_epoch_s)."""
    intervals = []
    prev_epoch = None
    for p in series:
        start = p["epoch"] - 1.0 if prev_epoch is None else prev_epoch
        intervals.append((start, p["epoch"]))
        prev_epoch = p["epoch"]
    return intervals


def add_cpu_speed(series: list[dict], probe_samples: list[dict]) -> None:
    """Give each -P 1 second the machine's speed in it, as the CPU probe measured it."""
    for p, speed in zip(series, speed_per_interval(probe_samples, _epoch_intervals(series))):
        p["cpu_speed"] = None if speed is None else round(speed, 2)


def add_cpu_shares(series: list[dict], samples: list[tuple[float, list[int]]]) -> None:
    """Give each -P 1 second the shares of the machine's CPU time that were busy, idle, in
    I/O wait and stolen (`cpu_time.py`)."""
    for p, shares in zip(series, shares_per_interval(samples, _epoch_intervals(series))):
        if shares is not None:
            p.update(shares)


def write_cpu_csv(path: Path, samples: list[dict], launched_at: float) -> None:
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["t_s", "epoch_s", "cpu", "speed"])
        for s in samples:
            w.writerow([round(s["epoch_s"] - launched_at, 3), s["epoch_s"], s["cpu"], s["speed"]])


# ---------------------------------------------------------------- checkpoints

class CheckpointIssuer(threading.Thread):
    """Issues CHECKPOINT at the given seconds after `launched_at`, on its own connection,
    recording when each was issued and how long it took."""

    def __init__(self, conn: pgwire.Connection, at: list[float], launched_at: float):
        super().__init__(daemon=True, name="checkpoints")
        self.conn = conn
        self.at = sorted(at)
        self.launched_at = launched_at
        self.stop_event = threading.Event()
        self.records: list[dict] = []

    def run(self) -> None:
        for t in self.at:
            delay = self.launched_at + t - time.time()
            if delay > 0 and self.stop_event.wait(delay):
                break
            if self.stop_event.is_set():
                break
            rec = {"requested_at_s": t}
            t0 = time.time()
            m0 = time.monotonic()
            try:
                self.conn.query("checkpoint")
            except (pgwire.PgError, OSError) as e:
                rec["error"] = str(e)
            rec["duration_s"] = round(time.monotonic() - m0, 4)
            rec["issued_at_s"] = round(t0 - self.launched_at, 4)
            rec["issued_at_epoch"] = round(t0, 4)
            self.records.append(rec)


# ---------------------------------------------------------------- one run

def run_pgbench(server: Server, pg_bin: Path, *, script: Path | None, extra_args: list[str],
                clients: int, threads: int, duration: int, sampling_rate: float | None,
                checkpoint_at: list[float], files_prefix: Path, sample_stages: bool = False,
                user: str = "postgres") -> dict:
    """Run one measured pgbench against `server` and return everything measured. With
    `sample_stages`, also read `steadydb_stat_stages` once per second (`stages.py`): the raw
    samples come back as `stage_samples`, or `stage_view_missing` when the server has no such view."""
    log_prefix = files_prefix.parent / "txnlog" / files_prefix.name
    log_prefix.parent.mkdir(parents=True, exist_ok=True)
    for old in log_prefix.parent.glob(log_prefix.name + ".*"):
        old.unlink()
    cmd = [str(pg_bin / "pgbench"), "-M", "prepared", "-n", "-c", str(clients), "-j", str(threads),
           "-T", str(duration), "-P", "1", "--progress-timestamp",
           "--log", f"--log-prefix={log_prefix}"]
    if sampling_rate is not None and sampling_rate < 1:
        cmd.append(f"--sampling-rate={sampling_rate:g}")
    cmd += extra_args
    if script is not None:
        cmd += ["-f", str(script)]
    cmd += ["-h", server.client_host(), "-p", str(server.port), "-U", user, "postgres"]
    cmd = server.client_command(cmd)

    result: dict = {"pgbench_command": cmd, "sampling_rate": sampling_rate or 1.0}
    control = None
    try:
        control = server.connect(timeout=max(600, 2 * duration))  # a CHECKPOINT may take long
    except (pgwire.PgError, OSError) as e:
        warn(f"{server.label}: control connection failed: {e}")
    wal_before = stat_wal(control)
    sampler_conn = None
    try:
        sampler_conn = server.connect(timeout=60)
    except (pgwire.PgError, OSError) as e:
        warn(f"{server.label}: pg_stat_wal sampling connection failed: {e}")
    stage_conn = None
    if sample_stages:
        try:
            stage_conn = server.connect(timeout=60)
        except (pgwire.PgError, OSError) as e:
            warn(f"{server.label}: stage sampling connection failed: {e}")

    stdout_path = files_prefix.with_suffix(".stdout.txt")
    progress_path = files_prefix.with_suffix(".progress.txt")
    issuer = None
    sampler = None
    stage_sampler = None
    probe = CpuProbe().start()
    cpu_time = CpuTimeSampler()
    cpu_time.start()
    with REGISTRY.lock:
        REGISTRY.procs.extend(probe.procs)
    with open(stdout_path, "wb") as out, open(progress_path, "wb") as err:
        launched_at = time.time()
        with REGISTRY.lock:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                    env=clean_env(), start_new_session=True)
            REGISTRY.procs.append(proc)
        try:
            if sampler_conn is not None:
                sampler = WalSampler(sampler_conn, launched_at)
                sampler.start()
            if stage_conn is not None:
                stage_sampler = StageSampler(stage_conn, launched_at)
                stage_sampler.start()
            if checkpoint_at and control is not None:
                issuer = CheckpointIssuer(control, checkpoint_at, launched_at)
                issuer.start()
            try:
                rc = proc.wait(timeout=duration * 2 + 600)
            except subprocess.TimeoutExpired:
                warn("pgbench did not finish in time; killing it")
                kill_group(proc, signal.SIGKILL, 30)
                rc = None
        finally:
            if proc.poll() is None:
                kill_group(proc, signal.SIGKILL, 30)
            with REGISTRY.lock:
                if proc in REGISTRY.procs:
                    REGISTRY.procs.remove(proc)
            if issuer is not None:
                issuer.stop_event.set()
                issuer.join()
            probe_samples = probe.stop()
            cpu_time_samples = cpu_time.stop()
            with REGISTRY.lock:
                REGISTRY.procs[:] = [p for p in REGISTRY.procs if p not in probe.procs]
    result["launched_at_epoch"] = round(launched_at, 4)
    result["pgbench_exit_code"] = rc
    result["pgbench_stdout"] = str(stdout_path)
    result["progress_file"] = str(progress_path)

    # PostgreSQL backends flush their WAL statistics when they exit; give them a moment
    time.sleep(1.0)
    wal_after = stat_wal(control)
    if control is not None:
        control.close()
    if sampler is not None:
        sampler.stop_event.set()
        sampler.join()
        sampler.sample()  # after pgbench's backends have exited and flushed their statistics
        sampler_conn.close()
        wal_csv = files_prefix.with_suffix(".wal.csv")
        write_wal_csv(wal_csv, sampler.samples)
        result["wal_series"] = sampler.samples
        result["wal_series_file"] = str(wal_csv)
        if sampler.error:
            result["wal_series_error"] = sampler.error
    elif sampler_conn is not None:
        sampler_conn.close()
    if stage_sampler is not None:
        stage_sampler.stop_event.set()
        stage_sampler.join()
        stage_sampler.sample()
        if stage_sampler.view_missing:
            result["stage_view_missing"] = stage_sampler.error
        else:
            result["stage_samples"] = stage_sampler.samples
            if stage_sampler.error:
                result["stage_series_error"] = stage_sampler.error
    if stage_conn is not None:
        stage_conn.close()
    result["pg_stat_wal"] = {"before": wal_before, "after": wal_after,
                             "delta": stat_wal_delta(wal_before, wal_after)}
    result["checkpoints"] = issuer.records if issuer else []

    stdout = stdout_path.read_text(errors="replace")
    stderr = progress_path.read_text(errors="replace")
    result.update(parse_summary(stdout))
    series = parse_progress(stderr, launched_at)
    add_cpu_speed(series, probe_samples)
    add_cpu_shares(series, cpu_time_samples)
    result["progress"] = series
    (files_prefix.with_suffix(".progress.json")).write_text(json.dumps(series, indent=0))
    cpu_csv = files_prefix.with_suffix(".cpu.csv")
    write_cpu_csv(cpu_csv, probe_samples, launched_at)
    result["cpu_probe_file"] = str(cpu_csv)
    speeds = [p["cpu_speed"] for p in series if p.get("cpu_speed") is not None]
    if speeds:
        result["cpu_speed_median"] = round(statistics.median(speeds), 2)
    result["pgbench_messages"] = [l for l in stderr.splitlines() if l and not l.startswith("progress:")][-20:]

    logs = sorted(log_prefix.parent.glob(log_prefix.name + ".*"))
    result["txn_log_files"] = [str(p) for p in logs]
    result["txn_log_bytes"] = sum(p.stat().st_size for p in logs)
    result.update(latency_from_logs(logs))
    return result
