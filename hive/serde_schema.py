"""A table's columns as Hive's metastore answers get_fields and get_schema: as its SerDe reads them.

Hive's HMSHandler answers with the stored columns (sd.cols) only for the SerDes of
hive.serdes.using.metastore.for.schema (ORC, Parquet, the text and RCFile SerDes: `METASTORE_SCHEMA_SERDES`,
Hive 2.3's default); for any other it asks the SerDe itself (MetaStoreUtils.getFieldsFromDeserializer).
The gateway runs no Java SerDe, so it does the same for the SerDes whose answer it can derive from the
table alone (each rule checked against Hive Metastore 2.3.10):

- AvroSerDe: the columns of the Avro schema in `avro.schema.literal` (the table's parameter before its
  SerDe's), converted as Hive's SchemaToTypeInfo converts them (`_hive_type`), names in lower case, each
  column's comment its field's doc or ''. Without a literal (or the literal `none`) the stored columns.
  A schema behind `avro.schema.url` is not read (the gateway reads no files): the stored columns, which
  Hive's CREATE TABLE filled from it.
- OpenCSVSerde: the stored columns' names, each a string, commented 'from deserializer'.
- any other SerDe not in the list: the stored columns, a column without a comment commented ''
  (Hive's SerDes that take their columns from the table, RegexSerDe and JsonSerDe, answer so; a SerDe
  whose class Hive cannot load is MetaException there).

A dotted name (`t.col.field`) is Hive's component lookup: for a SerDe of the list, the table's stored
columns whatever follows the dot; for the others, the named column, then the named field of each struct
in turn (any case), answered as the field itself when it is not a struct, else as its fields, every
comment 'from deserializer'. Pure: no I/O.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Sequence

from hive.errors import InvalidArgument

METASTORE_SCHEMA_SERDES = frozenset((
    "org.apache.hadoop.hive.ql.io.orc.OrcSerde", "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
    "org.apache.hadoop.hive.serde2.columnar.ColumnarSerDe", "org.apache.hadoop.hive.serde2.dynamic_type.DynamicSerDe",
    "org.apache.hadoop.hive.serde2.MetadataTypedColumnsetSerDe",
    "org.apache.hadoop.hive.serde2.columnar.LazyBinaryColumnarSerDe",
    "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
    "org.apache.hadoop.hive.serde2.lazybinary.LazyBinarySerDe"))
AVRO_SERDE = "org.apache.hadoop.hive.serde2.avro.AvroSerDe"
OPEN_CSV_SERDE = "org.apache.hadoop.hive.serde2.OpenCSVSerde"
AVRO_LITERAL = "avro.schema.literal"
FROM_DESERIALIZER = "from deserializer"
MAX_AVRO_DEPTH = 64  # nesting of an Avro schema's types
MAX_AVRO_TYPES = 100_000  # types written out for one schema

_PRIMITIVES = {"string": "string", "int": "int", "boolean": "boolean", "bytes": "binary", "long": "bigint",
               "float": "float", "double": "double", "null": "void", "enum": "string", "fixed": "binary"}


class SerDeSchemaError(InvalidArgument):
    """An avro.schema.literal Hive's AvroSerDe cannot read, or a dotted name's field that is not there
    (MetaException, in Hive's words)."""


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    type: str
    comment: str | None


def serde_columns(serde_lib: str | None, serde_params: dict[str, str], table_params: dict[str, str],
                  stored: Sequence[Column], component: str = "") -> list[Column]:
    """The columns get_fields answers for a table of SerDe `serde_lib`; `component` is what followed the
    table's name after a dot (the module's docstring)."""
    if not serde_lib or serde_lib in METASTORE_SCHEMA_SERDES:
        return list(stored)
    literal = table_params.get(AVRO_LITERAL, serde_params.get(AVRO_LITERAL))
    if serde_lib == AVRO_SERDE and literal is not None and literal != "none":
        columns = avro_columns(literal)
    elif serde_lib == OPEN_CSV_SERDE:
        columns = [Column(c.name, "string", FROM_DESERIALIZER) for c in stored]
    else:
        columns = [Column(c.name, c.type, "" if c.comment is None else c.comment) for c in stored]
    return _component(columns, component.split(".")) if component else columns


def avro_columns(literal: str) -> list[Column]:
    """The columns of an Avro record schema, as Hive's AvroSerDe reads them."""
    try:
        schema = json.loads(literal)
    except (ValueError, RecursionError) as exc:
        raise SerDeSchemaError(f"Encountered exception determining schema: {exc}") from None
    return _AvroTypes().columns(schema)


def _fields(record: dict[str, Any]) -> list[dict[str, Any]]:
    fields = record.get("fields")
    if not isinstance(fields, list) or not all(isinstance(f, dict) and isinstance(f.get("name"), str) and "type" in f
                                               for f in fields):
        raise SerDeSchemaError(f"record {record.get('name')!r} has no list of fields with names and types")
    return fields


class _AvroTypes:
    """Hive's type names for the Avro types of one schema (Hive 2.3's SchemaToTypeInfo), its named types
    (record, enum, fixed) remembered as they are met; bounded in depth and in the types written out (a
    named type used twice is written out twice)."""

    def __init__(self) -> None:
        self._names: dict[str, Any] = {}
        self._types_left = MAX_AVRO_TYPES

    def columns(self, schema: Any) -> list[Column]:
        record = self._resolved(schema, ())
        if not isinstance(record, dict) or record.get("type") != "record":
            kind = record.get("type") if isinstance(record, dict) else record
            raise SerDeSchemaError(f"Schema for table must be of type RECORD. Received type: {str(kind).upper()}")
        self._name(record)
        return [Column(f["name"].lower(), self._hive_type(f["type"], (record["name"],), 1), f.get("doc") or "")
                for f in _fields(record)]

    def _name(self, schema: Any) -> None:
        if isinstance(schema, dict) and schema.get("type") in ("record", "enum", "fixed"):
            if not isinstance(schema.get("name"), str):
                raise SerDeSchemaError(f"a {schema['type']} without a name")
            self._names[schema["name"]] = schema

    def _resolved(self, schema: Any, seen: tuple[str, ...]) -> Any:
        """A type by name resolved to its definition (a recursive one refused, as Hive refuses it)."""
        if isinstance(schema, str) and schema not in _PRIMITIVES:
            if schema in seen:
                raise SerDeSchemaError(f"Recursive schemas are not supported. Recursive schema was {schema}")
            if schema not in self._names:
                raise SerDeSchemaError(f"Undefined name: {schema[:100]!r}")
            return self._names[schema]
        return schema

    def _hive_type(self, schema: Any, seen: tuple[str, ...], depth: int) -> str:
        """`seen`: the records being read; `depth`: how deep this type is nested."""
        self._types_left -= 1
        if depth > MAX_AVRO_DEPTH or self._types_left < 0:
            raise SerDeSchemaError(f"an Avro schema nested deeper than {MAX_AVRO_DEPTH} or of more than "
                                   f"{MAX_AVRO_TYPES} types written out")
        schema = self._resolved(schema, seen)
        if isinstance(schema, list):  # a union of two or more with null: the others, one left is that type
            others = [s for s in schema if s != "null" and not (isinstance(s, dict) and s.get("type") == "null")]
            if len(schema) < 2 or len(others) == len(schema):
                others = schema
            elif len(others) == 1:
                return self._hive_type(others[0], seen, depth + 1)
            return "uniontype<" + ",".join(self._hive_type(s, seen, depth + 1) for s in others) + ">"
        if isinstance(schema, str):
            return _PRIMITIVES[schema]
        if not isinstance(schema, dict):
            raise SerDeSchemaError(f"not an Avro type: {str(schema)[:100]}")
        kind, logical = schema.get("type"), schema.get("logicalType")
        self._name(schema)
        if kind == "record":
            inner = seen + (schema["name"],)
            return "struct<" + ",".join(f"{f['name'].lower()}:{self._hive_type(f['type'], inner, depth + 1)}"
                                        for f in _fields(schema)) + ">"
        if kind == "map":
            return f"map<string,{self._hive_type(schema.get('values'), seen, depth + 1)}>"
        if kind == "array":
            return f"array<{self._hive_type(schema.get('items'), seen, depth + 1)}>"
        if kind == "bytes" and logical == "decimal":
            return f"decimal({_int(schema, 'precision')},{_int(schema, 'scale', 0)})"
        if kind == "int" and logical == "date":
            return "date"
        if kind == "long" and logical == "timestamp-millis":
            return "timestamp"
        if kind == "string" and logical in ("varchar", "char"):
            return f"{logical}({_int(schema, 'maxLength')})"
        if isinstance(kind, (dict, list)) or (isinstance(kind, str) and kind not in _PRIMITIVES):
            return self._hive_type(kind, seen, depth + 1)  # {"type": {...}} or {"type": "a named type"}
        if kind not in _PRIMITIVES:
            raise SerDeSchemaError(f"not an Avro type: {str(kind)[:100]}")
        return _PRIMITIVES[kind]


def _int(schema: dict[str, Any], key: str, default: int | None = None) -> int:
    value = schema.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise SerDeSchemaError(f"{schema.get('logicalType')} needs a {key} that is a whole number, not {value!r}")
    return value


def _component(columns: list[Column], path: list[str]) -> list[Column]:
    """Hive's getFieldsFromDeserializer of `column.field...` (the table's name left out of `path`)."""
    fields: list[tuple[str, str]] | None = [(c.name, c.type) for c in columns]
    name, type_name = "", ""
    for part in path:
        if fields is None:
            raise SerDeSchemaError(f"Unknown type for {part}")
        found = [(n, t) for n, t in fields if n.lower() == part.lower()]
        if not found:
            listed = ", ".join(f"{i}:{n}" for i, (n, _) in enumerate(fields))
            raise SerDeSchemaError(f"cannot find field {part} from [{listed}]")
        name, type_name = found[0]
        fields = struct_fields(type_name)
    if fields is None:
        return [Column(name, type_name, FROM_DESERIALIZER)]
    return [Column(n, t, FROM_DESERIALIZER) for n, t in fields]


def struct_fields(type_name: str) -> list[tuple[str, str]] | None:
    """The (name, type) fields of a `struct<...>` type name; None for any other type."""
    text = type_name.strip()
    if not (text.lower().startswith("struct<") and text.endswith(">")):
        return None
    fields = []
    for item in _split_top(text[len("struct<"):-1]):
        name, sep, field_type = item.partition(":")
        if not sep:
            raise SerDeSchemaError(f"a struct field without a type: {item[:100]!r}")
        fields.append((name.strip(), field_type.strip()))
    return fields


def _split_top(text: str) -> list[str]:
    """`text` split at the commas outside any <...> or (...)."""
    items, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    if text[start:].strip():
        items.append(text[start:])
    return items
