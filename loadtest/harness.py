"""The benchmark harness: what every bench and the consistency run stand on besides their workload.

* a work directory (`workdir`), a PostgreSQL server (`postgres`: given, or embedded in the work
  directory), a fresh migrated database in it (`fresh_database`);
* gateways as OS processes (`GatewayProcess`, from loadtest.gateway_process: ready once they log their
  address and answer the health check SERVING), their `--conf` arguments (`conf_args`), a client
  bundle of one gateway's public services (`Endpoint`), and several gateways on one database with
  their Endpoints (`gateways`);
* the echo floor as a process (`EchoProcess`);
* machine and PostgreSQL probes: loadtest.probes; percentiles: loadtest.histogram; tables, plots
  and the sections of docs/benchmarks.md: loadtest.report.

A bench reaches the gateway through its public gRPC API and its command line only.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import AsyncIterator, Iterator, Sequence
from urllib.parse import urlsplit, urlunsplit

import grpc

from loadtest.gateway_process import REPO, GatewayProcess
from protos.metastore.v1 import admin_pb2 as apb
from protos.metastore.v1 import admin_pb2_grpc, catalog_pb2_grpc, events_pb2_grpc, transactions_pb2_grpc

__all__ = ["EchoProcess", "Endpoint", "GatewayProcess", "conf_args", "fresh_database", "gateways", "new_workdir",
           "postgres", "reply_size", "running", "start_gateway", "with_database", "workdir"]

CALL_TIMEOUT_S = 30.0


def new_workdir(prefix: str) -> Path:
    """A new temporary directory, world-readable: the embedded PostgreSQL may run as another user."""
    root = Path(tempfile.mkdtemp(prefix=prefix))
    root.chmod(0o755)
    return root


@contextlib.contextmanager
def workdir(prefix: str = "msgw-cons-", keep: bool = False) -> Iterator[Path]:
    """new_workdir(prefix), removed on exit unless `keep` (its gateway logs, for a failed run)."""
    root = new_workdir(prefix)
    try:
        yield root
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)


def conf_args(*items: str) -> list[str]:
    """`--conf K=V` arguments of `metastore-gateway serve` for each item."""
    return [arg for item in items for arg in ("--conf", item)]


def with_database(dsn: str, database: str) -> str:
    """`dsn` naming the database `database` instead."""
    parts = urlsplit(dsn)
    return urlunsplit((parts.scheme, parts.netloc, "/" + database, parts.query, parts.fragment))


@contextlib.asynccontextmanager
async def postgres(data_dir: Path, *, dsn: str | None = None, fast: bool = True, tcp_port: int = 0
                   ) -> AsyncIterator[str]:
    """The DSN of a PostgreSQL server: `dsn` when given, else an embedded server in `data_dir` (fsync
    off when `fast`; listening on 127.0.0.1:`tcp_port` too when given, for a JDBC client), stopped on exit."""
    if dsn is not None:
        yield dsn
        return
    from gateway.embedded_pg import UNSAFE_FAST_SETTINGS, EmbeddedPostgres

    settings = dict(UNSAFE_FAST_SETTINGS) if fast else {}
    pg = (EmbeddedPostgres(data_dir, settings=settings, port=tcp_port, tcp_host="127.0.0.1") if tcp_port
          else EmbeddedPostgres(data_dir, settings=settings))
    admin_dsn = await asyncio.to_thread(pg.start)
    try:
        yield admin_dsn
    finally:
        await asyncio.to_thread(pg.stop)


@contextlib.asynccontextmanager
async def fresh_database(dsn: str | None, prefix: str, workdir: Path) -> AsyncIterator[str]:
    """A new, migrated database: in the PostgreSQL server of `dsn`, or in an embedded server (fsync
    off) under `workdir`. Dropped (or the embedded server stopped) on exit."""
    import asyncpg

    from gateway.app import migrate_database

    async with postgres(workdir / "pg", dsn=dsn) as admin_dsn:
        name = f"{prefix}_{os.getpid()}_{int(time.time())}"
        conn = await asyncpg.connect(admin_dsn)
        try:
            await conn.execute(f"CREATE DATABASE {name}")
        finally:
            await conn.close()
        target = with_database(admin_dsn, name)
        try:
            await migrate_database(target)
            yield target
        finally:
            conn = await asyncpg.connect(admin_dsn)
            try:
                await conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            finally:
                await conn.close()


@dataclass
class Endpoint:
    """One gateway's public services on one channel; `reads_sent` counts what a driver sent it."""

    name: str
    address: str
    channel: grpc.aio.Channel
    catalog: catalog_pb2_grpc.CatalogStub
    txns: transactions_pb2_grpc.TransactionsStub
    admin: admin_pb2_grpc.AdminStub
    events: events_pb2_grpc.EventsStub
    reads_sent: int = 0

    @classmethod
    async def open(cls, name: str, address: str) -> Endpoint:
        channel = grpc.aio.insecure_channel(address)
        await asyncio.wait_for(channel.channel_ready(), 30)
        return cls(name, address, channel, catalog_pb2_grpc.CatalogStub(channel),
                   transactions_pb2_grpc.TransactionsStub(channel), admin_pb2_grpc.AdminStub(channel),
                   events_pb2_grpc.EventsStub(channel))

    async def stats(self) -> apb.CacheStatsResponse:
        return await self.admin.CacheStats(apb.CacheStatsRequest(), timeout=CALL_TIMEOUT_S)


@contextlib.asynccontextmanager
async def gateways(dsn: str, root: Path, names: Sequence[str], *conf: str,
                   log_prefix: str = "") -> AsyncIterator[list[Endpoint]]:
    """A gateway process per name on the database `dsn` with the `--conf` items `conf`, its log in
    `root/<log_prefix><name>.log`; yields their Endpoints once all are ready. Channels closed and
    processes stopped on exit."""
    procs = [GatewayProcess(["--dsn", dsn, *conf_args(*conf)], root / f"{log_prefix}{name}.log") for name in names]
    endpoints: list[Endpoint] = []
    try:
        for name, proc in zip(names, procs):
            endpoints.append(await Endpoint.open(name, await asyncio.to_thread(proc.wait_serving, 120)))
        yield endpoints
    finally:
        for ep in endpoints:
            await ep.channel.close()
        for proc in procs:
            await asyncio.to_thread(proc.stop)


async def start_gateway(*args: str, log_path: Path | None = None) -> GatewayProcess:
    """`metastore-gateway serve ARGS` as its own process, returned once its health check says SERVING."""
    proc = GatewayProcess(args, log_path)
    await asyncio.to_thread(proc.wait_serving, 120)
    return proc


@contextlib.asynccontextmanager
async def running(address: str) -> AsyncIterator[str]:
    """A `Target.start` for a server this bench started itself and stops itself."""
    yield address


def reply_size(address: str, request: bytes, method: str) -> int:
    """The size in bytes of the reply to `request` (what the echo floor must answer with)."""
    with grpc.insecure_channel(address) as channel:
        return len(channel.unary_unary(method)(request))


class EchoProcess:
    """The echo floor (loadtest/echo.py) in its own process, served by `python` (default: this one)."""

    def __init__(self, size: int, method: str, uvloop: bool, python: str = sys.executable) -> None:
        args = [python, "-m", "loadtest.echo", "--size", str(size), "--method", method]
        if not uvloop:
            args.append("--no-uvloop")
        self.proc = subprocess.Popen(args, cwd=REPO, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        m = re.search(r"listening on (\S+)", line)
        if not m:
            self.proc.kill()
            raise RuntimeError(f"echo server did not start: {line!r}")
        self.address = m.group(1)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
