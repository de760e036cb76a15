"""Column statistics aggregated over partitions, as Hive 2.3's `get_aggr_stats_for` computes them for
its planner (MetaStoreDirectSql.columnStatisticsObjForPartitions with Hive's defaults: no density
function, `hive.metastore.stats.ndv.tuner` 0). Pure: the caller reads the partitions' statistics.

For each asked column, over the asked partitions that have its statistics:
- When every asked partition has statistics of every asked column, or this column's statistics are in
  all of them or in fewer than two: counts of nulls, trues and falses add up; the low value is the
  smallest, the high value, the distinct count and the lengths the largest.
- Otherwise the missing partitions' share is extrapolated linearly, by the partitions' positions in the
  request: a count adds up and is scaled to all asked partitions (integer division, as Hive's: nulls
  over found partitions times asked ones); a low or high value, distinct count or length is drawn
  through the smallest and the largest value found, out to the first or last asked position. A value
  some found partition lacks (an unset low value) leaves the result without it. Ties between equal
  values go to the earlier asked partition (Hive leaves them to its database's sort). An extrapolated
  decimal without a high value has no low value either (Hive's StatObjectConverter reads the low value
  only beside a high one; with a low value and no high one, Hive fails, and the high value is answered
  here). A long's line is computed exactly and clamped to a long, where Hive's Java longs overflow.
- A distinct count of a long, date or timestamp column is at most its range (high - low + 1).
- Extrapolated decimals are computed in doubles and written back as Java prints a double (Hive turns
  them into strings with `String.valueOf`); found ones keep their own scale (Hive on PostgreSQL; on
  Derby Hive drops their fraction). Distinct-count sketches and histograms are not aggregated.

`parts_found` counts the asked partitions that have statistics of every asked column. Asked names
count as often as they are asked (Hive's list sizes), a partition's position is its last one.
Statistics of one column under different types (written before and after a retype) aggregate apart.
"""

from __future__ import annotations

import decimal
import math
from typing import Any, Callable, Mapping, Sequence

from hive.column_stats import DECIMAL, FIELDS, FLOAT, ColumnStats, decimal_value

_SUMMED = frozenset({"numNulls", "numTrues", "numFalses"})
_SKETCHES = frozenset({"bitVectors", "histogram"})
_RANGED_KINDS = frozenset({"long", "date", "timestamp"})  # whose distinct count is bounded by the range
_I64_MIN, _I64_MAX = -(2**63), 2**63 - 1


def _decimal_out(value: decimal.Decimal) -> dict[str, Any]:
    """Hive's Decimal: the unscaled value in the fewest big-endian two's complement bytes, and the scale."""
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    unscaled = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
    size = ((unscaled if unscaled >= 0 else ~unscaled).bit_length() + 8) // 8
    return {"unscaled": unscaled.to_bytes(size, "big", signed=True), "scale": -exponent}


def java_double_decimal(x: float) -> decimal.Decimal:
    """`new BigDecimal(String.valueOf(x))`: Java prints the shortest digits that read back as `x`,
    plain with at least one fractional digit from 10^-3 to 10^7, else as d.dddE±n. `x` is finite."""
    if x == 0:
        return decimal.Decimal("0.0")
    shortest = decimal.Decimal(repr(x)).normalize()
    sign, digits, exponent = shortest.as_tuple()
    assert isinstance(exponent, int)
    if 1e-3 <= abs(x) < 1e7:
        scale = max(1, -exponent)
    else:
        first_digit_exponent = len(digits) - 1 + exponent
        scale = max(1, len(digits) - 1) - first_digit_exponent
    if scale >= 0:
        return shortest.quantize(decimal.Decimal(1).scaleb(-scale))
    return decimal.Decimal((sign, digits + (0,) * (exponent + scale), -scale))  # d.dE+n: trailing digits kept


def _clamp(value: int) -> int:
    return min(max(value, _I64_MIN), _I64_MAX)


def _key(kind: str, name: str) -> Callable[[Any], Any] | None:
    return decimal_value if FIELDS[kind][name][0] == DECIMAL else None


def _plain(kind: str, found: Sequence[ColumnStats]) -> dict[str, Any]:
    """The found partitions' statistics combined (SQL's aggregates: an unset value is skipped)."""
    out: dict[str, Any] = {}
    for name in FIELDS[kind]:
        values = [s.data[name] for s in found if s.data.get(name) is not None]
        if name in _SKETCHES or not values:
            continue
        if name in _SUMMED:
            out[name] = sum(values)
            continue
        key = _key(kind, name)
        out[name] = (min if name == "lowValue" else max)(values, key=key)
        if key is not None:  # re-encoded as Hive reads it back: the fewest bytes, the same scale
            out[name] = _decimal_out(decimal_value(out[name]))
    return out


