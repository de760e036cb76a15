"""Commit-to-visible lag across three gateways while the write-transaction load runs (issue 17), for
`python -m loadtest.bench_txns --lag`.

Three gateway processes A, B, C share one database of a durable embedded PostgreSQL. The load generator
runs the bench's write-txn workload with its users spread over the three gateways (each gateway's poller
applies the others' events, as in an HA pair or sidecars). Meanwhile a probe in this process commits on A,
one commit at a time: `OpenTxns` -> `AddPartitions(1 new)` -> `CommitTxn` (bench_cache's `lag` commit), and
from the moment `CommitTxn` returns polls B's and C's `CacheStats.poller_position` until each has reached
the commit's event id: the `poller` method of `python -m loadtest.bench_cache --only lag`, measured under load;
the same probe runs on the idle gateways first, the baseline of the same run. Beside it, each watcher's own
view of its apply lag (`own_view`): the probe's figure also holds a `CacheStats` round trip to a busy gateway.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any, Callable

from loadtest.engine import RunConfig
from loadtest.harness import Endpoint, fresh_database, gateways, postgres
from loadtest.histogram import percentile
from loadtest.probes import server_version
from loadtest.runner import run_load
from loadtest.stats import RunResult
from loadtest.users import User
from protos.metastore.v1 import admin_pb2 as apb
from protos.metastore.v1 import catalog_pb2 as cpb
from protos.metastore.v1 import transactions_pb2 as tpb

PROBE_TIMEOUT_S = 30.0


async def visible_after(event_id: int, t0: float, watcher: Endpoint) -> float:
    """Milliseconds from `t0` until `watcher`'s poller has applied `event_id` (one CacheStats per poll)."""
    while True:
        if (await watcher.stats()).poller_position >= event_id:
            return (time.perf_counter() - t0) * 1e3
        if time.perf_counter() - t0 > PROBE_TIMEOUT_S:
            raise RuntimeError(f"gateway {watcher.name} did not apply event {event_id} within {PROBE_TIMEOUT_S:g} s")


async def probe(writer: Endpoint, watchers: list[Endpoint], db: str, table: str, stop: asyncio.Event,
                tag: str, commits: int | None = None) -> tuple[dict[str, list[float]], list[float]]:
    """Commit on `writer` and time each watcher's catch-up, until `stop` (or after `commits` commits); returns
    the lags per watcher name (and "both": the later of them per commit) and the commits' own CommitTxn times,
    in ms. `tag` makes the probe's partition values unique."""
    lags: dict[str, list[float]] = {w.name: [] for w in watchers}
    lags["both"] = []
    commit_ms: list[float] = []
    i = 0
    while not stop.is_set() and (commits is None or i < commits):
        i += 1
        (txn,) = (await writer.txns.OpenTxns(tpb.OpenTxnsRequest(num_txns=1, user="lag-probe"), timeout=30)).txn_ids
        await writer.catalog.AddPartitions(cpb.AddPartitionsRequest(
            db_name=db, table_name=table, txn_id=txn, partitions=[cpb.Partition(values=[tag, str(i)])]), timeout=30)
        sent = time.perf_counter()
        event_id = (await writer.txns.CommitTxn(tpb.CommitTxnRequest(txn_id=txn), timeout=30)).event_id
        t0 = time.perf_counter()
        commit_ms.append((t0 - sent) * 1e3)
        seen = await asyncio.gather(*(visible_after(event_id, t0, w) for w in watchers))
        for w, ms in zip(watchers, seen):
            lags[w.name].append(ms)
        lags["both"].append(max(seen))
    return lags, commit_ms


def own_view(stats: apb.CacheStatsResponse, batches_before: int) -> dict[str, float | int]:
    """A watcher's own view of its apply lag, `CacheStats.poller_lag_p50_ms`/`p99_ms`: from the insert of a
    batch's last event in PostgreSQL (inside its writer's transaction, so that commit is included) to the
    batch's apply, over the poller's last 1000 batches. `window` is how many batches those are, `since` how many
    it applied in this phase: when `since >= window`, all of them were."""
    return {"p50_ms": stats.poller_lag_p50_ms, "p99_ms": stats.poller_lag_p99_ms,
            "window": min(stats.poller_batches, 1000), "since": stats.poller_batches - batches_before}


def distribution(ms: list[float]) -> dict[str, float | int]:
    if not ms:
        return {"n": 0, "p50_ms": float("nan"), "p90_ms": float("nan"), "p99_ms": float("nan"),
                "max_ms": float("nan")}
    return {"n": len(ms), "p50_ms": percentile(ms, 50), "p90_ms": percentile(ms, 90), "p99_ms": percentile(ms, 99),
            "max_ms": max(ms)}


async def lag_under_load(root: Path, user_class: type[User], config: RunConfig, options: dict[str, Any],
                         make_catalog: Callable[[str, str], Any], idle_commits: int = 100
                         ) -> tuple[dict[str, Any], RunResult]:
    """Run `user_class` (`config`, `options` plus "addresses": the three gateways) against gateways A, B, C on
    one durable database while `probe` measures; before the load, `idle_commits` probes on the idle gateways.
    `make_catalog(address, db)` creates options["db"] with its table options["table"]. Returns the figures
    (JSON-ready but for NaN) and the load's result."""
    async with postgres(root / "pg", fast=False) as admin_dsn, \
            fresh_database(admin_dsn, "bench_txns_lag", root) as dsn, \
            gateways(dsn, root, ["A", "B", "C"], log_prefix="lag-") as (a, b, c):
        db, table = str(options["db"]), str(options["table"])
        await make_catalog(a.address, db)
        stop = asyncio.Event()
        # The same probe on the idle gateways first, so the figure under load has its baseline from this run.
        idle_lags, _ = await probe(a, [b, c], db, table, stop, "idle", idle_commits)
        idle_view = {w.name: await w.stats() for w in (b, c)}

        async def load() -> RunResult:
            try:
                return await run_load(user_class, a.address, config, target="lag load", progress=False,
                                      options={**options, "addresses": [a.address, b.address, c.address]})
            finally:
                stop.set()

        loaded = asyncio.create_task(load())
        # The probe starts once the load's users are running (workers take a second or two to spawn).
        await asyncio.sleep(min(3.0, config.run_time_s / 4))
        (lags, commit_ms), result = await asyncio.gather(probe(a, [b, c], db, table, stop, "loaded"), loaded)
        loaded_view = {w.name: await w.stats() for w in (b, c)}
        pg_version = await server_version(dsn)
    stats = next(iter(result.stats.values()), None)
    txns = stats.requests - stats.failures if stats else 0
    return {"duration_s": result.duration_s, "pg_version": pg_version,
            "load": {"clients": config.users, "txns_per_s": txns / result.duration_s if result.duration_s else 0.0,
                     "failures": stats.failures if stats else 0, "worker_errors": list(result.worker_errors)},
            "lag": {name: distribution(ms) for name, ms in lags.items()},
            "idle_lag": {name: distribution(ms) for name, ms in idle_lags.items()},
            "own_view": {"idle": {name: own_view(s, 0) for name, s in idle_view.items()},
                         "under the write load": {name: own_view(s, idle_view[name].poller_batches)
                                                  for name, s in loaded_view.items()}},
            "commit_ms_p50": percentile(commit_ms, 50) if commit_ms else float("nan")}, result

