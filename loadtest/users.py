"""Users: classes with weighted async tasks, Locust-style, generic over what they call; `GrpcUser`
adds its own grpc.aio channel to the target.

    class Reader(GrpcUser):
        wait_time = between(0.01, 0.05)

        async def on_start(self) -> None:
            await super().on_start()                       # opens and connects self.channel
            self.stub = catalog_pb2_grpc.CatalogStub(self.channel)

        @task(3)
        async def get_partitions(self) -> None:
            async with self.measure("GetPartitionsByNames(100)") as m:
                reply = await self.stub.GetPartitionsByNames(request, timeout=5)
                m.items = len(reply.partitions)

Each user runs its tasks one at a time: pick a task by weight (with the user's own seeded `rng`),
run it, then wait `wait_time()` seconds (closed loop). In an open-loop run the schedule decides when
the next task starts and `wait_time` is ignored; the first request a task measures is then timed from
the task's *intended* start, so a server stall that delays sending shows up in the latency
(coordinated omission) instead of silently lowering the request rate.

A request that raises is recorded as a failure (its kind is the exception class, plus the `code()`
name when the exception has one, as gRPC errors do) and the exception propagates: the rest of the task
is skipped and the engine moves on to the next task without recording it twice. Cancellation is never
recorded. Raise `StopUser` to end a user. One channel per `GrpcUser` models independent clients (each
with its own HTTP/2 connection); users sharing a connection would measure stream multiplexing instead.
"""

from __future__ import annotations

import asyncio
import inspect
import random
from dataclasses import dataclass, field
from types import MappingProxyType, TracebackType
from typing import Any, Awaitable, Callable, ClassVar, Mapping, TypeVar

import grpc

from loadtest.clock import Clock
from loadtest.errors import ConfigError
from loadtest.stats import Recorder

T = TypeVar("T")
TaskFn = Callable[["User"], Awaitable[None]]
WaitTime = Callable[["User"], float]

_WEIGHT_ATTR = "__loadtest_weight__"


# -- declaring tasks ---------------------------------------------------------------------------------


def task(weight: int | Callable[..., Any] = 1) -> Any:
    """Mark an async method as a task; usable bare (`@task`, weight 1) or with a weight (`@task(3)`)."""

    def mark(fn: Callable[..., Any], w: int) -> Callable[..., Any]:
        if not inspect.iscoroutinefunction(fn):
            raise ConfigError(f"@task {fn.__qualname__} must be an 'async def' method")
        if isinstance(w, bool) or not isinstance(w, int) or w < 1:
            raise ConfigError(f"@task weight of {fn.__qualname__} must be an int >= 1, got {w!r}")
        setattr(fn, _WEIGHT_ATTR, w)
        return fn

    if callable(weight):
        return mark(weight, 1)
    return lambda fn: mark(fn, weight)


# -- wait times (assigned as `wait_time = ...` class attributes, so they are called bound) -------------


def constant(seconds: float) -> WaitTime:
    """Wait the same time after every task."""
    if seconds < 0:
        raise ConfigError(f"constant wait must be >= 0, got {seconds}")

    def wait_time(user: User) -> float:
        return seconds

    return wait_time


def between(low: float, high: float) -> WaitTime:
    """Wait a uniformly random time in [low, high] (drawn from the user's seeded rng)."""
    if not 0 <= low <= high:
        raise ConfigError(f"between() needs 0 <= low <= high, got {low}, {high}")

    def wait_time(user: User) -> float:
        return user.rng.uniform(low, high)

    return wait_time


def constant_throughput(tasks_per_s: float) -> WaitTime:
    """Wait so that one user starts at most `tasks_per_s` tasks per second (a task slower than the
    period is followed by no wait; the lost time is not made up: that is what open-loop `rate` is for)."""
    if not tasks_per_s > 0:
        raise ConfigError(f"constant_throughput needs a positive rate, got {tasks_per_s}")
    period = 1.0 / tasks_per_s

    def wait_time(user: User) -> float:
        return max(0.0, period - (user.clock.now() - user.task_started_at))

    return wait_time


# -- the user ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class UserContext:
    """What the engine gives each user: where to connect, its settings, its identity and its tools."""

    user_id: int
    host: str
    clock: Clock
    recorder: Recorder
    rng: random.Random
    options: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


def error_kind(exc: BaseException) -> str:
    """A short failure label: the exception class, with the status name when it has `code()`
    (gRPC errors: "AioRpcError(UNAVAILABLE)")."""
    kind = type(exc).__name__
    code = getattr(exc, "code", None)
    if callable(code):
        try:
            value = code()
        except Exception:  # a broken code() must not turn one failure into a crash
            return kind
        name = getattr(value, "name", None)
        if isinstance(name, str):
            return f"{kind}({name})"
    return kind


class Measurement:
    """One request being timed; returned by `User.measure`. Set `items` on success, or call `fail()`."""

    __slots__ = ("_user", "_name", "_start", "_failure", "items")

    def __init__(self, user: User, name: str) -> None:
        self._user = user
        self._name = name
        self._start = 0.0
        self._failure: str | None = None
        self.items = 0

    def fail(self, error: str) -> None:
        """Record this request as failed with kind `error` even though nothing was raised
        (e.g. the reply was wrong). Its items are not counted."""
        self._failure = error

    async def __aenter__(self) -> Measurement:
        self._start = self._user._measure_start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool:
        user = self._user
        latency = user.clock.now() - self._start
        if exc is None:
            user._context.recorder.record(self._name, latency, error=self._failure, items=self.items)
        elif isinstance(exc, Exception):
            user._context.recorder.record(self._name, latency, error=error_kind(exc))
            user._recorded_failure = exc
        # BaseExceptions (cancellation at shutdown, KeyboardInterrupt) are interruptions, not results.
        return False


