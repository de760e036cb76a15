"""Iceberg's own Python client, pyiceberg's HiveCatalog, on the gateway's Thrift endpoint: tables created,
written (Parquet files through pyarrow into a local warehouse), read, evolved, renamed and dropped, as a data
engineer's script does, through two gateways of one database.

How Iceberg commits on a Hive metastore (pyiceberg's HiveCatalog.commit_table, as Iceberg's Java
HiveTableOperations with its default lock): lock the table EXCLUSIVE outside any txn, read the table's
`metadata_location`, check the writer's base against it, write the new metadata file, alter the table to
point at it, unlock. Correct only if the read after the lock sees every commit made before the lock was
granted, as every read of Hive's does. A gateway answers reads without a snapshot from its cache, which may
not yet have applied another gateway's latest alter; a lock granted through it therefore holds reads of what
it locks to PostgreSQL until the cache has applied the log as the grant saw it (store/cache/facade.py
lock_granted). Without that, a writer through a lagging gateway committed on the old metadata and silently
dropped the other's snapshot (the first test, with the lagging gateway's poller paused, lost it every time)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any, AsyncIterator

import pyarrow as pa
import pytest
from pyiceberg.catalog.hive import HiveCatalog
from pyiceberg.exceptions import NamespaceNotEmptyError, NoSuchTableError, TableAlreadyExistsError
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import (BinaryType, BooleanType, DateType, DecimalType, DoubleType, FixedType, FloatType,
                             IntegerType, ListType, LongType, MapType, NestedField, StringType, StructType,
                             TimestampType, TimestamptzType, TimeType, UUIDType)

from gateway.app import Gateway
from gateway.thrift.idl import hms
from protos.metastore.v1 import locks_pb2 as lpb
from protos.metastore.v1 import locks_pb2_grpc
from tests.conftest import connect, running_gateway, wait_applied
from tests.thrift_client import ThriftClient

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False),
                NestedField(2, "region", StringType(), required=False))
BY_REGION = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="region"))


def _rows(ids: list[int], region: str = "eu") -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "region": pa.array([region] * len(ids), pa.string())})


def _catalog(gw: Gateway, warehouse: Path, **properties: str) -> HiveCatalog:
    return HiveCatalog(f"gateway-{gw.thrift_port}", uri=f"thrift://127.0.0.1:{gw.thrift_port}",
                       warehouse=warehouse.as_uri(), **properties)


def _ids(table: Table) -> list[int]:
    return sorted(table.scan().to_arrow().column("id").to_pylist())


@pytest.fixture
async def two_gateways(pg_dsn: str) -> AsyncIterator[tuple[Gateway, Gateway]]:
    async with running_gateway(pg_dsn) as a, running_gateway(pg_dsn) as b:
        yield a, b


async def test_a_commit_through_a_lagging_gateway_builds_on_the_latest_metadata(
        two_gateways: tuple[Gateway, Gateway], tmp_path: Path) -> None:
    a, b = two_gateways
    ice_a, ice_b = _catalog(a, tmp_path), _catalog(b, tmp_path)
    await asyncio.to_thread(ice_a.create_namespace, "lake")
    await asyncio.to_thread(ice_a.create_table, "lake.events", schema=SCHEMA, partition_spec=BY_REGION)
    await wait_applied(b)
    stale = await asyncio.to_thread(ice_b.load_table, "lake.events")  # b's cache knows the table now

    assert b.poller is not None
    b.poller.pause()  # b has not read the log past this point: its cache shows the table as created
    try:
        table_a = await asyncio.to_thread(ice_a.load_table, "lake.events")
        await asyncio.to_thread(table_a.append, _rows([1, 2]))
        # b's writer started from the old metadata; its commit locks the table through b, reads it there and
        # must find a's snapshot (pyiceberg then refreshes through b and commits on top of it).
        await asyncio.to_thread(stale.append, _rows([3]))
    finally:
        b.poller.resume()
    for gw in (a, b):
        await wait_applied(gw)
    for ice in (ice_a, ice_b):
        table = await asyncio.to_thread(ice.load_table, "lake.events")
        assert await asyncio.to_thread(_ids, table) == [1, 2, 3]
        assert len(table.snapshots()) == 2
        assert table.metadata.snapshots[1].parent_snapshot_id == table.metadata.snapshots[0].snapshot_id


async def test_concurrent_writers_through_two_gateways_lose_no_commit(
        two_gateways: tuple[Gateway, Gateway], tmp_path: Path) -> None:
    a, b = two_gateways
    ice = [_catalog(gw, tmp_path) for gw in (a, b)]
    await asyncio.to_thread(ice[0].create_namespace, "lake")
    await asyncio.to_thread(ice[0].create_table, "lake.events", schema=SCHEMA, partition_spec=BY_REGION,
                            properties={"commit.retry.num-retries": "20", "commit.retry.min-wait-ms": "5",
                                        "commit.retry.max-wait-ms": "50"})
    await wait_applied(b)
    writers, appends = 4, 3
    start = threading.Barrier(writers)

    def write(w: int) -> None:
        # Its own connection (a catalog's is not shared), two writers per gateway; a waiting lock is checked
        # every 10 to 100 ms (pyiceberg's default starts at 100 ms and doubles up to a minute).
        catalog = _catalog((a, b)[w % 2], tmp_path, **{"lock-check-min-wait-time": "0.01",
                                                       "lock-check-max-wait-time": "0.1", "lock-check-retries": "100"})
        start.wait(timeout=30)
        for i in range(appends):
            table = catalog.load_table("lake.events")
            table.append(_rows([w * 100 + i], region=f"r{w}"))

    await asyncio.gather(*(asyncio.to_thread(write, w) for w in range(writers)))
    for gw in (a, b):
        await wait_applied(gw)
    expected = sorted(w * 100 + i for w in range(writers) for i in range(appends))
    for catalog in ice:
        table = await asyncio.to_thread(catalog.load_table, "lake.events")
        assert await asyncio.to_thread(_ids, table) == expected
        assert len(table.snapshots()) == writers * appends
        # One line of history: each snapshot's parent is the one before it.
        snapshots = table.metadata.snapshots
        assert [s.parent_snapshot_id for s in snapshots[1:]] == [s.snapshot_id for s in snapshots[:-1]]


async def test_the_catalog_calls_of_a_data_engineers_script_through_either_gateway(
        two_gateways: tuple[Gateway, Gateway], tmp_path: Path) -> None:
    a, b = two_gateways
    ice_a, ice_b = _catalog(a, tmp_path), _catalog(b, tmp_path)

    def run(fn: Any, *args: Any, **kwargs: Any) -> Any:
        return asyncio.to_thread(fn, *args, **kwargs)

    await run(ice_a.create_namespace, "lake", {"owner_team": "data"})
    await run(ice_a.create_table, "lake.events", schema=SCHEMA, partition_spec=BY_REGION)
    with pytest.raises(TableAlreadyExistsError):
        await run(ice_a.create_table, "lake.events", schema=SCHEMA)
    table = await run(ice_a.load_table, "lake.events")
    await run(table.append, _rows([1]))

    def evolve(t: Table) -> None:
        with t.update_schema() as update:
            update.add_column("score", LongType())

    await run(evolve, await run(ice_a.load_table, "lake.events"))
    await run(ice_a.update_namespace_properties, "lake", updates={"retention": "30d"})
    await wait_applied(b)

    # What the other gateway answers: the namespace, its tables, the evolved schema, the rows.
    assert ("lake",) in await run(ice_b.list_namespaces)
    properties = await run(ice_b.load_namespace_properties, "lake")
    assert properties["owner_team"] == "data" and properties["retention"] == "30d"
    assert await run(ice_b.list_tables, "lake") == [("lake", "events")]
    seen = await run(ice_b.load_table, "lake.events")
    assert [f.name for f in seen.schema().fields] == ["id", "region", "score"]
    assert await run(_ids, seen) == [1]

    await run(ice_b.rename_table, "lake.events", "lake.events_v2")
    await wait_applied(a)
    assert await run(ice_a.list_tables, "lake") == [("lake", "events_v2")]
    with pytest.raises(NoSuchTableError):
        await run(ice_a.load_table, "lake.events")
    assert await run(_ids, await run(ice_a.load_table, "lake.events_v2")) == [1]
    with pytest.raises(NamespaceNotEmptyError):
        await run(ice_a.drop_namespace, "lake")
    await run(ice_a.drop_table, "lake.events_v2")
    await run(ice_a.drop_namespace, "lake")
    await wait_applied(b)
    assert ("lake",) not in await run(ice_b.list_namespaces)


# Each Iceberg type and the Hive column type Iceberg's HiveCatalog writes for it (pyiceberg's
# SchemaToHiveConverter, not Hive 2 compatible: a timestamptz is Hive 3's timestamp with local time zone).
ICEBERG_TYPES = [
    (BooleanType(), "boolean"), (IntegerType(), "int"), (LongType(), "bigint"), (FloatType(), "float"),
    (DoubleType(), "double"), (DecimalType(10, 2), "decimal(10,2)"), (DateType(), "date"), (TimeType(), "string"),
    (TimestampType(), "timestamp"), (TimestamptzType(), "timestamp with local time zone"), (StringType(), "string"),
    (UUIDType(), "string"), (FixedType(16), "binary"), (BinaryType(), "binary"),
    (ListType(100, TimestamptzType()), "array<timestamp with local time zone>"),
    (MapType(101, StringType(), 102, LongType()), "map<string,bigint>"),
    (StructType(NestedField(103, "a", IntegerType()), NestedField(104, "b", StringType())), "struct<a:int,b:string>"),
]


async def test_a_table_of_every_iceberg_type_is_created_and_read_back_through_the_other_gateway(
        two_gateways: tuple[Gateway, Gateway], tmp_path: Path) -> None:
    a, b = two_gateways
    ice_a, ice_b = _catalog(a, tmp_path), _catalog(b, tmp_path)
    schema = Schema(*(NestedField(i + 1, f"c{i}", t, required=False) for i, (t, _) in enumerate(ICEBERG_TYPES)))
    await asyncio.to_thread(ice_a.create_namespace, "lake")
    created = await asyncio.to_thread(ice_a.create_table, "lake.typed", schema=schema)  # ids assigned afresh
    await wait_applied(b)
    assert (await asyncio.to_thread(ice_b.load_table, "lake.typed")).schema() == created.schema()
    client = ThriftClient(b.thrift_port)
    try:
        columns = (await client("get_table", "lake", "typed")).sd.cols
    finally:
        client.close()
    assert [(c.name, c.type) for c in columns] == [(f"c{i}", hive) for i, (_, hive) in enumerate(ICEBERG_TYPES)]


async def test_what_icebergs_java_client_reads_from_answers_is_as_hive_writes_it(
        two_gateways: tuple[Gateway, Gateway], tmp_path: Path) -> None:
    """Iceberg's Java HiveCatalog reads two things from answers beyond their types: a rename onto an existing
    table by its message ("new table <db>.<name> already exists": AlreadyExistsException, else a generic
    failure), and its own lost lock among SHOW LOCKS rows by comparing each row's agentInfo with equals(),
    where a row without one (a gRPC lock taken without an agent) would fail it; Hive shows "Unknown"."""
    a, _ = two_gateways
    ice = _catalog(a, tmp_path)
    await asyncio.to_thread(ice.create_namespace, "lake")
    for name in ("a", "b"):
        await asyncio.to_thread(ice.create_table, f"lake.{name}", schema=SCHEMA)
    client = ThriftClient(a.thrift_port)
    grpc_client = await connect(f"127.0.0.1:{a.port}")
    try:
        table = await client("get_table", "lake", "a")
        table.tableName = "b"
        with pytest.raises(hms.InvalidOperationException, match="new table lake.b already exists"):
            await client("alter_table_with_environment_context", "lake", "a", table, None)
        granted = await locks_pb2_grpc.LocksStub(grpc_client.channel).Lock(lpb.LockRequest(
            components=[lpb.LockComponent(db_name="lake", table_name="a", type=lpb.SHARED_READ)], user="spark"))
        rows = (await client("show_locks", hms.ShowLocksRequest(dbname="lake", tablename="a"))).locks
        assert [(r.lockid, r.agentInfo) for r in rows] == [(granted.lock_id, "Unknown")]
    finally:
        client.close()
        await grpc_client.channel.close()
