"""SteadyDB's serial stages and the throughput each one allows (its "ceiling").

SteadyDB's view `steadydb_stat_stages` has one row per serial stage (a single lock or a
single thread, or the log device), with counters cumulative since the server started:

    stage text, kind text ('lock', 'thread' or 'device'), partitions integer (independent
    instances sharing the load evenly, e.g. lock-table shards; 1 for a single lock or thread),
    acquisitions bigint, busy_us bigint (held exclusively / working), waits bigint
    (acquisitions that had to wait), wait_us bigint (time others spent waiting to enter it)

While a SteadyDB run goes on, `StageSampler` reads the view once per second on its own
connection (`sampler.py`). Over the window from the first to the last sample lying within
the -P 1 seconds (all samples if fewer than two do), with T transactions in it (the -P 1
rates integrated over it, `dip.txns_between`) and E seconds long, each stage gets:

- busy %: busy_us / E / partitions: how much of the time one instance of it was held;
- wait %: wait_us / E / partitions (above 100 when several wait at once);
- waits/txn and acquisitions/txn: waits / T, acquisitions / T;
- ceiling: T / (busy_us / partitions), in transactions per second: the throughput at which
  the stage would be busy all the time if each transaction kept costing it what it did.

The lowest ceiling of a lock or a thread is the throughput that serial CPU work caps the
server at. A `device` stage (the shared log flush) carries whole groups of commits, so its
busy time per transaction shrinks as groups grow: its ceiling is shown, not counted as one.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

from .dip import progress_intervals, txns_between
from .sampler import PeriodicSampler

VIEW = "steadydb_stat_stages"
QUERY = f"select stage, kind, partitions, acquisitions, busy_us, waits, wait_us from {VIEW}"
COUNTERS = ("acquisitions", "busy_us", "waits", "wait_us")
DEVICE_KIND = "device"
DEVICE_NOTE = "device (carries groups; not a serial-CPU ceiling)"

DEFINITIONS = {
    "source": f"select * from {VIEW} once per second on its own connection while pgbench runs (SteadyDB "
              "only); counters are cumulative since server start",
    "window": "from the first to the last sample within the -P 1 seconds; transactions in it are the -P 1 "
              "rates integrated over it",
    "busy_pct": "100 * busy_us / window / partitions",
    "wait_pct": "100 * wait_us / window / partitions (above 100 when several wait at once)",
    "waits_per_txn": "waits / transactions in the window",
    "acquisitions_per_txn": "acquisitions / transactions in the window",
    "ceiling_tps": "transactions in the window / (busy_us / 1e6 / partitions): the tps at which the stage "
                   "would be busy all the time; stages of kind device carry groups of commits and are not "
                   "a serial-CPU ceiling",
    "lowest_ceiling": "the lowest ceiling_tps among stages not of kind device",
    "stage_series": "per-second deltas of the counters between consecutive samples, with the transactions "
                    "and tps of the same interval",
}


class StageSampler(PeriodicSampler):
    """Reads `steadydb_stat_stages` once per second; each sample's `stages` is
    {stage: {kind, partitions, acquisitions, busy_us, waits, wait_us}}."""

    thread_name = "stage-sampler"

    def read(self) -> dict:
        return {"stages": parse_rows(self.conn.query(QUERY).dicts())}

    @property
    def view_missing(self) -> bool:
        """The server has no such view (an older binary)."""
        e = self.exception
        fields = getattr(e, "fields", {}) or {}
        return bool(self.error) and not self.samples and (
            fields.get("C") == "42P01" or (VIEW in str(e) and "not exist" in str(e)))


def parse_rows(rows: list[dict]) -> dict[str, dict]:
    out = {}
    for r in rows:
        out[r["stage"]] = {"kind": r["kind"], "partitions": int(r["partitions"] or 1),
                           **{k: int(r[k] or 0) for k in COUNTERS}}
    return out


def _delta(s0: dict, s1: dict, name: str) -> dict:
    """Counters of stage `name` added between samples s0 and s1 (a stage missing from s0 starts at 0)."""
    before = s0["stages"].get(name, {})
    after = s1["stages"][name]
    return {k: after[k] - before.get(k, 0) for k in COUNTERS}


def stage_info(samples: list[dict]) -> dict[str, dict]:
    """{stage: {kind, partitions}} as in the last sample."""
    return {name: {"kind": v["kind"], "partitions": v["partitions"]}
            for name, v in (samples[-1]["stages"] if samples else {}).items()}


def per_second(samples: list[dict], progress: list[dict]) -> list[dict]:
    """Deltas between consecutive samples, each with the transactions and tps of pgbench in
    the same interval: [{t_s (end), dt_s, txns, tps, stages: {stage: {counter deltas}}}]."""
    intervals = progress_intervals([p for p in progress if math.isfinite(p["tps"])])
    out = []
    for s0, s1 in zip(samples, samples[1:]):
        dt_s = s1["t_s"] - s0["t_s"]
        if dt_s <= 0:
            continue
        txns = txns_between(intervals, s0["t_s"], s1["t_s"])
        out.append({"t_s": s1["t_s"], "dt_s": round(dt_s, 3), "txns": round(txns), "tps": round(txns / dt_s, 1),
                    "stages": {name: _delta(s0, s1, name) for name in s1["stages"]}})
    return out


def ceilings(samples: list[dict], progress: list[dict]) -> dict | None:
    """The per-stage figures (module docstring) over the run, lowest ceiling first; None
    without two samples or without progress."""
    progress = [p for p in progress if math.isfinite(p["tps"])]
    if len(samples) < 2 or not progress:
        return None
    intervals = progress_intervals(progress)
    run_start_s, run_end_s = intervals[0][0], intervals[-1][1]
    inside = [s for s in samples if run_start_s <= s["t_s"] <= run_end_s]
    first, last = (inside[0], inside[-1]) if len(inside) >= 2 else (samples[0], samples[-1])
    elapsed_s = last["t_s"] - first["t_s"]
    if elapsed_s <= 0:
        return None
    txns = txns_between(intervals, first["t_s"], last["t_s"])
    stages = []
    for name, now in last["stages"].items():
        d = _delta(first, last, name)
        partitions = max(1, now["partitions"])
        busy_s = d["busy_us"] / 1e6 / partitions  # per instance
        rec = {"stage": name, "kind": now["kind"], "partitions": now["partitions"], **d,
               "busy_pct": round(100 * busy_s / elapsed_s, 2),
               "wait_pct": round(100 * d["wait_us"] / 1e6 / partitions / elapsed_s, 2),
               "waits_per_txn": round(d["waits"] / txns, 4) if txns > 0 else None,
               "acquisitions_per_txn": round(d["acquisitions"] / txns, 4) if txns > 0 else None,
               "ceiling_tps": round(txns / busy_s, 1) if busy_s > 0 and txns > 0 else None}
        stages.append(rec)
    stages.sort(key=lambda r: (r["ceiling_tps"] is None, r["ceiling_tps"] or 0, r["stage"]))
    serial = [r for r in stages if r["kind"] != DEVICE_KIND and r["ceiling_tps"] is not None]
    lowest = serial[0] if serial else None
    return {
        "window_start_s": first["t_s"], "window_end_s": last["t_s"], "elapsed_s": round(elapsed_s, 3),
        "txns": round(txns), "tps": round(txns / elapsed_s, 1),
        "lowest_ceiling_tps": lowest["ceiling_tps"] if lowest else None,
        "lowest_ceiling_stage": lowest["stage"] if lowest else None,
        "stages": stages,
    }


def write_csv(path: Path, series: list[dict], info: dict[str, dict]) -> None:
    """The per-second deltas, one line per (second, stage)."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["t_s", "dt_s", "txns", "tps", "stage", "kind", "partitions", *COUNTERS])
        for row in series:
            for name, d in row["stages"].items():
                i = info.get(name, {})
                w.writerow([row["t_s"], row["dt_s"], row["txns"], row["tps"], name, i.get("kind"),
                            i.get("partitions"), *(d[k] for k in COUNTERS)])


def analyse(run: dict, samples: list[dict], csv_path: Path) -> None:
    """Put the stage figures of one SteadyDB run into its record and write its CSV."""
    progress = run.get("progress") or []
    info = stage_info(samples)
    series = per_second(samples, progress)
    run["stage_info"] = info
    run["stage_series"] = series
    write_csv(csv_path, series, info)
    run["stage_series_file"] = str(csv_path)
    summary = ceilings(samples, progress)
    if summary:
        run["stages"] = summary
