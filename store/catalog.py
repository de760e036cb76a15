"""Catalog operations: databases, tables, partitions.

Each write is a function taking a connection inside the caller's transaction: it validates,
changes rows, and returns an `Outcome`: its result and exactly one notification event per
committed change (after the write id allocation's, if it took one), which `Database.transact`
appends as the transaction's last step. Any error raised before commit rolls the whole
transaction back, so a failed batch leaves no partial state. Reads take their own snapshot (see `CatalogStore`).

Writes to transactional (ACID) tables run under an open txn and its write id W for the table:
they never overwrite a version another snapshot may read. A replaced or dropped version gets
dropped_wid = W and the new one created_wid = W; the txn's own later writes change its own
versions in place. A version written by another open txn (or by one that committed after this
txn started) is a write-write conflict: ABORTED, naming that txn, and, as in Hive, this txn is
aborted (`WriteConflict`; store/catalog_store.py aborts it once this write's transaction rolled back).
Commit makes W committed (nothing to move); abort discards W's versions.
"""

from __future__ import annotations

import base64
import time
from dataclasses import dataclass, replace
from typing import Awaitable, Callable, Mapping, NamedTuple, Sequence, TypeVar

import asyncpg

from store import codec, functions, locks, placement, txns
from hive import limits
from hive import names as n
from hive import column_types, stats_accuracy
from store import model_checks
from store.errors import (Aborted, AlreadyExists, ExpectedParameterChanged, ExpectedParameterUnset, FailedPrecondition,
                          ConstraintRefused, InvalidArgument, NeverAllowed, NotFound, NotPartitioned, PermissionDenied,
                          TableNotFound, WriteConflict)
from store.events import EventType, NewEvent, Outcome
from hive.lock_rules import LockScope
from store.models import Database, FieldSchema, Partition, Table, TableSummary, TableType
from hive.partition_filter import Filter
from hive.table_filter import TableFilter
from store.snapshot import ReadSnapshot, check_not_too_old, is_visible, sql_params
from hive.writeids import ValidWriteIdList
from store.sql import catalog as sql
from store.sql import column_stats as stats_sql
from store.sql import constraints as constraints_sql
from store.sql import compaction as compaction_sql
from store.sql import partition_events as partition_events_sql
from store.sql import privileges as privileges_sql
from store.sql import txns as txn_sql

TRANSACTIONAL_PARAM = "transactional"
TABLE_NAME_INDEX = "tbls_latest_name"  # one latest table per name (store/schema/0001_catalog.sql)


def _now_s() -> int:
    return int(time.time())


def _list_preview(items: Sequence[str], limit: int = 5) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


# A locking read in READ COMMITTED that had to wait re-checks its row once the holder commits. When
# the holder replaced the version (a txn's alter ends it and inserts the next one) or deleted it (an
# abort discards the txn's version and restores the one before), the statement finds nothing: the
# replacement is outside its snapshot. A new statement sees it, so lock again. Each retry follows a
# concurrent commit that changed these very rows, hence the bound only guards against a livelock.
MAX_RELOCKS = 20


async def _lock_latest(
    conn: asyncpg.Connection, what: str, lock_query: str, current_query: str, *args: object,
    settled: Callable[[list[asyncpg.Record]], bool] = lambda rows: False,
) -> list[asyncpg.Record]:
    """The rows `lock_query` locks (each with its version_id), once they are the latest versions
    `current_query` finds in a statement of its own. `settled(rows)` skips that check when the locked
    rows are all there can be (the one table row was found, every named partition was)."""
    for _ in range(MAX_RELOCKS):
        rows = list(await conn.fetch(lock_query, *args))
        if settled(rows):
            return rows
        current = {r["version_id"] for r in await conn.fetch(current_query, *args)}
        if current == {r["version_id"] for r in rows}:
            return rows
    raise Aborted(f"{what} changed {MAX_RELOCKS} times while this write waited for it; retry the write")


# What a create, rename or exchange runs with the storage locations it gives its objects (the gateway
# makes their directories, or moves the old ones there: gateway/warehouse.py), once its rows are
# written and before its events and commit, as Hive's metastore orders it: the write has then proved
# the change possible (a concurrent create or rename of the same name waits for this transaction and
# fails without running it, so it never touches a directory the other made or moved), and a raise
# rolls the write back. A retried transaction runs it again.
MakeLocations = Callable[[Sequence[str]], Awaitable[None]]


async def _made(make_locations: MakeLocations | None, locations: Sequence[str]) -> None:
    if make_locations is not None and locations:
        await make_locations(locations)


# A write of this many objects or more may idle longer between its round trips (allow_idle_for), by this
# much per object.
LARGE_WRITE_OBJECTS = 1000
IDLE_PER_OBJECT_MS = 1


async def allow_idle_for(conn: asyncpg.Connection, objects: int) -> None:
    """A write of many objects works on them between its round trips (completing, encoding, sizing its
    events), so its transaction may idle IDLE_PER_OBJECT_MS more per object than
    metastore.gateway.db.idle.in.transaction.timeout, which is there to end a stopped gateway's
    transaction, not a large write's on a busy one: an add of 9,000 partitions failed under a limit of
    1 s (and 5 s beside two CI runs on 2 cores) and passed under 2 s."""
    if objects >= LARGE_WRITE_OBJECTS:
        await conn.execute(sql.EXTEND_IDLE_IN_TRANSACTION, objects * IDLE_PER_OBJECT_MS)


# What an add or alter runs with the partitions it wrote, as it answers them, before anything else it
# does with them (directories made, rows updated, events appended, commit): the caller encodes its answer
# there and refuses (raises, rolling the write back) one it could not send, so that no caller is told of a
# failure for a write that happened. A retried transaction runs it again.
CheckAnswer = Callable[[Sequence[Partition]], None]


# What a rename or exchange runs with the directory moves its change implies (store/placement.py), as
# its transaction found the objects, their rows locked: each (from, to), (x, x) for one that stays; run
# always, even with none, once the rows are written and before the events and commit (as
# MakeLocations). The gateway moves the directories, and refuses (raises, rolling the change back) when
# they are not the moves it planned from its own, possibly older, view of the tables.
MoveLocations = Callable[[Sequence[placement.Move]], Awaitable[None]]


async def _moved(move_locations: MoveLocations | None, moves: Sequence[placement.Move]) -> None:
    if move_locations is not None:
        await move_locations(moves)


@dataclass(frozen=True, slots=True)
class DroppedTable:
    """A dropped table as its drop found it, with where its latest partitions lived outside its
    directory: what a drop with deleteData deletes, read in the drop's transaction, so a table moved
    by another writer just before loses its new directory, not its old one (Hive's order: locations
    read in the drop's transaction, files deleted once it has committed)."""

    table: Table
    partition_locations_outside: tuple[str, ...] = ()

    @property
    def data_locations(self) -> list[str]:
        return ([self.table.sd.location] if self.table.sd.location else []) + list(self.partition_locations_outside)


@dataclass(frozen=True, slots=True)
class DroppedDatabase:
    database: Database
    tables: tuple[DroppedTable, ...] = ()


class DroppedPartition(NamedTuple):
    """A dropped partition's canonical name and where it lived (its location as the drop found it); for
    a drop asked to answer them whole, the partition itself as the drop found it."""

    name: str
    location: str
    partition: Partition | None = None


@dataclass(frozen=True, slots=True)
class DroppedPartitions:
    """What a drop of partitions dropped, in the order asked, and their table as the drop found it."""

    table: Table
    partitions: list[DroppedPartition]

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.partitions]

    @property
    def whole(self) -> list[Partition]:
        """The partitions themselves, of a drop asked to answer them whole (drop_partitions `whole`)."""
        found = [p.partition for p in self.partitions if p.partition is not None]
        if len(found) != len(self.partitions):
            raise ValueError("the drop was not asked to answer the partitions whole")
        return found


# -- databases ---------------------------------------------------------------------------------


async def create_database(conn: asyncpg.Connection, db: Database, warehouse_dir: str,
                          make_locations: MakeLocations | None = None) -> Outcome[Database]:
    model_checks.check_database(db)
    name = n.normalize_identifier(db.name, "database")
    created = replace(
        db,
        name=name,
        location=db.location or n.default_location(warehouse_dir, f"{name}.db"),
        create_time=_now_s(),
    )
    row_id = await conn.fetchval(
        sql.INSERT_DATABASE, created.name, created.description, created.location, created.owner,
        dict(created.parameters), created.create_time, created.owner_type,
    )
    if row_id is None:
        raise AlreadyExists(f"database {name} already exists")
    await _made(make_locations, [created.location])
    return Outcome(created, (
        NewEvent(EventType.CREATE_DATABASE, db_name=name, message={"database": codec.database_to_json(created)}),))


async def create_default_database(conn: asyncpg.Connection, warehouse_dir: str) -> Outcome[Database | None]:
    """Hive's `default` database, as its metastore creates it at every start when it is missing: at
    the warehouse's root, owned by the role `public`. Its event tells every gateway's cache; None (no
    event) when it exists already."""
    default = Database(n.DEFAULT_DATABASE_NAME, "Default Hive database", warehouse_dir.rstrip("/") or "/", "public",
                       owner_type="ROLE")
    try:
        created = await create_database(conn, default, warehouse_dir)
    except AlreadyExists:  # (INSERT ... ON CONFLICT DO NOTHING: nothing written, no event)
        return Outcome(None)
    return Outcome(created.value, created.events)


_DATABASE_LOCKS = {"": sql.SELECT_DATABASE, "key share": sql.SELECT_DATABASE_FOR_KEY_SHARE,
                   "update": sql.SELECT_DATABASE_FOR_UPDATE}


async def get_database(conn: asyncpg.Connection, name: str, *, lock: str = "") -> Database:
    """A database; `lock` is '', 'key share' (a table is written into it) or 'update' (row lock until
    commit). A locking read that waited for a drop finds no row: NotFound."""
    key = n.normalize_identifier(name, "database")
    row = await conn.fetchrow(_DATABASE_LOCKS[lock], key)
    if row is None:
        raise NotFound(f"database {key} does not exist")
    return codec.database_from_row(row)


async def list_databases(conn: asyncpg.Connection, pattern: str = "") -> list[str]:
    limits.check_text(pattern, "pattern", limits.PATTERN)
    return [r["name"] for r in await conn.fetch(sql.LIST_DATABASES) if n.matches_hive_pattern(r["name"], pattern)]


_Text = TypeVar("_Text", str, str | None)


def _given(new: str | None, old: _Text) -> str | _Text:
    """A text field an alter sets only when it is not blank (Hive's StringUtils.isNotBlank): an unset
    one keeps the old, unset or not."""
    return new if new and new.strip() else old


