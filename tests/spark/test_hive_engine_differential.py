"""Hive 2.3's own SQL engine (org.apache.hadoop.hive.ql.Driver from pyspark's hive-exec jar, with DbTxnManager:
locks, txns and heartbeats through the metastore for every statement, DDL through its DDLTask) against the
gateway's Thrift port and against Hive Metastore 2.3.10, one script on both at once; each statement's rows
or error compared, after times, locations, ids and host names are masked.

The engine runs in a JVM of its own (tests/spark/hive_engine/HiveDriverScript.java, compiled here with javac).
pyspark's jars lack hive-llap-common, whose LlapSigner's types name in the signatures of a built-in function
(get_splits) that Hive's function registry loads on its first use; hive_engine/.../LlapSigner.java declares
those types, and nothing calls them. Hive's CBO (Calcite, not in pyspark's jars) is off; every SELECT is one the
fetch task serves (no MapReduce job). The reference Hive Metastore runs on Derby with hive.in.test, which makes
its TxnHandler create the transaction tables.

Where the gateway answers otherwise on purpose, DELIBERATE says why; the test fails on any other difference,
and on a listed one that went away. OPEN_BUGS are gateway differences found here and not fixed yet.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from loadtest.hms import QUICK_START_JVM_ARGS, hms_server, hms_unavailable_reason, pyspark_jars_dir
from tests.spark.conftest import java_problem, start_gateway

HERE = Path(__file__).resolve().parent / "hive_engine"
SOURCES = [HERE / "HiveDriverScript.java", HERE / "org/apache/hadoop/hive/llap/security/LlapSigner.java"]
# Hive 2.3's DbTxnManager, as a Hive CLI with ACID on runs it; Calcite is not among pyspark's jars.
ENGINE_SETTINGS = {
    "hive.support.concurrency": "true",
    "hive.txn.manager": "org.apache.hadoop.hive.ql.lockmgr.DbTxnManager",
    "hive.cbo.enable": "false",
    "hive.fetch.task.conversion": "more",
    "hive.stats.autogather": "false",
    "hive.exec.mode.local.auto": "false",
    # A statement that waits for a lock fails after two tries a second apart (Hive: 100 tries a minute apart).
    "hive.lock.numretries": "2",
    "hive.lock.sleep.between.retries": "1s",
    "hive.root.logger": "console",
    "hive.log.level": "WARN",
    "log4j2.contextSelector": "org.apache.logging.log4j.core.selector.BasicContextSelector",
}
OPENS = ("java.lang", "java.lang.reflect", "java.net", "java.nio", "java.util", "java.util.concurrent", "sun.nio.ch")
HMS_TXN_ARGS = (*(f"--add-opens=java.base/{p}=ALL-UNNAMED" for p in OPENS),  # Kryo, for get_partitions_by_expr
                "-Dhive.in.test=true", "-Dhive.support.concurrency=true",
                "-Dhive.txn.manager=org.apache.hadoop.hive.ql.lockmgr.DbTxnManager",
                "-Dhive.compactor.initiator.on=false", "-Dhive.compactor.worker.threads=0",
                # pyspark's jars lack BoneCP, Hive 2.3's default pool, which drop_database needs.
                "-Ddatanucleus.connectionPoolingType=dbcp")

STATEMENTS = [
    "SHOW DATABASES",
    "CREATE DATABASE lake",
    "CREATE DATABASE lake",
    "CREATE TABLE lake.orders (id BIGINT, amount DOUBLE) PARTITIONED BY (ds STRING, hr INT) STORED AS ORC",
    "CREATE TABLE lake.acid (id BIGINT, v STRING) CLUSTERED BY (id) INTO 2 BUCKETS STORED AS ORC "
    "TBLPROPERTIES ('transactional'='true')",
    "CREATE TABLE lake.acid_parts (id BIGINT, v STRING) PARTITIONED BY (ds STRING) CLUSTERED BY (id) INTO 2 BUCKETS "
    "STORED AS ORC TBLPROPERTIES ('transactional'='true')",
    "SHOW TABLES IN lake",
    "ALTER TABLE lake.orders ADD PARTITION (ds='2024-01-01', hr=1)",
    "ALTER TABLE lake.orders ADD PARTITION (ds='2024-01-01', hr=2) PARTITION (ds='2024-01-02', hr=1)",
    "ALTER TABLE lake.orders ADD PARTITION (ds='2024-01-01', hr=1)",
    "ALTER TABLE lake.orders ADD IF NOT EXISTS PARTITION (ds='2024-01-01', hr=1)",
    "ALTER TABLE lake.acid_parts ADD PARTITION (ds='2024-01-01')",
    # DDL of a transactional table, which Hive 2.3 sends outside any txn (each runs in a txn of its own here).
    "ALTER TABLE lake.acid_parts ADD PARTITION (ds='2024-01-02') PARTITION (ds='2024-01-03')",
    "ALTER TABLE lake.acid_parts DROP PARTITION (ds='2024-01-03')",
    "ALTER TABLE lake.acid SET TBLPROPERTIES ('note'='x')",
    "SHOW PARTITIONS lake.acid_parts",
    "SHOW PARTITIONS lake.orders",
    "SHOW PARTITIONS lake.orders PARTITION (ds='2024-01-01')",
    "ALTER TABLE lake.orders PARTITION (ds='2024-01-02', hr=1) RENAME TO PARTITION (ds='2024-01-03', hr=1)",
    "ALTER TABLE lake.orders PARTITION (ds='2024-01-09', hr=1) RENAME TO PARTITION (ds='2024-01-04', hr=1)",
    "ALTER TABLE lake.orders DROP PARTITION (ds='2024-01-01', hr=2)",
    "ALTER TABLE lake.orders DROP PARTITION (ds='2024-01-08', hr=2)",
    "ALTER TABLE lake.orders DROP IF EXISTS PARTITION (ds='2024-01-08', hr=2)",
    "SHOW PARTITIONS lake.orders",
    "DESCRIBE lake.orders",
    "DESCRIBE FORMATTED lake.orders",
    "DESCRIBE FORMATTED lake.orders PARTITION (ds='2024-01-01', hr=1)",
    "DESCRIBE FORMATTED lake.acid",
    "DESCRIBE EXTENDED lake.acid_parts",
    "SHOW CREATE TABLE lake.orders",
    "SHOW CREATE TABLE lake.acid",
    "SHOW TBLPROPERTIES lake.acid",
    "SELECT * FROM lake.orders",
    "SELECT id, ds FROM lake.orders WHERE ds = '2024-01-01' AND hr = 1",
    "SELECT * FROM lake.acid",
    "SELECT * FROM lake.acid_parts WHERE ds = '2024-01-01'",
    "SELECT * FROM lake.missing",
    "SHOW LOCKS",
    "SHOW TRANSACTIONS",
    "!open_txn",
    "!lock_shared lake.orders",
    "SHOW LOCKS",
    "SHOW LOCKS lake.orders",
    "SHOW LOCKS lake.orders EXTENDED",
    "SHOW LOCKS EXTENDED",
    "SHOW TRANSACTIONS",
    "!abort_txn",
    "SHOW LOCKS",
    "LOCK TABLE lake.orders SHARED",
    "UNLOCK TABLE lake.orders",
    "ALTER TABLE lake.acid COMPACT 'major'",
    "ALTER TABLE lake.acid_parts PARTITION (ds='2024-01-01') COMPACT 'minor'",
    "ALTER TABLE lake.orders COMPACT 'major'",
    "ALTER TABLE lake.acid_parts COMPACT 'major'",
    "SHOW COMPACTIONS",
    "ALTER TABLE lake.acid_parts ADD PARTITION (ds='2024-01-02')",  # exists: refused, its txn aborted
    "MSCK REPAIR TABLE lake.orders",
    "SHOW PARTITIONS lake.orders",
    "ALTER TABLE lake.orders RENAME TO lake.orders2",
    "SHOW TABLES IN lake",
    "DROP TABLE lake.orders2",
    "DROP TABLE lake.orders2",
    "DROP DATABASE lake",
    "DROP DATABASE lake CASCADE",
    "SHOW DATABASES",
]

# Differences on purpose (each statement's text: why).
DELIBERATE: dict[str, str] = {
    "ALTER TABLE lake.orders ADD PARTITION (ds='2024-01-01', hr=1)":
        "the gateway's own AlreadyExistsException text (it names the partitions; Hive 2.3 prints the Thrift struct)",
    "DROP DATABASE lake": "the gateway's own InvalidOperationException text: Hive's sentence, then the tables it names",
    "ALTER TABLE lake.acid_parts ADD PARTITION (ds='2024-01-02')": "the gateway's own AlreadyExistsException text",
}
# Gateway differences found here and NOT fixed yet (not deliberate: open work, each with what is wrong).
OPEN_BUGS: dict[str, str] = {}

# Masks for what differs by nature: times, ids of locks and txns, the host, each run's warehouse.
MASKS = [
    (re.compile(r"file:[^\s'\"\t,)]*"), "<location>"),
    (re.compile(r"\b[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d [A-Z]{3,4} \d{4}\b"), "<time>"),
    (re.compile(r"\b1\d{9,12}\b"), "<time>"),  # seconds or milliseconds since 1970
    (re.compile(r"(transient_lastDdlTime'?\s*[=:]\s*'?)\d+"), r"\1<time>"),
]


def masked(results: list[dict[str, Any]], host: str) -> list[dict[str, Any]]:
    out = []
    for r in results:
        def mask(text: str) -> str:
            for pattern, repl in MASKS:
                text = pattern.sub(repl, text)
            return text.replace(host, "<host>")

        sql = r["sql"]
        rows = [mask(row) for row in r.get("rows", [])]
        if sql.startswith("SHOW LOCKS") or sql.startswith("SHOW TRANSACTIONS"):
            ids = re.compile(r"\d+(\.\d+)?")  # lock ids (25.1: the request and its component), txn ids
            rows = [row if i == 0 else "\t".join("<id>" if ids.fullmatch(c) else c for c in row.split("\t"))
                    for i, row in enumerate(rows)]
        error = r.get("error")
        out.append({"sql": sql, "rows": rows, "error": error and mask(error)})
    return out


def compile_engine(classes: Path) -> None:
    jars = pyspark_jars_dir()
    javac = shutil.which("javac") or "javac"
    subprocess.run([javac, "-nowarn", "-cp", f"{jars}/*", "-d", str(classes), *map(str, SOURCES)], check=True,
                   capture_output=True, timeout=120)


async def run_engine(uri: str, classes: Path, workdir: Path, script: Path) -> list[dict[str, Any]]:
    java = shutil.which("java") or "java"
    workdir.mkdir(parents=True)
    settings = {**ENGINE_SETTINGS, "java.io.tmpdir": str(workdir / "tmp"), "hive.log.dir": str(workdir),
                "hive.exec.scratchdir": str(workdir / "scratch"), "hive.exec.local.scratchdir": str(workdir / "local"),
                "hive.querylog.location": str(workdir / "querylog")}
    out = workdir / "out.json"
    cmd = [java, *QUICK_START_JVM_ARGS, *(f"--add-opens=java.base/{p}=ALL-UNNAMED" for p in OPENS),
           *(f"-D{k}={v}" for k, v in settings.items()), "-cp", f"{classes}:{pyspark_jars_dir()}/*",
           "HiveDriverScript", uri, f"file:{workdir / 'warehouse'}", str(script), str(out)]
    log = workdir / "engine.log"
    with open(log, "wb") as sink:
        proc = await asyncio.create_subprocess_exec(*cmd, cwd=workdir, stdout=sink, stderr=sink)
    try:
        async with asyncio.timeout(240):
            await proc.wait()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0 and out.exists(), log.read_text(errors="replace")[-4000:]
    return list(json.loads(out.read_text()))


@pytest.fixture(scope="module")
def engine_ready() -> None:
    problem = java_problem() or hms_unavailable_reason()
    if problem:
        pytest.skip(problem)


def test_hive_engine_runs_against_the_gateway_as_against_hive_metastore(engine_ready: None, pg_dsn: str,
                                                                       tmp_path: Path) -> None:
    started = time.monotonic()
    if shutil.which("javac") is None:
        pytest.skip("no javac (a JDK 17) to compile the Hive engine's driver class")
    classes = tmp_path / "classes"
    script = tmp_path / "script.hql"
    script.write_text("\n".join(STATEMENTS) + "\n", encoding="utf-8")

    compiled: asyncio.Future[None] | None = None

    async def engine(uri: str, workdir: Path) -> list[dict[str, Any]]:
        assert compiled is not None
        await compiled
        return await run_engine(uri, classes, workdir, script)

    async def on_the_gateway() -> list[dict[str, Any]]:
        gateway = start_gateway(pg_dsn, f"hive.metastore.warehouse.dir=file:{tmp_path / 'gw-warehouse'}")
        try:
            await asyncio.to_thread(gateway.wait_serving)
            assert gateway.thrift_address, gateway.output()[-2000:]
            return await engine(f"thrift://{gateway.thrift_address}", tmp_path / "gw")
        finally:
            await asyncio.to_thread(gateway.stop)

    async def on_hive_metastore() -> list[dict[str, Any]]:
        async with hms_server(quick_start=True, jvm_args=HMS_TXN_ARGS) as address:
            return await engine(f"thrift://{address}", tmp_path / "hms")

    async def both() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        nonlocal compiled
        # javac runs while the two metastores start.
        compiled = asyncio.ensure_future(asyncio.to_thread(compile_engine, classes))
        async with asyncio.TaskGroup() as group:
            ours = group.create_task(on_the_gateway())
            theirs = group.create_task(on_hive_metastore())
        return ours.result(), theirs.result()

    ours, theirs = asyncio.run(both())
    host = socket.gethostname()
    mine, hive = masked(ours, host), masked(theirs, host)
    assert [r["sql"] for r in mine] == [r["sql"] for r in hive]
    listed = DELIBERATE.keys() | OPEN_BUGS.keys()
    differences = [(a["sql"], a, b) for a, b in zip(mine, hive) if a != b and a["sql"] not in listed]
    print(f"ran in {time.monotonic() - started:.1f} s")
    assert not differences, json.dumps(differences, indent=1)[:12000]
    gone = listed - {a["sql"] for a, b in zip(mine, hive) if a != b}
    assert not gone, f"listed as differing but now the same as Hive's (take them off the list): {sorted(gone)}"
