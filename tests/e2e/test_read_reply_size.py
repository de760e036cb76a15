"""Partition reads whose answer would be larger than hive.metastore.server.max.message.size: gRPC refuses
such a reply itself once the handler has returned it ("Sent message larger than max (N vs. L)"), naming
neither the setting nor what to do. The gateway refuses it first, saying both: ask for fewer names, narrow
the filter, or, for a partition too large for any answer, raise the setting. ListPartitionNames answers a
shorter page instead (its token goes on from there)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import AsyncIterator

import grpc
import pytest

from gateway.app import Gateway
from protos.metastore.v1 import catalog_pb2 as pb
from tests.builders import table
from tests.conftest import GatewayClient, connect, running_gateway, wait_applied

LIMIT = 64 * 1024  # hive.metastore.server.max.message.size for these tests
COUNT = 9000  # partitions: their names take ~90 KB, the partitions ~2 MB (~240 bytes each)


@dataclass
class Running:
    gateway: Gateway
    client: GatewayClient
    cached: bool

    async def warm(self) -> None:
        """With the cache on, have it hold table t's partitions, so that a read is a hit."""
        if self.cached:
            await wait_applied(self.gateway)
            await self.client.catalog.GetPartitionsByNames(pb.GetPartitionsByNamesRequest(
                db_name="db", table_name="t", names=["ds=00000"]))
            await wait_applied(self.gateway)

    def hits(self) -> int:
        return self.gateway.cache.stats.hits if self.cached and self.gateway.cache else 0


@pytest.fixture(params=["cache", "database"])
async def running(pg_dsn: str, request: pytest.FixtureRequest) -> AsyncIterator[Running]:
    """A gateway with a 64 KiB message size, answering from its cache or from PostgreSQL alone; its
    database db and table t partitioned by ds."""
    cached = request.param == "cache"
    async with running_gateway(pg_dsn, **{"hive.metastore.server.max.message.size": str(LIMIT),
                                          "metastore.gateway.cache.enabled": str(cached).lower()}) as gw:
        client = await connect(f"127.0.0.1:{gw.port}")
        try:
            await client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
            await client.catalog.CreateTable(pb.CreateTableRequest(table=table("db", "t", keys=(("ds", "string"),))))
            yield Running(gw, client, cached)
        finally:
            await client.channel.close()


async def _add_many(client: GatewayClient) -> list[str]:
    values = [f"{i:05d}" for i in range(COUNT)]
    for start in range(0, COUNT, 1000):  # each request under the limit too
        await client.catalog.AddPartitions(pb.AddPartitionsRequest(
            db_name="db", table_name="t", partitions=[pb.Partition(values=[v]) for v in values[start:start + 1000]],
            need_result=False))
    return [f"ds={v}" for v in values]


async def _refusal(call: object) -> str:
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await call  # type: ignore[misc]
    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    details = refused.value.details() or ""
    assert "hive.metastore.server.max.message.size" in details and f"({LIMIT})" in details, details
    return details


async def test_a_read_whose_answer_is_over_the_message_size_is_refused_saying_what_to_ask(running: Running) -> None:
    """By names and by filter, from the cache and from PostgreSQL alike; before: gRPC's "Sent message
    larger than max"."""
    client = running.client
    names = await _add_many(client)
    await running.warm()
    hits = running.hits()
    details = await _refusal(client.catalog.GetPartitionsByNames(pb.GetPartitionsByNamesRequest(
        db_name="db", table_name="t", names=names[:1000])))
    assert "the answer of 1000 partitions of db.t would take" in details and "ask for fewer names" in details
    fewer = await client.catalog.GetPartitionsByNames(pb.GetPartitionsByNamesRequest(
        db_name="db", table_name="t", names=names[:200]))
    assert [p.name for p in fewer.partitions] == names[:200]
    details = await _refusal(client.catalog.GetPartitionsByFilter(pb.GetPartitionsByFilterRequest(
        db_name="db", table_name="t", filter="ds < '01000'")))
    assert "narrow the filter" in details
    assert (running.hits() - hits == 3) == running.cached


