"""Numbered schema migrations in store/schema/NNNN_name.sql, each applied in its own transaction.

Concurrent starters serialise on an advisory lock, so two gateways starting together apply each
migration once. A database whose schema is newer than the newest migration this code knows is
refused: running old code on a new schema could corrupt it.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from importlib import resources

import asyncpg

from store.errors import SchemaMismatch

_log = logging.getLogger(__name__)

_MIGRATION_LOCK_KEY = 0x6D736777_0001  # "msgw" + 1: advisory lock id for migrations
_FILE = re.compile(r"(\d{4})_([a-z0-9_]+)\.sql")


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str


def known_migrations() -> list[Migration]:
    found = []
    for entry in resources.files("store.schema").iterdir():
        m = _FILE.fullmatch(entry.name)
        if m:
            found.append(Migration(int(m.group(1)), m.group(2), entry.read_text()))
    found.sort(key=lambda mig: mig.version)
    for expected, mig in enumerate(found, start=1):
        if mig.version != expected:
            raise SchemaMismatch(f"migrations are not numbered 1..n without gaps: found {mig.version} at {expected}")
    return found


async def current_version(conn: asyncpg.Connection) -> int:
    exists = await conn.fetchval("SELECT to_regclass('schema_version') IS NOT NULL")
    if not exists:
        return 0
    return int(await conn.fetchval("SELECT coalesce(max(version), 0) FROM schema_version"))


async def migrate(conn: asyncpg.Connection) -> list[int]:
    """Apply the pending migrations; return the versions applied. Refuse a newer schema."""
    migrations = known_migrations()
    newest = migrations[-1].version if migrations else 0
    await conn.execute("SELECT pg_advisory_lock($1)", _MIGRATION_LOCK_KEY)
    try:
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_version ("
            " version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        current = await current_version(conn)
        if current > newest:
            raise SchemaMismatch(
                f"the database schema is at version {current} but this gateway knows versions up to {newest}: "
                "upgrade the gateway (a newer release migrated this database)"
            )
        applied = []
        for mig in migrations:
            if mig.version <= current:
                continue
            async with conn.transaction():
                await conn.execute(mig.sql)
                await conn.execute("INSERT INTO schema_version (version, name) VALUES ($1, $2)", mig.version, mig.name)
            _log.info("applied schema migration %04d_%s", mig.version, mig.name)
            applied.append(mig.version)
        return applied
    finally:
        await conn.execute("SELECT pg_advisory_unlock($1)", _MIGRATION_LOCK_KEY)


async def check_version(conn: asyncpg.Connection) -> None:
    """Refuse to serve against a schema that is missing migrations or newer than this code."""
    newest = known_migrations()[-1].version
    current = await current_version(conn)
    if current > newest:
        raise SchemaMismatch(
            f"the database schema is at version {current} but this gateway knows versions up to {newest}: "
            "upgrade the gateway"
        )
    if current < newest:
        raise SchemaMismatch(f"the database schema is at version {current}; run `metastore-gateway migrate`")