def check_owner_change(what: str, old: tuple[str | None, str], new: tuple[str | None, str],
                       caller: str | None) -> None:
    """PermissionDenied for an alter that changes an object's (owner, owner type) unless `caller` is None
    (the open mode, or an admin) or the object's USER owner: a non-admin grants and revokes only on what
    it owns (store/privileges.py), and an engine's SQL-standard authorization gives the owner every
    privilege, so naming itself the owner of another user's object would take it over. No owner and ''
    are the same here (gRPC sends either as ''): neither is anyone's."""
    if caller is None or (new[0] or "", new[1]) == (old[0] or "", old[1]) or old == (caller, "USER"):
        return
    raise PermissionDenied(f"{what}: {caller} may not change its owner ({old[0] or 'none'}); only its owner or an "
                           "admin (hive.users.in.admin.role) may do that")


async def alter_database(conn: asyncpg.Connection, name: str, new: Database, *,
                         caller: str | None = None) -> Outcome[Database]:
    """Hive's alter of a database (ObjectStore.alterDatabase): the parameters and the owner as sent; a
    blank description or location, and an empty owner type (a Thrift client's unset one: Spark never
    sets it), keep the old ones, as Hive 3 keeps them (Hive 2.3 never changes description or location).
    A new owner only from its owner or an admin (`caller`: check_owner_change)."""
    old = await get_database(conn, name, lock="update")
    # (its errors name the database)
    model_checks.check_database(replace(new, name=new.name or name, owner_type=new.owner_type or old.owner_type))
    if new.name and new.name.lower() != old.name:
        raise InvalidArgument(f"database {old.name} cannot be renamed to {new.name}: Hive databases cannot be renamed")
    altered = replace(old, description=_given(new.description, old.description),
                      location=_given(new.location, old.location), owner=new.owner,
                      parameters=dict(new.parameters), owner_type=new.owner_type or old.owner_type)
    check_owner_change(f"alter database {old.name}", (old.owner, old.owner_type), (altered.owner, altered.owner_type),
                       caller)
    await conn.execute(sql.UPDATE_DATABASE, old.name, altered.description, altered.location, altered.owner,
                       dict(altered.parameters), altered.owner_type)
    return Outcome(altered, (
        NewEvent(EventType.ALTER_DATABASE, db_name=old.name, message={"database_before": codec.database_to_json(old),
                                                                      "database": codec.database_to_json(altered)}),))


def check_database_droppable(name: str) -> None:
    """NeverAllowed for default, which Hive's metastore keeps always."""
    if n.normalize_identifier(name, "database") == n.DEFAULT_DATABASE_NAME:
        raise NeverAllowed("Can not drop default database: Hive's metastore keeps it always (drop its tables "
                           "instead)")


async def drop_database(conn: asyncpg.Connection, name: str, *, cascade: bool, if_exists: bool,
                        caller: str | None = None) -> Outcome[DroppedDatabase | None]:
    """Drop the database; `caller`: whose EXCLUSIVE lock it may drop under (locks.check_no_conflicting_holders)."""
    check_database_droppable(name)
    try:
        db = await get_database(conn, name, lock="update")
    except NotFound:
        if if_exists:
            return Outcome(None)
        raise
    locked = await _lock_latest(conn, f"the tables of database {db.name}", sql.LIST_LATEST_TABLES_FOR_UPDATE,
                                sql.CURRENT_TABLE_VERSIONS_OF_DATABASE, db.name)
    tables = [codec.table_from_row(r) for r in locked]
    # The message begins with Hive's own sentence: clients match it (Spark's HiveClientImpl turns
    # "Database <name> is not empty" into its SCHEMA_NOT_EMPTY error; pyiceberg's and Gravitino's do alike).
    if tables and not cascade:
        raise FailedPrecondition(
            f"Database {db.name} is not empty. One or more tables exist: {len(tables)} table(s) "
            f"({_list_preview([t.name for t in tables])}); "
            "drop them first or drop the database with cascade"
        )
    if not cascade and (function_names := await functions.list_function_names(conn, db.name)):
        raise FailedPrecondition(
            f"Database {db.name} is not empty. One or more functions exist: {len(function_names)} function(s) "
            f"({_list_preview(function_names)}); drop them first or drop the database with cascade"
        )
    events, dropped = [], []
    for table in tables:
        dropped.append(await _delete_table_rows(conn, table))
        events.append(_drop_table_event(table))
    events.extend(await functions.drop_all_in_database(conn, db.name))
    await txns.drop_reservations_of_database(conn, db.name)
    await conn.execute(sql.DELETE_DATABASE, db.name)
    await locks.check_no_conflicting_holders(conn, LockScope(db.name), f"drop database {db.name}", caller=caller)
    events.append(NewEvent(EventType.DROP_DATABASE, db_name=db.name, message={"database": codec.database_to_json(db)}))
    return Outcome(DroppedDatabase(db, tuple(dropped)), tuple(events))


# -- tables ------------------------------------------------------------------------------------


def _normalize_fields(fields: Sequence[FieldSchema], *, partition_keys: bool) -> tuple[FieldSchema, ...]:
    out = []
    for f in fields:
        name = n.normalize_partition_key(f.name) if partition_keys else n.normalize_column_name(f.name)
        out.append(FieldSchema(name, n.normalize_type(f.type, primitive_only=partition_keys), f.comment))
    seen: set[str] = set()
    for f in out:
        if f.name in seen:
            raise InvalidArgument(f"{'partition key' if partition_keys else 'column'} {f.name!r} is declared twice")
        seen.add(f.name)
    return tuple(out)


def _normalize_table(t: Table, db_location: str) -> Table:
    model_checks.check_table(t)
    db_name = n.normalize_identifier(t.db_name, "database")
    name = n.normalize_identifier(t.name, "table")
    columns = _normalize_fields(t.columns, partition_keys=False)
    keys = _normalize_fields(t.partition_keys, partition_keys=True)
    clash = sorted({c.name for c in columns} & {k.name for k in keys})
    if clash:
        raise InvalidArgument(f"partition key(s) {', '.join(clash)} must not also be regular columns")
    transactional = t.transactional or t.parameters.get(TRANSACTIONAL_PARAM, "").lower() == "true"
    if transactional and t.table_type is not TableType.MANAGED:
        kind = "a view" if t.table_type is TableType.VIRTUAL_VIEW else "external"
        raise InvalidArgument(f"{db_name}.{name} is {kind} and cannot be transactional (Hive forbids it)")
    parameters = dict(t.parameters)
    if transactional:
        parameters[TRANSACTIONAL_PARAM] = "true"
    else:
        parameters.pop(TRANSACTIONAL_PARAM, None)
    has_text = bool(t.view_original_text or t.view_expanded_text)
    if t.table_type is TableType.VIRTUAL_VIEW:
        if not has_text:
            raise InvalidArgument(f"view {db_name}.{name} needs its text (view_original_text and view_expanded_text)")
        sd = t.sd  # a view has no data, so no location of its own
    else:
        if has_text:
            raise InvalidArgument(f"{db_name}.{name} is not a view (VIRTUAL_VIEW) and cannot carry view text")
        sd = t.sd if t.sd.location else replace(t.sd, location=n.default_location(db_location, name))
    return replace(t, db_name=db_name, name=name, columns=columns, partition_keys=keys, transactional=transactional,
                   parameters=parameters, sd=sd)


async def create_table(conn: asyncpg.Connection, table: Table,
                       make_locations: MakeLocations | None = None) -> Outcome[Table]:
    db = await get_database(conn, table.db_name, lock="key share")
    t = replace(_normalize_table(table, db.location), create_time=_now_s(), write_id=0)
    await _check_name_not_reserved(conn, t.db_name, t.name, 0)
    # Before the row: a reservation under the name (txns.reserve_write_ids) either committed before this
    # lock, and is taken over below, or waits for it and then finds the table.
    await txns.lock_table_name(conn, t.db_name, t.name)
    table_id = await conn.fetchval(
        sql.INSERT_TABLE, t.db_name, t.name, t.table_type.value, t.transactional, codec.table_body(t), t.create_time
    )
    if table_id is None:
        raise AlreadyExists(f"table {t.full_name} already exists")
    await _made(make_locations, [t.sd.location] if t.sd.location and t.table_type is not TableType.VIRTUAL_VIEW
                else [])
    created = replace(t, table_id=table_id)
    # Write ids a CTAS's txn was given for the name before the table existed (txns.reserve_write_ids).
    taken = await txns.take_reserved_write_ids(conn, created)
    return Outcome(created, (NewEvent(
        EventType.CREATE_TABLE, db_name=t.db_name, table_name=t.name, table_id=table_id,
        message={"table": codec.table_to_json(created)},
    ), *taken.events))


async def get_table(conn: asyncpg.Connection, db_name: str, table_name: str, *, lock: str = "") -> Table:
    """The latest version of a table; `lock` is '', 'share' or 'update' (row lock until commit)."""
    db_key = n.normalize_identifier(db_name, "database")
    tbl_key = n.normalize_identifier(table_name, "table")
    if lock:
        query = {"share": sql.SELECT_LATEST_TABLE_FOR_SHARE, "update": sql.SELECT_LATEST_TABLE_FOR_UPDATE}[lock]
        rows = await _lock_latest(conn, f"table {db_key}.{tbl_key}", query, sql.CURRENT_TABLE_VERSION, db_key, tbl_key,
                                  settled=bool)
        row = rows[0] if rows else None
    else:
        row = await conn.fetchrow(sql.SELECT_LATEST_TABLE, db_key, tbl_key)
    if row is None:
        try:
            await get_database(conn, db_key)
        except NotFound as exc:  # a missing database is the clearer error
            raise TableNotFound(str(exc)) from exc
        raise TableNotFound(f"table {db_key}.{tbl_key} does not exist")
    return codec.table_from_row(row)


async def list_tables(conn: asyncpg.Connection, db_name: str, pattern: str = "",
                      table_type: str | None = None) -> list[str]:
    """The names of a database's tables matching Hive's name pattern, in name order; with `table_type`
    (Hive's get_tables_by_type), of that type only: a type Hive does not have matches no table."""
    limits.check_text(pattern, "pattern", limits.PATTERN)
    db = await get_database(conn, db_name)
    rows = await conn.fetch(sql.LIST_TABLES, db.name, table_type)
    return [r["tbl_name"] for r in rows if n.matches_hive_pattern(r["tbl_name"], pattern)]


async def list_table_summaries(conn: asyncpg.Connection, db_pattern: str, table_pattern: str,
                               table_types: Sequence[str] = ()) -> list[TableSummary]:
    """Hive's get_table_meta: the tables whose database and name match Hive's patterns, of the given
    types (none given: every type), in database and name order. One statement, whatever the count."""
    limits.check_text(db_pattern, "database pattern", limits.PATTERN)
    limits.check_text(table_pattern, "table pattern", limits.PATTERN)
    rows = await conn.fetch(sql.LIST_TABLE_SUMMARIES, list(table_types) or None)
    return [TableSummary(r["db_name"], r["tbl_name"], TableType(r["table_type"]), r["comment"]) for r in rows
            if n.matches_hive_pattern(r["db_name"], db_pattern)
            and n.matches_hive_pattern(r["tbl_name"], table_pattern)]


