"""Notification events in Hive's own JSON messages (`messageFormat` "json-0.2"), as Thrift's
get_next_notification answers them by default: what Hive's JSONMessageFactory (Hive 2.3) and
JSONMessageEncoder (Hive 3, 4: the same format with more fields) write, so that a client following
the log through Hive's message classes (`MessageFactory.getInstance().getDeserializer()`: Hive REPL,
Impala's catalogd event processor) reads each message into the objects the gateway's reads answer.

The log stores the gateway's own messages (store/events.py: gRPC's GetNextNotification and the
poller read those); this module rewrites each one as Hive's when a Thrift read answers it. Fields:
Hive 3/4's set, a superset of Hive 2.3's (whose deserializer ignores fields it does not know), with
Hive's names; the objects (`tableObjJson`, `partitionListJson`, `functionObjJson`, `dbJson`, ...) are
Thrift structs in TJSONProtocol's text (gateway/thrift/tjson.py), built by the same conversions the
reads use (gateway/thrift/convert.py); `timestamp` is the event's time in seconds; `server` and
`servicePrincipal` are "" (Hive writes its hive.metastore.uris and Kerberos principal, both unset
here), `files` and `partitionFiles` are empty lists (the gateway keeps no file lists).

Where Hive's message holds something the gateway's event does not, the decisions:

- The table of a partition event (ADD/ALTER/DROP_PARTITION: `tableObjJson`, and the partition keys
  that name `partitions`' key-value maps). The event holds the partitions only, so the table is read
  when the event is answered: the table as it is then (Hive's message holds it as it was at the
  event), taken only while it is still the table of the event (same table id): for a table since
  dropped or replaced, `tableObjJson` is left out (null) and the key-value maps are read from the
  partition names, which hold the keys in order. Impala's AddPartitionEvent needs the table object
  (checkNotNull); Hive's deserializer reads a message without one, and only getTableObj() fails.
- A partition's object before an ALTER_PARTITION (`partitionObjBeforeJson`): the event holds the
  partitions after it only, so the before object is the after object. The gateway logs a rename
  (rename_partition) as a DROP_PARTITION and an ADD_PARTITION, never as an ALTER_PARTITION, so the
  values (`keyValues`, what Impala compares to see a rename) never differ between the two.
- An ALTER_PARTITION of several partitions (alter_partitions) is one event in the gateway's log, where
  Hive 2.3 and 3 log one ALTER_PARTITION per partition: it is answered as one event of Hive 4's
  ALTER_PARTITIONS (JSONAlterPartitionsMessage: the table, the partitions' key-value maps and objects),
  which is what Hive 4's DbNotificationListener logs for alter_partitions. Not one ALTER_PARTITION per
  partition under the one id: Hive 3's and 4's HiveMetaStoreClient.getNextNotification throws
  IllegalStateException ("Notification events with duplicate event ids in the meta store") on an id
  seen twice, and on a gap. A client that knows only Hive 2.3's or 3's types skips ALTER_PARTITIONS as
  any type it does not know (Impala's event processor ignores one; it changes no partition's files).
- ALTER_DATABASE's database before the change: events logged since it was added to the gateway's
  message carry it (`database_before`); an older event's `dbObjBeforeJson` is its after object.
- INSERT (fire_listener_event: store/dml_events.py) is Hive 3's and 4's JSONInsertMessage (`replace`
  as "true" or "false", `ptnObjJson` the partition as it was when the event was fired, null for a
  table's own insert or a partition not yet added), with Hive 2.3's `partKeyVals` beside it. Each of
  `files` is written as ReplChangeManager.encodeFileUri writes it on a metastore without a change-
  management root: the path, `###`, and its ACID sub-directory if any (the checksum is left out, as
  there). The event's own message keeps the checksums as sent.
- Table constraints' events (ADD_PRIMARYKEY, ADD_FOREIGNKEY, ADD_UNIQUECONSTRAINT, ADD_NOTNULLCONSTRAINT: Hive 3's;
  ADD_DEFAULTCONSTRAINT, ADD_CHECKCONSTRAINT: Hive 4's; DROP_CONSTRAINT) are Hive's JSONAdd...Message (the
  constraints' structs, `primaryKeyListJson` ...) and JSONDropConstraintMessage (dbName, tableName,
  constraintName). Hive 2.3's deserializer has readers for the primary and foreign keys' and the drop's.
- The gateway's own event types (VERSIONS_GC, ABORTED_WRITES_FORGOTTEN, WRITE_IDS_SEEDED), which Hive has not, keep
  the gateway's message (`messageFormat` "metastore-gateway-json-1"): no Hive client reads them.

Transactions (OPEN_TXN, COMMIT_TXN, ABORT_TXN, ALLOC_WRITE_ID_EVENT) are Hive 3's messages: Hive 2.3
has none (its deserializer has no reader for them); COMMIT_TXN's write-event lists are null, as Hive
writes them unless replication of ACID tables asks (hive.repl...), and OPEN_TXN names its range
(`fromTxnId`, `toTxnId`, `txnIds` null) as Hive 3's TxnHandler does.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Sequence

from gateway.config import GATEWAY_EVENTS
from gateway.thrift import constraint_methods, convert
from gateway.thrift.idl import hms
from gateway.thrift.tjson import tjson
from hive.names import partition_spec_from_name
from hive.repl_files import encoded_files
from store import codec
from store import constraints
from store.constraints import KIND_OF_EVENT
from store.events import EVENT_ENVELOPE_BYTES, EventType, read_budget
from store.models import NotificationEvent, Partition, Table

log = logging.getLogger(__name__)

HIVE_FORMAT = "json-0.2"
ALTER_PARTITIONS = "ALTER_PARTITIONS"  # Hive 4's event type of an alter of several partitions
HEAD = {"server": "", "servicePrincipal": ""}

# A table read for a partition event: the table named, or None when there is none (dropped).
TableReader = Callable[[str, str], Awaitable[Table | None]]


@dataclass
class TableLookup:
    """The tables one response's partition events need, each read once (`read` raises nothing: a
    table it cannot find is None)."""

    read: TableReader
    _seen: dict[tuple[str, str], Table | None] = field(default_factory=dict)

    async def table_of(self, event: NotificationEvent) -> Table | None:
        key = (event.db_name, event.table_name)
        if key not in self._seen:
            self._seen[key] = await self.read(*key)
        table = self._seen[key]
        return table if table is not None and table.table_id == event.table_id else None


def _text(message: dict[str, Any]) -> str:
    """The message as Jackson writes it: compact, non-ASCII characters as they are."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"))


