"""The synchronized cache end to end: two gateways on one database, as in seed 000."""

from __future__ import annotations

import asyncio
import functools
import re
from pathlib import Path
from typing import AsyncIterator, Awaitable, Callable, TypeVar

import asyncpg
import grpc
import pytest

from gateway.app import Gateway
from poller import apply
from protos.metastore.v1 import admin_pb2, admin_pb2_grpc
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import transactions_pb2 as tpb
from protos.metastore.v1 import transactions_pb2_grpc
from store.cache import loader
from store.events import LogRead
from store.cache.entry import live_view
from tests.builders import table
from tests.conftest import connect, gateway_settings, wait_applied
from tests.txn_helpers import Txns

C = grpc.StatusCode
T = TypeVar("T")
FAST_POLL = {"metastore.cached.rawstore.cache.update.frequency": "100ms"}


async def _gateway(dsn: str, **conf: str) -> Txns:
    gw = Gateway(gateway_settings(dsn, **{**FAST_POLL, **conf}))
    await gw.start()
    client = await connect(f"127.0.0.1:{gw.port}")
    return Txns(client, transactions_pb2_grpc.TransactionsStub(client.channel), gw, dsn)


@pytest.fixture
async def two(pg_dsn: str) -> AsyncIterator[tuple[Txns, Txns]]:
    g1, g2 = await _gateway(pg_dsn), await _gateway(pg_dsn)
    await g1.client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
    await g1.client.catalog.CreateTable(pb.CreateTableRequest(table=table("db", "t", keys=(("p", "string"),),
                                                                          transactional=True)))
    (w,) = await g1.open()
    await g1.add(w, "a", "b")
    await g1.commit(w)
    for g in (g1, g2):
        await wait_applied(g.gw)
    try:
        yield g1, g2
    finally:
        for g in (g1, g2):
            await g.client.channel.close()
            await g.gw.stop()


async def _stats(g: Txns) -> admin_pb2.CacheStatsResponse:
    return await admin_pb2_grpc.AdminStub(g.client.channel).CacheStats(admin_pb2.CacheStatsRequest())


async def _served(g: Txns, call: Callable[[], Awaitable[T]]) -> tuple[T, str]:
    """Run a read; say whether the cache ("cache") or the database ("db:<reason>") answered."""
    before = await _stats(g)
    result = await call()
    after = await _stats(g)
    if after.hits > before.hits:
        return result, "cache"
    reasons = [r for r, n in after.misses_by_reason.items() if n > before.misses_by_reason.get(r, 0)]
    return result, "db:" + ",".join(reasons)


async def _warm(g: Txns) -> None:
    """First read of a table misses and loads it in the background."""
    await g.tag(await g.snapshot(), "a")
    assert g.gw.poller is not None
    await g.gw.poller.wait_loaded()


async def test_seed_two_gateway_flow_step_by_step(two: tuple[Txns, Txns]) -> None:
    g1, g2 = two
    await _warm(g2)
    old = await g2.snapshot()
    assert (await _served(g2, lambda: g2.tag(old, "a")))[1] == "cache"

    assert g2.gw.poller is not None
    g2.gw.poller.pause()  # gateway 2 has not read the log past this point
    (w,) = await g1.open()
    await g1.alter(w, "a", "v2")  # 1. alter on gateway 1 (an ALTER_PARTITION event)
    await g1.commit(w)  # 2. commit (COMMIT_TXN)
    new = await g2.snapshot()  # a query that starts now sees the commit
    tag, path = await _served(g2, lambda: g2.tag(new, "a"))
    assert (tag, path) == ("v2", "db:stale")  # 3. gateway 2 answers from the database
    tag, path = await _served(g2, lambda: g2.tag(old, "a"))
    assert (tag, path) == ("", "cache")  # the old snapshot is still fresh for gateway 2's cache

    g2.gw.poller.resume()
    await wait_applied(g2.gw)  # 4. gateway 2 applies the alter, then the commit
    tag, path = await _served(g2, lambda: g2.tag(new, "a"))
    assert (tag, path) == ("v2", "cache")  # 5. now from the cache
    tag, path = await _served(g2, lambda: g2.tag(old, "a"))
    assert (tag, path) == ("", "cache")  # older snapshots keep their versions, from the cache too


