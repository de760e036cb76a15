"""`Database.transact` appends the events a write returns (an `Outcome`), in order, as the last
step of the write's own transaction, and answers their ids (`Written`); on the real PostgreSQL."""

from __future__ import annotations

import asyncpg
import pytest

from store import events
from store.db import Database
from store.errors import NotFound
from store.events import EventType, NewEvent, Outcome, Written


async def test_events_are_appended_after_the_write_in_order_and_their_ids_returned(pg_dsn: str) -> None:
    db = await Database.connect(pg_dsn)
    try:
        head = await db.read(events.current_event_id)
        seen_inside: list[int] = []

        async def write(conn: asyncpg.Connection) -> Outcome[str]:
            seen_inside.append(await events.current_event_id(conn))  # no id allocated while the write runs
            return Outcome("done", (NewEvent(EventType.CREATE_DATABASE, db_name="a"),
                                    NewEvent(EventType.DROP_DATABASE, db_name="a")))

        written = await db.transact(write)
        assert written == Written("done", (head + 1, head + 2)) and written.event_id == head + 2
        assert seen_inside == [head]
        logged = await db.read(events.next_events, head, 10)
        assert [(e.event_id, e.event_type) for e in logged] == [(head + 1, "CREATE_DATABASE"),
                                                                 (head + 2, "DROP_DATABASE")]

        async def nothing(conn: asyncpg.Connection) -> Outcome[int]:
            return Outcome(7)

        assert await db.transact(nothing) == Written(7, ()) and (await db.transact(nothing)).event_id == 0

        async def plain(conn: asyncpg.Connection) -> int:
            return 3

        assert await db.transact(plain) == 3  # not an Outcome: handed back as it is

        async def fails(conn: asyncpg.Connection) -> Outcome[None]:
            raise NotFound("gone")

        with pytest.raises(NotFound):
            await db.transact(fails)
        assert await db.read(events.current_event_id) == head + 2
    finally:
        await db.close()
