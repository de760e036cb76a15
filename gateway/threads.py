"""The worker threads of `asyncio.to_thread` for a serving gateway: each call in a daemon thread, so
that a call that never returns cannot keep the process from exiting.

What the gateway runs in threads can block without end: a file operation on a hung mount (the
warehouse's directories, the Cleaner's listing and deletes), `pg_ctl`. Each caller bounds its own
wait (gateway/warehouse.py FILE_OPERATION_TIMEOUT_S, the compactor's round time-out) and goes on
without the thread, but the thread stays blocked; with asyncio's default executor the process then
never exits: `asyncio.run` waits for the executor's threads at the end (with no bound before Python
3.12), and Python joins a ThreadPoolExecutor's threads at exit, however long they block. Such a
pool also runs at most min(32, CPUs + 4) calls at once, so a few hung calls would queue every later
one (the embedded PostgreSQL's stop among them) behind them.

Here every call gets a thread of its own, marked daemon; `shutdown` waits for the calls still
running at most `shutdown_timeout_s`, then abandons them (the stop has already waited for whatever
it needs). No read runs in a thread; of the writes, the Thrift add_partitions makes its directories
in one call. A new thread costs about 25 µs of CPU more than a pooled one (docs/benchmarks.md, the
session of 2026-11-28 (fourth): no change in the write rows).
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, TypeVar

_log = logging.getLogger(__name__)

T = TypeVar("T")

# How long the end of a serving process waits for worker threads still running (a file operation on a
# hung mount): the stop proper has already waited, bounded, for every call it needs.
THREAD_SHUTDOWN_WAIT_S = 2.0


class DaemonThreadExecutor(ThreadPoolExecutor):
    """An executor that runs each call in a new daemon thread; `shutdown(wait=True)` waits at most
    `shutdown_timeout_s` for the calls still running, then returns and leaves them to the process's exit.
    A ThreadPoolExecutor only by type (asyncio's loop.set_default_executor takes no other): its pool
    is never used."""

    def __init__(self, shutdown_timeout_s: float = THREAD_SHUTDOWN_WAIT_S) -> None:
        super().__init__(max_workers=1)
        self._shutdown_timeout_s = shutdown_timeout_s
        self._lock = threading.Lock()
        self._running: set[threading.Thread] = set()
        self._closed = False
        self._names = itertools.count(1)

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future: Future[T] = Future()

        def run() -> None:
            try:
                if not future.set_running_or_notify_cancel():
                    return
                try:
                    result = fn(*args, **kwargs)
                except BaseException as exc:  # noqa: BLE001 - the caller's, through its future
                    future.set_exception(exc)
                else:
                    future.set_result(result)
            finally:
                with self._lock:
                    self._running.discard(threading.current_thread())

        with self._lock:
            if self._closed:
                raise RuntimeError("cannot schedule new calls after shutdown")
            thread = threading.Thread(target=run, name=f"gateway-worker-{next(self._names)}", daemon=True)
            self._running.add(thread)
        thread.start()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            self._closed = True
            running = list(self._running)
        if not wait:
            return
        deadline = time.monotonic() + self._shutdown_timeout_s
        for thread in running:
            thread.join(max(0.0, deadline - time.monotonic()))
        left = [t.name for t in running if t.is_alive()]
        if left:
            _log.warning("%d worker thread(s) still blocked after %.0fs (a file operation on a hung mount?); "
                         "exiting without them", len(left), self._shutdown_timeout_s)

    def running(self) -> int:
        """Calls still running (tests)."""
        with self._lock:
            return len(self._running)