async def list_table_names_by_filter(conn: asyncpg.Connection, db_name: str, table_filter: TableFilter,
                                     limit: int | None = None) -> list[str]:
    """Hive's get_table_names_by_filter: the names of the database's tables the filter selects, in
    name order, at most `limit` (None: all). A database that does not exist has none (Hive 2.3's answer)."""
    try:
        db = await get_database(conn, db_name)
    except NotFound:
        return []
    predicate, params = table_filter.to_sql(4)
    rows = await conn.fetch(sql.SELECT_TABLE_NAMES_BY_FILTER.format(filter=predicate), db.name,
                            list(table_filter.parameter_keys), limit, *params)
    return [r["tbl_name"] for r in rows]


async def alter_table(
    conn: asyncpg.Connection, db_name: str, table_name: str, new: Table, txn_id: int = 0, expected_table_id: int = 0,
    *, check_column_types: bool = True, caller: str | None = None, stats: stats_accuracy.AlterContext | None = None,
) -> Outcome[Table]:
    """Replace a table's definition; a different db/name renames it (the table id is kept). A new owner
    only from its owner or an admin (`caller`: check_owner_change). With `stats` (a Thrift alter's
    context), the parameters follow Hive's statistics rule (_with_stats_of_alter); without, as sent.

    Partition keys cannot change, and a transactional table cannot become non-transactional; with
    `check_column_types`, a column cannot change to a type its data does not convert to (Hive's rule,
    hive/column_types.py; a view's columns may change freely).
    Rename does not move data: locations change only when the caller sets them.
    """
    _check_guard(expected_table_id)
    old = await get_table(conn, db_name, table_name, lock="update")
    check_table_id(old, expected_table_id)
    _check_alter_conditions(old, new, stats)
    new = _with_stats_of_alter(old, new, stats)
    # A move into another database takes that one's row as a create does (its own cannot be dropped
    # meanwhile: a DROP DATABASE waits for this table's row, locked above).
    moving_db = n.normalize_identifier(new.db_name or old.db_name, "database") != old.db_name
    target_db = await get_database(conn, new.db_name or old.db_name, lock="key share" if moving_db else "")
    candidate = replace(new, db_name=new.db_name or old.db_name, name=new.name or old.name,
                        sd=new.sd if new.sd.location else replace(new.sd, location=old.sd.location))
    altered = replace(_normalize_table(candidate, target_db.location), table_id=old.table_id,
                      create_time=old.create_time, write_id=old.write_id)
    check_owner_change(f"alter table {old.full_name}", (old.owner, old.owner_type), (altered.owner, altered.owner_type),
                       caller)
    if altered.partition_keys != old.partition_keys:
        # Hive's words (HiveAlterHandler), which Spark shows as its ALTER's error: Spark's alter of a data source
        # table keyed by a type Hive has not (TIMESTAMP_NTZ) sends its keys without that one, refused by both.
        raise InvalidArgument("partition keys can not be changed.")
    if old.transactional and not altered.transactional:
        raise InvalidArgument(
            f"table {old.full_name} is transactional and cannot be made non-transactional "
            "('transactional'='true' cannot be unset)"
        )
    if check_column_types and old.table_type is not TableType.VIRTUAL_VIEW:
        column_types.check_type_changes(old.full_name, [(c.name, c.type) for c in old.columns],
                                        [(c.name, c.type) for c in altered.columns])
    renamed = (altered.db_name, altered.name) != (old.db_name, old.name)
    # Hive's words first: Iceberg's HiveCatalog tells an existing target by "new table <db>.<name> already exists".
    taken = AlreadyExists(f"new table {altered.full_name} already exists (cannot rename {old.full_name} to it)")
    if renamed and await conn.fetchrow(sql.SELECT_LATEST_TABLE, altered.db_name, altered.name) is not None:
        raise taken
    ctx = await _begin_write(conn, old, txn_id)
    if ctx.write_id:
        await _check_table_not_in_flight(conn, old, ctx.txn_id)
        if renamed:
            await _check_name_not_reserved(conn, altered.db_name, altered.name, ctx.txn_id)
        altered = replace(altered, write_id=ctx.write_id)
    await _check_constraints_of_alter(conn, old, altered)
    gone = lost_columns(old.columns, altered.columns)
    # A rename lists the kept statistics as accurate again, but a transactional table's parameters are
    # never marked (store/column_stats.py): its rename leaves them as the caller sent them.
    if gone or (renamed and not old.is_acid):
        restated = await _restate_column_stats(conn, old.table_id, {_TABLE_LEVEL: (altered.parameters, gone)},
                                               renamed=renamed, txn_id=ctx.txn_id)
        altered = replace(altered, parameters=restated.get(_TABLE_LEVEL, altered.parameters))
    try:
        written = await _write_table_version(conn, old, altered, ctx.txn_id, ctx.write_id)
    except asyncpg.UniqueViolationError as e:
        # The check above cannot see a table of the new name that another transaction is creating (or
        # renaming to it); the write waits for that one and, once it commits, the name is taken.
        if e.constraint_name != TABLE_NAME_INDEX:
            raise
        raise taken from e
    return Outcome(altered, (*ctx.events, written))


async def _check_constraints_of_alter(conn: asyncpg.Connection, old: Table, new: Table) -> None:
    """An alter may not drop or rename a column a constraint names (store/constraints.py: Hive 2.3 refuses
    every column change of a table with constraints, as its datastore cannot flush it); a table that moves to
    another database takes its constraints' names there, where they must be free."""
    kept = {c.name for c in new.columns}
    gone = [c.name for c in old.columns if c.name not in kept]
    if gone:
        naming = await conn.fetch(constraints_sql.NAMING_COLUMNS, old.table_id, gone)
        if naming:
            named = ", ".join(f"{r['column_name']} by {r['constraint_name']}" for r in naming)
            raise ConstraintRefused(f"cannot drop or rename columns of {old.full_name} that constraints name "
                                    f"({named}): drop those constraints first (ALTER TABLE ... DROP CONSTRAINT)")
    if new.db_name != old.db_name:
        clash = await conn.fetch(constraints_sql.NAMES_IN_DATABASE_OF, old.table_id, new.db_name)
        if clash:
            raise ConstraintRefused(f"cannot move {old.full_name} to database {new.db_name}: its constraint "
                                    f"{clash[0]['constraint_name']} has the name of one there (constraint names "
                                    "are unique in a database)")
        await conn.execute(constraints_sql.MOVE_TO_DATABASE, old.table_id, new.db_name)


async def _write_table_version(conn: asyncpg.Connection, old: Table, new: Table, txn_id: int,
                               write_id: int) -> NewEvent:
    """`new` as the table's latest version: a version of its own under a write id the latest one was not
    written under (the older stays for older snapshots), else in place. Its ALTER_TABLE event."""
    body = codec.table_body(new)
    if write_id and old.write_id != write_id:
        await conn.execute(sql.END_LATEST_TABLE_VERSION, old.table_id, write_id)
        await conn.execute(sql.INSERT_TABLE_VERSION, old.table_id, new.db_name, new.name, new.table_type.value,
                           new.transactional, body, new.create_time, write_id)
    else:
        await conn.execute(sql.UPDATE_LATEST_TABLE_IN_PLACE, new.table_id, new.db_name, new.name,
                           new.table_type.value, new.transactional, body)
    return NewEvent(EventType.ALTER_TABLE, db_name=new.db_name, table_name=new.name, table_id=new.table_id,
                    txn_id=txn_id, write_id=write_id,
                    message={"table_before": codec.table_to_json(old), "table": codec.table_to_json(new)})


# Hive's TxnStore.TXN_KEY_START: the parameters a commit may set (CommitTxnRequest.keyValue).
COMMIT_KEY_PREFIX = "_meta"


async def commit_with_table_parameter(conn: asyncpg.Connection, txn_id: int, table_id: int, key: str,
                                      value: str) -> Outcome[txns.WrittenTables]:
    """Hive 4's commit_txn with keyValue (what Hive 4 streaming's commitTransaction(partitions, key, value)
    sends: a source's offsets kept with the data they ingested): the commit and a table parameter that
    already exists, set in one transaction, both or neither. A txn that is not open is answered as its
    commit answers, the parameter left alone (Hive 4 returns before it too).

    Hive updates the parameter in place, outside write ids, so of two streaming txns of one table each
    commits its own value and the later commit's stays. Here a transactional table's parameters are
    versioned: the txn's write id of the table (allocated if it has none) gets a version with the value,
    made visible by this commit, without the write conflict check of an alter (a txn that committed a
    value since this one began does not conflict: the later commit's value is the latest one, as in
    Hive). A version of another open txn (an alter it has not committed) is refused: it would end it."""
    if not txn_id or not await txns.is_open(conn, txn_id):
        return await txns.commit_txn_written(conn, txn_id)
    if not key.startswith(COMMIT_KEY_PREFIX):
        raise FailedPrecondition(f"commit_txn's keyValue sets a parameter whose key starts with "
                                 f"{COMMIT_KEY_PREFIX!r}, as Hive's; got {key[:100]!r}: nothing was committed")
    row = await conn.fetchrow(sql.SELECT_LATEST_TABLE_BY_ID_FOR_UPDATE, table_id)
    if row is None:
        raise FailedPrecondition(f"commit_txn's keyValue names table id {table_id}, which no table has: nothing "
                                 "was committed")
    old = codec.table_from_row(row)
    if key not in old.parameters:
        raise FailedPrecondition(f"commit_txn's keyValue sets parameter {key[:100]!r} of {old.full_name}, which it "
                                 "does not have (as Hive's, it updates one; set it first): nothing was committed")
    new = replace(old, parameters={**old.parameters, key: value})
    events: list[NewEvent] = []
    write_id = 0
    if old.is_acid:
        allocated = await txns.allocate_write_ids(conn, old, [txn_id])
        write_id, events = allocated.value[txn_id], list(allocated.events)
        new = replace(new, write_id=write_id)
    if write_id and old.write_id and old.write_id != write_id:
        holder = await txns.txn_of_write_id(conn, old.table_id, old.write_id)
        if holder is not None and holder[1] == txns.OPEN:
            raise FailedPrecondition(f"{old.full_name} is being altered by txn {holder[0]}, still open: commit_txn "
                                     "with keyValue cannot set its parameter now; retry the commit")
    events.append(await _write_table_version(conn, old, new, txn_id if write_id else 0, write_id))
    committed = await txns.commit_txn_written(conn, txn_id)
    written = committed.value if write_id else ((new.db_name, new.name), *committed.value)
    return Outcome(written, (*events, *committed.events))


def _check_alter_conditions(old: Table, new: Table, context: stats_accuracy.AlterContext | None) -> None:
    """What an alter of `old` (as this transaction locked it) to `new` must find before it writes anything:
    the condition a conditional alter names, and an Iceberg commit's base."""
    _check_expected_parameter(old, new, context)
    _check_iceberg_base(old, new)


