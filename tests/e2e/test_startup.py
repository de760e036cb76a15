"""`metastore-gateway` as an operator starts it: each start-up failure is one line naming the cause
and the fix (no traceback), unknown MSGW_ variables are warned about, `settings` shows effective
values with their source, and the data directory does not depend on the current directory."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import asyncpg

from gateway.config import default_data_dir, load_settings, data_dir_of
from tests.conftest import REPO, GatewayProcess, PgCluster


def cli(*argv: str, env: dict[str, str] | None = None, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MSGW_")}
    return subprocess.run([sys.executable, "-m", "gateway.cli", *argv], capture_output=True, text=True, timeout=120,
                          env={**clean, **(env or {})}, cwd=cwd)


def our_lines(stderr: str) -> list[str]:
    """What the gateway itself wrote (grpcio's C core may add its own absl preamble)."""
    return [line for line in stderr.splitlines() if line.startswith("metastore-gateway")]


def test_port_in_use_is_one_line(pg_dsn: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        grpc_taken = cli("serve", "--dsn", pg_dsn, "--port", str(port), "--conf", "hive.metastore.port=0")
        thrift_taken = cli("serve", "--dsn", pg_dsn, "--port", "0", "--conf", f"hive.metastore.port={port}")
    assert grpc_taken.returncode == 1 and "Traceback" not in grpc_taken.stderr
    assert our_lines(grpc_taken.stderr) == [
        f"metastore-gateway: cannot serve: cannot listen on 127.0.0.1:{port}: the port is in use (another gateway?) "
        "or the address is not one of this host's; stop the other process or choose another port with "
        "metastore.gateway.port (--port)"]
    assert thrift_taken.returncode == 1 and "Traceback" not in thrift_taken.stderr
    assert len(our_lines(thrift_taken.stderr)) == 1 and "hive.metastore.port" in thrift_taken.stderr


async def _empty_database(dsn: str) -> str:
    """A database beside `dsn`'s with no tables (not migrated)."""
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute("CREATE DATABASE not_migrated")
    finally:
        await conn.close()
    return urlsplit(dsn)._replace(path="/not_migrated").geturl()


async def _tables(dsn: str) -> list[str]:
    conn = await asyncpg.connect(dsn)
    try:
        return [r["tablename"] for r in await conn.fetch("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]
    finally:
        await conn.close()


def test_a_port_in_use_is_found_before_the_database_is_touched(pg_dsn: str, tmp_path: Path) -> None:
    """Every port is checked before anything starts. Before, the shared database's schema was migrated (under
    gateways still running the old version, in an upgrade) and the embedded PostgreSQL started, and only
    then did the Thrift or metrics port turn out to be taken."""
    empty = asyncio.run(_empty_database(pg_dsn))
    tmp_path.chmod(0o755)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        shared = cli("serve", "--dsn", empty, "--port", "0", "--conf", f"hive.metastore.port={port}")
        embedded = cli("serve", "--data-dir", str(tmp_path / "data"), "--port", "0", "--conf", "hive.metastore.port=0",
                       "--conf", f"metastore.gateway.metrics.port={port}")
    assert shared.returncode == 1 and "hive.metastore.port" in " ".join(our_lines(shared.stderr)), shared.stderr
    assert asyncio.run(_tables(empty)) == []  # not migrated
    assert embedded.returncode == 1, embedded.stderr
    assert our_lines(embedded.stderr) == [
        f"metastore-gateway: cannot serve: cannot listen on 127.0.0.1:{port}: the port is in use (another gateway?) "
        "or the address is not one of this host's; stop the other process or choose another port with "
        "metastore.gateway.metrics.port"]
    assert not list((tmp_path / "data").rglob("PG_VERSION"))  # no PostgreSQL was made, let alone started


def test_unreachable_dsn_and_bad_config_are_one_line(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        free = s.getsockname()[1]
    unreachable = cli("serve", "--dsn", f"postgresql://app:secret@127.0.0.1:{free}/meta", "--port", "0")
    assert unreachable.returncode == 1 and "Traceback" not in unreachable.stderr
    [line] = our_lines(unreachable.stderr)
    assert f"cannot connect to the database at 127.0.0.1:{free}/meta" in line and "--dsn" in line
    assert "secret" not in unreachable.stderr
    bad = cli("serve", "--conf", "hive.txn.timeout=soon")
    assert bad.returncode == 2 and our_lines(bad.stderr) == [
        "metastore-gateway: cannot serve: hive.txn.timeout: 'soon' is not a duration (examples: 300s, 100ms, 5m)"]
    config = tmp_path / "gateway.toml"
    config.write_text('[hive.txn]\ntimeout = "5m"\nno_such = 1\n')
    unknown = cli("migrate", "--config", str(config))
    assert unknown.returncode == 2 and len(our_lines(unknown.stderr)) == 1 and "no_such" in unknown.stderr


def test_settings_show_effective_values_and_sources(tmp_path: Path) -> None:
    config = tmp_path / "gateway.toml"
    config.write_text('[hive.txn]\ntimeout = "5m"\n')
    shown = cli("settings", "--config", str(config), "--conf", "hive.metastore.port=9999", "--json",
                env={"MSGW_HIVE_LOCK_NUMRETRIES": "7", "MSGW_HIVE_TXN_TIMOUT": "1s"})
    assert shown.returncode == 0, shown.stderr
    rows = {r["key"]: r for r in json.loads(shown.stdout)}
    assert (rows["hive.txn.timeout"]["value"], rows["hive.txn.timeout"]["source"]) == (300.0, str(config))
    assert (rows["hive.metastore.port"]["value"], rows["hive.metastore.port"]["source"]) == (9999, "command line")
    assert (rows["hive.lock.numretries"]["value"], rows["hive.lock.numretries"]["source"]) == (
        7, "MSGW_HIVE_LOCK_NUMRETRIES")
    assert (rows["hive.txn.max.open.batch"]["value"], rows["hive.txn.max.open.batch"]["source"]) == (1000, "default")
    assert Path(rows["metastore.gateway.data.dir"]["value"]).is_absolute()
    # The misspelt variable is named, with the way to find the right one.
    [warning] = our_lines(shown.stderr)
    assert "MSGW_HIVE_TXN_TIMOUT" in warning and "metastore-gateway settings" in warning
    text = cli("settings", "--dsn", "postgresql://app:secret@db.example:5433/meta")
    dsn_line = next(line for line in text.stdout.splitlines() if line.startswith("metastore.gateway.dsn"))
    assert "db.example:5433/meta" in dsn_line and "secret" not in text.stdout
    # --json too (it printed the DSN with its password), from any source
    as_json = cli("settings", "--json", env={"MSGW_METASTORE_GATEWAY_DSN": "postgresql://app:secret@db.example/meta"})
    [dsn_row] = [r for r in json.loads(as_json.stdout) if r["key"] == "metastore.gateway.dsn"]
    assert dsn_row["value"] == "postgresql://app:***@db.example/meta" and "secret" not in as_json.stdout


def test_the_data_directory_does_not_depend_on_the_current_directory(tmp_path: Path) -> None:
    default = load_settings(environ={})
    assert data_dir_of(default) == default_data_dir() and default_data_dir().is_absolute()
    relative = load_settings(environ={}, overrides={"metastore.gateway.data.dir": "some/where"})
    assert data_dir_of(relative) == (Path.cwd() / "some" / "where").resolve()


def test_the_startup_line_names_the_data_directory() -> None:
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="msgw-startup-"))  # not tmp_path: other pytest sessions prune it
    root.chmod(0o755)
    proc = GatewayProcess("--data-dir", str(root / "data"), "--conf", "metastore.gateway.embedded.unsafe.fast=true",
                          "--conf", "metastore.gateway.metrics.port=0")
    try:
        proc.wait_serving()
    finally:
        proc.stop()
        shutil.rmtree(root, ignore_errors=True)
    line = next(line for line in proc.output().splitlines() if "serving on" in line)
    assert f"data directory {root / 'data'}" in line and "metrics on http://127.0.0.1:" in line
    assert ":***@" in line  # the password is not printed


def test_the_pipeline_checks_the_gateway_before_it_starts_spark() -> None:
    import time

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        free = f"127.0.0.1:{s.getsockname()[1]}"
    clean = {k: v for k, v in os.environ.items() if k != "METASTORE_GATEWAY_ADDRESS"}
    started = time.monotonic()
    nobody = subprocess.run([sys.executable, "-m", "pipeline", "--address", free, "write", "sales", "orders",
                             "/nonexistent.json"], capture_output=True, text=True, timeout=120, env=clean, cwd=REPO)
    missing = subprocess.run([sys.executable, "-m", "pipeline", "snapshot-read", "sales", "orders"],
                             capture_output=True, text=True, timeout=120, env=clean, cwd=REPO)
    assert time.monotonic() - started < 30  # no Spark was started (that takes about a minute here)
    assert nobody.returncode == 2 and f"no metastore gateway answers at {free}" in nobody.stderr
    assert missing.returncode == 2 and "no metastore gateway address" in missing.stderr
    assert "Traceback" not in nobody.stderr + missing.stderr


def test_a_dsn_without_a_database_path_is_never_printed_with_its_password() -> None:
    dsn = "postgresql://app:s3cret@?host=/nonexistent"
    failed = cli("serve", "--dsn", dsn, "--port", "0", "--conf", "hive.metastore.port=0")
    assert failed.returncode == 1 and "Traceback" not in failed.stderr
    [line] = our_lines(failed.stderr)
    assert "cannot connect to the database at postgresql://app:***@?host=/nonexistent" in line
    shown = cli("settings", "--dsn", dsn)
    assert shown.returncode == 0, shown.stderr
    dsn_line = next(line for line in shown.stdout.splitlines() if line.startswith("metastore.gateway.dsn"))
    assert "app:***@?host=/nonexistent" in dsn_line
    assert "s3cret" not in failed.stderr + shown.stdout + shown.stderr


async def test_the_startup_line_hides_a_password_given_as_a_query_parameter(pg_dsn: str) -> None:
    from urllib.parse import quote, urlsplit

    from gateway.app import startup_line
    from tests.conftest import running_gateway

    parts = urlsplit(pg_dsn)
    assert parts.password and parts.username
    # The same database, its password moved from the user part into the query string (libpq's form).
    dsn = (f"postgresql://{parts.username}@{parts.netloc.rpartition('@')[2]}{parts.path}?{parts.query}"
           f"&password={quote(parts.password, safe='')}")
    async with running_gateway(dsn) as gw:
        line = startup_line(gw)
    assert "password=***" in line and parts.password not in line


def test_a_bad_log_level_metrics_port_or_acquire_timeout_is_one_line() -> None:
    for argv, env, named in (
            (("--log-level", "verbose"), {}, "--log-level (MSGW_LOG_LEVEL): 'verbose' is not a log level"),
            ((), {"MSGW_LOG_LEVEL": "loud"}, "'loud' is not a log level"),
            (("--conf", "metastore.gateway.metrics.port=70000"), {},
             "metastore.gateway.metrics.port: 70000 is not a TCP port"),
            (("--conf", "metastore.gateway.pool.acquire.timeout=0"), {},
             "metastore.gateway.pool.acquire.timeout: must be a positive duration")):
        refused = cli("serve", "--port", "0", *argv, env=env)
        assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
        [line] = our_lines(refused.stderr)
        assert named in line


async def test_a_pool_of_one_connection_serves(pg_dsn: str) -> None:
    """datanucleus.connectionPool.maxPoolSize=1 is Hive's to allow: below the pool's usual two idle
    connections, the pool keeps one."""
    from protos.metastore.v1 import catalog_pb2 as pb
    from protos.metastore.v1 import transactions_pb2 as tpb
    from protos.metastore.v1 import transactions_pb2_grpc
    from tests.conftest import connect, running_gateway

    async with running_gateway(pg_dsn, **{"datanucleus.connectionPool.maxPoolSize": "1"}) as gw:
        assert gw.database.stats()["max"] == 1
        client = await connect(f"127.0.0.1:{gw.port}")
        try:
            await client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="sales")))
            got = await client.catalog.GetDatabase(pb.GetDatabaseRequest(name="sales"))
            assert got.database.name == "sales"
            txns = transactions_pb2_grpc.TransactionsStub(client.channel)
            txn = (await txns.OpenTxns(tpb.OpenTxnsRequest(num_txns=1, user="writer", hostname="h1"))).txn_ids[0]
            await txns.CommitTxn(tpb.CommitTxnRequest(txn_id=txn))
        finally:
            await client.channel.close()


