"""The poller applies a write's events whole: a batch of the log never ends inside one write's events,
so the cache never shows a state no snapshot of the database had (an exchanged partition in neither
table, between the drop on the source and the add on the destination)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from protos.metastore.v1 import catalog_pb2 as pb
from store import events
from store.catalog_store import CatalogStore
from store.models import Partition
from store.snapshot import ReadSnapshot
from tests.builders import table
from tests.conftest import connect, running_gateway, wait_applied

LATEST = ReadSnapshot()


async def test_a_batch_runs_on_to_the_end_of_the_write_it_would_have_split(pg_dsn: str) -> None:
    async with running_gateway(pg_dsn, **{"metastore.gateway.poller.batch.size": "2"}) as gw:
        client = await connect(f"127.0.0.1:{gw.port}")
        try:
            c = client.catalog
            await c.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
            for name in ("src", "dst", "other"):
                await c.CreateTable(pb.CreateTableRequest(table=table("db", name, keys=(("p", "string"),),
                                                                      external=True)))
            await c.AddPartitions(pb.AddPartitionsRequest(db_name="db", table_name="src",
                                                          partitions=[pb.Partition(values=["a"])]))
            facade, poller = gw.cached_catalog, gw.poller
            assert facade is not None and poller is not None
            for name in ("src", "dst"):  # both tables cached
                facade.cached_partitions_by_names("db", name, ["p=a"], LATEST)
            await poller.wait_loaded()
            await wait_applied(gw)

            def state() -> tuple[bool, bool]:
                """Whether src and dst each hold p=a, in the cache."""
                held = []
                for name in ("src", "dst"):
                    hit = facade.cached_partitions_by_names("db", name, ["p=a"], LATEST)
                    frames = getattr(hit, "frames", None)
                    assert frames is not None, f"{name} is not answered from the cache: {hit}"
                    held.append(bool(pb.GetPartitionsByNamesResponse.FromString(b"".join(frames)).partitions))
                return held[0], held[1]

            assert state() == (True, False)
            poller.pause()
            other_gateway = CatalogStore(gw.database, warehouse_dir=gw.settings.warehouse_dir)
            # One event, then the exchange's two (a drop on src, an add on dst): batches of 2 would end
            # between the exchange's drop and its add.
            await other_gateway.add_partitions("db", "other", [Partition("db", "other", ("x",))], if_not_exists=False)
            _, exchange_end = await other_gateway.exchange_partitions("db", "src", "db", "dst", ["p=a"],
                                                                      relocate=False)
            batch = (await gw.database.read(events.next_events_and_head, poller.position, 2)).events
            assert [e.event_id for e in batch] == [exchange_end - 2, exchange_end - 1, exchange_end]

            seen = {state()}
            poller.resume()
            async with asyncio.timeout(10):
                while poller.position < exchange_end:
                    seen.add(state())
                    await asyncio.sleep(0)
            seen.add(state())
            assert seen == {(True, False), (False, True)}, f"the cache showed half a write: {sorted(seen)}"
        finally:
            await client.channel.close()


async def test_an_event_the_cache_cannot_apply_makes_it_reload_rather_than_stop(pg_dsn: str) -> None:
    """A logged event this gateway cannot apply (a broken or newer writer's) is retried a few times,
    then the cache reloads from PostgreSQL past it: reads are not answered forever at a position that
    no longer moves, and later writes reach the cache. (A table's event that fails drops that table
    from the cache, and the retry passes it; a database's has no such way out.)"""
    async with running_gateway(pg_dsn) as gw:
        client = await connect(f"127.0.0.1:{gw.port}")
        try:
            await client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
            facade, poller = gw.cached_catalog, gw.poller
            assert facade is not None and poller is not None
            await wait_applied(gw)
            assert facade.cached_database("db") == facade.cache.databases["db"]
            reloads = poller.stats.reloads
            await gw.database.run(_append_broken_database_event)
            other_gateway = CatalogStore(gw.database, warehouse_dir=gw.settings.warehouse_dir)
            db = (await other_gateway.get_database("db")).value
            await other_gateway.alter_database("db", replace(db, description="after"))
            async with asyncio.timeout(20):
                while poller.stats.reloads == reloads:
                    await asyncio.sleep(0.05)
            await wait_applied(gw)
            assert facade.cache.databases["db"].description == "after"
            assert poller.stats.reloads == reloads + 1
        finally:
            await client.channel.close()


async def _append_broken_database_event(conn: Any) -> None:
    await conn.execute(
        "SELECT append_events(ARRAY['ALTER_DATABASE'], ARRAY['db'], ARRAY[''], ARRAY[0::bigint], ARRAY[0::bigint], "
        "ARRAY[0::bigint], ARRAY['{\"database\": {\"no\": \"database\"}}'::jsonb])")
