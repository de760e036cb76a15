"""Hive's Thrift structs to store models and back. Shape only: the store validates.

Replies set every field Hive marks `required` (a Java client refuses a struct without them) and fill
what the store does not keep with Hive's own defaults (sort columns, skew, stored-as-subdirectories).
"""

from __future__ import annotations

import copy
import time
from typing import Any, Iterable

from gateway.servicers import validation
from gateway.thrift.idl import hms
from store.errors import InvalidArgument, NeverAllowed
from store.models import (
    Database,
    FieldSchema,
    Function,
    Order,
    Partition,
    ResourceUri,
    SerDeInfo,
    SkewedInfo,
    StorageDescriptor,
    Table,
    TableType,
)
from hive.names import make_partition_name, qualified_location

_TABLE_TYPES = {t.value: t for t in TableType}
PRINCIPAL_TYPES = {1: "USER", 2: "ROLE", 3: "GROUP"}  # Hive's PrincipalType
PRINCIPAL_IDS = {name: i for i, name in PRINCIPAL_TYPES.items()}
USER_PRINCIPAL = 1
JAVA_FUNCTION = 1
FUNCTION_TYPES = {JAVA_FUNCTION: "JAVA"}  # Hive's FunctionType
FUNCTION_TYPE_IDS = {name: i for i, name in FUNCTION_TYPES.items()}
RESOURCE_TYPES = {1: "JAR", 2: "FILE", 3: "ARCHIVE"}  # Hive's ResourceType
RESOURCE_TYPE_IDS = {name: i for i, name in RESOURCE_TYPES.items()}


def _text(value: str | None) -> str:
    return value or ""


def fields_from_thrift(items: Iterable[Any] | None) -> tuple[FieldSchema, ...]:
    return tuple(FieldSchema(_text(f.name), _text(f.type), _text(f.comment)) for f in items or ())


def fields_to_thrift(items: Iterable[FieldSchema]) -> list[Any]:
    """Columns as Hive's FieldSchema: a column without a comment has none (null), as Hive's metastore
    answers one sent without (Spark and Hive send null; Hive 2.3's SHOW CREATE TABLE prints `COMMENT ''`
    for ''). The store keeps no comment as '' (gRPC's FieldSchema.comment is a plain string), so a comment
    set to '' reads back as none."""
    return [hms.FieldSchema(name=f.name, type=f.type, comment=f.comment or None) for f in items]


def sd_from_thrift(sd: Any, default_fs: str) -> StorageDescriptor:
    if sd is None:
        return StorageDescriptor()
    serde = sd.serdeInfo
    return StorageDescriptor(
        location=qualified_location(_text(sd.location), default_fs),
        input_format=_text(sd.inputFormat),
        output_format=_text(sd.outputFormat),
        serde=SerDeInfo(_text(serde.name), _text(serde.serializationLib), dict(serde.parameters or {}))
        if serde is not None else SerDeInfo(),
        compressed=bool(sd.compressed),
        num_buckets=sd.numBuckets if sd.numBuckets is not None else -1,
        bucket_cols=tuple(sd.bucketCols or ()),
        sort_cols=tuple(Order(_text(o.col), o.order if o.order is not None else 1) for o in sd.sortCols or ()),
        skewed=_skewed_from_thrift(sd.skewedInfo),
        parameters=dict(sd.parameters or {}),
        stored_as_subdirectories=bool(sd.storedAsSubDirectories),
    )


def _skewed_from_thrift(info: Any) -> SkewedInfo:
    if info is None:
        return SkewedInfo()
    return SkewedInfo(tuple(info.skewedColNames or ()), tuple(tuple(v) for v in info.skewedColValues or ()),
                      tuple((tuple(k), v) for k, v in (info.skewedColValueLocationMaps or {}).items()))


def sd_to_thrift(sd: StorageDescriptor, columns: Iterable[FieldSchema]) -> Any:
    return hms.StorageDescriptor(
        cols=fields_to_thrift(columns),
        location=sd.location or None,  # Hive's views have none; Hive's client refuses an empty path
        inputFormat=sd.input_format or None,
        outputFormat=sd.output_format or None,
        compressed=sd.compressed,
        numBuckets=sd.num_buckets,
        # A view's SerDe has no class (Hive's CREATE VIEW sends null): Hive 2.3's engine loads a class named ''.
        serdeInfo=hms.SerDeInfo(name=sd.serde.name or None, serializationLib=sd.serde.serialization_lib or None,
                                parameters=dict(sd.serde.parameters)),
        bucketCols=list(sd.bucket_cols),
        sortCols=[hms.Order(col=o.column, order=o.order) for o in sd.sort_cols],
        parameters=dict(sd.parameters),
        skewedInfo=hms.SkewedInfo(skewedColNames=list(sd.skewed.column_names),
                                  skewedColValues=[list(v) for v in sd.skewed.column_values],
                                  skewedColValueLocationMaps={tuple(v): loc for v, loc in sd.skewed.value_locations}),
        storedAsSubDirectories=sd.stored_as_subdirectories,
    )


