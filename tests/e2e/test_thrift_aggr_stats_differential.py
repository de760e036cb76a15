"""get_aggr_stats_for over random partitions' column statistics, asked of the gateway's Thrift endpoint
and of the real Hive Metastore 2.3.10 (pyspark's jars, on PostgreSQL, its aggregate statistics cache off),
their answers compared whole.

test_thrift_differential.py checks chosen cases (every kind, the extrapolation each way, unset values,
repeats, missing names); this draws them. An example is a table of 2 to 7 partitions with a column of
every statistics kind, written on both servers alike: each partition holds statistics of a random
subset of the columns, its values random but distinct between partitions for every value that
extrapolation orders by (Hive orders them in its database and takes the first and the last row, so a
tie is decided by PostgreSQL's sort, which no rule reproduces), some low or high values unset, a long
column's values at times near the ends of a long. Then random requests: a subset of the partitions in
random order (a missing name or a repeated one at times) and of the columns (in another case at times,
a column without statistics at times). An answer is compared after sorting its columns (Hive's order is
its database's); a failure by its exception type. Then a `set_aggr_stats_for` of partitions or of the
table, with needMerge true, false or unset (what Hive's INSERT INTO sends; `_merge` says what is not merged
and why), and the statistics of every partition and of the table, and their COLUMN_STATS_ACCURATE marks,
read back from both. Differences the gateway makes on purpose are explained by `_explained`.

Skipped without Java, pyspark's jars or PostgreSQL's JDBC driver. `make test` runs EXAMPLES (6,
derandomized); the `soak` run AGGR_STATS_DIFFERENTIAL_SOAK_EXAMPLES (300).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
from dataclasses import dataclass, field
from typing import Any, AsyncIterator

import pytest
from hmsclient.genthrift.hive_metastore import ThriftHiveMetastore
from hmsclient.genthrift.hive_metastore import ttypes as ht
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from loadtest.hms import connect, hms_server, hms_unavailable_reason, postgres_unavailable_reason
from tests.conftest import PgCluster, running_gateway
from tests.e2e.test_thrift_differential import _decimal, _normal, _part, _table
from tests.e2e.test_thrift_stateful_differential import _difference

_REASON = hms_unavailable_reason() or postgres_unavailable_reason()
pytestmark = pytest.mark.skipif(_REASON is not None, reason=f"Hive Metastore reference: {_REASON}")

EXAMPLES = int(os.environ.get("AGGR_STATS_DIFFERENTIAL_EXAMPLES", "6"))
SOAK_EXAMPLES = int(os.environ.get("AGGR_STATS_DIFFERENTIAL_SOAK_EXAMPLES", "300"))
REQUESTS_PER_EXAMPLE = 8
DB = "aggr"
COLUMNS = (("l", "bigint"), ("i", "int"), ("d", "double"), ("s", "string"), ("b", "boolean"),
           ("m", "decimal(10,2)"), ("dt", "date"), ("bin", "binary"), ("note", "string"))
_I64 = 2**63 - 1


@dataclass
class Servers:
    hms: Any
    gateway: Any
    hms_warehouse: str
    gateway_warehouse: str
    tables: int = 0
    tally: dict[str, int] = field(default_factory=dict)


class Draw:
    """One example's choices, from one seed."""

    def __init__(self, rng: random.Random, parts: int) -> None:
        self.rng, self.parts = rng, parts

    def distinct(self, low: int, high: int) -> list[int]:
        """One value per partition, no two alike."""
        return self.rng.sample(range(low, high + 1), self.parts)

    def maybe_unset(self, value: Any) -> Any:
        return None if self.rng.random() < 0.08 else value


