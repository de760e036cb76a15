"""The engine: one event loop's share of a run (its users, its slice of the schedule, its stats).

Design: every user is one asyncio task running `on_start`, then tasks until the run is over, then
`on_stop`. A closed-loop user waits `wait_time()` between tasks. In an open loop the engine hands out
schedule slots (`EnginePlan.slot_offset`) and a user sleeps until its slot; a user still busy when its
next slot is due starts late, and the first request of that task is timed from the slot (coordinated
omission: a stall costs latency, not silently fewer requests). The schedule starts once every user of
the engine finished `on_start`, so connection setup does not count as server latency.

Open-loop users wake `_TIMER_SLACK_S` before their slot and a request is timed from the earlier of its
actual and intended start: event-loop timers fire up to a millisecond late (epoll rounds timeouts up),
and that lateness belongs to the generator, not to the server.

Everything is bounded: no task starts after `start + run_time_s`; in-flight tasks then get
`stop_timeout_s` to finish before they are cancelled, and `on_stop` gets `stop_timeout_s` more.
A ticker ships the collected stats as one `IntervalSnapshot` per window; the final partial window is
flushed when the engine ends.
"""

from __future__ import annotations

import asyncio
import logging
import random
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable, Mapping

from loadtest.clock import Clock
from loadtest.config import EnginePlan
from loadtest.errors import StopUser
from loadtest.stats import IntervalSnapshot, StatsCollector
from loadtest.users import User, UserContext, error_kind, validate_user_class

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

    def to_dict(self) -> dict[str, Any]:
        return {
            "worker": self.worker,
            "duration_s": self.duration_s,
            "users_started": self.users_started,
            "tasks_started": self.tasks_started,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EngineOutcome:
        return cls(
            worker=int(data["worker"]),
            duration_s=float(data["duration_s"]),
            users_started=int(data["users_started"]),
            tasks_started=int(data["tasks_started"]),
        )


class Engine:
    """Runs `plan`'s users of `user_class` against `host` on the current event loop. One run per
    instance. `sink` receives each stats window as it closes (called on the loop, must not block)."""

    def __init__(
        self,
        user_class: type[User],
        *,
        host: str,
        plan: EnginePlan,
        clock: Clock,
        sink: SnapshotSink,
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
            worker=plan.worker,
            duration_s=max(0.0, ended - start_at),
            users_started=self._users_started,
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
                    user_id=uid,
                    host=self._host,
                    clock=clock,
                    recorder=self._collector,
                    rng=random.Random(f"{plan.seed}:{uid}"),
                    options=self._options,
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
