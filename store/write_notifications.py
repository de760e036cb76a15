"""Hive's write notifications: the files a txn's load wrote into a transactional table or partition
(add_write_notification_log and its batch form, sent by Hive's loadTable / loadPartition /
loadDynamicPartitions when hive.metastore.dml.events is on), kept per txn, table and partition and read
back by get_all_write_event_info: Hive's REPL DUMP adds them to a COMMIT_TXN's files, and Impala's event
processor reads them at each COMMIT_TXN to refresh what the txn wrote. Trimmed with the notification
log (hive.metastore.event.db.listener.timetolive). Not events: nothing is appended to the log.

As Hive's metastore: the table must exist and, when partitioned, the single call's partition too (the
batch call passes over partitions that do not exist); a second load of the same txn into the same place
adds its files, unless they are there already (a retry). Beyond Hive, which takes any ids: the txn must be
open and hold the write id for the table, so that a notification is never kept for a write that cannot
commit, or under another txn's id.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import asyncpg

from hive.names import make_partition_name
from hive.repl_files import FILE_SEPARATOR
from store import catalog, codec, txns
from store.errors import FailedPrecondition, InvalidArgument, NotFound
from store.events import Outcome
from store.models import Partition, Table
from store.sql import catalog as catalog_sql
from store.sql import write_notifications as sql


@dataclass(frozen=True, slots=True)
class WriteNotification:
    """One load's files (each encoded as Hive encodes it: hive/repl_files.py) under a txn and its write id
    of the table, into the partition of `partition_values` (None: the table's own)."""

    txn_id: int
    write_id: int
    partition_values: tuple[str, ...] | None
    files: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class WriteEventInfo:
    """A logged notification as get_all_write_event_info answers it."""

    write_id: int
    db_name: str
    table_name: str
    part_name: str  # '' for a table's own
    table: Table
    partition: Partition | None
    files: tuple[str, ...]


async def record(conn: asyncpg.Connection, db_name: str, table_name: str, notifications: Sequence[WriteNotification],
                 *, skip_missing_partitions: bool) -> Outcome[None]:
    """Keep the notifications, all or none. A partition that does not exist is NotFound, or passed over
    with `skip_missing_partitions` (the batch call's rule)."""
    table = await catalog.get_table(conn, db_name, table_name, lock="share")
    if not table.is_acid:
        raise InvalidArgument(f"{table.full_name} is not transactional: its loads are fired as insert events "
                              "(fire_listener_event), not written to the write notification log")
    for txn_id, write_id in dict.fromkeys((note.txn_id, note.write_id) for note in notifications):
        await _check_txn(conn, table, txn_id, write_id)
    for note in notifications:
        partition = None
        part_name = ""
        if table.partition_keys:
            part_name = make_partition_name(table.partition_keys, note.partition_values or ())
            row = await conn.fetchrow(catalog_sql.SELECT_LATEST_PARTITIONS_BY_NAMES, table.table_id, [part_name])
            if row is None:
                if skip_missing_partitions:
                    continue
                raise NotFound(f"partition {part_name} of {table.full_name} does not exist")
            partition = codec.partition_from_row(table.db_name, table.name, row)
        await conn.execute(sql.UPSERT, note.txn_id, note.write_id, table.db_name, table.name, part_name,
                           codec.table_to_json(table),
                           codec.partition_to_json(partition) if partition is not None else None,
                           list(note.files), FILE_SEPARATOR)
    return Outcome(None)


async def _check_txn(conn: asyncpg.Connection, table: Table, txn_id: int, write_id: int) -> None:
    holder = await txns.txn_of_write_id(conn, table.table_id, write_id)
    if holder is None or holder[0] != txn_id:
        raise InvalidArgument(f"write id {write_id} of {table.full_name} is not txn {txn_id}'s "
                              "(allocate_table_write_ids allocates one)")
    if holder[1] != txns.OPEN:
        raise FailedPrecondition(f"txn {txn_id} is no longer open: its write notification was not kept")


async def event_infos(conn: asyncpg.Connection, txn_id: int, db_name: str | None,
                      table_name: str | None) -> list[WriteEventInfo]:
    """A txn's notifications, of one database and table when named ('*' or None: any), by database, table
    and partition name."""
    rows = await conn.fetch(sql.SELECT_OF_TXN, txn_id, _name_or_any(db_name), _name_or_any(table_name))
    return [_info(r) for r in rows]


def _name_or_any(name: str | None) -> str | None:
    return None if name is None or name == "*" else name.lower()


def _info(row: Any) -> WriteEventInfo:
    table = codec.table_from_json(row["table_obj"])
    partition = (codec.partition_from_json(table.db_name, table.name, row["partition_obj"])
                 if row["partition_obj"] is not None else None)
    return WriteEventInfo(row["write_id"], row["db_name"], row["tbl_name"], row["part_name"], table, partition,
                          tuple(row["files"]))
