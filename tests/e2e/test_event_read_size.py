"""A notification read fits hive.metastore.server.max.message.size: it answers fewer events than asked
rather than a response the server cannot send, and no event is larger than a read can answer alone (a
write's partitions are logged as several events of the one write; an event that cannot be split
refuses its write)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import AsyncIterator

import grpc
import pytest

from gateway.app import Gateway
from gateway.thrift.idl import hms
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import events_pb2 as epb
from protos.metastore.v1 import events_pb2_grpc
from store import events
from tests.builders import table
from tests.conftest import GatewayClient, connect, running_gateway
from tests.thrift_client import ThriftClient

LIMIT = 1 << 20  # hive.metastore.server.max.message.size for these tests: 1 MiB


class Reader:
    """A client of the gateway's notification log that takes replies of any size, so that only the
    server's limit can refuse one."""

    def __init__(self, port: int) -> None:
        self.channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}",
                                                 options=[("grpc.max_receive_message_length", 1 << 30)])
        self.events = events_pb2_grpc.EventsStub(self.channel)

    async def head(self) -> int:
        return (await self.events.GetCurrentNotificationEventId(epb.GetCurrentNotificationEventIdRequest())).event_id

    async def next(self, last: int, max_events: int = 0) -> epb.GetNextNotificationResponse:
        return await self.events.GetNextNotification(epb.GetNextNotificationRequest(last_event_id=last,
                                                                                    max_events=max_events))


@dataclass
class Running:
    gateway: Gateway
    client: GatewayClient
    reader: Reader


@pytest.fixture
async def running(pg_dsn: str) -> AsyncIterator[Running]:
    """A gateway with a 1 MiB message size, its database db and partitioned table t."""
    async with running_gateway(pg_dsn, **{"hive.metastore.server.max.message.size": str(LIMIT)}) as gw:
        client = await connect(f"127.0.0.1:{gw.port}")
        reader = Reader(gw.port)
        try:
            await client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
            await client.catalog.CreateTable(pb.CreateTableRequest(table=table("db", "t", keys=(("ds", "string"),))))
            yield Running(gw, client, reader)
        finally:
            await reader.channel.close()
            await client.channel.close()


async def test_a_read_answers_fewer_events_rather_than_more_than_the_message_size(
        running: Running) -> None:
    """12 writes of ~120 KB of partitions each (each request well under 1 MiB): a read with the default
    batch (max_events 0: 1,000) answered RESOURCE_EXHAUSTED ("Sent message larger than max") before, as
    the batch was bounded by count alone; now each answer stops short of the limit and paging goes on."""
    client, reader, thrift_port = running.client, running.reader, running.gateway.thrift_port
    start = await reader.head()
    note = "x" * 2000
    for batch in range(12):
        parts = [pb.Partition(values=[f"{batch}-{i}"], parameters={"note": note}) for i in range(50)]
        await client.catalog.AddPartitions(pb.AddPartitionsRequest(db_name="db", table_name="t", partitions=parts))
    head = await reader.head()
    last, answers = start, 0
    while last < head:
        reply = await reader.next(last)
        assert reply.events, "no progress"
        assert reply.ByteSize() <= LIMIT
        last, answers = reply.events[-1].event_id, answers + 1
    assert answers > 1  # the log past `start` does not fit one reply
    # Thrift's get_next_notification keeps the same budget
    thrift = ThriftClient(thrift_port)
    try:
        last, answers = start, 0
        while last < head:
            got = await thrift("get_next_notification", hms.NotificationEventRequest(lastEvent=last, maxEvents=1000))
            assert got.events, "no progress"
            assert sum(len(e.message.encode()) + events.EVENT_ENVELOPE_BYTES for e in got.events) <= LIMIT
            last, answers = got.events[-1].eventId, answers + 1
        assert answers > 1
    finally:
        thrift.close()


async def test_a_write_larger_than_one_event_may_be_is_logged_as_several(
        running: Running) -> None:
    """One add of 9,000 partitions (a request under 1 MiB; Hive's MSCK REPAIR sends such adds, asking
    for no result) logged one ADD_PARTITION event of 2.1 MB before, which no read, not even of
    max_events 1, could answer: every reader was stuck for good. Now the write's partitions are logged
    in several ADD_PARTITION events, each answerable, all of them one write (one last_of_write, so the
    poller still applies it whole)."""
    reader, thrift_port = running.reader, running.gateway.thrift_port
    before = await reader.head()
    thrift = ThriftClient(thrift_port)
    try:
        await thrift("add_partitions_req", hms.AddPartitionsRequest(
            dbName="db", tblName="t", needResult=False,
            parts=[hms.Partition(dbName="db", tableName="t", values=[str(i)]) for i in range(9000)]))
    finally:
        thrift.close()
    head = await reader.head()
    assert head - before > 1
    logged: list[str] = []
    last = before
    while last < head:
        reply = await reader.next(last, max_events=1)
        assert [e.event_type for e in reply.events] == ["ADD_PARTITION"]
        assert reply.ByteSize() <= LIMIT
        logged += [p["part_values"][0] for p in json.loads(reply.events[0].message)["partitions"]]
        last = reply.events[-1].event_id
    assert logged == [str(i) for i in range(9000)]
    # one write: each of its events names the last (the poller reads a write whole, store/schema/0015)
    written = await running.gateway.database.pool.fetch(
        "SELECT last_of_write FROM notification_log WHERE event_id > $1", before)
    assert len({e["last_of_write"] for e in written}) == 1


async def test_an_event_that_cannot_be_split_refuses_its_write(running: Running) -> None:
    """An ALTER_TABLE event carries the table before and after: a table of 550 KB of parameters fits a
    request and its own create, but an alter of it not one event, and is refused naming the limit,
    nothing written."""
    client, reader = running.client, running.reader
    got = await client.catalog.GetTable(pb.GetTableRequest(db_name="db", table_name="t"))
    big = pb.Table()
    big.CopyFrom(got.table)
    for i in range(11):
        big.parameters[f"p{i}"] = "v" * 50_000
    await client.catalog.AlterTable(pb.AlterTableRequest(db_name="db", table_name="t", table=big))
    big.parameters["p11"] = "v"
    head = await reader.head()
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await client.catalog.AlterTable(pb.AlterTableRequest(db_name="db", table_name="t", table=big))
    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "hive.metastore.server.max.message.size" in (refused.value.details() or "")
    assert await reader.head() == head
    after = await client.catalog.GetTable(pb.GetTableRequest(db_name="db", table_name="t"))
    assert "p11" not in after.table.parameters


def test_a_message_is_split_along_its_list_and_kept_in_order() -> None:
    """fit_events: each part no larger than the limit, in order, the other fields kept."""
    event = events.NewEvent(events.EventType.DROP_PARTITION, db_name="db", table_name="t", table_id=7, txn_id=3,
                            write_id=2, message={"partition_names": [f"ds={i:05}" for i in range(3000)]})
    fitted = events.fit_events([event], 8192)
    assert len(fitted) > 1
    assert all(events.message_bytes(e.message) <= events.largest_message(8192) for e in fitted)
    assert [n for e in fitted for n in e.message["partition_names"]] == event.message["partition_names"]
    assert {(e.event_type, e.db_name, e.table_name, e.table_id, e.txn_id, e.write_id) for e in fitted} == {
        (event.event_type, "db", "t", 7, 3, 2)}
    assert events.fit_events([event], events.DEFAULT_MAX_MESSAGE_BYTES) == [event]
