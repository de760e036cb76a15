"""Group commit: calls of one kind that arrive while one is running go to PostgreSQL together.

Every txn-manager write appends an event, and appending holds the notification_sequence row until
its transaction has committed and its WAL is flushed (store/sql/events.py): such writes commit one
after another, each paying its own statement, commit and fsync while the others wait for the row.
Hive's API lets one call open many txns or allocate write ids for many; a `GroupCommit` does the
same for calls from different clients: the first call runs alone at once, and calls arriving while
it runs queue and go next as one batch: one statement, one commit, one WAL flush, the sequence row
taken once. A lone caller waits for nothing; under load the batch grows with the queue.

A batch is one database transaction, so it commits whole or not at all. An item a batch refuses
(a txn already aborted, a table that does not exist) is that item's answer and writes nothing; when
PostgreSQL refused the batch statement itself (a value it could not take, an error raised for one
call's row), nothing of it was written and each of its items runs again alone, so one caller's bad
request fails only that caller. An error that leaves open whether the batch committed (the
connection lost, a time-out) is every caller's answer, as it would have been for a call alone: it
is not re-run behind the callers' backs (an OpenTxns would open its txns twice).

Batches run as tasks of their own: a caller that is cancelled (its deadline passed) stops waiting
but does not cancel the statement the others share; its item runs like an RPC whose answer was lost.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Awaitable, Callable, Generic, Sequence, TypeVar

from store.errors import Unavailable

log = logging.getLogger(__name__)

Item = TypeVar("Item")
Result = TypeVar("Result")

# One batch's items: enough that 16 to 64 concurrent writers share a flush, few enough that one
# statement stays short (its row locks are held until it commits).
MAX_BATCH = 64


def rolled_back(error: Exception) -> bool:
    """Whether a batch that raised `error` certainly wrote nothing: PostgreSQL or a check refused it.
    Unavailable (the connection lost, a time-out, retries exhausted) leaves the commit in doubt."""
    return not isinstance(error, Unavailable)


class GroupCommit(Generic[Item, Result]):
    """Runs `run_one(item)` for a call that arrives when nothing is running, and
    `run_many(items)` (one answer or exception per item, in order) for the calls queued meanwhile;
    when `run_many` raises, its items run alone if `rerun_alone(error)`, else all fail with it."""

    def __init__(
        self,
        run_one: Callable[[Item], Awaitable[Result]],
        run_many: Callable[[Sequence[Item]], Awaitable[list[Result | Exception]]],
        *,
        max_batch: int = MAX_BATCH,
        weight: Callable[[Item], int] = lambda item: 1,
        rerun_alone: Callable[[Exception], bool] = rolled_back,
    ) -> None:
        self._run_one = run_one
        self._run_many = run_many
        self._max_batch = max_batch
        self._weight = weight
        self._rerun_alone = rerun_alone
        self._queue: list[tuple[Item, asyncio.Future[Result]]] = []
        self._running: asyncio.Task[None] | None = None
        self.batches = 0  # batches of two or more items run, and the items in them (gateway/metrics.py)
        self.batched_items = 0

    async def submit(self, item: Item) -> Result:
        if self._max_batch == 1:  # group commit turned off: every call on its own, concurrently
            return await self._run_one(item)
        future: asyncio.Future[Result] = asyncio.get_running_loop().create_future()
        self._queue.append((item, future))
        if self._running is None:
            self._running = asyncio.create_task(self._drain(), name="group-commit")
        return await future

    async def _drain(self) -> None:
        """Run what is queued, batch after batch, until the queue is empty."""
        batch: list[tuple[Item, asyncio.Future[Result]]] = []
        try:
            while self._queue:
                batch = self._take_batch()
                await self._run(batch)
        except BaseException as exc:  # cancelled at shutdown: nobody is left waiting in silence
            for _, future in batch + self._queue:
                if future.done():
                    continue
                if isinstance(exc, Exception):
                    future.set_exception(exc)
                else:
                    future.cancel()
            self._queue.clear()
            raise
        finally:
            self._running = None

    def _take_batch(self) -> list[tuple[Item, asyncio.Future[Result]]]:
        """The oldest queued calls, up to `max_batch` items or that much weight (the first always)."""
        taken, budget = 0, self._max_batch
        for item, _ in self._queue:
            budget -= self._weight(item)
            if taken and budget < 0:
                break
            taken += 1
        batch, self._queue = self._queue[:taken], self._queue[taken:]
        return batch

    async def _run(self, batch: list[tuple[Item, asyncio.Future[Result]]]) -> None:
        items = [item for item, _ in batch]
        if len(items) == 1:
            answers = [await _answer(self._run_one(items[0]))]
        else:
            self.batches += 1
            self.batched_items += len(items)
            try:
                answers = await self._run_many(items)
            except Exception as exc:
                if not self._rerun_alone(exc):
                    answers = [exc] * len(items)
                else:
                    log.info("a batch of %d failed (%s); its items run one by one", len(items), exc)
                    answers = list(await asyncio.gather(*(_answer(self._run_one(item)) for item in items)))
        for (_, future), answer in zip(batch, answers, strict=True):
            if future.done():  # its caller was cancelled
                continue
            if isinstance(answer, Exception):
                future.set_exception(answer)
            else:
                future.set_result(answer)


async def _answer(call: Awaitable[Result]) -> Result | Exception:
    try:
        return await call
    except Exception as exc:
        return exc
