"""Runs load: `run_load` drives one address with N users of a `User` class, in worker processes or
inline; `run_targets` runs several `Target`s one after another and returns their results.

With `workers >= 1` run_load starts that many processes (spawn context, each with its own event loop,
uvloop when available), waits until all have imported and report ready, hands them one start instant,
merges the per-window stats they stream back and prints a live progress line. With `workers == 0` the
users run on the caller's loop (same code path for stats).

Worker protocol on the shared queue (worker -> parent), every message a tuple whose first item is its
kind: (READY, worker), (STATS, snapshot_dict), (DONE, outcome_dict) as the last message, or (FAILED,
worker, traceback). The parent writes the common start instant (a CLOCK_MONOTONIC reading, valid in
every process of the host) into a shared double, then sets `go`; setting `stop` ends the engine early.
Workers ignore SIGINT: a Ctrl-C reaches the whole process group, and the parent, which owns the run,
decides how to stop it.

Every wait is bounded. A run ends by itself at `run_time_s` (or at its request quota); the parent gives
workers `2 * stop_timeout_s` plus a few seconds of slack beyond that, then sets the stop event, then
terminates and finally kills what is left. The parent's loop keeps running throughout, so a target
served from the same loop (the echo server in tests) keeps answering. A `Target` says how to bring a
system up (`start`: a factory of an async context manager yielding the address once it is ready, and
tearing it down on exit); targets run strictly in sequence, each started just before its run and
stopped right after, so they never compete for the machine.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import pickle
import queue as queue_module
import signal
import time
import traceback
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Mapping, Protocol, Sequence

from loadtest.clock import Clock, SystemClock, loop_factory
from loadtest.engine import Engine, EngineOutcome, EnginePlan, RunConfig, plan_engines
from loadtest.errors import ConfigError, RunnerError
from loadtest.stats import IntervalSnapshot, LiveView, NullProgress, ProgressLine, RunAggregator, RunResult
from loadtest.users import User, validate_user_class

READY = "ready"
STATS = "stats"
DONE = "done"
FAILED = "failed"

_STOP_POLL_S = 0.1


@dataclass(frozen=True)
class WorkerSpec:
    """Everything a worker needs; pickled to the child, so `user_class` must be importable by name
    (defined at module level) and `options` must hold picklable values."""

    user_class: type[User]
    host: str
    options: Mapping[str, Any]
    plan: EnginePlan
    use_uvloop: bool
    startup_timeout_s: float


def worker_main(spec: WorkerSpec, queue: Any, go: Any, start_at: Any, stop: Any) -> None:
    """Process entry point (spawn context). Never raises: a crash is reported as FAILED."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    worker = spec.plan.worker
    try:
        queue.put((READY, worker))
        if not go.wait(spec.startup_timeout_s) or stop.is_set():
            return
        outcome = _run_engine(spec, queue, float(start_at.value), stop)
        queue.put((DONE, outcome))
    except BaseException:
        queue.put((FAILED, worker, traceback.format_exc()))
    finally:
        # Flush everything we put before the process exits, so the parent sees DONE/FAILED.
        queue.close()
        queue.join_thread()


def _run_engine(spec: WorkerSpec, queue: Any, start_at: float, stop: Any) -> EngineOutcome:
    with asyncio.Runner(loop_factory=loop_factory(spec.use_uvloop)) as runner:
        return runner.run(_serve(spec, queue, start_at, stop))


async def _serve(spec: WorkerSpec, queue: Any, start_at: float, stop: Any) -> EngineOutcome:
    engine = Engine(
        spec.user_class, host=spec.host, plan=spec.plan, clock=SystemClock(),
        sink=lambda snapshot: queue.put((STATS, snapshot.to_dict())), options=spec.options,
    )
    watcher = asyncio.create_task(_watch_stop(stop, engine))
    try:
        return await engine.run(start_at)
    finally:
        watcher.cancel()


