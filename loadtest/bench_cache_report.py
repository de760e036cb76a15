"""The report of loadtest/bench_cache.py: the PNG of each figure and the docs section, rendered from the
newest JSON result of each figure."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from loadtest import benchdoc
from loadtest.probes import machine

SECTION_START, SECTION_END = benchdoc.markers("cache")


def plot_hit(figure: dict[str, Any], path: Path) -> Path:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 4.5), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    for i, run in enumerate(figure["runs"]):
        xs = [p["t"] for p in run["series"] if p["hits"] + p["misses"]]
        ys = [100 * p["hits"] / (p["hits"] + p["misses"]) for p in run["series"] if p["hits"] + p["misses"]]
        ax.plot(xs, ys, color=f"C{i}", label=f"{run['users']} users ({100 * run['share']:.1f}% overall)")
    ax.set_xlabel("seconds since start")
    ax.set_ylabel("reads served by the caches (%)")
    ax.set_ylim(top=100.5)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="lower right")
    fig.suptitle("Cache hit share per second, 95/5 read/write mix, 2 gateways")
    fig.savefig(path, format="png")
    return path


def plot_lag(figure: dict[str, Any], path: Path) -> Path:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 4.5), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    labels = {"poller": "B's poller applied the commit", "served": "B served the new partition from its cache"}
    for i, (method, m) in enumerate(figure["methods"].items()):
        xs = sorted(m["samples_ms"])
        ys = [100 * (k + 1) / len(xs) for k in range(len(xs))]
        ax.step(xs, ys, where="post", color=f"C{i}",
                label=f"{labels[method]} (p50 {m['p50_ms']:.1f} ms, p99 {m['p99_ms']:.1f} ms)")
    ax.set_xscale("log")
    ax.set_xlabel("ms after CommitTxn returned on gateway A")
    ax.set_ylabel("commits (%)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="lower right")
    fig.suptitle(f"Commit-to-cache-visible lag across gateways, {figure['commits']} commits each (CDF)")
    fig.savefig(path, format="png")
    return path


def _load_note(figure: dict[str, Any]) -> str:
    load = figure.get("load")
    if not load:
        return ""
    return (f" Machine while it ran: 1-minute load average {load['loadavg1_before']:.1f} before, "
            f"{load['loadavg1_after']:.1f} after; CPU busy {100 * load['machine_busy']:.0f}% of both cores "
            "(everything on the machine, other users' processes included).")


def render_section(figures: dict[str, dict[str, Any]], meta: dict[str, Any]) -> str:
    m = meta["machine"]
    lines = [
        SECTION_START,
        "## The synchronized cache: hit share, commit-to-cache lag, prewarm",
        "",
        "Produced by `loadtest/bench_cache.py` (`python -m loadtest.bench_cache` runs all three; each figure "
        "below names its own command). Gateways run as separate `metastore-gateway serve` processes on one "
        "embedded PostgreSQL with its default (durable) settings, on the same machine as the load generator.",
        "",
        f"- **Machine:** {m['nproc']} cores (`nproc`), CPU \"{m['cpu_model']}\" (/proc/cpuinfo), "
        f"{m['mem_gib']} GiB RAM, "
        f"Linux {m['kernel']}, Python {m['python']}, PostgreSQL {meta.get('pg_version', '?')}.",
        f"- Everything (PostgreSQL, the gateways, the load generator) shares those {m['nproc']} cores, and the "
        "machine is shared with other work (each figure notes the load while it ran), so absolute rates and tail "
        "latencies are this machine's; the hit share, the lag and the memory per partition are the figures.",
        "",
    ]
    hit = figures.get("hit")
    if hit:
        lines += [
            "### Cache hit share under a 95/5 read/write mix",
            "",
            "```sh", hit["command"], "```", "",
            f"Measured {hit['measured']}.{_load_note(hit)} Two caching gateways (default settings: lazy fill, "
            "LISTEN/NOTIFY poller); "
            f"{hit['tables']} ACID tables of {hit['partitions_per_table']:,} partitions; users alternate between the "
            "gateways and run, closed loop without think time, 95 read queries to 5 write txns. A read query is "
            "Hive's: `GetOpenTxns` → `GetValidWriteIds(table)` → `GetPartitionsByNames` of 100 of the table's "
            "partitions with that snapshot. A write txn: `OpenTxns` → `AddPartitions` (2 new) → `AlterPartitions` "
            "(2 of the partitions the readers read) → `CommitTxn`. Caches warmed first; share = "
            "`Admin.CacheStats` hits / (hits + misses) over the run, both gateways summed.",
            "",
            "| users | run s | read queries/s | write txns/s | read p50 ms | read p99 ms | cache hits "
            "| misses (by reason) | **hit share** |",
            "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |",
        ]
        for r in hit["runs"]:
            reasons: dict[str, int] = {}
            for g in r["per_gateway"]:
                for k, v in g["misses"].items():
                    reasons[k] = reasons.get(k, 0) + v
            why = ", ".join(f"{k} {v}" for k, v in sorted(reasons.items())) or "none"
            lines.append(f"| {r['users']} | {r['duration_s']:.0f} | {r['reads_per_s']:.0f} | {r['writes_per_s']:.1f} | "
                         f"{r['read_p50_ms']:.1f} | {r['read_p99_ms']:.1f} | {r['hits']:,} | {r['misses']:,} ({why}) | "
                         f"**{100 * r['share']:.2f}%** |")
        failures = sum(r["read_failures"] + r["write_failures"] for r in hit["runs"])
        lines += [
            "",
            f"Failed requests: {failures} (a write txn aborted by a write-write conflict would count as one). "
            "Misses: `stale`, the reader's snapshot includes a commit this gateway's poller had not applied yet; "
            "`behind_token`, a write through this gateway that its own poller had not applied yet: until it has, "
            "every read of that table on that gateway goes to PostgreSQL, whoever sends it (the gateway's "
            "read-your-writes mark is per table). Hit share per second: `loadtest/results/bench_cache/hit_share.png`; "
            "latency/throughput report: `loadtest/results/bench_cache/hit-<users>users.{md,csv,png}` (regenerated "
            "by the command above).",
            "",
        ]
    lag = figures.get("lag")
    if lag:
        p, s = lag["methods"]["poller"], lag["methods"]["served"]
        lines += [
            "### Commit-to-cache-visible lag across gateways",
            "",
            "```sh", lag["command"], "```", "",
            f"Measured {lag['measured']}.{_load_note(lag)} Gateway A commits a txn that added one partition "
            "(`OpenTxns` → "
            "`AddPartitions` → `CommitTxn`); t0 is when `CommitTxn` returns. Gateway B (its cache warm, default "
            "settings: woken by LISTEN/NOTIFY, timer 60 s) is then polled, one commit at a time, nothing else running:",
            "",
            "| visible means | commits | p50 ms | p90 ms | p99 ms | max ms | probes (p50) |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
            f"| B's `CacheStats.poller_position` ≥ the commit's event id | {p['n']} | {p['p50_ms']:.2f} | "
            f"{p['p90_ms']:.2f} | **{p['p99_ms']:.2f}** | {p['max_ms']:.2f} | {p['probes_p50']:.0f} |",
            f"| B answers a fresh snapshot's `GetPartitionsByNames` of the new partition from its cache "
            f"(hit counter moved) | {s['n']} | {s['p50_ms']:.2f} | {s['p90_ms']:.2f} | **{s['p99_ms']:.2f}** | "
            f"{s['max_ms']:.2f} | {s['probes_p50']:.0f} |",
            "",
            f"A `poller` probe is one `CacheStats` call. For `served`, the client takes a fresh snapshot right after "
            f"the commit (`GetOpenTxns` → `GetValidWriteIds` on B, p50 {lag['snapshot_ms_p50']:.1f} ms, inside the "
            "lag: no read can be sent before it), then probes `GetPartitionsByNames` of the new partition (each "
            "followed by a `CacheStats` to tell whether the cache answered it; the time is taken at the read's "
            f"response) until one is a hit. CommitTxn itself took {lag['commit_ms_p50']:.1f} ms (p50, durable "
            f"commit). B's own view (`CacheStats.poller_lag_p50_ms`/`p99`, from the event's insert time to its "
            f"apply): {lag['gateway_lag_p50_ms']:.1f} / {lag['gateway_lag_p99_ms']:.1f} ms. Distribution: "
            "`loadtest/results/bench_cache/lag.png`.",
            "",
        ]
        prev = lag.get("previous")
        if prev:
            pp, ps = prev["methods"]["poller"], prev["methods"]["served"]
            load = prev.get("load") or {}
            lines += [
                f"The run before ({prev['measured']}, load average {load.get('loadavg1_before', float('nan')):.1f} → "
                f"{load.get('loadavg1_after', float('nan')):.1f}): poller p50 {pp['p50_ms']:.2f} / p99 "
                f"{pp['p99_ms']:.2f} ms, served p50 {ps['p50_ms']:.2f} / p99 {ps['p99_ms']:.2f} ms. The medians hold; "
                "the tails follow the machine's load.",
                "",
            ]
    pre = figures.get("prewarm")
    if pre:
        mib = 2**20
        lines += [
            "### Prewarm time and resident memory per cached partition",
            "",
            "```sh", pre["command"], "```", "",
            f"Measured {pre['measured']}.{_load_note(pre)} {pre['tables']} ACID tables × {pre['per_table']:,} "
            "partitions = "
            f"{pre['partitions']:,} partitions (keys ds string, hr int; storage descriptor as AddPartitions completes "
            f"it). Per table one txn: {pre['via_api_per_table']:,} partitions through `AddPartitions`, the rest COPYed "
            "into `partitions` with the same rows (`store.catalog` completion, `store.codec` body, the txn's write "
            f"id), then `CommitTxn`; loading took {pre['load_s']:.0f} s. Then, one after the other on that database, "
            "a gateway "
            "with `metastore.gateway.cache.enabled=false` (baseline) and one with "
            "`metastore.gateway.cache.prewarm=eager` and `metastore.gateway.cache.max.partitions=2000000`; each "
            "answered one 100-partition read, then idled 3 s before VmRSS was read from /proc.",
            "",
            "| | spawn → serving s | VmRSS MiB | peak VmHWM MiB |",
            "| --- | ---: | ---: | ---: |",
            f"| cache disabled | {pre['baseline_serving_s']:.1f} | {pre['baseline_rss'] / mib:.0f} | "
            f"{pre['baseline_hwm'] / mib:.0f} |",
            f"| eager prewarm | {pre['eager_serving_s']:.1f} | {pre['eager_rss'] / mib:.0f} | "
            f"{pre['eager_hwm'] / mib:.0f} |",
            "",
            f"- **Prewarm:** {pre['cached_partitions']:,} partitions of {pre['cached_tables']} tables cached; serving "
            f"{pre['eager_serving_s']:.1f} s after spawn "
            f"({pre['eager_serving_s'] - pre['baseline_serving_s']:.1f} s more "
            "than without the cache" + (f"; the gateway logs the load itself as {pre['prewarm_logged_s']:.1f} s" if
                                         pre.get("prewarm_logged_s") is not None else "") + ").",
            f"- **Memory:** ({pre['eager_rss'] / mib:.0f} − {pre['baseline_rss'] / mib:.0f}) MiB / "
            f"{pre['cached_partitions']:,} = **{pre['bytes_per_partition']:.0f} bytes of resident memory per cached "
            f"partition**. Of that, the pre-encoded protobuf frames are {pre['frame_bytes_per_partition']:.0f} bytes "
            "(`CacheStats.bytes` / partitions); the rest (not broken down here) is what holds them: the per-version "
            "records, the name → versions maps, the values tuples, the sorted name lists, the live view "
            "(name → frame), and whatever the allocator kept from the load."
            + (f" Peak during prewarm (VmHWM): {pre['eager_hwm'] / mib:.0f} MiB."
               if pre["eager_hwm"] > pre["eager_rss"] * 1.02 else ""),
            f"- The first read after start was {'a cache hit' if pre['first_read_hit'] else 'NOT a cache hit'}.",
        ]
        prev = pre.get("previous")
        if prev:
            load = prev.get("load") or {}
            lines.append(
                f"- The run before ({prev['measured']}, load average {load.get('loadavg1_before', float('nan')):.1f} → "
                f"{load.get('loadavg1_after', float('nan')):.1f}): serving after {prev['eager_serving_s']:.1f} s"
                + (f" (prewarm logged {prev['prewarm_logged_s']:.1f} s)" if prev.get("prewarm_logged_s") else "")
                + f", {prev['bytes_per_partition']:.0f} bytes per partition.")
        lines.append("")
    lines.append(SECTION_END)
    return "\n".join(lines) + "\n"


def write_docs(out: Path, results: Path, meta: dict[str, Any] | None = None) -> None:
    """Rewrite the bench:cache section of `out` from the newest JSON of each figure in `results`."""
    figures: dict[str, dict[str, Any]] = {}
    for name in ("hit", "lag", "prewarm"):
        path = results / f"{name}.json"
        if path.exists():
            figures[name] = json.loads(path.read_text())
    if meta is None:
        newest = max(figures.values(), key=lambda f: f.get("measured", ""), default={})
        meta = {"machine": newest.get("machine") or machine(), "pg_version": newest.get("pg_version", "?")}
    benchdoc.write_section(out, "cache", render_section(figures, meta))