def _seconds(event: NotificationEvent) -> int:
    return event.event_time_ms // 1000


def _key_values(table: Table | None, partition_name: str, values: list[str] | tuple[str, ...]) -> dict[str, str]:
    """Hive's getPartitionKeyValues: the table's partition keys with the partition's values, in order;
    without the table, the keys its name holds."""
    if table is not None and len(table.partition_keys) == len(values):
        return {k.name: v for k, v in zip(table.partition_keys, values)}
    return partition_spec_from_name(partition_name)


def _table_fields(event: NotificationEvent, table: Table | None) -> dict[str, Any]:
    return {"db": event.db_name, "table": event.table_name,
            "tableType": table.table_type.value if table is not None else None,
            "tableObjJson": tjson(convert.table_to_thrift(table)) if table is not None else None}


_CONSTRAINT_LISTS = {EventType.ADD_PRIMARYKEY: "primaryKeyListJson", EventType.ADD_FOREIGNKEY: "foreignKeyListJson",
                     EventType.ADD_UNIQUECONSTRAINT: "uniqueConstraintListJson",
                     EventType.ADD_NOTNULLCONSTRAINT: "notNullConstraintListJson",
                     EventType.ADD_DEFAULTCONSTRAINT: "defaultConstraintListJson",
                     EventType.ADD_CHECKCONSTRAINT: "checkConstraintListJson"}


async def hive_message(event: NotificationEvent, tables: TableLookup) -> tuple[str, str] | None:
    """The event's type and message as Hive's (the type differs for an ALTER_PARTITION of several
    partitions: Hive 4's ALTER_PARTITIONS), or None for a type Hive has not (the gateway's message stays)."""
    hive = await _hive_fields(event, tables)
    return None if hive is None else (hive[0], _text(hive[1]))