def _line(kind: str, name: str, low: tuple[Any, int], high: tuple[Any, int], last: int) -> Any:
    """Hive's LinearExtrapolatePartStatus: the line through the partitions holding the smallest value
    (`low`: value, position) and the largest (`high`), read at the far end the result stands for
    (the last position for a largest-type value, the first for a lowValue)."""
    (min_value, min_at), (max_value, max_at) = low, high
    if min_at == max_at:
        return min_value
    type_ = FIELDS[kind][name][0]
    if name == "lowValue":  # towards position 0 (or the last, when the smaller values lie at the end)
        steps, span = (max_at, max_at - min_at) if min_at < max_at else (last - max_at, min_at - max_at)
        from_value, sign = max_value, -1
    else:
        steps, span = (last - min_at, max_at - min_at) if min_at < max_at else (min_at, min_at - max_at)
        from_value, sign = min_value, 1
    if type_ == DECIMAL:
        lo, hi = float(decimal_value(min_value)), float(decimal_value(max_value))
        result = (hi if sign < 0 else lo) + sign * ((hi - lo) * float(steps) / float(span))
        # Hive's BigDecimal cannot read an infinity back: no result
        return _decimal_out(java_double_decimal(result)) if math.isfinite(result) else None
    if type_ == FLOAT:
        return from_value + sign * ((max_value - min_value) * float(steps) / float(span))
    # Java's long division truncates; every operand here is non-negative, so it is floor division
    return _clamp(from_value + sign * ((max_value - min_value) * steps // span))


def _extrapolated(kind: str, found: Sequence[tuple[int, ColumnStats]], asked: int, last: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in FIELDS[kind]:
        if name in _SKETCHES:
            continue
        values = [(s.data.get(name), at) for at, s in found]
        if name in _SUMMED:
            out[name] = _clamp(sum(v for v, _ in values if v is not None) // len(found) * asked)
            continue
        if any(v is None for v, _ in values):  # an unset value sorts last in Hive's query: no result
            continue
        key = _key(kind, name) or (lambda v: v)
        ordered = sorted(values, key=lambda pair: (key(pair[0]), pair[1]))
        result = _line(kind, name, ordered[0], ordered[-1], last)
        if result is not None:
            out[name] = result
    if kind == "decimal" and "highValue" not in out:
        # Hive's StatObjectConverter reads an extrapolated decimal's low value (text) only when its high value
        # is text too (a test of the wrong variable, in Hive 2.3 to 4): without a high value, no low value.
        out.pop("lowValue", None)
    return out


def _bounded_by_range(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    low, high = data.get("lowValue"), data.get("highValue")
    if kind in _RANGED_KINDS and low is not None and high is not None and "numDVs" in data:
        data["numDVs"] = min(data["numDVs"], _clamp(high - low + 1))
    return data


def aggregate(part_names: Sequence[str], columns: Sequence[str],
              stats: Mapping[str, Mapping[str, ColumnStats]]) -> tuple[list[ColumnStats], int]:
    """The asked columns' statistics over the asked partitions, and how many of those have all of them.
    `part_names` and `columns` as asked (stored forms, repeats kept); `stats`: partition -> column -> its
    statistics, for asked partitions and columns."""
    if not part_names or not columns:
        return [], 0
    wanted = set(columns)
    parts_found = sum(1 for name in dict.fromkeys(part_names)
                      if len(wanted & stats.get(name, {}).keys()) == len(columns))
    all_found = parts_found == len(part_names)
    position = {name: at for at, name in enumerate(part_names)}  # a repeated name: its last position
    last = len(position) - 1
    out: list[ColumnStats] = []
    for column in dict.fromkeys(columns):
        groups: dict[tuple[str, str], list[tuple[int, ColumnStats]]] = {}
        for name in position:
            found = stats.get(name, {}).get(column)
            if found is not None:
                groups.setdefault((found.column_type, found.kind), []).append((position[name], found))
        for (column_type, kind), found_at in groups.items():
            if all_found or len(found_at) == len(part_names) or len(found_at) < 2:
                data = _plain(kind, [s for _, s in found_at])
            else:
                data = _extrapolated(kind, found_at, len(part_names), last)
            out.append(ColumnStats(column, column_type, kind, _bounded_by_range(kind, data)))
    return out, parts_found