def test_a_certificate_that_will_not_load_is_a_bad_setting_not_a_port_in_use(pg_dsn: str, tmp_path: Path) -> None:
    junk = tmp_path / "not-pem"
    junk.write_text("not a certificate\n")
    refused = cli("serve", "--dsn", pg_dsn, "--port", "0", "--conf", "hive.metastore.port=0",
                  "--conf", f"metastore.gateway.tls.cert.file={junk}",
                  "--conf", f"metastore.gateway.tls.key.file={junk}")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
    [line] = our_lines(refused.stderr)
    assert f"metastore.gateway.tls.cert.file ({junk}) and metastore.gateway.tls.key.file ({junk}): cannot load" in line
    assert "port is in use" not in line


def test_settings_read_a_bare_number_in_the_unit_hive_gives_the_key() -> None:
    shown = cli("settings", "--json", "--conf", "hive.compactor.cleaner.run.interval=5000",
                "--conf", "hive.txn.timeout=300")
    assert shown.returncode == 0, shown.stderr
    rows = {r["key"]: r["value"] for r in json.loads(shown.stdout)}
    assert (rows["hive.compactor.cleaner.run.interval"], rows["hive.txn.timeout"]) == (5.0, 300.0)


def test_a_dsn_that_cannot_be_used_as_written_is_a_bad_setting(pg_dsn: str, tmp_path: Path) -> None:
    """A DSN asyncpg cannot read (a password with an unescaped `#` or `@`, a port that is not a number), a
    parameter it refuses (sslmode) or one PostgreSQL refuses at connect was a 40-line traceback, the
    first quoting part of the password (`invalid literal for int() with base 10: 'pw'`); now one line
    naming metastore.gateway.dsn, exit status 2. So is a config file that is not UTF-8 (TOML is)."""
    for dsn, named in (("postgresql://app:pw#Xyzzy42@127.0.0.1:5432/meta", "not a PostgreSQL URL asyncpg can read"),
                       ("postgresql://app:pwXyzzy42@127.0.0.1:54x32/meta", "not a PostgreSQL URL asyncpg can read"),
                       ("postgresql://app:pw@Xyzzy42@127.0.0.1:5432/meta", "holds an @ that is not percent-encoded"),
                       (f"{pg_dsn}&sslmode=bogus", "`sslmode` parameter must be one of"),
                       (f"{pg_dsn}&no_such_setting=1", 'unrecognized configuration parameter "no_such_setting"')):
        refused = cli("serve", "--dsn", dsn, "--port", "0", "--conf", "hive.metastore.port=0")
        assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
        [line] = our_lines(refused.stderr)
        assert line.startswith("metastore-gateway: cannot serve: metastore.gateway.dsn (--dsn): ") and named in line
        assert "Xyzzy42" not in refused.stderr and "'pw'" not in refused.stderr
    config = tmp_path / "gateway.toml"
    config.write_bytes(b"\xff\xfemetastore.gateway.port = 1\n")
    unreadable = cli("serve", "--config", str(config))
    assert unreadable.returncode == 2 and "Traceback" not in unreadable.stderr, unreadable.stderr
    [line] = our_lines(unreadable.stderr)
    assert f"cannot read config file {config}" in line


