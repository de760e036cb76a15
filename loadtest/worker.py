"""The worker process: runs one `Engine` on its own event loop and streams its stats to the parent.

Protocol on the shared queue (worker -> parent), every message a tuple whose first item is its kind:
  (READY, worker)            imports done, waiting for the go signal
  (STATS, snapshot_dict)     one closed stats window (`IntervalSnapshot.to_dict()`)
  (DONE, outcome_dict)       the engine finished (`EngineOutcome.to_dict()`); the last message
  (FAILED, worker, text)     the worker crashed; `text` is the traceback
The parent writes the common start instant (a CLOCK_MONOTONIC reading, valid in every process of the
host) into a shared double, then sets `go`. Setting `stop` asks the engine to end early.

Workers ignore SIGINT: a Ctrl-C reaches the whole process group, and the parent, which owns the run,
decides how to stop it (the `stop` event, then terminate/kill after a timeout).
"""

from __future__ import annotations

import asyncio
import signal
import traceback
from dataclasses import dataclass
from typing import Any, Mapping

from loadtest.clock import SystemClock
from loadtest.config import EnginePlan
from loadtest.engine import Engine, EngineOutcome
from loadtest.users import User

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
        queue.put((DONE, outcome.to_dict()))
    except BaseException:
        queue.put((FAILED, worker, traceback.format_exc()))
    finally:
        # Flush everything we put before the process exits, so the parent sees DONE/FAILED.
        queue.close()
        queue.join_thread()


def _run_engine(spec: WorkerSpec, queue: Any, start_at: float, stop: Any) -> EngineOutcome:
    loop_factory = None
    if spec.use_uvloop:
        try:
            import uvloop
        except ImportError:
            pass
        else:
            loop_factory = uvloop.new_event_loop
    with asyncio.Runner(loop_factory=loop_factory) as runner:
        return runner.run(_serve(spec, queue, start_at, stop))


async def _serve(spec: WorkerSpec, queue: Any, start_at: float, stop: Any) -> EngineOutcome:
    engine = Engine(
        spec.user_class,
        host=spec.host,
        plan=spec.plan,
        clock=SystemClock(),
        sink=lambda snapshot: queue.put((STATS, snapshot.to_dict())),
        options=spec.options,
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
