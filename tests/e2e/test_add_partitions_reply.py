"""AddPartitions' and AlterPartitions' answers fit hive.metastore.server.max.message.size, or the write is
refused before it commits: gRPC checks a reply's size only once the handler has returned it, so an answer
too large to send reached the caller as RESOURCE_EXHAUSTED for a write that had happened. `need_result`
false (Hive's needResult) asks for no partitions back, as a write of many does."""

from __future__ import annotations

from dataclasses import dataclass
from typing import AsyncIterator

import grpc
import pytest

from gateway.app import Gateway
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import events_pb2 as epb
from tests.builders import table
from tests.conftest import GatewayClient, connect, running_gateway

LIMIT = 1 << 20  # hive.metastore.server.max.message.size for these tests: 1 MiB
MANY = 9000  # partitions whose answer (their storage descriptors) takes about 2 MiB; the request about 100 KB


@dataclass
class Running:
    gateway: Gateway
    client: GatewayClient


@pytest.fixture
async def running(pg_dsn: str) -> AsyncIterator[Running]:
    """A gateway with a 1 MiB message size, its database db and table t partitioned by ds."""
    async with running_gateway(pg_dsn, **{"hive.metastore.server.max.message.size": str(LIMIT)}) as gw:
        client = await connect(f"127.0.0.1:{gw.port}")
        try:
            await client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
            await client.catalog.CreateTable(pb.CreateTableRequest(table=table("db", "t", keys=(("ds", "string"),))))
            yield Running(gw, client)
        finally:
            await client.channel.close()


def _many(prefix: str = "") -> list[pb.Partition]:
    return [pb.Partition(values=[f"{prefix}{i:05d}"]) for i in range(MANY)]


async def _names(client: GatewayClient) -> list[str]:
    return list((await client.catalog.ListPartitionNames(pb.ListPartitionNamesRequest(
        db_name="db", table_name="t"))).names)


async def _head(client: GatewayClient) -> int:
    return (await client.events.GetCurrentNotificationEventId(epb.GetCurrentNotificationEventIdRequest())).event_id


async def test_an_add_whose_answer_would_exceed_the_message_size_is_refused_before_it_commits(
        running: Running) -> None:
    """9,000 partitions (a request of ~100 KB) answered whole take ~2 MiB: before, the add committed and
    its answer then failed RESOURCE_EXHAUSTED ("Sent message larger than max"), so the caller was told of
    a failure for partitions that were there (its retry: ALREADY_EXISTS). Now it is refused before it
    commits: nothing added, no event, and the message says what to do."""
    client = running.client
    request = pb.AddPartitionsRequest(db_name="db", table_name="t", partitions=_many())
    assert request.ByteSize() < LIMIT // 4
    before = await _head(client)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await client.catalog.AddPartitions(request)
    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    details = refused.value.details() or ""
    assert "hive.metastore.server.max.message.size" in details and str(LIMIT) in details
    assert "need_result" in details and "nothing was added" in details
    assert len(details) <= 1000
    assert await _names(client) == [] and await _head(client) == before
    # the same add, asked as the message says, is done: answered with its event and no partitions
    request.need_result = False
    reply = await client.catalog.AddPartitions(request)
    assert list(reply.partitions) == [] and reply.event_id > before
    assert len(await _names(client)) == MANY


async def test_need_result_unset_or_true_answers_every_partition_added_and_false_none(running: Running) -> None:
    client = running.client
    unset = await client.catalog.AddPartitions(pb.AddPartitionsRequest(
        db_name="db", table_name="t", partitions=[pb.Partition(values=["a"]), pb.Partition(values=["b"])]))
    assert [p.name for p in unset.partitions] == ["ds=a", "ds=b"] and unset.partitions[0].sd.location.endswith(
        "/db.db/t/ds=a")
    asked = await client.catalog.AddPartitions(pb.AddPartitionsRequest(
        db_name="db", table_name="t", partitions=[pb.Partition(values=["c"])], need_result=True))
    assert [p.name for p in asked.partitions] == ["ds=c"] and asked.event_id > unset.event_id
    not_asked = await client.catalog.AddPartitions(pb.AddPartitionsRequest(
        db_name="db", table_name="t", partitions=[pb.Partition(values=["d"])], need_result=False))
    assert list(not_asked.partitions) == [] and not_asked.event_id > asked.event_id
    assert await _names(client) == ["ds=a", "ds=b", "ds=c", "ds=d"]
    # with if_not_exists, the answer (asked for) holds only the partitions this add added
    again = await client.catalog.AddPartitions(pb.AddPartitionsRequest(
        db_name="db", table_name="t", partitions=[pb.Partition(values=["d"]), pb.Partition(values=["e"])],
        if_not_exists=True))
    assert [p.name for p in again.partitions] == ["ds=e"]