def _table_modified(key: str, stored: str | None, expected: str, why: str = "") -> ExpectedParameterChanged:
    """Hive's conditional alter's refusal, in its words (Iceberg's HiveCatalog matches them to tell a
    concurrent commit, and retries)."""
    shown = "null" if stored is None else stored  # as Java prints it
    return ExpectedParameterChanged(f"The table has been modified. The parameter value for key '{key}' is "
                                    f"'{shown}'. The expected was value was '{expected}'{why}")


def _check_expected_parameter(old: Table, new: Table, context: stats_accuracy.AlterContext | None) -> None:
    """Hive's conditional alter (HiveAlterHandler.alterTable with expected_parameter_key and _value): the
    new table must set the parameter, and the table as locked must hold the expected value, else nothing
    is altered."""
    if context is None or context.expected is None:
        return
    key, expected = context.expected
    if new.parameters.get(key) is None:
        raise ExpectedParameterUnset(f"New value for expected key {key} is not set")
    stored = old.parameters.get(key)
    if stored != expected:
        raise _table_modified(key, stored, expected)


_ICEBERG_TABLE_TYPES = frozenset({"ICEBERG", "ICEBERG-VIEW"})  # the table_type parameter of Iceberg's tables


def _check_iceberg_base(old: Table, new: Table) -> None:
    """An alter that moves an Iceberg table's `metadata_location` and names the location it replaces
    (`previous_metadata_location`, which every Iceberg commit sets: Java's HiveTableOperations, pyiceberg,
    Trino) must replace the stored one, else nothing is altered, in the words of Hive's conditional alter,
    which Iceberg reads as a concurrent commit (and retries). Different from Hive on purpose: Hive's reads
    are always fresh, so a client holding the table's lock never sends such an alter; a read without a
    snapshot here may come from a gateway whose cache has not yet applied the last commit (the lock taken
    through another gateway, or the read sent to another one: Trino opens a connection per call, Iceberg
    pools them), and the alter would silently drop that commit. A client's edit of other parameters from
    such a read, which would put the old location back, is refused alike."""
    if (old.parameters.get("table_type") or "").upper() not in _ICEBERG_TABLE_TYPES:
        return
    stored, moved_to = old.parameters.get("metadata_location"), new.parameters.get("metadata_location")
    replaced = new.parameters.get("previous_metadata_location")
    if stored is None or moved_to is None or moved_to == stored or replaced is None or replaced == stored:
        return
    raise _table_modified("metadata_location", stored, replaced,
                          " (the alter's previous_metadata_location: it was based on an older state of the table; "
                          "read the table again and retry)")


def _with_stats_of_alter(old: Table, new: Table, stats: stats_accuracy.AlterContext | None) -> Table:
    """`new` with the parameters Hive's metastore stores for an alter of `old` to it (HiveAlterHandler):
    an unpartitioned table's COLUMN_STATS_ACCURATE goes unless the context says otherwise
    (stats_accuracy.after_table_alter). A view's parameters stay as sent, and so do those of a managed
    table's rename that keeps the location it is sent with (Hive moves its directory, or leaves it where
    it was placed, and reads no files then)."""
    if stats is None or new.partition_keys or new.table_type is TableType.VIRTUAL_VIEW:
        return new
    if (placement.renames(old, new) and old.table_type is not TableType.VIRTUAL_VIEW and not placement.is_external(old)
            and (not new.sd.location or placement.same_location(new.sd.location, old.sd.location))):
        return new
    return replace(new, parameters=stats_accuracy.after_table_alter(new.parameters, stats))


_TABLE_LEVEL = ""  # the partition name of a table's own statistics (store/column_stats.py's TABLE_LEVEL)


def lost_columns(old: Sequence[FieldSchema], new: Sequence[FieldSchema]) -> list[str]:
    """The columns of `old` whose statistics an alter to `new` takes away: those `new` does not have
    with the same name and type (Hive's rule, for tables and partitions alike)."""
    kept = {(c.name, c.type.lower()) for c in new}
    return [c.name for c in old if (c.name, c.type.lower()) not in kept]


def _column_shapes(columns: Sequence[FieldSchema]) -> list[tuple[str, str, str]]:
    return [(c.name, c.type, c.comment) for c in columns]


async def alter_table_cascade(
    conn: asyncpg.Connection, db_name: str, table_name: str, new: Table, *, chunk: int, check_column_types: bool = True,
    caller: str | None = None, stats: stats_accuracy.AlterContext | None = None, txn_id: int = 0,
) -> Outcome[Table]:
    """Hive's ALTER TABLE ... CASCADE (HiveAlterHandler.alterTable with cascade, what `ADD COLUMNS ...
    CASCADE` and `CHANGE COLUMN ... CASCADE` send): `alter_table`, and when the table's columns
    change, every partition that has columns of its own takes the table's new ones, in the same
    transaction (a partition without columns of its own reads the table's already). Their statistics
    follow alter_partitions' rule (a column lost or retyped loses them); events call-sized (`chunk`)."""
    old = await get_table(conn, db_name, table_name, lock="update")
    altered = await alter_table(conn, db_name, table_name, new, txn_id, check_column_types=check_column_types,
                                caller=caller, stats=stats)
    table = altered.value
    # As Hive's isCascadeNeededInAlterTable: the columns sent differ from the stored ones in anything, a
    # name's case (the store keeps names lower-cased), a type or a comment (CHANGE COLUMN ... COMMENT ... CASCADE).
    if not table.is_partitioned or _column_shapes(new.columns) == _column_shapes(old.columns):
        return altered
    read = await resolve_table(conn, table.db_name, table.name, ReadSnapshot(latest_committed=True))
    if txn_id and read.snapshot.write_ids is not None:  # and the partitions the txn itself added
        read = await resolve_table(conn, table.db_name, table.name, replace(read.snapshot, txn_id=txn_id))
    own = [p for p in await list_partitions(conn, read, _ALL)
           if p.columns is not None and _column_shapes(p.columns) != _column_shapes(table.columns)]
    if not own:
        return altered
    await allow_idle_for(conn, len(own))
    cascaded = await alter_partitions_in_chunks(conn, table.db_name, table.name,
                                                [replace(p, columns=tuple(table.columns)) for p in own], chunk,
                                                txn_id=txn_id)
    return Outcome(table, (*altered.events, *cascaded.events))


async def _restate_column_stats(
    conn: asyncpg.Connection, table_id: int, restated: Mapping[str, tuple[Mapping[str, str], Sequence[str]]], *,
    renamed: bool = False, txn_id: int = 0,
) -> dict[str, dict[str, str]]:
    """Hive's alter rule for statistics, of a table's own (`_TABLE_LEVEL`) or of its partitions: for each
    one altered (by partition name: its new parameters and its `lost_columns`), a dropped or retyped
    column's statistics describe data it no longer has and go, and COLUMN_STATS_ACCURATE stops listing
    them; a table's rename lists the kept ones as accurate again (Hive deletes and rewrites them under
    the new name; here they stay, keyed by table id). Answers the new parameters of those that have
    statistics; the others keep theirs as they are. Under a txn (`txn_id`, the write's) the statistics go
    when it commits, as its versions become visible (store/schema/0022)."""
    with_stats: dict[str, list[str]] = {}
    for r in await conn.fetch(stats_sql.COLUMNS_WITH_STATS, table_id, list(restated)):
        with_stats.setdefault(r["part_name"], []).append(r["column_name"])
    went = {part: [c for c in columns if c in restated[part][1]] for part, columns in with_stats.items()}
    pairs = [(part, column) for part, columns in went.items() for column in columns]
    if pairs:
        parts, columns = [p for p, _ in pairs], [c for _, c in pairs]
        if txn_id:
            await conn.execute(stats_sql.MARK_FOR_PARTITION_COLUMNS, table_id, parts, columns, txn_id)
        else:
            await conn.execute(stats_sql.DELETE_FOR_PARTITION_COLUMNS, table_id, parts, columns)
    # Statistics waiting for a txn's commit go with the columns alike (store/schema/0025), whether or not
    # committed ones are there.
    lost = [(part, column) for part, (_, columns) in restated.items() for column in columns]
    if lost:
        parts, columns = [p for p, _ in lost], [c for _, c in lost]
        if txn_id:
            await conn.execute(stats_sql.MARK_WAITING_FOR_PARTITION_COLUMNS, table_id, parts, columns, txn_id)
            await conn.execute(stats_sql.DELETE_OWN_WAITING_FOR_PARTITION_COLUMNS, table_id, parts, columns, txn_id)
        else:
            await conn.execute(stats_sql.DELETE_WAITING_FOR_PARTITION_COLUMNS, table_id, parts, columns)
    parameters: dict[str, dict[str, str]] = {}
    for part, columns in with_stats.items():
        stayed = [c for c in columns if c not in went[part]] if renamed else []
        unmarked = stats_accuracy.unmark_columns(restated[part][0], [*went[part], *stayed])
        parameters[part] = stats_accuracy.mark_columns(unmarked, stayed)
    return parameters


def _drop_table_event(table: Table) -> NewEvent:
    return NewEvent(EventType.DROP_TABLE, db_name=table.db_name, table_name=table.name, table_id=table.table_id,
                    message={"table": codec.table_to_json(table)})


async def _delete_table_rows(conn: asyncpg.Connection, table: Table) -> DroppedTable:
    """Delete a table locked for update, with everything attached to it."""
    await conn.execute(stats_sql.DELETE_FOR_TABLE, table.table_id)
    await conn.execute(constraints_sql.DELETE_FOR_TABLE, table.table_id)
    await conn.execute(privileges_sql.DELETE_FOR_TABLE, table.table_id)
    await conn.execute(partition_events_sql.DELETE_FOR_TABLE, table.table_id)
    outside = await conn.fetch(sql.DELETE_TABLE_PARTITIONS, table.table_id, table.sd.location)
    await conn.execute(sql.DELETE_TABLE_VERSIONS, table.table_id)
    if table.is_acid:
        await forget_compactions(conn, table)
    return DroppedTable(table, tuple(r["location"] for r in outside))


async def forget_compactions(conn: asyncpg.Connection, table: Table) -> None:
    """Delete a dropped transactional table's compaction requests and history, as Hive's AcidEventListener does
    on a drop of the table or its database: SHOW COMPACTIONS no longer lists them, no worker picks them up."""
    await conn.execute(compaction_sql.DELETE_QUEUE_OF_TABLE, table.table_id)
    await conn.execute(compaction_sql.DELETE_HISTORY_OF_TABLE, table.table_id)


