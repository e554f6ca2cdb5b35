"""Unit tests of the harness's computations on synthetic data (no servers needed).

    python3 -m unittest discover -s bench/tests
"""

from __future__ import annotations

import os
import subprocess
import sys
import unittest
from pathlib import Path
from unittest import mock

BENCH_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BENCH_DIR))

import run  # noqa: E402
from harness import dip, pgwire, report, servers, stages, steadiness  # noqa: E402
from harness.workloads import WORKLOADS  # noqa: E402


def progress(tps_per_second: list[float], start_s: float = 0.0) -> list[dict]:
    """-P 1 lines: second k (1-based) ends at start_s + k."""
    return [{"t": start_s + k + 1, "epoch": 1000.0 + start_s + k + 1, "tps": tps, "lat_ms": 1.0, "stddev_ms": 0.1}
            for k, tps in enumerate(tps_per_second)]


def stage_sample(t_s: float, **stage_counters) -> dict:
    """One sample; each keyword is a stage: (kind, partitions, acquisitions, busy_us, waits, wait_us)."""
    return {"t_s": t_s, "epoch_s": 1000.0 + t_s, "stages": {
        name: {"kind": kind, "partitions": parts, "acquisitions": acq, "busy_us": busy, "waits": waits,
               "wait_us": wait}
        for name, (kind, parts, acq, busy, waits, wait) in stage_counters.items()}}


class StageCeilings(unittest.TestCase):
    def setUp(self):
        # 10 s at 1000 tps; samples at 0 (launch) .. 10, and one after pgbench exited (ignored)
        self.progress = progress([1000.0] * 10)
        self.samples = []
        for t in range(11):
            self.samples.append(stage_sample(
                float(t),
                # one lock: 250 us of every second held -> busy 25%, ceiling 1000 / 0.25 = 4000 tps
                wal_append=("lock", 1, 1000 * t, 250_000 * t, 100 * t, 50_000 * t),
                # 4 shards sharing 2 s of busy time a second -> 50% each, ceiling 2000 tps
                lock_table=("lock", 4, 2000 * t, 2_000_000 * t, 0, 0),
                # the flush: busy 90% of the time -> ceiling 1111 tps, but a device
                wal_flush=("device", 1, 50 * t, 900_000 * t, 0, 0),
                # never busy: no ceiling
                idle_thread=("thread", 1, 0, 0, 0, 0)))
        self.samples.append(stage_sample(11.5, wal_append=("lock", 1, 99999, 99_999_999, 0, 0),
                                         lock_table=("lock", 4, 0, 99_999_999, 0, 0),
                                         wal_flush=("device", 1, 0, 99_999_999, 0, 0),
                                         idle_thread=("thread", 1, 0, 0, 0, 0)))

    def test_ceilings(self):
        c = stages.ceilings(self.samples, self.progress)
        self.assertEqual(c["elapsed_s"], 10.0)
        self.assertEqual(c["txns"], 10_000)
        by_name = {s["stage"]: s for s in c["stages"]}
        self.assertAlmostEqual(by_name["wal_append"]["busy_pct"], 25.0)
        self.assertAlmostEqual(by_name["wal_append"]["wait_pct"], 5.0)
        self.assertAlmostEqual(by_name["wal_append"]["waits_per_txn"], 0.1)
        self.assertAlmostEqual(by_name["wal_append"]["ceiling_tps"], 4000.0)
        self.assertAlmostEqual(by_name["lock_table"]["busy_pct"], 50.0)
        self.assertAlmostEqual(by_name["lock_table"]["ceiling_tps"], 2000.0)
        self.assertAlmostEqual(by_name["wal_flush"]["ceiling_tps"], 1111.1)
        self.assertIsNone(by_name["idle_thread"]["ceiling_tps"])
        # lowest ceiling first, stages without one last
        self.assertEqual([s["stage"] for s in c["stages"]], ["wal_flush", "lock_table", "wal_append", "idle_thread"])
        # the device is not the lowest serial ceiling
        self.assertEqual(c["lowest_ceiling_stage"], "lock_table")
        self.assertAlmostEqual(c["lowest_ceiling_tps"], 2000.0)

    def test_per_second(self):
        series = stages.per_second(self.samples[:11], self.progress)
        self.assertEqual(len(series), 10)
        self.assertEqual(series[0]["tps"], 1000.0)
        self.assertEqual(series[3]["stages"]["wal_append"]["busy_us"], 250_000)

    def test_stage_appearing_later_starts_at_zero(self):
        samples = [stage_sample(0.0), stage_sample(1.0, late=("thread", 1, 10, 1000, 0, 0))]
        series = stages.per_second(samples, progress([100.0]))
        self.assertEqual(series[0]["stages"]["late"]["busy_us"], 1000)

    def test_table_marks_devices(self):
        run = {"workload": "update_pk", "clients": 32, "system": "steadydb",
               "stages": stages.ceilings(self.samples, self.progress)}
        text = report.stage_table(run)
        self.assertIn(stages.DEVICE_NOTE, text)
        self.assertIn("lowest stage ceiling 2,000 tps (lock_table)", text)

    def test_too_few_samples(self):
        self.assertIsNone(stages.ceilings(self.samples[:1], self.progress))

    def test_missing_view(self):
        sampler = stages.StageSampler.__new__(stages.StageSampler)
        sampler.samples = []
        sampler.exception = pgwire.PgError('relation "steadydb_stat_stages" does not exist', {"C": "42P01"})
        sampler.error = "PgError: ..."
        self.assertTrue(sampler.view_missing)
        sampler.exception = OSError("connection reset")
        self.assertFalse(sampler.view_missing)