async def _watch_stop(stop: Any, engine: Engine) -> None:
    # A multiprocessing Event cannot be awaited; polling it is cheap and bounds the reaction time.
    while not stop.is_set():
        await asyncio.sleep(_STOP_POLL_S)
    engine.request_stop()


_log = logging.getLogger(__name__)

_POLL_S = 0.05
_START_DELAY_S = 0.05  # lets every worker see `go` before the start instant passes
_SHUTDOWN_SLACK_S = 5.0
_TERMINATE_WAIT_S = 1.0


class ProgressSink(Protocol):
    def update(self, view: LiveView) -> None: ...

    def finish(self, view: LiveView) -> None: ...


async def run_load(
    user_class: type[User], host: str, config: RunConfig, *, target: str = "run",
    options: Mapping[str, Any] | None = None, progress: bool | ProgressSink = True, clock: Clock | None = None,
) -> RunResult:
    """Drive `host` with `config.users` users of `user_class`; return the merged result.

    `options` reach every user as `self.options`. `progress=True` writes a progress line to stderr.
    `clock` is for in-process runs on virtual time (`workers=0`); worker processes always use the
    system monotonic clock. A crashed or stuck worker does not raise: the result carries
    `worker_errors` (and whatever the other workers measured). Raises RunnerError when workers cannot
    start, ConfigError for a bad user class or unpicklable options.
    """
    validate_user_class(user_class)
    sink: ProgressSink
    if progress is True:
        sink = ProgressLine(target)
    elif progress is False:
        sink = NullProgress()
    else:
        sink = progress
    frozen_options: Mapping[str, Any] = dict(options or {})
    if config.workers == 0:
        return await _run_in_process(user_class, host, config, target, frozen_options, sink, clock or SystemClock())
    if clock is not None and not isinstance(clock, SystemClock):
        raise ConfigError("a custom clock only works with workers=0; worker processes use the system clock")
    return await _run_in_workers(user_class, host, config, target, frozen_options, sink)


async def _run_in_process(
    user_class: type[User], host: str, config: RunConfig, target: str, options: Mapping[str, Any],
    progress: ProgressSink, clock: Clock,
) -> RunResult:
    aggregator = RunAggregator(config.stats_interval_s)
    engine = Engine(
        user_class, host=host, plan=plan_engines(config)[0], clock=clock, sink=aggregator.add,
        options=MappingProxyType(dict(options)),
    )
    start_at = clock.now()
    wall_start = time.time()
    run = asyncio.create_task(engine.run(start_at), name=f"loadtest-{target}")
    try:
        while not run.done():
            progress.update(aggregator.live(clock.now() - start_at))
            await asyncio.wait({run}, timeout=_POLL_S)
        outcome = run.result()
    finally:
        if not run.done():
            engine.request_stop()
            await asyncio.wait({run}, timeout=2 * config.stop_timeout_s)
            if not run.done():
                run.cancel()
    progress.finish(aggregator.overall(outcome.duration_s))
    return aggregator.result(
        target, outcome.duration_s, config=config, users_started=outcome.users_started,
        tasks_started=outcome.tasks_started, started_at=wall_start,
    )