async def test_a_poller_paused_while_it_reads_the_log_applies_nothing_it_read(two: tuple[Txns, Txns]) -> None:
    """pause() holds the cache where it is at once: a batch read from the log while the pause came (the
    events of a commit made after it) is read again on resume, not applied. Tests pause a gateway and
    then write through another; under load its poller's read could still be out, and the write then
    reached the paused cache (one way test_seed_two_gateway_flow_step_by_step, which pauses so, could
    fail as it did once under load, its message not kept)."""
    g1, g2 = two
    await _warm(g2)
    poller = g2.gw.poller
    assert poller is not None
    await wait_applied(g2.gw)
    position = poller.position
    read_log, read_with_the_commit = poller._read_log, asyncio.Event()

    async def pause_while_reading() -> LogRead:
        read = await read_log()
        if read.events:
            poller.pause()  # the pause lands while this read is out
            read_with_the_commit.set()
        return read

    poller._read_log = pause_while_reading  # type: ignore[method-assign]
    (w,) = await g1.open()
    await g1.alter(w, "a", "v2")
    await g1.commit(w)
    await asyncio.wait_for(read_with_the_commit.wait(), 10)
    await asyncio.sleep(0.2)  # a batch that was to be applied would be by now (apply has no awaits)
    assert poller.position == position
    poller._read_log = read_log  # type: ignore[method-assign]
    poller.resume()
    await wait_applied(g2.gw)
    assert poller.position > position and await g2.tag(await g2.snapshot(), "a") == "v2"


async def test_read_your_own_writes_goes_to_the_database(two: tuple[Txns, Txns]) -> None:
    g1, g2 = two
    await _warm(g1)
    (w,) = await g1.open()
    before_writing = await g1.snapshot(w)
    await g1.alter(w, "a", "mine")
    tag, path = await _served(g1, lambda: g1.tag(before_writing, "a"))
    assert tag == "mine" and path.startswith("db:")
    await wait_applied(g1.gw)  # the write's own hold on g1 ends when its poller has applied it
    other = await g1.snapshot()
    assert (await _served(g1, lambda: g1.tag(other, "a"))) == ("", "cache")
    await g1.commit(w)


async def test_monotonic_reads_across_a_gateways_history(two: tuple[Txns, Txns]) -> None:
    g1, g2 = two
    await _warm(g2)
    seen = []
    for i in range(5):
        (w,) = await g1.open()
        await g1.alter(w, "a", f"v{i}")
        await g1.commit(w)
        for _ in range(3):
            seen.append(await g2.tag(await g2.snapshot(), "a"))
    order: list[str | None] = ["", "v0", "v1", "v2", "v3", "v4"]
    assert [order.index(t) for t in seen] == sorted(order.index(t) for t in seen)


async def test_drop_and_recreate_is_caught_by_the_table_id(two: tuple[Txns, Txns]) -> None:
    g1, g2 = two
    await _warm(g2)
    stale = await g2.snapshot()
    await g1.client.catalog.DropTable(pb.DropTableRequest(db_name="db", table_name="t"))
    await g1.client.catalog.CreateTable(pb.CreateTableRequest(table=table("db", "t", keys=(("p", "string"),),
                                                                          transactional=True)))
    await wait_applied(g2.gw)
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await g2.client.catalog.GetTable(pb.GetTableRequest(db_name="db", table_name="t", read=stale))
    assert err.value.code() == C.FAILED_PRECONDITION and str(stale.table_id) in err.value.details()


