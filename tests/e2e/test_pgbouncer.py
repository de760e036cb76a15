"""The gateway behind a real PgBouncer (Debian's, `make pgbouncer`), as sites that pool their metastore
database's connections run it. Session pooling: it starts, serves both protocols, and its poller's
LISTEN works through the pooler (a write made by another gateway, connected directly, is applied within
seconds, where the poll timer alone would take Hive's 60 s). Before, no connection could be made: the
session settings went as startup parameters, which PgBouncer refuses. Transaction pooling hands each
transaction another server connection, which the gateway cannot work with (prepared statements, LISTEN,
the migrations' session lock): start-up fails in one line saying what to change."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator
from urllib.parse import parse_qs, urlsplit

import grpc
import pytest

from gateway.app import Gateway
from gateway.config import load_settings
from gateway.embedded_pg import SYSTEM_USER
from gateway.thrift.idl import hms
from protos.metastore.v1 import catalog_pb2 as pb
from tests.conftest import REPO, connect
from tests.thrift_client import ThriftClient

VENV_PGBOUNCER = Path(sys.prefix) / "pgbouncer"  # where `make pgbouncer` unpacks Debian's package


def _pgbouncer() -> tuple[list[str], dict[str, str]] | None:
    """The command that runs PgBouncer and its environment, or None when there is none."""
    on_path = shutil.which("pgbouncer")
    if on_path:
        return [on_path], {}
    unpacked = VENV_PGBOUNCER / "usr" / "sbin" / "pgbouncer"
    if unpacked.exists():
        return [str(unpacked)], {"LD_LIBRARY_PATH": str(VENV_PGBOUNCER / "usr" / "lib" / "x86_64-linux-gnu")}
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def pooler(pg_dsn: str, tmp_path: Path) -> Iterator[int]:
    """PgBouncer on a free port in front of the test's database: `session` and `transaction`, one
    database entry for each pool mode."""
    found = _pgbouncer()
    if found is None:
        pytest.skip("no PgBouncer: not on PATH, and `make pgbouncer` could not take Debian's package")
    command, env = found
    dsn = urlsplit(pg_dsn)
    query = parse_qs(dsn.query)
    server = (f"host={query['host'][0]} port={query['port'][0]} dbname={dsn.path.lstrip('/')} "
              f"user={dsn.username} password={dsn.password}")
    port = _free_port()
    config = tmp_path / "pgbouncer.ini"
    config.write_text(f"""[databases]
session = {server} pool_mode=session
transaction = {server} pool_mode=transaction
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {port}
unix_socket_dir =
auth_type = any
max_client_conn = 100
default_pool_size = 12
""")
    # PgBouncer will not run as root: as root, it runs as the embedded PostgreSQL's own user, who may
    # reach the server's socket directory.
    as_user = ["-u", SYSTEM_USER] if os.geteuid() == 0 else []
    proc = subprocess.Popen([*command, *as_user, str(config)], env={**os.environ, **env},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None, f"PgBouncer exited: {proc.stdout.read() if proc.stdout else ''}"
                assert time.monotonic() < deadline, "PgBouncer did not listen within 15 s"
                time.sleep(0.05)
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


async def test_a_gateway_behind_pgbouncer_in_session_mode_serves_and_follows_the_log(
        pooler: int, pg_dsn: str, tmp_path: Path) -> None:
    def gateway(dsn: str) -> Gateway:
        return Gateway(load_settings(environ={}, overrides={
            "metastore.gateway.dsn": dsn, "metastore.gateway.port": 0, "hive.metastore.port": 0,
            "hive.metastore.warehouse.dir": str(tmp_path / "warehouse")}))

    pooled, direct = gateway(f"postgresql://postgres@127.0.0.1:{pooler}/session"), gateway(pg_dsn)
    await pooled.start()
    await direct.start()
    client, other = await connect(f"127.0.0.1:{pooled.port}"), await connect(f"127.0.0.1:{direct.port}")
    thrift = ThriftClient(pooled.thrift_port)
    try:
        await client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="pooled")))
        txn = await thrift("open_txns", hms.OpenTxnRequest(num_txns=1, user="u", hostname="h"))
        await thrift("commit_txn", hms.CommitTxnRequest(txnid=txn.txn_ids[0]))
        written = await other.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="direct")))
        assert pooled.poller is not None
        async with asyncio.timeout(5):  # NOTIFY through the pooler; the poll timer is Hive's 60 s
            while pooled.poller.position < written.event_id:
                await asyncio.sleep(0.01)
        assert pooled.cache is not None and "direct" in pooled.cache.databases
        assert {"default", "pooled", "direct"} <= set(await thrift("get_all_databases"))
        got = await client.catalog.GetDatabase(pb.GetDatabaseRequest(name="direct"))
        assert got.database.name == "direct"
    except grpc.aio.AioRpcError as exc:
        pytest.fail(f"{exc.code().name}: {exc.details()}")
    finally:
        thrift.close()
        await client.channel.close()
        await other.channel.close()
        await pooled.stop()
        await direct.stop()


def test_a_gateway_behind_pgbouncer_in_transaction_mode_says_so_in_one_line(pooler: int) -> None:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MSGW_")}
    run = subprocess.run([sys.executable, "-m", "gateway.cli", "serve", "--dsn",
                          f"postgresql://postgres@127.0.0.1:{pooler}/transaction", "--port", "0", "--conf",
                          "hive.metastore.port=0"], capture_output=True, text=True, timeout=120, env=clean, cwd=REPO)
    ours = [line for line in run.stderr.splitlines() if line.startswith("metastore-gateway")]
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    assert len(ours) == 1 and "pool_mode = session" in ours[0] and f"127.0.0.1:{pooler}/transaction" in ours[0], ours
