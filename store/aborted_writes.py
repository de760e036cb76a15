"""Forgetting aborted write ids once no directory holds them (Hive 4's abort clean-up).

Design note. An aborted txn's write id stays listed as aborted in every ValidWriteIdList of its
table while its row in txn_to_write_id lasts, so readers skip whatever it wrote. Without an end,
every failed job would lengthen every snapshot of its table for good (Hive 2 and 3 leave them to
compaction; Hive 4 cleans them in the Cleaner). The Cleaner (poller/compactor.py) picks the tables
due (`due`), deletes the directories that hold only their aborted write ids, and then `forget`s the
ids no directory holds any more: their rows go, and an id without a row counts as committed, which
is harmless once nothing carries it (metadata versions were discarded at the abort, data here).
An id a directory holds beside committed ones (a streaming writer's delta spanning several txns)
stays listed until a compaction has replaced that directory. The txn, left without write ids, is
then forgotten by housekeeping as the txns that wrote nothing are (store/housekeeping.py).

Caches hold their own committed view of each table; one ABORTED_WRITES_FORGOTTEN event per table
tells every gateway's poller to stop listing the ids, so a snapshot taken afterwards (which no
longer lists them) is still covered by the cache.
"""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg

from store.events import EventType, NewEvent, Outcome
from store.sql import compaction as sql


@dataclass(frozen=True, slots=True)
class AbortedWrites:
    table_id: int
    write_ids: frozenset[int]


@dataclass(frozen=True, slots=True)
class TableRoot:
    """A directory to look under, and how many levels of partition directories lie below it."""

    location: str
    depth: int


async def due(conn: asyncpg.Connection, *, more_than: int, older_than_s: float, ended_before_s: float,
              tables: int) -> list[AbortedWrites]:
    """The tables whose aborted write ids are due for clean-up (more than `more_than` of them, or
    the oldest older than `older_than_s`), each with its ids whose txns ended `ended_before_s` ago."""
    rows = await conn.fetch(sql.ABORTED_WRITES_DUE, more_than, older_than_s, ended_before_s, tables)
    return [AbortedWrites(int(r["table_id"]), frozenset(int(w) for w in r["write_ids"])) for r in rows]


async def roots(conn: asyncpg.Connection, table_id: int) -> list[TableRoot]:
    """Every directory a version of the table or of its partitions names (empty locations left out)."""
    return [TableRoot(r["location"], int(r["depth"] or 0))
            for r in await conn.fetch(sql.TABLE_ROOTS, table_id) if r["location"]]


async def forget(conn: asyncpg.Connection, table_id: int, write_ids: frozenset[int]) -> Outcome[list[int]]:
    """Stop listing these aborted write ids (only ids whose txns are aborted are touched): the ids
    forgotten, with the event that tells the caches."""
    if not write_ids:
        return Outcome([])
    gone = sorted(int(r["write_id"]) for r in await conn.fetch(sql.FORGET_ABORTED_WRITE_IDS, table_id,
                                                                 sorted(write_ids)))
    if not gone:
        return Outcome([])
    return Outcome(gone, (NewEvent(EventType.ABORTED_WRITES_FORGOTTEN, table_id=table_id,
                                   message={"table_id": table_id, "write_ids": gone}),))