def database_from_thrift(db: Any, *, default_fs: str, altering: bool = False) -> Database:
    """An unset owner type is USER on a create; on an alter it stays empty, and the store keeps the old
    one (Hive's alterDatabase sets it only when given: Spark's toHiveDatabase never sets it). The
    location as Hive stores it (qualified_location, by fs.defaultFS), as are the tables' and partitions'."""
    unset = altering and db.ownerType is None
    return Database(name=_text(db.name), description=db.description,
                    location=qualified_location(_text(db.locationUri), default_fs),
                    owner=db.ownerName, parameters=dict(db.parameters or {}),
                    owner_type="" if unset else PRINCIPAL_TYPES.get(db.ownerType or USER_PRINCIPAL, "USER"))


def database_to_thrift(db: Database) -> Any:
    """A database created without an owner or a description answers none (null) for it, and one created
    with '' answers '', as Hive's: the store keeps the difference (None, '')."""
    return hms.Database(name=db.name, description=db.description, locationUri=db.location,
                        parameters=dict(db.parameters), ownerName=db.owner,
                        ownerType=PRINCIPAL_IDS.get(db.owner_type, USER_PRINCIPAL))


def function_from_thrift(f: Any) -> Function:
    """An unset owner type or function type is Hive's only default (USER, JAVA; Hive 2.3 fails on an unset
    owner type); an id Hive does not define passes on as its number, for the store to refuse. The owner as
    sent: none and '' are kept apart, as Hive keeps them."""
    return Function(
        db_name=_text(f.dbName), name=_text(f.functionName), class_name=_text(f.className), owner=f.ownerName,
        owner_type=PRINCIPAL_TYPES.get(f.ownerType or USER_PRINCIPAL, str(f.ownerType)),
        function_type=FUNCTION_TYPES.get(f.functionType or JAVA_FUNCTION, str(f.functionType)),
        resource_uris=tuple(ResourceUri(RESOURCE_TYPES.get(u.resourceType, str(u.resourceType)), _text(u.uri))
                            for u in f.resourceUris or ()))


def function_to_thrift(f: Function) -> Any:
    return hms.Function(
        functionName=f.name, dbName=f.db_name, className=f.class_name, ownerName=f.owner,
        ownerType=PRINCIPAL_IDS[f.owner_type], createTime=f.create_time,
        functionType=FUNCTION_TYPE_IDS[f.function_type],
        resourceUris=[hms.ResourceUri(resourceType=RESOURCE_TYPE_IDS[u.resource_type], uri=u.uri)
                      for u in f.resource_uris])


def table_from_thrift(t: Any, *, default_fs: str, db_name: str = "", name: str = "") -> Table:
    """A table as the client sent it; `tableType` decides managed or external (Hive also reads the
    EXTERNAL=TRUE parameter), and 'transactional'='true' in the parameters makes it ACID. One without a
    storage descriptor is refused (MetaException, as Hive's metastore fails on it): it would otherwise
    be stored with no columns and no formats."""
    if t.sd is None:
        raise NeverAllowed(f"table {_text(t.dbName) or db_name}.{_text(t.tableName) or name} has no storage "
                           "descriptor (sd), which holds its columns, location and formats; nothing was changed")
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
        owner=t.owner,
        columns=fields_from_thrift(t.sd.cols),
        partition_keys=fields_from_thrift(t.partitionKeys),
        sd=sd_from_thrift(t.sd, default_fs),
        parameters=parameters,
        create_time=t.createTime or 0,
        view_original_text=_text(t.viewOriginalText),
        view_expanded_text=_text(t.viewExpandedText),
        owner_type=PRINCIPAL_TYPES.get(t.ownerType or USER_PRINCIPAL, "USER"),
        last_access_time=t.lastAccessTime or 0,
        retention=t.retention or 0,
    )


