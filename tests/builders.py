"""Small builders for requests, so tests read as the behaviour they check."""

from __future__ import annotations

from typing import Sequence

from protos.metastore.v1 import catalog_pb2 as pb


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
