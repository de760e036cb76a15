"""Appending to and reading the notification log.

Every change appends its events in the same database transaction, as its last step before commit:
taking ids locks the sequence row until the transaction ends, so the later it happens the shorter
writers queue on it (see store/sql/events.py for why ids are then in commit order). That order is
structural: a write returns an `Outcome` (its result and its events), and `Database.transact`
appends those events after the write returned, right before commit, and hands back `Written` (the
result and the event ids). The other way in is a write of one statement (store/sql/txns.py's
*_LOGGED queries, run by `Database.run`), whose last expression appends its event through the same
append_events function. Readers see events in id order with no gaps among committed ids.

Sizes: a client reads the log through one response of at most hive.metastore.server.max.message.size
bytes (gRPC's GetNextNotification, Thrift's get_next_notification), so a read answers fewer events
than asked when their messages would not fit (`read_budget`; Hive's clients page by event id and take
a shorter answer as it comes), and no event may carry a message larger than a read can answer alone
(`largest_message`): `append_events` logs a write's partitions (or names, or write ids) in several
events of its type when one would be too large, all in the one append, so they are still one write
to a reader that takes writes whole (the poller, last_of_write); an event that cannot be split
(a table, a database) refuses the write instead, as no reader could ever get past it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Generic, Sequence, TypeVar

import asyncpg

from hive.limits import NAME, check_text
from store.errors import InvalidArgument, ResourceExhausted
from store.models import NotificationEvent
from store.sql import events as sql

MAX_EVENTS_PER_READ = 10_000
# The session settings of a connection that reads the log again and again (the poller's): each read's
# generic plan is the primary key's index scan, yet once the log has grown PostgreSQL may find a plan
# for the call's own position cheaper and plan every read again (87 µs each under bench_txns' load).
LOG_READER_SETTINGS = {"plan_cache_mode": "force_generic_plan"}

# Hive's default hive.metastore.server.max.message.size: what a Database given none sizes events to.
DEFAULT_MAX_MESSAGE_BYTES = 100 * 1024 * 1024
# What one event adds to a response besides its message: its ids, time and type, its database and
# table names (NAME characters of up to 4 bytes each), Thrift's messageFormat, field tags and lengths.
EVENT_ENVELOPE_BYTES = 2048
# What a response adds besides its events: Thrift's message header (method name, sequence id), frame.
RESPONSE_ENVELOPE_BYTES = 512


class EventType(StrEnum):
    """Every event type the notification log holds: the one list producers (store/catalog.py,
    store/txns.py, store/housekeeping.py, store/aborted_writes.py) and consumers (the poller, tests)
    name them by. The values are the wire strings, stored in the log and sent to clients (Hive's
    names where Hive has the event); never change one. A `StrEnum`, so a member equals its string
    and a plain `str` read back from the log looks a member up by value (`EventType(row["event_type"])`)."""

    CREATE_DATABASE = "CREATE_DATABASE"
    ALTER_DATABASE = "ALTER_DATABASE"
    DROP_DATABASE = "DROP_DATABASE"
    CREATE_TABLE = "CREATE_TABLE"
    ALTER_TABLE = "ALTER_TABLE"
    DROP_TABLE = "DROP_TABLE"
    ADD_PARTITION = "ADD_PARTITION"
    ALTER_PARTITION = "ALTER_PARTITION"
    DROP_PARTITION = "DROP_PARTITION"
    CREATE_FUNCTION = "CREATE_FUNCTION"
    DROP_FUNCTION = "DROP_FUNCTION"  # an alter is a DROP_FUNCTION of the old and a CREATE_FUNCTION of the new
    # Table constraints (store/constraints.py), Hive 3's and 4's names: one event per kind added, the drop.
    ADD_PRIMARYKEY = "ADD_PRIMARYKEY"
    ADD_FOREIGNKEY = "ADD_FOREIGNKEY"
    ADD_UNIQUECONSTRAINT = "ADD_UNIQUECONSTRAINT"
    ADD_NOTNULLCONSTRAINT = "ADD_NOTNULLCONSTRAINT"
    ADD_DEFAULTCONSTRAINT = "ADD_DEFAULTCONSTRAINT"
    ADD_CHECKCONSTRAINT = "ADD_CHECKCONSTRAINT"
    DROP_CONSTRAINT = "DROP_CONSTRAINT"
    OPEN_TXN = "OPEN_TXN"
    COMMIT_TXN = "COMMIT_TXN"
    ABORT_TXN = "ABORT_TXN"
    ALLOC_WRITE_ID = "ALLOC_WRITE_ID_EVENT"
    INSERT = "INSERT"  # files loaded into a table or partition (store/dml_events.py): no metadata changes
    VERSIONS_GC = "VERSIONS_GC"  # the gateway's own: versions no snapshot can see were collected (housekeeping)
    # The gateway's own: aborted write ids no directory holds any more are no longer listed (the Cleaner).
    ABORTED_WRITES_FORGOTTEN = "ABORTED_WRITES_FORGOTTEN"
    # The gateway's own: a table's write ids up to a seed count as committed (Hive's seed_write_id, store/txns.py).
    WRITE_IDS_SEEDED = "WRITE_IDS_SEEDED"


@dataclass(frozen=True, slots=True)
class NewEvent:
    event_type: EventType
    db_name: str = ""
    table_name: str = ""
    message: dict[str, Any] = field(default_factory=dict)
    table_id: int = 0
    txn_id: int = 0
    write_id: int = 0


T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Outcome(Generic[T]):
    """What a write returns to `Database.transact`: its result and the events that record it, in
    order (none: nothing changed). transact appends the events last, in the same transaction."""

    value: T
    events: tuple[NewEvent, ...] = ()


@dataclass(frozen=True, slots=True)
class Written(Generic[T]):
    """What `Database.transact` hands back for an `Outcome`: the result and its events' ids."""

    value: T
    event_ids: tuple[int, ...] = ()

    @property
    def event_id(self) -> int:
        """The id of the write's last event, the one a caller passes on as its token; 0: nothing changed."""
        return self.event_ids[-1] if self.event_ids else 0


