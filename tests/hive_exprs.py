"""Hive 2.3's partition expressions made by Hive's own classes, in a py4j JVM on pyspark's jars.

`HiveExprs(jvm)` builds an ExprNodeGenericFuncDesc as Hive 2.3's DDLSemanticAnalyzer builds a DROP
PARTITION's (`new ExprNodeGenericFuncDesc(booleanTypeInfo, udf, children)`, the function not
initialized, a column `new ExprNodeColumnDesc(typeInfo, name, null, true)`, a constant of the key's
type) and serializes it with SerializationUtilities.serializeExpressionToKryo, the bytes the client
sends. Expressions are written as small tuples so that tests can draw them with hypothesis:

    ("=", ("col", "ds", "string"), ("const", "string", "a"))
    ("and", e1, e2, ...) ("or", ...) ("not", e) ("isnull", col) ("isnotnull", col)
    ("in", col, const, ...) ("between", invert, col, low, high)

Constants: a str for string keys, an int for int keys (py4j sends a Java Integer; smallint, tinyint and
bigint ones are made a Short, Byte or Long in the JVM), a `datetime.date` for date keys (a java.sql.Date
at local midnight, as Hive's converter makes it), a `datetime.datetime` for timestamp keys (a
java.sql.Timestamp of that local date and time), None for a null constant of any type (what DDLSemanticAnalyzer
makes of a value its key's type does not accept: DROP PARTITION (hr='1.5') of an int key).
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Iterator

import pytest

UDFS = {"=": "GenericUDFOPEqual", "<>": "GenericUDFOPNotEqual", "<": "GenericUDFOPLessThan",
        "<=": "GenericUDFOPEqualOrLessThan", ">": "GenericUDFOPGreaterThan", ">=": "GenericUDFOPEqualOrGreaterThan",
        "and": "GenericUDFOPAnd", "or": "GenericUDFOPOr", "not": "GenericUDFOPNot", "isnull": "GenericUDFOPNull",
        "isnotnull": "GenericUDFOPNotNull", "in": "GenericUDFIn", "between": "GenericUDFBetween"}
_QL = "org.apache.hadoop.hive.ql."
_BOXED = {"smallint": ("shortTypeInfo", "short"), "tinyint": ("byteTypeInfo", "byte"),
          "bigint": ("longTypeInfo", "long")}


class HiveExprs:
    def __init__(self, jvm: Any) -> None:
        self.jvm = self._jvm = jvm
        self._types = jvm.org.apache.hadoop.hive.serde2.typeinfo.TypeInfoFactory
        self._plan = getattr(jvm, _QL + "plan")
        self._udf = getattr(jvm, _QL + "udf.generic")
        self._serialize = getattr(jvm, _QL + "exec.SerializationUtilities").serializeExpressionToKryo

    def build(self, expr: tuple[Any, ...]) -> Any:
        head = expr[0]
        if head == "col":
            return self._plan.ExprNodeColumnDesc(self._types.getPrimitiveTypeInfo(expr[2]), expr[1], None, True)
        if head == "const":
            if expr[2] is None:  # a null constant of the key's type: DDLSemanticAnalyzer's for text it rejects
                return self._plan.ExprNodeConstantDesc(self._types.getPrimitiveTypeInfo(expr[1]), None)
            if expr[1] in _BOXED:  # a Short, Byte or Long, which py4j would send as an Integer
                return self._boxed_constant(expr[1], expr[2])
            if expr[1].startswith("varchar("):  # a HiveVarchar, as Hive's converter makes it
                return self._varchar_constant(expr[1], expr[2])
            return self._plan.ExprNodeConstantDesc(self._types.getPrimitiveTypeInfo(expr[1]), self._java(expr[2]))
        children = self._jvm.java.util.ArrayList()
        args = expr[1:]
        if head == "between":  # (invert, col, low, high): the invert flag is a boolean constant
            children.add(self.build(("const", "boolean", args[0])))
            args = args[1:]
        for arg in args:
            children.add(self.build(arg))
        return self._plan.ExprNodeGenericFuncDesc(self._types.booleanTypeInfo, getattr(self._udf, UDFS[head])(),
                                                  children)

    def _boxed_constant(self, type_name: str, value: int) -> Any:
        """A constant holding a java.lang.Short, Byte or Long, made by java.beans.XMLDecoder in the JVM
        (a value returned to Python and sent back would arrive as an Integer)."""
        field, tag = _BOXED[type_name]
        xml = ('<?xml version="1.0" encoding="UTF-8"?><java><object class="org.apache.hadoop.hive.ql.plan.'
               'ExprNodeConstantDesc"><object class="org.apache.hadoop.hive.serde2.typeinfo.TypeInfoFactory" '
               f'field="{field}"/><{tag}>{int(value)}</{tag}></object></java>')
        decoder = self._jvm.java.beans.XMLDecoder(self._jvm.java.io.ByteArrayInputStream(bytearray(xml.encode())))
        try:
            return decoder.readObject()
        finally:
            decoder.close()

    def _varchar_constant(self, type_name: str, value: str) -> Any:
        length = int(type_name[len("varchar("):-1])
        hv = self._jvm.org.apache.hadoop.hive.common.type.HiveVarchar(value, length)
        return self._plan.ExprNodeConstantDesc(self._types.getPrimitiveTypeInfo(type_name), hv)

    def _java(self, value: Any) -> Any:
        if isinstance(value, dt.datetime):  # a java.sql.Timestamp of that local date and time
            return self._jvm.java.sql.Timestamp.valueOf(value.isoformat(" "))
        if isinstance(value, dt.date):
            return self._jvm.java.sql.Date.valueOf(value.isoformat())
        return value

    def serialize(self, expr: tuple[Any, ...]) -> bytes:
        return bytes(self._serialize(self.build(expr)))

    def text(self, expr: tuple[Any, ...]) -> str:
        """Hive's own rendering of the expression (getExprString), for messages."""
        return str(self.build(expr).getExprString())


