"""The lock manager as the gateway sees it: one method per operation, each one database transaction."""

from __future__ import annotations

from typing import Callable, Sequence

from store import locks
from store.db import Database
from store.errors import InvalidArgument
from store.group_commit import MAX_BATCH, GroupCommit
from hive.lock_rules import LockScope, LockState
from store.locks import LockInfo, LockRequest, LockResult


def _lock_id(lock_id: int) -> int:
    if lock_id <= 0:
        raise InvalidArgument(f"lock_id must be a lock id (positive), got {lock_id}")
    return lock_id


def _ignore(result: LockResult) -> None:
    pass


class LockStore:
    """`on_granted` hears every ACQUIRED answer, with the log head its grant saw (the cache's
    bookkeeping: store/cache/facade.py lock_granted), before the caller does."""

    def __init__(self, db: Database, group_commit_max: int = MAX_BATCH,
                 on_granted: Callable[[LockResult], None] = _ignore) -> None:
        self._db = db
        self._on_granted = on_granted

        async def enqueue_many(requests: Sequence[LockRequest]) -> list[LockResult | Exception]:
            return list(await db.run(locks.enqueue_many, requests))

        # Every enqueue holds the next_lock_id row until it commits (ext ids visible in id order), so
        # enqueues commit one after another: concurrent ones share a statement and its WAL flush.
        self._enqueues: GroupCommit[LockRequest, LockResult] = GroupCommit(
            lambda request: db.run(locks.enqueue, request), enqueue_many, max_batch=group_commit_max)

    def group_commit_stats(self) -> tuple[int, int]:
        """Batches of two or more Lock calls run, and the calls in them."""
        return self._enqueues.batches, self._enqueues.batched_items

    async def lock(self, request: LockRequest) -> LockResult:
        return self._granted(await self._enqueues.submit(request))

    async def check_lock(self, lock_id: int) -> LockResult:
        return self._granted(await self._db.transact(locks.check_lock, _lock_id(lock_id)))

    def _granted(self, result: LockResult) -> LockResult:
        if result.state is LockState.ACQUIRED:
            self._on_granted(result)
        return result

    async def unlock(self, lock_id: int, *, missing_ok: bool = False) -> None:
        """Release request `lock_id` (locks.unlock); `missing_ok`: one that does not exist, as for an id no
        request can have (0 or below), is nothing to do."""
        if missing_ok and lock_id <= 0:
            return
        await self._db.transact(locks.unlock, _lock_id(lock_id), missing_ok=missing_ok)

    async def heartbeat(self, lock_ids: Sequence[int]) -> list[int]:
        """Refresh standalone locks; return the ids that do not exist."""
        for lock_id in lock_ids:
            _lock_id(lock_id)
        return await self._db.transact(locks.heartbeat, lock_ids)

    async def show_locks(self, scope: LockScope | None, *, extended: bool = False, txn_id: int = 0) -> list[LockInfo]:
        if txn_id < 0:
            raise InvalidArgument(f"txn_id must not be negative, got {txn_id}")
        return await self._db.read(locks.show_locks, scope, extended=extended, txn_id=txn_id)

    async def owners(self, lock_ids: Sequence[int]) -> dict[int, str]:
        """The user each existing lock request was taken by."""
        return await self._db.read(locks.lock_owners, lock_ids)
