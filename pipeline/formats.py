"""File formats as Hive records them in a storage descriptor, and back.

A table's or partition's `sd` names its files' format by three Hive class names (input format,
output format, serde). Hive, Spark's Hive support and Trino decide how to read a location from
them, so the write job records them (`with_format`) and the reader trusts them (`format_of`),
falling back to the data files' suffix only for data written before formats were recorded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from protos.metastore.v1 import catalog_pb2 as pb


@dataclass(frozen=True, slots=True)
class StorageFormat:
    name: str            # Spark's data source name
    input_format: str
    output_format: str
    serde: str


PARQUET = StorageFormat(
    "parquet", "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
    "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
    "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe")
ORC = StorageFormat(
    "orc", "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat",
    "org.apache.hadoop.hive.ql.io.orc.OrcSerde")
FORMATS = {f.name: f for f in (PARQUET, ORC)}


def storage_format(name: str) -> StorageFormat:
    """The format for a Spark source name ('parquet' or 'orc'); ValueError for anything else."""
    try:
        return FORMATS[name.lower()]
    except KeyError:
        raise ValueError(f"file format must be one of {', '.join(sorted(FORMATS))}, got {name!r}") from None


def format_of(sd: pb.StorageDescriptor) -> StorageFormat | None:
    """The format a storage descriptor records (matched on the serde or the input format, as either
    names it unambiguously), or None when it records none. A format this job cannot read (text,
    Avro, ...) is a ValueError naming the classes."""
    serde = sd.serde.serialization_lib if sd.HasField("serde") else ""
    if not serde and not sd.input_format:
        return None
    for f in FORMATS.values():
        if serde == f.serde or sd.input_format == f.input_format:
            return f
    raise ValueError(f"the files are stored as input format {sd.input_format or '(none)'!r}, serde "
                     f"{serde or '(none)'!r}; this job reads and writes Parquet and ORC only")


def with_format(sd: pb.StorageDescriptor, f: StorageFormat) -> pb.StorageDescriptor:
    """A copy of `sd` recording `f` (serde parameters kept)."""
    out = pb.StorageDescriptor()
    out.CopyFrom(sd)
    out.input_format = f.input_format
    out.output_format = f.output_format
    out.serde.serialization_lib = f.serde
    return out


def format_from_files(paths: Iterable[str]) -> StorageFormat | None:
    """The format named by the data files' suffix (Spark writes `part-...snappy.parquet` or
    `...orc`), for locations written before formats were recorded; None when no file says."""
    for path in paths:
        for f in FORMATS.values():
            if path.endswith("." + f.name):
                return f
    return None