def hive_jvm_fixture() -> Iterator[Any]:
    """A JVM with pyspark's jars (Hive 2.3.10's ql and metastore classes), without a SparkContext."""
    pytest.importorskip("pyspark")
    from pyspark.java_gateway import launch_gateway

    gateway = launch_gateway()
    try:
        yield gateway.jvm
    finally:
        gateway.shutdown()


_DS, _HR, _DAY = ("col", "ds", "string"), ("col", "hr", "int"), ("col", "day", "date")
_TS = ("col", "ts", "timestamp")


def _s(value: str) -> tuple[str, str, str]:
    return ("const", "string", value)


def _i(value: int) -> tuple[str, str, int]:
    return ("const", "int", value)


# The expressions of tests/e2e/hive_expr_goldens.json, Hive's bytes for each: the fast tests read those
# bytes without a JVM, and tests/e2e/test_thrift_partition_expr_differential.py checks that Hive still
# writes them. Regenerate with `python -m tests.hive_exprs > tests/e2e/hive_expr_goldens.json` (TZ=UTC).
GOLDENS: dict[str, tuple[Any, ...]] = {
    "ds_is_a": ("=", _DS, _s("a")),
    "ds_a_and_hr_2": ("and", ("=", _DS, _s("a")), ("=", _HR, _i(2))),
    "ds_not_a": ("<>", _DS, _s("a")),
    "ds_is_default": ("=", _DS, _s("__HIVE_DEFAULT_PARTITION__")),
    "hr_gt_1": (">", _HR, _i(1)),
    "day_le_2024_01_02": ("<=", _DAY, ("const", "date", dt.date(2024, 1, 2))),
    "ds_in_a_b": ("in", _DS, _s("a"), _s("b")),
    "ds_not_between_a_b": ("between", True, _DS, _s("a"), _s("b")),
    "ds_null_or_not_hr_not_null": ("or", ("isnull", _DS), ("not", ("isnotnull", _HR))),
    "payload_is_a": ("=", ("col", "payload", "string"), _s("a")),
    "hr_is_string_2": ("=", _HR, _s("2")),
    "ds_is_unicode": ("=", _DS, _s("é€😀 x/y=z%")),
    "small_lt_minus_300": ("<", ("col", "small", "smallint"), ("const", "smallint", -300)),
    "tiny_is_minus_3": ("=", ("col", "tiny", "tinyint"), ("const", "tinyint", -3)),
    "big_ge_long_min": (">=", ("col", "big", "bigint"), ("const", "bigint", -2**63)),
    "vc_is_a_b": ("=", ("col", "vc", "varchar(8)"), ("const", "varchar(8)", "a/b")),
    "hr_ge_null": (">=", _HR, ("const", "int", None)),
    "hr_null_and_ds_a": ("and", ("=", _HR, ("const", "int", None)), ("=", _DS, _s("a"))),
    "ts_is_2024_03_01_half_past": ("=", _TS, ("const", "timestamp", dt.datetime(2024, 3, 1, 0, 0, 0, 500000))),
    "ts_ge_1969_12_31_last_second": (">=", _TS, ("const", "timestamp", dt.datetime(1969, 12, 31, 23, 59, 59, 123456))),
}


if __name__ == "__main__":
    import json
    import os

    os.environ.setdefault("TZ", "UTC")
    from pyspark.java_gateway import launch_gateway

    _gateway = launch_gateway()
    try:
        _hive = HiveExprs(_gateway.jvm)
        print(json.dumps({name: _hive.serialize(expr).hex() for name, expr in GOLDENS.items()}, indent=1))
    finally:
        _gateway.shutdown()