async def _run_in_workers(
    user_class: type[User], host: str, config: RunConfig, target: str, options: Mapping[str, Any],
    progress: ProgressSink,
) -> RunResult:
    specs = [
        WorkerSpec(
            user_class=user_class, host=host, options=options, plan=plan, use_uvloop=config.use_uvloop,
            startup_timeout_s=config.startup_timeout_s,
        )
        for plan in plan_engines(config)
    ]
    try:
        pickle.dumps(specs[0])
    except Exception as exc:
        raise ConfigError(
            f"cannot send {user_class.__qualname__} and its options to worker processes ({exc}); "
            "define the user class at module level and pass only picklable options"
        ) from exc

    clock = SystemClock()
    aggregator = RunAggregator(config.stats_interval_s)
    pool = _WorkerPool(specs)
    outcomes: dict[int, EngineOutcome] = {}
    errors: dict[int, str] = {}

    def handle(message: tuple[Any, ...]) -> None:
        kind = message[0]
        if kind == STATS:
            aggregator.add(IntervalSnapshot.from_dict(message[1]))
        elif kind == DONE:
            outcomes[message[1].worker] = message[1]
        elif kind == FAILED:
            worker, text = message[1], message[2]
            _log.error("load-test worker %d crashed:\n%s", worker, text)
            errors[worker] = f"worker {worker} crashed: {text.strip().splitlines()[-1]}"

    pool.start()
    start_at = clock.now()
    wall_start = time.time()
    try:
        await pool.wait_ready(config.startup_timeout_s)
        start_at = clock.now() + _START_DELAY_S
        wall_start = time.time() + _START_DELAY_S
        pool.go(start_at)
        hard_deadline = start_at + config.run_time_s + 2 * config.stop_timeout_s + _SHUTDOWN_SLACK_S
        while len(outcomes) + len(errors) < len(specs):
            for message in pool.drain():
                handle(message)
            for worker, code in pool.exited():
                if worker not in outcomes and worker not in errors:
                    for message in pool.drain():  # its last messages may have arrived just now
                        handle(message)
                    if worker not in outcomes and worker not in errors:
                        errors[worker] = f"worker {worker} exited with code {code} without reporting"
            now = clock.now()
            if now > hard_deadline:
                for worker in range(len(specs)):
                    if worker not in outcomes and worker not in errors:
                        errors[worker] = (
                            f"worker {worker} did not finish within {hard_deadline - start_at:.1f}s; stopped"
                        )
                pool.request_stop()
                break
            progress.update(aggregator.live(now - start_at))
            await asyncio.sleep(_POLL_S)
        for message in await pool.shutdown(2 * config.stop_timeout_s):
            handle(message)
    finally:
        pool.force_stop()

    duration = max((o.duration_s for o in outcomes.values()), default=max(0.0, clock.now() - start_at))
    progress.finish(aggregator.overall(duration))
    return aggregator.result(
        target, duration, config=config, worker_errors=tuple(errors[w] for w in sorted(errors)),
        users_started=sum(o.users_started for o in outcomes.values()),
        tasks_started=sum(o.tasks_started for o in outcomes.values()), started_at=wall_start,
    )