async def test_a_database_user_without_the_rights_to_its_tables_is_one_line(pg_cluster: PgCluster) -> None:
    """A user that may connect but not create tables (PostgreSQL 15 and later no longer let every user
    create in schema public) was a traceback from the schema migration."""
    role, database = f"nocreate{os.getpid()}", f"nocreate{os.getpid()}"
    admin = await asyncpg.connect(pg_cluster.dsn("postgres"))
    try:
        await admin.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'rolepw'")
        await admin.execute(f"CREATE DATABASE {database}")
        query = urlsplit(pg_cluster.dsn(database)).query
        started = await asyncio.to_thread(cli, "serve", "--dsn", f"postgresql://{role}:rolepw@/{database}?{query}",
                                          "--port", "0", "--conf", "hive.metastore.port=0")
    finally:
        await admin.execute(f"DROP DATABASE IF EXISTS {database}")
        await admin.execute(f"DROP ROLE IF EXISTS {role}")
        await admin.close()
    assert started.returncode == 1 and "Traceback" not in started.stderr, started.stderr
    [line] = our_lines(started.stderr)
    assert f"refused the gateway's user {role} a step of its start-up (permission denied for schema public)" in line
    assert "GRANT CREATE ON SCHEMA public" in line and "rolepw" not in started.stderr


