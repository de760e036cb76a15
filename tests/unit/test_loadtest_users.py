"""User classes: task declaration, weighted choice, wait times, and how requests are recorded."""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from typing import Any

import pytest

import loadtest
from loadtest.clock import ManualClock
from loadtest.errors import ConfigError
from loadtest.stats import StatsCollector
from loadtest.users import User, UserContext, between, constant, constant_throughput, error_kind, task


class Mixed(User):
    @task(1)
    async def rare(self) -> None: ...

    @task(3)
    async def common(self) -> None: ...

    @task(6)
    async def frequent(self) -> None: ...


def make_user(cls: type[User] = Mixed, *, seed: int = 0, clock: Any = None, options: Any = None) -> User:
    return cls(
        UserContext(
            user_id=0,
            host="127.0.0.1:1",
            clock=clock or ManualClock(),
            recorder=StatsCollector(),
            rng=random.Random(seed),
            options=options or {},
        )
    )


def collector_of(user: User) -> StatsCollector:
    recorder = user._context.recorder
    assert isinstance(recorder, StatsCollector)
    return recorder


def test_weighted_task_choice_follows_the_weights() -> None:
    user = make_user(seed=42)
    picks = Counter(user.pick_task().__name__ for _ in range(30000))
    assert picks["rare"] / 30000 == pytest.approx(0.1, abs=0.01)
    assert picks["common"] / 30000 == pytest.approx(0.3, abs=0.015)
    assert picks["frequent"] / 30000 == pytest.approx(0.6, abs=0.015)


def test_task_choice_is_reproducible_per_seed() -> None:
    def sequence(seed: int) -> list[str]:
        user = make_user(seed=seed)
        return [user.pick_task().__name__ for _ in range(50)]

    assert sequence(1) == sequence(1)
    assert sequence(1) != sequence(2)


def test_tasks_are_inherited_and_a_plain_override_removes_one() -> None:
    class Child(Mixed):
        async def rare(self) -> None:  # no @task: no longer a task
            ...

        @task
        async def extra(self) -> None: ...

    funcs, cumulative = Child._task_table
    assert sorted(f.__name__ for f in funcs) == ["common", "extra", "frequent"]
    assert cumulative[-1] == 3 + 6 + 1


def test_bad_task_declarations_fail_loudly() -> None:
    with pytest.raises(ConfigError, match="async def"):

        class Sync(User):
            @task
            def not_async(self) -> None: ...

    with pytest.raises(ConfigError, match="weight"):

        class Zero(User):
            @task(0)
            async def t(self) -> None: ...

    class NoTasks(User):
        pass

    with pytest.raises(ConfigError, match="no @task"):
        make_user(NoTasks)


def test_wait_time_helpers() -> None:
    clock = ManualClock()

    class Waiter(Mixed):
        wait_time = between(0.5, 1.5)

    class Paced(Mixed):
        wait_time = constant_throughput(4)  # one task per 0.25 s

    class Fixed(Mixed):
        wait_time = constant(0.2)

    waiter = make_user(Waiter, seed=3)
    waits = [waiter.wait_time() for _ in range(1000)]
    assert 0.5 <= min(waits) and max(waits) <= 1.5 and sum(waits) / 1000 == pytest.approx(1.0, abs=0.05)
    assert make_user(Fixed).wait_time() == 0.2

    paced = make_user(Paced, clock=clock)
    paced._begin_task(clock.now(), None)
    clock.advance(0.1)  # the task took 0.1 s
    assert paced.wait_time() == pytest.approx(0.15)
    clock.advance(0.5)  # a task slower than the period: no wait
    assert paced.wait_time() == 0.0
    with pytest.raises(ConfigError):
        between(2, 1)


async def test_measure_records_latency_items_and_failures_from_the_injected_clock() -> None:
    clock = ManualClock(100.0)
    user = make_user(clock=clock)
    async with user.measure("GetPartitionsByNames(100)") as m:
        clock.advance(0.025)
        m.items = 100
    with pytest.raises(KeyError):
        async with user.measure("GetPartitionsByNames(100)"):
            clock.advance(0.5)
            raise KeyError("boom")
    async with user.measure("Validate") as m:
        m.items = 7
        m.fail("WrongReply")
    stats = collector_of(user).take()
    gp = stats["GetPartitionsByNames(100)"]
    assert (gp.requests, gp.failures, gp.items) == (2, 1, 100)
    assert gp.errors == {"KeyError": 1}
    assert gp.latency.min_s == pytest.approx(0.025) and gp.latency.max_s == pytest.approx(0.5)
    assert stats["Validate"].errors == {"WrongReply": 1} and stats["Validate"].items == 0


async def test_cancellation_is_not_a_failure() -> None:
    user = make_user()
    with pytest.raises(asyncio.CancelledError):
        async with user.measure("Slow"):
            raise asyncio.CancelledError
    assert collector_of(user).take() == {}


async def test_call_returns_the_result_and_counts_items() -> None:
    user = make_user()

    async def fetch() -> list[int]:
        return [1, 2, 3]

    assert await user.call("Fetch", fetch, items=len) == [1, 2, 3]
    assert collector_of(user).take()["Fetch"].items == 3


async def test_open_loop_times_the_first_request_from_the_intended_start() -> None:
    clock = ManualClock(10.0)
    user = make_user(clock=clock)
    user._begin_task(started_at=10.0, intended_start=9.0)  # the task started 1 s late
    async with user.measure("First"):
        clock.advance(0.01)
    async with user.measure("Second"):
        clock.advance(0.01)
    stats = collector_of(user).take()
    assert stats["First"].latency.max_s == pytest.approx(1.01)
    assert stats["Second"].latency.max_s == pytest.approx(0.01)


def test_error_kind_includes_a_grpc_style_status_code() -> None:
    class Code:
        name = "UNAVAILABLE"

    class FakeRpcError(Exception):
        def code(self) -> Code:
            return Code()

    assert error_kind(FakeRpcError()) == "FakeRpcError(UNAVAILABLE)"
    assert error_kind(TimeoutError()) == "TimeoutError"


def test_public_facade_exports_exist() -> None:
    for name in loadtest.__all__:
        assert hasattr(loadtest, name), name
