"""The "checkpoint dip": how throughput and WAL volume react to a CHECKPOINT issued mid-run.

Inputs (all on the same time base, seconds since pgbench was launched):
- `progress`: pgbench's -P 1 lines; each covers the time since the previous line (the first
  one, the second before it) at a rate of `tps` transactions per second;
- `wal_series`: cumulative pg_stat_wal counters sampled about once per second, read in between
  samples by linear interpolation;
- `checkpoints`: when each CHECKPOINT was issued and how long it took.

Without a checkpoint (the control): the same lowest-second statistic over the 20 s that end
when the first CHECKPOINT is issued, if the run had that long before it. The machine's own
second-to-second noise sets a floor under every "lowest second" figure; this shows it, measured
in the same run.

Per checkpoint:
- the mean tps in the 10 s after it was issued over the mean tps in the 10 s before (both the
  -P 1 rates integrated over the window, cut at the start and end of the run);
- the lowest one-second tps among the -P 1 seconds lying mostly in (issued, issued + 20 s],
  and its ratio to the median one-second tps of the whole run;
- WAL bytes per transaction in [issued, issued + 10 s], against the steady state: the whole
  run (between the first and last WAL samples within the -P 1 seconds) without the 10 s
  windows after each checkpoint;
- wal_fpi added in [issued, issued + 10 s], and over the whole run (first to last sample).
Transactions in a window are the -P 1 rates integrated over it.

Beside each lowest second, the machine's own speed (see `cpu_probe.py`), when the run has it:
its speed in that same second and its slowest second in the same window, each over its median
for the whole run. A lowest second that falls where the machine itself was slow is the
machine's, not the database's. And how busy the machine was in that second (see
`cpu_time.py`): the shares of its CPU time that were busy, idle and in I/O wait, beside their
medians for the run. A slow second at the usual busy share is the same work done more
slowly; one with more idle or I/O wait is one where everything waited.
"""

from __future__ import annotations

import math
import statistics

MIN_TPS_WINDOW_S = 20.0
WAL_WINDOW_S = 10.0
MEAN_TPS_WINDOW_S = 10.0

# SteadyDB's acceptance targets (reported, never enforced: the harness does not judge numbers)
TARGET_MIN_TO_MEDIAN_TPS = 0.90
TARGET_WAL_RATIO_TOLERANCE = 0.05
# for both systems: mean tps in the 10 s after each CHECKPOINT >= 0.97 x the mean in the 10 s before it
TARGET_AFTER_TO_BEFORE_TPS = 0.97

DEFINITIONS = {
    "min_tps": f"lowest one-second tps (pgbench -P 1) among the seconds lying mostly in "
               f"(issued, issued + {MIN_TPS_WINDOW_S:g} s]; min_tps_at_s is when that second ended",
    "median_tps": "median one-second tps over the whole run",
    "mean_tps_before": f"transactions in [issued - {MEAN_TPS_WINDOW_S:g} s, issued] (-P 1 rates integrated "
                       "over it) / its length; the window is cut at the start of the run",
    "mean_tps_after": f"the same for [issued, issued + {MEAN_TPS_WINDOW_S:g} s], cut at the end of the run",
    "mean_tps_after_to_before": f"mean_tps_after / mean_tps_before; criterion: >= {TARGET_AFTER_TO_BEFORE_TPS:.2f}",
    "cpu_speed_after_to_before": "the machine's mean speed (cpu_probe.py) over the seconds lying mostly in the "
                                 "after window over the same for the before window: below 1, the machine "
                                 "itself slowed down",
    "mean_tps_per_speed_after_to_before": "mean_tps_after_to_before / cpu_speed_after_to_before: the tps ratio "
                                          "with the machine's own change of speed taken out (a CPU-bound server's "
                                          "tps follows the machine's speed)",
    "control_min_tps": f"lowest one-second tps among the seconds lying mostly in (first issued - "
                       f"{MIN_TPS_WINDOW_S:g} s, first issued], with no CHECKPOINT in it (omitted when the run "
                       f"had less than {MIN_TPS_WINDOW_S:g} s before the first CHECKPOINT)",
    "wal_bytes_per_txn_after": f"pg_stat_wal.wal_bytes added in [issued, issued + {WAL_WINDOW_S:g} s] / "
                               "transactions in that window (-P 1 rates integrated over it)",
    "wal_bytes_per_txn_steady": f"the same over the whole run (between the first and last WAL samples within "
                                f"the -P 1 seconds) without the {WAL_WINDOW_S:g} s windows after each checkpoint",
    "wal_fpi_after": f"pg_stat_wal.wal_fpi added in [issued, issued + {WAL_WINDOW_S:g} s]",
    "wal_fpi_run": "pg_stat_wal.wal_fpi added over the whole run (first sample, at pgbench's launch, to the "
                   "last, after it exited)",
    "wal_counters": "cumulative pg_stat_wal sampled once per second and interpolated linearly; "
                    "PostgreSQL backends publish their WAL statistics at most once per second, "
                    "so its counters lag by up to about a second",
    "cpu_speed": "the machine's speed in a second (cpu_probe.py: fixed work per CPU-second, mean over "
                 "CPUs) over its median for the whole run: cpu_speed_in_min_second for the second that "
                 "gave min_tps, cpu_speed_min for the slowest second of the machine in the same window",
    "cpu_time": "shares of the machine's CPU time (/proc/stat, all CPUs) in the second that gave min_tps: "
                "cpu_busy (user, nice, system, irq, softirq), cpu_idle and cpu_iowait _in_min_second, "
                "and their medians over the run's seconds (cpu_busy_median, ...)",
    "targets": f"SteadyDB: min_tps / median_tps >= {TARGET_MIN_TO_MEDIAN_TPS:.2f} and "
               f"wal_bytes_per_txn_after / wal_bytes_per_txn_steady within 1 +- {TARGET_WAL_RATIO_TOLERANCE:.2f}; "
               f"both systems: mean_tps_after / mean_tps_before >= {TARGET_AFTER_TO_BEFORE_TPS:.2f}",
}


