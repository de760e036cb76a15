"""Catalog objects to and from the JSON documents stored in PostgreSQL and in event messages."""

from __future__ import annotations

from typing import Any, Mapping

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

Json = dict[str, Any]


# Keys Hive's rarer fields are stored under, written only when not at their default so the common
# row stays small (each partition row carries one storage descriptor).
def _rare_sd_fields(sd: StorageDescriptor) -> Json:
    out: Json = {}
    if sd.sort_cols:
        out["sort_cols"] = [[o.column, o.order] for o in sd.sort_cols]
    if sd.skewed != SkewedInfo():
        out["skewed"] = {"names": list(sd.skewed.column_names), "values": [list(v) for v in sd.skewed.column_values],
                         "locations": [[list(v), loc] for v, loc in sd.skewed.value_locations]}
    if sd.parameters:
        out["parameters"] = dict(sd.parameters)
    if sd.stored_as_subdirectories:
        out["subdirectories"] = True
    return out


def sd_to_json(sd: StorageDescriptor) -> Json:
    return {
        "location": sd.location,
        "input_format": sd.input_format,
        "output_format": sd.output_format,
        "serde": {"name": sd.serde.name, "lib": sd.serde.serialization_lib, "parameters": dict(sd.serde.parameters)},
        "compressed": sd.compressed,
        "num_buckets": sd.num_buckets,
        "bucket_cols": list(sd.bucket_cols),
        **_rare_sd_fields(sd),
    }


def sd_from_json(d: Mapping[str, Any]) -> StorageDescriptor:
    serde = d.get("serde") or {}
    return StorageDescriptor(
        location=d.get("location", ""),
        input_format=d.get("input_format", ""),
        output_format=d.get("output_format", ""),
        serde=SerDeInfo(serde.get("name", ""), serde.get("lib", ""), dict(serde.get("parameters", {}))),
        compressed=bool(d.get("compressed", False)),
        num_buckets=int(d.get("num_buckets", -1)),
        bucket_cols=tuple(d.get("bucket_cols", ())),
        sort_cols=tuple(Order(c, int(o)) for c, o in d.get("sort_cols", ())),
        skewed=_skewed_from_json(d.get("skewed")),
        parameters=dict(d.get("parameters", {})),
        stored_as_subdirectories=bool(d.get("subdirectories", False)),
    )


def _skewed_from_json(d: Mapping[str, Any] | None) -> SkewedInfo:
    if not d:
        return SkewedInfo()
    return SkewedInfo(tuple(d.get("names", ())), tuple(tuple(v) for v in d.get("values", ())),
                      tuple((tuple(v), loc) for v, loc in d.get("locations", ())))


def _fields_to_json(fields: tuple[FieldSchema, ...]) -> list[list[str]]:
    return [[f.name, f.type, f.comment] for f in fields]


def _fields_from_json(rows: list[list[str]]) -> tuple[FieldSchema, ...]:
    return tuple(FieldSchema(r[0], r[1], r[2] if len(r) > 2 else "") for r in rows)


def table_body(t: Table) -> Json:
    """The document stored in tbls.body: everything not held in its own column."""
    body: Json = {
        "owner": t.owner,
        "columns": _fields_to_json(t.columns),
        "partition_keys": _fields_to_json(t.partition_keys),
        "sd": sd_to_json(t.sd),
        "parameters": dict(t.parameters),
    }
    if t.view_original_text or t.view_expanded_text:
        body["view_original_text"] = t.view_original_text
        body["view_expanded_text"] = t.view_expanded_text
    if t.owner_type != "USER":
        body["owner_type"] = t.owner_type
    if t.last_access_time:
        body["last_access_time"] = t.last_access_time
    if t.retention:
        body["retention"] = t.retention
    return body