async def test_a_snapshot_of_a_dropped_table_is_answered_alike_before_and_after_its_name_is_taken_again(
        two: tuple[Txns, Txns]) -> None:
    # A drop deletes the table's versions: a snapshot from before it was answered NOT_FOUND while the name
    # was free and "table id mismatch" once a new table had it (without its table id: NOT_FOUND, then "pass
    # the table_id"), so reads of one snapshot made on either side of the re-create disagreed.
    g1, g2 = two
    await _warm(g2)
    stale = await g2.snapshot()
    unguarded = pb.ReadContext(valid_write_id_list=stale.valid_write_id_list)

    async def answers() -> list[tuple[grpc.StatusCode, str]]:
        out = []
        for g in (g1, g2):
            for read in (stale, unguarded):
                for method, request in (("GetTable", pb.GetTableRequest(db_name="db", table_name="t", read=read)),
                                        ("ListPartitionNames", pb.ListPartitionNamesRequest(
                                            db_name="db", table_name="t", read=read))):
                    with pytest.raises(grpc.aio.AioRpcError) as err:
                        await getattr(g.client.catalog, method)(request)
                    out.append((err.value.code(), err.value.details() or ""))
        return out

    await g1.client.catalog.DropTable(pb.DropTableRequest(db_name="db", table_name="t"))
    await wait_applied(g2.gw)
    dropped = await answers()
    await g1.client.catalog.CreateTable(pb.CreateTableRequest(table=table("db", "t", keys=(("p", "string"),),
                                                                          transactional=True)))
    await wait_applied(g2.gw)
    assert await answers() == dropped
    assert {code for code, _ in dropped} == {C.FAILED_PRECONDITION}
    assert str(stale.table_id) in dropped[0][1]


async def test_a_snapshot_read_by_the_name_a_table_is_renamed_to_later_is_not_found_before_and_after(
        two: tuple[Txns, Txns]) -> None:
    g1, g2 = two
    await _warm(g2)
    snap = await g2.snapshot()
    read = pb.ReadContext(valid_write_id_list=snap.valid_write_id_list.replace("db.t:", "db.t2:"),
                          table_id=snap.table_id)

    async def answers() -> list[tuple[grpc.StatusCode, str]]:
        out = []
        for g in (g1, g2):
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await g.client.catalog.GetTable(pb.GetTableRequest(db_name="db", table_name="t2", read=read))
            out.append((err.value.code(), err.value.details() or ""))
        return out

    before = await answers()
    (w,) = await g1.open()
    await g1.client.catalog.AlterTable(pb.AlterTableRequest(db_name="db", table_name="t", txn_id=w, table=table(
        "db", "t2", keys=(("p", "string"),), transactional=True)))
    await g1.commit(w)
    await wait_applied(g2.gw)
    assert await answers() == before
    assert {code for code, _ in before} == {C.NOT_FOUND}


async def test_managed_read_without_a_write_id_list_is_refused_by_both_paths(two: tuple[Txns, Txns]) -> None:
    g1, g2 = two
    await _warm(g2)
    for g in (g1, g2):
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await g.client.catalog.GetPartitionsByNames(pb.GetPartitionsByNamesRequest(db_name="db", table_name="t",
                                                                                       names=["p=a"]))
        assert err.value.code() == C.FAILED_PRECONDITION


