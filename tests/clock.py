"""A fake clock for the code that takes a `hive.clock.Clock` or `ThreadClock`: time moves only when
the test says so (or, with `autojump`, straight to each sleeper's deadline), so nothing really waits.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import threading
import time
from typing import Callable


class FakeClock:
    """Virtual seconds, starting at 0.

    Async sleepers wait until `advance()` moves time to their deadline (`advance(0)` lets started
tasks reach their first sleep and wakes the ones due now); with `autojump=True` a sleep
    jumps time to its own deadline at once (one sleeper at a time: a retry loop). Threads in `wait()`
    block until `advance()` passes their deadline or their stop event is set. `sleeps` records every
    requested duration, in order."""

    def __init__(self, *, autojump: bool = False) -> None:
        self.now = 0.0
        self.autojump = autojump
        self.sleeps: list[float] = []
        self._order = itertools.count()
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._cond = threading.Condition()
        self.waiting_threads = 0

    def monotonic(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        deadline = self.now + max(seconds, 0.0)
        if self.autojump:
            self.now = max(self.now, deadline)
            await asyncio.sleep(0)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (deadline, next(self._order), future))
        await future

    async def advance(self, seconds: float) -> None:
        """Move time forward by `seconds`, waking the async sleepers in deadline order; each woken one
        runs until it sleeps again (or finishes) before time moves on."""
        target = self.now + seconds
        await _settle()  # tasks that were just started reach their first sleep
        while self._sleepers and self._sleepers[0][0] <= target:
            deadline, _, future = heapq.heappop(self._sleepers)
            self.now = max(self.now, deadline)
            if not future.done():
                future.set_result(None)
            await _settle()
        self.now = max(self.now, target)
        with self._cond:
            self._cond.notify_all()

    # ThreadClock

    def wait(self, stop: threading.Event, seconds: float) -> bool:
        with self._cond:
            self.sleeps.append(seconds)
            deadline = self.now + seconds
            self.waiting_threads += 1
            self._cond.notify_all()
            try:
                while not stop.is_set() and self.now < deadline:
                    self._cond.wait(0.01)  # a set() of `stop` does not notify the condition: look again soon
            finally:
                self.waiting_threads -= 1
                self._cond.notify_all()
            return stop.is_set()

    def advance_threads(self, seconds: float) -> None:
        """Move time forward for threads blocked in `wait()` (no event loop needed)."""
        with self._cond:
            self.now += seconds
            self._cond.notify_all()


async def _settle(rounds: int = 20) -> None:
    """Let every ready task run a few steps (the fakes' rounds finish in a step or two)."""
    for _ in range(rounds):
        await asyncio.sleep(0)


def eventually(condition: Callable[[], bool], timeout_s: float = 10.0) -> None:
    """Wait (really, briefly) until another thread made `condition` true: the hand-over from a thread
    woken by the fake clock."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.002)
