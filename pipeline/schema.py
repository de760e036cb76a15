"""A table's columns as Spark types, and the check a DataFrame must pass before it is written.

`spark_type("decimal(10,2)")` is the Spark type Spark's own Hive support reads a Hive column type
as (varchar/char as string, Hive's `timestamp` as Spark's session-time-zone timestamp, `decimal`
alone as decimal(10,0) like Hive).

`check_frame(schema, table, static)` compares a DataFrame's schema with the table's columns and
partition keys and answers a `FramePlan` (which DataFrame column feeds which table column, cast to
the table's type) or raises `SchemaMismatch` naming the columns at fault. It runs before the write
job opens a txn, so a refused DataFrame leaves nothing behind. The rule:

- every table column and every partition key not given as a static value needs a DataFrame column
  of that name (case-insensitive, as Hive names are); no other DataFrame column is allowed;
- a DataFrame type must equal the table's type or up-cast to it without loss: `can_up_cast` is
  Spark's `Cast.canUpCast` less the lossy numeric steps it allows (bigint or int to float,
  bigint to double) and less its casts to string (a number written into a string column is more
  often a mistake than a wish; cast it explicitly). So int -> bigint, float -> double, int ->
  decimal(10,0), date -> timestamp pass; string -> bigint, bigint -> int, double -> float do not;
- static partition values (`{"ds": "2024-01-01"}`) must be a prefix of the keys (Hive: a dynamic
  partition cannot be the parent of a static one) and fit the key's type.

The writer then casts each column to the table's type, so the files carry the table's types
(reading them never meets a Parquet int32 where the table says bigint).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from pyspark.sql import types as T

from hive.errors import InvalidArgument
from hive.names import DEFAULT_PARTITION_NAME, validate_partition_values
from hive.schema import FieldSchema
from protos.metastore.v1 import catalog_pb2 as pb

_MAX_NAMED = 5  # mismatches named in one message; the rest are counted

_PRIMITIVES: dict[str, T.DataType] = {
    "tinyint": T.ByteType(), "smallint": T.ShortType(), "int": T.IntegerType(), "integer": T.IntegerType(),
    "bigint": T.LongType(), "float": T.FloatType(), "double": T.DoubleType(), "double precision": T.DoubleType(),
    "boolean": T.BooleanType(), "string": T.StringType(), "date": T.DateType(), "timestamp": T.TimestampType(),
    "binary": T.BinaryType(),
}
_TOKEN = re.compile(r"\s*(double\s+precision|[A-Za-z_][A-Za-z0-9_]*|\d+|[<>(),:])")
_INTEGRAL = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
# Decimal precision that holds every value of an integral type (Spark's DecimalType.forType).
_INTEGRAL_DIGITS = {T.ByteType: 3, T.ShortType: 5, T.IntegerType: 10, T.LongType: 20}


class SchemaMismatch(ValueError):
    """The DataFrame does not fit the table; the message names the columns and what to do."""


class UnsupportedType(ValueError):
    """A Hive column type this job cannot map to a Spark type (uniontype, intervals, void)."""


def spark_type(hive_type: str) -> T.DataType:
    """The Spark type for a Hive column type string (primitive, parameterised or complex)."""
    tokens = [m.group(1).lower() for m in _TOKEN.finditer(hive_type)]
    if "".join(tokens).replace(" ", "") != re.sub(r"\s+", "", hive_type.lower()):
        raise UnsupportedType(f"cannot parse Hive type {hive_type!r}")
    parser = _TypeParser(tokens, hive_type)
    out = parser.parse()
    if parser.pos != len(tokens):
        raise UnsupportedType(f"cannot parse Hive type {hive_type!r}: unexpected {tokens[parser.pos]!r}")
    return out


class _TypeParser:
    def __init__(self, tokens: list[str], text: str) -> None:
        self.tokens = tokens
        self.text = text
        self.pos = 0

    def _next(self) -> str:
        if self.pos >= len(self.tokens):
            raise UnsupportedType(f"cannot parse Hive type {self.text!r}: it ends early")
        self.pos += 1
        return self.tokens[self.pos - 1]

    def _expect(self, token: str) -> None:
        got = self._next()
        if got != token:
            raise UnsupportedType(f"cannot parse Hive type {self.text!r}: expected {token!r}, got {got!r}")

    def _peek(self) -> str:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else ""

    def _numbers(self) -> list[int]:
        self._expect("(")
        out = [int(self._next())]
        while self._peek() == ",":
            self._next()
            out.append(int(self._next()))
        self._expect(")")
        return out

    def parse(self) -> T.DataType:
        name = " ".join(self._next().split())
        if name in ("decimal", "numeric"):
            args = self._numbers() if self._peek() == "(" else [10, 0]
            return T.DecimalType(args[0], args[1] if len(args) > 1 else 0)
        if name in ("varchar", "char"):
            self._numbers()
            return T.StringType()
        if name in _PRIMITIVES:
            return _PRIMITIVES[name]
        if name == "array":
            self._expect("<")
            element = self.parse()
            self._expect(">")
            return T.ArrayType(element, True)
        if name == "map":
            self._expect("<")
            key = self.parse()
            self._expect(",")
            value = self.parse()
            self._expect(">")
            return T.MapType(key, value, True)
        if name == "struct":
            self._expect("<")
            fields: list[T.StructField] = []
            while True:
                field_name = self._next()
                self._expect(":")
                fields.append(T.StructField(field_name, self.parse(), True))
                if self._peek() != ",":
                    break
                self._next()
            self._expect(">")
            return T.StructType(fields)
        raise UnsupportedType(f"Hive type {self.text!r} ({name}) has no Spark equivalent this job reads or writes")


def can_up_cast(source: T.DataType, target: T.DataType) -> bool:
    """Whether every value of `source` converts to `target` without loss (see the module doc)."""
    if isinstance(source, (T.CharType, T.VarcharType)):
        source = T.StringType()
    if source == target or isinstance(source, T.NullType):
        return True
    if isinstance(source, _INTEGRAL) and isinstance(target, _INTEGRAL):
        return _INTEGRAL.index(type(source)) <= _INTEGRAL.index(type(target))
    if isinstance(source, _INTEGRAL) and isinstance(target, T.DecimalType):
        digits = _INTEGRAL_DIGITS[type(source)]
        return target.precision - target.scale >= digits
    if isinstance(target, T.DoubleType):  # 53-bit mantissa: exact up to int, and decimals of <= 15 digits
        return (isinstance(source, (T.ByteType, T.ShortType, T.IntegerType, T.FloatType))
                or (isinstance(source, T.DecimalType) and source.precision <= 15))
    if isinstance(target, T.FloatType):  # 24-bit mantissa: exact for tinyint and smallint
        return isinstance(source, (T.ByteType, T.ShortType))
    if isinstance(source, T.DecimalType) and isinstance(target, T.DecimalType):
        return (target.precision - target.scale >= source.precision - source.scale
                and target.scale >= source.scale)
    if isinstance(source, T.DateType) and isinstance(target, (T.TimestampType, T.TimestampNTZType)):
        return True
    if isinstance(source, T.TimestampNTZType) and isinstance(target, T.TimestampType):
        return True
    if isinstance(source, T.ArrayType) and isinstance(target, T.ArrayType):
        return can_up_cast(source.elementType, target.elementType)
    if isinstance(source, T.MapType) and isinstance(target, T.MapType):
        return can_up_cast(source.keyType, target.keyType) and can_up_cast(source.valueType, target.valueType)
    if isinstance(source, T.StructType) and isinstance(target, T.StructType):
        return len(source.fields) == len(target.fields) and all(
            s.name.lower() == t.name.lower() and can_up_cast(s.dataType, t.dataType)
            for s, t in zip(source.fields, target.fields))
    return False


@dataclass(frozen=True, slots=True)
class Target:
    """One column of the files written: the table's name and type, fed by a DataFrame column or
    (a static partition key) by a constant."""

    name: str
    hive_type: str
    spark_type: T.DataType
    source: str | None = None   # the DataFrame column
    value: str | None = None    # the static partition value


@dataclass(frozen=True, slots=True)
class FramePlan:
    data: tuple[Target, ...]   # the table's columns, in table order
    keys: tuple[Target, ...]   # the partition keys, in key order
    static: tuple[str, ...]    # values of the static prefix of the keys

    def apply(self, df: object) -> object:
        """The DataFrame to write: the table's columns then the keys, named and typed as the table."""
        from pyspark.sql import functions as F

        cols = [F.lit(None if t.value == DEFAULT_PARTITION_NAME else t.value).cast(t.spark_type).alias(t.name)
                if t.source is None
                else F.col(_quoted(t.source)).cast(t.spark_type).alias(t.name) for t in (*self.data, *self.keys)]
        return df.select(*cols)  # type: ignore[attr-defined]

    @property
    def key_names(self) -> list[str]:
        return [k.name for k in self.keys]


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _describe(fields: Sequence[pb.FieldSchema]) -> str:
    return ", ".join(f"{f.name} {f.type}" for f in fields) or "none"