async def drop_table(conn: asyncpg.Connection, db_name: str, table_name: str, *, if_exists: bool,
                     expected_table_id: int = 0, caller: str | None = None) -> Outcome[DroppedTable | None]:
    """Drop the table; `caller`: whose EXCLUSIVE lock it may drop under (locks.check_no_conflicting_holders)."""
    _check_guard(expected_table_id)
    try:
        table = await get_table(conn, db_name, table_name, lock="update")
    except NotFound:
        if if_exists:
            return Outcome(None)
        raise
    check_table_id(table, expected_table_id)
    dropped = await _delete_table_rows(conn, table)
    # Last, so enqueues are held back only briefly: refuse while someone holds a conflicting lock.
    await locks.check_no_conflicting_holders(conn, LockScope(table.db_name, table.name),
                                             f"drop table {table.full_name}", caller=caller)
    return Outcome(dropped, (_drop_table_event(table),))


def _check_guard(expected_table_id: int) -> None:
    if expected_table_id < 0:
        raise InvalidArgument(f"table_id must not be negative, got {expected_table_id} (0: no guard)")


def check_table_id(table: Table, expected_table_id: int) -> None:
    """A caller that pinned a table id (the seed's rename/re-create guard) must get that table."""
    if expected_table_id and expected_table_id != table.table_id:
        raise FailedPrecondition(
            f"table {table.full_name} has table id {table.table_id} but the request expected {expected_table_id}: "
            "it was renamed or dropped and re-created since the caller looked it up"
        )


@dataclass(frozen=True, slots=True)
class WriteContext:
    """How a write to one table is stamped: write id 0 writes in place (non-transactional); a transactional
    table's write has both its txn and that txn's write id, so a txn id means a versioned write."""

    write_id: int = 0
    txn_id: int = 0
    events: tuple[NewEvent, ...] = ()


async def _begin_write(conn: asyncpg.Connection, table: Table, txn_id: int) -> WriteContext:
    if not table.is_acid:
        return WriteContext()
    if not txn_id:
        raise FailedPrecondition(
            f"{table.full_name} is transactional: writes need an open txn_id (OpenTxns), since every write to a "
            "transactional table takes a write id"
        )
    allocated = await txns.allocate_write_ids(conn, table, [txn_id])
    return WriteContext(allocated.value[txn_id], txn_id, allocated.events)


# A txn id no txn can have: outside a txn only open writers conflict, never committed ones.
_NO_TXN = 1 << 62


def _conflict(what: str, holder: int, state: str, txn_id: int) -> WriteConflict:
    if state == "o":
        retry = "" if txn_id else "; retry after it commits or aborts"  # a txn's own conflict aborts it instead
        return WriteConflict(f"write conflict: {what} was written by txn {holder}, which is still open{retry}", txn_id)
    return WriteConflict(f"write conflict: {what} was changed by txn {holder}, which committed after txn {txn_id} "
                         "started (first committer wins, as Hive's write-set check)", txn_id)


async def _check_table_not_in_flight(conn: asyncpg.Connection, table: Table, txn_id: int) -> None:
    row = await conn.fetchrow(txn_sql.TABLE_WRITERS_IN_FLIGHT, table.table_id, txn_id or _NO_TXN)
    if row is not None:
        raise _conflict(f"table {table.full_name}", row["txn_id"], row["state"], txn_id)


async def _check_name_not_reserved(conn: asyncpg.Connection, db_name: str, table_name: str, txn_id: int) -> None:
    row = await conn.fetchrow(txn_sql.NAME_WRITERS_IN_FLIGHT, db_name, table_name, txn_id or _NO_TXN)
    if row is not None:
        raise _conflict(f"the name {db_name}.{table_name} (a table was renamed from or to it)", row["txn_id"],
                        row["state"], txn_id)


async def _check_partitions_not_in_flight(conn: asyncpg.Connection, table: Table, names: Sequence[str],
                                          txn_id: int) -> None:
    row = await conn.fetchrow(txn_sql.PARTITION_WRITERS_IN_FLIGHT, table.table_id, list(names), txn_id)
    if row is not None:
        raise _conflict(f"partition {row['part_name']} of {table.full_name}", row["txn_id"], row["state"], txn_id)


class CreatorInFlight(Exception):
    """An add found a partition that another txn, still open, created (rather than replaced): it
    exists only if that txn commits. Raised inside the write's transaction (rolled back: nothing
    added), for the caller to wait for `holder` to end and write again (CatalogStore._write)."""

    def __init__(self, holder: int, what: str, txn_id: int) -> None:
        super().__init__(f"{what} was written by txn {holder}, which is still open")
        self.holder = holder
        self.what = what
        self.txn_id = txn_id

    def conflict(self) -> WriteConflict:
        """What the add answers once it has waited long enough: a write-write conflict."""
        return _conflict(self.what, self.holder, "o", self.txn_id)

    def deadlock(self) -> WriteConflict:
        """What it answers when `holder` waits for this txn in turn (store/txn_waits.py)."""
        return WriteConflict(f"write conflict: {self.what} was written by txn {self.holder}, which is still open "
                             f"and waits for txn {self.txn_id} (each would wait for the other)", self.txn_id)


async def _check_concurrent_adds(conn: asyncpg.Connection, table: Table, names: Sequence[str],
                                 inserted: set[str], txn_id: int) -> None:
    """Hive's outcome for two txns adding one new partition (two INSERTs into it both commit in
    Hive: each adds it unless it exists) under txn `txn_id`. A name this add inserted conflicts with
    any other txn's in-flight write of it (a drop not yet committed: the new partition would race
    it). A name it found already there exists (skipped by an add-if-absent, AlreadyExists
    otherwise), whoever wrote it and whenever they committed: this add writes nothing to it, so
    first-committer-wins has nothing to judge; but one an open txn created (rather than replaced)
    exists only if that txn commits: wait for it to end (`CreatorInFlight`) and add again."""
    new = [name for name in names if name in inserted]
    if new:
        await _check_partitions_not_in_flight(conn, table, new, txn_id)
    found = [name for name in names if name not in inserted]
    if found:
        row = await conn.fetchrow(txn_sql.PARTITION_CREATED_IN_FLIGHT, table.table_id, found, txn_id)
        if row is not None:
            raise CreatorInFlight(row["txn_id"], f"partition {row['part_name']} of {table.full_name}", txn_id)


# -- partitions --------------------------------------------------------------------------------


def require_partitioned(table: Table) -> None:
    if not table.is_partitioned:
        raise NotPartitioned(table)


def _complete_partition(table: Table, p: Partition) -> Partition:
    """Validate values, compute the name, and default the storage descriptor from the table."""
    model_checks.check_partition(p, f"a partition of {table.full_name}")
    values = n.validate_partition_values(table.partition_keys, p.values)
    name = n.make_partition_name(table.partition_keys, values)
    sd = p.sd
    sd = replace(
        sd,
        location=sd.location or n.default_location(table.sd.location, name),
        input_format=sd.input_format or table.sd.input_format,
        output_format=sd.output_format or table.sd.output_format,
        serde=sd.serde if (sd.serde.serialization_lib or sd.serde.name) else table.sd.serde,
    )
    # Columns given are the partition's own from then on, as in Hive (a later change of the table's
    # columns leaves them be); none given: the partition reads as having the table's.
    columns = _normalize_fields(p.columns, partition_keys=False) if p.columns else None
    return replace(p, db_name=table.db_name, table_name=table.name, values=values, name=name, sd=sd, columns=columns)


def _columns_of(table: Table, p: Partition) -> Sequence[FieldSchema]:
    return p.columns if p.columns is not None else table.columns


def _unique_names(parts: Sequence[Partition], what: str) -> None:
    repeated = _repeated_names(parts)
    if repeated:
        raise _appears_twice(repeated[0], what)


def _appears_twice(name: str, what: str) -> InvalidArgument:
    return InvalidArgument(f"partition {name} appears twice in one {what} request")


def _repeated_names(parts: Sequence[Partition]) -> list[str]:
    seen: set[str] = set()
    repeated: dict[str, None] = {}
    for p in parts:
        if p.name in seen:
            repeated[p.name] = None
        seen.add(p.name)
    return list(repeated)


async def add_partitions(
    conn: asyncpg.Connection, db_name: str, table_name: str, parts: Sequence[Partition], *, if_not_exists: bool,
    expected_table_id: int = 0, txn_id: int = 0, make_locations: MakeLocations | None = None,
    check_answer: CheckAnswer | None = None,
) -> Outcome[list[Partition]]:
    """Add a batch all-or-nothing. Existing partitions fail the whole batch unless `if_not_exists`,
    in which case they are skipped, also one the batch names twice (as Hive skips each before it looks
    for repeats: Spark's MSCK REPAIR sends `hr=2` and `Hr=2` directories as two); a new one named twice
    fails it. Returns the partitions added and the event id (0: none added); `check_answer` is handed
    them first (CheckAnswer)."""
    _check_guard(expected_table_id)
    await allow_idle_for(conn, len(parts))
    table = await get_table(conn, db_name, table_name, lock="share")
    check_table_id(table, expected_table_id)
    require_partitioned(table)
    now = _now_s()
    ctx = await _begin_write(conn, table, txn_id)
    completed = [replace(_complete_partition(table, p), create_time=now, write_id=ctx.write_id) for p in parts]
    if not if_not_exists:
        _unique_names(completed, "add")
    repeated = _repeated_names(completed)
    first: dict[str, Partition] = {}
    for p in completed:
        first.setdefault(p.name, p)
    completed = list(first.values())
    # In name order: two adds of overlapping names then wait on each other's rows in one order (no deadlock).
    rows = [{"part_name": p.name, "part_values": list(p.values), "body": codec.partition_body(p)}
            for p in sorted(completed, key=lambda p: p.name)]
    inserted = {r["part_name"] for r in await conn.fetch(sql.INSERT_PARTITIONS, table.table_id, rows, now,
                                                         ctx.write_id)}
    if ctx.write_id:  # after the insert: it waited for any concurrent writer of the same names
        await _check_concurrent_adds(conn, table, [p.name for p in completed], inserted, ctx.txn_id)
    new_repeated = [name for name in repeated if name in inserted]
    if new_repeated:  # rolled back with the rest: a repeat is skipped only where the partition exists
        raise _appears_twice(new_repeated[0], "add")
    if len(inserted) < len(completed) and not if_not_exists:
        existing = [p.name for p in completed if p.name not in inserted]
        raise AlreadyExists(
            f"partition(s) of {table.full_name} already exist: {_list_preview(existing)}; nothing was added")
    added = [p for p in completed if p.name in inserted]
    if check_answer is not None:
        check_answer(added)
    if not added:  # the write id may still be new: its allocation is an event of its own
        return Outcome([], ctx.events)
    await _made(make_locations, [p.sd.location for p in added])
    return Outcome(added, (*ctx.events, NewEvent(
        EventType.ADD_PARTITION, db_name=table.db_name, table_name=table.name, table_id=table.table_id,
        txn_id=ctx.txn_id, write_id=ctx.write_id,
        message={"partitions": [codec.partition_to_json(p) for p in added]},
    )))