async def test_external_tables_are_eventually_consistent_and_the_token_makes_them_consistent(two: tuple[Txns,
                                                                                                        Txns]) -> None:
    g1, g2 = two
    c1, c2 = g1.client.catalog, g2.client.catalog
    await c1.CreateTable(pb.CreateTableRequest(table=table("db", "ext", keys=(("p", "string"),), external=True)))
    await c1.AddPartitions(pb.AddPartitionsRequest(db_name="db", table_name="ext",
                                                   partitions=[pb.Partition(values=["a"])]))
    await wait_applied(g2.gw)

    async def get(read: pb.ReadContext) -> dict[str, str]:
        reply = await c2.GetPartitionsByNames(pb.GetPartitionsByNamesRequest(db_name="db", table_name="ext",
                                                                             names=["p=a"], read=read))
        return dict(reply.partitions[0].parameters)

    assert g2.gw.poller is not None
    g2.gw.poller.pause()
    altered = await c1.AlterPartitions(pb.AlterPartitionsRequest(db_name="db", table_name="ext", partitions=[
        pb.Partition(values=["a"], parameters={"v": "2"})]))
    assert await get(pb.ReadContext()) == {}  # eventually consistent: gateway 2 has not caught up
    assert await get(pb.ReadContext(min_event_id=altered.event_id)) == {"v": "2"}  # the token goes to the database
    g2.gw.poller.resume()
    await wait_applied(g2.gw)
    result, path = await _served(g2, lambda: get(pb.ReadContext(min_event_id=altered.event_id)))
    assert (result, path) == ({"v": "2"}, "cache")


async def test_databases_are_cached_under_the_token_rule(two: tuple[Txns, Txns]) -> None:
    g1, g2 = two
    altered = await g1.client.catalog.AlterDatabase(pb.AlterDatabaseRequest(name="db",
                                                                            database=pb.Database(description="new")))
    got = await g2.client.catalog.GetDatabase(pb.GetDatabaseRequest(name="db",
                                                                    read=pb.ReadContext(min_event_id=altered.event_id)))
    assert got.database.description == "new"
    await wait_applied(g2.gw)
    result, path = await _served(g2, lambda: g2.client.catalog.GetDatabase(pb.GetDatabaseRequest(name="db")))
    assert path == "cache" and result.database.description == "new"


async def test_evicted_tables_are_read_from_the_database_and_reload(pg_dsn: str) -> None:
    g = await _gateway(pg_dsn, **{"metastore.gateway.cache.max.partitions": "3"})
    try:
        c = g.client.catalog
        await c.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
        for name in ("t1", "t2"):
            await c.CreateTable(pb.CreateTableRequest(table=table("db", name, keys=(("p", "string"),), external=True)))
            await c.AddPartitions(pb.AddPartitionsRequest(db_name="db", table_name=name, partitions=[
                pb.Partition(values=[v]) for v in ("a", "b")]))
        await wait_applied(g.gw)
        stats = await _stats(g)
        assert stats.partitions <= 3 and stats.evictions >= 1
        reads = [c.GetPartitionsByNames(pb.GetPartitionsByNamesRequest(db_name="db", table_name=n, names=["p=a",
                                                                                                          "p=b"]))
                 for n in ("t1", "t2")]
        assert [len((await r).partitions) for r in reads] == [2, 2]
        assert (await _stats(g)).misses_by_reason["evicted"] >= 1
    finally:
        await g.client.channel.close()
        await g.gw.stop()


async def test_a_log_trimmed_past_the_poller_reloads_the_cache(two: tuple[Txns, Txns]) -> None:
    g1, g2 = two
    await _warm(g2)
    assert g2.gw.poller is not None
    g2.gw.poller.pause()
    (w,) = await g1.open()
    await g1.alter(w, "a", "after-trim")
    await g1.commit(w)
    conn = await asyncpg.connect(g1.dsn)
    try:  # retention deleted events gateway 2 has not read (all but the newest)
        await conn.execute("DELETE FROM notification_log WHERE event_id > $1 AND event_id < "
                           "(SELECT max(event_id) FROM notification_log)", g2.gw.poller.position)
    finally:
        await conn.close()
    g2.gw.poller.resume()
    for _ in range(100):
        if g2.gw.poller.stats.reloads:
            break
        await asyncio.sleep(0.02)
    assert g2.gw.poller.stats.reloads == 1
    assert await g2.tag(await g2.snapshot(), "a") == "after-trim"