async def _hive_fields(event: NotificationEvent, tables: TableLookup) -> tuple[str, dict[str, Any]] | None:
    """The event's type and the fields of its message as Hive writes them; None for a type Hive has not."""
    stored = json.loads(event.message)
    kind = event.event_type
    head = {**HEAD, "timestamp": _seconds(event)}
    if kind in (EventType.CREATE_DATABASE, EventType.DROP_DATABASE):
        db = codec.database_from_row(stored["database"])
        return kind, {**head, "cat": "hive", "db": db.name, "dbJson": tjson(convert.database_to_thrift(db))}
    if kind == EventType.ALTER_DATABASE:
        db_after = codec.database_from_row(stored["database"])
        db_before = codec.database_from_row(stored.get("database_before", stored["database"]))
        return kind, {**head, "db": db_before.name, "dbObjBeforeJson": tjson(convert.database_to_thrift(db_before)),
                      "dbObjAfterJson": tjson(convert.database_to_thrift(db_after))}
    if kind in (EventType.CREATE_TABLE, EventType.DROP_TABLE):
        table = codec.table_from_json(stored["table"])
        files: dict[str, Any] = {"files": []} if kind == EventType.CREATE_TABLE else {}
        return kind, {**head, "db": table.db_name, "table": table.name, "tableType": table.table_type.value,
                      "tableObjJson": tjson(convert.table_to_thrift(table)), **files}
    if kind == EventType.ALTER_TABLE:
        after = codec.table_from_json(stored["table"])
        before = codec.table_from_json(stored.get("table_before", stored["table"]))
        return kind, {**head, "db": before.db_name, "table": before.name, "tableType": before.table_type.value,
                      "tableObjBeforeJson": tjson(convert.table_to_thrift(before)),
                      "tableObjAfterJson": tjson(convert.table_to_thrift(after)), "locOwner": None,
                      "isTruncateOp": "false", "writeId": event.write_id}
    if kind == EventType.ADD_PARTITION:
        of = await tables.table_of(event)
        parts = [codec.partition_from_json(event.db_name, event.table_name, p) for p in stored["partitions"]]
        return kind, {**head, **_table_fields(event, of), "locOwner": None,
                      "partitions": [_key_values(of, p.name, p.values) for p in parts],
                      "partitionListJson": [_partition_json(of, p) for p in parts], "partitionFiles": []}
    if kind == EventType.ALTER_PARTITION:
        of = await tables.table_of(event)
        parts = [codec.partition_from_json(event.db_name, event.table_name, p) for p in stored["partitions"]]
        altered = {**head, "cat": "hive", **_table_fields(event, of), "isTruncateOp": "false",
                   "writeId": event.write_id}
        if len(parts) > 1:  # Hive 4's JSONAlterPartitionsMessage (module docstring)
            return ALTER_PARTITIONS, {**altered, "partitions": [_key_values(of, p.name, p.values) for p in parts],
                                      "partitionListJson": [_partition_json(of, p) for p in parts]}
        (p,) = parts
        return kind, {**altered, "keyValues": _key_values(of, p.name, p.values),
                      "partitionObjBeforeJson": _partition_json(of, p), "partitionObjAfterJson": _partition_json(of, p)}
    if kind == EventType.DROP_PARTITION:
        of = await tables.table_of(event)
        return kind, {**head, "cat": "hive", **_table_fields(event, of),
                      "partitions": [_key_values(None, n, ()) for n in stored["partition_names"]]}
    if kind == EventType.CREATE_FUNCTION:
        function = codec.function_from_json(stored["function"])
        return kind, {**head, "db": function.db_name, "functionObjJson": tjson(convert.function_to_thrift(function))}
    if kind == EventType.DROP_FUNCTION:
        function = codec.function_from_json(stored["function"])
        return kind, {**head, "db": function.db_name, "functionName": function.name}
    if kind in KIND_OF_EVENT:  # JSONAddPrimaryKeyMessage and its kin (Hive 3; default and check: Hive 4)
        rows = [constraint_methods.to_thrift(constraints.from_json(r)) for r in stored["constraints"]]
        return kind, {**head, _CONSTRAINT_LISTS[EventType(kind)]: [tjson(r) for r in rows]}
    if kind == EventType.DROP_CONSTRAINT:
        return kind, {**head, "dbName": stored["db_name"], "tableName": stored["table_name"],
                      "constraintName": stored["constraint_name"]}
    if kind == EventType.OPEN_TXN:
        return kind, {**head, "txnIds": None, "fromTxnId": min(stored["txn_ids"]), "toTxnId": max(stored["txn_ids"])}
    if kind == EventType.COMMIT_TXN:
        return kind, {**head, "txnid": stored["txn_id"], "writeIds": None, "databases": None, "tables": None,
                      "partitions": None, "tableObjs": None, "partitionObjs": None, "files": None}
    if kind == EventType.ABORT_TXN:
        return kind, {**head, "txnid": stored["txn_id"]}
    if kind == EventType.ALLOC_WRITE_ID:
        return kind, {**head, "dbName": event.db_name, "tableName": event.table_name, "txnIdList": stored["txn_ids"],
                      "writeIdList": stored["write_ids"]}
    if kind == EventType.INSERT:
        return kind, _insert_fields(event, stored, head, await tables.table_of(event))
    return None