def _name_some(items: Sequence[str]) -> str:
    shown = "; ".join(items[:_MAX_NAMED])
    return shown + (f"; and {len(items) - _MAX_NAMED} more" if len(items) > _MAX_NAMED else "")


def table_schema(table: pb.Table, *, with_keys: bool = True) -> T.StructType:
    """The table's columns (then its partition keys) as a Spark schema."""
    fields = [*table.columns, *(table.partition_keys if with_keys else ())]
    return T.StructType([T.StructField(f.name.lower(), spark_type(f.type), True) for f in fields])


def check_frame(schema: T.StructType, table: pb.Table, static: Mapping[str, str] | None = None) -> FramePlan:
    """The plan for writing a DataFrame of `schema` into `table`, or `SchemaMismatch`."""
    full = f"{table.db_name}.{table.name}"
    static = {k.lower(): v for k, v in (static or {}).items()}
    keys = list(table.partition_keys)
    key_names = [k.name.lower() for k in keys]
    unknown = sorted(set(static) - set(key_names))
    if unknown:
        raise SchemaMismatch(f"static partition value(s) for {', '.join(unknown)}, which are not partition keys of "
                             f"{full} (its keys: {_describe(keys)})")
    prefix = len(static)
    if set(static) != set(key_names[:prefix]):
        raise SchemaMismatch(f"the static partition keys ({', '.join(static)}) must be the first keys of {full} "
                             f"in order ({', '.join(key_names)}): a dynamic partition cannot be the parent of a "
                             f"static one")
    static_values = tuple(static[k] for k in key_names[:prefix])
    try:
        validate_partition_values([FieldSchema(k.name, k.type) for k in keys[:prefix]], static_values)
    except InvalidArgument as exc:
        raise SchemaMismatch(f"static partition value for {full}: {exc}") from exc

    by_lower: dict[str, T.StructField] = {}
    duplicates = []
    for f in schema.fields:
        if f.name.lower() in by_lower:
            duplicates.append(f"{by_lower[f.name.lower()].name!r} and {f.name!r}")
        by_lower[f.name.lower()] = f
    if duplicates:
        raise SchemaMismatch(f"the DataFrame has columns that differ only in case, which Hive cannot tell apart: "
                             f"{_name_some(duplicates)}")

    problems: list[str] = []
    targets: list[Target] = []
    for i, col in enumerate([*table.columns, *keys]):
        name = col.name.lower()
        is_key = i >= len(table.columns)
        what = "partition key" if is_key else "column"
        try:
            want = spark_type(col.type)
        except UnsupportedType as exc:
            raise SchemaMismatch(f"{what} {name} of {full}: {exc}") from exc
        if is_key and name in static:
            if name in by_lower:
                problems.append(f"partition key {name} is given a static value and is also a DataFrame column "
                                f"(drop the column or the static value)")
            targets.append(Target(name, col.type, want, value=static[name]))
            continue
        field = by_lower.get(name)
        if field is None:
            problems.append(f"the DataFrame has no column for {what} {name} {col.type}")
        elif not can_up_cast(field.dataType, want):
            problems.append(f"{what} {name} is {col.type} but the DataFrame's {field.name!r} is "
                            f"{field.dataType.simpleString()}, which does not up-cast to it without loss "
                            f"(cast it explicitly after checking the values)")
        else:
            targets.append(Target(name, col.type, want, source=field.name))
    known = {c.name.lower() for c in [*table.columns, *keys]}
    extra = [f.name for f in schema.fields if f.name.lower() not in known]
    problems += [f"the DataFrame's column {name!r} is not a column of the table" for name in extra]
    if problems:
        raise SchemaMismatch(f"the DataFrame does not fit {full} (columns: {_describe(table.columns)}; partition "
                             f"keys: {_describe(keys)}): {_name_some(problems)}; nothing was written")
    n = len(table.columns)
    return FramePlan(tuple(targets[:n]), tuple(targets[n:]), static_values)


