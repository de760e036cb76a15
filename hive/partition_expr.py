"""Hive's partition expressions (hive/kryo_expr.py) over a table's partitions, as Hive's metastore prunes.

Design note. An expression is turned into the partition filter's AST (hive/partition_filter.py), so a
value is typed, compared and found NULL by the one set of rules the filters use: a value of the key's
type compared by that type, the default partition `__HIVE_DEFAULT_PARTITION__` (and text the key's
type does not accept) NULL, AND, OR and NOT Kleene's. What is Hive's own is `PartitionPruner.
prunePartitionNames` (the rule of Hive 2.3's PartitionExpressionForMetastore, and of Hive 3's and 4's
when a filter cannot be pushed down to SQL): a partition the expression finds true is selected, one it
finds false is not, and one it cannot decide (unknown) is selected and makes the answer's
`hasUnknownPartitions` true, unless one of its values is the default partition, which is then left out.
Before that, Hive's `replaceEqualDefaultPartition` reads `key = '__HIVE_DEFAULT_PARTITION__'` as
`key IS NULL` and `<>` as IS NOT NULL, at any depth.

Only what can be decided here exactly is taken: a comparison, IN or BETWEEN of a partition key with
non-null constants of the key's kind, a comparison of a key with a null constant (unknown for every
partition: Hive's comparison functions answer NULL when an operand is; Hive 2.3's DROP PARTITION sends one
for a value its key's type does not accept, `hr='1.5'` of an int key), IS [NOT] NULL of a key, and AND, OR,
NOT of those. Anything else (a column that is not a key, a constant of another type, a null constant in IN
or BETWEEN, an unknown type) is `NotServable`: the caller answers so that the client evaluates the
expression itself.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from decimal import Decimal
from typing import Sequence

from hive.errors import InvalidArgument
from hive.kryo_expr import Call, Column, Constant, Expr
from hive.names import DEFAULT_PARTITION_NAME
from hive.partition_filter import (And, Between, Comparison, Filter, InList, IsNull, Node, Not, Or, Unknown,
                                   Value, filter_of, key_kind)
from hive.schema import FieldSchema

_FLIPPED = {"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_PYTHON_TYPES: dict[str, type] = {"int": int, "decimal": Decimal, "date": _dt.date, "timestamp": _dt.datetime,
                                  "boolean": bool, "string": str}


class NotServable(InvalidArgument):
    """An expression this gateway does not evaluate (see the module's note), with the reason."""


@dataclass(frozen=True, slots=True)
class Pruned:
    """Which partitions an expression selects (indexes into the values given, in order) and whether
    any of them is selected only because the expression could not decide it."""

    selected: tuple[int, ...]
    has_unknown: bool


@dataclass(frozen=True, slots=True)
class PartitionExpression:
    filter: Filter

    def prune(self, partitions: Sequence[Sequence[str]]) -> Pruned:
        """PartitionPruner.prunePartitionNames over the partitions' values (in key order)."""
        selected, unknown = [], False
        for i, values in enumerate(partitions):
            verdict = self.filter.evaluate(values)
            if verdict is False:
                continue
            if verdict is None:
                if DEFAULT_PARTITION_NAME in values:  # Hive: "skipping default/bad partition"
                    continue
                unknown = True
            selected.append(i)
        return Pruned(tuple(selected), unknown)


def prune(expr: Expr, keys: Sequence[FieldSchema], partitions: Sequence[Sequence[str]]) -> Pruned:
    """The partitions (their values, in key order) a decoded expression selects. A table without
    partitions has none to select, whatever the expression holds, as Hive's metastore answers it then
    (it evaluates the expression over each partition name, and there is none); otherwise NotServable
    for an expression this module does not evaluate."""
    if not partitions:
        return Pruned((), False)
    return partition_expression(expr, keys).prune(partitions)


def partition_expression(expr: Expr, keys: Sequence[FieldSchema]) -> PartitionExpression:
    """A decoded expression (hive/kryo_expr.py decode_expression) over the table's partition `keys`.
    Raises NotServable for one this module does not evaluate."""
    root = _Converter(keys).node(expr)
    return PartitionExpression(filter_of(root, keys, text="a Hive partition expression"))


class _Converter:
    def __init__(self, keys: Sequence[FieldSchema]) -> None:
        self._keys = list(keys)

    def node(self, expr: Expr) -> Node:
        if not isinstance(expr, Call):
            raise NotServable(f"a {type(expr).__name__.lower()} where a condition belongs")
        fn, args = expr.function, expr.args
        if fn in ("and", "or"):
            if len(args) < 2:
                raise NotServable(f"{fn.upper()} of {len(args)} operand(s)")
            operands = tuple(self.node(a) for a in args)
            return And(operands) if fn == "and" else Or(operands)
        if fn == "not":
            return Not(self.node(self._only(args, fn)))
        if fn in ("isnull", "isnotnull"):
            key, _ = self._key(self._only(args, fn))
            return IsNull(key) if fn == "isnull" else Not(IsNull(key))
        if fn == "in":
            if len(args) < 2:
                raise NotServable("IN without values")
            key, kind = self._key(args[0])
            return InList(key, tuple(self._value(a, kind) for a in args[1:]))
        if fn == "between":
            if len(args) != 4 or not isinstance(args[0], Constant) or not isinstance(args[0].value, bool):
                raise NotServable("BETWEEN that is not (invert, key, low, high)")
            key, kind = self._key(args[1])
            node: Node = Between(key, self._value(args[2], kind), self._value(args[3], kind))
            return Not(node) if args[0].value else node
        return self._comparison(fn, args)

    def _comparison(self, op: str, args: tuple[Expr, ...]) -> Node:
        if len(args) != 2:
            raise NotServable(f"a comparison {op} of {len(args)} operand(s)")
        left, right = args
        if isinstance(left, Constant) and isinstance(right, Column):
            left, right, op = right, left, _FLIPPED[op]
        if not (isinstance(left, Column) and isinstance(right, Constant)):
            raise NotServable(f"a comparison {op} that is not of a partition key with a constant")
        key, kind = self._key(left)
        if right.value is None:  # GenericUDFBaseCompare: NULL when an operand is, of any type
            return Unknown()
        if op in ("=", "<>") and right.value == DEFAULT_PARTITION_NAME:  # replaceEqualDefaultPartition
            return IsNull(key) if op == "=" else Not(IsNull(key))
        return Comparison(key, op, self._value(right, kind))

    @staticmethod
    def _only(args: tuple[Expr, ...], fn: str) -> Expr:
        if len(args) != 1:
            raise NotServable(f"{fn.upper()} of {len(args)} operand(s)")
        return args[0]

    def _key(self, expr: Expr) -> tuple[int, str]:
        """The index and kind of the partition key a column names, checked against its type."""
        if not isinstance(expr, Column):
            raise NotServable(f"a {type(expr).__name__.lower()} where a partition key belongs")
        name = expr.name.lower()
        for i, key in enumerate(self._keys):
            if key.name.lower() == name:
                kind = key_kind(key.type)
                if kind is None:
                    raise NotServable(f"partition key {key.name} has type {key.type}, which this gateway "
                                      "does not evaluate expressions over")
                if key_kind(expr.type_name) != kind:
                    raise NotServable(f"column {expr.name} of type {expr.type_name} where key {key.name} "
                                      f"has type {key.type}")
                return i, kind
        raise NotServable(f"column {expr.name} is not a partition key (the keys are "
                          f"{', '.join(k.name for k in self._keys) or 'none'})")

    @staticmethod
    def _value(expr: Expr, kind: str) -> Value:
        if not isinstance(expr, Constant):
            raise NotServable(f"a {type(expr).__name__.lower()} where a constant belongs")
        if expr.value is None:
            raise NotServable("a null constant")
        if key_kind(expr.type_name) != kind:
            raise NotServable(f"a constant of type {expr.type_name} compared with a key of kind {kind}")
        value = expr.value
        if (isinstance(value, bool) and kind != "boolean" or isinstance(value, _dt.datetime) and kind != "timestamp"
                or not isinstance(value, _PYTHON_TYPES[kind])):
            raise NotServable(f"a constant of type {expr.type_name} holding {type(value).__name__}")
        return value