def read_budget(max_message_bytes: int) -> int:
    """The bytes of events (each its message and EVENT_ENVELOPE_BYTES) one read may answer, so that its
    response, gRPC's or Thrift's, stays within `max_message_bytes`."""
    return max_message_bytes - RESPONSE_ENVELOPE_BYTES


def largest_message(max_message_bytes: int) -> int:
    """The largest message one event may carry: one that a read answers alone."""
    return read_budget(max_message_bytes) - EVENT_ENVELOPE_BYTES


def message_text(message: Any) -> str:
    """`message` as the JSON text the log stores (the append casts it to jsonb): written once per
    event, both to size it and to send it, so that sizing costs a write nothing more."""
    return json.dumps(message, ensure_ascii=False, separators=(", ", ": "))


def message_bytes(message: Any) -> int:
    """The size of `message` (or of one item of it) as readers get it: PostgreSQL's text of jsonb
    (`"key": value`, items separated by `, `, non-ASCII characters as UTF-8, not escaped)."""
    return len(message_text(message).encode())


# The list a message of each type may be split along: each event of the split names some of the
# partitions (names, write ids) and means for them what the whole would have.
_SPLIT_LISTS = {EventType.ADD_PARTITION: "partitions", EventType.ALTER_PARTITION: "partitions",
                EventType.DROP_PARTITION: "partition_names", EventType.ABORTED_WRITES_FORGOTTEN: "write_ids"}


