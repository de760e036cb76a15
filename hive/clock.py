"""Time, injected: whatever sleeps or reads a monotonic clock takes a `Clock` (async code) or a
`ThreadClock` (a thread's wait loop), with the real one as default, so tests drive it on fake time
(tests/clock.py) and never really wait.

Pure: no I/O, no imports beyond the standard library (the PySpark client ships this package).
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Protocol


class Clock(Protocol):
    """Monotonic seconds and a sleep against the same time base."""

    def monotonic(self) -> float:
        """Current time in seconds; only differences are meaningful."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Return after `seconds` of this clock's time (zero or less: yield to the loop once)."""
        ...


class ThreadClock(Protocol):
    """The same for a thread that sleeps until told to stop."""

    def monotonic(self) -> float:
        ...

    def wait(self, stop: threading.Event, seconds: float) -> bool:
        """Block for `seconds` of this clock's time or until `stop` is set; True when `stop` is set."""
        ...


class SystemClock:
    """Real time: `time.monotonic`, `asyncio.sleep` and `Event.wait`. Stateless; `SYSTEM_CLOCK` is the one."""

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    def wait(self, stop: threading.Event, seconds: float) -> bool:
        return stop.wait(seconds)


SYSTEM_CLOCK = SystemClock()