def progress_intervals(progress: list[dict]) -> list[tuple[float, float, float]]:
    """(start_s, end_s, tps) for each -P 1 line, tiling the run without gaps."""
    out = []
    prev_end_s = None
    for p in progress:
        start_s = p["t"] - 1.0 if prev_end_s is None else prev_end_s
        out.append((start_s, p["t"], p["tps"]))
        prev_end_s = p["t"]
    return out


def txns_between(intervals: list[tuple[float, float, float]], a_s: float, b_s: float) -> float:
    """Transactions in [a_s, b_s], assuming a constant rate within each -P 1 second."""
    total = 0.0
    for start_s, end_s, tps in intervals:
        overlap_s = min(end_s, b_s) - max(start_s, a_s)
        if overlap_s > 0 and math.isfinite(tps):
            total += tps * overlap_s
    return total


def counter_at(samples: list[dict], key: str, t_s: float) -> float | None:
    """Cumulative counter `key` at time t_s, interpolated between samples (None outside them)."""
    if not samples or t_s < samples[0]["t_s"] or t_s > samples[-1]["t_s"]:
        return None
    for s0, s1 in zip(samples, samples[1:]):
        if s0["t_s"] <= t_s <= s1["t_s"]:
            span_s = s1["t_s"] - s0["t_s"]
            if span_s <= 0:
                return float(s1[key])
            return s0[key] + (s1[key] - s0[key]) * (t_s - s0["t_s"]) / span_s
    return float(samples[-1][key])


def counter_between(samples: list[dict], key: str, a_s: float, b_s: float) -> float | None:
    a, b = counter_at(samples, key, a_s), counter_at(samples, key, b_s)
    return None if a is None or b is None else b - a


def mean_tps(intervals: list[tuple[float, float, float]], a_s: float, b_s: float) -> tuple[float, float] | None:
    """(mean tps, window length) over [a_s, b_s] cut to the -P 1 seconds, or None if nothing is left."""
    a_s, b_s = max(a_s, intervals[0][0]), min(b_s, intervals[-1][1])
    if b_s <= a_s:
        return None
    return txns_between(intervals, a_s, b_s) / (b_s - a_s), b_s - a_s


def lowest_second(intervals: list[tuple[float, float, float]], a_s: float, b_s: float) -> tuple[float, float] | None:
    """(end_s, tps) of the slowest -P 1 second lying mostly inside (a_s, b_s], or None."""
    inside = [(end_s, tps) for start_s, end_s, tps in intervals if a_s < (start_s + end_s) / 2 <= b_s]
    return min(inside, key=lambda x: x[1]) if inside else None


def mean_speed(progress: list[dict], intervals: list[tuple[float, float, float]], a_s: float,
               b_s: float) -> float | None:
    """The machine's mean speed (CPU probe) over the -P 1 seconds lying mostly in (a_s, b_s]."""
    speeds = {p["t"]: p.get("cpu_speed") for p in progress}
    inside = [speeds.get(end_s) for start_s, end_s, _ in intervals if a_s < (start_s + end_s) / 2 <= b_s]
    inside = [s for s in inside if s is not None]
    return statistics.fmean(inside) if inside else None