def table_to_thrift(t: Table) -> Any:
    return hms.Table(
        tableName=t.name, dbName=t.db_name, owner=t.owner, createTime=t.create_time,
        lastAccessTime=t.last_access_time, retention=t.retention, sd=sd_to_thrift(t.sd, t.columns),
        partitionKeys=fields_to_thrift(t.partition_keys), parameters=dict(t.parameters),
        viewOriginalText=t.view_original_text or None, viewExpandedText=t.view_expanded_text or None,
        # temporary is left unset, as Hive's metastore leaves it (its client sets it for a session's temporary
        # tables, which never reach the metastore); Hive 2.3's DESCRIBE EXTENDED prints every field that is set.
        tableType=t.table_type.value, rewriteEnabled=False,
        ownerType=PRINCIPAL_IDS.get(t.owner_type, USER_PRINCIPAL), writeId=t.write_id, id=t.table_id,
    )


def partition_from_thrift(p: Any, *, default_fs: str) -> Partition:
    return Partition(db_name=_text(p.dbName), table_name=_text(p.tableName), values=tuple(p.values or ()),
                     sd=sd_from_thrift(p.sd, default_fs), parameters=dict(p.parameters or {}),
                     columns=fields_from_thrift(p.sd.cols) if p.sd is not None and p.sd.cols else None,
                     last_access_time=p.lastAccessTime or 0)


def partition_to_thrift(table: Table, p: Partition) -> Any:
    """Hive's partition: its storage descriptor carries its own columns, or the table's."""
    columns = p.columns if p.columns is not None else table.columns
    return hms.Partition(values=list(p.values), dbName=p.db_name, tableName=p.table_name, createTime=p.create_time,
                         lastAccessTime=p.last_access_time, sd=sd_to_thrift(p.sd, columns),
                         parameters=dict(p.parameters), writeId=p.write_id)


def partitions_of_spec(spec: Any) -> list[Any]:
    """The partitions a PartitionSpec holds, whole, as Hive's PartitionSpecProxy yields them to
    add_partitions_pspec: a PartitionListComposingSpec's as they are; a PartitionSpecWithSharedSD's each
    with a copy of the shared storage descriptor at its location followed by the partition's relativePath
    (joined as text, as Hive joins them: 'file:/t' and '/p=1'), of the spec's database and table."""
    if spec is None:
        raise InvalidArgument("a PartitionSpec of add_partitions_pspec is unset")
    if spec.partitionList is not None:
        return list(spec.partitionList.partitions or [])
    shared = spec.sharedSDPartitionSpec
    if shared is None:
        raise InvalidArgument("a PartitionSpec needs partitionList or sharedSDPartitionSpec")
    sd = required(shared.sd, "sharedSDPartitionSpec.sd")
    parts = []
    for p in shared.partitions or []:
        if p is None:
            raise InvalidArgument("a partition of sharedSDPartitionSpec is unset")
        own_sd = copy.copy(sd)
        if sd.location is not None or p.relativePath is not None:
            own_sd.location = (sd.location or "") + (p.relativePath or "")
        parts.append(hms.Partition(values=p.values, dbName=spec.dbName, tableName=spec.tableName,
                                   createTime=p.createTime, lastAccessTime=p.lastAccessTime, sd=own_sd,
                                   parameters=p.parameters))
    return parts


def partition_name(table: Table, values: Iterable[str]) -> str:
    return make_partition_name(table.partition_keys, list(values))


DDL_TIME = "transient_lastDdlTime"


def stamp_ddl_time(parameters: dict[str, str] | None) -> dict[str, str]:
    """Hive's metastore stamps a table or partition it creates or alters with the time of that DDL
    (seconds) when the client sent none (Hive's own client removes the old one before an alter)."""
    out = dict(parameters or {})
    if out.get(DDL_TIME, "0") in ("", "0"):
        out[DDL_TIME] = str(int(time.time()))
    return out


def required(value: Any, what: str) -> Any:
    if value is None or value == "":
        raise InvalidArgument(f"{what} is required")
    return value


def matches_none(*patterns: str | None) -> bool:
    """Whether a Hive name pattern is the empty string: Hive matches it as a pattern, which only an empty
    name would match, so it lists nothing (Hive 2.3 and 4 alike; unset, None, is every name)."""
    return "" in patterns


def check_batch(count: int, what: str, limit: int) -> None:
    """The gateway's batch limit (gateway/servicers/validation.py); an empty list is a valid Hive call."""
    validation.check_batch(count, what, limit, allow_empty=True)
