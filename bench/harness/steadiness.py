"""How steady a run's throughput was: the coefficient of variation of its one-second tps.

CV = sample standard deviation / mean of pgbench's -P 1 tps, without the first and the last
second (the first includes the clients' start, the last is cut short by -T). 0 means every
second did the same work; 0.05 means a typical second is about 5% off the mean.
"""

from __future__ import annotations

import math
import statistics

DEFINITION = ("stdev / mean of the pgbench -P 1 one-second tps, without the first and last second "
              "(sample standard deviation)")


def tps_cv(progress: list[dict]) -> float | None:
    """The coefficient of variation of the one-second tps, or None with fewer than two
    seconds left or a mean of zero."""
    values = [p["tps"] for p in progress[1:-1] if math.isfinite(p["tps"])]
    if len(values) < 2:
        return None
    mean = statistics.fmean(values)
    if mean <= 0:
        return None
    return round(statistics.stdev(values) / mean, 4)
