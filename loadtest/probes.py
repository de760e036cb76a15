"""What the benchmarks measure beside their own calls, in one place (no bench parses /proc itself):
the machine they ran on and its state over a run (`machine`, `MachineWindow`), the CPU and memory of
their processes (psutil), and PostgreSQL's side: the server's counters (WAL fsyncs, commits, WAL
bytes), a sampled wait profile of one database's backends (pg_stat_activity), CPU by party over a load
window (`RunProbe`), and what one fdatasync costs on the machine's disk.

CPU figures are seconds of CPU time; a bench divides the difference of two readings by the wall time
between them to get *cores in use*.
"""

from __future__ import annotations

import asyncio
import math
import os
import platform
import re
import subprocess
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import psutil

from loadtest.harness import with_database


def machine() -> dict[str, Any]:
    """Cores this process may use, CPU model, RAM, kernel, Python and grpcio versions."""
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:  # the model name: psutil does not report it
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "")
    except OSError:
        pass
    import grpc

    return {
        "nproc": len(os.sched_getaffinity(0)), "cpu_model": cpu or platform.processor() or "unknown",
        "mem_gib": round(psutil.virtual_memory().total / 2**30, 1), "kernel": platform.release(),
        "python": platform.python_version(), "grpcio": grpc.__version__,
    }


def code_version() -> dict[str, Any]:
    """The commit under test and how many files of the server differ from it (read-only git calls)."""
    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], cwd=Path(__file__).resolve().parent.parent, capture_output=True,
                                  text=True, timeout=10, check=True).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    changed = git("status", "--porcelain", "--", "gateway", "store", "poller", "protos", "hive")
    return {"commit": git("rev-parse", "--short", "HEAD"),
            "server_files_changed": len(changed.splitlines()) if changed else 0}


class MachineWindow:
    """The machine's state over a measured window: 1-minute load average at its start and end, and the
    share of all cores busy (every process on the machine, other users' included) in between."""

    def __init__(self) -> None:
        self.load_before = load_average()
        self.load_after = math.nan
        self._busy, self._total = machine_busy_s(), machine_total_s()
        self.busy_share = math.nan

    def close(self) -> MachineWindow:
        self.load_after = load_average()
        self.busy_share = (machine_busy_s() - self._busy) / max(machine_total_s() - self._total, 0.01)
        return self

    def as_dict(self) -> dict[str, float]:
        return {"loadavg1_before": self.load_before, "loadavg1_after": self.load_after,
                "machine_busy": self.busy_share}


def describe_load(load: dict[str, float], nproc: int) -> str:
    """One sentence on the machine while a figure was measured, from `MachineWindow.as_dict()`."""
    return (f"1-minute load average {load['loadavg1_before']:.1f} before, {load['loadavg1_after']:.1f} after; "
            f"CPU busy {100 * load['machine_busy']:.0f}% of all {nproc} cores over the run (everything on the "
            "machine, other users' processes included)")


def load_average() -> float:
    """The 1-minute load average."""
    return psutil.getloadavg()[0]


def machine_busy_s() -> float:
    """CPU seconds the whole machine spent neither idle nor waiting for I/O, all cores, since boot."""
    t = psutil.cpu_times()
    return sum(t) - t.idle - getattr(t, "iowait", 0.0) - getattr(t, "guest", 0.0) - getattr(t, "guest_nice", 0.0)


def machine_total_s() -> float:
    """CPU seconds of every kind (idle included), all cores, since boot."""
    t = psutil.cpu_times()
    return sum(t) - getattr(t, "guest", 0.0) - getattr(t, "guest_nice", 0.0)


def machine_load(seconds: float = 0.5) -> float:
    """Cores busy over the next `seconds` (blocks)."""
    a = machine_busy_s()
    time.sleep(seconds)
    return (machine_busy_s() - a) / seconds