async def test_the_poller_survives_a_database_restart(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    from gateway.config import load_settings

    gw = Gateway(load_settings(environ={}, overrides={
        "metastore.gateway.data.dir": str(tmp_path / "data"), "metastore.gateway.port": 0, "hive.metastore.port": 0,
        "metastore.gateway.embedded.unsafe.fast": "true", **FAST_POLL}))
    await gw.start()
    client = await connect(f"127.0.0.1:{gw.port}")
    try:
        await client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
        assert gw._pg is not None
        await asyncio.to_thread(gw._pg.stop)
        await asyncio.sleep(0.5)
        await asyncio.to_thread(gw._pg.start)
        for _ in range(100):  # the pool reconnects on its own; retry until a write goes through
            try:
                await client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="after")))
                break
            except grpc.aio.AioRpcError as exc:
                assert exc.code() == C.UNAVAILABLE
                await asyncio.sleep(0.1)
        await wait_applied(gw)  # the poller read the log again after the outage ...
        assert gw.poller is not None and gw.poller.stats.errors >= 1  # ... which it did run into
        assert gw.cache is not None and "after" in gw.cache.databases  # and applied the write made after the restart
        before = gw.cache.stats.hits
        got = await client.catalog.GetDatabase(pb.GetDatabaseRequest(name="after"))
        assert got.database.name == "after" and gw.cache.stats.hits == before + 1
    finally:
        await client.channel.close()
        await gw.stop()


def test_cache_stats_command_prints_what_the_gateway_reports(pg_dsn: str) -> None:
    from tests.conftest import GatewayProcess
    import subprocess
    import sys

    proc = GatewayProcess("--dsn", pg_dsn)
    try:
        address = proc.wait_serving()
        out = subprocess.run([sys.executable, "-m", "gateway.cli", "cache-stats", "--address", address],
                             capture_output=True, text=True, timeout=30)
        assert out.returncode == 0, out.stderr
        assert "cache            enabled" in out.stdout and "poller           at event" in out.stdout
    finally:
        proc.stop()
    down = subprocess.run([sys.executable, "-m", "gateway.cli", "cache-stats", "--address", "127.0.0.1:1"],
                          capture_output=True, text=True, timeout=30)
    assert down.returncode == 1 and "UNAVAILABLE" in down.stderr


async def test_prometheus_endpoint_exports_hits_misses_and_poller_lag(pg_dsn: str) -> None:
    import urllib.request

    g = await _gateway(pg_dsn, **{"metastore.gateway.metrics.port": "0"})
    try:
        await g.client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
        await wait_applied(g.gw)
        await g.client.catalog.GetDatabase(pb.GetDatabaseRequest(name="db"))
        body = await asyncio.to_thread(
            lambda: urllib.request.urlopen(f"http://127.0.0.1:{g.gw.metrics_port}/metrics", timeout=10).read().decode())
        assert "metastore_cache_hits_total 1.0" in body
        assert "metastore_poller_position" in body and "metastore_cache_fallback_seconds_bucket" in body
        batches = re.search(r"^metastore_poller_batches_total (\S+)$", body, re.M)
        assert batches is not None and float(batches.group(1)) >= 1  # CreateDatabase's event came in a batch
        assert (await _stats(g)).poller_batches == float(batches.group(1))
    finally:
        await g.client.channel.close()
        await g.gw.stop()