def machine_speed(progress: list[dict], intervals: list[tuple[float, float, float]], a_s: float, b_s: float,
                  lowest_end_s: float, median_speed: float | None) -> dict:
    """The machine's speed (CPU probe) in the second that ended at `lowest_end_s`, and its
    slowest second lying mostly inside (a_s, b_s], each over its median for the run."""
    if not median_speed:
        return {}
    speeds = {p["t"]: p.get("cpu_speed") for p in progress}
    inside = [speeds.get(end_s) for start_s, end_s, _ in intervals if a_s < (start_s + end_s) / 2 <= b_s]
    inside = [v for v in inside if v is not None]
    at_lowest = speeds.get(lowest_end_s)
    out = {}
    if at_lowest is not None:
        out["cpu_speed_in_min_second"] = _round(at_lowest / median_speed, 4)
    if inside:
        out["cpu_speed_min"] = _round(min(inside) / median_speed, 4)
    return out


CPU_SHARES = ("cpu_busy", "cpu_idle", "cpu_iowait")


def cpu_time_at(progress: list[dict], lowest_end_s: float) -> dict:
    """The shares of the machine's CPU time that were busy, idle and in I/O wait in the second
    that ended at `lowest_end_s` (from `/proc/stat`; empty when they were not sampled)."""
    at = next((p for p in progress if p["t"] == lowest_end_s), None)
    if at is None:
        return {}
    return {f"{k}_in_min_second": at[k] for k in CPU_SHARES if at.get(k) is not None}


def cpu_time_medians(progress: list[dict]) -> dict:
    out = {}
    for k in CPU_SHARES:
        values = [p[k] for p in progress if p.get(k) is not None]
        if values:
            out[f"{k}_median"] = statistics.median(values)
    return out


def merge_windows(windows: list[tuple[float, float]]) -> list[tuple[float, float]]:
    merged: list[tuple[float, float]] = []
    for a, b in sorted(windows):
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def _per_txn(bytes_: float | None, txns: float) -> float | None:
    return bytes_ / txns if bytes_ is not None and txns > 0 else None


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def _round(v: float | None, digits: int) -> float | None:
    return None if v is None else round(v, digits)


def _int(v: float | None) -> int | None:
    return None if v is None else round(v)