async def test_a_statement_timeout_that_cuts_the_start_up_is_one_line(pg_cluster: PgCluster, pg_dsn: str) -> None:
    """A statement_timeout set on the database (here 200 ms, the migration's read of the schema version
    waiting on a lock a DBA holds) was a traceback."""
    database = urlsplit(pg_dsn).path.lstrip("/")
    admin = await asyncpg.connect(pg_cluster.dsn("postgres"))
    holder = await asyncpg.connect(pg_dsn)
    try:
        await admin.execute(f"ALTER DATABASE {database} SET statement_timeout = '200ms'")
        async with holder.transaction():
            await holder.execute("LOCK TABLE schema_version IN ACCESS EXCLUSIVE MODE")
            started = await asyncio.to_thread(cli, "serve", "--dsn", pg_dsn, "--port", "0", "--conf",
                                              "hive.metastore.port=0")
    finally:
        await holder.close()
        await admin.execute(f"ALTER DATABASE {database} RESET statement_timeout")
        await admin.close()
    assert started.returncode == 1 and "Traceback" not in started.stderr, started.stderr
    [line] = our_lines(started.stderr)
    assert "cancelled a statement of the gateway's start-up (canceling statement due to statement timeout)" in line
    assert "statement_timeout" in line.split("):", 1)[1]
