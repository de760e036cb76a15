"""hive/serde_schema.py's bounds and edges; its answers are compared with Hive Metastore 2.3.10 in
tests/e2e/test_thrift_differential.py (SERDE_STEPS)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from hive.serde_schema import (AVRO_SERDE, MAX_AVRO_DEPTH, Column, SerDeSchemaError, avro_columns, serde_columns,
                               struct_fields)


def _record(*fields: dict[str, Any], name: str = "r") -> str:
    return json.dumps({"type": "record", "name": name, "fields": list(fields)})


def test_a_deep_or_exploding_schema_is_refused_not_followed() -> None:
    deep: object = "int"
    for _ in range(MAX_AVRO_DEPTH + 5):
        deep = {"type": "array", "items": deep}
    with pytest.raises(SerDeSchemaError, match="nested deeper"):
        avro_columns(_record({"name": "a", "type": deep}))
    with pytest.raises(SerDeSchemaError, match="determining schema"):  # deeper than the JSON reader goes
        avro_columns('{"type": ' * 100_000)
    # Each record's two fields name the record before: 2^39 types written out for the last, were it followed.
    records: list[dict[str, Any]] = [{"type": "record", "name": "R0", "fields": [{"name": "x", "type": "int"}]}]
    records += [{"type": "record", "name": f"R{i}",
                 "fields": [{"name": "a", "type": f"R{i - 1}"}, {"name": "b", "type": f"R{i - 1}"}]}
                for i in range(1, 40)]
    with pytest.raises(SerDeSchemaError, match="types written out"):
        avro_columns(_record(*({"name": f"f{i}", "type": r} for i, r in enumerate(records))))


def test_names_types_and_refusals() -> None:
    assert avro_columns(_record({"name": "Id", "type": "long", "doc": "the id"},
                                {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A"]}},
                                {"name": "e2", "type": "E"})) == [
        Column("id", "bigint", "the id"), Column("e", "string", ""), Column("e2", "string", "")]
    with pytest.raises(SerDeSchemaError, match="Undefined name"):
        avro_columns(_record({"name": "x", "type": "Nowhere"}))
    with pytest.raises(SerDeSchemaError, match="whole number"):
        avro_columns(_record({"name": "x", "type": {"type": "bytes", "logicalType": "decimal", "precision": "9"}}))
    with pytest.raises(SerDeSchemaError, match="fields with names and types"):
        avro_columns(_record({"name": "x"}))


def test_a_dotted_name_walks_struct_fields_in_any_case() -> None:
    stored = [Column("s", "struct<a:int,b:struct<c:map<string,int>,d:decimal(10,2)>>", None), Column("n", "int", None)]
    regex = "org.apache.hadoop.hive.serde2.RegexSerDe"
    assert serde_columns(regex, {}, {}, stored, "S.B") == [Column("c", "map<string,int>", "from deserializer"),
                                                         Column("d", "decimal(10,2)", "from deserializer")]
    assert serde_columns(regex, {}, {}, stored, "s.b.d") == [Column("d", "decimal(10,2)", "from deserializer")]
    with pytest.raises(SerDeSchemaError, match="Unknown type for x"):
        serde_columns(regex, {}, {}, stored, "n.x")
    with pytest.raises(SerDeSchemaError, match=r"cannot find field z from \[0:a, 1:b\]"):
        serde_columns(regex, {}, {}, stored, "s.z")
    # A SerDe whose schema is the metastore's: the stored columns whatever the name says.
    parquet = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
    assert serde_columns(parquet, {}, {}, stored, "s.z") == stored
    # Avro without a schema: the stored columns, a missing comment ''.
    assert serde_columns(AVRO_SERDE, {}, {}, stored) == [Column(c.name, c.type, "") for c in stored]
    assert struct_fields("int") is None and struct_fields("struct<>") == []