async def test_a_partition_too_large_for_any_answer_is_named(pg_dsn: str, running: Running) -> None:
    """A partition larger than any answer this gateway sends (here written through another gateway, whose
    setting is larger, as after the setting was lowered: this one would refuse to write it, its event too
    large to log) reads as refused, naming it and that only the setting helps."""
    client = running.client
    async with running_gateway(pg_dsn, **{"hive.metastore.server.max.message.size": str(1 << 20)}) as other:
        writer = await connect(f"127.0.0.1:{other.port}")
        try:
            await writer.catalog.AddPartitions(pb.AddPartitionsRequest(
                db_name="db", table_name="t", need_result=False, partitions=[
                    pb.Partition(values=["00000"]),
                    pb.Partition(values=["big"], parameters={f"p{i}": "x" * 10_000 for i in range(7)})]))
        finally:
            await writer.channel.close()
    await running.warm()
    for names in (["ds=big"], ["ds=00000", "ds=big"]):
        details = await _refusal(client.catalog.GetPartitionsByNames(pb.GetPartitionsByNamesRequest(
            db_name="db", table_name="t", names=names)))
        assert "partition ds=big of db.t alone takes" in details and "no call can read it" in details
        assert "raise that setting" in details
    small = await client.catalog.GetPartitionsByNames(pb.GetPartitionsByNamesRequest(
        db_name="db", table_name="t", names=["ds=00000"]))
    assert [p.name for p in small.partitions] == ["ds=00000"]


async def test_partition_names_come_in_shorter_pages_rather_than_a_reply_too_large(running: Running) -> None:
    """9,000 names take ~90 KB: a page asked of all of them answers as many as 64 KiB holds, with a token
    that goes on from there (before: gRPC's "Sent message larger than max")."""
    client = running.client
    names = await _add_many(client)
    await running.warm()
    hits = running.hits()
    got: list[str] = []
    pages = []
    token = ""
    while True:
        reply = await client.catalog.ListPartitionNames(pb.ListPartitionNamesRequest(
            db_name="db", table_name="t", page_size=COUNT, page_token=token))
        assert reply.ByteSize() <= LIMIT
        got += reply.names
        pages.append(len(reply.names))
        token = reply.next_page_token
        if not token:
            break
    assert got == names and len(pages) == 2 and pages[0] > LIMIT // 12
    assert (running.hits() - hits == 2) == running.cached


async def test_lists_without_pages_keep_within_the_message_size(pg_dsn: str) -> None:
    """ListDatabases and ListTables (no paging, as Hive's get_all_*) refuse a list over the configured
    message size saying so; ShowTransactions answers the rows that fit and says it is truncated (before:
    both were measured against a fixed 3 MiB, so under a smaller setting gRPC failed the call with "Sent
    message larger than max")."""
    from protos.metastore.v1 import transactions_pb2 as tpb
    from protos.metastore.v1 import transactions_pb2_grpc

    async with running_gateway(pg_dsn, **{"hive.metastore.server.max.message.size": str(LIMIT)}) as gw:
        client = await connect(f"127.0.0.1:{gw.port}")
        try:
            names = [f"a_database_with_a_rather_long_name_to_fill_the_answer_sooner_{i:04d}" for i in range(1100)]
            for start in range(0, len(names), 100):
                for name in names[start:start + 100]:
                    await client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name=name)))
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await client.catalog.ListDatabases(pb.ListDatabasesRequest())
            details = refused.value.details() or ""
            assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "ListDatabases" in details and "narrow the request with a pattern" in details, details
            some = await client.catalog.ListDatabases(pb.ListDatabasesRequest(pattern="*_000*"))
            assert len(some.names) == 10

            txns = transactions_pb2_grpc.TransactionsStub(client.channel)
            for _ in range(3):
                await txns.OpenTxns(tpb.OpenTxnsRequest(num_txns=1000, user="a-user-name-of-some-length",
                                                        hostname="a-host-name-of-some-length.example.com"))
            shown = await txns.ShowTransactions(tpb.ShowTransactionsRequest())
            assert shown.truncated and 0 < len(shown.transactions) < 3000
            assert shown.ByteSize() <= LIMIT
        finally:
            await client.channel.close()
