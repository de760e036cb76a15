"""Catalog objects to and from the JSON documents stored in PostgreSQL and in event messages."""

from __future__ import annotations

from typing import Any, Mapping

from store.models import (
    Database,
    FieldSchema,
    Partition,
    SerDeInfo,
    StorageDescriptor,
    Table,
    TableType,
)

Json = dict[str, Any]


def sd_to_json(sd: StorageDescriptor) -> Json:
    return {
        "location": sd.location,
        "input_format": sd.input_format,
        "output_format": sd.output_format,
        "serde": {"name": sd.serde.name, "lib": sd.serde.serialization_lib, "parameters": dict(sd.serde.parameters)},
        "compressed": sd.compressed,
        "num_buckets": sd.num_buckets,
        "bucket_cols": list(sd.bucket_cols),
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
    )


def _fields_to_json(fields: tuple[FieldSchema, ...]) -> list[list[str]]:
    return [[f.name, f.type, f.comment] for f in fields]


def _fields_from_json(rows: list[list[str]]) -> tuple[FieldSchema, ...]:
    return tuple(FieldSchema(r[0], r[1], r[2] if len(r) > 2 else "") for r in rows)


def table_body(t: Table) -> Json:
    """The document stored in tbls.body: everything not held in its own column."""
    return {
        "owner": t.owner,
        "columns": _fields_to_json(t.columns),
        "partition_keys": _fields_to_json(t.partition_keys),
        "sd": sd_to_json(t.sd),
        "parameters": dict(t.parameters),
    }


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
    return {"sd": sd_to_json(p.sd), "parameters": dict(p.parameters)}


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
    }


def database_from_row(row: Mapping[str, Any]) -> Database:
    return Database(
        name=row["name"],
        description=row["description"],
        location=row["location"],
        owner=row["owner"],
        parameters=dict(row["parameters"]),
        create_time=row["create_time"],
    )
