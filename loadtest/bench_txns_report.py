"""The report of loadtest/bench_txns.py: the records of a run (RunSummary per client count, ModeInfo per
PostgreSQL mode, the Options), the markdown section with its reading of the figures, and its
re-rendering from a saved bench_txns.json."""

from __future__ import annotations

import datetime as dt
import json
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from loadtest import benchdoc, pg_probes

REPO = Path(__file__).resolve().parent.parent
REQUEST = "write-txn(10 partitions)"
SECTION_START, SECTION_END = benchdoc.markers("txns")
COMMITS_PER_TXN = 4  # OpenTxns, AllocateTableWriteIds, AddPartitions, CommitTxn: one database transaction each
UNSAFE_FAST_CONF = "metastore.gateway.embedded.unsafe.fast=true"


@dataclass
class RunSummary:
    mode: str
    clients: int
    workers: int
    duration_s: float
    txns: int
    failures: int
    errors: dict[str, int]
    partitions: int
    txns_per_s: float
    partitions_per_s: float
    mean_ms: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    max_ms: float
    worker_errors: list[str]
    cpu: dict[str, float]
    wal_fsyncs_per_commit: float
    wal_fsyncs_per_txn: float
    commits_per_txn: float
    wal_bytes_per_txn: float
    wait_profile: dict[str, float]
    samples: int
    seq_waiter_share: float
    discarded_other_cores: list[float] = field(default_factory=list)


@dataclass
class ModeInfo:
    mode: str
    conf: list[str]
    pg_version: str
    pg_settings: dict[str, str]
    gateway_settings: dict[str, Any]
    fdatasync: dict[str, float] | None
    runs: list[RunSummary] = field(default_factory=list)


@dataclass(frozen=True)
class Options:
    duration_s: float
    clients: tuple[int, ...]
    out: Path
    results_dir: Path
    dsn: str
    fsync_modes: tuple[str, ...]
    workers: int
    partitions: int
    gateway_conf: tuple[str, ...]
    progress: bool
    plot: bool
    pause_s: float
    max_other_cores: float = 0.25
    retries: int = 3
    quiet_wait_s: float = 300.0


def _num(value: float, digits: int = 0) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:,.{digits}f}"


def _ms(value: float) -> str:
    if math.isnan(value):
        return "–"
    return f"{value:.2f}" if value < 10 else f"{value:.1f}" if value < 100 else f"{value:,.0f}"


def _mode_label(info: ModeInfo) -> str:
    s = info.pg_settings
    if info.mode == "on":
        return f"durable: fsync={s['fsync']}, synchronous_commit={s['synchronous_commit']}"
    if info.mode == "off":
        return f"unsafe fast: fsync={s['fsync']}, synchronous_commit={s['synchronous_commit']}"
    return f"your server: fsync={s['fsync']}, synchronous_commit={s['synchronous_commit']}"


def _ratio(modes: list[ModeInfo], mode: str, metric: str) -> float:
    info = next((m for m in modes if m.mode == mode), None)
    if info is None or len(info.runs) < 2:
        return math.nan
    lo, hi = min(info.runs, key=lambda r: r.clients), max(info.runs, key=lambda r: r.clients)
    a, b = getattr(lo, metric), getattr(hi, metric)
    return b / a if a and not math.isnan(a) and not math.isnan(b) else math.nan


def _run(modes: list[ModeInfo], mode: str, clients: int) -> RunSummary | None:
    for m in modes:
        if m.mode == mode:
            for r in m.runs:
                if r.clients == clients:
                    return r
    return None


