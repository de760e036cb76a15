"""The engine: one event loop's share of a run (its users, its slice of the schedule, its stats), and
the run's configuration (`RunConfig`, validated eagerly) split into per-engine plans (`plan_engines`).

A run has N users numbered 0..N-1 across all worker processes. User i spawns at i / spawn_rate after
the common start instant, whichever worker it lives in (worker w gets users w, w+W, w+2W, ...), so the
ramp is the same for one worker or eight. A request quota is split as evenly as possible. In an
open-loop run the schedule's slots k = 0, 1, 2, ... are due at k / rate; worker w takes slots w, w+W,
w+2W, ..., which keeps the combined send times evenly spaced.

Every user is one asyncio task running `on_start`, then tasks until the run is over, then `on_stop`.
A closed-loop user waits `wait_time()` between tasks. In an open loop a user sleeps until its slot; a
user still busy when its next slot is due starts late, and the first request of that task is timed
from the slot (coordinated omission: a stall costs latency, not silently fewer requests). The schedule
starts once every user of the engine finished `on_start`, so connection setup does not count as server
latency. Open-loop users wake `_TIMER_SLACK_S` before their slot and a request is timed from the earlier
of its actual and intended start: event-loop timers fire up to a millisecond late (epoll rounds
timeouts up), and that lateness belongs to the generator, not to the server.

Everything is bounded: no task starts after `start + run_time_s`; in-flight tasks then get
`stop_timeout_s` to finish before they are cancelled, and `on_stop` gets `stop_timeout_s` more. A
ticker ships the collected stats as one `IntervalSnapshot` per window; the final partial window is
flushed when the engine ends.
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable, Mapping

from loadtest.clock import Clock
from loadtest.errors import ConfigError, StopUser
from loadtest.stats import IntervalSnapshot, StatsCollector
from loadtest.users import User, UserContext, error_kind, validate_user_class


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
                worker=w, user_ids=tuple(range(w, config.users, engines)), spawn_rate=config.spawn_rate,
                run_time_s=config.run_time_s, requests=quota, rate=config.rate, rate_phase=w, rate_stride=engines,
                stats_interval_s=config.stats_interval_s, stop_timeout_s=config.stop_timeout_s, seed=config.seed,
            )
        )
    return plans


_log = logging.getLogger(__name__)

_TIMER_SLACK_S = 0.002
# asyncio may fire a timer up to its clock resolution early, and due times are sums of floats: a
# user woken "at" the deadline can read a clock a hair before it. Anything within this of the
# deadline counts as past it, so no task starts after the run is over.
_EPSILON_S = 1e-6

SnapshotSink = Callable[[IntervalSnapshot], None]


@dataclass(frozen=True, slots=True)
class EngineOutcome:
    """How one engine's run went. `duration_s` runs from the common start to its last user's end."""

    worker: int
    duration_s: float
    users_started: int
    tasks_started: int


class Engine:
    """Runs `plan`'s users of `user_class` against `host` on the current event loop. One run per
    instance. `sink` receives each stats window as it closes (called on the loop, must not block)."""

    def __init__(
        self, user_class: type[User], *, host: str, plan: EnginePlan, clock: Clock, sink: SnapshotSink,
        options: Mapping[str, Any] | None = None,
    ) -> None:
        validate_user_class(user_class)
        self._user_class = user_class
        self._host = host
        self._plan = plan
        self._clock = clock
        self._sink = sink
        self._options: Mapping[str, Any] = MappingProxyType(dict(options or {}))
        self._collector = StatsCollector()
        self._stopping = False
        self._deadline = 0.0
        self._tickets = plan.requests
        self._window = 0
        self._slot = 0
        self._schedule_start: float | None = None
        self._users_started = 0
        self._users_ready = 0
        self._spawn_done = False
        self._tasks_started = 0
        self._all_ready: asyncio.Event | None = None
        self._spawner: asyncio.Task[None] | None = None
        self._user_tasks: set[asyncio.Task[None]] = set()
        self._logged: set[str] = set()
        self._ran = False

    def request_stop(self) -> None:
        """End the run now: no new tasks, users cancelled (their `on_stop` still runs). Idempotent."""
        self._stopping = True
        if self._spawner is not None:
            self._spawner.cancel()
        for t in self._user_tasks:
            t.cancel()
        if self._all_ready is not None:
            self._all_ready.set()

    async def run(self, start_at: float) -> EngineOutcome:
        """Sleep until `start_at` (clock time), run, return when every user has ended or the stop
        timeouts have passed. The final stats window is flushed to the sink before returning."""
        if self._ran:
            raise RuntimeError("an Engine runs once; create a new one")
        self._ran = True
        clock, plan = self._clock, self._plan
        self._deadline = start_at + plan.run_time_s
        self._all_ready = asyncio.Event()
        if self._stopping:
            self._all_ready.set()
        await clock.sleep_until(start_at)
        ticker = asyncio.create_task(self._tick(start_at), name=f"loadtest-ticker-{plan.worker}")
        self._spawner = asyncio.create_task(self._spawn(start_at), name=f"loadtest-spawner-{plan.worker}")
        try:
            await asyncio.wait({self._spawner})
            if self._user_tasks:
                hard_stop = self._deadline + plan.stop_timeout_s
                _, pending = await asyncio.wait(self._user_tasks, timeout=max(0.0, hard_stop - clock.now()))
                if pending:
                    _log.warning(
                        "worker %d: %d users still busy at the stop timeout; cancelling", plan.worker, len(pending)
                    )
                    self._stopping = True
                    for t in pending:
                        t.cancel()
                    await asyncio.wait(pending, timeout=plan.stop_timeout_s)
            ended = clock.now()
        finally:
            self._stopping = True
            self._spawner.cancel()
            for t in self._user_tasks:
                t.cancel()
            ticker.cancel()
            await asyncio.gather(ticker, return_exceptions=True)
            self._emit()
        return EngineOutcome(
            worker=plan.worker, duration_s=max(0.0, ended - start_at), users_started=self._users_started,
            tasks_started=self._tasks_started,
        )

    # -- spawning and readiness ------------------------------------------------------------------

    async def _spawn(self, start_at: float) -> None:
        clock, plan = self._clock, self._plan
        try:
            for uid in plan.user_ids:
                due = start_at + plan.spawn_offset(uid)
                if due >= self._deadline - _EPSILON_S:
                    break
                await clock.sleep_until(due)
                if self._stopping:
                    break
                context = UserContext(
                    user_id=uid, host=self._host, clock=clock, recorder=self._collector,
                    rng=random.Random(f"{plan.seed}:{uid}"), options=self._options,
                )
                try:
                    user = self._user_class(context)
                except Exception as exc:
                    self._record_error(f"{self._user_class.__name__}.__init__", 0.0, exc)
                    continue
                self._users_started += 1
                self._user_tasks.add(asyncio.create_task(self._run_user(user), name=f"loadtest-user-{uid}"))
        finally:
            self._spawn_done = True
            self._check_ready()

    def _user_ready(self) -> None:
        self._users_ready += 1
        self._check_ready()

    def _check_ready(self) -> None:
        if self._spawn_done and self._users_ready >= self._users_started and self._all_ready is not None:
            self._all_ready.set()

    async def _wait_schedule_start(self) -> bool:
        """Open loop: wait until every user is ready; False when the run ended first."""
        assert self._all_ready is not None
        remaining = self._deadline - self._clock.now()
        if not self._all_ready.is_set():
            try:
                await asyncio.wait_for(self._all_ready.wait(), timeout=max(0.0, remaining))
            except TimeoutError:
                return False
        if self._schedule_start is None:
            self._schedule_start = self._clock.now()
        return not self._stopping

    # -- budget ----------------------------------------------------------------------------------

    def _take_ticket(self) -> bool:
        if self._tickets is None:
            return True
        if self._tickets <= 0:
            return False
        self._tickets -= 1
        return True

    def _next_slot(self) -> float:
        assert self._schedule_start is not None
        due = self._schedule_start + self._plan.slot_offset(self._slot)
        self._slot += 1
        return due

    # -- one user --------------------------------------------------------------------------------

    async def _run_user(self, user: User) -> None:
        clock = self._clock
        label = type(user).__name__
        open_loop = self._plan.rate is not None
        try:
            try:
                await user.on_start()
            except StopUser:
                return
            except Exception as exc:
                self._record_error(f"{label}.on_start", 0.0, exc)
                return
            finally:
                self._user_ready()
            if open_loop and not await self._wait_schedule_start():
                return
            while not self._stopping:
                intended: float | None = None
                if open_loop:
                    intended = self._next_slot()
                    if intended >= self._deadline - _EPSILON_S:
                        break
                elif clock.now() >= self._deadline - _EPSILON_S:
                    break
                if not self._take_ticket():
                    break
                if intended is not None:
                    await clock.sleep_until(intended - _TIMER_SLACK_S)
                    if self._stopping:
                        break
                fn = user.pick_task()
                started = clock.now()
                user._begin_task(started, intended)
                self._tasks_started += 1
                try:
                    await fn(user)
                except StopUser:
                    break
                except Exception as exc:
                    if not user._was_recorded(exc):
                        self._record_error(fn.__name__, clock.now() - started, exc)
                if not open_loop:
                    await clock.sleep_until(min(clock.now() + user.wait_time(), self._deadline))
        except Exception as exc:  # a bug in wait_time or the user class: end this user, keep the run
            self._record_error(f"{label}.error", 0.0, exc)
        finally:
            try:
                await asyncio.wait_for(user.on_stop(), timeout=self._plan.stop_timeout_s)
            except Exception as exc:
                self._record_error(f"{label}.on_stop", 0.0, exc)

    def _record_error(self, name: str, latency_s: float, exc: BaseException) -> None:
        kind = error_kind(exc)
        self._collector.record(name, latency_s, error=kind)
        key = f"{name}:{kind}"
        if key not in self._logged:  # the first of each kind with its traceback; the rest are counted
            self._logged.add(key)
            _log.warning("worker %d: %s failed with %s", self._plan.worker, name, kind, exc_info=exc)

    # -- stats windows ---------------------------------------------------------------------------

    async def _tick(self, start_at: float) -> None:
        interval = self._plan.stats_interval_s
        while True:
            due = start_at + (self._window + 1) * interval
            await self._clock.sleep_until(due)
            self._emit()

    def _emit(self) -> None:
        stats = self._collector.take()
        index = self._window
        self._window += 1
        if stats:
            try:
                self._sink(IntervalSnapshot(worker=self._plan.worker, index=index, stats=stats))
            except Exception:
                _log.exception("worker %d: could not ship stats window %d", self._plan.worker, index)
