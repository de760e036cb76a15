"""Hive's DML notification events: what a client fires after it loaded files into a table or a partition
(fire_listener_event, sent by Hive's Hive.loadTable / loadPartition when hive.metastore.dml.events is on),
logged as INSERT events for the log's readers (Hive's REPL, Impala's event processor). An INSERT changes
no metadata: the poller passes over it, and nothing is versioned.

As Hive's metastore: the table must exist; a partition is named by its values in key order, and need not
exist yet (Hive 2.3's loadPartition fires before it adds a new partition; Hive 4's checks, and a client
of it fires after). The files are logged as sent, with their checksums and ACID sub-directories. Several
inserts fired in one call are logged in one transaction, all or none, each its own event.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import asyncpg

from hive.limits import preview
from hive.names import make_partition_name
from store import catalog, codec
from store.errors import InvalidArgument
from store.events import EventType, NewEvent, Outcome
from store.sql import catalog as sql


@dataclass(frozen=True, slots=True)
class Insert:
    """One load's files: into the partition of `partition_values` (None: the table's own), replacing
    what was there (`replace`) or added to it."""

    partition_values: tuple[str, ...] | None
    files: tuple[str, ...]
    checksums: tuple[str, ...] = ()  # one per file ("" where the file system gave none), or none at all
    sub_directories: tuple[str, ...] = ()  # one per file (its ACID directory), or none at all
    replace: bool = True
    successful: bool = True

    def __post_init__(self) -> None:
        for what, items in (("filesAddedChecksum", self.checksums), ("subDirectoryList", self.sub_directories)):
            if items and len(items) != len(self.files):
                raise InvalidArgument(f"an insert event's {what} has {len(items)} entries for {len(self.files)} "
                                      "files: send one per file, or none")
        if any(not f for f in self.files):
            raise InvalidArgument("an insert event names an empty file path")


async def log_inserts(conn: asyncpg.Connection, db_name: str, table_name: str,
                      inserts: Sequence[Insert]) -> Outcome[None]:
    """One INSERT event per insert, in order. The table's row is share-locked, so that a drop waits for
    this transaction and no event follows the table's DROP_TABLE."""
    if not inserts:
        raise InvalidArgument("fire_listener_event fires no insert event (insertDatas is empty)")
    table = await catalog.get_table(conn, db_name, table_name, lock="share")
    events = []
    for insert in inserts:
        partition = None
        values = insert.partition_values or None
        if values is not None:
            if not table.partition_keys:
                raise InvalidArgument(f"{table.full_name} is not partitioned, yet the insert event names partition "
                                      f"values ({preview(', '.join(values))})")
            name = make_partition_name(table.partition_keys, values)
            row = await conn.fetchrow(sql.SELECT_LATEST_PARTITIONS_BY_NAMES, table.table_id, [name])
            partition = codec.partition_from_row(table.db_name, table.name, row) if row is not None else None
        events.append(NewEvent(EventType.INSERT, table.db_name, table.name, table_id=table.table_id, message={
            "replace": insert.replace, "successful": insert.successful, "files": list(insert.files),
            "checksums": list(insert.checksums), "sub_directories": list(insert.sub_directories),
            "partition_values": list(values) if values is not None else None,
            "partition": codec.partition_to_json(partition) if partition is not None else None}))
    return Outcome(None, tuple(events))
