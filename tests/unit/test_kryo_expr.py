"""Hive 2.3's Kryo partition expressions: decoding Hive's own bytes, refusing every other layout, and
PartitionPruner's rule over partition values (hive/kryo_expr.py, hive/partition_expr.py).

The bytes are Hive 2.3.10's SerializationUtilities output (tests/e2e/hive_expr_goldens.json, made by
tests/hive_exprs.py; tests/e2e/test_thrift_partition_expr_differential.py checks Hive still writes them)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from hive.kryo_expr import Call, Column, Constant, NotHive23Expression, decode_expression
from hive.names import DEFAULT_PARTITION_NAME as DEFAULT
from hive.partition_expr import NotServable, Pruned, partition_expression
from hive.schema import FieldSchema

GOLDENS = {name: bytes.fromhex(text) for name, text in
           json.loads((Path(__file__).parents[1] / "e2e" / "hive_expr_goldens.json").read_text()).items()}
KEYS = (FieldSchema("ds", "string"), FieldSchema("hr", "int"))
DS, HR = Column("ds", "string"), Column("hr", "int")


def utc_day(millis: int) -> dt.date:
    return dt.datetime.fromtimestamp(millis / 1000, dt.timezone.utc).date()


def utc_time(seconds: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(seconds, dt.timezone.utc).replace(tzinfo=None)


def decode(name: str) -> object:
    return decode_expression(GOLDENS[name], day_of=utc_day, time_of=utc_time)


def test_hive_bytes_decode_to_their_expressions() -> None:
    s = lambda v: Constant("string", v)  # noqa: E731
    assert decode("ds_is_a") == Call("=", (DS, s("a")))
    assert decode("ds_a_and_hr_2") == Call("and", (Call("=", (DS, s("a"))), Call("=", (HR, Constant("int", 2)))))
    assert decode("ds_not_a") == Call("<>", (DS, s("a")))
    assert decode("hr_gt_1") == Call(">", (HR, Constant("int", 1)))
    assert decode("day_le_2024_01_02") == Call("<=", (Column("day", "date"), Constant("date", dt.date(2024, 1, 2))))
    assert decode("ds_in_a_b") == Call("in", (DS, s("a"), s("b")))
    assert decode("ds_not_between_a_b") == Call("between", (Constant("boolean", True), DS, s("a"), s("b")))
    assert decode("ds_null_or_not_hr_not_null") == Call("or", (Call("isnull", (DS,)),
                                                               Call("not", (Call("isnotnull", (HR,)),))))
    assert decode("ds_is_unicode") == Call("=", (DS, s("é€😀 x/y=z%")))
    # java.lang.Short, Byte and Long constants: what Hive's DROP PARTITION converts a smallint, tinyint or bigint to
    assert decode("small_lt_minus_300") == Call("<", (Column("small", "smallint"), Constant("smallint", -300)))
    assert decode("tiny_is_minus_3") == Call("=", (Column("tiny", "tinyint"), Constant("tinyint", -3)))
    assert decode("big_ge_long_min") == Call(">=", (Column("big", "bigint"), Constant("bigint", -2**63)))
    assert decode("vc_is_a_b") == Call("=", (Column("vc", "varchar"), Constant("varchar", "a/b")))  # a HiveVarchar
    # a java.sql.Timestamp: its milliseconds' whole seconds (floor), then its nanoseconds
    ts = Column("ts", "timestamp")
    assert decode("ts_is_2024_03_01_half_past") == \
        Call("=", (ts, Constant("timestamp", dt.datetime(2024, 3, 1, 0, 0, 0, 500000))))
    assert decode("ts_ge_1969_12_31_last_second") == \
        Call(">=", (ts, Constant("timestamp", dt.datetime(1969, 12, 31, 23, 59, 59, 123456))))


@pytest.mark.parametrize("name", sorted(GOLDENS))
def test_every_cut_of_hive_bytes_is_refused_never_misread(name: str) -> None:
    data = GOLDENS[name]
    for end in range(len(data)):
        with pytest.raises(NotHive23Expression):
            decode_expression(data[:end], day_of=utc_day)
    with pytest.raises(NotHive23Expression, match="1 byte.s. after the expression"):
        decode_expression(data + b"\x00", day_of=utc_day)


def test_other_classes_and_initialized_functions_are_refused() -> None:
    data = GOLDENS["ds_is_a"]
    plus = data.replace(b"GenericUDFOPEqua\xec", b"GenericUDFOPPlu\xf3")
    with pytest.raises(NotHive23Expression, match="class org.apache.hadoop.hive.ql.udf.generic.GenericUDFOPPlus"):
        decode_expression(plus)
    # A Hive 3 or 4 client's layout: another field order or class is refused, here a set compareOI
    initialized = data.replace(b"Equa\xec\x01\x00\x00", b"Equa\xec\x01\x01\x00")
    with pytest.raises(NotHive23Expression):
        decode_expression(initialized)
    with pytest.raises(NotHive23Expression, match="byte 0"):
        decode_expression(b"")
    with pytest.raises(NotHive23Expression):
        decode_expression(b"\x01kryo")


def prune(name: str, partitions: list[tuple[str, ...]], keys: tuple[FieldSchema, ...] = KEYS) -> Pruned:
    return partition_expression(decode(name), keys).prune(partitions)  # type: ignore[arg-type]


PARTS: list[tuple[str, ...]] = [("a", "1"), ("a", "2"), ("b", "2"), (DEFAULT, "2"), ("a", DEFAULT), ("a", "x")]


def test_pruning_follows_hives_partition_pruner() -> None:
    # (ds = 'a') and (hr = 2): a=x's int key is NULL (unknown: selected, hasUnknownPartitions); a NULL
    # from a default partition leaves that partition out
    assert prune("ds_a_and_hr_2", PARTS) == Pruned((1, 5), True)
    assert prune("ds_is_a", PARTS) == Pruned((0, 1, 4, 5), False)
    assert prune("ds_not_a", PARTS) == Pruned((2,), False)  # the default partition is NULL, not text
    assert prune("ds_is_default", PARTS) == Pruned((3,), False)  # Hive's replaceEqualDefaultPartition
    assert prune("hr_gt_1", PARTS) == Pruned((1, 2, 3, 5), True)
    assert prune("ds_in_a_b", PARTS) == Pruned((0, 1, 2, 4, 5), False)
    assert prune("ds_not_between_a_b", [("0",), ("a",), ("ab",), ("b",), ("c",), (DEFAULT,)],
                 keys=KEYS[:1]) == Pruned((0, 4), False)
    assert prune("ds_null_or_not_hr_not_null", PARTS) == Pruned((3, 4, 5), False)
    assert prune("vc_is_a_b", [("a",), ("a/b",), (DEFAULT,)], keys=(FieldSchema("vc", "varchar(8)"),)) == \
        Pruned((1,), False)
    small = (FieldSchema("small", "smallint"),)
    assert prune("small_lt_minus_300", [("-301",), ("-300",), ("5",), (DEFAULT,)], keys=small) == Pruned((0,), False)
    days = (FieldSchema("day", "date"),)
    assert prune("day_le_2024_01_02", [("2024-01-01",), ("2024-01-02",), ("2024-01-03",), (DEFAULT,)],
                 keys=days) == Pruned((0, 1), False)
    # a timestamp key (refused before: Hive 2.3's DROP PARTITION of one failed); a value with more than six
    # digits of the second is not decided here (unknown)
    stamps = (FieldSchema("ts", "timestamp"),)
    assert prune("ts_is_2024_03_01_half_past", [("2024-01-01 10:00:00.0",), ("2024-03-01 00:00:00.5",),
                                                ("2024-03-01 00:00:00.500",), (DEFAULT,)], keys=stamps) == \
        Pruned((1, 2), False)
    assert prune("ts_ge_1969_12_31_last_second", [("1969-12-31 23:59:59.1",), ("1969-12-31 23:59:59.123456",),
                                                  ("1970-01-01 00:00:00.0",), ("2024-01-01 10:00:00.123456789",)],
                 keys=stamps) == Pruned((1, 2, 3), True)
    # a comparison with a null constant is unknown for every partition (a default partition's left out), and
    # AND with a false operand false
    assert decode("hr_ge_null") == Call(">=", (HR, Constant("int", None)))
    assert prune("hr_ge_null", PARTS) == Pruned((0, 1, 2, 5), True)
    assert prune("hr_null_and_ds_a", PARTS) == Pruned((0, 1, 5), True)
    assert prune("hr_null_and_ds_a", [("b", "2"), (DEFAULT, "1")]) == Pruned((), False)


def test_expressions_not_decided_here_exactly_are_not_servable() -> None:
    with pytest.raises(NotServable, match="column payload is not a partition key"):
        prune("payload_is_a", PARTS)
    with pytest.raises(NotServable, match="a constant of type string compared with a key of kind int"):
        prune("hr_is_string_2", PARTS)
    with pytest.raises(NotServable, match="column hr of type int where key hr has type string"):
        prune("ds_a_and_hr_2", PARTS, keys=(FieldSchema("ds", "string"), FieldSchema("hr", "string")))
