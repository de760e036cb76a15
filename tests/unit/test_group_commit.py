"""GroupCommit: a lone call runs alone at once; calls arriving meanwhile run next as one batch; a
batch that fails runs its items one by one; a cancelled caller does not cancel the others."""

from __future__ import annotations

import asyncio
from typing import Sequence

import pytest

from store.group_commit import GroupCommit


class Recorder:
    """run_one / run_many that record what ran and wait on a gate, so a test controls overlap."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[int]]] = []
        self.gate = asyncio.Event()
        self.gate.set()
        self.fail_batches = False

    async def one(self, item: int) -> int:
        self.calls.append(("one", [item]))
        await self.gate.wait()
        if item < 0:
            raise ValueError(f"bad item {item}")
        return item * 10

    async def many(self, items: Sequence[int]) -> list[int | Exception]:
        self.calls.append(("many", list(items)))
        await self.gate.wait()
        if self.fail_batches and any(i < 0 for i in items):
            raise RuntimeError("the whole statement failed")
        return [ValueError(f"bad item {i}") if i < 0 else i * 10 for i in items]


async def test_a_lone_call_runs_alone_and_calls_arriving_meanwhile_run_as_one_batch() -> None:
    rec = Recorder()
    group: GroupCommit[int, int] = GroupCommit(rec.one, rec.many)
    assert await group.submit(1) == 10
    rec.gate.clear()
    first = asyncio.create_task(group.submit(2))
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert rec.calls[-1] == ("one", [2])  # running, held at the gate
    rest = [asyncio.create_task(group.submit(i)) for i in (3, 4, 5)]
    await asyncio.sleep(0)
    rec.gate.set()
    assert await first == 20 and await asyncio.gather(*rest) == [30, 40, 50]
    assert rec.calls == [("one", [1]), ("one", [2]), ("many", [3, 4, 5])]
    assert (group.batches, group.batched_items) == (1, 3)


async def test_an_item_a_batch_refuses_fails_only_its_caller() -> None:
    rec = Recorder()
    group: GroupCommit[int, int] = GroupCommit(rec.one, rec.many)
    results = await asyncio.gather(*(group.submit(i) for i in (1, -2, 3)), return_exceptions=True)
    assert results[0] == 10 and results[2] == 30
    assert isinstance(results[1], ValueError) and "bad item -2" in str(results[1])
    assert rec.calls == [("many", [1, -2, 3])]


async def test_a_failed_batch_runs_its_items_one_by_one() -> None:
    rec = Recorder()
    rec.fail_batches = True
    group: GroupCommit[int, int] = GroupCommit(rec.one, rec.many)
    results = await asyncio.gather(*(group.submit(i) for i in (1, -2, 3)), return_exceptions=True)
    assert results[0] == 10 and results[2] == 30 and isinstance(results[1], ValueError)
    assert rec.calls[0] == ("many", [1, -2, 3])
    assert sorted(rec.calls[1:]) == [("one", [-2]), ("one", [1]), ("one", [3])]


async def test_batches_are_bounded_by_weight_and_the_first_item_always_runs() -> None:
    rec = Recorder()
    group: GroupCommit[int, int] = GroupCommit(rec.one, rec.many, max_batch=5, weight=lambda item: item)
    assert await asyncio.gather(*(group.submit(i) for i in (2, 3, 1, 9, 4))) == [20, 30, 10, 90, 40]
    assert rec.calls == [("many", [2, 3]), ("one", [1]), ("one", [9]), ("one", [4])]


async def test_a_cancelled_caller_leaves_the_shared_batch_running() -> None:
    rec = Recorder()
    rec.gate.clear()
    group: GroupCommit[int, int] = GroupCommit(rec.one, rec.many)
    callers = [asyncio.create_task(group.submit(i)) for i in (1, 2, 3)]
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    callers[1].cancel()
    await asyncio.sleep(0)
    rec.gate.set()
    assert await callers[0] == 10 and await callers[2] == 30
    with pytest.raises(asyncio.CancelledError):
        await callers[1]
    assert rec.calls == [("many", [1, 2, 3])]  # the cancelled caller's item ran (its answer was lost)


async def test_stopping_the_batch_task_fails_every_waiting_caller() -> None:
    rec = Recorder()
    rec.gate.clear()
    group: GroupCommit[int, int] = GroupCommit(rec.one, rec.many)
    running = asyncio.create_task(group.submit(1))
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    queued = asyncio.create_task(group.submit(2))
    await asyncio.sleep(0)
    (drain,) = [t for t in asyncio.all_tasks() if t.get_name() == "group-commit"]
    drain.cancel()
    for caller in (running, queued):
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(caller, 1)
    rec.gate.set()
    assert await group.submit(3) == 30  # a new call starts a new batch task


async def test_a_batch_size_of_one_runs_every_call_alone_and_concurrently() -> None:
    rec = Recorder()
    rec.gate.clear()
    group: GroupCommit[int, int] = GroupCommit(rec.one, rec.many, max_batch=1)
    callers = [asyncio.create_task(group.submit(i)) for i in (1, 2, 3)]
    await asyncio.sleep(0)
    assert rec.calls == [("one", [1]), ("one", [2]), ("one", [3])]  # all running at once, none queued
    rec.gate.set()
    assert await asyncio.gather(*callers) == [10, 20, 30]


async def test_an_error_that_may_have_committed_the_batch_is_every_callers_answer_and_not_rerun() -> None:
    rec = Recorder()
    rec.fail_batches = True
    group: GroupCommit[int, int] = GroupCommit(rec.one, rec.many, rerun_alone=lambda exc: False)
    results = await asyncio.gather(*(group.submit(i) for i in (1, -2, 3)), return_exceptions=True)
    assert all(isinstance(r, RuntimeError) and "whole statement" in str(r) for r in results)
    assert rec.calls == [("many", [1, -2, 3])]