class User:
    """Base class of simulated clients. Subclass it, declare `@task` methods, set `wait_time`.

    Construction is cheap and synchronous; do setup that awaits in `on_start`. Class attributes are
    shared by all users in a process; per-user state belongs on `self` in `on_start`.
    """

    wait_time: ClassVar[WaitTime] = constant(0.0)
    _task_table: ClassVar[tuple[tuple[TaskFn, ...], tuple[int, ...]]] = ((), ())

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Walk the MRO so a subclass inherits tasks, and redefining a task without @task removes it.
        found: dict[str, TaskFn] = {}
        for klass in reversed(cls.__mro__):
            for name, value in vars(klass).items():
                if hasattr(value, _WEIGHT_ATTR):
                    found[name] = value
                elif name in found:
                    del found[name]
        funcs = tuple(found.values())
        cumulative: list[int] = []
        total = 0
        for fn in funcs:
            total += getattr(fn, _WEIGHT_ATTR)
            cumulative.append(total)
        cls._task_table = (funcs, tuple(cumulative))

    def __init__(self, context: UserContext) -> None:
        validate_user_class(type(self))
        self._context = context
        self._intended_start: float | None = None
        self._task_started_at = context.clock.now()
        self._recorded_failure: BaseException | None = None

    # -- identity and tools ----------------------------------------------------------------------

    @property
    def host(self) -> str:
        """The target's address, e.g. "127.0.0.1:50051"."""
        return self._context.host

    @property
    def options(self) -> Mapping[str, Any]:
        """Target-specific settings passed with the run (table names, batch sizes, payloads)."""
        return self._context.options

    @property
    def user_id(self) -> int:
        """0-based, unique within a run across all worker processes."""
        return self._context.user_id

    @property
    def rng(self) -> random.Random:
        """This user's random generator, seeded from the run seed and `user_id` (reproducible)."""
        return self._context.rng

    @property
    def clock(self) -> Clock:
        return self._context.clock

    @property
    def task_started_at(self) -> float:
        """Clock time at which the current (or last) task started."""
        return self._task_started_at

    # -- hooks -----------------------------------------------------------------------------------

    async def on_start(self) -> None:
        """Called once before the first task. An exception here is recorded as a failure named
        "<Class>.on_start" and ends the user; `on_stop` is still called."""

    async def on_stop(self) -> None:
        """Called once when the user ends (run over, `StopUser`, or a failed `on_start`); bounded by
        the run's stop timeout. Must cope with a partially completed `on_start`."""

    # -- reporting requests ----------------------------------------------------------------------

    def measure(self, name: str) -> Measurement:
        """Time one request: `async with self.measure("Name") as m: ...; m.items = n`."""
        return Measurement(self, name)

    async def call(
        self, name: str, factory: Callable[[], Awaitable[T]], *, items: Callable[[T], int] | None = None
    ) -> T:
        """Await `factory()` as one measured request named `name` and return its result.
        `items(result)` gives the items count (e.g. `lambda r: len(r.partitions)`)."""
        async with self.measure(name) as m:
            result = await factory()
            if items is not None:
                m.items = items(result)
        return result

    # -- used by the engine ----------------------------------------------------------------------

    def pick_task(self) -> TaskFn:
        """A task chosen by weight with this user's rng."""
        funcs, cumulative = self._task_table
        return self._context.rng.choices(funcs, cum_weights=cumulative)[0]

    def _begin_task(self, started_at: float, intended_start: float | None) -> None:
        self._task_started_at = started_at
        self._intended_start = intended_start
        self._recorded_failure = None

    def _measure_start(self) -> float:
        # Only the first request of an open-loop task is timed from the intended start: later ones in
        # the same task were not delayed by the schedule.
        now = self._context.clock.now()
        intended = self._intended_start
        if intended is None:
            return now
        self._intended_start = None
        return intended if intended < now else now

    def _was_recorded(self, exc: BaseException) -> bool:
        return exc is self._recorded_failure


def validate_user_class(user_class: type) -> None:
    """Raise ConfigError unless `user_class` is a `User` subclass with at least one task."""
    if not (isinstance(user_class, type) and issubclass(user_class, User)):
        raise ConfigError(f"{user_class!r} is not a subclass of loadtest.User")
    if not user_class._task_table[0]:
        raise ConfigError(f"{user_class.__qualname__} declares no @task methods")
    wait = user_class.__dict__.get("wait_time", None)
    if wait is not None and not callable(wait):
        raise ConfigError(
            f"{user_class.__qualname__}.wait_time must be constant()/between()/constant_throughput(), got {wait!r}"
        )


class GrpcUser(User):
    """Opens `self.channel` (insecure, to `self.host`) in `on_start` and waits until it is connected,
    so connection setup is not timed as a request; closes it in `on_stop`."""

    connect_timeout_s: ClassVar[float] = 10.0
    call_timeout_s: ClassVar[float] = 10.0

    channel: grpc.aio.Channel | None = None

    async def on_start(self) -> None:
        self.channel = grpc.aio.insecure_channel(self.host)
        await asyncio.wait_for(self.channel.channel_ready(), timeout=self.connect_timeout_s)

    async def on_stop(self) -> None:
        channel, self.channel = self.channel, None
        if channel is not None:
            await channel.close(grace=None)