def _column_stats(draw: Draw) -> dict[str, list[ht.ColumnStatisticsData]]:
    """Each column's statistics for every partition (which partitions get them is drawn afterwards)."""
    rng, n, d = draw.rng, draw.parts, ht.ColumnStatisticsData
    nulls = [rng.randint(0, 50) for _ in range(n)]
    wide = rng.random() < 0.15  # long values near the ends of a long: the extrapolation's arithmetic overflows
    span = (_I64 // 4) if wide else 10**6
    l_low, l_high = draw.distinct(-span, 0), draw.distinct(0, span)
    i_low, i_high = draw.distinct(-1000, 0), draw.distinct(0, 1000)
    ndv = [draw.distinct(0, 10**6) for _ in range(6)]
    d_low = [x / 8 for x in draw.distinct(-10**7, 0)]
    d_high = [x / 3 for x in draw.distinct(0, 10**7)]
    m_low, m_high = draw.distinct(-10**9, 0), draw.distinct(0, 10**9)
    dt_low, dt_high = draw.distinct(0, 20000), draw.distinct(20000, 40000)
    s_max, s_avg = draw.distinct(0, 1000), [x / 7 for x in draw.distinct(0, 7000)]
    bin_max, bin_avg = draw.distinct(0, 1000), [x / 4 for x in draw.distinct(0, 4000)]
    u = draw.maybe_unset
    return {
        "l": [d(longStats=ht.LongColumnStatsData(u(l_low[k]), u(l_high[k]), nulls[k], ndv[0][k])) for k in range(n)],
        "i": [d(longStats=ht.LongColumnStatsData(u(i_low[k]), u(i_high[k]), nulls[k], ndv[1][k])) for k in range(n)],
        "d": [d(doubleStats=ht.DoubleColumnStatsData(u(d_low[k]), u(d_high[k]), nulls[k], ndv[2][k]))
              for k in range(n)],
        "s": [d(stringStats=ht.StringColumnStatsData(s_max[k], s_avg[k], nulls[k], ndv[3][k])) for k in range(n)],
        "b": [d(booleanStats=ht.BooleanColumnStatsData(rng.randint(0, 500), rng.randint(0, 500), nulls[k]))
              for k in range(n)],
        "m": [d(decimalStats=ht.DecimalColumnStatsData(u(_decimal(m_low[k], 2)), u(_decimal(m_high[k], 2)), nulls[k],
                                                       ndv[4][k])) for k in range(n)],
        "dt": [d(dateStats=ht.DateColumnStatsData(u(ht.Date(dt_low[k])), u(ht.Date(dt_high[k])), nulls[k],
                                                  ndv[5][k])) for k in range(n)],
        "bin": [d(binaryStats=ht.BinaryColumnStatsData(bin_max[k], bin_avg[k], nulls[k])) for k in range(n)],
    }


def _writes(draw: Draw, table: str, names: list[str]) -> list[tuple[str, tuple[Any, ...]]]:
    types = dict(COLUMNS)
    stats = _column_stats(draw)
    # How often a column is present decides which path Hive takes: in every partition, in all but some
    # (extrapolated), in one only.
    present = {column: draw.rng.choice([1.0, 0.7, 0.4]) for column in stats}
    calls: list[tuple[str, tuple[Any, ...]]] = [
        ("create_table", (_table(DB, table, columns=COLUMNS),)),
        *[("add_partition", (_part(DB, table, [name.split("=", 1)[1]], columns=COLUMNS),)) for name in names]]
    for k, name in enumerate(names):
        objs = [ht.ColumnStatisticsObj(column, types[column], values[k]) for column, values in stats.items()
                if draw.rng.random() < present[column]]
        if objs:
            desc = ht.ColumnStatisticsDesc(False, DB, table, name)
            calls.append(("update_partition_column_statistics", (ht.ColumnStatistics(desc, objs),)))
    if draw.rng.random() < 0.5:  # the table's own, which Hive's planner reads of an unpartitioned one
        objs = [ht.ColumnStatisticsObj(column, types[column], values[0]) for column, values in stats.items()
                if draw.rng.random() < 0.6]
        if objs:
            desc = ht.ColumnStatisticsDesc(True, DB, table, None)
            calls.append(("update_table_column_statistics", (ht.ColumnStatistics(desc, objs),)))
    return calls


def _unset_end(data: Any) -> bool:
    """Whether statistics (Thrift's, or as _normal makes them) leave a low or high value unset."""
    fields = data if isinstance(data, dict) else vars(data)
    member = next(v for k, v in fields.items() if k != "type" and v is not None)
    member = member if isinstance(member, dict) else vars(member)
    return "lowValue" in member and (member["lowValue"] is None or member["highValue"] is None)


def _merge(draw: Draw, table: str, names: list[str], before: dict[str, dict[str, Any]]) -> ht.SetPartitionsStatsRequest:
    """What Hive's INSERT INTO sends after it wrote: new statistics of some partitions' columns (or, at
    times, of the table's own: one ColumnStatistics, as Hive 2.3 wants), merged into the old ones
    (needMerge) or written over them. `before`: Hive's statistics, partition name ('' the table) -> column
    -> statistics.

    A merge names the same columns for every partition, as Hive's statistics task does (Hive 2.3 reads the
    old statistics of the columns the first partition's name only, and writes the others' over them). Not
    merged, where Hive 2.3 fails or answers wrongly: a date's statistics (it has no merger of them: an
    internal error; Hive 3 merges them as the gateway does), a decimal's (it orders two ends as Thrift
    structs, by their unscaled bytes, not by value), and a low or high value unset on either side (its
    mergers read an unset long or double as 0, and fail on an unset decimal; the gateway keeps the value
    that is set, as Hive 4 does)."""
    types, rng = dict(COLUMNS), draw.rng
    stats = _column_stats(draw)
    need_merge = rng.choice([True, False, None])
    table_level = rng.random() < 0.25
    targets = [""] if table_level else [names[k] for k in sorted(rng.sample(range(len(names)),
                                                                           rng.randint(1, len(names))))]
    columns = rng.sample(sorted(stats), rng.randint(1, len(stats)))
    if need_merge:
        columns = [c for c in columns if c not in ("dt", "m") and not any(
            _unset_end(stats[c][k]) or (c in before.get(t, {}) and _unset_end(before[t][c]))
            for k, t in enumerate(targets))]
    written = []
    for k, target in enumerate(targets):
        some = columns if need_merge else rng.sample(sorted(stats), rng.randint(1, len(stats)))
        if some:
            desc = ht.ColumnStatisticsDesc(table_level, DB, table, target or None)
            written.append(ht.ColumnStatistics(desc, [ht.ColumnStatisticsObj(c, types[c], stats[c][k])
                                                      for c in some]))
    return ht.SetPartitionsStatsRequest(written, need_merge)


def _statistics(servers: Servers, table: str, names: list[str]) -> tuple[Any, Any]:
    """Each side's statistics of the table and its partitions, partition name ('' the table) -> column ->
    statistics, and its table's and partitions' parameters (their COLUMN_STATS_ACCURATE marks)."""
    columns = [c for c, _ in COLUMNS]
    answers = []
    for client, warehouse in ((servers.gateway, servers.gateway_warehouse), (servers.hms, servers.hms_warehouse)):
        parts = _call(client, warehouse, "get_partitions_statistics_req",
                      (ht.PartitionsStatsRequest(DB, table, columns, names),))
        own = _call(client, warehouse, "get_table_statistics_req", (ht.TableStatsRequest(DB, table, columns),))
        stats = {name: {c["colName"]: c["statsData"] for c in cs} for name, cs in parts["partStats"].items()}
        stats[""] = {c["colName"]: c["statsData"] for c in own["tableStats"]}
        params = {"": _call(client, warehouse, "get_table", (DB, table))["parameters"]}
        params |= {p["values"][0]: p["parameters"] for p in _call(client, warehouse, "get_partitions", (DB, table, -1))}
        answers.append({"statistics": stats, "parameters": params})
    return answers[0], answers[1]


def _request(draw: Draw, table: str, names: list[str]) -> ht.PartitionsStatsRequest:
    rng = draw.rng
    asked = rng.sample(names, rng.randint(1, len(names)))
    if rng.random() < 0.15:
        asked.insert(rng.randint(0, len(asked)), "ds=2099-12-31")
    if rng.random() < 0.1:
        asked.insert(rng.randint(0, len(asked)), rng.choice(asked))
    columns = rng.sample([c for c, _ in COLUMNS], rng.randint(1, 4))
    if rng.random() < 0.1:
        columns = [c.upper() for c in columns]
    return ht.PartitionsStatsRequest(DB, table, columns, asked)


def _call(client: Any, warehouse: str, method: str, args: tuple[Any, ...]) -> Any:
    try:
        got = _normal(getattr(ThriftHiveMetastore.Client, method)(client, *args), warehouse)
    except Exception as exc:  # noqa: BLE001 - a declared exception is an answer like any other
        return {"raised": type(exc).__name__}
    if method == "get_aggr_stats_for":  # Hive's order is its database's
        got["colStats"] = sorted(got["colStats"], key=lambda x: (x["colName"], x["colType"]))
    elif method == "get_partitions_statistics_req":
        got["partStats"] = {k: sorted(v, key=lambda x: x["colName"]) for k, v in got["partStats"].items()}
    return got


def _both(servers: Servers, method: str, args: tuple[Any, ...]) -> tuple[Any, Any]:
    return (_call(servers.gateway, servers.gateway_warehouse, method, args),
            _call(servers.hms, servers.hms_warehouse, method, args))


DECIMAL_WITHOUT_LOW = (
    "an extrapolated decimal column with a high value and no low value (one of its partitions has none) is "
    "answered without the low value; Hive 2.3 (to 4) fails with a NullPointerException in StatObjectConverter (a "
    "test of the wrong variable), answered as MetaException, and its caller gets no statistics of any column")
LONG_OVERFLOW = (
    "a long column's extrapolated low or high value, or its distinct count bounded by them, is computed exactly "
    "(and clamped to a long); Hive 2.3 computes it in Java longs, whose products of values this far apart "
    "overflow and wrap round to a value on the wrong side")


def _without(answer: Any, columns: set[str]) -> Any:
    """An answer without the range and distinct count of the given long columns."""
    out = json.loads(json.dumps(answer, default=str))
    for column in out["colStats"]:
        longs = column["statsData"]["longStats"]
        if column["colName"] in columns and longs:
            for name in ("lowValue", "highValue", "numDVs"):
                longs[name] = None
    return out


def _explained(ours: Any, theirs: Any, request: ht.PartitionsStatsRequest, found: Any) -> str | None:
    """The DELIBERATE reason two differing answers differ by, or None."""
    if theirs == {"raised": "MetaException"} and "colStats" in ours and any(
            (d := c["statsData"]["decimalStats"]) and d["lowValue"] is None and d["highValue"] is not None
            for c in ours["colStats"]):
        return DECIMAL_WITHOUT_LOW
    if "colStats" not in ours or "colStats" not in theirs:
        return None
    # Where Java's arithmetic can overflow: the line's (max - min) * steps past a long
    far = {c["colName"] for stats in found["partStats"].values() for c in stats
           if (longs := c["statsData"]["longStats"]) and any(
               abs(v or 0) * len(request.partNames) * 2 >= 2**63 for v in (longs["lowValue"], longs["highValue"]))}
    if far and _without(ours, far) == _without(theirs, far):
        return LONG_OVERFLOW
    return None


def run_example(servers: Servers, seed: int) -> None:
    rng = random.Random(seed)
    servers.tables += 1
    table = f"t{servers.tables}"
    parts = rng.randint(2, 7)
    names = [f"ds=2024-01-{k + 1:02d}" for k in range(parts)]
    draw = Draw(rng, parts)
    for method, args in _writes(draw, table, names):
        ours, theirs = _both(servers, method, args)
        assert ours == theirs, f"{method}{args}: gateway {ours}, Hive {theirs}"
    for _ in range(REQUESTS_PER_EXAMPLE):
        request = _request(draw, table, names)
        ours, theirs = _both(servers, "get_aggr_stats_for", (request,))
        outcome = "raised" if "raised" in theirs else f"{len(theirs['colStats'])} columns"
        if ours != theirs:
            found = _call(servers.hms, servers.hms_warehouse, "get_partitions_statistics_req",
                          (ht.PartitionsStatsRequest(DB, table, request.colNames, request.partNames),))
            reason = _explained(ours, theirs, request, found)
            if reason is None:
                raise AssertionError(f"get_aggr_stats_for({request}) differs\n"
                                     + _difference(ours, theirs, "gateway", "Hive")
                                     + "\nthe partitions' statistics (Hive's):\n"
                                     + json.dumps(found, default=str)[:6000])
            outcome = f"deliberate: {reason[:60]}"
        servers.tally[outcome] = servers.tally.get(outcome, 0) + 1
    # Then a merge, and every partition's statistics read back (aggregates over merged values could tie),
    # and the COLUMN_STATS_ACCURATE marks, which every write of statistics sets.
    ours, before = _statistics(servers, table, names)
    assert ours == before, "before set_aggr_stats_for\n" + _difference(ours, before, "gateway", "Hive")
    merge = _merge(draw, table, names, before["statistics"])
    ours, theirs = _both(servers, "set_aggr_stats_for", (merge,))
    assert ours == theirs, f"set_aggr_stats_for({merge}): gateway {ours}, Hive {theirs}"
    ours, theirs = _statistics(servers, table, names)
    assert ours == theirs, (f"after set_aggr_stats_for({merge})\n" + _difference(ours, theirs, "gateway", "Hive")
                            + f"\nbefore: {json.dumps(before, default=str)}")
    target = " the table" if merge.colStats and merge.colStats[0].statsDesc.isTblLevel else ""
    merged = f"merged{target} (needMerge={merge.needMerge})"
    servers.tally[merged] = servers.tally.get(merged, 0) + 1


@pytest.fixture(scope="module")
async def servers(pg_cluster: PgCluster, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Servers]:
    root = tmp_path_factory.mktemp("aggr-differential")
    warehouse = str(root / "gateway-warehouse")
    # dbcp: pyspark's jars lack BoneCP; Hive's aggregate statistics cache answers from an earlier request's
    # partitions when they are close enough (an approximation by design): off, Hive computes every answer.
    jvm_args = ["-Ddatanucleus.connectionPoolingType=dbcp", "-Dhive.metastore.aggregate.stats.cache.enabled=false"]
    async with contextlib.AsyncExitStack() as stack:
        hms = await stack.enter_async_context(hms_server(workdir=root / "hms", jvm_args=jvm_args, quick_start=True,
                                                         backing="postgresql"))
        gw = await stack.enter_async_context(running_gateway(await pg_cluster.fresh_database(),
                                                             **{"hive.metastore.warehouse.dir": warehouse}))
        clients = [connect(hms), connect(f"127.0.0.1:{gw.thrift_port}")]
        stack.callback(lambda: [c.close() for c in clients])
        for client in clients:
            await asyncio.to_thread(client.create_database, ht.Database(DB, "", None, {}))
        servers = Servers(clients[0], clients[1], str((root / "hms" / "warehouse").resolve()), warehouse)
        yield servers
        print(f"\naggregate statistics differential: {servers.tables} tables, {servers.tally}")


PHASES = [Phase.explicit, Phase.reuse, Phase.generate]
SEEDS = st.integers(0, 2**32 - 1)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
          phases=PHASES, database=None)
@given(seed=SEEDS)
async def test_aggregate_statistics_are_answered_as_hive_metastore_does(servers: Servers, seed: int) -> None:
    await asyncio.to_thread(run_example, servers, seed)


@pytest.mark.soak
@pytest.mark.timeout(0)
@settings(max_examples=SOAK_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), phases=PHASES,
          database=None)
@given(seed=SEEDS)
async def test_aggregate_statistics_are_answered_as_hive_metastore_does_soak(servers: Servers, seed: int) -> None:
    await asyncio.to_thread(run_example, servers, seed)

