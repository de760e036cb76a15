"""PostgreSQL probes for the benchmarks: the server's version and counters (WAL fsyncs, commits, WAL
bytes), a sampled wait profile of the backends of one database (pg_stat_activity), CPU by party over a
load window (loadtest.probes), and what one fdatasync costs on the machine's disk."""

from __future__ import annotations

import asyncio
import os
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg

from loadtest import probes
from loadtest.harness import with_database

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

_ACTIVITY_SQL = """
SELECT state, wait_event_type, wait_event, left(query, 200) AS query
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
    cpu_a: probes.CpuSnapshot | None = None
    cpu_b: probes.CpuSnapshot | None = None
    samples: int = 0
    seq_waiter_samples: int = 0
    states: Counter = field(default_factory=Counter)

    def start(self) -> None:
        self.cpu_a = probes.cpu_snapshot(self.gateway_pid, self.postmaster_pid)
        self.started.set()

    def end(self) -> None:
        self.cpu_b = probes.cpu_snapshot(self.gateway_pid, self.postmaster_pid)
        self.ended.set()

    async def sample(self) -> None:
        """Tally pg_stat_activity of the gateway's database every SAMPLE_INTERVAL_S inside the window."""
        if self.stats_conn is None:
            return
        await self.started.wait()
        loop = asyncio.get_running_loop()
        next_at = loop.time()
        while not self.ended.is_set():
            rows = await self.stats_conn.fetch(_ACTIVITY_SQL, self.datname)
            self.samples += 1
            seq_waiter = False
            for r in rows:
                state = backend_state(r["state"], r["wait_event_type"], r["wait_event"], r["query"] or "")
                self.states[state] += 1
                seq_waiter = seq_waiter or (state.startswith("lock wait") and "notification_sequence" in state)
            self.seq_waiter_samples += seq_waiter
            next_at += SAMPLE_INTERVAL_S
            await asyncio.sleep(max(0.0, next_at - loop.time()))

    def cpu(self) -> dict[str, float]:
        return probes.cpu_usage(self.cpu_a, self.cpu_b) if self.cpu_a and self.cpu_b else {}

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


async def connect_stats(dsn: str) -> tuple[asyncpg.Connection, str, int | None]:
    """A side connection for pg_stat_* (to the cluster's `postgres` database when allowed, so its own
    queries do not count as commits of the gateway's database); the gateway's database name; the
    postmaster's pid when PostgreSQL runs on this host."""
    probe = await asyncpg.connect(dsn)
    try:
        datname = await probe.fetchval("SELECT current_database()")
    finally:
        await probe.close()
    try:
        conn = await asyncpg.connect(with_database(dsn, "postgres"))
    except (OSError, asyncpg.PostgresError):
        conn = await asyncpg.connect(dsn)
    backend = await conn.fetchval("SELECT pg_backend_pid()")
    parent = probes.parent_pid(int(backend))
    postmaster = parent if parent and probes.is_postgres(parent) else None
    return conn, datname, postmaster