def wait_quiet(max_cores: float, timeout_s: float, window_s: float = 5.0) -> bool:
    """Wait until the machine is at most `max_cores` busy over `window_s`, for at most `timeout_s`; True
    when it got quiet (blocks)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if machine_load(window_s) <= max_cores:
            return True
    return False


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of one process (0.0 when it is gone)."""
    try:
        t = psutil.Process(pid).cpu_times()
    except psutil.Error:
        return 0.0
    return t.user + t.system


def processes() -> dict[int, tuple[int, float, float]]:
    """pid -> (parent pid, own CPU seconds, CPU seconds of its exited children) of every visible process."""
    out: dict[int, tuple[int, float, float]] = {}
    for p in psutil.process_iter(["ppid", "cpu_times"]):
        t = p.info["cpu_times"]
        if t is not None and p.info["ppid"] is not None:
            out[p.pid] = (p.info["ppid"], t.user + t.system, t.children_user + t.children_system)
    return out


def tree_cpu_s(*roots: int) -> float:
    """CPU seconds of the `roots` and every live descendant, including what their exited children used
    (a daemonized process, such as the embedded PostgreSQL's postmaster, must be a root of its own)."""
    procs = processes()
    wanted = {r for r in roots if r > 0}
    total = 0.0
    for pid, (_, own, children) in procs.items():
        p = pid
        while p > 1 and p not in wanted:
            p = procs[p][0] if p in procs else 0
        if p in wanted:
            total += own + children
    return total


