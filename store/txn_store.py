"""Transactions as the gateway sees them: one method per operation, each one database transaction."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Collection, NoReturn, Sequence

import asyncpg

from store import txns, write_set
from store.db import Database
from store.group_commit import MAX_BATCH, GroupCommit
from store.errors import InvalidArgument, ResourceExhausted, StoreError, Unavailable, WriteConflict
from store.events import Written
from store.txns import AllocateRequest, OpenRequest, TableWriteIds, TxnInfo
from store.write_set import DynamicPartitions
from hive.writeids import ValidTxnList


@dataclass(frozen=True, slots=True)
class TxnLimits:
    max_open_batch: int = 1000  # hive.txn.max.open.batch
    max_open_txns: int = 100000  # hive.max.open.txns
    group_commit_max: int = MAX_BATCH  # metastore.gateway.txn.group.commit.max (1: no group commit)


class OpenTxnCounter:
    """Hive's AcidOpenTxnsCounterService: a count of open txns refreshed periodically, with 90%
    hysteresis: once the ceiling is reached, opens are refused until the count falls below 90%."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.count = 0
        self.refusing = False

    def update(self, count: int) -> None:
        self.count = count
        if count >= self.limit:
            self.refusing = True
        elif count < 0.9 * self.limit:
            self.refusing = False

    def check(self) -> None:
        if self.refusing:
            raise ResourceExhausted(
                f"Maximum allowed number of open transactions ({self.limit}, hive.max.open.txns) has been reached "
                f"({self.count} open); commit or abort transactions, or wait for the time-out reaper"
            )


async def abort_for_conflict(db: Database, conflict: WriteConflict) -> NoReturn:
    """Hive's write-conflict rule: the writer's txn is aborted (its writes discarded, its locks
    released, its CommitTxn answers ABORTED), then the conflict raised. Runs after the failed write's
    or commit's own transaction rolled back. When the abort fails too (the database went away), the
    caller learns the txn may still be open."""
    try:
        await db.transact(txns.abort_txns, [conflict.txn_id], reason=f"write conflict: {conflict}")
    except Unavailable as exc:
        raise Unavailable(f"{conflict}; aborting txn {conflict.txn_id} failed ({exc}): abort it, then retry in a "
                          "new txn") from exc
    except StoreError:  # it ended meanwhile (a concurrent commit or abort of the same txn)
        raise conflict from None
    raise WriteConflict(f"{conflict}; txn {conflict.txn_id} was aborted (Hive's write-conflict rule): retry in a "
                        "new txn", conflict.txn_id) from conflict


