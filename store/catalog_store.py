"""The catalog as the gateway sees it: one method per operation, each one database transaction.

Writes run in `Database.transact` (bounded retry on serialization failures; it appends the events
a write returns and answers their ids: each method passes on the last one, 0 when nothing changed); reads that touch
several rows run in one REPEATABLE READ snapshot so a table and its partitions are consistent.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Generic, Mapping, Sequence, TypeVar

import asyncpg

from store import (catalog, column_stats, constraints, dml_events, events, functions, partition_events, privileges,
                   txn_waits, write_notifications)
from store.txns import WrittenTables
from store.txn_ends import TxnEnds
from store.db import Database
from store.errors import StoreError, Unavailable, WriteConflict
from store.sql import txns as txn_sql
from hive.backoff import Backoff
from hive.clock import SYSTEM_CLOCK, Clock
from store.txn_store import abort_for_conflict
from store.events import Outcome, Written
from store.models import Database as DatabaseModel
from store.models import Function as FunctionModel
from store.models import NotificationEvent, Partition, Table, TableSummary
from hive.column_stats import ColumnStats
from hive.stats_accuracy import AlterContext
from hive.names import check_whitelisted
from hive.privileges import PrivilegeGrant
from hive.partition_filter import PARTITION_FILTER, Dialect, parse_filter
from hive.table_filter import parse_table_filter
from store.snapshot import ReadSnapshot


T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Read(Generic[T]):
    """A database read and the log position of the snapshot it came from. `latest` says it answered
    the latest state (a non-transactional table, a database, or a caller that brought no snapshot): a
    cache that has not applied `seen_event_id` yet holds an older state, which this gateway must not
    show after this answer (monotonic reads)."""

    value: T
    seen_event_id: int
    latest: bool


# Polling a txn's end: soon at first (the usual creator is a writer about to commit), then at most once a second.
_TXN_END_POLL = Backoff(initial_s=0.02, max_s=1.0)


async def _txn_state(conn: asyncpg.Connection, txn_id: int) -> str | None:
    """'o', 'c', 'a', or None once housekeeping forgot the txn (it ended long ago)."""
    row = await conn.fetchrow(txn_sql.SELECT_TXN_STATES, [txn_id])
    return None if row is None else str(row["state"])


class CatalogStore:
    def __init__(self, db: Database, *, warehouse_dir: str, check_column_types: bool = True,
                 partition_values: re.Pattern[str] | None = None, creator_wait_s: float = 300.0,
                 clock: Clock = SYSTEM_CLOCK, txn_ends: TxnEnds | None = None) -> None:
        self._db = db
        # Told by the poller when a txn ends, so a wait for it need not sleep out its pause.
        self.txn_ends = txn_ends if txn_ends is not None else TxnEnds()
        # How long an add waits for an open txn that added the same partition (hive.txn.timeout:
        # a creator that stopped heartbeating is aborted by then, so the wait ends either way).
        self._creator_wait_s = creator_wait_s
        self._clock = clock
        self._unregistering: set[asyncio.Future[None]] = set()  # clean-ups that outlive a cancelled call
        self._warehouse_dir = warehouse_dir
        self._check_column_types = check_column_types  # hive.metastore.disallow.incompatible.col.type.changes
        self._partition_values = partition_values  # hive.metastore.partition.name.whitelist.pattern

    def check_partition_values(self, values: Sequence[str]) -> None:
        """Hive's whitelist of partition values (hive/names.py), for adds, renames and clients that ask first."""
        check_whitelisted(values, self._partition_values)

    @property
    def database(self) -> Database:
        """The pool, for adapters that compose their own store calls (the Thrift compaction methods)."""
        return self._db

    async def _write(self, fn: Callable[..., Awaitable[Outcome[T]]], *args: Any, **kwargs: Any) -> Written[T]:
        """`Database.transact`, and Hive's conflict rule: a write-write conflict aborts the writer's
        txn (abort_for_conflict). A write that found a partition another txn is adding (an add, a
        rename or an exchange into its name) runs again once that txn ended, within the wait."""
        started = self._clock.monotonic()
        while True:
            try:
                return await self._db.transact(fn, *args, **kwargs)
            except catalog.CreatorInFlight as busy:
                await self._wait_for_creator(busy, started + self._creator_wait_s)
            except WriteConflict as conflict:
                if not conflict.txn_id:
                    raise
                await abort_for_conflict(self._db, conflict)

    # databases
    async def create_database(self, database: DatabaseModel,
                              make_locations: catalog.MakeLocations | None = None) -> tuple[DatabaseModel, int]:
        written = await self._db.transact(catalog.create_database, database, self._warehouse_dir, make_locations)
        return written.value, written.event_id

    async def create_default_database(self) -> bool:
        """Create Hive's `default` database unless it exists (each gateway at start); True if created."""
        written = await self._db.transact(catalog.create_default_database, self._warehouse_dir)
        return written.value is not None

    async def get_database(self, name: str) -> Read[DatabaseModel]:
        async def read(conn: asyncpg.Connection) -> Read[DatabaseModel]:
            return Read(await catalog.get_database(conn, name), await events.current_event_id(conn), True)

        return await self._db.read(read)

    async def list_databases(self, pattern: str) -> list[str]:
        return await self._db.read(catalog.list_databases, pattern)

    async def alter_database(self, name: str, database: DatabaseModel, *,
                             caller: str | None = None) -> tuple[DatabaseModel, int]:
        written = await self._db.transact(catalog.alter_database, name, database, caller=caller)
        return written.value, written.event_id

    async def drop_database(self, name: str, *, cascade: bool, if_exists: bool,
                            caller: str | None = None) -> tuple[catalog.DroppedDatabase | None, int]:
        written = await self._db.transact(catalog.drop_database, name, cascade=cascade, if_exists=if_exists,
                                          caller=caller)
        return written.value, written.event_id

    # tables
    async def create_table(self, table: Table, grants: Sequence[PrivilegeGrant] = (),
                           make_locations: catalog.MakeLocations | None = None,
                           stats: Sequence[column_stats.StatsUpdate] = (),
                           constraints_sent: Sequence[constraints.ConstraintColumn] = ()) -> tuple[Table, int]:
        """The table, with the grants on it its creator sends (store/privileges.py), the statistics and the
        constraints (store/constraints.py) sent with it, all or nothing."""
        now_s = int(time.time())

        async def create(conn: asyncpg.Connection) -> Outcome[Table]:
            created = (await privileges.create_table_with_grants(conn, table, grants, now_s, make_locations)
                       if grants else await catalog.create_table(conn, table, make_locations))
            if constraints_sent:
                added = await constraints.add_constraints(conn, constraints_sent, created=created.value)
                created = Outcome(created.value, (*created.events, *added.events))
            return await column_stats.written_with(conn, created, stats, now_s)

        written = await self._write(create)
        return written.value, written.event_id

    async def get_table(self, db_name: str, table_name: str, snapshot: ReadSnapshot) -> Read[Table]:
        async def read(conn: asyncpg.Connection) -> Read[Table]:
            resolved = await catalog.resolve_table(conn, db_name, table_name, snapshot)
            return Read(resolved.table, await events.current_event_id(conn), resolved.latest)

        return await self._db.read(read)

    async def latest_table(self, db_name: str, table_name: str) -> Table:
        """The table's latest version, as a write to it reads it (versions of open txns included): one
        statement, where a snapshot read takes several. For a write's own preparation (the txn of its
        write id, the shape of its answer); the write itself reads the table again in its transaction."""
        return await self._db.run(catalog.get_table, db_name, table_name)

    async def list_tables(self, db_name: str, pattern: str, table_type: str | None = None) -> list[str]:
        return await self._db.read(catalog.list_tables, db_name, pattern, table_type)

    async def list_table_summaries(self, db_pattern: str, table_pattern: str,
                                   table_types: Sequence[str] = ()) -> list[TableSummary]:
        return await self._db.read(catalog.list_table_summaries, db_pattern, table_pattern, table_types)

    async def list_table_names_by_filter(self, db_name: str, filter_text: str, limit: int | None) -> list[str]:
        return await self._db.read(catalog.list_table_names_by_filter, db_name, parse_table_filter(filter_text), limit)

    @property
    def check_column_types(self) -> bool:
        """hive.metastore.disallow.incompatible.col.type.changes, the alters' default (a call may say otherwise)."""
        return self._check_column_types

    async def alter_table(self, db_name: str, table_name: str, table: Table, txn_id: int = 0,
                          expected_table_id: int = 0, *, caller: str | None = None,
                          stats: AlterContext | None = None,
                          check_column_types: bool | None = None) -> tuple[Table, int]:
        written = await self._write(catalog.alter_table, db_name, table_name, table, txn_id, expected_table_id,
                                    check_column_types=self._column_check(check_column_types), caller=caller,
                                    stats=stats)
        return written.value, written.event_id

    async def commit_with_table_parameter(self, txn_id: int, table_id: int, key: str,
                                          value: str) -> tuple[int, WrittenTables]:
        """Hive 4's commit_txn with keyValue (catalog.commit_with_table_parameter): the commit's event id and
        the tables whose writes it made visible; a write-set conflict aborts the txn, as a commit's does."""
        written = await self._write(catalog.commit_with_table_parameter, txn_id, table_id, key, value)
        return written.event_id, written.value

    async def alter_table_cascade(self, db_name: str, table_name: str, table: Table, *, chunk: int,
                                  caller: str | None = None, stats: AlterContext | None = None,
                                  txn_id: int = 0, check_column_types: bool | None = None) -> tuple[Table, int]:
        """Hive's ALTER TABLE ... CASCADE: the partitions take the table's new columns (catalog.alter_table_cascade)."""
        written = await self._write(catalog.alter_table_cascade, db_name, table_name, table, chunk=chunk,
                                    check_column_types=self._column_check(check_column_types), caller=caller,
                                    stats=stats, txn_id=txn_id)
        return written.value, written.event_id

    async def rename_table_relocating(self, db_name: str, table_name: str, table: Table,
                                      move_locations: catalog.MoveLocations | None = None, *,
                                      caller: str | None = None, stats: AlterContext | None = None,
                                      check_column_types: bool | None = None) -> tuple[Table, int]:
        written = await self._write(catalog.rename_table_relocating, db_name, table_name, table,
                                    check_column_types=self._column_check(check_column_types),
                                    move_locations=move_locations, caller=caller, stats=stats)
        return written.value, written.event_id

    def _column_check(self, check_column_types: bool | None) -> bool:
        return self._check_column_types if check_column_types is None else check_column_types

    async def drop_table(self, db_name: str, table_name: str, *, if_exists: bool, expected_table_id: int = 0,
                         caller: str | None = None) -> tuple[catalog.DroppedTable | None, int]:
        written = await self._db.transact(catalog.drop_table, db_name, table_name, if_exists=if_exists,
                                          expected_table_id=expected_table_id, caller=caller)
        return written.value, written.event_id

    # partitions
    async def add_partitions(
        self, db_name: str, table_name: str, parts: Sequence[Partition], *, if_not_exists: bool,
        expected_table_id: int = 0, txn_id: int = 0, make_locations: catalog.MakeLocations | None = None,
        check_answer: catalog.CheckAnswer | None = None, stats: Sequence[column_stats.StatsUpdate] = (),
    ) -> tuple[list[Partition], int]:
        """Add the partitions, with the statistics sent with them (all or nothing). An add under a txn that
        finds one of them added by another txn still open waits for that txn to end (committed: it exists;
        aborted: this add adds it), as two of Hive's INSERTs into one new partition both commit; past the
        wait, it is a write conflict (store/catalog.py `_check_concurrent_adds`)."""
        for part in parts:
            self.check_partition_values(part.values)
        now_s = int(time.time())

        async def add(conn: asyncpg.Connection) -> Outcome[list[Partition]]:
            added = await catalog.add_partitions(conn, db_name, table_name, parts, if_not_exists=if_not_exists,
                                                 expected_table_id=expected_table_id, txn_id=txn_id,
                                                 make_locations=make_locations, check_answer=check_answer)
            return await column_stats.written_with(conn, added, stats, now_s)

        written = await self._write(add)
        return written.value, written.event_id

    async def _wait_for_creator(self, busy: catalog.CreatorInFlight, until: float) -> None:
        """Wait for the txn that added the partition to end, registered in the wait graph; a wait that
        would be a deadlock, or one that outlasts `until`, is the write conflict (the writer's txn is
        aborted)."""
        bound_s = max(0.0, until - self._clock.monotonic())
        try:
            if not await self._db.transact(txn_waits.register, busy.txn_id, busy.holder, bound_s):
                await abort_for_conflict(self._db, busy.deadlock())
            ended = await self._wait_for_txn_end(busy.holder, until)
        finally:
            # Also when the call is cancelled (its deadline), even twice (the deadline's time-out and
            # gRPC's own cancellation): a wait left registered would make a later wait of the holder
            # for this txn look like a deadlock until its bound.
            done = asyncio.ensure_future(self._unregister(busy.txn_id, busy.holder))
            self._unregistering.add(done)
            done.add_done_callback(self._unregistering.discard)
            await asyncio.shield(done)
        if not ended:
            await abort_for_conflict(self._db, busy.conflict())

    async def finish_cleanups(self, timeout_s: float) -> None:
        """Wait, at most `timeout_s`, for the clean-ups cancelled calls left running (a wait's removal
        from the wait graph): a stop closes the pool after them, so no wait row outlives its gateway."""
        if self._unregistering:
            await asyncio.wait(list(self._unregistering), timeout=timeout_s)

    async def _unregister(self, waiter: int, holder: int) -> None:
        with contextlib.suppress(StoreError):  # else the row stops counting at the end of its bound
            await self._db.run(txn_waits.unregister, waiter, holder)

    async def _wait_for_txn_end(self, txn_id: int, until: float) -> bool:
        """Poll txn `txn_id`'s state until it is no longer open (True) or `until` passes (False); a pause
        ends early when the poller applies the txn's end (store/txn_ends.py)."""
        with self.txn_ends.watching(txn_id) as ended:
            for delay in _TXN_END_POLL.delays():
                if self.txn_ends.stopping:  # the writer's txn stays open: its client retries the write
                    raise Unavailable(f"the metastore gateway is stopping: this write was waiting for txn {txn_id} "
                                      "to end; retry it (on another gateway, or once this one is back)")
                state = await self._db.run(_txn_state, txn_id)
                if state != "o":
                    return True
                left = until - self._clock.monotonic()
                if left <= 0:
                    return False
                pause = asyncio.ensure_future(self._clock.sleep(min(delay, left)))
                try:
                    await asyncio.wait((pause, ended), return_when=asyncio.FIRST_COMPLETED)
                finally:
                    pause.cancel()
        raise AssertionError("unreachable: the delays never end")

    async def get_partitions_by_names(
        self, db_name: str, table_name: str, names: Sequence[str], snapshot: ReadSnapshot
    ) -> Read[tuple[Table, list[Partition]]]:
        """The table and its partitions of these names, as the snapshot sees them, from one read."""
        async def read(conn: asyncpg.Connection) -> Read[tuple[Table, list[Partition]]]:
            resolved = await catalog.resolve_table(conn, db_name, table_name, snapshot)
            parts = await catalog.get_partitions_by_names(conn, resolved, names)
            return Read((resolved.table, parts), await events.current_event_id(conn), resolved.latest)

        return await self._db.read(read)

    async def get_partitions_by_filter(
        self, db_name: str, table_name: str, filter_text: str, limit: int, snapshot: ReadSnapshot,
        dialect: Dialect = PARTITION_FILTER, after: str = "",
    ) -> Read[tuple[Table, list[Partition]]]:
        """The table and its partitions matching the filter (in that dialect: gRPC's or Hive's), as the
        snapshot sees them, from one read; those after the name `after` (a page's start)."""
        async def read(conn: asyncpg.Connection) -> Read[tuple[Table, list[Partition]]]:
            resolved = await catalog.resolve_table(conn, db_name, table_name, snapshot)
            catalog.require_partitioned(resolved.table)
            parts = await catalog.get_partitions_by_filter(
                conn, resolved, parse_filter(filter_text, resolved.table.partition_keys, dialect), limit, after)
            return Read((resolved.table, parts), await events.current_event_id(conn), resolved.latest)

        return await self._db.read(read)

    async def list_partitions(
        self, db_name: str, table_name: str, limit: int, snapshot: ReadSnapshot
    ) -> Read[tuple[Table, list[Partition]]]:
        """The table and every partition the snapshot sees, in name order (at most `limit` + 1)."""
        async def read(conn: asyncpg.Connection) -> Read[tuple[Table, list[Partition]]]:
            resolved = await catalog.resolve_table(conn, db_name, table_name, snapshot)
            parts = await catalog.list_partitions(conn, resolved, limit)
            return Read((resolved.table, parts), await events.current_event_id(conn), resolved.latest)

        return await self._db.read(read)

    async def list_partition_names(
        self, db_name: str, table_name: str, page_size: int, page_token: str, snapshot: ReadSnapshot
    ) -> Read[tuple[list[str], str]]:
        async def read(conn: asyncpg.Connection) -> Read[tuple[list[str], str]]:
            resolved = await catalog.resolve_table(conn, db_name, table_name, snapshot)
            page = await catalog.list_partition_names(conn, resolved, page_size, page_token)
            return Read(page, await events.current_event_id(conn), resolved.latest)

        return await self._db.read(read)

    async def alter_partitions(
        self, db_name: str, table_name: str, parts: Sequence[Partition], expected_table_id: int = 0, txn_id: int = 0,
        check_answer: catalog.CheckAnswer | None = None, stats: AlterContext | None = None,
    ) -> tuple[list[Partition], int]:
        written = await self._write(catalog.alter_partitions, db_name, table_name, parts, expected_table_id,
                                    txn_id, check_answer, stats)
        return written.value, written.event_id

    async def alter_partitions_in_chunks(self, db_name: str, table_name: str, parts: Sequence[Partition],
                                         chunk: int, txn_id: int = 0) -> tuple[list[Partition], int]:
        written = await self._write(catalog.alter_partitions_in_chunks, db_name, table_name, parts, chunk, txn_id)
        return written.value, written.event_id

    async def truncate(self, db_name: str, table_name: str, part_names: Sequence[str] | None, *, chunk: int,
                       txn_id: int, check: Callable[[Table], None],
                       empty_locations: catalog.MakeLocations) -> tuple[Table, int]:
        written = await self._write(catalog.truncate, db_name, table_name, part_names, chunk=chunk, txn_id=txn_id,
                                    check=check, empty_locations=empty_locations)
        return written.value, written.event_id

    async def drop_partitions(
        self, db_name: str, table_name: str, names: Sequence[str], *, if_exists: bool, expected_table_id: int = 0,
        txn_id: int = 0, whole: bool = False,
    ) -> tuple[catalog.DroppedPartitions, int]:
        written = await self._write(catalog.drop_partitions, db_name, table_name, names, if_exists=if_exists,
                                    expected_table_id=expected_table_id, txn_id=txn_id, whole=whole)
        return written.value, written.event_id

    async def rename_partition(self, db_name: str, table_name: str, old_name: str, new: Partition,
                               move_locations: catalog.MoveLocations | None = None,
                               stats: AlterContext | None = None) -> tuple[Partition, int]:
        self.check_partition_values(new.values)
        written = await self._write(catalog.rename_partition, db_name, table_name, old_name, new, move_locations,
                                    stats)
        return written.value, written.event_id

    async def exchange_partitions(self, source_db: str, source_name: str, dest_db: str, dest_name: str,
                                  names: Sequence[str], *, relocate: bool,
                                  move_locations: catalog.MoveLocations | None = None,
                                  specification: str = "") -> tuple[list[Partition], int]:
        written = await self._write(catalog.exchange_partitions, source_db, source_name, dest_db, dest_name, names,
                                    relocate=relocate, move_locations=move_locations, specification=specification)
        return written.value, written.event_id

    # column statistics (store/column_stats.py: not versioned, not cached; a write's events mark them accurate)
    async def update_column_stats(self, updates: Sequence[column_stats.StatsUpdate]
                                  ) -> tuple[list[tuple[str, str]], int]:
        """The (database, table) names the writes altered, and the last event id (0: none)."""
        written = await self._db.transact(column_stats.update_all, updates, int(time.time()))
        return written.value, written.event_id

    async def delete_column_stats(self, db_name: str, table_name: str, part_name: str | None,
                                  column: str | None) -> None:
        await self._db.transact(column_stats.delete, db_name, table_name, part_name, column)

    async def delete_many_column_stats(self, db_name: str, table_name: str, part_names: Sequence[str],
                                       columns: Sequence[str], *, table_level: bool) -> None:
        await self._db.transact(column_stats.delete_many, db_name, table_name, part_names, columns,
                                table_level=table_level)

    # `snapshot`: the reader's ValidWriteIdList (store/snapshot.py `statistics_seen`); None: the committed ones
    async def table_column_stats(self, db_name: str, table_name: str, columns: Sequence[str],
                                 snapshot: ReadSnapshot | None = None) -> list[ColumnStats]:
        return await self._db.read(column_stats.table_stats, db_name, table_name, columns, snapshot)

    async def partition_column_stats(self, db_name: str, table_name: str, part_names: Sequence[str],
                                     columns: Sequence[str], snapshot: ReadSnapshot | None = None
                                     ) -> dict[str, list[ColumnStats]]:
        return await self._db.read(column_stats.partition_stats, db_name, table_name, part_names, columns, snapshot)

    async def aggregate_partition_column_stats(self, db_name: str, table_name: str, part_names: Sequence[str],
                                               columns: Sequence[str], snapshot: ReadSnapshot | None = None
                                               ) -> tuple[list[ColumnStats], int]:
        return await self._db.read(column_stats.aggregate_partition_stats, db_name, table_name, part_names, columns,
                                   snapshot)

    # table constraints (store/constraints.py: not versioned, not cached)
    async def add_constraints(self, rows: Sequence[constraints.ConstraintColumn]) -> int:
        return (await self._db.transact(constraints.add_constraints, rows)).event_id

    async def drop_constraint(self, db_name: str, table_name: str, name: str) -> int:
        return (await self._db.transact(constraints.drop_constraint, db_name, table_name, name)).event_id

    async def table_constraints(self, db_name: str, table_name: str,
                                kinds: Sequence[constraints.Kind]) -> list[constraints.ConstraintColumn]:
        return await self._db.read(constraints.table_constraints, db_name, table_name, kinds)

    async def foreign_keys(self, parent_db: str | None, parent_table: str | None, foreign_db: str | None,
                           foreign_table: str | None) -> list[constraints.ConstraintColumn]:
        return await self._db.read(constraints.foreign_keys, parent_db, parent_table, foreign_db, foreign_table)

    # permanent functions (store/functions.py: not versioned, not cached)
    async def create_function(self, function: FunctionModel) -> tuple[FunctionModel, int]:
        written = await self._db.transact(functions.create_function, function, int(time.time()))
        return written.value, written.event_id

    async def get_function(self, db_name: str, name: str) -> FunctionModel:
        return await self._db.read(functions.get_function, db_name, name)

    async def list_function_names(self, db_name: str, pattern: str) -> list[str]:
        return await self._db.read(functions.list_function_names, db_name, pattern)

    async def all_functions(self) -> list[FunctionModel]:
        return await self._db.read(functions.all_functions)

    async def alter_function(self, db_name: str, name: str, function: FunctionModel) -> tuple[FunctionModel, int]:
        written = await self._db.transact(functions.alter_function, db_name, name, function)
        return written.value, written.event_id

    async def drop_function(self, db_name: str, name: str) -> int:
        return (await self._db.transact(functions.drop_function, db_name, name)).event_id

    # notification log
    async def log_inserts(self, db_name: str, table_name: str, inserts: Sequence[dml_events.Insert]) -> tuple[int, ...]:
        """The INSERT events of loads into the table (store/dml_events.py); their ids, in order."""
        return (await self._db.transact(dml_events.log_inserts, db_name, table_name, inserts)).event_ids

    async def record_write_notifications(self, db_name: str, table_name: str,
                                         notifications: Sequence[write_notifications.WriteNotification], *,
                                         skip_missing_partitions: bool) -> None:
        """Hive's write notification log (store/write_notifications.py), all or none."""
        await self._db.transact(write_notifications.record, db_name, table_name, notifications,
                                skip_missing_partitions=skip_missing_partitions)

    async def mark_partition(self, db_name: str, table_name: str, spec: Mapping[str, str], event_type: int) -> None:
        await self._db.transact(partition_events.mark, db_name, table_name, spec, event_type)

    async def is_partition_marked(self, db_name: str, table_name: str, spec: Mapping[str, str], event_type: int,
                                  expiry_s: float) -> bool:
        return await self._db.read(partition_events.is_marked, db_name, table_name, spec, event_type, expiry_s)

    async def write_event_infos(self, txn_id: int, db_name: str | None,
                                table_name: str | None) -> list[write_notifications.WriteEventInfo]:
        return await self._db.read(write_notifications.event_infos, txn_id, db_name, table_name)

    async def current_event_id(self) -> int:
        return await self._db.read(events.current_event_id)

    async def count_events(self, after_event_id: int, db_name: str, up_to_event_id: int | None = None) -> int:
        return await self._db.read(events.count_events, after_event_id, db_name, up_to_event_id)

    async def next_events(self, last_event_id: int, max_events: int, which: events.EventFilter = events.EVERY_EVENT,
                          *, max_message_bytes: int) -> list[NotificationEvent]:
        return await self._db.read(events.next_events, last_event_id, max_events, which,
                                   max_message_bytes=max_message_bytes)
