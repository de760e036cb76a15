"""Protobuf messages to store models and back. No validation beyond shape (and enum numbers the
store's types cannot hold): the store validates."""

from __future__ import annotations

from hive.errors import InvalidArgument
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import events_pb2 as epb
from store.models import (
    Database,
    FieldSchema,
    NotificationEvent,
    Order,
    Partition,
    SerDeInfo,
    SkewedInfo,
    StorageDescriptor,
    Table,
    TableType,
)

_TABLE_TYPE_TO_MODEL = {pb.TABLE_TYPE_UNSPECIFIED: TableType.MANAGED, pb.MANAGED: TableType.MANAGED,
                        pb.EXTERNAL: TableType.EXTERNAL, pb.VIRTUAL_VIEW: TableType.VIRTUAL_VIEW}
_TABLE_TYPE_BY_NUMBER: dict[int, TableType] = {int(k): v for k, v in _TABLE_TYPE_TO_MODEL.items()}
_TABLE_TYPE_TO_PB = {model: proto for proto, model in _TABLE_TYPE_TO_MODEL.items()
                     if proto != pb.TABLE_TYPE_UNSPECIFIED}


def sd_from_pb(m: pb.StorageDescriptor) -> StorageDescriptor:
    return StorageDescriptor(
        location=m.location,
        input_format=m.input_format,
        output_format=m.output_format,
        serde=SerDeInfo(m.serde.name, m.serde.serialization_lib, dict(m.serde.parameters)),
        compressed=m.compressed,
        num_buckets=m.num_buckets or -1,  # proto3 default 0 means "not bucketed", Hive says -1
        bucket_cols=tuple(m.bucket_cols),
        sort_cols=tuple(Order(o.col, o.order) for o in m.sort_cols),
        skewed=SkewedInfo(tuple(m.skewed_info.col_names), tuple(tuple(v.values) for v in m.skewed_info.col_values),
                          tuple((tuple(x.values), x.location) for x in m.skewed_info.value_locations)),
        parameters=dict(m.parameters),
        stored_as_subdirectories=m.stored_as_subdirectories,
    )


def sd_to_pb(sd: StorageDescriptor) -> pb.StorageDescriptor:
    return pb.StorageDescriptor(
        location=sd.location,
        input_format=sd.input_format,
        output_format=sd.output_format,
        serde=pb.SerDeInfo(name=sd.serde.name, serialization_lib=sd.serde.serialization_lib,
                           parameters=sd.serde.parameters),
        compressed=sd.compressed,
        num_buckets=sd.num_buckets,
        bucket_cols=sd.bucket_cols,
        sort_cols=[pb.Order(col=o.column, order=o.order) for o in sd.sort_cols],
        skewed_info=pb.SkewedInfo(
            col_names=sd.skewed.column_names, col_values=[pb.SkewedValues(values=v) for v in sd.skewed.column_values],
            value_locations=[pb.SkewedValueLocation(values=v, location=loc) for v, loc in sd.skewed.value_locations],
        ) if sd.skewed != SkewedInfo() else None,
        parameters=sd.parameters,
        stored_as_subdirectories=sd.stored_as_subdirectories,
    )


def _fields(ms: list[pb.FieldSchema]) -> tuple[FieldSchema, ...]:
    return tuple(FieldSchema(f.name, f.type, f.comment) for f in ms)


def database_from_pb(m: pb.Database) -> Database:
    # proto3 tells no unset description or owner from '': either is none, as a Hive client's unset one
    return Database(name=m.name, description=m.description or None, location=m.location, owner=m.owner or None,
                    parameters=dict(m.parameters), owner_type=m.owner_type or "USER")


def database_to_pb(d: Database) -> pb.Database:
    return pb.Database(name=d.name, description=d.description or "", location=d.location, owner=d.owner or "",
                       parameters=d.parameters, create_time=d.create_time, owner_type=d.owner_type)


def table_type_from_pb(value: int) -> TableType:
    """Proto3 keeps an enum number it does not know; refuse it rather than guess (it used to read as MANAGED)."""
    try:
        return _TABLE_TYPE_BY_NUMBER[value]
    except KeyError:
        raise InvalidArgument(f"table_type {value} is not one of MANAGED (1), EXTERNAL (2), VIRTUAL_VIEW (3) or "
                              "unspecified (0, read as MANAGED)") from None


def table_from_pb(m: pb.Table) -> Table:
    return Table(
        db_name=m.db_name,
        name=m.name,
        table_type=table_type_from_pb(m.table_type),
        transactional=m.transactional,
        owner=m.owner or None,  # (as a database's)
        columns=_fields(list(m.columns)),
        partition_keys=_fields(list(m.partition_keys)),
        sd=sd_from_pb(m.sd),
        parameters=dict(m.parameters),
        view_original_text=m.view_original_text,
        view_expanded_text=m.view_expanded_text,
        owner_type=m.owner_type or "USER",
        last_access_time=m.last_access_time,
        retention=m.retention,
    )


def table_to_pb(t: Table) -> pb.Table:
    return pb.Table(
        table_id=t.table_id,
        db_name=t.db_name,
        name=t.name,
        table_type=_TABLE_TYPE_TO_PB[t.table_type],
        transactional=t.transactional,
        owner=t.owner or "",
        columns=[pb.FieldSchema(name=f.name, type=f.type, comment=f.comment) for f in t.columns],
        partition_keys=[pb.FieldSchema(name=f.name, type=f.type, comment=f.comment) for f in t.partition_keys],
        sd=sd_to_pb(t.sd),
        parameters=t.parameters,
        create_time=t.create_time,
        write_id=t.write_id,
        view_original_text=t.view_original_text,
        view_expanded_text=t.view_expanded_text,
        owner_type=t.owner_type,
        last_access_time=t.last_access_time,
        retention=t.retention,
    )


def partition_from_pb(m: pb.Partition) -> Partition:
    return Partition(db_name=m.db_name, table_name=m.table_name, values=tuple(m.values), sd=sd_from_pb(m.sd),
                     parameters=dict(m.parameters), columns=_fields(list(m.columns)) or None,
                     last_access_time=m.last_access_time)


def partition_to_pb(p: Partition) -> pb.Partition:
    return pb.Partition(
        db_name=p.db_name,
        table_name=p.table_name,
        values=p.values,
        name=p.name,
        sd=sd_to_pb(p.sd),
        parameters=p.parameters,
        create_time=p.create_time,
        write_id=p.write_id,
        columns=[pb.FieldSchema(name=f.name, type=f.type, comment=f.comment) for f in p.columns or ()],
        last_access_time=p.last_access_time,
    )


def event_to_pb(e: NotificationEvent) -> epb.NotificationEvent:
    return epb.NotificationEvent(
        event_id=e.event_id,
        event_time_ms=e.event_time_ms,
        event_type=e.event_type,
        db_name=e.db_name,
        table_name=e.table_name,
        table_id=e.table_id,
        txn_id=e.txn_id,
        write_id=e.write_id,
        message=e.message,
    )