class _WorkerPool:
    """The worker processes of one run: start, ready handshake, go, message drain, bounded shutdown."""

    def __init__(self, specs: list[WorkerSpec]) -> None:
        ctx = multiprocessing.get_context("spawn")
        self._queue = ctx.Queue()
        self._go = ctx.Event()
        self._stop = ctx.Event()
        self._start_at = ctx.Value("d", 0.0, lock=False)
        self._procs = [
            ctx.Process(
                target=worker_main, args=(spec, self._queue, self._go, self._start_at, self._stop),
                name=f"loadtest-worker-{spec.plan.worker}", daemon=True,  # never outlive the parent
            )
            for spec in specs
        ]
        self._closed = False

    def start(self) -> None:
        for proc in self._procs:
            proc.start()

    def drain(self) -> list[tuple[Any, ...]]:
        """Every message available now, without blocking."""
        messages = []
        while True:
            try:
                messages.append(self._queue.get_nowait())
            except queue_module.Empty:
                return messages
            except (EOFError, OSError):  # the queue broke because a worker was killed mid-write
                return messages

    def exited(self) -> list[tuple[int, int]]:
        """(worker, exit code) of every process that has ended."""
        return [(i, p.exitcode) for i, p in enumerate(self._procs) if p.exitcode is not None]

    async def wait_ready(self, timeout_s: float) -> None:
        """Return once every worker sent READY; RunnerError if one dies or the timeout passes."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        ready: set[int] = set()
        while len(ready) < len(self._procs):
            for message in self.drain():
                if message[0] == READY:
                    ready.add(message[1])
                elif message[0] == FAILED:
                    raise RunnerError(f"worker {message[1]} failed while starting:\n{message[2]}")
            for worker, code in self.exited():
                if worker not in ready:
                    raise RunnerError(
                        f"worker {worker} exited with code {code} before it was ready (is the user class "
                        "importable at module level, and is the main script guarded by `if __name__ == '__main__'`?)"
                    )
            if loop.time() > deadline:
                raise RunnerError(f"{len(self._procs) - len(ready)} workers not ready within {timeout_s}s")
            await asyncio.sleep(_POLL_S / 2)

    def go(self, start_at: float) -> None:
        self._start_at.value = start_at
        self._go.set()

    def request_stop(self) -> None:
        self._stop.set()

    async def shutdown(self, timeout_s: float) -> list[tuple[Any, ...]]:
        """Wait up to `timeout_s` for every process to exit (draining the queue meanwhile, since a
        worker cannot exit before its queued data is read), then terminate and kill stragglers.
        Returns the messages drained."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        messages: list[tuple[Any, ...]] = []
        while any(p.is_alive() for p in self._procs) and loop.time() < deadline:
            messages.extend(self.drain())
            await asyncio.sleep(_POLL_S / 2)
        messages.extend(self.drain())
        self.force_stop()
        return messages

    def force_stop(self) -> None:
        """Idempotent, synchronous last resort: stop event, then terminate, then kill."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        self._go.set()  # a worker still waiting for `go` wakes, sees `stop` and exits
        alive = [p for p in self._procs if p.is_alive()]
        for proc in alive:
            proc.join(0.2)
        for proc in alive:
            if proc.is_alive():
                _log.warning("terminating stuck load-test worker %s", proc.name)
                proc.terminate()
        for proc in alive:
            proc.join(_TERMINATE_WAIT_S)
            if proc.is_alive():
                _log.warning("killing stuck load-test worker %s", proc.name)
                proc.kill()
                proc.join(_TERMINATE_WAIT_S)
        for proc in self._procs:
            if proc.exitcode is not None:
                proc.close()
        self._queue.close()
        self._queue.join_thread()


_log = logging.getLogger(__name__)

AddressFactory = Callable[[], AbstractAsyncContextManager[str]]


@dataclass(frozen=True)
class Target:
    """One system under test. `start()` must return a fresh async context manager each call; it
    yields "host:port" once the system is ready to serve (health SERVING, cache warm, ...)."""

    name: str
    start: AddressFactory
    user_class: type[User]
    config: RunConfig
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.name:
            raise ConfigError("a target needs a name")
        validate_user_class(self.user_class)


async def run_targets(
    targets: Sequence[Target], *, progress: bool | ProgressSink = True, keep_going: bool = False, pause_s: float = 0.0
) -> list[RunResult]:
    """Run `targets` in order and return one `RunResult` each, in the same order.

    When a target fails to start or its run raises, RunnerError names it (the cause kept), unless
    `keep_going`: then the failure is logged, that target's result has no stats and carries the
    error in `worker_errors`, and the next target runs. `pause_s` separates consecutive runs.
    """
    names = [t.name for t in targets]
    if len(set(names)) != len(names):
        raise ConfigError(f"target names must be unique, got {names}")
    results = []
    for i, target in enumerate(targets):
        if i and pause_s > 0:
            await asyncio.sleep(pause_s)
        try:
            async with target.start() as address:
                result = await run_load(
                    target.user_class, address, target.config, target=target.name, options=target.options,
                    progress=progress,
                )
        except Exception as exc:
            if not keep_going:
                raise RunnerError(f"target {target.name!r} failed: {exc}") from exc
            _log.exception("target %r failed; continuing with the next one", target.name)
            result = RunResult(
                target=target.name, duration_s=0.0, stats={}, config=target.config,
                worker_errors=(f"target failed: {exc!r}",),
            )
        results.append(result)
    return results
