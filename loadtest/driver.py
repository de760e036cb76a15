"""Runs several targets one after another in one session and returns their results for report.py.

A `Target` says how to bring a system up (`start`: a factory of an async context manager that
yields the address to load, and tears the system down on exit), which `User` class drives it, and
how hard (`RunConfig`). Targets run strictly in sequence, each started just before its run and
stopped right after, so they never compete for the machine.
"""

from __future__ import annotations

import asyncio
import logging
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from loadtest.config import RunConfig
from loadtest.errors import ConfigError, RunnerError
from loadtest.results import RunResult
from loadtest.runner import ProgressSink, run_load
from loadtest.users import User, validate_user_class

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
    targets: Sequence[Target],
    *,
    progress: bool | ProgressSink = True,
    keep_going: bool = False,
    pause_s: float = 0.0,
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
                    target.user_class,
                    address,
                    target.config,
                    target=target.name,
                    options=target.options,
                    progress=progress,
                )
        except Exception as exc:
            if not keep_going:
                raise RunnerError(f"target {target.name!r} failed: {exc}") from exc
            _log.exception("target %r failed; continuing with the next one", target.name)
            result = RunResult(
                target=target.name,
                duration_s=0.0,
                stats={},
                config=target.config,
                worker_errors=(f"target failed: {exc!r}",),
            )
        results.append(result)
    return results