def table_from_row(row: Mapping[str, Any]) -> Table:
    body = row["body"]
    return Table(
        db_name=row["db_name"],
        name=row["tbl_name"],
        table_type=TableType(row["table_type"]),
        transactional=row["transactional"],
        owner=body.get("owner", ""),
        columns=_fields_from_json(body.get("columns", [])),
        partition_keys=_fields_from_json(body.get("partition_keys", [])),
        sd=sd_from_json(body.get("sd", {})),
        parameters=dict(body.get("parameters", {})),
        create_time=row["create_time"],
        table_id=row["table_id"],
        write_id=row["created_wid"],
        view_original_text=body.get("view_original_text", ""),
        view_expanded_text=body.get("view_expanded_text", ""),
        owner_type=body.get("owner_type", "USER"),
        last_access_time=int(body.get("last_access_time", 0)),
        retention=int(body.get("retention", 0)),  # (none in a row or event written before it was kept: 0)
    )


def table_to_json(t: Table) -> Json:
    """A whole table, as event messages carry it."""
    return {
        **table_body(t),
        "db_name": t.db_name,
        "tbl_name": t.name,
        "table_type": t.table_type.value,
        "transactional": t.transactional,
        "create_time": t.create_time,
        "table_id": t.table_id,
        "created_wid": t.write_id,
    }


def table_from_json(d: Mapping[str, Any]) -> Table:
    return table_from_row({**d, "body": d})


def partition_body(p: Partition) -> Json:
    body: Json = {"sd": sd_to_json(p.sd), "parameters": dict(p.parameters)}
    if p.columns is not None:
        body["columns"] = _fields_to_json(p.columns)
    if p.last_access_time:
        body["last_access_time"] = p.last_access_time
    return body


def partition_from_row(db_name: str, table_name: str, row: Mapping[str, Any]) -> Partition:
    body = row["body"]
    return Partition(
        db_name=db_name,
        table_name=table_name,
        values=tuple(row["part_values"]),
        name=row["part_name"],
        sd=sd_from_json(body.get("sd", {})),
        parameters=dict(body.get("parameters", {})),
        create_time=row["create_time"],
        write_id=row["created_wid"],
        columns=_fields_from_json(body["columns"]) if "columns" in body else None,
        last_access_time=int(body.get("last_access_time", 0)),
    )


def partition_to_json(p: Partition) -> Json:
    return {
        **partition_body(p),
        "part_name": p.name,
        "part_values": list(p.values),
        "create_time": p.create_time,
        "created_wid": p.write_id,
    }


def partition_from_json(db_name: str, table_name: str, d: Mapping[str, Any]) -> Partition:
    return partition_from_row(db_name, table_name, {**d, "body": d})


def database_to_json(db: Database) -> Json:
    return {
        "name": db.name,
        "description": db.description,
        "location": db.location,
        "owner": db.owner,
        "parameters": dict(db.parameters),
        "create_time": db.create_time,
        "owner_type": db.owner_type,
    }


def database_from_row(row: Mapping[str, Any]) -> Database:
    return Database(
        name=row["name"],
        description=row["description"],
        location=row["location"],
        owner=row["owner"],
        parameters=dict(row["parameters"]),
        create_time=row["create_time"],
        owner_type=row.get("owner_type", "USER"),  # (an event written before 0010 has none)
    )


def resource_uris_to_json(uris: tuple[ResourceUri, ...]) -> list[Json]:
    return [{"resource_type": u.resource_type, "uri": u.uri} for u in uris]


def function_to_json(f: Function) -> Json:
    return {"db_name": f.db_name, "name": f.name, "class_name": f.class_name, "owner": f.owner,
            "owner_type": f.owner_type, "function_type": f.function_type,
            "resource_uris": resource_uris_to_json(f.resource_uris), "create_time": f.create_time}


def function_from_json(d: Mapping[str, Any]) -> Function:
    """A function as event messages carry it (`function_to_json`)."""
    return function_from_row({**d, "func_name": d["name"]})


def function_from_row(row: Mapping[str, Any]) -> Function:
    """A `funcs` row (store/sql/functions.py) as a Function."""
    return Function(db_name=row["db_name"], name=row["func_name"], class_name=row["class_name"], owner=row["owner"],
                    owner_type=row["owner_type"], function_type=row["function_type"],
                    resource_uris=tuple(ResourceUri(u["resource_type"], u["uri"]) for u in row["resource_uris"]),
                    create_time=row["create_time"])