class TxnStore:
    def __init__(self, db: Database, limits: TxnLimits) -> None:
        self._db = db
        self._limits = limits
        self.open_counter = OpenTxnCounter(limits.max_open_txns)
        # Opens, commits and allocations each append an event, so each waits for the sequence row:
        # concurrent calls of one kind share a statement and a WAL flush (store/group_commit.py).
        batch = limits.group_commit_max
        self._opens: GroupCommit[OpenRequest, Written[list[int]]] = GroupCommit(
            lambda request: db.run(txns.open_txns_logged, request),
            lambda requests: db.run(txns.open_txns_batch_logged, requests),
            max_batch=batch, weight=lambda request: request.count)
        self._commits: GroupCommit[int, Written[txns.WrittenTables]] = GroupCommit(
            lambda txn_id: db.run(txns.commit_txn_logged, txn_id),
            lambda txn_ids: db.run(txns.commit_txns_logged, txn_ids), max_batch=batch)
        self._allocations: GroupCommit[AllocateRequest, Written[dict[int, int]]] = GroupCommit(
            lambda request: db.run(txns.allocate_table_write_ids_logged, request),
            lambda requests: db.run(txns.allocate_table_write_ids_batch_logged, requests),
            max_batch=batch, weight=lambda request: len(request.txn_ids))

    def group_commit_stats(self) -> dict[str, tuple[int, int]]:
        """Per call kind: batches of two or more calls run, and the calls in them."""
        return {name: (group.batches, group.batched_items) for name, group in
                (("OpenTxns", self._opens), ("AllocateTableWriteIds", self._allocations), ("CommitTxn", self._commits))}

    async def open_txns(self, count: int, *, user: str, host: str, agent_info: str,
                        txn_type: int = txns.DEFAULT_TXN_TYPE) -> tuple[list[int], int]:
        """`count` txns of Hive 4's kind `txn_type` (TxnType; a READ_ONLY one takes no write ids, and
        Hive 4 clients leave READ_ONLY txns out of their snapshots), and the OPEN_TXN event's id."""
        if count <= 0:
            raise InvalidArgument(f"num_txns must be at least 1, got {count}")
        if count > self._limits.max_open_batch:
            raise ResourceExhausted(
                f"{count} txns in one OpenTxns call, more than hive.txn.max.open.batch ({self._limits.max_open_batch})"
            )
        self.open_counter.check()
        txns.check_client_identity(user, host, agent_info)
        if txn_type not in txns.TXN_TYPES:
            raise InvalidArgument(f"txn_type {txn_type} is not one of Hive's TxnType values: "
                                  + ", ".join(f"{v} ({k})" for k, v in txns.TXN_TYPES.items()))
        written = await self._opens.submit(OpenRequest(count, user, host, agent_info, txn_type))
        return written.value, written.event_id

    async def refresh_open_count(self) -> int:
        count = await self._db.read(txns.count_open_txns)
        self.open_counter.update(count)
        return count

    async def commit(self, txn_id: int) -> tuple[int, txns.WrittenTables]:
        """The COMMIT_TXN event's id (0 when the txn was committed already) and the tables whose writes
        it made visible. A txn that loses the write-set check (store/write_set.py) is aborted, and the
        commit answers ABORTED."""
        try:
            committed = await self._commits.submit(txn_id)
        except WriteConflict as conflict:
            await abort_for_conflict(self._db, conflict)
        return committed.event_id, committed.value

    async def add_dynamic_partitions(self, request: DynamicPartitions, max_partitions: int) -> list[str]:
        return await self._db.transact(write_set.add_dynamic_partitions, request, max_partitions)

    async def abort(self, txn_ids: Sequence[int], reason: str = "aborted by the client", *,
                    skip_ended: bool = False) -> list[int]:
        """The ABORT_TXN events' ids, one per txn that was open; `skip_ended`: committed and unknown
        txns are skipped instead of failing the call (store/txns.py abort_txns)."""
        return list((await self._db.transact(txns.abort_txns, txn_ids, reason=reason,
                                             skip_ended=skip_ended)).event_ids)

    async def heartbeat(self, txn_ids: Sequence[int]) -> tuple[list[int], list[int]]:
        return await self._db.transact(txns.heartbeat, txn_ids)

    async def get_open_txns(self, current_txn: int = 0, exclude_types: Collection[int] = ()) -> ValidTxnList:
        return await self._db.read(txns.get_open_txns, current_txn, exclude_types)

    async def allocate_write_ids(self, txn_ids: Sequence[int], db_name: str, table_name: str) -> dict[int, int]:
        """Each txn's write id of the table; for a name no table has yet (in a database that exists), of the
        name: reserved until a table of that name is created (txns.reserve_write_ids), as Hive allocates."""
        request = txns.allocate_request(db_name, table_name, txn_ids)
        for _ in range(2):  # a table created between the allocation and the reservation: allocate again
            try:
                return (await self._allocations.submit(request)).value
            except txns.NoTableYet:
                reserved = await self._db.transact(txns.reserve_write_ids, request)
                if reserved is not None:
                    return reserved
        return (await self._allocations.submit(request)).value

    async def get_valid_write_ids(self, full_table_names: Sequence[str], txn_list: ValidTxnList, *,
                                  missing_ok: bool = False) -> list[TableWriteIds]:
        """Each table's write ids in the snapshot, in the order named; `missing_ok`: a name no table
        has in the snapshot is answered as Hive does (txns.write_ids_by_name), not NotFound."""
        async def run(conn: asyncpg.Connection) -> list[TableWriteIds]:
            await txns.check_txn_list_not_too_old(conn, txn_list)
            out = []
            for full_name in full_table_names:
                db_name, table_name = txns.split_full_name(full_name)
                out.append(await txns.write_ids_by_name(conn, db_name, table_name, txn_list, missing_ok=missing_ok))
            return out

        return await self._db.read(run)

    async def latest_txn_in_conflict(self, txn_id: int) -> int:
        return await self._db.read(write_set.latest_txn_in_conflict, txn_id)

    async def txn_list_of_write_id(self, full_table_name: str, write_id: int) -> ValidTxnList:
        """The snapshot of the txn holding the table's write id (txns.txn_list_of_write_id)."""
        return await self._db.read(txns.txn_list_of_write_id, full_table_name, write_id)

    async def show_transactions(self, state: str = "") -> list[TxnInfo]:
        return await self._db.read(txns.show_transactions, state)

    async def max_allocated_write_id(self, db_name: str, table_name: str) -> int:
        return await self._db.read(txns.max_allocated_write_id, db_name, table_name)

    async def seed_write_id(self, db_name: str, table_name: str, seed: int) -> int:
        """The WRITE_IDS_SEEDED event's id (txns.seed_write_id)."""
        return (await self._db.transact(txns.seed_write_id, db_name, table_name, seed)).event_id

    async def seed_txn_id(self, seed: int) -> None:
        await self._db.transact(txns.seed_txn_id, seed)

    async def txn_of_write_id(self, table_id: int, write_id: int) -> tuple[int, str | None] | None:
        """The txn holding a table's write id and its state (Hive 4's writes name the write id, not the txn):
        one statement, so one round trip (a Thrift write that names a write id asks it first)."""
        return await self._db.run(txns.txn_of_write_id, table_id, write_id)

    async def owners(self, txn_ids: Sequence[int]) -> dict[int, str]:
        """The user each existing txn was opened by (txns already cleaned away are left out); one statement."""
        return await self._db.run(txns.txn_owners, txn_ids)