def fit_events(events: Sequence[NewEvent], max_message_bytes: int) -> list[NewEvent]:
    """`events` with every message no larger than `largest_message`: a message too large is split
    along its list (_SPLIT_LISTS) into events of the same type, in order; one that cannot be is
    ResourceExhausted (the write is refused: no reader could ever be answered it)."""
    return [event for event, _ in _fitted_texts(events, max_message_bytes)]


def _fitted_texts(events: Sequence[NewEvent], max_message_bytes: int) -> list[tuple[NewEvent, str]]:
    """`fit_events`, each event with its message's text."""
    limit = largest_message(max_message_bytes)
    fitted: list[tuple[NewEvent, str]] = []
    for event in events:
        text = message_text(event.message)
        size = len(text) if text.isascii() else len(text.encode())
        if size <= limit:
            fitted.append((event, text))
        else:
            fitted += [(part, message_text(part.message)) for part in _split(event, size, limit, max_message_bytes)]
    return fitted


def _split(event: NewEvent, size: int, limit: int, max_message_bytes: int) -> list[NewEvent]:
    key = _SPLIT_LISTS.get(event.event_type, "")
    items = event.message.get(key) if key else None
    if not isinstance(items, list) or len(items) < 2:
        raise _too_large(event, size, limit, max_message_bytes)
    frame = message_bytes({**event.message, key: []})
    chunks: list[list[Any]] = [[]]
    used = frame
    for item in items:
        cost = message_bytes(item) + len(", ")
        if frame + cost > limit:
            raise _too_large(event, frame + cost, limit, max_message_bytes, one_of=key)
        if used + cost > limit:
            chunks.append([])
            used = frame
        chunks[-1].append(item)
        used += cost
    return [replace(event, message={**event.message, key: chunk}) for chunk in chunks]


def _too_large(event: NewEvent, size: int, limit: int, max_message_bytes: int, one_of: str = "") -> ResourceExhausted:
    subject = ".".join(name for name in (event.db_name, event.table_name) if name) or "the write"
    what = f"one of its {one_of} alone needs" if one_of else "its message would be"
    return ResourceExhausted(
        f"the {event.event_type} event of {subject} cannot be logged: {what} {size} bytes, more than one "
        f"notification may carry ({limit} bytes: hive.metastore.server.max.message.size, {max_message_bytes} "
        "bytes, less what a notification read's response needs besides), so no reader of the notification log "
        "could ever be answered it; nothing was written")


