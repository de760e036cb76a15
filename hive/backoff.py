"""The one back-off: exponential waits with a cap and optional jitter, for every retry loop (the
database transaction retry in store/db.py, the poller and housekeeping loops, the PySpark client's
UNAVAILABLE retries and its lock waits).

Wait number n (counting from 0) is `initial_s * 2**n`, at most `max_s`, then scaled by a factor
drawn uniformly from [1 - jitter, 1 + jitter]: jitter 0 gives exact waits (Hive's lock back-off),
jitter 1 spreads a wait over [0, 2x] so that writers that collided do not collide again in lock
step. Randomness is injectable (`rng`), and nothing here sleeps: callers sleep on their own
injected clock (hive/clock.py), so tests never really wait.

Pure: no I/O, no imports beyond the standard library (the PySpark client ships this package).
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from typing import Iterator


@dataclass(frozen=True, slots=True)
class Backoff:
    initial_s: float
    max_s: float
    jitter: float = 0.0
    max_doublings: int = 64  # the growth stops here even below the cap (and 2**n stays a float)

    def __post_init__(self) -> None:
        if self.initial_s < 0 or self.max_s < 0:
            raise ValueError(f"back-off waits must not be negative (initial {self.initial_s}, max {self.max_s})")
        if not 0 <= self.jitter <= 1:
            raise ValueError(f"back-off jitter is a fraction between 0 and 1, got {self.jitter}")
        if not 0 <= self.max_doublings <= 1000:
            raise ValueError(f"back-off max_doublings must be between 0 and 1000, got {self.max_doublings}")

    def delay(self, n: int, rng: random.Random | None = None) -> float:
        """Wait number `n` (0: the first): `initial_s * 2**n` capped at `max_s`, jittered."""
        wait = min(self.max_s, self.initial_s * 2.0 ** min(max(n, 0), self.max_doublings))
        if self.jitter:
            wait *= 1 + (rng.uniform if rng is not None else random.uniform)(-self.jitter, self.jitter)
        return wait

    def delays(self, count: int | None = None, rng: random.Random | None = None) -> Iterator[float]:
        """Waits 0, 1, 2 ...: `count` of them (None: without end)."""
        numbers = itertools.count() if count is None else range(count)
        return (self.delay(n, rng) for n in numbers)
