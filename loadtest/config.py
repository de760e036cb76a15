"""Run configuration (`RunConfig`, validated eagerly) and how a run is split into per-engine plans.

A run has N users numbered 0..N-1 across all worker processes. User i spawns at i / spawn_rate after
the common start instant, whichever worker it lives in (worker w gets users w, w+W, w+2W, ...), so
the ramp is the same for one worker or eight. A request quota is split as evenly as possible. In an
open-loop run the schedule's slots k = 0, 1, 2, ... are due at k / rate; worker w takes slots
w, w+W, w+2W, ..., which keeps the combined send times evenly spaced.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from loadtest.errors import ConfigError


@dataclass(frozen=True, slots=True)
class RunConfig:
    """How hard and how long to drive one target.

    users: concurrent simulated clients (in an open-loop run: the most requests in flight).
    spawn_rate: users started per second; None starts all at once.
    run_time_s: the run ends this long after the start, always (a bound even with `requests`).
    requests: stop earlier, after this many task executions (one task normally makes one request).
    rate: open loop at this many tasks per second in total, latency timed from each intended start;
        None is a closed loop in which each user waits `wait_time` between its tasks.
    workers: worker processes (spawn context), each with its own event loop; 0 runs the users in
        the caller's event loop (debugging, tests with fakes).
    seed: seeds every user's rng (task choice, `between` waits).
    stats_interval_s: width of a time-series window; workers ship stats this often.
    stop_timeout_s: at the end, how long in-flight tasks may finish, then how long `on_stop` may take.
    startup_timeout_s: how long worker processes may take to import and report ready.
    use_uvloop: run worker loops on uvloop when it is installed.
    """

    users: int = 1
    spawn_rate: float | None = None
    run_time_s: float = 60.0
    requests: int | None = None
    rate: float | None = None
    workers: int = 1
    seed: int = 0
    stats_interval_s: float = 1.0
    stop_timeout_s: float = 2.0
    startup_timeout_s: float = 30.0
    use_uvloop: bool = True

    def __post_init__(self) -> None:
        if self.users < 1:
            raise ConfigError(f"users must be >= 1, got {self.users}")
        if self.spawn_rate is not None and not (self.spawn_rate > 0 and math.isfinite(self.spawn_rate)):
            raise ConfigError(f"spawn_rate must be a positive number of users/s or None, got {self.spawn_rate}")
        if not (self.run_time_s > 0 and math.isfinite(self.run_time_s)):
            raise ConfigError(f"run_time_s must be positive and finite, got {self.run_time_s}")
        if self.workers < 0:
            raise ConfigError(f"workers must be >= 0 (0 = in-process), got {self.workers}")
        if self.workers > self.users:
            raise ConfigError(
                f"workers ({self.workers}) must not exceed users ({self.users}): each worker needs a user"
            )
        if self.requests is not None and self.requests < max(1, self.workers):
            raise ConfigError(f"requests must be >= max(1, workers) ({max(1, self.workers)}), got {self.requests}")
        if self.rate is not None and not (self.rate > 0 and math.isfinite(self.rate)):
            raise ConfigError(f"rate must be a positive number of requests/s or None, got {self.rate}")
        for name in ("stats_interval_s", "stop_timeout_s", "startup_timeout_s"):
            value = getattr(self, name)
            if not (value > 0 and math.isfinite(value)):
                raise ConfigError(f"{name} must be positive and finite, got {value}")

    @property
    def open_loop(self) -> bool:
        return self.rate is not None

    @property
    def ramp_s(self) -> float:
        """Time from the start until the last user is spawned."""
        return 0.0 if self.spawn_rate is None else (self.users - 1) / self.spawn_rate


@dataclass(frozen=True, slots=True)
class EnginePlan:
    """One engine's (one event loop's) share of a run; times are relative to the common start."""

    worker: int
    user_ids: tuple[int, ...]
    spawn_rate: float | None
    run_time_s: float
    requests: int | None
    rate: float | None
    rate_phase: int
    rate_stride: int
    stats_interval_s: float
    stop_timeout_s: float
    seed: int

    def spawn_offset(self, user_id: int) -> float:
        """When user `user_id` starts, in seconds after the run's start."""
        return 0.0 if self.spawn_rate is None else user_id / self.spawn_rate

    def slot_offset(self, k: int) -> float:
        """When this engine's k-th open-loop slot is due, after the schedule's start."""
        assert self.rate is not None
        return (self.rate_phase + k * self.rate_stride) / self.rate


def plan_engines(config: RunConfig) -> list[EnginePlan]:
    """Split `config` over max(1, workers) engines; see the module docstring for the rules."""
    engines = max(1, config.workers)
    plans = []
    for w in range(engines):
        quota = None
        if config.requests is not None:
            quota = config.requests // engines + (1 if w < config.requests % engines else 0)
        plans.append(
            EnginePlan(
                worker=w,
                user_ids=tuple(range(w, config.users, engines)),
                spawn_rate=config.spawn_rate,
                run_time_s=config.run_time_s,
                requests=quota,
                rate=config.rate,
                rate_phase=w,
                rate_stride=engines,
                stats_interval_s=config.stats_interval_s,
                stop_timeout_s=config.stop_timeout_s,
                seed=config.seed,
            )
        )
    return plans
