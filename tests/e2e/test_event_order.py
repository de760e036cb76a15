"""The log's ordering invariant under concurrent writers on two gateway processes: a reader
polling `event_id > last` sees every committed event exactly once, in ascending order."""

from __future__ import annotations

import asyncio

from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import events_pb2 as epb
from tests.builders import table
from tests.conftest import GatewayClient, GatewayProcess, connect

WRITES_PER_GATEWAY = 500
WRITERS_PER_GATEWAY = 8


async def _writer(client: GatewayClient, gateway_no: int, writer_no: int, count: int) -> list[int]:
    """Mixed writes: add a partition, and every fifth write alter it (two event types interleave)."""
    event_ids = []
    for i in range(count):
        values = [f"g{gateway_no}w{writer_no}", str(i)]
        added = await client.catalog.AddPartitions(pb.AddPartitionsRequest(
            db_name="db", table_name="t", partitions=[pb.Partition(values=values)]))
        event_ids.append(added.event_id)
        if i % 5 == 4:
            altered = await client.catalog.AlterPartitions(pb.AlterPartitionsRequest(
                db_name="db", table_name="t", partitions=[pb.Partition(values=values, parameters={"n": str(i)})]))
            event_ids.append(altered.event_id)
    return event_ids


async def _reader(client: GatewayClient, expected: int, seen: list[int], done: asyncio.Event) -> None:
    last = 0
    while len(seen) < expected:
        reply = await client.events.GetNextNotification(epb.GetNextNotificationRequest(last_event_id=last,
                                                                                       max_events=97))
        for event in reply.events:
            assert event.event_id == last + 1, f"gap or reorder: got {event.event_id} after {last}"
            seen.append(event.event_id)
            last = event.event_id
        if not reply.events:
            if done.is_set() and len(seen) < expected:
                reply = await client.events.GetNextNotification(epb.GetNextNotificationRequest(last_event_id=last))
                assert reply.events, f"writers finished but the log stops at {last} of {expected}"
            await asyncio.sleep(0.005)


async def test_two_gateways_concurrent_writers_reader_sees_every_event_once_in_order(pg_dsn: str) -> None:
    processes = [GatewayProcess("--dsn", pg_dsn), GatewayProcess("--dsn", pg_dsn)]
    try:
        clients = [await connect(p.wait_serving()) for p in processes]
        await clients[0].catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
        await clients[1].catalog.CreateTable(pb.CreateTableRequest(table=table("db", "t", keys=(("who", "string"),
                                                                                                ("n", "int")))))
        per_writer = -(-WRITES_PER_GATEWAY // WRITERS_PER_GATEWAY)  # ceil: at least 500 adds per gateway
        writes_per_gateway = WRITERS_PER_GATEWAY * (per_writer + per_writer // 5)  # adds + alters
        expected = 3 + 2 * writes_per_gateway  # with the default database's, the database's and the table's

        seen: list[int] = []
        done = asyncio.Event()
        reader = asyncio.create_task(_reader(clients[0], expected, seen, done))
        results = await asyncio.gather(*(
            _writer(clients[g], g, w, per_writer) for g in range(2) for w in range(WRITERS_PER_GATEWAY)))
        done.set()
        await asyncio.wait_for(reader, 60)

        returned = sorted(i for ids in results for i in ids)
        assert len(returned) == expected - 3 and len(set(returned)) == len(returned)
        assert seen == list(range(1, expected + 1))
        assert set(returned) == set(seen[3:])
        current = await clients[1].events.GetCurrentNotificationEventId(epb.GetCurrentNotificationEventIdRequest())
        assert current.event_id == expected
        for c in clients:
            await c.channel.close()
    finally:
        codes = [p.stop() for p in processes]
    assert codes == [0, 0], [p.output() for p in processes]