class Steadiness(unittest.TestCase):
    def test_cv_ignores_first_and_last_second(self):
        self.assertEqual(steadiness.tps_cv(progress([1.0, 100.0, 100.0, 100.0, 5000.0])), 0.0)
        cv = steadiness.tps_cv(progress([0.0, 90.0, 110.0, 0.0]))
        self.assertAlmostEqual(cv, 0.1414, places=4)  # stdev(90, 110) = 14.14, mean 100

    def test_cv_needs_two_seconds(self):
        self.assertIsNone(steadiness.tps_cv(progress([1.0, 2.0, 3.0])))


class CheckpointMeanBeforeAfter(unittest.TestCase):
    def test_ratio(self):
        run = {"progress": progress([1000.0] * 20 + [900.0] * 10),
               "checkpoints": [{"requested_at_s": 20, "issued_at_s": 20.0, "duration_s": 0.1}]}
        cp = dip.checkpoint_dip(run)["checkpoints"][0]
        self.assertEqual(cp["mean_tps_before"], 1000.0)
        self.assertEqual(cp["mean_tps_after"], 900.0)
        self.assertEqual(cp["mean_tps_after_to_before"], 0.9)
        self.assertFalse(dip.meets_after_to_before_target(cp))

    def test_ratio_per_machine_speed(self):
        # The machine slowed by a tenth after the checkpoint, and so did the server: with
        # the machine's change taken out, the checkpoint itself cost nothing.
        run = {"progress": progress([1000.0] * 20 + [900.0] * 10),
               "checkpoints": [{"requested_at_s": 20, "issued_at_s": 20.0, "duration_s": 0.1}]}
        for i, p in enumerate(run["progress"]):
            p["cpu_speed"] = 50.0 if i < 20 else 45.0
        cp = dip.checkpoint_dip(run)["checkpoints"][0]
        self.assertEqual(cp["cpu_speed_after_to_before"], 0.9)
        self.assertEqual(cp["mean_tps_per_speed_after_to_before"], 1.0)

    def test_window_cut_at_run_start(self):
        run = {"progress": progress([1000.0] * 20),
               "checkpoints": [{"requested_at_s": 4, "issued_at_s": 4.0, "duration_s": 0.1}]}
        cp = dip.checkpoint_dip(run)["checkpoints"][0]
        self.assertEqual(cp["mean_tps_window_before_s"], 4.0)
        self.assertTrue(dip.meets_after_to_before_target(cp))


class ServerCpus(unittest.TestCase):
    def test_split(self):
        self.assertEqual(servers.split_cpus(4, list(range(16))), (list(range(4)), list(range(4, 16))))
        with self.assertRaises(ValueError):
            servers.split_cpus(2, [0, 1])

    def test_pinned(self):
        self.assertEqual(servers.pinned(["pgbench"], [4, 5, 6, 9]), ["taskset", "-c", "4-6,9", "pgbench"])
        self.assertEqual(servers.pinned(["pgbench"], None), ["pgbench"])

    def test_scaling_report(self):
        runs = [{"workload": "select_pk", "clients": 32, "system": "steadydb", "server_cpus": n, "status": "ok",
                 "tps": tps} for n, tps in ((4, 1000.0), (8, 1800.0))]
        results = {"options": {"server_cpus": [4, 8], "workloads": ["select_pk"], "clients": [32],
                               "systems": ["steadydb"]}, "runs": runs}
        text = report.scaling_report(results)
        self.assertIn("| select_pk | 32 | SteadyDB | 1,000.0 | 1,800.0 | 1.80 |", text)


class ManycoreCommand(unittest.TestCase):
    """bench/manycore.sh: every group parses as bench/run.py options on a 16-CPU machine, at
    most three groups per call, and each call's estimated time is under 8 minutes."""

    CALL_LIMIT_S = 8 * 60
    OVERHEAD_S = 10  # per run, on top of its duration (see bench/manycore.sh)

    def calls(self) -> list[list[list[str]]]:
        out = subprocess.run(["bash", str(BENCH_DIR / "manycore.sh"), "--print"], capture_output=True, text=True,
                             check=True).stdout
        calls = []
        for line in out.splitlines():
            if line.startswith("#"):
                continue
            words = line.split()
            self.assertEqual(words[:2], ["bash", ".manycore/run.sh"])
            groups, group = [], []
            for w in words[2:] + ["--"]:
                if w == "--":
                    groups.append(group)
                    group = []
                else:
                    group.append(w)
            calls.append(groups)
        return calls

    def estimate_s(self, a) -> float:
        runs = len(a.workloads) * len(a.clients) * len(a.server_cpus or [None]) * len(a.systems)
        per_system_load_s = 0.0
        for w in a.workloads:
            if WORKLOADS[w].pgbench_init:
                per_system_load_s += 7 * a.scale / 50
            if w == "update_pk":
                per_system_load_s += 5 * a.update_pk_rows / 1_000_000
        loads = len(a.clients) * len(a.server_cpus or [None]) * len(a.systems)
        return runs * (a.duration + self.OVERHEAD_S) + per_system_load_s * loads

    def test_groups(self):
        calls = self.calls()
        self.assertEqual(len(calls), 2)
        with mock.patch.object(os, "sched_getaffinity", return_value=set(range(16))):
            for groups in calls:
                self.assertLessEqual(len(groups), 3)
                total_s = sum(self.estimate_s(run.parse_args(g)) for g in groups)
                self.assertLess(total_s, self.CALL_LIMIT_S)


if __name__ == "__main__":
    unittest.main()
