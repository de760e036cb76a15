"""Hive's partition events: a partition marked for an event (markPartitionForEvent; its one event type is
LOAD_DONE, sent by Paimon's mark-done action and HCatalog when a partition's load is complete), asked by
isPartitionMarkedForEvent. Not notification events: nothing is appended to the log, as Hive's
DbNotificationListener logs none for them.

As Hive's ObjectStore: the table must exist and the specification name each of its partition keys, no
other; the partition need not exist. A mark older than hive.metastore.event.expiry.duration (when set above
0) no longer counts. Beyond Hive, which keys the marks by the names: they are the table's, by its id, so they
follow a rename and go with a drop, where Hive's would be found again by a table re-created under the name.
"""

from __future__ import annotations

from typing import Mapping

import asyncpg

from hive.names import make_partition_name
from store import catalog
from store.errors import InvalidArgument
from store.models import Table
from store.sql import partition_events as sql

LOAD_DONE = 1  # Hive's PartitionEventType
EVENT_TYPES = {LOAD_DONE: "LOAD_DONE"}


class UnknownEventType(InvalidArgument):
    """An event type Hive's PartitionEventType has not (Hive's metastore fails on it: MetaException)."""


def _partition_name(table: Table, spec: Mapping[str, str]) -> str:
    """The partition's name from a specification naming each of the table's keys (by its name as stored:
    Hive's lookup is a map's), as Hive's ObjectStore.getPartitionStr checks it."""
    keys = table.partition_keys
    if len(spec) != len(keys):
        raise InvalidArgument(f"Number of partition columns in table: {len(keys)} doesn't match with number of "
                              f"supplied partition values: {len(spec)}")
    missing = [k.name for k in keys if spec.get(k.name) is None]
    if missing:
        raise InvalidArgument(f"No value found for partition column: {missing[0]}")
    return make_partition_name(keys, [spec[k.name] for k in keys])


def _check_event_type(event_type: int) -> None:
    if event_type not in EVENT_TYPES:
        raise UnknownEventType(f"eventType {event_type} is not one of Hive's PartitionEventType values: "
                              + ", ".join(f"{v} ({k})" for k, v in EVENT_TYPES.items()))


async def mark(conn: asyncpg.Connection, db_name: str, table_name: str, spec: Mapping[str, str],
               event_type: int) -> None:
    table = await catalog.get_table(conn, db_name, table_name, lock="share")
    name = _partition_name(table, spec)
    _check_event_type(event_type)  # checked last, as Hive's metastore meets it
    await conn.execute(sql.MARK, table.table_id, name, event_type)


async def is_marked(conn: asyncpg.Connection, db_name: str, table_name: str, spec: Mapping[str, str],
                    event_type: int, expiry_s: float) -> bool:
    table = await catalog.get_table(conn, db_name, table_name)
    name = _partition_name(table, spec)
    _check_event_type(event_type)
    return bool(await conn.fetchval(sql.IS_MARKED, table.table_id, name, event_type, expiry_s))
