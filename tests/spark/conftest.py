"""PySpark tests: one local[2] SparkSession for the whole session, and real gateway processes.

Java 17+ is the one prerequisite beyond the Python packages; without it (or without pyspark) the
tests that need Spark are skipped with the reason, the client tests still run. Tests marked `slow`
(a real spark-submit run) run only with SLOW=1.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from loadtest import gateway_process
from pipeline.client import ClientConfig, GatewayClient, close_process_clients
from protos.metastore.v1 import catalog_pb2 as pb
from tests.conftest import GatewayProcess

HERE = Path(__file__).resolve().parent


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "spark: PySpark side (pipeline/): real SparkSession and gateway processes")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.fspath)).parents and "slow" in item.keywords and os.environ.get("SLOW") != "1":
            item.add_marker(pytest.mark.skip(reason="slow (a real spark-submit); run with SLOW=1"))


def java_problem() -> str | None:
    """Why Spark cannot run here, or None."""
    home = os.environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    if not java or not os.path.exists(java):
        return "Java 17+ is needed for PySpark 4 and no java was found (install a JDK 17 or set JAVA_HOME)"
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60).stderr
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{java} -version failed: {exc}"
    m = re.search(r'version "(\d+)(?:\.(\d+))?', out)
    major = int(m.group(1)) if m else 0
    major = int(m.group(2)) if m and major == 1 and m.group(2) else major  # "1.8.0" is Java 8
    if major < 17:
        return f"PySpark 4 needs Java 17+, {java} is {out.splitlines()[0] if out else 'unknown'}"
    return None


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    problem = java_problem()
    if problem:
        pytest.skip(problem)
    pytest.importorskip("pyspark", reason="pyspark is in the dev extra: pip install -e '.[dev]'")
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable  # executors' Python workers: this venv, with grpc
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    session = (SparkSession.builder.master("local[2]").appName("metastore-gateway tests")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.sql.shuffle.partitions", "2").config("spark.default.parallelism", "2")
               .config("spark.pyspark.python", sys.executable)
               # Start-up over peak speed (C1 only, serial GC): about half the JVM's start and warm-up
               # time on a 2-core machine, and these tests move little data.
               .config("spark.driver.extraJavaOptions", "-XX:+UseSerialGC -XX:TieredStopAtLevel=1")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def spark_ready() -> None:
    """Skips the test unless a Hive-enabled session can run in a process of its own (Java 17+, pyspark)."""
    problem = java_problem()
    if problem:
        pytest.skip(problem)
    pytest.importorskip("pyspark")


@pytest.fixture
def gateway_address(pg_dsn: str) -> Iterator[str]:
    """A real gateway process on a fresh database (address host:port)."""
    proc = start_gateway(pg_dsn)
    try:
        yield proc.wait_serving()
    finally:
        close_process_clients()  # the jobs' driver-side channels (an open channel slows the gateway's stop)
        proc.stop()


def start_gateway(dsn: str, *conf: str, log_path: Path | None = None) -> gateway_process.GatewayProcess:
    """`metastore-gateway serve --dsn DSN` with `--conf` settings, as its own process; its output in
    `log_path` (kept) at INFO when given, else in a temporary file at WARNING."""
    args = ["--dsn", dsn, "--conf", "metastore.gateway.shutdown.grace=2s"]
    for item in conf:
        args += ["--conf", item]
    if log_path is None:
        return GatewayProcess(*args)
    return gateway_process.GatewayProcess(args, log_path, log_level="INFO")


@pytest.fixture
def client(gateway_address: str) -> Iterator[GatewayClient]:
    with GatewayClient(ClientConfig(gateway_address, unavailable_retries=2, backoff_initial_s=0.05)) as c:
        yield c


def create_table(client: GatewayClient, location: Path, db: str = "lake", table: str = "events",
                 keys: tuple[tuple[str, str], ...] = (("ds", "string"),)) -> pb.Table:
    """A managed transactional table at `location` (the database is created if missing)."""
    try:
        client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name=db)))
    except Exception:  # exists
        pass
    return client.catalog.CreateTable(pb.CreateTableRequest(table=pb.Table(
        db_name=db, name=table, table_type=pb.MANAGED, transactional=True,
        columns=[pb.FieldSchema(name="id", type="bigint"), pb.FieldSchema(name="payload", type="string")],
        partition_keys=[pb.FieldSchema(name=k, type=t) for k, t in keys],
        sd=pb.StorageDescriptor(location=f"file://{location}")))).table