async def test_a_table_made_transactional_is_read_under_snapshots_from_then_on(two: tuple[Txns, Txns]) -> None:
    """Hive lets a managed table become transactional ('transactional'='true'). The caches that hold
    it must from then on answer by the caller's snapshot, as the database does: a txn's write
    stays invisible to others until it commits."""
    g1, g2 = two
    c1 = g1.client.catalog
    plain = table("db", "conv", keys=(("p", "string"),))
    await c1.CreateTable(pb.CreateTableRequest(table=plain))
    await c1.AddPartitions(pb.AddPartitionsRequest(db_name="db", table_name="conv",
                                                   partitions=[pb.Partition(values=["a"])]))
    for g in (g1, g2):  # both caches hold it as a latest-wins table
        await g.client.catalog.GetPartitionsByNames(pb.GetPartitionsByNamesRequest(db_name="db", table_name="conv",
                                                                                   names=["p=a"]))
        assert g.gw.poller is not None
        await g.gw.poller.wait_loaded()
    made = pb.Table()
    made.CopyFrom(plain)
    made.transactional = True
    await c1.AlterTable(pb.AlterTableRequest(db_name="db", table_name="conv", table=made))
    (writer,) = await g1.open()
    await g1.add(writer, "b", table_name="conv")
    for g in (g1, g2):
        await wait_applied(g.gw)

    async def names(g: Txns) -> tuple[list[str], str]:
        read = await g.snapshot(name="db.conv")
        reply, path = await _served(g, lambda: g.client.catalog.GetPartitionsByNames(pb.GetPartitionsByNamesRequest(
            db_name="db", table_name="conv", names=["p=a", "p=b"], read=read)))
        return [p.values[0] for p in reply.partitions], path

    assert await names(g2) == (["a"], "cache")  # the open txn's partition is not in another's snapshot
    await g1.commit(writer)
    await wait_applied(g2.gw)
    assert await names(g2) == (["a", "b"], "cache")


@pytest.mark.parametrize("ended", ["committed", "aborted"])
async def test_a_table_created_over_ids_reserved_by_txns_that_ended_is_served_from_the_cache(
        two: tuple[Txns, Txns], ended: str) -> None:
    """A txn given a write id under a name no table has (a reservation, as for Hive's CTAS) that commits
    or aborts before a table of that name is created: the creation takes the id over as the database
    then counts it (committed, or aborted), and every cache must count it so. Counted open, it made a
    cache stale for good for a snapshot that commits it (found by loadtest.consistency's churn writer
    allocating while its table was dropped and made again)."""
    g1, g2 = two
    (early,) = await g1.open()
    await g1.txn.AllocateTableWriteIds(tpb.AllocateTableWriteIdsRequest(db_name="db", table_name="ctas",
                                                                        txn_ids=[early]))  # reserved
    if ended == "committed":
        await g1.commit(early)
    else:
        await g1.txn.AbortTxns(tpb.AbortTxnsRequest(txn_ids=[early]))
    await g1.client.catalog.CreateTable(pb.CreateTableRequest(table=table("db", "ctas", keys=(("p", "string"),),
                                                                          transactional=True)))
    (writer,) = await g1.open()
    await g1.add(writer, "a", table_name="ctas")
    await g1.commit(writer)
    for g in (g1, g2):
        await wait_applied(g.gw)
        read = await g.snapshot(name="db.ctas")
        entry = g.gw.cache.by_name("db", "ctas") if g.gw.cache else None
        # Quiet: the cache's own list of the table is the database's.
        assert entry is not None and entry.committed_list.to_string() == read.valid_write_id_list
        names, path = await _served(g, functools.partial(g.names, read, "ctas"))
        assert (names, path) == (["p=a"], "cache")


async def test_a_gateway_started_lazily_serves_existing_databases_from_its_cache(two: tuple[Txns, Txns]) -> None:
    """Tables are loaded as reads ask for them; databases, few and small, at start: a database created
    before this gateway started is read from its cache, not from PostgreSQL on every call."""
    g1, _ = two
    await g1.client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="early",
                                                                                        description="d")))
    late = await _gateway(g1.dsn)
    try:
        got, path = await _served(late, lambda: late.client.catalog.GetDatabase(pb.GetDatabaseRequest(name="early")))
        assert (got.database.description, path) == ("d", "cache")
    finally:
        await late.client.channel.close()
        await late.gw.stop()


