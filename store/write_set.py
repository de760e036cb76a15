"""Hive's write-set (hive-reference §5.2): what open txns update or delete, compared at commit.

Two txns may update the same partition at once: their SHARED_WRITE locks are compatible (Hive 4's
matrix, hive/lock_rules.py). Each writes delete and insert deltas for the rows its snapshot read, so
the second to commit must fail, or it would undo the first's changes (a lost update): the commit
function (store/schema/0013_write_set.sql) aborts a txn when another txn that committed after it
started updated or deleted one of its partitions. A txn's targets come from its lock request
(hive/lock_rules.write_set_entries) and, for a dynamic-partition write, from the partitions its
client names afterwards here. Functions take a connection inside the caller's transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import asyncpg

from hive import limits, names
from hive.lock_rules import DataOperationType
from store import codec, txns
from store.errors import InvalidArgument, NotFound
from store.models import FieldSchema
from store.sql import catalog as catalog_sql
from store.sql import write_set as sql

# Hive's default when the client names no operation: an update, the most restrictive.
_ENTRY_OPERATIONS = {DataOperationType.UPDATE: "u", DataOperationType.DELETE: "d", DataOperationType.UNSET: "u"}


@dataclass(frozen=True, slots=True)
class DynamicPartitions:
    """Hive's AddDynamicPartitions: the partitions txn `txn_id` wrote to a table whose lock named
    only the table."""

    txn_id: int
    write_id: int  # 0: not given (the txn's own on the table is used)
    db_name: str
    table_name: str
    partition_names: tuple[str, ...]
    operation: DataOperationType = DataOperationType.UNSET


async def add_dynamic_partitions(conn: asyncpg.Connection, request: DynamicPartitions,
                                 max_partitions: int) -> list[str]:
    """Record the partitions a txn's dynamic-partition write touched (Hive's addDynamicPartitions):
    an update or delete puts them in the txn's write-set in place of its table's entry; an insert
    only removes that entry (inserts conflict with nothing). The txn must be open and hold the write
    id on the table; names must fit the table's partition keys (the partitions need not exist yet:
    clients add them before or after). Returns the canonical names recorded."""
    if len(request.partition_names) > max_partitions:
        raise InvalidArgument(f"add_dynamic_partitions names {len(request.partition_names)} partitions, more than "
                              f"metastore.gateway.max.lock.components ({max_partitions}); send them in several "
                              "calls")
    if request.operation in (DataOperationType.SELECT, DataOperationType.NO_TXN):
        raise InvalidArgument(f"add_dynamic_partitions records writes: its operation must be INSERT, UPDATE or "
                              f"DELETE, not {request.operation.value}")
    db_name = names.normalize_identifier(request.db_name, "database")
    table_name = names.normalize_identifier(request.table_name, "table")
    await txns.require_open(conn, [request.txn_id])
    row = await conn.fetchrow(catalog_sql.SELECT_LATEST_TABLE, db_name, table_name)
    if row is None:
        raise NotFound(f"table {db_name}.{table_name} does not exist; nothing was recorded for txn {request.txn_id}")
    table = codec.table_from_row(row)
    if not table.is_acid or not table.partition_keys:
        raise InvalidArgument(f"table {table.full_name} is not a partitioned transactional table: "
                              "add_dynamic_partitions names the partitions a txn wrote to one")
    held = await txns.write_id_of(conn, request.txn_id, table.table_id)
    if not held:
        raise InvalidArgument(f"txn {request.txn_id} holds no write id on {table.full_name}: allocate one "
                              "(allocate_table_write_ids) before writing, then name the partitions written")
    if request.write_id and request.write_id != held:
        raise InvalidArgument(f"write id {request.write_id} is not txn {request.txn_id}'s on {table.full_name} "
                              f"(it holds {held})")
    partitions = _canonical_names(table.partition_keys, request.partition_names)
    operation = _ENTRY_OPERATIONS.get(request.operation)
    await conn.execute(sql.REPLACE_TABLE_ENTRY_WITH_PARTITIONS, request.txn_id, db_name, table_name,
                       partitions if operation else [], operation or "u")
    return partitions


def _canonical_names(keys: Sequence[FieldSchema], partition_names: Sequence[str]) -> list[str]:
    out: dict[str, None] = {}
    for i, name in enumerate(partition_names):
        try:
            out[names.canonical_partition_name(keys, name)] = None
        except InvalidArgument as exc:
            raise InvalidArgument(f"partitionnames[{i}] {limits.preview(name)}: {exc}") from None
    return list(out)


async def latest_txn_in_conflict(conn: asyncpg.Connection, txn_id: int) -> int:
    """Hive 4's getLatestTxnIdInConflict, which its Driver asks once it holds an exclusive lock, to
    learn whether its snapshot is still good: the largest txn that updated or deleted one of this
    txn's update or delete targets and committed after this txn began (the write-set conflict its
    commit would meet); 0 when none (also for a txn that is not open: it has no components)."""
    return int(await conn.fetchval(sql.LATEST_TXN_IN_CONFLICT, txn_id) or 0)


async def gc(conn: asyncpg.Connection) -> int:
    """Hive's performWriteSetGC: delete committed entries no open txn can conflict with."""
    status = await conn.execute(sql.GC_WRITE_SET)
    return int(status.split()[-1])
