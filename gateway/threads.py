"""The worker threads of `asyncio.to_thread` for a serving gateway: daemon threads, so that a call
that never returns cannot keep the process from exiting.

What the gateway runs in threads can block without end: a file operation on a hung mount (the
warehouse's directories, the Cleaner's listing and deletes), `pg_ctl`. Each caller bounds its own
wait (gateway/warehouse.py FILE_OPERATION_TIMEOUT_S, the compactor's round time-out) and goes on
without the thread, but the thread stays blocked; with asyncio's default executor the process then
never exits: `asyncio.run` waits for the executor's threads at the end (with no bound before Python
3.12), and Python joins a ThreadPoolExecutor's threads at exit, however long they block. Such a
pool also runs at most min(32, CPUs + 4) calls at once, so a few hung calls would queue every later
one (the embedded PostgreSQL's stop among them) behind them.

Here a call runs on a worker that is waiting for one, or on a new daemon thread when none is: a hung
call holds only its own thread and never queues another, as with a thread per call, and a worker
that is free again takes the next call without a thread being started. A thread per call cost 110 to
122 µs of CPU per call where a waiting worker costs 27 (docs/benchmarks.md, 2026-11-29), and stalled the
event loop in `Thread.start` until the new thread ran: 4.5% of the gateway's samples under the Thrift
plus 10 partitions write load, whose add_partitions makes its directories in one call (that row's rate
did not move beyond its spread). A worker waits
`idle_timeout_s` for its next call, then ends. `shutdown` ends the waiting workers and waits for the
calls still running at most `shutdown_timeout_s`, then abandons them (the stop has already waited
for whatever it needs). No read runs in a thread.
"""

from __future__ import annotations

import functools
import itertools
import logging
import queue
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, TypeVar

_log = logging.getLogger(__name__)

T = TypeVar("T")

# How long the end of a serving process waits for worker threads still running (a file operation on a
# hung mount): the stop proper has already waited, bounded, for every call it needs.
THREAD_SHUTDOWN_WAIT_S = 2.0
# How long a worker with nothing to do waits for its next call before its thread ends.
IDLE_WORKER_S = 30.0

_Call = tuple["Future[Any]", Callable[..., Any], tuple[Any, ...], dict[str, Any]]


class _Worker:
    """One daemon thread and its inbox, which holds at most one call at a time: a call is put there
    only by the submit that took the worker off the idle list, or by the one that started it."""

    def __init__(self, name: str, run: Callable[[_Worker], None]) -> None:
        self.inbox: queue.SimpleQueue[_Call | None] = queue.SimpleQueue()
        self.thread = threading.Thread(target=run, args=(self,), name=name, daemon=True)


class DaemonThreadExecutor(ThreadPoolExecutor):
    """An executor whose calls run on daemon threads: a waiting worker's when there is one, a new
    thread's otherwise, never queued behind another call; `shutdown(wait=True)` waits at most
    `shutdown_timeout_s` for the calls still running, then returns and leaves them to the process's
    exit. A ThreadPoolExecutor only by type (asyncio's loop.set_default_executor takes no other): its
    pool is never used."""

    def __init__(self, shutdown_timeout_s: float = THREAD_SHUTDOWN_WAIT_S,
                 idle_timeout_s: float = IDLE_WORKER_S) -> None:
        super().__init__(max_workers=1)
        self._shutdown_timeout_s = shutdown_timeout_s
        self._idle_timeout_s = idle_timeout_s
        self._lock = threading.Lock()
        self._workers: set[_Worker] = set()  # every live one, running a call or waiting
        self._idle: list[_Worker] = []  # the waiting ones; the last to finish is taken first (warm)
        self._closed = False
        self._names = itertools.count(1)

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future: Future[T] = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError("cannot schedule new calls after shutdown")
            new = not self._idle
            worker = _Worker(f"gateway-worker-{next(self._names)}", self._work) if new else self._idle.pop()
            self._workers.add(worker)
            worker.inbox.put((future, fn, args, kwargs))
        if new:
            try:
                worker.thread.start()
            except BaseException:  # no thread to be had (the process's limit): the caller's error
                with self._lock:
                    self._workers.discard(worker)
                raise
        return future

    def _work(self, worker: _Worker) -> None:
        try:
            while True:
                try:
                    call = worker.inbox.get(timeout=self._idle_timeout_s)
                except queue.Empty:
                    with self._lock:
                        if worker in self._idle:
                            self._idle.remove(worker)
                            return
                    # A submit took this worker off the idle list as its wait ended; it put the call
                    # before it let go of the lock, so the call is there.
                    call = worker.inbox.get()
                if call is None:
                    return  # shutdown
                future, fn, args, kwargs = call
                del call
                answer: Callable[[], object] = _nothing  # a call cancelled before it ran
                if future.set_running_or_notify_cancel():
                    try:
                        answer = functools.partial(future.set_result, fn(*args, **kwargs))
                    except BaseException as exc:  # noqa: BLE001 - the caller's, through its future
                        answer = functools.partial(future.set_exception, exc)
                del fn, args, kwargs  # drop the caller's arguments while waiting
                # Free before answering: the answer wakes the caller, whose next call then finds this
                # worker waiting instead of starting a thread of its own.
                with self._lock:
                    closing = self._closed
                    if not closing:
                        self._idle.append(worker)
                answer()
                del future, answer
                if closing:
                    return
        finally:
            with self._lock:
                self._workers.discard(worker)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            self._closed = True
            for worker in self._idle:
                worker.inbox.put(None)
            self._idle.clear()
            threads = [w.thread for w in self._workers]
        if not wait:
            return
        deadline = time.monotonic() + self._shutdown_timeout_s
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        left = [t.name for t in threads if t.is_alive()]
        if left:
            _log.warning("%d worker thread(s) still blocked after %.0fs (a file operation on a hung mount?); "
                         "exiting without them", len(left), self._shutdown_timeout_s)

    def running(self) -> int:
        """Calls still running (tests)."""
        with self._lock:
            return len(self._workers) - len(self._idle)

    def threads(self) -> int:
        """Live worker threads, running a call or waiting for one (tests)."""
        with self._lock:
            return len(self._workers)



def _nothing() -> None:
    pass
