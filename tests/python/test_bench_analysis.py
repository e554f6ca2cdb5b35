"""The benchmark harness's arithmetic: the checkpoint-dip figures and the CPU probe.

No server is needed: the inputs are made up here, so every expected figure can be worked
out by hand.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from harness import dip  # noqa: E402
from harness.cpu_probe import CpuProbe, speed_per_interval  # noqa: E402

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