def postmaster_pid(data_dir: Path) -> int:
    """The postmaster of the PostgreSQL data directory `data_dir` (0 when it is not running)."""
    try:
        return int((data_dir / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0


def parent_pid(pid: int) -> int:
    """The parent of a process (0 when it is gone or not visible)."""
    try:
        return psutil.Process(pid).ppid()
    except psutil.Error:
        return 0


def is_postgres(pid: int) -> bool:
    try:
        return psutil.Process(pid).name() in ("postgres", "postmaster")
    except psutil.Error:
        return False


def rss_bytes(pid: int) -> int:
    """Resident set size of a process now."""
    return int(psutil.Process(pid).memory_info().rss)


def peak_rss_bytes(pid: int) -> int:
    """The highest resident set size of a process so far (VmHWM: psutil does not report it on Linux)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmHWM for pid {pid}")


@dataclass
class CpuSnapshot:
    """CPU seconds used so far by the parties of a run: the machine, a gateway, a PostgreSQL server (its
    postmaster and backends), the load generator (this process and its other children)."""

    at: float
    machine_s: float
    gateway_s: float
    postgres_s: dict[int, float]
    generator_s: dict[int, float]
    self_s: float


def cpu_snapshot(gateway_pid: int, postmaster: int | None) -> CpuSnapshot:
    procs = processes()
    me = os.getpid()
    gateway = procs[gateway_pid][1] if gateway_pid in procs else 0.0
    postgres = {}
    if postmaster is not None:
        postgres = {pid: cpu for pid, (ppid, cpu, _) in procs.items() if pid == postmaster or ppid == postmaster}
    generator = {pid: cpu for pid, (ppid, cpu, _) in procs.items() if ppid == me and pid != gateway_pid}
    t = os.times()
    return CpuSnapshot(time.monotonic(), machine_busy_s(), gateway, postgres, generator, t.user + t.system)


def cpu_usage(a: CpuSnapshot, b: CpuSnapshot) -> dict[str, float]:
    """Cores in use between two snapshots (CPU seconds / wall seconds), by party."""
    wall = b.at - a.at
    if wall <= 0:
        return {}
    pg = sum(cpu - a.postgres_s.get(pid, 0.0) for pid, cpu in b.postgres_s.items())
    gen = sum(cpu - a.generator_s.get(pid, 0.0) for pid, cpu in b.generator_s.items()) + (b.self_s - a.self_s)
    out = {
        "wall_s": wall, "machine": (b.machine_s - a.machine_s) / wall, "gateway": (b.gateway_s - a.gateway_s) / wall,
        "generator": gen / wall,
    }
    out["postgres"] = pg / wall if b.postgres_s else float("nan")
    # Clamped: the parts are read a few ms apart, so an idle remainder can come out at -0.0x.
    out["other"] = max(0.0, out["machine"] - out["gateway"] - out["generator"]
                       - (0.0 if math.isnan(out["postgres"]) else out["postgres"]))
    return out


SAMPLE_INTERVAL_S = 0.025


async def server_version(dsn: str) -> str:
    conn = await asyncpg.connect(dsn)
    try:
        return str(await conn.fetchval("SHOW server_version"))
    finally:
        await conn.close()


_STATS_SQL = """
SELECT (SELECT coalesce(sum(fsyncs), 0) FROM pg_stat_io WHERE object = 'wal')::bigint AS wal_fsyncs,
       (SELECT xact_commit FROM pg_stat_database WHERE datname = $1)::bigint AS commits,
       pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint AS wal_bytes
"""
_STATS_SQL_PRE18 = """
SELECT (SELECT wal_sync FROM pg_stat_wal)::bigint AS wal_fsyncs,
       (SELECT xact_commit FROM pg_stat_database WHERE datname = $1)::bigint AS commits,
       pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint AS wal_bytes
"""

# Also how many backends are queued on the notification_sequence row ($2: its table's oid): a row
# lock's waiters hold or wait for its tuple lock (the first holds it while it waits for the holder's
# transaction, the rest wait for it); the statement text cannot tell, the row is locked in a function.
_ACTIVITY_SQL = """
SELECT state, wait_event_type, wait_event, left(query, 200) AS query,
       (SELECT count(DISTINCT l.pid) FROM pg_locks l
        WHERE l.locktype = 'tuple' AND l.relation = $2::oid
          AND l.database = (SELECT oid FROM pg_database WHERE datname = $1)) AS queued_on_sequence
FROM pg_stat_activity
WHERE datname = $1 AND backend_type = 'client backend' AND pid <> pg_backend_pid()
"""


def statement_label(query: str) -> str:
    """A short name for the statement a backend is running: 'UPDATE notification_sequence', 'COMMIT'."""
    q = " ".join(query.split())
    for pattern in (r"^(UPDATE) (\w+)", r"^(INSERT INTO) (\w+)", r"^(DELETE FROM) (\w+)", r"^SELECT (pg_notify)",
                    r"^(SELECT) .*? FROM (\w+)"):
        m = re.match(pattern, q, re.IGNORECASE)
        if m:
            return " ".join(g for g in m.groups())
    return q.split(" ", 1)[0].upper() if q else "?"


def backend_state(state: str | None, wait_type: str | None, wait_event: str | None, query: str) -> str:
    """One pg_stat_activity row as a category of the wait profile."""
    if state == "idle":
        return "idle"
    if state == "idle in transaction":
        return "idle in transaction (waiting for the gateway)"
    if state != "active":
        return str(state)
    if wait_type is None:
        return "running (on CPU or runnable)"
    if wait_type == "IO" and wait_event == "WalSync":
        return "WAL fsync (IO:WalSync)"
    if wait_type == "LWLock" and wait_event == "WALWrite":
        return "waiting for another backend's WAL flush (LWLock:WALWrite)"
    if wait_type == "Lock":
        return f"lock wait (Lock:{wait_event}) in {statement_label(query)}"
    return f"{wait_type}:{wait_event}"


@dataclass
class RunProbe:
    """Server-side measurements for one run; `start`/`end` bracket the load window (called by the sink)."""

    gateway_pid: int
    postmaster_pid: int | None
    stats_conn: asyncpg.Connection | None
    datname: str
    started: asyncio.Event = field(default_factory=asyncio.Event)
    ended: asyncio.Event = field(default_factory=asyncio.Event)
    cpu_a: CpuSnapshot | None = None
    cpu_b: CpuSnapshot | None = None
    samples: int = 0
    seq_waiter_samples: int = 0
    states: Counter = field(default_factory=Counter)
    sequence_oid: int | None = None  # notification_sequence's, in the gateway's database (None: not there)

    def start(self) -> None:
        self.cpu_a = cpu_snapshot(self.gateway_pid, self.postmaster_pid)
        self.started.set()

    def end(self) -> None:
        self.cpu_b = cpu_snapshot(self.gateway_pid, self.postmaster_pid)
        self.ended.set()

    async def sample(self) -> None:
        """Tally pg_stat_activity of the gateway's database every SAMPLE_INTERVAL_S inside the window."""
        if self.stats_conn is None:
            return
        await self.started.wait()
        loop = asyncio.get_running_loop()
        next_at = loop.time()
        while not self.ended.is_set():
            rows = await self.stats_conn.fetch(_ACTIVITY_SQL, self.datname, self.sequence_oid)
            self.samples += 1
            for r in rows:
                self.states[backend_state(r["state"], r["wait_event_type"], r["wait_event"], r["query"] or "")] += 1
            self.seq_waiter_samples += bool(rows and rows[0]["queued_on_sequence"])
            next_at += SAMPLE_INTERVAL_S
            await asyncio.sleep(max(0.0, next_at - loop.time()))

    def cpu(self) -> dict[str, float]:
        return cpu_usage(self.cpu_a, self.cpu_b) if self.cpu_a and self.cpu_b else {}

    def wait_profile(self) -> dict[str, float]:
        """Average number of backends in each state over the samples."""
        return {k: v / self.samples for k, v in self.states.most_common()} if self.samples else {}


def fdatasync_probe(directory: Path, seconds: float = 1.0, size: int = 8192) -> dict[str, float]:
    """Rewrite one 8 KiB block and fdatasync it in a loop (what a WAL flush of a small commit costs)."""
    path = directory / "fdatasync-probe"
    block = os.urandom(size)
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
    try:
        os.pwrite(fd, block, 0)
        os.fdatasync(fd)
        count = 0
        started = time.perf_counter()
        while time.perf_counter() - started < seconds:
            os.pwrite(fd, block, 0)
            os.fdatasync(fd)
            count += 1
        elapsed = time.perf_counter() - started
    finally:
        os.close(fd)
        path.unlink(missing_ok=True)
    return {"ops_per_s": count / elapsed, "mean_ms": 1e3 * elapsed / count}


async def wal_stats(conn: asyncpg.Connection, datname: str) -> dict[str, int] | None:
    """WAL fsyncs, commits of `datname` and WAL bytes so far (None when the server has no such view)."""
    for query in (_STATS_SQL, _STATS_SQL_PRE18):
        try:
            row = await conn.fetchrow(query, datname)
            return dict(row)
        except asyncpg.PostgresError:
            continue
    return None


async def connect_stats(dsn: str) -> tuple[asyncpg.Connection, str, int | None, int | None]:
    """A side connection for pg_stat_* (to the cluster's `postgres` database when allowed, so its own
    queries do not count as commits of the gateway's database); the gateway's database name; the
    postmaster's pid when PostgreSQL runs on this host; the oid of the database's
    notification_sequence table (None: the Hive Metastore's database has none)."""
    probe = await asyncpg.connect(dsn)
    try:
        datname = await probe.fetchval("SELECT current_database()")
        sequence_oid = await probe.fetchval("SELECT to_regclass('notification_sequence')::oid")
    finally:
        await probe.close()
    try:
        conn = await asyncpg.connect(with_database(dsn, "postgres"))
    except (OSError, asyncpg.PostgresError):
        conn = await asyncpg.connect(dsn)
    backend = await conn.fetchval("SELECT pg_backend_pid()")
    parent = parent_pid(int(backend))
    postmaster = parent if parent and is_postgres(parent) else None
    return conn, datname, postmaster, sequence_oid
