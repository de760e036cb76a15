"""The statistics kinds each Hive column type takes, and the field checks of store/column_stats.py."""

from __future__ import annotations

import pytest

from store.column_stats import ColumnStats, check, kinds_for_type
from store.errors import InvalidArgument


@pytest.mark.parametrize(("column_type", "kinds"), [
    ("boolean", ("boolean",)), ("TINYINT", ("long",)), ("int", ("long",)), ("bigint", ("long",)),
    ("float", ("double",)), ("double", ("double",)), ("string", ("string",)), ("varchar(10)", ("string",)),
    ("char(3)", ("string",)), ("binary", ("binary",)), ("decimal(10,2)", ("decimal",)), ("decimal", ("decimal",)),
    ("date", ("date",)), ("timestamp", ("long", "timestamp")), ("array<int>", ()), ("map<string,int>", ()),
    ("struct<a:int>", ()),
])
def test_kinds_for_type(column_type: str, kinds: tuple[str, ...]) -> None:
    assert kinds_for_type(column_type) == kinds


def test_a_fitting_kind_with_its_required_fields_passes() -> None:
    check(ColumnStats("id", "bigint", "long", {"numNulls": 0, "numDVs": 3, "lowValue": -(2**63)}), "bigint")
    check(ColumnStats("d", "decimal(4,1)", "decimal",
                      {"numNulls": 0, "numDVs": 1, "lowValue": {"unscaled": b"\x01", "scale": 1}}), "decimal(4,1)")
    check(ColumnStats("x", "double", "double", {"numNulls": 0, "numDVs": 0, "highValue": float("nan")}), "double")


@pytest.mark.parametrize(("stats", "column_type", "message"), [
    (ColumnStats("id", "bigint", "double", {"numNulls": 0, "numDVs": 1}), "bigint", "must be long, not double"),
    (ColumnStats("t", "array<int>", "long", {"numNulls": 0, "numDVs": 1}), "array<int>", "keeps no statistics"),
    (ColumnStats("id", "bigint", "long", {"numDVs": 1}), "bigint", "need numNulls"),
    (ColumnStats("id", "bigint", "long", {"numNulls": 0, "numDVs": 1, "maxColLen": 3}), "bigint", "no field(s)"),
    (ColumnStats("id", "bigint", "long", {"numNulls": True, "numDVs": 1}), "bigint", "64-bit integer"),
    (ColumnStats("id", "bigint", "long", {"numNulls": 2**63, "numDVs": 1}), "bigint", "64-bit integer"),
    (ColumnStats("s", "string", "string", {"maxColLen": 1, "avgColLen": "1", "numNulls": 0, "numDVs": 1}),
     "string", "must be a number"),
    (ColumnStats("s", "string", "string", {"maxColLen": 1, "avgColLen": 1.0, "numNulls": 0, "numDVs": 1,
                                           "bitVectors": "text"}), "string", "must be bytes"),
    (ColumnStats("d", "decimal(4,1)", "decimal", {"numNulls": 0, "numDVs": 1,
                                                   "lowValue": {"unscaled": b"\x01", "scale": 99}}),
     "decimal(4,1)", "scale must be 0 to 38"),
])
def test_what_does_not_fit_is_refused_saying_why(stats: ColumnStats, column_type: str, message: str) -> None:
    with pytest.raises(InvalidArgument, match=message.replace("(", r"\(").replace(")", r"\)")):
        check(stats, column_type)