def _insert_fields(event: NotificationEvent, stored: dict[str, Any], head: dict[str, Any],
                   of: Table | None) -> dict[str, Any]:
    """Hive 3's and 4's JSONInsertMessage, with Hive 2.3's partKeyVals beside it (module docstring)."""
    partition = (codec.partition_from_json(event.db_name, event.table_name, stored["partition"])
                 if stored.get("partition") else None)
    values = stored.get("partition_values") or []
    key_values = ({k.name: v for k, v in zip(of.partition_keys, values)} if of is not None and values
                  else _key_values(None, partition.name, ()) if partition is not None else {})
    files = encoded_files(stored["files"], stored.get("sub_directories") or [])
    return {**head, **_table_fields(event, of), "ptnObjJson": _partition_json(of, partition) if partition else None,
            "replace": "true" if stored["replace"] else "false", "files": files, "partKeyVals": key_values}


def stored_type_filter(skip: tuple[str, ...], only: tuple[str, ...] | None
                       ) -> tuple[tuple[str, ...], tuple[str, ...] | None]:
    """A request's event type filters (Hive's names, as answered) as filters of the log's stored types, so
    the log is read for no event the answer leaves out but ALTER_PARTITION's: one type is answered as two,
    ALTER_PARTITION or, of several partitions, ALTER_PARTITIONS, so it is filtered out in the log only when
    both are skipped, and kept in when either is wanted; `kept` then decides by the type answered."""
    both = {EventType.ALTER_PARTITION.value, ALTER_PARTITIONS}
    stored_skip = tuple(t for t in skip if t not in both) + ((EventType.ALTER_PARTITION,) if both <= set(skip) else ())
    stored_only = None if only is None else tuple(
        dict.fromkeys(EventType.ALTER_PARTITION.value if t == ALTER_PARTITIONS else t for t in only))
    return stored_skip, stored_only


def kept(answered_type: str, skip: tuple[str, ...], only: tuple[str, ...] | None) -> bool:
    """Whether an event answered as `answered_type` passes a request's type filters."""
    return answered_type not in skip and (only is None or answered_type in only)


def _partition_json(table: Table | None, p: Partition) -> str:
    """A partition's Thrift struct; without its table, one whose own columns are what it stores."""
    if table is None:
        table = Table(db_name=p.db_name, name=p.table_name)
    return tjson(convert.partition_to_thrift(table, p))


def _thrift_event(event: NotificationEvent, message: str, message_format: str, event_type: str = "") -> Any:
    return hms.NotificationEvent(
        eventId=event.event_id, eventTime=_seconds(event), eventType=event_type or event.event_type,
        dbName=event.db_name or None, tableName=event.table_name or None, message=message,
        messageFormat=message_format)


def gateway_events(events: Sequence[NotificationEvent]) -> list[Any]:
    """The events with the gateway's own messages (hive.metastore.event.message.factory
    metastore-gateway-json-1)."""
    return [_thrift_event(e, e.message, GATEWAY_EVENTS) for e in events]


async def hive_events(events: Sequence[NotificationEvent], read_table: TableReader,
                      max_message_bytes: int) -> list[Any]:
    """The events with Hive's messages, within what one response of `max_message_bytes` carries.
    Hive's form of a message is larger than the gateway's (it holds TJSON objects, and a partition
    event its table), and the store sized the read to the gateway's (store/events.py read_budget):
    the answer stops before an event whose Hive messages no longer fit (clients page by event id, so
    the rest comes next call), and an event whose Hive messages cannot fit even alone is answered with
    its gateway message, which always does (store/events.py largest_message), so that a read never fails
    on an event and never skips one. One event answers one event, with its id: ids stay consecutive."""
    budget = read_budget(max_message_bytes)
    tables = TableLookup(read_table)
    answered: list[Any] = []
    used = 0
    for event in events:
        hive = await _message_or_none(event, tables)
        if hive is None:
            converted = _thrift_event(event, event.message, GATEWAY_EVENTS)
        else:
            converted = _thrift_event(event, hive[1], HIVE_FORMAT, hive[0])
        cost = len(converted.message.encode()) + EVENT_ENVELOPE_BYTES
        if used + cost > budget:
            if answered:
                break
            converted = _thrift_event(event, event.message, GATEWAY_EVENTS)
            cost = len(event.message.encode()) + EVENT_ENVELOPE_BYTES
        answered.append(converted)
        used += cost
    return answered


async def _message_or_none(event: NotificationEvent, tables: TableLookup) -> tuple[str, str] | None:
    """`hive_message`, or None for an event whose stored message is not what this module reads (one
    written by an older gateway in another shape): it is answered with its gateway message, logged."""
    try:
        return await hive_message(event, tables)
    except (KeyError, ValueError, TypeError) as e:
        log.warning("notification event %d (%s): its message could not be written in Hive's format (%r); "
                    "answered in the gateway's", event.event_id, event.event_type, e)
        return None