def _lock_waits(profile: Mapping[str, float]) -> dict[str, float]:
    """Average backends waiting for a lock, by the statement that waits (Lock:tuple and Lock:transactionid
    waits on the same statement are one row-lock queue)."""
    out: dict[str, float] = {}
    for k, v in profile.items():
        m = re.match(r"lock wait \(Lock:\w+\) in (.*)", k)
        if m:
            out[m.group(1)] = out.get(m.group(1), 0.0) + v
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def interpretation(modes: list[ModeInfo], nproc: int) -> list[str]:
    """Sentences computed from the measurements, so a re-run on another machine keeps them true.
    Mechanisms named here come from the code (store/events.py, store/txns.py), not from the numbers."""
    out: list[str] = []
    on = next((m for m in modes if m.mode == "on"), None)
    off = next((m for m in modes if m.mode == "off"), None)
    main = on or off or (modes[0] if modes else None)
    if main is None or not main.runs:
        return out
    lo = min(r.clients for r in main.runs)
    hi = max(r.clients for r in main.runs)
    r_lo, r_hi = _run(modes, main.mode, lo), _run(modes, main.mode, hi)
    assert r_lo is not None and r_hi is not None
    plural = "s" if hi > 1 else ""
    if hi != lo:
        ratio = _ratio(modes, main.mode, "txns_per_s")
        head = ("More clients, fewer transactions." if ratio < 0.95 else
                "Concurrency barely pays." if ratio < 2 else "Concurrency.")
        out.append(
            f"**{head}** {hi} clients commit {ratio:.2f}× the transactions per second of {lo} "
            f"({_num(r_hi.txns_per_s)} vs {_num(r_lo.txns_per_s)} txns/s) while each transaction's median latency "
            f"goes from {_ms(r_lo.p50_ms)} ms to {_ms(r_hi.p50_ms)} ms.")
    # 1 client: one request in flight, so average backends in a state = share of wall time.
    single = _run(modes, main.mode, 1)
    if single is not None and single.wait_profile:
        prof = single.wait_profile
        in_txn = sum(v for k, v in prof.items() if k != "idle")
        out.append(
            f"**One client ({main.mode if main.mode != 'dsn' else 'your server'}).** With one request in flight, the "
            f"samples are shares of time: a database transaction is open {100 * in_txn:.0f}% of the time — "
            f"{100 * prof.get('idle in transaction (waiting for the gateway)', 0):.0f}% idle in the transaction "
            f"waiting for the gateway's next statement, "
            f"{100 * prof.get('running (on CPU or runnable)', 0):.0f}% executing, "
            f"{100 * prof.get('WAL fsync (IO:WalSync)', 0):.0f}% in the commit's WAL fsync — and "
            f"{100 * max(0.0, 1 - in_txn):.0f}% of the time no transaction is open (gRPC, the gateway's Python code "
            f"outside transactions, the client)."
            + (f" The gateway process was on CPU {single.cpu['gateway']:.2f} of the time "
               f"({1e3 * single.cpu['gateway'] / single.txns_per_s:.1f} ms per transaction of the "
               f"{_ms(single.mean_ms)} ms mean), PostgreSQL {_num(single.cpu['postgres'], 2)}: for one client the "
               f"time goes mostly to the gateway's own processing."
               if single.cpu and single.txns_per_s and single.cpu["gateway"] > 0.5 else ""))
    if on is not None and off is not None:
        counts = (lo, hi) if hi != lo else (lo,)
        parts = []
        for clients in counts:
            a, b = _run(modes, "on", clients), _run(modes, "off", clients)
            if a is None or b is None or math.isnan(a.mean_ms) or math.isnan(b.mean_ms):
                continue
            share = 1 - b.mean_ms / a.mean_ms
            parts.append(f"at {clients} client{'s' if clients > 1 else ''} {_num(b.txns_per_s)} instead of "
                         f"{_num(a.txns_per_s)} txns/s (mean {_ms(b.mean_ms)} instead of {_ms(a.mean_ms)} ms, "
                         + (f"so flushes are ~{100 * share:.0f}% of a durable transaction's time)" if share >= 0.02
                            else "no gain: the flushes are not what the transactions wait for)"))
        if parts:
            small = all(r_off.mean_ms > 0.7 * r_on.mean_ms for c in counts
                        if (r_on := _run(modes, "on", c)) is not None and (r_off := _run(modes, "off", c)) is not None)
            out.append(("**fsync is a small share.**" if small else "**fsync.**")
                       + " With fsync off (same gateway, same load) it does " + "; ".join(parts) + ".")
        fd = on.fdatasync
        r_on_hi = _run(modes, "on", hi)
        if r_on_hi is not None and not math.isnan(r_on_hi.wal_fsyncs_per_txn):
            disk = (f"An 8 KiB write + fdatasync on this disk takes {fd['mean_ms']:.2f} ms. " if fd else "")
            if r_on_hi.wal_fsyncs_per_txn >= COMMITS_PER_TXN - 0.2:
                out.append(
                    f"**No group commit.** {disk}Durable runs made {r_on_hi.wal_fsyncs_per_txn:.2f} WAL fsyncs per "
                    f"transaction at {hi} client{plural}: one for each of the {COMMITS_PER_TXN} writing commits "
                    f"(one per RPC), never shared. Every write appends its event last and keeps the "
                    f"`notification_sequence` row "
                    f"locked until its commit is flushed (store/sql/events.py), so no two writing commits ever wait "
                    f"for the disk together.")
            else:
                out.append(f"**Group commit.** {disk}Durable runs made {r_on_hi.wal_fsyncs_per_txn:.2f} WAL fsyncs per "
                           f"transaction at {hi} client{plural} for {COMMITS_PER_TXN} writing commits.")
    if r_hi.commits_per_txn > COMMITS_PER_TXN + 0.5 and not math.isnan(r_lo.commits_per_txn):
        out.append(
            f"**Read-only commits.** PostgreSQL counted {r_lo.commits_per_txn:.1f} (at {lo} client) and "
            f"{r_hi.commits_per_txn:.1f} (at {hi}) commits in the gateway's database per transaction, of which "
            f"{COMMITS_PER_TXN} write; the others are read-only statements — among them the reset query asyncpg's pool "
            f"sends each time an RPC returns its connection, and the gateway's own readers of the notification log — "
            f"round trips and CPU, but no WAL flush.")
    for info in [m for m in (on, off) if m is not None] or [main]:
        r = _run(modes, info.mode, hi)
        if r is None or hi == 1 or not r.wait_profile:
            continue
        prof = r.wait_profile
        locks = _lock_waits(prof)
        lock_all = sum(locks.values())
        flush = prof.get("WAL fsync (IO:WalSync)", 0.0) + prof.get(
            "waiting for another backend's WAL flush (LWLock:WALWrite)", 0.0)
        in_txn = sum(v for k, v in prof.items() if k != "idle")
        top = ", ".join(f"`{k}` {v:.2f}" for k, v in list(locks.items())[:3])
        pool = info.gateway_settings["pool_max_size"]
        idle_tx = prof.get("idle in transaction (waiting for the gateway)", 0.0)
        cap = (f", so at most {pool} of the {hi} requests can be in the database at a time"
               if hi > pool and in_txn > 0.8 * pool else "")
        text = (
            f"**{hi} clients, {_mode_label(info)}.** On average {in_txn:.2f} of the gateway's {pool} pooled "
            f"connections are inside a transaction{cap}. {lock_all:.2f} of them wait for a row lock"
            + (f" ({top})" if top else "")
            + f", {idle_tx:.2f} are idle in a transaction, holding their locks while the gateway gets to their next "
            f"statement, {prof.get('running (on CPU or runnable)', 0):.2f} are executing and {flush:.2f} are in a WAL "
            f"flush.")
        if r.seq_waiter_share >= 0.5:
            text += (
                f" A backend was queued on the `notification_sequence` row in {100 * r.seq_waiter_share:.0f}% of the "
                f"samples. Every write locks that row as its last step and holds it through three more round trips to "
                f"the gateway (event insert, NOTIFY, COMMIT) and the commit itself, so writes pass it one at a time"
                + ("; " if len(locks) > 1 else ".")
                + ("the transactions waiting in "
                   + ", ".join(f"`{k}`" for k in locks if "notification_sequence" not in k)
                   + " wait for row locks that earlier transactions took first and keep until they commit, i.e. "
                     "until after their own turn on `notification_sequence`." if len(locks) > 1 else ""))
        cpu = r.cpu
        if cpu and r.txns_per_s:
            text += (f" CPU: the machine was {cpu['machine']:.2f} of {nproc} cores busy — gateway process "
                     f"{cpu['gateway']:.2f} (its Python event loop can use about one), PostgreSQL "
                     f"{_num(cpu['postgres'], 2)}, load generator {cpu['generator']:.2f}; per transaction "
                     f"{1e3 * cpu['gateway'] / r.txns_per_s:.1f} ms of gateway CPU and "
                     f"{_num(1e3 * cpu['postgres'] / r.txns_per_s, 1)} ms of PostgreSQL CPU.")
        out.append(text)
    r = _run(modes, main.mode, hi)
    r_off = _run(modes, "off", hi)
    if r is not None and r.cpu and hi > 1 and r.seq_waiter_share >= 0.5:
        cpu_free = r.cpu["machine"] < 0.9 * nproc and r.cpu["gateway"] < 0.9
        fsync_small = main.mode == "on" and r_off is not None and r_off.txns_per_s < 1.25 * r.txns_per_s
        if cpu_free:
            out.append(
                f"**So at {hi} clients** neither the cores nor the gateway's event loop are saturated"
                + (" and turning fsync off gains little" if fsync_small else "")
                + f": the rate is set by writes passing the row locks one at a time, each lock held across round "
                f"trips to a gateway process using {r.cpu['gateway']:.2f} cores (the "
                f"{r.wait_profile.get('idle in transaction (waiting for the gateway)', 0):.2f} transactions idle "
                f"in the database are waiting for it).")
    return out


