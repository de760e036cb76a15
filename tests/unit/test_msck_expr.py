"""hive/msck_expr.py: the text Hive's Msck.makePartExpr writes for the partitions MSCK drops, read as
MsckPartitionExpressionProxy reads it: exactly the partitions it names."""

from __future__ import annotations

import re

import pytest

from hive.msck_expr import NotMsckExpression, read_msck_expression
from hive.names import escape_path_name
from hive.schema import FieldSchema

KEYS = [FieldSchema("ds", "string", ""), FieldSchema("hr", "int", "")]
PARTITIONS = [["2024-01-01", "1"], ["2024-01-01", "2"], ["a/b 'c'=d", "01"], ["2024-01-02", "1"]]


def make_part_expr(*specs: dict[str, str]) -> bytes:
    """Hive's Msck.getPartitionExpr of these partitions (makePartExpr of each, joined by OR)."""
    return " OR ".join("(" + " AND ".join(f"{escape_path_name(k)}='{escape_path_name(v)}'" for k, v in spec.items())
                       + ")" for spec in specs).encode()


def test_it_selects_exactly_the_partitions_it_names() -> None:
    expr = read_msck_expression(make_part_expr({"ds": "2024-01-01", "hr": "2"}, {"ds": "a/b 'c'=d", "hr": "01"},
                                               {"ds": "2030-01-01", "hr": "1"}))
    pruned = expr.prune(KEYS, PARTITIONS)
    assert pruned.selected == (1, 2)  # escaped values read back; a name of no partition selects none
    assert not pruned.has_unknown  # nothing is undecided
    # Names, not values compared by type: hr='1' is not hr=01.
    assert read_msck_expression(make_part_expr({"ds": "a/b 'c'=d", "hr": "1"})).prune(KEYS, PARTITIONS).selected == ()


def test_one_term_and_no_partitions() -> None:
    expr = read_msck_expression(make_part_expr({"ds": "2024-01-02", "hr": "1"}))
    assert expr.prune(KEYS, PARTITIONS).selected == (3,)
    assert expr.prune(KEYS, []).selected == ()


@pytest.mark.parametrize(("data", "says"), [
    (b"\x01\x00org.apache.hadoop.hive.ql.plan.ExprNodeGenericFuncDesc", "is not one of MSCK's (k='v' AND ...) terms"),
    (b"\xff\xfe", "not UTF-8 text"),
    (b"ds='1'", "is not one of MSCK's (k='v' AND ...) terms"),  # no parentheses
    (b"(ds=1)", "is not one of MSCK's k='v' comparisons"),  # the value not quoted
    (b"(ds='1' AND hr)", "is not one of MSCK's k='v' comparisons"),
    (b"(ds='1') OR ", "is not one of MSCK's (k='v' AND ...) terms"),
    (b"", "is not one of MSCK's (k='v' AND ...) terms"),
])
def test_other_bytes_are_refused_with_the_reason(data: bytes, says: str) -> None:
    with pytest.raises(NotMsckExpression, match=re.escape(says)):
        read_msck_expression(data)
