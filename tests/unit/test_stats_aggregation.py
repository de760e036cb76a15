"""Column statistics aggregated over partitions (hive/stats_aggregation.py). The expected values are
Hive Metastore 2.3.10's answers to the same statistics; tests/e2e/test_thrift_differential.py sends
them to both."""

from __future__ import annotations

from decimal import Decimal

import pytest

from hive.column_stats import ColumnStats
from hive.stats_aggregation import aggregate, java_double_decimal

P = [f"ds={i}" for i in range(1, 7)]


def _long(i: int) -> ColumnStats:
    return ColumnStats("id", "bigint", "long", {"lowValue": 10 * i, "highValue": 100 + 7 * i * i, "numNulls": i,
                                                "numDVs": 5 + 3 * i})


def _double(i: int) -> ColumnStats:
    return ColumnStats("amount", "double", "double", {"lowValue": 0.5 * i, "highValue": 10.25 + i * i,
                                                      "numNulls": 2 * i, "numDVs": 4 + i})


def _dec(value: str) -> dict[str, object]:
    d = Decimal(value)
    exponent = d.as_tuple().exponent
    assert isinstance(exponent, int)
    unscaled = int(d.scaleb(-exponent))
    return {"unscaled": unscaled.to_bytes((unscaled.bit_length() + 8) // 8, "big", signed=True), "scale": -exponent}


STATS = {P[i - 1]: {"id": _long(i), "amount": _double(i)} for i in (1, 2, 3)} | {P[3]: {"id": _long(4)}}


def _data(result: list[ColumnStats]) -> dict[str, dict[str, object]]:
    return {s.column: dict(s.data) for s in result}


def test_found_everywhere_counts_add_up_and_ends_widen() -> None:
    stats, found = aggregate(P[:3], ["id", "amount"], STATS)
    assert found == 3
    assert _data(stats) == {"id": {"lowValue": 10, "highValue": 163, "numNulls": 6, "numDVs": 14},
                            "amount": {"lowValue": 0.5, "highValue": 19.25, "numNulls": 12, "numDVs": 7}}


def test_missing_partitions_are_extrapolated_along_the_asked_order() -> None:
    stats, found = aggregate(P[:5], ["id", "amount"], STATS)
    assert found == 3
    assert _data(stats) == {"id": {"lowValue": 10, "highValue": 247, "numNulls": 10, "numDVs": 20},
                            "amount": {"lowValue": 0.5, "highValue": 27.25, "numNulls": 20, "numDVs": 9}}
    reordered, _ = aggregate([P[4], P[2], P[0], P[1], P[3]], ["id", "amount"], STATS)
    assert _data(reordered) == {"id": {"lowValue": -20, "highValue": 212, "numNulls": 10, "numDVs": 17},
                                "amount": {"lowValue": -1.5, "highValue": 27.25, "numNulls": 20, "numDVs": 9}}


def test_a_count_is_scaled_with_integer_division() -> None:
    stats, found = aggregate(P[:2] + ["ds=2099"], ["id", "amount"], STATS)
    assert found == 2
    assert _data(stats)["id"] == {"lowValue": 10, "highValue": 149, "numNulls": 3, "numDVs": 14}  # 3 // 2 * 3


def test_a_column_found_in_all_or_in_fewer_than_two_is_not_extrapolated() -> None:
    assert _data(aggregate([P[3], P[4]], ["id"], STATS)[0]) == {
        "id": {"lowValue": 40, "highValue": 212, "numNulls": 4, "numDVs": 17}}
    stats, found = aggregate(P[:2], ["id", "nope"], STATS)
    assert found == 0 and _data(stats) == {"id": {"lowValue": 10, "highValue": 128, "numNulls": 3, "numDVs": 11}}


def test_repeated_names_count_as_asked_and_take_their_last_position() -> None:
    stats, found = aggregate([P[0], P[0], P[1]], ["id", "id"], STATS)
    assert found == 0
    assert [s.column for s in stats] == ["id"]
    assert _data(stats)["id"] == {"lowValue": 0, "highValue": 107, "numNulls": 3, "numDVs": 8}


@pytest.mark.parametrize("parts, columns", [([], ["id"]), (P[:2], []), (P[4:], ["id"])])
def test_nothing_to_aggregate(parts: list[str], columns: list[str]) -> None:
    assert aggregate(parts, columns, STATS) == ([], 0)


def test_distinct_counts_of_longs_and_dates_are_bounded_by_their_range() -> None:
    narrow = {P[i - 1]: {"small": ColumnStats("small", "int", "long", {"lowValue": 1, "highValue": 3, "numNulls": 0,
                                                                       "numDVs": 3 + i}),
                         "day": ColumnStats("day", "date", "date", {"lowValue": 18000, "highValue": 18002,
                                                                    "numNulls": 0, "numDVs": 70 + i}),
                         "amount": ColumnStats("amount", "double", "double", {"lowValue": 1.0, "highValue": 2.0,
                                                                              "numNulls": 0, "numDVs": 50 + i})}
              for i in (1, 2, 3)}
    for parts in (P[:3], P[:4]):
        counts = {s.column: s.data["numDVs"] for s in aggregate(parts, ["small", "day", "amount"], narrow)[0]}
        assert counts["small"] == 3 and counts["day"] == 3 and counts["amount"] > 3


def test_an_unset_value_is_skipped_when_found_everywhere_and_leaves_an_extrapolation_without_it() -> None:
    stats = {P[i - 1]: {"id": ColumnStats("id", "bigint", "long", {
        "highValue": 10 * i, "numNulls": 0, "numDVs": 3, **({} if i == 2 else {"lowValue": 5})})} for i in (1, 2, 3)}
    assert _data(aggregate(P[:3], ["id"], stats)[0])["id"] == {"lowValue": 5, "highValue": 30, "numNulls": 0,
                                                                "numDVs": 3}
    assert _data(aggregate(P[:4], ["id"], stats)[0])["id"] == {"highValue": 40, "numNulls": 0, "numDVs": 3}


def test_decimals_keep_their_scale_when_found_and_read_back_from_doubles_when_extrapolated() -> None:
    stats = {P[i - 1]: {"price": ColumnStats("price", "decimal(10,2)", "decimal", {
        "lowValue": _dec(f"{i}.25"), "highValue": _dec(f"{100 + i * i}.50"), "numNulls": 0, "numDVs": 30 + i})}
        for i in (1, 2, 3)}
    found = _data(aggregate(P[:3], ["price"], stats)[0])["price"]
    assert (found["lowValue"], found["highValue"]) == (_dec("1.25"), _dec("109.50"))
    extrapolated = _data(aggregate([P[4], P[2], P[0], P[1], P[3]], ["price"], stats)[0])["price"]
    assert (extrapolated["lowValue"], extrapolated["highValue"], extrapolated["numDVs"]) == (
        _dec("-2.75"), _dec("117.5"), 35)


def test_an_extrapolated_decimal_without_a_high_value_has_no_low_value_either() -> None:
    """Hive reads the extrapolated low value only when the high value is there; the other way round it fails
    (a NullPointerException, answered as MetaException), where the gateway answers the high value alone."""
    def stats(unset: str) -> dict[str, dict[str, ColumnStats]]:
        return {P[i - 1]: {"price": ColumnStats("price", "decimal(10,2)", "decimal", {
            "lowValue": _dec(f"{i}.25"), "highValue": _dec(f"{100 + i * i}.50"), "numNulls": 0, "numDVs": 30 + i,
        } | ({unset: None} if i == 2 else {}))} for i in (1, 2, 3)}
    without_high = _data(aggregate(P[:4], ["price"], stats("highValue"))[0])["price"]
    assert "lowValue" not in without_high and "highValue" not in without_high
    without_low = _data(aggregate(P[:4], ["price"], stats("lowValue"))[0])["price"]
    assert "lowValue" not in without_low and without_low["highValue"] == _dec("113.5")
    found_everywhere = _data(aggregate(P[:3], ["price"], stats("highValue"))[0])["price"]
    assert found_everywhere["lowValue"] == _dec("1.25") and found_everywhere["highValue"] == _dec("109.50")


@pytest.mark.parametrize("x, printed", [
    (117.5, "117.5"), (1.0, "1.0"), (100.0, "100.0"), (-2.75, "-2.75"), (0.0, "0.0"), (0.001, "0.001"),
    (1e7, "1.0E7"), (12345678.0, "1.2345678E7"), (1.5e20, "1.5E20"), (1.5e-5, "1.5E-5"), (2e-4, "2.0E-4"),
])
def test_java_prints_a_double_plain_from_a_thousandth_to_ten_million_else_in_e_notation(x: float, printed: str) -> None:
    # Java's Double.toString, then new BigDecimal(it): the same unscaled value and scale as Decimal(it)
    # (each `printed` is what Java 17 printed for `x`).
    expected = Decimal(printed)
    got = java_double_decimal(x)
    assert got == expected and got.as_tuple() == expected.as_tuple()
