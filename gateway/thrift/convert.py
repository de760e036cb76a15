"""Hive's Thrift structs to store models and back. Shape only: the store validates.

Replies set every field Hive marks `required` (a Java client refuses a struct without them) and fill
what the store does not keep with Hive's own defaults (sort columns, skew, stored-as-subdirectories).
"""

from __future__ import annotations

from typing import Any, Iterable

from gateway.thrift.idl import hms
from store.errors import InvalidArgument
from store.models import Database, FieldSchema, Partition, SerDeInfo, StorageDescriptor, Table, TableType
from store.names import make_partition_name

_TABLE_TYPES = {TableType.MANAGED.value: TableType.MANAGED, TableType.EXTERNAL.value: TableType.EXTERNAL}
USER_PRINCIPAL = 1  # PrincipalType.USER


def _text(value: str | None) -> str:
    return value or ""


def fields_from_thrift(items: Iterable[Any] | None) -> tuple[FieldSchema, ...]:
    return tuple(FieldSchema(_text(f.name), _text(f.type), _text(f.comment)) for f in items or ())


def fields_to_thrift(items: Iterable[FieldSchema]) -> list[Any]:
    return [hms.FieldSchema(name=f.name, type=f.type, comment=f.comment) for f in items]


def sd_from_thrift(sd: Any) -> StorageDescriptor:
    if sd is None:
        return StorageDescriptor()
    serde = sd.serdeInfo
    return StorageDescriptor(
        location=_text(sd.location),
        input_format=_text(sd.inputFormat),
        output_format=_text(sd.outputFormat),
        serde=SerDeInfo(_text(serde.name), _text(serde.serializationLib), dict(serde.parameters or {}))
        if serde is not None else SerDeInfo(),
        compressed=bool(sd.compressed),
        num_buckets=sd.numBuckets if sd.numBuckets is not None else -1,
        bucket_cols=tuple(sd.bucketCols or ()),
    )


def sd_to_thrift(sd: StorageDescriptor, columns: Iterable[FieldSchema]) -> Any:
    return hms.StorageDescriptor(
        cols=fields_to_thrift(columns),
        location=sd.location,
        inputFormat=sd.input_format,
        outputFormat=sd.output_format,
        compressed=sd.compressed,
        numBuckets=sd.num_buckets,
        serdeInfo=hms.SerDeInfo(name=sd.serde.name or None, serializationLib=sd.serde.serialization_lib,
                                parameters=dict(sd.serde.parameters)),
        bucketCols=list(sd.bucket_cols),
        sortCols=[],
        parameters={},
        skewedInfo=hms.SkewedInfo(skewedColNames=[], skewedColValues=[], skewedColValueLocationMaps={}),
        storedAsSubDirectories=False,
    )


def database_from_thrift(db: Any) -> Database:
    return Database(name=_text(db.name), description=_text(db.description), location=_text(db.locationUri),
                    owner=_text(db.ownerName), parameters=dict(db.parameters or {}))


def database_to_thrift(db: Database) -> Any:
    return hms.Database(name=db.name, description=db.description, locationUri=db.location,
                        parameters=dict(db.parameters), ownerName=db.owner, ownerType=USER_PRINCIPAL)


def table_from_thrift(t: Any, *, db_name: str = "", name: str = "") -> Table:
    """A table as the client sent it; `tableType` decides managed or external (Hive also reads the
    EXTERNAL=TRUE parameter), and 'transactional'='true' in the parameters makes it ACID."""
    parameters = dict(t.parameters or {})
    table_type_text = _text(t.tableType) or TableType.MANAGED.value
    if table_type_text not in _TABLE_TYPES:
        raise InvalidArgument(f"table type {table_type_text!r} is not supported by this gateway "
                              f"(supported: {', '.join(_TABLE_TYPES)})")
    table_type = _TABLE_TYPES[table_type_text]
    if parameters.get("EXTERNAL", "").upper() == "TRUE":
        table_type = TableType.EXTERNAL
    return Table(
        db_name=_text(t.dbName) or db_name,
        name=_text(t.tableName) or name,
        table_type=table_type,
        transactional=parameters.get("transactional", "").lower() == "true",
        owner=_text(t.owner),
        columns=fields_from_thrift(t.sd.cols if t.sd is not None else ()),
        partition_keys=fields_from_thrift(t.partitionKeys),
        sd=sd_from_thrift(t.sd),
        parameters=parameters,
        create_time=t.createTime or 0,
    )


def table_to_thrift(t: Table) -> Any:
    return hms.Table(
        tableName=t.name, dbName=t.db_name, owner=t.owner, createTime=t.create_time, lastAccessTime=0, retention=0,
        sd=sd_to_thrift(t.sd, t.columns), partitionKeys=fields_to_thrift(t.partition_keys),
        parameters=dict(t.parameters), viewOriginalText=None, viewExpandedText=None, tableType=t.table_type.value,
        temporary=False, rewriteEnabled=False, ownerType=USER_PRINCIPAL, writeId=t.write_id, id=t.table_id,
    )


def partition_from_thrift(p: Any) -> Partition:
    return Partition(db_name=_text(p.dbName), table_name=_text(p.tableName), values=tuple(p.values or ()),
                     sd=sd_from_thrift(p.sd), parameters=dict(p.parameters or {}))


def partition_to_thrift(table: Table, p: Partition) -> Any:
    """Hive's partition: its storage descriptor carries the table's columns."""
    return hms.Partition(values=list(p.values), dbName=p.db_name, tableName=p.table_name, createTime=p.create_time,
                         lastAccessTime=0, sd=sd_to_thrift(p.sd, table.columns), parameters=dict(p.parameters),
                         writeId=p.write_id)


def partition_name(table: Table, values: Iterable[str]) -> str:
    return make_partition_name(table.partition_keys, list(values))