def checkpoint_dip(run: dict) -> dict | None:
    """The checkpoint-dip figures of one run record, or None without checkpoints or progress."""
    checkpoints = [c for c in run.get("checkpoints", []) if "issued_at_s" in c]
    progress = [p for p in run.get("progress", []) if math.isfinite(p["tps"])]
    if not checkpoints or not progress:
        return None
    intervals = progress_intervals(progress)
    run_start_s, run_end_s = intervals[0][0], intervals[-1][1]
    median_tps = statistics.median(p["tps"] for p in progress)
    cpu_speeds = [p["cpu_speed"] for p in progress if p.get("cpu_speed") is not None]
    median_speed = statistics.median(cpu_speeds) if cpu_speeds else None
    wal = run.get("wal_series") or []

    # WAL over the run: between the first and last samples inside the -P 1 span, so that the
    # jumps in WAL rate when pgbench starts and stops are not smeared by interpolation
    sample_times_s = [w["t_s"] for w in wal]
    span_start_s = next((t for t in sample_times_s if t >= run_start_s), run_start_s)
    span_end_s = next((t for t in reversed(sample_times_s) if t <= run_end_s), run_end_s)
    run_txns = txns_between(intervals, span_start_s, span_end_s)
    run_wal_bytes = counter_between(wal, "wal_bytes", span_start_s, span_end_s)
    windows = [(max(c["issued_at_s"], span_start_s), min(c["issued_at_s"] + WAL_WINDOW_S, span_end_s))
               for c in checkpoints]
    windows = merge_windows([(a, b) for a, b in windows if a < b])
    steady_txns = run_txns
    steady_wal_bytes = run_wal_bytes
    for a_s, b_s in windows:
        steady_txns -= txns_between(intervals, a_s, b_s)
        window_bytes = counter_between(wal, "wal_bytes", a_s, b_s)
        steady_wal_bytes = None if steady_wal_bytes is None or window_bytes is None \
            else steady_wal_bytes - window_bytes
    steady_per_txn = _per_txn(steady_wal_bytes, steady_txns)
    # all of it, from just before pgbench was launched to just after it exited
    run_fpi = wal[-1]["wal_fpi"] - wal[0]["wal_fpi"] if len(wal) > 1 else None

    control = {}
    first_issued_s = min(c["issued_at_s"] for c in checkpoints)
    if first_issued_s - MIN_TPS_WINDOW_S >= run_start_s:
        before = lowest_second(intervals, first_issued_s - MIN_TPS_WINDOW_S, first_issued_s)
        if before:
            control = {"control_min_tps": before[1], "control_min_tps_at_s": before[0],
                       "control_min_to_median_tps_ratio": _round(_ratio(before[1], median_tps), 4)}
            speed = machine_speed(progress, intervals, first_issued_s - MIN_TPS_WINDOW_S, first_issued_s,
                                  before[0], median_speed)
            control.update({f"control_{k}": v for k, v in speed.items()})
            control.update({f"control_{k}": v for k, v in cpu_time_at(progress, before[0]).items()})

    per_checkpoint = []
    for c in checkpoints:
        issued_s = c["issued_at_s"]
        rec = {"requested_at_s": c.get("requested_at_s"), "issued_at_s": issued_s,
               "checkpoint_duration_s": c.get("duration_s")}
        if c.get("error"):
            rec["checkpoint_error"] = c["error"]
        before = mean_tps(intervals, issued_s - MEAN_TPS_WINDOW_S, issued_s)
        after = mean_tps(intervals, issued_s, issued_s + MEAN_TPS_WINDOW_S)
        if before and after:
            rec.update({"mean_tps_before": round(before[0], 1), "mean_tps_window_before_s": round(before[1], 3),
                        "mean_tps_after": round(after[0], 1), "mean_tps_window_after_s": round(after[1], 3),
                        "mean_tps_after_to_before": _round(_ratio(after[0], before[0]), 4)})
            speed_ratio = _ratio(mean_speed(progress, intervals, issued_s, issued_s + MEAN_TPS_WINDOW_S),
                                 mean_speed(progress, intervals, issued_s - MEAN_TPS_WINDOW_S, issued_s))
            if speed_ratio:
                rec.update({"cpu_speed_after_to_before": _round(speed_ratio, 4),
                            "mean_tps_per_speed_after_to_before":
                                _round(_ratio(after[0], before[0]) / speed_ratio, 4)})
        lowest = lowest_second(intervals, issued_s, issued_s + MIN_TPS_WINDOW_S)
        if lowest:
            lowest_end_s, lowest_tps = lowest
            rec.update({"min_tps": lowest_tps, "min_tps_at_s": lowest_end_s,
                        "min_tps_window_s": round(min(MIN_TPS_WINDOW_S, run_end_s - issued_s), 3),
                        "min_to_median_tps_ratio": _round(_ratio(lowest_tps, median_tps), 4)})
            rec.update(machine_speed(progress, intervals, issued_s, issued_s + MIN_TPS_WINDOW_S,
                                     lowest_end_s, median_speed))
            rec.update(cpu_time_at(progress, lowest_end_s))
        wal_end_s = min(issued_s + WAL_WINDOW_S, span_end_s)
        if wal_end_s > issued_s:
            txns = txns_between(intervals, issued_s, wal_end_s)
            wal_bytes = counter_between(wal, "wal_bytes", issued_s, wal_end_s)
            fpi = counter_between(wal, "wal_fpi", issued_s, wal_end_s)
            per_txn = _per_txn(wal_bytes, txns)
            rec.update({"wal_window_s": round(wal_end_s - issued_s, 3),
                        "txns_after": round(txns),
                        "wal_bytes_after": _int(wal_bytes),
                        "wal_bytes_per_txn_after": _round(per_txn, 1),
                        "wal_bytes_per_txn_ratio": _round(_ratio(per_txn, steady_per_txn), 4),
                        "wal_fpi_after": _int(fpi)})
        per_checkpoint.append(rec)

    return {
        "min_tps_window_s": MIN_TPS_WINDOW_S,
        "wal_window_s": WAL_WINDOW_S,
        "mean_tps_window_s": MEAN_TPS_WINDOW_S,
        "run_start_s": round(run_start_s, 3),
        "run_end_s": round(run_end_s, 3),
        "median_tps": median_tps,
        "cpu_speed_median": _round(median_speed, 2),
        "wal_span_start_s": round(span_start_s, 3),
        "wal_span_end_s": round(span_end_s, 3),
        "txns_run": round(run_txns),
        "wal_bytes_run": _int(run_wal_bytes),
        "wal_bytes_per_txn_run": _round(_per_txn(run_wal_bytes, run_txns), 1),
        "steady_s": round(span_end_s - span_start_s - sum(b - a for a, b in windows), 3),
        "txns_steady": round(steady_txns),
        "wal_bytes_per_txn_steady": _round(steady_per_txn, 1),
        "wal_fpi_run": _int(run_fpi),
        "wal_samples": len(wal),
        **cpu_time_medians(progress),
        **control,
        "checkpoints": per_checkpoint,
    }


def meets_tps_target(cp: dict) -> bool | None:
    ratio = cp.get("min_to_median_tps_ratio")
    return None if ratio is None else ratio >= TARGET_MIN_TO_MEDIAN_TPS


def meets_after_to_before_target(cp: dict) -> bool | None:
    ratio = cp.get("mean_tps_after_to_before")
    return None if ratio is None else ratio >= TARGET_AFTER_TO_BEFORE_TPS


def meets_wal_target(cp: dict) -> bool | None:
    ratio = cp.get("wal_bytes_per_txn_ratio")
    return None if ratio is None else abs(ratio - 1) <= TARGET_WAL_RATIO_TOLERANCE
