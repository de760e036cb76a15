"""gateway/threads.py's executor, as `asyncio.to_thread` uses it in a serving gateway: a free worker takes
the next call, a call that never returns holds only its own thread, a worker with nothing to do ends, and
shutdown waits for running calls only up to its bound."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future

import pytest

from gateway.threads import DaemonThreadExecutor


def _eventually(condition: Callable[[], bool], within_s: float = 5.0) -> bool:
    deadline = time.monotonic() + within_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


@pytest.fixture
def executor() -> Iterator[DaemonThreadExecutor]:
    ex = DaemonThreadExecutor(shutdown_timeout_s=0.5)
    yield ex
    ex.shutdown(wait=True)


def test_calls_in_a_row_run_on_one_worker_thread(executor: DaemonThreadExecutor) -> None:
    async def main() -> set[int]:
        asyncio.get_running_loop().set_default_executor(executor)
        idents = {await asyncio.to_thread(threading.get_ident) for _ in range(50)}
        assert executor.threads() == 1 and executor.running() == 0
        return idents

    idents = asyncio.run(main())
    assert len(idents) == 1
    assert threading.get_ident() not in idents


def test_results_and_exceptions_reach_the_caller(executor: DaemonThreadExecutor) -> None:
    def fail() -> None:
        raise OSError(5, "input/output error")

    assert executor.submit(lambda a, b=0: a + b, 2, b=3).result(timeout=5) == 5
    with pytest.raises(OSError, match="input/output error"):
        executor.submit(fail).result(timeout=5)
    assert executor.submit(lambda: "after a failure").result(timeout=5) == "after a failure"


def test_a_call_that_never_returns_holds_only_its_own_thread(executor: DaemonThreadExecutor) -> None:
    release = threading.Event()
    hung = executor.submit(release.wait)
    try:
        # The hung call's worker is busy: each later call runs on another thread, none waits behind it.
        results = [executor.submit(lambda i=i: i * 2).result(timeout=5) for i in range(20)]
        assert results == [i * 2 for i in range(20)]
        assert not hung.done()
        assert executor.running() == 1
        assert executor.threads() == 2  # the hung one, and one free worker that took the 20 in turn
    finally:
        release.set()
    assert hung.result(timeout=5) is True


def test_as_many_threads_as_calls_running_at_once(executor: DaemonThreadExecutor) -> None:
    release = threading.Event()
    calls = [executor.submit(release.wait) for _ in range(8)]
    assert _eventually(lambda: executor.running() == 8)
    assert executor.threads() == 8
    release.set()
    assert all(c.result(timeout=5) for c in calls)
    assert _eventually(lambda: executor.running() == 0)
    assert executor.threads() == 8  # all waiting now, for their idle time


def test_a_worker_with_nothing_to_do_ends() -> None:
    ex = DaemonThreadExecutor(idle_timeout_s=0.05)
    try:
        assert ex.submit(lambda: 1).result(timeout=5) == 1
        assert _eventually(lambda: ex.threads() == 0)
        assert ex.submit(lambda: 2).result(timeout=5) == 2  # a new thread again
    finally:
        ex.shutdown(wait=True)


def test_calls_meeting_workers_whose_wait_ends_all_run() -> None:
    """A submit can take a worker off the idle list just as that worker's wait times out: the worker
    must still run the call. Idle waits of a millisecond make that race frequent."""
    ex = DaemonThreadExecutor(idle_timeout_s=0.001)
    try:
        for _ in range(300):
            futures = [ex.submit(lambda i=i: i) for i in range(4)]
            assert [f.result(timeout=5) for f in futures] == [0, 1, 2, 3]
            time.sleep(0.0005 * (len(futures) % 3))
    finally:
        ex.shutdown(wait=True)
    assert ex.threads() == 0


def test_shutdown_ends_waiting_workers_and_waits_for_a_hung_call_only_up_to_its_bound() -> None:
    ex = DaemonThreadExecutor(shutdown_timeout_s=0.3)
    release = threading.Event()
    assert ex.submit(lambda: None).result(timeout=5) is None  # one waiting worker
    hung = ex.submit(release.wait)
    assert _eventually(lambda: ex.running() == 1)
    started = time.monotonic()
    ex.shutdown(wait=True)
    assert 0.25 <= time.monotonic() - started < 3
    assert ex.threads() == 1  # the waiting worker ended; the hung call's thread is left to the process's exit
    with pytest.raises(RuntimeError, match="after shutdown"):
        ex.submit(lambda: None)
    release.set()
    assert hung.result(timeout=5) is True
    assert _eventually(lambda: ex.threads() == 0)  # once its call returned, the thread ended rather than wait


def test_worker_threads_are_daemons(executor: DaemonThreadExecutor) -> None:
    assert executor.submit(lambda: threading.current_thread().daemon).result(timeout=5) is True


def test_a_call_cancelled_before_it_runs_frees_its_worker() -> None:
    """asyncio cancels the call of a to_thread whose caller was cancelled; when that happens before the
    call runs, its worker must wait for the next one rather than be lost. The worker is handed such a call
    as submit hands one (taken off the idle list, the call in its inbox)."""
    ex = DaemonThreadExecutor(shutdown_timeout_s=0.5)
    try:
        assert ex.submit(lambda: 1).result(timeout=5) == 1
        cancelled: Future[None] = Future()
        cancelled.cancel()
        with ex._lock:  # noqa: SLF001 - as submit does
            worker = ex._idle.pop()  # noqa: SLF001
            worker.inbox.put((cancelled, lambda: None, (), {}))
        assert _eventually(lambda: ex.running() == 0)  # back on the idle list
        assert ex.submit(lambda: 7).result(timeout=5) == 7
        assert ex.threads() == 1
    finally:
        ex.shutdown(wait=True)


def test_a_thread_that_cannot_start_fails_the_call_and_is_not_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    ex = DaemonThreadExecutor()

    def refuse(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", refuse)
    with pytest.raises(RuntimeError, match="can't start new thread"):
        ex.submit(lambda: 1)
    assert ex.threads() == 0 and ex.running() == 0
    monkeypatch.undo()
    assert ex.submit(lambda: 2).result(timeout=5) == 2
    ex.shutdown(wait=True)
