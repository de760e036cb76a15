"""The lock manager, after Hive's DbLockManager over HIVE_LOCKS (hive-reference §6): functions
taking a connection inside the caller's transaction. The rules themselves are in lock_rules.py.

Design note: why grants are correct across any number of gateways.

1. *Strict FIFO, decided by existence only.* A request R waits while any earlier request (lower
   ext id), in any state, has a component that conflicts with one of R's on an overlapping scope
   (Hive's checkLock). Waiting requests count, so a stream of readers cannot starve a writer: a
   reader arriving after a waiting writer waits behind it. Locks of the same txn never conflict.
2. *Ext ids become visible in id order.* The enqueue takes the next_lock_id row lock, inserts its
   rows and commits before the next enqueuer gets an id (Hive's NEXT_LOCK_ID ... FOR UPDATE).
   So when R is checked, every earlier request is already visible to it.
3. *Hence a grant needs no further mutex.* The set of requests earlier than R only shrinks
   (unlock, commit, abort, time-out), so "R has no blocker" stays true once true, and two
   conflicting requests can never both be granted: the later one always sees the earlier one.
   The enqueue decides in the same transaction that inserts (one statement); CheckLock re-decides
   holding the request's own rows FOR UPDATE, so the state flip cannot race an Unlock.
4. *All or nothing.* One statement flips every component of R to ACQUIRED, or none.
5. *The DDL guard* (drop table/database) holds the counter FOR SHARE, so no request is enqueued
   (and granted) meanwhile, and the locks in its scope FOR SHARE, so none is granted or released
   until it commits: it sees a settled set of holders.

6. *Names, not objects.* A component names a database, a table, a partition (as Hive's HIVE_LOCKS
   does), compared by name, and none of them need exist: Hive's TxnHandler.lock checks nothing,
   and clients lock what they are about to create (Hive 4's CTAS of an ACID table, HIVE-26244;
   Hive 2.3's static insert into a new partition). So a lock outlives, predates or survives the
   object under the same name, exactly as in Hive; a create never waits for a lock (nor in Hive).

Standalone locks (txn 0) carry a heartbeat, refreshed by Heartbeat and CheckLock, and are deleted by
the time-out reaper (Hive's timeOutLocks). Txn locks have none: they end at commit or abort, and
Unlock refuses them once acquired (Hive's TxnOpenException).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

import asyncpg

from hive import limits, names
from store import codec, events, txns
from store.models import Table
from store.sql import catalog as catalog_sql
from store.errors import Aborted, FailedPrecondition, InvalidArgument, NotFound
from hive.lock_rules import (
    DataOperationType,
    LockComponent,
    LockLevel,
    LockScope,
    LockState,
    LockType,
    conflict_keys,
    conflicts,
    normalize_components,
    write_set_entries,
)
from store.sql import locks as sql

_CONFLICT_KEYS = list(conflict_keys())


@dataclass(frozen=True, slots=True)
class LockRequest:
    components: tuple[LockComponent, ...]
    txn_id: int = 0
    user: str = ""
    host: str = ""
    agent_info: str = ""


@dataclass(frozen=True, slots=True)
class LockResult:
    lock_id: int
    state: LockState
    blocked_by: tuple[int, int] | None = None  # (ext id, component id) of the first blocker
    # Of an ACQUIRED answer: the notification log's head in a snapshot no older than the one that
    # decided the grant, and what the request locks. Every commit that freed the lock (and every
    # write before it) is at or below the head, so a reader holding the lock must see at least that
    # state (store/cache/facade.py lock_granted).
    log_head: int = 0
    scopes: tuple[LockScope, ...] = ()


@dataclass(frozen=True, slots=True)
class LockInfo:
    """One row of SHOW LOCKS (one component of a request)."""

    lock_id: int
    component_id: int
    txn_id: int
    scope: LockScope
    state: LockState
    type: LockType
    operation: DataOperationType
    last_heartbeat_ms: int
    acquired_at_ms: int
    user: str
    host: str
    agent_info: str
    blocked_by: tuple[int, int] | None


def _blocked_by(row: asyncpg.Record) -> tuple[int, int] | None:
    ext = row["blocked_by_ext_id"]
    return None if ext is None else (int(ext), int(row["blocked_by_int_id"]))


def _scope(row: asyncpg.Record) -> LockScope:
    return LockScope(row["db_name"], row["tbl_name"], row["part_name"])


async def enqueue(conn: asyncpg.Connection, request: LockRequest) -> LockResult:
    """Record a request and decide it at once (Hive's enqueueLock + checkLock)."""
    return (await enqueue_many(conn, [request]))[0]


async def enqueue_many(conn: asyncpg.Connection, requests: Sequence[LockRequest]) -> list[LockResult]:
    """`enqueue` for several requests in one statement (a group-commit batch, store/group_commit.py;
    run outside a transaction: the enqueue_locks function is the whole of it): ext ids in request
    order, each request decided against every earlier one, these included. Every request is checked
    (its txn open, its partition names fitting an existing table's keys) before anything is taken;
    the first refusal fails the call with nothing written. The objects named need not exist (note 6).
    Row locks in the one order of store/sql/locks.py."""
    for request in requests:
        txns.check_client_identity(request.user, request.host, request.agent_info)
        normalize_components(request.components)  # refuses an empty request before any read
        if request.txn_id < 0:
            raise InvalidArgument(f"txn_id must not be negative, got {request.txn_id}")
    canonical = await _canonical_partitions(conn, [r.components for r in requests])
    checked = [normalize_components(components) for components in canonical]
    rows = [(i, int_id, c, request)
            for i, (request, components) in enumerate(zip(requests, checked, strict=True))
            for int_id, c in enumerate(components, start=1)]
    writes = [(request.txn_id, scope, op) for request, components in zip(requests, canonical, strict=True)
              if request.txn_id for scope, op in write_set_entries(components)]
    written = ([[t for t, _, _ in writes], [s.db for _, s, _ in writes], [s.table for _, s, _ in writes],
                [s.partition for _, s, _ in writes], [op for _, _, op in writes]] if writes else [])
    answer = await conn.fetch(
        sql.ENQUEUE_WITH_WRITES if writes else sql.ENQUEUE, len(requests),
        sorted({r.txn_id for r in requests if r.txn_id}), [i for i, _, _, _ in rows],
        [int_id for _, int_id, _, _ in rows], [c.scope.db for _, _, c, _ in rows],
        [c.scope.table for _, _, c, _ in rows], [c.scope.partition for _, _, c, _ in rows],
        [c.type.value for _, _, c, _ in rows], [c.operation.value for _, _, c, _ in rows],
        [r.txn_id for _, _, _, r in rows], [c.scope.level.value for _, _, c, _ in rows], _CONFLICT_KEYS,
        [r.user for _, _, _, r in rows], [r.host for _, _, _, r in rows], [r.agent_info for _, _, _, r in rows],
        *written,
    )
    first = answer[0]
    await txns.check_not_refused(conn, first)
    first_id = min(row["lock_ext_id"] for row in answer)
    log_head = int(first["log_head"])
    blockers: dict[int, tuple[int, int] | None] = {first_id + i: None for i in range(len(requests))}
    for row in answer:
        ext = row["blocked_ext_id"]
        blockers[row["lock_ext_id"]] = blockers[row["lock_ext_id"]] or (
            None if ext is None else (int(ext), int(row["blocked_int_id"])))
    return [LockResult(ext_id, LockState.WAITING, blocked) if blocked
            else LockResult(ext_id, LockState.ACQUIRED, log_head=log_head, scopes=tuple(c.scope for c in components))
            for (ext_id, blocked), components in zip(blockers.items(), checked, strict=True)]


async def _canonical_partitions(conn: asyncpg.Connection,
                                requests: Sequence[Sequence[LockComponent]]) -> list[tuple[LockComponent, ...]]:
    """Each request's components (as given: duplicates are merged later) with partition names in their
    table's canonical form (`hr=07` locks `hr=7`, so the two conflict as they must), a full name or a
    prefix of the table's keys (InvalidArgument otherwise). Only requests with a partition component
    cost a read: the table's keys, once per table per call. The partition need not exist (Hive locks
    the name of one a static insert is about to write); of a table that does not exist, the name is
    locked as given (as Hive locks every name), there being no keys to read it by.

    Nothing is locked here: a drop racing the lock is the DDL guard's business
    (check_no_conflicting_holders), as it is for a lock taken just before the drop."""
    tables: dict[tuple[str, str], Table | None] = {}
    out: list[tuple[LockComponent, ...]] = []
    for components in requests:
        if all(c.scope.partition is None for c in components):
            out.append(tuple(components))
            continue
        request: list[LockComponent] = []
        for c in components:
            scope = c.scope
            if scope.table is None or scope.partition is None:
                request.append(c)
                continue
            key = (scope.db, scope.table)
            if key not in tables:
                row = await conn.fetchrow(catalog_sql.SELECT_LATEST_TABLE, *key)
                tables[key] = None if row is None else codec.table_from_row(row)
            table = tables[key]
            if table is None:
                request.append(c)
                continue
            name = _canonical_lock_partition(table, scope.partition)
            request.append(replace(c, scope=replace(scope, partition=name)))
        out.append(tuple(request))
    return out


def _canonical_lock_partition(table: Table, partition: str) -> str:
    """A full partition name or a prefix of one, checked against the table's keys, values canonical."""
    keys = table.partition_keys
    segments = partition.split("/")
    if len(segments) > len(keys):
        raise InvalidArgument(f"partition {limits.preview(partition)} has {len(segments)} keys but table "
                              f"{table.full_name} has {len(keys)} ({'/'.join(k.name for k in keys) or 'none'})")
    return names.canonical_partition_name(keys[:len(segments)], partition)


def _no_such_lock(lock_id: int) -> NotFound:
    return NotFound(f"lock {lock_id} does not exist: it was released (Unlock, or the commit/abort of its txn), "
                    "timed out without a heartbeat (hive.txn.timeout), or never existed")


async def check_lock(conn: asyncpg.Connection, lock_id: int) -> LockResult:
    """Re-decide a request (Hive's checkLock); also its heartbeat, as in Hive."""
    txn_id = await conn.fetchval(sql.TXN_OF_REQUEST, lock_id)
    if txn_id is None:
        raise _no_such_lock(lock_id)
    if txn_id:  # before the lock rows: the order commit takes them in
        aborted, _ = await txns.heartbeat(conn, [txn_id])
        if aborted:
            raise Aborted(f"txn {txn_id} of lock {lock_id} was aborted; its locks were released")
    rows = await conn.fetch(sql.SELECT_REQUEST_FOR_UPDATE, lock_id)
    if not rows:
        raise _no_such_lock(lock_id)
    if all(r["state"] == LockState.ACQUIRED.value for r in rows):
        if not txn_id:
            await conn.execute(sql.HEARTBEAT_LOCKS, [lock_id])
    else:
        blocker = await conn.fetchrow(sql.FIRST_BLOCKER, lock_id, _CONFLICT_KEYS)
        if blocker is not None:
            await conn.execute(sql.MARK_WAITING, lock_id, blocker["int_id"], blocker["b_ext"], blocker["b_int"])
            return LockResult(lock_id, LockState.WAITING, (int(blocker["b_ext"]), int(blocker["b_int"])))
        await conn.execute(sql.MARK_ACQUIRED, lock_id)
    # Read after the decision (or after an earlier one, granted maybe through another gateway): no older.
    return LockResult(lock_id, LockState.ACQUIRED, log_head=await events.current_event_id(conn),
                      scopes=tuple(_scope(r) for r in rows))


async def unlock(conn: asyncpg.Connection, lock_id: int, *, missing_ok: bool = False) -> None:
    """Release a request; an acquired request of a txn is released only by its commit or abort.
    A request that does not exist is NotFound, or with `missing_ok` nothing to do: Hive's
    TxnHandler.unlock returns when it finds no such lock ("to make the operation idempotent"; a
    client retrying an unlock, or releasing a lock that timed out, gets no error)."""
    rows = await conn.fetch(sql.SELECT_REQUEST_FOR_UPDATE, lock_id)
    if not rows:
        if missing_ok:
            return
        raise _no_such_lock(lock_id)
    txn_id = rows[0]["txn_id"]
    if txn_id and any(r["state"] == LockState.ACQUIRED.value for r in rows):
        raise FailedPrecondition(f"lock {lock_id} is held by txn {txn_id}: locks acquired under a txn are released "
                                 "when it commits or aborts (CommitTxn/AbortTxns), not by Unlock")
    await conn.execute(sql.DELETE_REQUEST, lock_id)


async def heartbeat(conn: asyncpg.Connection, lock_ids: Sequence[int]) -> list[int]:
    """Refresh standalone requests; return the ids that do not exist. Ids of txn locks exist and
    need nothing (their txn's heartbeat keeps them)."""
    if not lock_ids:
        return []
    refreshed = {r["ext_id"] for r in await conn.fetch(sql.HEARTBEAT_LOCKS, list(lock_ids))}
    rest = sorted(set(lock_ids) - refreshed)
    if not rest:
        return []
    existing = {r["ext_id"] for r in await conn.fetch(sql.EXISTING_REQUESTS, rest)}
    return [i for i in rest if i not in existing]


async def time_out_locks(conn: asyncpg.Connection, timeout_s: float) -> list[asyncpg.Record]:
    """Delete standalone requests without a heartbeat for `timeout_s` (Hive's timeOutLocks);
    returns the deleted components."""
    return list(await conn.fetch(sql.TIME_OUT_LOCKS, timeout_s))


def _info(r: asyncpg.Record) -> LockInfo:
    return LockInfo(
        lock_id=r["ext_id"], component_id=r["int_id"], txn_id=r["txn_id"], scope=_scope(r),
        state=LockState(r["state"]), type=LockType(r["lock_type"]), operation=DataOperationType(r["operation"]),
        last_heartbeat_ms=r["heartbeat_ms"], acquired_at_ms=r["acquired_ms"], user=r["user_name"], host=r["host"],
        agent_info=r["agent_info"], blocked_by=_blocked_by(r),
    )


async def show_locks(conn: asyncpg.Connection, scope: LockScope | None, *, extended: bool = False,
                     txn_id: int = 0) -> list[LockInfo]:
    """SHOW LOCKS: the components whose scope is exactly `scope` (Hive: equal db/table/partition as
    far as given), or with `extended` every one whose scope overlaps it; by ext id, then int id."""
    db, table, part = (scope.db, scope.table, scope.partition) if scope else (None, None, None)
    query = sql.SHOW_LOCKS_OVERLAPPING if extended else sql.SHOW_LOCKS
    # Bounded as SHOW TRANSACTIONS is (store/txns.py): at most MAX_SHOW_ROWS + 1, to tell "more".
    return [_info(r) for r in await conn.fetch(query, db, table, part, txn_id, txns.MAX_SHOW_ROWS + 1)]


async def check_no_conflicting_holders(conn: asyncpg.Connection, scope: LockScope, action: str, *,
                                       caller: str | None = None) -> None:
    """The DDL guard for dropping `scope` (a table or a database): refuse while anyone holds a lock
    an EXCLUSIVE on `scope` would conflict with.

    The drop is let through when an acquired EXCLUSIVE lock covers `scope`: that is Hive's own flow
    (take the exclusive lock, then drop), and while it is held no conflicting lock can be acquired.
    A drop carries no lock id: with `caller` None (the open mode, where nobody is authenticated, or an
    admin) the lock is presumed the caller's; an authenticated non-admin's `caller` drops only under
    an EXCLUSIVE lock of its own, another user's being a conflicting holder like any other (Hive takes
    one for INSERT OVERWRITE), and the refusal names only the caller's own holders' user and host, as
    SHOW LOCKS does. Waiting requests hold nothing and do not block the drop."""
    await conn.execute(sql.BLOCK_ENQUEUES)
    rows = await conn.fetch(sql.LOCKS_IN_SCOPE_FOR_SHARE, scope.db, scope.table)
    acquired = [r for r in rows if r["state"] == LockState.ACQUIRED.value]
    if any(r["lock_type"] == LockType.EXCLUSIVE.value and _scope(r).contains(scope)
           and caller in (None, r["user_name"]) for r in acquired):
        return
    level = scope.level
    holders = [r for r in acquired if _scope(r).overlaps(scope) and conflicts(
        LockType.EXCLUSIVE, level, LockType(r["lock_type"]), _level(r))]
    if not holders:
        return
    shown = "; ".join(_holder_text(r, caller) for r in holders[:5])
    more = f"; and {len(holders) - 5} more" if len(holders) > 5 else ""
    raise FailedPrecondition(
        f"cannot {action}: it is locked ({shown}{more}). Retry after these locks are released (Unlock, or the "
        f"commit/abort of their txns), or take an EXCLUSIVE lock on {scope} with Locks.Lock first: it waits its "
        "turn, and the drop then runs under it"
    )


def _level(r: asyncpg.Record) -> LockLevel:
    return _scope(r).level


def _holder_text(r: asyncpg.Record, caller: str | None) -> str:
    """A holder as a refusal names it: to a non-admin `caller`, another user's without its user and
    host, which SHOW LOCKS blanks too."""
    txn = f"txn {r['txn_id']}" if r["txn_id"] else "no txn"
    agent = f", {r['agent_info']}" if r["agent_info"] else ""
    holder = ("another user" if caller not in (None, r["user_name"])
              else f"{r['user_name'] or '?'}@{r['host'] or '?'}")
    return (f"lock {r['ext_id']}.{r['int_id']} {LockType(r['lock_type']).name} on {_scope(r)} "
            f"held by {holder} ({txn}{agent})")


async def lock_owners(conn: asyncpg.Connection, lock_ids: Sequence[int]) -> dict[int, str]:
    return {r["ext_id"]: r["user_name"] for r in await conn.fetch(sql.LOCK_OWNERS, list(lock_ids))}
