"""The engine on virtual time: rates, quotas, spawn ramp, open loop and coordinated omission, bounds.

Every test runs on `VirtualTimeLoop` with `LoopClock`, so ten-second runs take milliseconds and the
numbers are exact rather than approximately right on a loaded CI machine.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable, Coroutine, TypeVar

import pytest

from loadtest import RunConfig, RunResult, StopUser, User, constant, run_load, task
from loadtest.clock import LoopClock, VirtualTimeLoop
from loadtest.engine import plan_engines
from loadtest.errors import ConfigError
from loadtest.stats import LiveView

T = TypeVar("T")


def run_virtual(fn: Callable[[], Coroutine[Any, Any, T]]) -> T:
    with asyncio.Runner(loop_factory=VirtualTimeLoop) as runner:
        return runner.run(fn())


def run(
    user_class: type[User], options: dict[str, Any] | None = None, progress: Any = False, **config: Any
) -> RunResult:
    cfg = RunConfig(workers=0, **config)
    return run_virtual(
        lambda: run_load(user_class, "virtual:0", cfg, options=options, progress=progress, clock=LoopClock())
    )


class Steady(User):
    wait_time = constant(0.125)

    @task
    async def op(self) -> None:
        async with self.measure("op") as m:
            await self.clock.sleep(0)
            m.items = 10


class Instant(User):
    @task
    async def op(self) -> None:
        async with self.measure("op"):
            await self.clock.sleep(0.001)


class StallsOnce(User):
    """Every request takes 1 ms, except the 100th, which hangs for a whole second."""

    wait_time = constant(0.01)

    async def on_start(self) -> None:
        self.count = 0

    @task
    async def op(self) -> None:
        self.count += 1
        async with self.measure("op"):
            await self.clock.sleep(1.0 if self.count == 100 else 0.001)


def test_closed_loop_rates_come_from_the_injected_clock() -> None:
    result = run(Steady, users=2, run_time_s=10.0)
    stats = result.stats["op"]
    assert stats.requests == 2 * 80  # one task every 0.125 s for 10 s, per user
    assert result.duration_s == pytest.approx(10.0)
    assert stats.requests / result.duration_s == pytest.approx(16.0)
    assert stats.items == 1600
    assert len(result.series) == 10
    assert all(p.requests_per_s == pytest.approx(16.0) for p in result.series)
    assert all(p.items_per_s == pytest.approx(160.0) for p in result.series)


def test_a_request_quota_runs_exactly_that_many_tasks_and_ends_early() -> None:
    result = run(Instant, users=3, run_time_s=60.0, requests=37)
    assert result.stats["op"].requests == 37
    assert result.tasks_started == 37
    assert result.duration_s < 1.0


def test_users_spawn_at_the_spawn_rate() -> None:
    started: list[tuple[int, float]] = []

    class Logged(Instant):
        async def on_start(self) -> None:
            self.options["log"].append((self.user_id, self.clock.now()))

    run(Logged, options={"log": started}, users=4, spawn_rate=2.0, run_time_s=5.0)
    assert [uid for uid, _ in started] == [0, 1, 2, 3]
    assert [t for _, t in started] == pytest.approx([0.0, 0.5, 1.0, 1.5])


def test_open_loop_keeps_the_rate_regardless_of_users() -> None:
    result = run(Instant, users=3, rate=50.0, run_time_s=10.0)
    assert result.stats["op"].requests == 500  # slots at k/50 s for k = 0..499
    assert result.stats["op"].requests / result.duration_s == pytest.approx(50.0, rel=0.01)
    assert result.stats["op"].latency.max_s < 0.002  # never late, so nothing but service time


def test_open_loop_latency_includes_the_time_a_stall_delayed_sending() -> None:
    open_loop = run(StallsOnce, users=1, rate=100.0, run_time_s=3.0).stats["op"]
    closed_loop = run(StallsOnce, users=1, run_time_s=3.0).stats["op"]

    # Open loop: ~100 requests were due during the 1 s stall; each is timed from its due time.
    assert open_loop.requests == 300
    p50, p75, p99 = open_loop.latency.percentiles((50, 75, 99))
    assert p50 < 0.005
    assert p75 > 0.2
    assert p99 > 0.9
    # Closed loop hides it: the stall costs one slow sample and ~90 requests that were never sent.
    assert closed_loop.requests < 200
    assert closed_loop.latency.percentile(99) < 0.005
    assert closed_loop.latency.max_s == pytest.approx(1.0, rel=0.01)


def test_failures_outside_measure_on_start_and_stop_user() -> None:
    stopped: list[int] = []

    class Broken(User):
        async def on_start(self) -> None:
            if self.user_id == 0:
                raise RuntimeError("cannot connect")

        async def on_stop(self) -> None:
            stopped.append(self.user_id)

        @task
        async def op(self) -> None:
            if self.user_id == 1:
                raise StopUser
            await self.clock.sleep(0.5)
            raise KeyError("missing")  # outside any measure(): recorded under the task name

    result = run(Broken, users=3, run_time_s=2.0)
    assert result.stats["Broken.on_start"].errors == {"RuntimeError": 1}
    assert result.stats["op"].errors == {"KeyError": 4}  # user 2 only: every 0.5 s for 2 s
    assert sorted(stopped) == [0, 1, 2]


def test_a_stuck_request_is_cancelled_and_the_run_stays_bounded() -> None:
    stopped: list[float] = []

    class Stuck(User):
        async def on_stop(self) -> None:
            stopped.append(self.clock.now())

        @task
        async def op(self) -> None:
            async with self.measure("op"):
                await self.clock.sleep(10_000)

    result = run(Stuck, users=2, run_time_s=2.0, stop_timeout_s=0.5)
    assert result.duration_s <= 2.0 + 2 * 0.5
    assert "op" not in result.stats  # cancelled requests are interruptions, not results
    assert stopped == pytest.approx([2.5, 2.5])


def test_progress_sink_sees_updates_and_the_final_summary() -> None:
    class Sink:
        def __init__(self) -> None:
            self.updates: list[LiveView] = []
            self.final: LiveView | None = None

        def update(self, view: LiveView) -> None:
            self.updates.append(view)

        def finish(self, view: LiveView) -> None:
            self.final = view

    sink = Sink()
    run(Steady, progress=sink, users=2, run_time_s=5.0)
    assert sink.final is not None and sink.final.requests == 80
    assert sink.final.recent_requests_per_s == pytest.approx(16.0)
    later = [v for v in sink.updates if v.elapsed_s >= 4.0]
    assert later and later[-1].recent_requests_per_s == pytest.approx(16.0)


def test_plans_split_users_quota_and_schedule_over_workers() -> None:
    plans = plan_engines(RunConfig(users=5, workers=2, requests=11, rate=100.0, spawn_rate=5.0))
    assert [p.user_ids for p in plans] == [(0, 2, 4), (1, 3)]
    assert [p.requests for p in plans] == [6, 5]
    slots = sorted(p.slot_offset(k) for p in plans for k in range(3))
    assert slots == pytest.approx([k / 100 for k in range(6)])
    assert plans[1].spawn_offset(3) == pytest.approx(0.6)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"users": 0}, "users"),
        ({"users": 2, "workers": 3}, "workers"),
        ({"run_time_s": 0}, "run_time_s"),
        ({"rate": -1.0}, "rate"),
        ({"requests": 0}, "requests"),
        ({"spawn_rate": 0.0}, "spawn_rate"),
    ],
)
def test_run_config_validates_eagerly(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        RunConfig(**kwargs)