async def append_events(conn: asyncpg.Connection, events: Sequence[NewEvent],
                        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> list[int]:
    """Append `events` in order, each message sized to `max_message_bytes` (`fit_events`: a message
    too large becomes several events); return their ids. `Database.transact` calls it as the last
    step of the caller's transaction (the sequence row stays locked until that transaction ends)."""
    if not events:
        return []
    fitted = _fitted_texts(events, max_message_bytes)
    events = [e for e, _ in fitted]
    first = int(await conn.fetchval(
        sql.APPEND_EVENTS, [e.event_type.value for e in events], [e.db_name for e in events],
        [e.table_name for e in events], [e.table_id for e in events], [e.txn_id for e in events],
        [e.write_id for e in events], [text for _, text in fitted]))
    ids = list(range(first, first + len(events)))
    return ids


async def current_event_id(conn: asyncpg.Connection) -> int:
    return int(await conn.fetchval(sql.CURRENT_EVENT_ID))


async def count_events(conn: asyncpg.Connection, after_event_id: int, db_name: str,
                       up_to_event_id: int | None = None) -> int:
    """Events after `after_event_id` (up to `up_to_event_id` when given, 0 included) in `db_name` or
    in none (the txns'), or in every database for "*": Hive's getNotificationEventsCount, replication's
    progress."""
    check_text(db_name, "db_name", NAME)
    return int(await conn.fetchval(sql.COUNT_EVENTS, after_event_id, db_name.lower(), up_to_event_id))


async def oldest_event_id(conn: asyncpg.Connection) -> int:
    return int(await conn.fetchval(sql.OLDEST_EVENT_ID))


@dataclass(frozen=True, slots=True)
class EventFilter:
    """Which events a read of the log answers (Hive 4's NotificationEventRequest): of one database ('':
    any), of some tables (none: any), of no type in `skip_types`, of a type in `only_types` (None: any).
    Events of no database (the txns') are of none: a database or table filter leaves them out, as Hive's."""

    db_name: str = ""
    table_names: tuple[str, ...] = ()
    skip_types: tuple[str, ...] = ()
    only_types: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        check_text(self.db_name, "db_name", NAME)
        for name in self.table_names:
            check_text(name, "table_name", NAME)
        for kind in (*self.skip_types, *(self.only_types or ())):
            check_text(kind, "event type", NAME)


EVERY_EVENT = EventFilter()


async def next_events(
    conn: asyncpg.Connection, last_event_id: int, max_events: int, which: EventFilter = EVERY_EVENT, *,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
) -> list[NotificationEvent]:
    """At most `max_events` events after `last_event_id` that `which` keeps (and never more than
    MAX_EVENTS_PER_READ: Hive's metastore.max.event.response defaults to no limit, which lets one call
    return the whole log), and no more than a response of `max_message_bytes` carries (`read_budget`),
    though always one when there is one. Callers page by event id, so a shorter answer only means another
    call; a filtered one has gaps between its ids, as Hive's."""
    _check_cursor(last_event_id, max_events)
    max_events = min(max_events, MAX_EVENTS_PER_READ)
    rows = await conn.fetch(sql.NEXT_EVENTS, last_event_id, max_events, which.db_name.lower(),
                            [t.lower() for t in which.table_names], read_budget(max_message_bytes),
                            EVENT_ENVELOPE_BYTES, list(which.skip_types),
                            list(which.only_types) if which.only_types is not None else None)
    return [_event(r) for r in rows]


def _check_cursor(last_event_id: int, max_events: int) -> None:
    if last_event_id < 0 or max_events < 0:
        raise InvalidArgument(f"last_event_id and max_events must not be negative, got {last_event_id} and "
                              f"{max_events}")


def _event(r: asyncpg.Record) -> NotificationEvent:
    return NotificationEvent(
        event_id=r["event_id"],
        event_time_ms=r["event_time_ms"],
        event_type=r["event_type"],
        db_name=r["db_name"],
        table_name=r["tbl_name"],
        table_id=r["table_id"],
        txn_id=r["txn_id"],
        write_id=r["write_id"],
        message=r["message"],
    )


@dataclass(frozen=True, slots=True)
class LogRead:
    """A poller's read of the log: the next events, the newest committed id, and the time of the
    event at the reader's cursor (None when the log no longer holds it), by which the reader knows
    the log still holds the event it applied last."""

    events: list[NotificationEvent]
    head: int
    cursor_time_ms: int | None


async def next_events_and_head(conn: asyncpg.Connection, last_event_id: int, max_events: int) -> LogRead:
    """Events after `last_event_id`, the newest committed id and the cursor's event time, from one
    statement's snapshot (one round trip, no transaction needed): at most `max_events` (and
    MAX_EVENTS_PER_READ), except that a batch never ends inside one write's events, so a reader that
    applies it whole never shows half a write. An empty batch below the head means a gap."""
    _check_cursor(last_event_id, max_events)
    rows = await conn.fetch(sql.NEXT_EVENTS_AND_HEAD, last_event_id, min(max_events, MAX_EVENTS_PER_READ))
    batch = [_event(r) for r in rows if r["event_id"] is not None]
    last = rows[-1]
    if batch and (last["last_of_write"] or 0) > last["event_id"]:  # the batch's end splits a write: read on
        batch += [_event(r) for r in await conn.fetch(sql.REST_OF_WRITE, last["event_id"], last["last_of_write"])]
    return LogRead(batch, int(rows[0]["head"]), rows[0]["cursor_time_ms"])