def _wait_table(modes: list[ModeInfo], min_share: float = 0.02) -> str:
    runs = [r for m in modes for r in m.runs]
    keys: dict[str, None] = {}
    for r in runs:
        for k, v in r.wait_profile.items():
            if v >= min_share:
                keys[k] = None
    order = sorted(keys, key=lambda k: -max(r.wait_profile.get(k, 0.0) for r in runs))
    header = "| backend state (average number of backends) | " + " | ".join(
        f"fsync={r.mode} c={r.clients}" if r.mode in ("on", "off") else f"c={r.clients}" for r in runs) + " |"
    lines = [header, "| --- |" + " ---: |" * len(runs)]
    for k in order:
        lines.append(f"| {k} | " + " | ".join(f"{r.wait_profile.get(k, 0.0):.2f}" for r in runs) + " |")
    other = [sum(v for k, v in r.wait_profile.items() if k not in keys) for r in runs]
    if any(o > 0 for o in other):
        lines.append("| other | " + " | ".join(f"{o:.2f}" for o in other) + " |")
    lines.append("| *samples with a backend queued on `notification_sequence`* | " + " | ".join(
        f"{100 * r.seq_waiter_share:.0f}%" if not math.isnan(r.seq_waiter_share) else "–" for r in runs) + " |")
    lines.append("| *samples* | " + " | ".join(f"{r.samples:,}" for r in runs) + " |")
    return "\n".join(lines) + "\n"