def parse_text_columns(df: Any, table: pb.Table) -> Any:
    """`df` with its string columns parsed as the table's types, for text input (CSV) whose every
    column reads as a string: one pass over the data finds, per column, the values that are not
    of the column's type, and any is a `SchemaMismatch` naming the column, the count and an
    example (so the check still comes before the write job's txn). Columns the table keeps as
    strings, and columns that are not strings, are left as they are."""
    from pyspark.sql import functions as F

    by_lower = {f.name.lower(): f for f in df.schema.fields}
    parsed: dict[str, tuple[Any, Any]] = {}  # DataFrame column -> (parsed column, "value did not parse")
    for col in [*table.columns, *table.partition_keys]:
        field = by_lower.get(col.name.lower())
        want = spark_type(col.type)
        if field is None or not isinstance(field.dataType, T.StringType) or isinstance(want, T.StringType):
            continue
        raw = F.col(_quoted(field.name))
        value = raw.try_cast(want)
        parsed[field.name] = (value, raw.isNotNull() & value.isNull() & (raw != DEFAULT_PARTITION_NAME))
    if not parsed:
        return df
    counts = df.select(*[F.sum(bad.cast("long")).alias(str(i)) for i, (_, bad) in enumerate(parsed.values())]).first()
    problems = []
    for i, (name, (_, bad)) in enumerate(parsed.items()):
        if counts is not None and counts[i]:
            example = df.where(bad).select(_quoted(name)).first()
            want_type = next(c.type for c in [*table.columns, *table.partition_keys] if c.name.lower() == name.lower())
            problems.append(f"{counts[i]} value(s) of {name!r} are not {want_type} (e.g. {str(example[0])[:40]!r})")
    if problems:
        raise SchemaMismatch(f"the input does not fit {table.db_name}.{table.name}: {_name_some(problems)}; "
                             f"nothing was written")
    return df.select(*[parsed[f.name][0].alias(f.name) if f.name in parsed else F.col(_quoted(f.name))
                       for f in df.schema.fields])