def canonical_names(table: Table, names: Sequence[str]) -> list[str]:
    """Caller partition names in stored form, de-duplicated, request order kept."""
    require_partitioned(table)
    out: dict[str, None] = {}
    for name in names:
        out[n.canonical_partition_name(table.partition_keys, name)] = None
    return list(out)


# -- snapshot reads ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ResolvedRead:
    """A table as one snapshot sees it, with what its partition reads need."""

    table: Table
    snapshot: ReadSnapshot
    own_write_id: int = 0

    @property
    def versioned(self) -> bool:
        return self.snapshot.write_ids is not None and self.table.is_acid

    @property
    def latest(self) -> bool:
        """The answer is the latest state (latest wins, or the latest committed for a caller that
        brought no snapshot): a cache behind it must not answer this caller's later reads."""
        return not self.versioned or self.snapshot.latest_committed


async def resolve_table(conn: asyncpg.Connection, db_name: str, table_name: str,
                        snapshot: ReadSnapshot) -> ResolvedRead:
    """The version of the table the snapshot sees. ACID tables need a ValidWriteIdList; without
    one only non-transactional and external tables can be read (latest wins)."""
    db_key = n.normalize_identifier(db_name, "database")
    tbl_key = n.normalize_identifier(table_name, "table")
    snapshot.check_table_name(f"{db_key}.{tbl_key}")
    if snapshot.write_ids is None and snapshot.latest_committed:
        snapshot = await _committed_now(conn, db_key, tbl_key)
    if snapshot.write_ids is None:
        table = await get_table(conn, db_key, tbl_key)
        if table.is_acid:
            raise FailedPrecondition(
                f"{table.full_name} is a transactional managed table: reads must carry the caller's ValidWriteIdList "
                "(and table id) for it, from GetValidWriteIds"
            )
        check_table_id(table, snapshot.expected_table_id)
        return ResolvedRead(table, snapshot)
    versions = await conn.fetch(sql.SELECT_TABLE_VERSIONS_BY_NAME, db_key, tbl_key)
    # A ValidWriteIdList belongs to one table: resolve by the id it came with, never across tables
    # that had this name at other times. Tables the snapshot cannot see must not change the answer:
    # a drop deletes a table's versions, and a snapshot from before it was answered NOT_FOUND while
    # the name was free and "table id mismatch" (without the id: NOT_FOUND, then "pass the table_id")
    # once a new table had it, so two reads of one snapshot disagreed.
    if not versions or any(r["transactional"] and r["table_type"] == "MANAGED_TABLE" for r in versions):
        if not snapshot.expected_table_id:
            await get_database(conn, db_key)
            raise FailedPrecondition(
                f"{db_key}.{tbl_key}: a read of a transactional managed table must pass the table_id "
                "GetValidWriteIds returned with its ValidWriteIdList"
            )
    if snapshot.expected_table_id:
        versions = [r for r in versions if r["table_id"] == snapshot.expected_table_id]
        if not versions and await conn.fetchrow(sql.TABLE_ID_EXISTS, snapshot.expected_table_id) is None:
            await get_database(conn, db_key)
            raise FailedPrecondition(
                f"{db_key}.{tbl_key}: no table has the table id {snapshot.expected_table_id} the request expected: "
                "it was dropped (or renamed, dropped and re-created) since the caller looked it up"
            )
        # (else the table exists, with no kept version under this name: the too-old check, then NOT_FOUND)
    # Too old is decided before visibility: a version this snapshot needed may be the one GC deleted.
    candidate_ids = {r["table_id"] for r in versions if r["transactional"] and r["table_type"] == "MANAGED_TABLE"}
    if snapshot.expected_table_id:
        candidate_ids.add(snapshot.expected_table_id)
    for table_id in sorted(candidate_ids):
        state = await conn.fetchrow(txn_sql.TABLE_WRITE_ID_STATE, table_id)
        if table_id == snapshot.expected_table_id and any(r["table_id"] == table_id for r in versions):
            # (a table id this name never had is the clearer error: check_table_id below says so)
            _check_within_allocated(f"{db_key}.{tbl_key}", snapshot.write_ids, int(state["next"]) - 1 if state else 0)
        check_not_too_old(f"{db_key}.{tbl_key}", snapshot.write_ids, state["gc_watermark"] if state else 0)
    own: dict[int, int] = {}
    for row in versions:
        if row["table_id"] not in own:
            own[row["table_id"]] = await txns.write_id_of(conn, snapshot.txn_id, row["table_id"])
    visible = [r for r in versions if is_visible(snapshot.write_ids, own[r["table_id"]], r["created_wid"],
                                                 r["dropped_wid"])]
    if not visible:
        await get_database(conn, db_key)
        raise NotFound(f"table {db_key}.{tbl_key} does not exist in this snapshot")
    table = codec.table_from_row(visible[0])
    check_table_id(table, snapshot.expected_table_id)
    return ResolvedRead(table, snapshot, own[table.table_id])


def _check_within_allocated(full_name: str, write_ids: ValidWriteIdList, allocated: int) -> None:
    """A ValidWriteIdList whose mark is beyond the write ids the table ever allocated would count
    write ids allocated later (by txns still open) as committed: not a list GetValidWriteIds gave."""
    above = sum(1 for w in write_ids.exceptions if w > allocated)  # listed as not committed: harmless
    if write_ids.high_watermark - allocated > above:
        raise InvalidArgument(
            f"the ValidWriteIdList's high-water mark {write_ids.high_watermark} for {full_name} is beyond the highest "
            f"write id the table allocated ({allocated}) and counts the ones above as committed; take the list from "
            "GetValidWriteIds"
        )


async def _committed_now(conn: asyncpg.Connection, db_key: str, tbl_key: str) -> ReadSnapshot:
    """A snapshot of what is committed now, for a caller that brought none: the table this name has
    in it, with that table's write ids (Hive's GetOpenTxns, then GetValidWriteIds)."""
    table_write_ids = await txns.write_ids_by_name(conn, db_key, tbl_key, await txns.get_open_txns(conn))
    return ReadSnapshot(table_write_ids.valid_write_ids, 0, table_write_ids.table_id, latest_committed=True)


async def get_partitions_by_names(conn: asyncpg.Connection, read: ResolvedRead,
                                  names: Sequence[str]) -> list[Partition]:
    """The named partitions as the snapshot sees them, in request order; names that do not exist
    (in that snapshot) are left out, as Hive's get_partitions_by_names does."""
    table = read.table
    wanted = canonical_names(table, names)
    if read.versioned:
        assert read.snapshot.write_ids is not None
        rows = await conn.fetch(sql.SELECT_VISIBLE_PARTITIONS_BY_NAMES, table.table_id, wanted,
                                *sql_params(read.snapshot.write_ids, read.own_write_id))
    else:
        rows = await conn.fetch(sql.SELECT_LATEST_PARTITIONS_BY_NAMES, table.table_id, wanted)
    by_name = {r["part_name"]: codec.partition_from_row(table.db_name, table.name, r) for r in rows}
    return [by_name[name] for name in wanted if name in by_name]


async def get_partitions_by_filter(
    conn: asyncpg.Connection, read: ResolvedRead, filter_: Filter, limit: int, after: str = ""
) -> list[Partition]:
    """Partitions the snapshot sees that match the filter, in name order, after the name `after`
    (a page's start); at most `limit` + 1 rows are read so the caller can tell "more than the limit"."""
    table = read.table
    require_partitioned(table)
    if read.versioned:
        assert read.snapshot.write_ids is not None
        predicate, params = filter_.to_sql(7)
        query = sql.SELECT_VISIBLE_PARTITIONS_BY_FILTER.format(filter=predicate)
        rows = await conn.fetch(query, table.table_id, limit + 1, *sql_params(read.snapshot.write_ids,
                                                                              read.own_write_id),
                                after, *params)
    else:
        predicate, params = filter_.to_sql(4)
        rows = await conn.fetch(sql.SELECT_LATEST_PARTITIONS_BY_FILTER.format(filter=predicate), table.table_id,
                                limit + 1, after, *params)
    return [codec.partition_from_row(table.db_name, table.name, r) for r in rows]


async def list_partitions(conn: asyncpg.Connection, read: ResolvedRead, limit: int) -> list[Partition]:
    """Every partition the snapshot sees, in name order, at most `limit` + 1 (to tell "more")."""
    table = read.table
    require_partitioned(table)
    if read.versioned:
        assert read.snapshot.write_ids is not None
        rows = await conn.fetch(sql.SELECT_VISIBLE_PARTITIONS, table.table_id, limit + 1,
                                *sql_params(read.snapshot.write_ids, read.own_write_id), "")
    else:
        rows = await conn.fetch(sql.SELECT_LATEST_PARTITIONS, table.table_id, limit + 1, "")
    return [codec.partition_from_row(table.db_name, table.name, r) for r in rows]


def encode_page_token(last_name: str) -> str:
    """The token of a page that ends at `last_name`: its UTF-8 bytes in URL-safe base64, at most
    limits.PAGE_TOKEN characters for any name the gateway makes (limits.PARTITION_NAME characters)."""
    return base64.urlsafe_b64encode(last_name.encode()).decode()


def decode_page_token(token: str) -> str:
    """The name a page token goes on after ('' for none). A token no name of the gateway's could have given
    (too long, not base64, not UTF-8, a NUL, a name over limits.PARTITION_NAME) is InvalidArgument."""
    if not token:
        return ""
    if len(token) > limits.PAGE_TOKEN:
        raise InvalidArgument(f"page_token has {len(token)} characters, more than any this service returns "
                              f"({limits.PAGE_TOKEN}): it is not a token this service returned")
    try:
        after = base64.b64decode(token.encode(), altchars=b"-_", validate=True).decode()
    except (ValueError, UnicodeDecodeError) as exc:  # binascii.Error is a ValueError
        raise InvalidArgument("page_token is not a token this service returned") from exc
    if "\x00" in after:  # a name never holds one (it is escaped), and PostgreSQL text cannot
        raise InvalidArgument("page_token is not a token this service returned")
    if len(after) > limits.PARTITION_NAME:
        raise InvalidArgument(f"page_token holds a name of {len(after)} characters, longer than any partition "
                              f"name ({limits.PARTITION_NAME}): it is not a token this service returned")
    return after


async def list_partition_names(
    conn: asyncpg.Connection, read: ResolvedRead, page_size: int, page_token: str
) -> tuple[list[str], str]:
    table = read.table
    require_partitioned(table)
    after = decode_page_token(page_token)
    if read.versioned:
        assert read.snapshot.write_ids is not None
        rows = await conn.fetch(sql.LIST_VISIBLE_PARTITION_NAMES, table.table_id, after, page_size + 1,
                                *sql_params(read.snapshot.write_ids, read.own_write_id))
    else:
        rows = await conn.fetch(sql.LIST_LATEST_PARTITION_NAMES, table.table_id, after, page_size + 1)
    names = [r["part_name"] for r in rows]
    if len(names) > page_size:
        return names[:page_size], encode_page_token(names[page_size - 1])
    return names, ""


