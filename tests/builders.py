"""Small builders for requests, so tests read as the behaviour they check."""

from __future__ import annotations

from typing import Any, Sequence

from protos.metastore.v1 import catalog_pb2 as pb
from hive.names import split_location


def table(db: str, name: str, *, keys: tuple[tuple[str, str], ...] = (("ds", "string"), ("hr", "int")),
          external: bool = False, transactional: bool = False, location: str = "") -> pb.Table:
    return pb.Table(
        db_name=db,
        name=name,
        table_type=pb.EXTERNAL if external else pb.MANAGED,
        transactional=transactional,
        columns=[pb.FieldSchema(name="id", type="bigint"), pb.FieldSchema(name="payload", type="string")],
        partition_keys=[pb.FieldSchema(name=k, type=t) for k, t in keys],
        sd=pb.StorageDescriptor(
            location=location,
            input_format="org.apache.hadoop.hive.ql.io.orc.OrcInputFormat",
            output_format="org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat",
            serde=pb.SerDeInfo(serialization_lib="org.apache.hadoop.hive.ql.io.orc.OrcSerde"),
        ),
    )


def partitions(values: Sequence[tuple[str, ...]]) -> list[pb.Partition]:
    return [pb.Partition(values=list(v)) for v in values]


def day_hour_values(count: int) -> list[tuple[str, str]]:
    """`count` distinct (ds, hr) pairs: 24 hours a day from 2024-01-01 on."""
    import datetime as dt

    start = dt.date(2024, 1, 1)
    return [((start + dt.timedelta(days=i // 24)).isoformat(), str(i % 24)) for i in range(count)]


def part_name(ds: str, hr: str) -> str:
    return f"ds={ds}/hr={hr}"


async def ensure_lockable(catalog: Any, components: Sequence[Any]) -> None:
    """Create the databases, tables and partitions lock components name, so that tests lock real
    objects (a lock may name missing ones too: tests/e2e/test_locks.py). A table made here has keys
    (ds string, hr int) when the name starts with `ds=`, else (p string, q string); a partition is
    added when the component names every key, a key prefix being lockable as it is. `catalog` is a
    Catalog stub; components are LockComponent messages."""
    import grpc

    from hive.names import unescape_path_name

    async def quietly(call: Any) -> None:
        try:
            await call
        except grpc.aio.AioRpcError as exc:
            if exc.code() != grpc.StatusCode.ALREADY_EXISTS:
                raise

    for c in components:
        await quietly(catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name=c.db_name))))
        if not c.table_name:
            continue
        keys = (("ds", "string"), ("hr", "int")) if c.partition_name.lower().startswith("ds=") else \
            (("p", "string"), ("q", "string"))
        await quietly(catalog.CreateTable(pb.CreateTableRequest(table=table(c.db_name, c.table_name, keys=keys))))
        segments = c.partition_name.split("/") if c.partition_name else []
        current = (await catalog.GetTable(pb.GetTableRequest(db_name=c.db_name, table_name=c.table_name))).table
        if segments and len(segments) == len(current.partition_keys):
            values = [unescape_path_name(s.partition("=")[2]) for s in segments]
            await catalog.AddPartitions(pb.AddPartitionsRequest(
                db_name=c.db_name, table_name=c.table_name, partitions=[pb.Partition(values=values)],
                if_not_exists=True))


def local_dir(location: str) -> str:
    """The local directory a bare or `file:` location names, read as Hadoop's Path and the gateway read it
    (hive/names.split_location): the path after the scheme and any authority, as it is (`ds=10%3A00` is that
    directory, not a URL to decode)."""
    return split_location(location)[1]
