"""Permanent functions: what CREATE FUNCTION in Spark SQL or Hive stores (Hive's FUNCS), one row per
function in its database.

Hive's rules (checked against Hive Metastore 2.3.10: tests/e2e/test_thrift_differential.py): a function
name is a Hive identifier, unique in its database and case-insensitive (stored in lower case; Hive 2.3
stores a mixed-case name as sent and then finds it by no name, as its lookups lower-case theirs); a name
that is not one is refused with Hive's words ("my-fn is not a valid object name", which Spark shows), and
a lookup by such a name finds nothing (NotFound, as Hive's, where Spark's CREATE FUNCTION first looks the
name up); it needs an implementing class, whatever its text (Hive refuses only a null one: the Thrift
layer's check); the metastore stamps its create time; a database that has functions is
dropped only with cascade, which drops them with it. Writes are logged as Hive logs them
(CREATE_FUNCTION, DROP_FUNCTION; an alter, for which Hive has no event, as a drop of the old and a
create of the new). Functions are neither versioned nor cached: every read is PostgreSQL's.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

import asyncpg

from hive import limits
from hive import names as n
from store import codec, model_checks
from store.errors import AlreadyExists, InvalidArgument, NotFound
from store.events import EventType, NewEvent, Outcome
from store.models import FUNCTION_TYPES, RESOURCE_TYPES, Function
from store.sql import functions as sql


def _checked(f: Function) -> Function:
    """`f` with its names in Hive's normal form, or InvalidArgument saying what is wrong."""
    db_name = n.normalize_identifier(f.db_name, "database")
    try:
        name = n.normalize_identifier(f.name, "function")
    except InvalidArgument:
        # Hive's HMSHandler.validateFunctionInfo, word for word: Spark shows it as the statement's error.
        raise InvalidArgument(f"{f.name} is not a valid object name") from None
    what = f"function {db_name}.{name}"
    limits.check_text(f.class_name, f"{what}: class name", limits.CLASS_NAME)
    limits.check_text(f.owner or "", f"{what}: owner", limits.OWNER)
    model_checks.check_owner_type(f.owner_type, what)
    if f.function_type not in FUNCTION_TYPES:
        raise InvalidArgument(f"{what}: function type {limits.preview(f.function_type, 40)} is not one of "
                              f"{', '.join(FUNCTION_TYPES)}")
    limits.check_count(len(f.resource_uris), f"{what}: resource URIs")
    for uri in f.resource_uris:
        if uri.resource_type not in RESOURCE_TYPES:
            raise InvalidArgument(f"{what}: resource type {limits.preview(uri.resource_type, 40)} is not one of "
                                  f"{', '.join(RESOURCE_TYPES)}")
        if not uri.uri:
            raise InvalidArgument(f"{what}: a {uri.resource_type} resource needs a URI")
        limits.check_text(uri.uri, f"{what}: resource URI", limits.LOCATION)
    return replace(f, db_name=db_name, name=name)


def _key(db_name: str, name: str) -> tuple[str, str]:
    """The stored key a lookup names; NotFound for a name no function can have (Hive finds nothing)."""
    try:
        return n.normalize_identifier(db_name, "database"), n.normalize_identifier(name, "function")
    except InvalidArgument:
        raise NotFound(f"function {db_name}.{name} does not exist") from None


def _row_args(f: Function) -> tuple[str, str, str, str | None, str, str, list[dict[str, str]], int]:
    return (f.db_name, f.name, f.class_name, f.owner, f.owner_type, f.function_type,
            codec.resource_uris_to_json(f.resource_uris), f.create_time)


def _event(kind: EventType, f: Function) -> NewEvent:
    return NewEvent(kind, db_name=f.db_name, message={"function": codec.function_to_json(f)})


async def _lock_database(conn: asyncpg.Connection, db_name: str) -> None:
    if await conn.fetchval(sql.LOCK_DATABASE, db_name) is None:
        raise NotFound(f"database {db_name} does not exist")


async def _insert(conn: asyncpg.Connection, f: Function) -> Function:
    await _lock_database(conn, f.db_name)
    row = await conn.fetchrow(sql.INSERT, *_row_args(f))
    if row is None:
        raise AlreadyExists(f"function {f.db_name}.{f.name} already exists")
    return codec.function_from_row(row)


async def create_function(conn: asyncpg.Connection, function: Function, now: int) -> Outcome[Function]:
    """Store a new function, stamped with `now` as its create time (Hive's metastore stamps it)."""
    created = await _insert(conn, replace(_checked(function), create_time=now))
    return Outcome(created, (_event(EventType.CREATE_FUNCTION, created),))


async def get_function(conn: asyncpg.Connection, db_name: str, name: str) -> Function:
    row = await conn.fetchrow(sql.SELECT, *_key(db_name, name))
    if row is None:
        raise NotFound(f"function {'.'.join(_key(db_name, name))} does not exist")
    return codec.function_from_row(row)


async def list_function_names(conn: asyncpg.Connection, db_name: str, pattern: str = "") -> list[str]:
    """The names of a database's functions that match Hive's SHOW pattern, in order; none for a
    database that does not exist (as Hive answers)."""
    limits.check_text(pattern, "pattern", limits.PATTERN)
    rows = await conn.fetch(sql.LIST_NAMES, n.normalize_identifier(db_name, "database"))
    return [r["func_name"] for r in rows if n.matches_hive_pattern(r["func_name"], pattern)]


async def all_functions(conn: asyncpg.Connection) -> list[Function]:
    """Every database's functions (what Hive's CLI registers when a session starts)."""
    return [codec.function_from_row(r) for r in await conn.fetch(sql.LIST_ALL)]


async def alter_function(conn: asyncpg.Connection, db_name: str, name: str, new: Function) -> Outcome[Function]:
    """Replace a function's definition (class, owner, type, resources); another database or name moves
    or renames it. Its create time stays. Nothing changed: no event."""
    key = _key(db_name, name)
    row = await conn.fetchrow(sql.SELECT_FOR_UPDATE, *key)
    if row is None:
        raise NotFound(f"function {'.'.join(key)} does not exist")
    old = codec.function_from_row(row)
    altered = replace(_checked(new), create_time=old.create_time)
    if altered == old:
        return Outcome(old)
    if (altered.db_name, altered.name) == key:
        await conn.execute(sql.UPDATE, *_row_args(altered)[:7])
    else:
        altered = await _insert(conn, altered)
        await conn.execute(sql.DELETE, *key)
    return Outcome(altered, (_event(EventType.DROP_FUNCTION, old), _event(EventType.CREATE_FUNCTION, altered)))


async def drop_function(conn: asyncpg.Connection, db_name: str, name: str) -> Outcome[None]:
    key = _key(db_name, name)
    row = await conn.fetchrow(sql.DELETE, *key)
    if row is None:
        raise NotFound(f"function {'.'.join(key)} does not exist")
    return Outcome(None, (_event(EventType.DROP_FUNCTION, codec.function_from_row(row)),))


async def drop_all_in_database(conn: asyncpg.Connection, db_name: str) -> Sequence[NewEvent]:
    """DROP DATABASE ... CASCADE (store/catalog.py, under the database's row lock): its functions go, each
    logged as its own drop, as Hive drops them one by one."""
    rows = sorted(await conn.fetch(sql.DELETE_OF_DATABASE, db_name), key=lambda r: str(r["func_name"]))
    return [_event(EventType.DROP_FUNCTION, codec.function_from_row(r)) for r in rows]
