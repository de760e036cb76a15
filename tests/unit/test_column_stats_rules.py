"""The statistics kinds each Hive column type takes, and the field checks of hive/column_stats.py."""

from __future__ import annotations

import pytest

from hive.column_stats import ColumnStats, check, kinds_for_type, merge, overlay
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


def test_merge_adds_counts_widens_the_range_and_keeps_the_larger_distinct_count() -> None:
    old = ColumnStats("s", "string", "string", {"maxColLen": 9, "avgColLen": 2.0, "numNulls": 1, "numDVs": 5,
                                                "bitVectors": b"x"})
    new = ColumnStats("s", "string", "string", {"maxColLen": 4, "avgColLen": 3.5, "numNulls": 2, "numDVs": 4})
    assert merge(old, new).data == {"maxColLen": 9, "avgColLen": 3.5, "numNulls": 3, "numDVs": 5}
    flags = merge(ColumnStats("b", "boolean", "boolean", {"numTrues": 1, "numFalses": 2, "numNulls": 3}),
                  ColumnStats("b", "boolean", "boolean", {"numTrues": 10, "numFalses": 20, "numNulls": 30}))
    assert flags.data == {"numTrues": 11, "numFalses": 22, "numNulls": 33}


def test_merge_compares_decimals_by_value_and_keeps_a_range_only_one_side_has() -> None:
    def dec(unscaled: int, scale: int) -> dict[str, object]:
        return {"unscaled": unscaled.to_bytes(4, "big", signed=True), "scale": scale}

    old = ColumnStats("d", "decimal(9,2)", "decimal", {"numNulls": 0, "numDVs": 1, "lowValue": dec(-150, 2),
                                                      "highValue": dec(5, 0)})
    new = ColumnStats("d", "decimal(9,2)", "decimal", {"numNulls": 0, "numDVs": 1, "lowValue": dec(-2, 0),
                                                      "highValue": dec(499, 2)})
    assert merge(old, new).data["lowValue"] == dec(-2, 0) and merge(old, new).data["highValue"] == dec(5, 0)
    unranged = ColumnStats("n", "bigint", "long", {"numNulls": 4, "numDVs": 0})  # all null: no range
    ranged = ColumnStats("n", "bigint", "long", {"numNulls": 0, "numDVs": 2, "lowValue": 3, "highValue": 7})
    assert merge(unranged, ranged).data == {"numNulls": 4, "numDVs": 2, "lowValue": 3, "highValue": 7}
    retyped = ColumnStats("n", "double", "double", {"numNulls": 0, "numDVs": 1})
    assert merge(ranged, retyped) == retyped


def test_a_write_over_old_statistics_keeps_the_values_it_leaves_unset() -> None:
    """Hive's setFieldsIntoOldStats: an unset low or high value (or sketch) keeps the old one; what is sent
    replaces it; of another kind (a retyped column), the new statistics replace the old ones whole."""
    old = ColumnStats("n", "bigint", "long", {"numNulls": 1, "numDVs": 5, "lowValue": -3, "highValue": 9,
                                              "bitVectors": b"x"}, 100)
    new = ColumnStats("n", "bigint", "long", {"numNulls": 2, "numDVs": 4, "lowValue": None, "highValue": 12}, 200)
    written = overlay(old, new)
    assert written.data == {"numNulls": 2, "numDVs": 4, "lowValue": -3, "highValue": 12, "bitVectors": b"x"}
    assert written.last_analyzed == 200
    retyped = ColumnStats("n", "double", "double", {"numNulls": 0, "numDVs": 1})
    assert overlay(old, retyped) == retyped