# -- partition changes -------------------------------------------------------------------------


async def lock_partitions(conn: asyncpg.Connection, table: Table, names: Sequence[str]) -> list[asyncpg.Record]:
    """The latest versions of the named partitions, locked FOR UPDATE (missing names are absent)."""
    return await _lock_latest(conn, f"partitions of {table.full_name}",
                              sql.SELECT_LATEST_PARTITIONS_BY_NAMES_FOR_UPDATE,
                              sql.CURRENT_PARTITION_VERSIONS, table.table_id, list(names),
                              settled=lambda rows: len(rows) == len(names))


async def alter_partitions(
    conn: asyncpg.Connection, db_name: str, table_name: str, parts: Sequence[Partition], expected_table_id: int = 0,
    txn_id: int = 0, check_answer: CheckAnswer | None = None, stats: stats_accuracy.AlterContext | None = None,
) -> Outcome[list[Partition]]:
    """Replace the storage descriptor and parameters of existing partitions, all or nothing.
    An empty location keeps the partition's current one. Returns the partitions as altered;
    `check_answer` is handed them before their rows are written (CheckAnswer). With `stats` (a Thrift
    alter's context), each one's parameters follow Hive's statistics rule against the stored ones
    (stats_accuracy.after_partition_alter); without, as sent."""
    _check_guard(expected_table_id)
    await allow_idle_for(conn, len(parts))
    table = await get_table(conn, db_name, table_name, lock="share")
    check_table_id(table, expected_table_id)
    require_partitioned(table)
    ctx = await _begin_write(conn, table, txn_id)
    requested = [_complete_partition(table, p) for p in parts]
    _unique_names(requested, "alter")
    names = [p.name for p in requested]
    current_rows = await lock_partitions(conn, table, names)
    if ctx.write_id:  # after the row locks, so a concurrent writer's versions are seen
        await _check_partitions_not_in_flight(conn, table, names, ctx.txn_id)
    current = {r["part_name"]: codec.partition_from_row(table.db_name, table.name, r) for r in current_rows}
    missing = [name for name in names if name not in current]
    if missing:
        raise NotFound(f"partition(s) of {table.full_name} do not exist: {_list_preview(missing)}; nothing was altered")
    altered = []
    for p, given in zip(requested, parts):
        old = current[p.name]
        sd = p.sd if given.sd.location else replace(p.sd, location=old.sd.location)
        stored = p.parameters if stats is None else stats_accuracy.after_partition_alter(old.parameters,
                                                                                         p.parameters, stats)
        altered.append(replace(p, sd=sd, parameters=stored, create_time=old.create_time,
                               write_id=ctx.write_id or old.write_id))
    # A partition's columns are its own, or the table's when it has none (_complete_partition).
    lost = {p.name: lost_columns(_columns_of(table, current[p.name]), _columns_of(table, p)) for p in altered}
    if restated := {p.name: (p.parameters, lost[p.name]) for p in altered if lost[p.name]}:
        parameters = await _restate_column_stats(conn, table.table_id, restated,
                                                 txn_id=ctx.txn_id)
        altered = [replace(p, parameters=parameters.get(p.name, p.parameters)) for p in altered]
    if check_answer is not None:
        check_answer(altered)
    bodies = [{"part_name": p.name, "body": codec.partition_body(p)} for p in altered]
    if ctx.write_id:
        await conn.fetch(sql.UPDATE_OWN_PARTITION_VERSIONS, table.table_id, bodies, ctx.write_id)
        replaced = {r["part_name"] for r in await conn.fetch(sql.END_LATEST_PARTITION_VERSIONS, table.table_id, names,
                                                             ctx.write_id)}
        new_rows = [{"part_name": p.name, "part_values": list(p.values), "body": codec.partition_body(p),
                     "create_time": p.create_time} for p in altered if p.name in replaced]
        await conn.fetch(sql.INSERT_ALTERED_PARTITION_VERSIONS, table.table_id, new_rows, _now_s(), ctx.write_id)
    else:
        await conn.fetch(sql.UPDATE_PARTITIONS_IN_PLACE, table.table_id, bodies)
    return Outcome(altered, (*ctx.events, NewEvent(
        EventType.ALTER_PARTITION, db_name=table.db_name, table_name=table.name, table_id=table.table_id,
        txn_id=ctx.txn_id, write_id=ctx.write_id,
        message={"partitions": [codec.partition_to_json(p) for p in altered]},
    )))


async def alter_partitions_in_chunks(
    conn: asyncpg.Connection, db_name: str, table_name: str, parts: Sequence[Partition], chunk: int, txn_id: int = 0,
) -> Outcome[list[Partition]]:
    """alter_partitions of more partitions than one call may name (a truncate of a large table): one
    transaction, all or nothing, with an ALTER_PARTITION event per `chunk` partitions, so that no event
    is larger than one a client's call could have written."""
    altered: list[Partition] = []
    events: list[NewEvent] = []
    for start in range(0, len(parts), chunk):
        outcome = await alter_partitions(conn, db_name, table_name, parts[start:start + chunk], txn_id=txn_id)
        altered += outcome.value
        events += outcome.events
    return Outcome(altered, tuple(events))


async def truncate(
    conn: asyncpg.Connection, db_name: str, table_name: str, part_names: Sequence[str] | None, *, chunk: int,
    txn_id: int, check: Callable[[Table], None], empty_locations: MakeLocations,
) -> Outcome[Table]:
    """Hive's truncate of a table, or of the named partitions, in one transaction: the table locked and
    read as it is now (`check` may refuse it), its (their) directories emptied by `empty_locations`
    (the gateway's file work, while the rows are locked: a concurrent SET LOCATION waits for this,
    and what is emptied is where the table is), then its basic statistics set to 0 (as Hive orders it:
    the files first). Every partition of a large table is truncated, its events call-sized (`chunk`).
    Partition names the table does not have are refused, nothing truncated; an unpartitioned table has
    none (Hive 3 and 4 look such names up, find no partition and empty nothing)."""
    table = await get_table(conn, db_name, table_name, lock="update")
    check(table)
    if not table.is_partitioned:
        if part_names:
            raise InvalidArgument(f"truncate table {table.full_name}: it is not partitioned, so it has no "
                                  f"partition(s) {_list_preview(list(part_names))}; nothing was truncated (omit the "
                                  "partition names to truncate the table)")
        if part_names is not None:
            return Outcome(table)  # no partitions named: none truncated, as for a partitioned table
        await empty_locations([table.sd.location])
        return await alter_table(conn, table.db_name, table.name,
                                 replace(table, parameters=stats_accuracy.truncated(table.parameters)), txn_id)
    read = await resolve_table(conn, table.db_name, table.name, ReadSnapshot(latest_committed=True))
    parts = await list_partitions(conn, read, _ALL)
    await allow_idle_for(conn, len(parts))
    if part_names is not None:
        wanted = set(canonical_names(table, part_names))
        parts = [p for p in parts if p.name in wanted]
        if missing := wanted - {p.name for p in parts}:
            raise InvalidArgument(f"truncate table {table.full_name}: no partition(s) {_list_preview(sorted(missing))}")
    if not parts:
        return Outcome(table)
    await empty_locations([p.sd.location for p in parts])
    altered = await alter_partitions_in_chunks(
        conn, table.db_name, table.name,
        [replace(p, parameters=stats_accuracy.truncated(p.parameters)) for p in parts], chunk, txn_id)
    return Outcome(table, altered.events)


async def drop_partitions(
    conn: asyncpg.Connection, db_name: str, table_name: str, names: Sequence[str], *, if_exists: bool,
    expected_table_id: int = 0, txn_id: int = 0, keep_attached: bool = False, whole: bool = False,
) -> Outcome[DroppedPartitions]:
    """Drop partitions by name (answered in the order asked, each with where it lived, and `whole`, the
    partition itself as the drop found it); their column statistics and grants go with them, unless
    `keep_attached` (a rename moves them to the new name)."""
    _check_guard(expected_table_id)
    await allow_idle_for(conn, len(names))
    table = await get_table(conn, db_name, table_name, lock="share")
    check_table_id(table, expected_table_id)
    wanted = canonical_names(table, names)
    ctx = await _begin_write(conn, table, txn_id)
    added_here: set[str] = set()  # partitions that existed only in this txn: nothing brings them back
    readded: set[str] = set()  # partitions it added again over ones it dropped: its abort brings the old back
    if ctx.write_id:
        # Lock first: the statements below must not wait, as one that waited misses a version replaced meanwhile.
        # The rows locked are the versions dropped, whole.
        found = await lock_partitions(conn, table, wanted)
        own = await conn.fetch(sql.DELETE_OWN_PARTITION_VERSIONS, table.table_id, wanted, ctx.write_id)
        rows = [*own, *await conn.fetch(sql.END_LATEST_PARTITION_VERSIONS, table.table_id, wanted, ctx.write_id)]
        await _check_partitions_not_in_flight(conn, table, wanted, ctx.txn_id)
        if own:  # the txn's own versions: of a partition it added, unless an older version ends at its write id
            names_of_own = [r["part_name"] for r in own]
            restorable = await conn.fetch(sql.PARTITIONS_ENDED_BY_WRITE, table.table_id, names_of_own, ctx.write_id)
            added_here = set(names_of_own) - {r["part_name"] for r in restorable}
            readded = {r["part_name"] for r in own if r["added"]} - added_here
    else:
        rows = found = await conn.fetch(sql.DELETE_LATEST_PARTITIONS_WHOLE if whole else sql.DELETE_LATEST_PARTITIONS,
                                        table.table_id, wanted)
    whole_rows = {r["part_name"]: r for r in found} if whole else {}
    order = {name: i for i, name in enumerate(wanted)}
    dropped = sorted((DroppedPartition(r["part_name"], r["location"] or "",
                                       codec.partition_from_row(table.db_name, table.name, whole_rows[r["part_name"]])
                                       if whole else None)
                      for r in rows), key=lambda d: order[d.name])
    if len(dropped) < len(wanted) and not if_exists:
        missing = sorted(set(wanted) - {d.name for d in dropped})
        raise NotFound(f"partition(s) of {table.full_name} do not exist: {_list_preview(missing)}; nothing was dropped")
    if not dropped:
        return Outcome(DroppedPartitions(table, []), ctx.events)
    names = [d.name for d in dropped]
    # Under a txn they go when it commits (store/schema/0022), its abort bringing back the partitions
    # with theirs; but a partition the txn itself added exists nowhere once dropped, whatever the txn
    # does then, so its statistics and grants go now (the abort would otherwise keep them, unmarked, for
    # a partition that does not exist, and a later one of that name would take them over).
    later = [name for name in names if name not in added_here] if ctx.txn_id and not keep_attached else []
    now = [name for name in names if name not in later] if not keep_attached else []
    # Statistics waiting for a txn's commit go with them alike (store/schema/0025); the dropping txn's own
    # describe what it dropped, and go now.
    if readded and not keep_attached:  # what other txns wrote for the partition it added goes with it
        await conn.execute(stats_sql.DELETE_WAITING_FOR_ADDS_GONE, [table.table_id] * len(readded), sorted(readded),
                           [ctx.write_id] * len(readded))
    if later:
        await conn.execute(stats_sql.MARK_FOR_PARTITIONS, table.table_id, later, ctx.txn_id)
        await conn.execute(stats_sql.MARK_WAITING_FOR_PARTITIONS, table.table_id, later, ctx.txn_id)
        await conn.execute(stats_sql.DELETE_OWN_WAITING_FOR_PARTITIONS, table.table_id, later, ctx.txn_id)
        await conn.execute(privileges_sql.MARK_FOR_PARTITIONS, table.table_id, later, ctx.txn_id)
    if now:
        await conn.execute(stats_sql.DELETE_FOR_PARTITIONS, table.table_id, now)
        await conn.execute(stats_sql.DELETE_WAITING_FOR_PARTITIONS, table.table_id, now)
        await conn.execute(privileges_sql.DELETE_FOR_PARTITIONS, table.table_id, now)
    return Outcome(DroppedPartitions(table, dropped), (*ctx.events, NewEvent(
        EventType.DROP_PARTITION, db_name=table.db_name, table_name=table.name, table_id=table.table_id,
        txn_id=ctx.txn_id, write_id=ctx.write_id, message={"partition_names": names},
    )))