async def test_the_refusal_counts_the_answer_as_grpc_sends_it(running: Running) -> None:
    """An add whose answer is 1 KiB over the limit is refused, nothing added; 1 KiB under, it is answered
    (the partitions' parameters pad the answer; each request is under the limit, without the storage
    descriptors the answer adds)."""
    client = running.client
    (probe,) = (await client.catalog.AddPartitions(pb.AddPartitionsRequest(
        db_name="db", table_name="t", partitions=[pb.Partition(values=["p0000"], parameters={"pad": ""})]))).partitions
    count = 100

    def answer_size(pad: int) -> int:
        """The answer to `count` partitions like the probe (names of its length) with a `pad` of this size."""
        one = pb.Partition()
        one.CopyFrom(probe)
        one.parameters["pad"] = "x" * pad
        return pb.AddPartitionsResponse(partitions=[one] * count, event_id=2**20).ByteSize()

    def parts(prefix: str, target: int) -> list[pb.Partition]:
        pad = (target - answer_size(0)) // count
        assert abs(answer_size(pad) - target) < 512
        return [pb.Partition(values=[f"{prefix}{i:04d}"], parameters={"pad": "x" * pad}) for i in range(count)]

    before = await _head(client)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await client.catalog.AddPartitions(pb.AddPartitionsRequest(db_name="db", table_name="t",
                                                                   partitions=parts("q", LIMIT + 1024)))
    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "need_result" in (refused.value.details() or "")
    assert await _names(client) == ["ds=p0000"] and await _head(client) == before
    reply = await client.catalog.AddPartitions(pb.AddPartitionsRequest(db_name="db", table_name="t",
                                                                       partitions=parts("r", LIMIT - 1024)))
    assert len(reply.partitions) == count and LIMIT - 2048 < reply.ByteSize() <= LIMIT


async def test_an_alter_whose_answer_would_exceed_the_message_size_is_refused_before_it_commits(
        running: Running) -> None:
    """9,000 partitions altered, each sent with its values and a parameter (no storage descriptor: each
    keeps its location), are answered as stored, ~2 MiB: before, the alter committed and its answer then
    failed RESOURCE_EXHAUSTED ("Sent message larger than max"). Now it is refused before it commits:
    nothing altered, no event, and the message says what to do."""
    client = running.client
    await client.catalog.AddPartitions(pb.AddPartitionsRequest(db_name="db", table_name="t", partitions=_many(),
                                                               need_result=False))
    request = pb.AlterPartitionsRequest(db_name="db", table_name="t", partitions=[
        pb.Partition(values=list(p.values), parameters={"tag": "altered"}) for p in _many()])
    assert request.ByteSize() < LIMIT // 4
    before = await _head(client)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await client.catalog.AlterPartitions(request)
    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    details = refused.value.details() or ""
    assert "hive.metastore.server.max.message.size" in details and str(LIMIT) in details
    assert "need_result" in details and "nothing was altered" in details and "alter fewer" in details
    assert await _head(client) == before and await _tags(client, ["ds=00000", "ds=08999"]) == ["", ""]
    # the same alter, asked as the message says, is done: answered with its event and no partitions
    request.need_result = False
    reply = await client.catalog.AlterPartitions(request)
    assert list(reply.partitions) == [] and reply.event_id > before
    assert await _tags(client, ["ds=00000", "ds=08999"]) == ["altered", "altered"]


async def test_an_alter_answers_the_partitions_as_stored_unless_need_result_is_false(running: Running) -> None:
    client = running.client
    added = (await client.catalog.AddPartitions(pb.AddPartitionsRequest(
        db_name="db", table_name="t", partitions=[pb.Partition(values=[v]) for v in "abc"]))).partitions

    def alter(value: str, tag: str, **need: bool) -> pb.AlterPartitionsRequest:
        return pb.AlterPartitionsRequest(db_name="db", table_name="t", partitions=[
            pb.Partition(values=[value], parameters={"tag": tag})], **need)

    unset = await client.catalog.AlterPartitions(alter("a", "1"))
    assert [(p.name, p.parameters["tag"]) for p in unset.partitions] == [("ds=a", "1")]
    assert unset.partitions[0].sd.location == added[0].sd.location, "answered as stored: the location kept"
    asked = await client.catalog.AlterPartitions(alter("b", "2", need_result=True))
    assert [p.name for p in asked.partitions] == ["ds=b"] and asked.event_id > unset.event_id
    not_asked = await client.catalog.AlterPartitions(alter("c", "3", need_result=False))
    assert list(not_asked.partitions) == [] and not_asked.event_id > asked.event_id
    assert await _tags(client, ["ds=a", "ds=b", "ds=c"]) == ["1", "2", "3"]


async def _tags(client: GatewayClient, names: list[str]) -> list[str]:
    got = await client.catalog.GetPartitionsByNames(pb.GetPartitionsByNamesRequest(
        db_name="db", table_name="t", names=names))
    return [p.parameters.get("tag", "") for p in got.partitions]