def render_section(command: str, when: dt.datetime, machine: Mapping[str, Any], modes: list[ModeInfo],
                   opts: Options, files: Mapping[str, str]) -> str:
    first = modes[0]
    lines = [
        SECTION_START,
        "## Small write transactions per second",
        "",
        f"One write transaction is what a Hive writer does for a small insert into a partitioned ACID table: "
        f"`OpenTxns(num_txns=1)` → `AllocateTableWriteIds` → `AddPartitions` ({opts.partitions} new partitions, "
        f"`txn_id` set) → `CommitTxn`, issued back to back by one client and timed together as one request, "
        f"`{REQUEST}`. Closed loop, no think time, one gRPC channel per client. Produced by "
        f"`loadtest/bench_txns.py` with",
        "",
        "```sh",
        command,
        "```",
        "",
        f"on {when:%Y-%m-%d %H:%M} UTC, {opts.duration_s:g} s per client count.",
        "",
        f"- **Machine:** {machine['nproc']} cores (`nproc`), CPU \"{machine['cpu_model']}\" (/proc/cpuinfo), "
        f"Linux {machine['kernel']}, Python {machine['python']}, PostgreSQL {first.pg_version}.",
    ]
    code = machine.get("code") or {}
    if code.get("commit"):
        changed = code["server_files_changed"]
        lines.append(f"- **Code:** commit `{code['commit']}`" + (
            f" plus uncommitted changes in {changed} file{'s' if changed > 1 else ''} under gateway/, store/, "
            "poller/, protos/." if changed else ", no uncommitted changes under gateway/, store/, poller/, protos/."))
    if opts.dsn:
        lines.append("- **PostgreSQL:** the server given with `--dsn`, as configured "
                     f"({', '.join(f'{k}={v}' for k, v in first.pg_settings.items())}).")
    else:
        described = []
        for m in modes:
            settings = ", ".join(f"{k}={v}" for k, v in m.pg_settings.items())
            if m.mode == "on":
                described.append(f"*durable* is PostgreSQL's and the gateway's default configuration ({settings})")
            else:
                described.append(f"*unsafe fast* is the gateway started with `--conf {UNSAFE_FAST_CONF}` ({settings}), "
                                 f"run to measure what the WAL flushes cost")
        lines.append("- **PostgreSQL:** the embedded server, a fresh cluster in a temporary directory per mode "
                     "(deleted afterwards); " + "; ".join(described) + ".")
        fd = next((m.fdatasync for m in modes if m.fdatasync), None)
        if fd:
            lines.append(f"- **Disk:** 8 KiB write + fdatasync on the data directory's filesystem: "
                         f"{fd['mean_ms']:.2f} ms each ({_num(fd['ops_per_s'])}/s), measured just before the run.")
    lines.append(
        f"- **Processes:** one gateway process (`python -m gateway.cli serve`, asyncio loop, connection pool "
        f"{first.gateway_settings['pool_max_size']}); the load generator in {opts.workers} worker process"
        f"{'es' if opts.workers > 1 else ''} (uvloop) plus the parent script; PostgreSQL; all on the same "
        f"{machine['nproc']} cores.")
    lines += [
        "",
        "| PostgreSQL | clients | txns/s | partitions/s | p50 ms | p95 ms | p99 ms | max ms | failures |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for info in modes:
        label = {"on": "durable (fsync on)", "off": "unsafe fast (fsync off)"}.get(info.mode, "`--dsn` server")
        for r in info.runs:
            lines.append(f"| {label} | {r.clients} | {_num(r.txns_per_s)} | {_num(r.partitions_per_s)} | "
                         f"{_ms(r.p50_ms)} | {_ms(r.p95_ms)} | {_ms(r.p99_ms)} | {_ms(r.max_ms)} | {r.failures:,} |")
    lines.append("")
    ratios = []
    for info in modes:
        if len(info.runs) >= 2:
            lo, hi = min(r.clients for r in info.runs), max(r.clients for r in info.runs)
            label = {"on": "durable", "off": "unsafe fast"}.get(info.mode, "`--dsn`")
            ratios.append(f"×{_ratio(modes, info.mode, 'txns_per_s'):.2f} ({label})")
    if ratios:
        lines += [f"Throughput ratio {hi} clients / {lo} client: " + ", ".join(ratios) + ".", ""]
    lines += [
        "### Where the time goes",
        "",
        "Measured in the same runs, over the load window: CPU from /proc (cores in use), WAL fsyncs and commits "
        "from `pg_stat_io` / `pg_stat_database`, WAL bytes from `pg_current_wal_lsn()`.",
        "",
        "| run | gateway CPU | PostgreSQL CPU | load generator CPU | other processes | machine busy | commits / txn | "
        "WAL fsyncs / txn | WAL KiB / txn |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for info in modes:
        for r in info.runs:
            c = r.cpu
            name = f"fsync={r.mode} c={r.clients}" if r.mode in ("on", "off") else f"c={r.clients}"
            lines.append(
                f"| {name} | {_num(c.get('gateway', math.nan), 2)} | {_num(c.get('postgres', math.nan), 2)} | "
                f"{_num(c.get('generator', math.nan), 2)} | {_num(c.get('other', math.nan), 2)} | "
                f"{_num(c.get('machine', math.nan), 2)} / {machine['nproc']} | "
                f"{_num(r.commits_per_txn, 2)} | {_num(r.wal_fsyncs_per_txn, 2)} | "
                f"{_num(r.wal_bytes_per_txn / 1024, 1)} |")
    busiest_other = max((r.cpu.get("other", 0.0) for m in modes for r in m.runs), default=0.0)
    repeated = [(r, r.discarded_other_cores) for m in modes for r in m.runs if r.discarded_other_cores]
    lines.append("")
    lines.append("*load generator* is its worker process(es) plus this script (which also runs the sampler below); "
                 "*other processes* is whatever else ran on the machine meanwhile (a run during which they used more "
                 f"than {opts.max_other_cores:g} cores is discarded and repeated, up to {opts.retries} times"
                 + (": " + "; ".join(f"fsync={r.mode} c={r.clients} was repeated {len(d)}× (others had used "
                                     + ", ".join(f"{x:.2f}" for x in d) + " cores)" for r, d in repeated)
                    if repeated else "; none was") + ")." + (
                     f" **The machine was not idle: other processes used up to {busiest_other:.2f} cores during a run, "
                     f"so these numbers understate what an idle machine does.**"
                     if busiest_other > opts.max_other_cores else ""))
    lines += [
        "",
        f"What the gateway's PostgreSQL connections were doing, sampled from `pg_stat_activity` every "
        f"{pg_probes.SAMPLE_INTERVAL_S * 1e3:g} ms (average number of backends per state; states under "
        f"0.02 everywhere are summed as *other*):",
        "",
        _wait_table(modes),
    ]
    lines += ["### Interpretation", "",
              "Computed from the measurements above by the script (mechanisms named are the code's, "
              "store/sql/events.py and store/txns.py):", "",
              *(f"- {s}" for s in interpretation(modes, machine['nproc'])), ""]
    if files:
        lines += ["Loadtest report and raw measurements: " + ", ".join(f"`{p}`" for p in files.values()) +
                  " (git-ignored; regenerate with the command above).", ""]
    lines.append(SECTION_END)
    return "\n".join(lines) + "\n"


def jsonable(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return value


def _floats(value: Any) -> Any:
    if value is None:
        return math.nan
    if isinstance(value, dict):
        return {k: _floats(v) for k, v in value.items()}
    return value


def render_from_json(path: Path, out: Path) -> int:
    """Re-render the markdown section from a saved bench_txns.json (same numbers, same command)."""
    data = json.loads(path.read_text())
    modes = []
    for m in data["modes"]:
        runs = [RunSummary(**{k: (_floats(v) if k in ("cpu", "wait_profile") or v is None else v)
                              for k, v in r.items()}) for r in m.pop("runs")]
        modes.append(ModeInfo(**m, runs=runs))
    o = data["options"]
    opts = Options(**{**o, "clients": tuple(o["clients"]), "fsync_modes": tuple(o["fsync_modes"]),
                      "gateway_conf": tuple(o["gateway_conf"]), "out": Path(o["out"]),
                      "results_dir": Path(o["results_dir"])})
    files = {}
    for name, suffix in (("csv", ".csv"), ("timeseries", "-timeseries.csv"), ("json", ".json"), ("png", ".png")):
        candidate = opts.results_dir / f"bench_txns{suffix}"
        if (REPO / candidate if not candidate.is_absolute() else candidate).exists():
            files[name] = str(candidate)
    when = dt.datetime.fromisoformat(data["date_utc"])
    benchdoc.write_section(out, "txns", render_section(data["command"], when, data["machine"], modes, opts, files))
    print(f"bench_txns: re-rendered {out} from {path}", file=sys.stderr)
    return 0