def _database_location_in(conn: asyncpg.Connection) -> Callable[[str], Awaitable[str]]:
    """A database's location as this transaction reads it: what store/placement.py's rename rules ask."""
    async def location(name: str) -> str:
        return (await get_database(conn, name)).location
    return location


async def rename_partition(
    conn: asyncpg.Connection, db_name: str, table_name: str, old_name: str, new: Partition,
    move_locations: MoveLocations | None = None, stats: stats_accuracy.AlterContext | None = None,
) -> Outcome[Partition]:
    """Hive's rename_partition: partition `old_name` takes `new`'s values and storage. One transaction
    drops the old name and adds the new one, so a reader sees the partition under one name or the other,
    never both or neither; an existing new name fails it and changes nothing. As in Hive, its grants
    and the column statistics of the columns it keeps (same name and type) go to the new name; the
    statistics of columns it no longer has go. A rename to its own values is refused as one to any
    existing name is (Hive: "Partition already exists"): nothing changes. Where the directory moves
    (placement.renamed_partition_location) is decided on the table and the partition as the drop locked
    and found them: the new partition is placed there, and `move_locations` is handed that move (none
    when it stays). With `stats` (a Thrift rename's), its parameters follow alter_partitions' rule for
    COLUMN_STATS_ACCURATE, as Hive's rename is an alter of the partition."""
    dropped = await drop_partitions(conn, db_name, table_name, [old_name], if_exists=False, keep_attached=True,
                                    whole=True)
    table, (old,) = dropped.value.table, dropped.value.partitions
    if stats is not None:
        (stored,) = dropped.value.whole
        new = replace(new, parameters=stats_accuracy.after_partition_alter(stored.parameters, new.parameters, stats))
    new_name = _complete_partition(table, new).name
    if new_name == old.name:
        raise AlreadyExists(f"partition {old.name} of {table.full_name} already exists: a partition cannot be "
                            "renamed to its own values; nothing was renamed")

    target = await placement.renamed_partition_location(table, old.location, old.name, new_name, new.sd.location,
                                                         _database_location_in(conn))
    if target is not None:
        new = replace(new, sd=replace(new.sd, location=target))
    added = await add_partitions(conn, db_name, table_name, [new], if_not_exists=False)
    renamed = added.value[0]
    columns = renamed.columns if renamed.columns is not None else table.columns
    await conn.execute(stats_sql.MOVE_TO_RENAMED_PARTITION, table.table_id, old.name, renamed.name,
                       [c.name for c in columns], [c.type.lower() for c in columns])
    await conn.execute(stats_sql.DELETE_FOR_PARTITIONS, table.table_id, [old.name])  # columns it lost
    await conn.execute(privileges_sql.MOVE_TO_RENAMED_PARTITION, table.table_id, old.name, renamed.name)
    await _moved(move_locations, [(old.location, renamed.sd.location)] if target is not None else [])
    return Outcome(renamed, (*dropped.events, *added.events))


def check_exchangeable(source: Table, dest: Table) -> None:
    """Whether Hive's EXCHANGE PARTITION may move partitions from `source` to `dest`: two tables with
    the same columns and partition keys (names and types, in order), neither transactional (Hive 3's
    rule: an ACID table's partition is its write ids' deltas, which another table's ids do not name)."""
    if source.table_id == dest.table_id:
        raise InvalidArgument(f"{source.full_name}: a table's partitions cannot be exchanged with itself")
    acid = [t.full_name for t in (source, dest) if t.transactional]
    if acid:
        raise InvalidArgument(f"Exchange partition is not allowed with transactional tables ({', '.join(acid)}); "
                              "INSERT OVERWRITE or LOAD DATA moves their rows")
    if not source.is_partitioned or not dest.is_partitioned:
        raise InvalidArgument(f"exchange partition: {source.full_name} and {dest.full_name} must both be "
                              "partitioned")

    def shape(t: Table) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        return [(c.name, c.type) for c in t.columns], [(k.name, k.type) for k in t.partition_keys]
    if shape(source) != shape(dest):
        raise InvalidArgument(f"The tables have different schemas. Their partitions cannot be exchanged: "
                              f"{source.full_name} and {dest.full_name} differ in their columns or partition keys")


async def exchange_partitions(
    conn: asyncpg.Connection, source_db: str, source_name: str, dest_db: str, dest_name: str,
    names: Sequence[str], *, relocate: bool, move_locations: MoveLocations | None = None, specification: str = "",
) -> Outcome[list[Partition]]:
    """Hive's exchange_partitions (ALTER TABLE dest EXCHANGE PARTITION (...) WITH TABLE source): the
    source's partitions `names` move to `dest` in one transaction, a drop event on the source and an
    add event on dest, so no reader sees a partition in both tables or in neither. A name dest already
    has fails the whole exchange, as does one the source no longer has, and so does any partition of dest
    under `specification` (the name of the values the exchange was asked for, of the first keys: Hive
    moves that one directory and refuses when dest has it, as its engine refuses an exchange into a
    table with a partition of that specification). With `relocate` (the caller
    can move the tables' directories: they are on its file system) each takes
    placement.exchanged_location, decided on the tables as this transaction locked them (they move
    when the source is managed); without, each keeps its own. `move_locations` is handed each
    partition's move, from where the drop found it to where it was placed. Its column statistics and
    grants go with the source's partition, as on a drop (as in Hive)."""
    # Dest is locked for update when the specification is checked, so a concurrent add (or alter, or
    # rename) of another partition under it, which holds the table row in share mode, either commits
    # first and the check sees it, or waits for the exchange: never both. The two rows are locked in
    # name order, so two exchanges between the same tables in opposite directions queue, not deadlock.
    in_order = sorted([(n.table_key(source_db, source_name), "share", "source"),
                       (n.table_key(dest_db, dest_name), "update" if specification else "share", "dest")])
    tables = {role: await get_table(conn, db, name, lock=lock) for (db, name), lock, role in in_order}
    source, dest = tables["source"], tables["dest"]
    check_exchangeable(source, dest)
    if specification and (held := await conn.fetchval(sql.FIRST_PARTITION_UNDER, dest.table_id, specification)):
        raise AlreadyExists(f"exchange partition: {dest.full_name} already has partition {limits.preview(held)} of the "
                            f"specification {limits.preview(specification)}; nothing was exchanged")
    # Locked before they are read, so what moves is the version a concurrent writer of a partition
    # leaves (read first, the drop below waited for that writer and deleted its version, while dest
    # got the older copy: a lost update). Not transactional: the latest version is the one.
    wanted = canonical_names(source, names)
    locked = {r["part_name"]: codec.partition_from_row(source.db_name, source.name, r)
              for r in await lock_partitions(conn, source, wanted)}
    moving = [locked[name] for name in wanted if name in locked]
    dropped = await drop_partitions(conn, source.db_name, source.name, wanted, if_exists=False)
    placed = [replace(p, db_name=dest.db_name, table_name=dest.name,
                      sd=replace(p.sd, location=placement.exchanged_location(p, source, dest) if relocate
                                 else p.sd.location))
              for p in moving]
    added = await add_partitions(conn, dest.db_name, dest.name, placed, if_not_exists=False)
    found_at = {d.name: d.location for d in dropped.value.partitions}
    await _moved(move_locations, [(found_at[p.name], p.sd.location) for p in added.value])
    return Outcome(added.value, (*dropped.events, *added.events))


async def rename_table_relocating(
    conn: asyncpg.Connection, db_name: str, table_name: str, new: Table, *, check_column_types: bool = True,
    move_locations: MoveLocations | None = None, caller: str | None = None,
    stats: stats_accuracy.AlterContext | None = None,
) -> Outcome[Table]:
    """Hive's rename of a table (its alter to another name), with its directory when Hive moves it:
    where (placement.renamed_table_location) is decided on the table as this transaction locked it and
    its databases as they are now. A table that moves takes the new name's default location, and each
    partition under its old one the same place under the new one, in one transaction; `move_locations`
    is handed the move (none when the table stays). Transactional tables are renamed in a txn and keep
    their place."""
    current = await get_table(conn, db_name, table_name, lock="update")
    _check_alter_conditions(current, new, stats)
    new = _with_stats_of_alter(current, new, stats)  # on the location sent, before the move sets the new one
    target = await placement.renamed_table_location(current, new, _database_location_in(conn))
    if target is not None:
        new = replace(new, sd=replace(new.sd, location=target))
    altered = await alter_table(conn, db_name, table_name, new, check_column_types=check_column_types, caller=caller)
    table, old_location = altered.value, current.sd.location
    await _moved(move_locations, [] if target is None else [(old_location, target)])
    if target is None or not table.is_partitioned or target == old_location:
        return altered
    read = await resolve_table(conn, table.db_name, table.name, ReadSnapshot(latest_committed=True))
    prefix = old_location.rstrip("/") + "/"
    moved = [replace(p, sd=replace(p.sd, location=target.rstrip("/") + "/" + p.sd.location[len(prefix):]))
             for p in await list_partitions(conn, read, _ALL) if p.sd.location.startswith(prefix)]
    if not moved:
        return altered
    relocated = await alter_partitions(conn, table.db_name, table.name, moved)
    return Outcome(table, (*altered.events, *relocated.events))


_ALL = 2**31 - 2  # no limit (the largest LIMIT that fits an int4): a relocation must reach every partition