async def test_a_large_table_is_loaded_in_steps_and_reloaded_after_a_rename(
        two: tuple[Txns, Txns], monkeypatch: pytest.MonkeyPatch) -> None:
    """A fill encodes partitions and builds the live view chunk by chunk (here 7 and 28 at a time),
    and a rename of a table past RENAME_REFRAME_MAX partitions (here 50) drops it from the cache
    instead of re-framing them all at once: the next read loads it again. Reads are right throughout."""
    monkeypatch.setattr(loader, "CHUNK", 7)
    monkeypatch.setattr(apply, "RENAME_REFRAME_MAX", 50)
    g1, _ = two
    values = [f"v{i:03d}" for i in range(120)]
    (w,) = await g1.open()
    await g1.add(w, *values)
    await g1.commit(w)
    (pending,) = await g1.open()  # an open txn's write: in the live view's pending list, not visible
    await g1.alter(pending, "v007", "pending")
    late = await _gateway(g1.dsn)
    try:
        async def read(g: Txns, table_name: str) -> tuple[list[str], str]:
            snap = await g.snapshot(name=f"db.{table_name}")
            reply, path = await _served(g, lambda: g.client.catalog.GetPartitionsByNames(pb.GetPartitionsByNamesRequest(
                db_name="db", table_name=table_name, names=[f"p={v}" for v in values], read=snap)))
            return [p.parameters.get("tag", "") + p.values[0] for p in reply.partitions], path

        expected = values  # v007's alter is not committed: nobody else sees its tag
        assert (await read(late, "t"))[0] == expected  # a miss: loads the table
        assert late.gw.poller is not None
        await late.gw.poller.wait_loaded()
        cache = late.gw.cache
        assert cache is not None
        entry = cache.by_name("db", "t")
        assert entry is not None and entry.partition_count == 122  # with the fixture's p=a and p=b
        fresh = live_view(entry.partitions, entry.view)
        assert (entry.live.versions, entry.live.frames, entry.live.pending) == (fresh.versions, fresh.frames,
                                                                                fresh.pending)
        assert await read(late, "t") == (expected, "cache")

        renamed = (await g1.client.catalog.GetTable(pb.GetTableRequest(db_name="db", table_name="t",
                                                                      read=await g1.snapshot()))).table
        renamed.name = "t_renamed"
        (rename,) = await g1.open()
        await g1.client.catalog.AlterTable(pb.AlterTableRequest(db_name="db", table_name="t", table=renamed,
                                                                txn_id=rename))
        await g1.commit(rename)
        await wait_applied(late.gw)
        assert cache.get(entry.table_id) is None  # dropped, not re-framed
        assert await read(late, "t_renamed") == (expected, "db:unknown_table")
        await late.gw.poller.wait_loaded()
        assert await read(late, "t_renamed") == (expected, "cache")
    finally:
        await late.client.channel.close()
        await late.gw.stop()


async def test_the_poller_applies_other_gateways_commits_while_its_pool_is_busy(pg_dsn: str) -> None:
    """The poller reads the log on a connection of its own: a gateway whose every pooled connection is
    taken (by its own writes, under load) still applies another gateway's commit, and serves it from
    its cache. Through the pool, the poller would wait for a connection up to the acquire time-out."""
    busy = await _gateway(pg_dsn, **{"datanucleus.connectionPool.maxPoolSize": "2",
                                     "metastore.gateway.pool.acquire.timeout": "60s"})
    writer = await _gateway(pg_dsn)
    pool = busy.gw.database.pool
    held = [await pool.acquire() for _ in range(2)]
    try:
        created = await writer.client.catalog.CreateDatabase(
            pb.CreateDatabaseRequest(database=pb.Database(name="elsewhere", description="from the writer")))
        assert busy.gw.poller is not None
        async with asyncio.timeout(5):
            while busy.gw.poller.position < created.event_id:
                await asyncio.sleep(0.01)
        reply, path = await _served(busy, lambda: busy.client.catalog.GetDatabase(pb.GetDatabaseRequest(
            name="elsewhere", read=pb.ReadContext(min_event_id=created.event_id)), timeout=5))
        assert (reply.database.description, path) == ("from the writer", "cache")
    finally:
        for conn in held:
            await pool.release(conn)
        for g in (busy, writer):
            await g.client.channel.close()
            await g.gw.stop()
