"""The benchmark harness's arithmetic: the checkpoint-dip figures, the CPU probe and the
machine-noise measurement.

No server is needed: the inputs are made up here, so every expected figure can be worked
out by hand.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from harness import dip, report  # noqa: E402
from harness.cpu_probe import CpuProbe, speed_per_interval  # noqa: E402
from harness.cpu_time import CpuTimeSampler, read_cpu_ticks, shares_per_interval  # noqa: E402
from harness.machine_noise import window_lows, work_per_second  # noqa: E402

LAUNCH = 1_000_000.0  # epoch of pgbench's launch in the made-up runs


def made_up_run(seconds: int, tps: dict[int, float], speed: dict[int, float], checkpoint_at: float) -> dict:
    """A run of `seconds` -P 1 seconds at 100 tps and machine speed 50, except where `tps`
    and `speed` say otherwise (keyed by the second's end), with 80 WAL bytes per
    transaction throughout and one CHECKPOINT."""
    progress = []
    wal = [{"t_s": 0.0, "epoch_s": LAUNCH, "wal_bytes": 0, "wal_fpi": 0, "wal_records": 0}]
    total = 0.0
    for t in range(1, seconds + 1):
        rate = tps.get(t, 100.0)
        total += rate
        progress.append({"t": float(t), "epoch": LAUNCH + t, "tps": rate, "lat_ms": 1.0, "stddev_ms": 0.1,
                         "failed": 0, "cpu_speed": speed.get(t, 50.0)})
        wal.append({"t_s": float(t), "epoch_s": LAUNCH + t, "wal_bytes": round(80 * total), "wal_fpi": 0,
                    "wal_records": round(total)})
    return {"progress": progress, "wal_series": wal,
            "checkpoints": [{"requested_at_s": checkpoint_at, "issued_at_s": checkpoint_at, "duration_s": 0.1}]}


def test_the_lowest_second_after_a_checkpoint_and_the_machine_speed_in_it():
    run = made_up_run(60, tps={35: 80.0, 12: 90.0}, speed={35: 40.0, 20: 45.0}, checkpoint_at=30.0)
    d = dip.checkpoint_dip(run)
    assert d["median_tps"] == 100.0
    assert d["cpu_speed_median"] == 50.0
    # Before the checkpoint (seconds ending 11..30): the slowest is second 12 at 90 tps,
    # when the machine ran at full speed; its own slowest second there was 20 (45).
    assert d["control_min_tps"] == 90.0 and d["control_min_tps_at_s"] == 12.0
    assert d["control_min_to_median_tps_ratio"] == 0.9
    assert d["control_cpu_speed_in_min_second"] == 1.0
    assert d["control_cpu_speed_min"] == 0.9
    [cp] = d["checkpoints"]
    assert cp["min_tps"] == 80.0 and cp["min_tps_at_s"] == 35.0
    assert cp["min_to_median_tps_ratio"] == 0.8
    assert cp["cpu_speed_in_min_second"] == 0.8
    assert cp["cpu_speed_min"] == 0.8
    assert dip.meets_tps_target(cp) is False
    # 80 bytes per transaction before, during and after: the WAL target holds.
    assert cp["wal_bytes_per_txn_after"] == pytest.approx(80.0)
    assert cp["wal_bytes_per_txn_ratio"] == pytest.approx(1.0)
    assert dip.meets_wal_target(cp) is True


def test_a_run_without_the_probe_has_no_machine_speed():
    run = made_up_run(40, tps={}, speed={}, checkpoint_at=25.0)
    for p in run["progress"]:
        p["cpu_speed"] = None
    d = dip.checkpoint_dip(run)
    assert d["cpu_speed_median"] is None
    assert "cpu_speed_in_min_second" not in d["checkpoints"][0]
    assert "control_cpu_speed_min" not in d


def test_speed_per_interval_is_the_mean_over_cpus_of_each_cpus_median():
    samples = [
        {"epoch_s": 10.1, "cpu": 0, "speed": 40.0},
        {"epoch_s": 10.5, "cpu": 0, "speed": 44.0},
        {"epoch_s": 10.9, "cpu": 0, "speed": 100.0},  # one outlier: the median ignores it
        {"epoch_s": 10.2, "cpu": 1, "speed": 30.0},
        {"epoch_s": 11.5, "cpu": 0, "speed": 50.0},  # in the second interval only CPU 0
    ]
    speeds = speed_per_interval(samples, [(10.0, 11.0), (11.0, 12.0)])
    assert speeds == [pytest.approx((44.0 + 30.0) / 2), None]


def test_the_probe_measures_every_cpu():
    probe = CpuProbe().start()
    time.sleep(0.6)
    samples = probe.stop()
    assert {s["cpu"] for s in samples} == set(probe.cpus)
    assert all(s["speed"] > 0 for s in samples)
    assert all(p.poll() is not None for p in probe.procs)


def _ticks(busy: int, idle: int, iowait: int, steal: int = 0) -> list[int]:
    # user nice system idle iowait irq softirq steal: busy split over user and system
    return [busy - busy // 2, 0, busy // 2, idle, iowait, 0, 0, steal]


def test_cpu_shares_per_interval_come_from_the_samples_nearest_its_ends():
    assert read_cpu_ticks("cpu  1 2 3 4 5 6 7 8 9 10\ncpu0 1 1 1 1 1 1 1 1\n") == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    assert read_cpu_ticks("cpu  1 2 3 4\n") == [1, 2, 3, 4, 0, 0, 0, 0]
    assert read_cpu_ticks("intr 5\n") is None
    samples = [
        (10.02, _ticks(0, 0, 0)),
        (10.51, _ticks(40, 8, 2)),
        (11.01, _ticks(80, 16, 4)),
        (11.98, _ticks(100, 76, 24)),  # the second second: 20 busy, 60 idle, 20 iowait
    ]
    shares = shares_per_interval(samples, [(10.0, 11.0), (11.0, 12.0), (12.0, 13.0)])
    assert shares[0] == {"cpu_busy": 0.8, "cpu_idle": 0.16, "cpu_iowait": 0.04, "cpu_steal": 0.0}
    assert shares[1] == {"cpu_busy": 0.2, "cpu_idle": 0.6, "cpu_iowait": 0.2, "cpu_steal": 0.0}
    # Past the last sample there are no two samples to take a difference of.
    assert shares[2] is None
    assert shares_per_interval(samples[:1], [(10.0, 11.0)]) == [None]


def test_the_lowest_second_reports_how_busy_the_machine_was_in_it():
    run = made_up_run(60, tps={35: 80.0, 12: 90.0}, speed={}, checkpoint_at=30.0)
    for p in run["progress"]:
        idle = {35: 0.4, 12: 0.1}.get(int(p["t"]), 0.2)
        p.update({"cpu_busy": round(0.75 - idle, 3), "cpu_idle": idle, "cpu_iowait": 0.05, "cpu_steal": 0.0})
    d = dip.checkpoint_dip(run)
    assert (d["cpu_busy_median"], d["cpu_idle_median"], d["cpu_iowait_median"]) == (0.55, 0.2, 0.05)
    # The control's lowest second (12) was busier than usual, the checkpoint's (35) idler.
    assert (d["control_cpu_busy_in_min_second"], d["control_cpu_idle_in_min_second"]) == (0.65, 0.1)
    [cp] = d["checkpoints"]
    assert (cp["cpu_busy_in_min_second"], cp["cpu_idle_in_min_second"], cp["cpu_iowait_in_min_second"]) \
        == (0.35, 0.4, 0.05)
    rec = {"workload": "w", "clients": 1, "system": "steadydb", "status": "ok", "checkpoint_dip": d}
    table = report.checkpoint_dip_table("w", 1, ["steadydb"], [rec])
    assert "| CHECKPOINT at 30 s: CPU busy / idle / iowait in that second (run's median) | " \
           "0.35 / 0.40 / 0.05 (0.55 / 0.20 / 0.05) |" in table
    assert "0.65 / 0.10 / 0.05 (0.55 / 0.20 / 0.05)" in table


def test_a_run_without_cpu_time_samples_reports_none():
    d = dip.checkpoint_dip(made_up_run(40, tps={}, speed={}, checkpoint_at=25.0))
    assert "cpu_busy_median" not in d and "cpu_busy_in_min_second" not in d["checkpoints"][0]


def test_the_cpu_time_sampler_reads_proc_stat():
    if not Path("/proc/stat").exists():
        pytest.skip("no /proc/stat")
    sampler = CpuTimeSampler(interval_s=0.05)
    sampler.start()
    time.sleep(0.5)
    samples = sampler.stop()
    assert len(samples) >= 3 and not sampler.is_alive()
    [shares] = shares_per_interval(samples, [(samples[0][0], samples[-1][0])])
    assert shares is not None
    assert sum(shares.values()) == pytest.approx(1.0, abs=0.01)


def test_machine_noise_sums_the_cpus_over_the_seconds_both_measured_whole():
    cpu0 = [(100, 7), (101, 50), (102, 60), (103, 40)]  # (second's end, chunks); 100 is partial
    cpu1 = [(101, 3), (102, 45), (103, 55), (104, 50)]  # 101 is partial; 104 has no CPU 0
    assert work_per_second([cpu0, cpu1]) == [105, 95]


def test_machine_noise_gives_each_whole_windows_lowest_second_over_the_median():
    values = [100.0] * 45
    values[3] = 85.0  # first window: 0.85 of the median
    values[30] = 95.0  # second window: 0.95
    values[44] = 10.0  # in the last five seconds, which make no whole window
    assert window_lows(values, window=20) == [0.85, 0.95]
    assert window_lows([], window=20) == []
