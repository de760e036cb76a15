"""Clocks: every component that reads time or sleeps takes a `Clock`, so tests run on virtual time.

Latency is read from `time.monotonic()` (`SystemClock`), not from `loop.time()`: uvloop's loop time
has millisecond granularity, too coarse for sub-millisecond RPCs. CLOCK_MONOTONIC is also shared by
every process on the host, which lets the parent hand its workers one common start instant.

`VirtualTimeLoop` is an asyncio event loop whose time jumps to the next timer instead of waiting;
with `LoopClock` on it, a ten-second run with stalls executes in milliseconds and deterministically.
"""

from __future__ import annotations

import asyncio
import selectors
import time
from typing import Any, Callable, Protocol


class Clock(Protocol):
    """A source of monotonic seconds and a way to sleep against the same time base."""

    def now(self) -> float:
        """Current time in seconds; only differences are meaningful."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Sleep for `seconds` (negative means zero, which still yields to the loop once)."""
        ...

    async def sleep_until(self, deadline: float) -> None:
        """Sleep until `now() >= deadline` (in the past: just yield once)."""
        ...


class SystemClock:
    """Real time: `time.monotonic()` and `asyncio.sleep`. Comparable across processes on one host."""

    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds if seconds > 0.0 else 0.0)

    async def sleep_until(self, deadline: float) -> None:
        await self.sleep(deadline - time.monotonic())


class LoopClock:
    """The running event loop's own time; on a `VirtualTimeLoop` this is virtual time."""

    def now(self) -> float:
        return asyncio.get_running_loop().time()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds if seconds > 0.0 else 0.0)

    async def sleep_until(self, deadline: float) -> None:
        # call_at with the absolute deadline, so virtual time lands on it exactly rather than on
        # now + (deadline - now), which can be a rounding error short.
        loop = asyncio.get_running_loop()
        if deadline <= loop.time():
            await asyncio.sleep(0)
            return
        done = loop.create_future()
        handle = loop.call_at(deadline, _resolve, done)
        try:
            await done
        finally:
            handle.cancel()


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class ManualClock:
    """A clock that moves only when told to; for synchronous arithmetic tests (it cannot sleep)."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError(f"a clock cannot go back (advance by {seconds})")
        self._now += seconds

    async def sleep(self, seconds: float) -> None:
        self.advance(max(0.0, seconds))
        await asyncio.sleep(0)

    async def sleep_until(self, deadline: float) -> None:
        await self.sleep(deadline - self._now)


class _JumpingSelector:
    """Wraps a real selector: a wait for `timeout` seconds advances virtual time instead of blocking."""

    # Waiting forever with no timer scheduled means nothing can ever happen again on a virtual loop
    # unless real I/O arrives (a thread calling call_soon_threadsafe); give that this long, then fail.
    _IDLE_REAL_WAIT_S = 10.0

    def __init__(self, selector: selectors.BaseSelector, loop: VirtualTimeLoop) -> None:
        self._selector = selector
        self._loop = loop

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if timeout is None:
            events = self._selector.select(self._IDLE_REAL_WAIT_S)
            if not events:
                raise RuntimeError("virtual-time loop deadlocked: no timer and no I/O pending")
            return events
        if timeout > 0:
            self._loop._jump(timeout)
        return self._selector.select(0)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._selector, name)


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """An event loop on virtual time starting at 0.0: sleeps and timeouts complete instantly.

    Only for code that does no real network I/O. Use with `asyncio.Runner(loop_factory=VirtualTimeLoop)`.
    """

    def __init__(self) -> None:
        self._virtual_now = 0.0
        super().__init__(_JumpingSelector(selectors.DefaultSelector(), self))  # type: ignore[arg-type]

    def time(self) -> float:
        return self._virtual_now

    def advance(self, seconds: float) -> None:
        """Move virtual time forward (timers due by then run on the next loop iteration)."""
        self._virtual_now += seconds

    def _jump(self, timeout: float) -> None:
        # The loop computed `timeout` as (next timer's due time - now); land on that due time exactly,
        # since now + (when - now) can fall a rounding error short of `when`, and code comparing the
        # clock with a deadline would then see 4.999999999 instead of 5.0.
        target = self._virtual_now + timeout
        scheduled = getattr(self, "_scheduled", None)
        if scheduled:
            when = scheduled[0].when()
            if abs(when - target) <= 1e-9 * max(1.0, abs(when)):
                target = when
        self._virtual_now = max(self._virtual_now, target)


def loop_factory(use_uvloop: bool) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's event loop factory when asked for and installed, else None (asyncio's default loop)."""
    if use_uvloop:
        try:
            import uvloop
        except ImportError:
            return None
        return uvloop.new_event_loop
    return None
