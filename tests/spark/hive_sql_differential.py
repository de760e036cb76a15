"""What the Spark SQL differential tests share: a script's session run in its own process
(tests/spark/hive_sql_script.py) against the gateway and against the real Hive Metastore 2.3.10 at once,
and the normalization of what differs by nature between the two runs.

Left out of the comparison: times, locations (each run has its own warehouse), the name of a data file
in an error (its directory kept), and the file statistics Hive's metastore reads from the file system (numFiles,
totalSize; the gateway never reads the data files).

To find the metastore call behind a difference, run with SPARK_DIFFERENTIAL_LOGS=1: the work directory
(pytest's tmp_path, under --basetemp) then keeps gateway.log (INFO, one access-log line per call, in order)
and hms/hms.log (Hive's log at INFO: its audit line per call, with the call's arguments), beside gw.json
and hms.json, each statement's answer and time.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path
from typing import Any, Sequence

from loadtest.hms import hms_server, hms_unavailable_reason
from tests.spark.conftest import start_gateway

SCRIPT = Path(__file__).resolve().parent / "hive_sql_script.py"
VOLATILE_ROWS = ("Created Time", "Last Access", "transient_lastDdlTime", "numFiles", "totalSize")
VOLATILE_PARAMETERS = re.compile(r"(, )?\b(transient_lastDdlTime|numFiles|totalSize)=[^,\]]*")
# The same inside SHOW TABLE EXTENDED's text (lines) and SHOW CREATE TABLE's (TBLPROPERTIES entries).
VOLATILE_LINES = re.compile(r"^(Created Time|Last Access): .*\n", re.MULTILINE)
VOLATILE_PROPERTIES = re.compile(r"(,\n)?\s*'(transient_lastDdlTime|numFiles|totalSize)' = '[^']*'")
# The name of a data file Spark wrote (part-00000-<uuid>-c000.zstd.orc), which an error reading it shows: its
# UUID is the write's random one, and of a directory's files the error names the one whose task failed first.
DATA_FILE = re.compile(r"\bpart-\d+-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?:[-.]\w+)*")

Results = list[dict[str, Any]]


async def run_script(uri: str, warehouse: Path, out: Path, statements: Sequence[str] | None = None) -> Results:
    """The script's session against the metastore at `uri` (hive_sql_script.py's STATEMENTS, or
    `statements`); cancelled, its process is killed."""
    args = [sys.executable, str(SCRIPT), uri, str(warehouse), str(out)]
    if statements is not None:
        listed = out.with_suffix(".statements.json")
        listed.write_text(json.dumps(list(statements), indent=1))
        args.append(str(listed))
    script = await asyncio.create_subprocess_exec(*args, stdout=asyncio.subprocess.DEVNULL,
                                                  stderr=asyncio.subprocess.PIPE)
    try:
        async with asyncio.timeout(600):
            _, stderr = await script.communicate()
    finally:
        if script.returncode is None:
            script.kill()
            await script.wait()
    assert script.returncode == 0 and out.exists(), stderr.decode(errors="replace")[-4000:]
    return json.loads(out.read_text())


async def run_on_both(pg_dsn: str, workdir: Path, statements: Sequence[str] | None = None, *,
                      quick_start: bool = False) -> tuple[Results, Results | None]:
    """The script on a gateway serving `pg_dsn` and on a Hive Metastore 2.3.10, at once (each waits on its
    metastore and Spark's jobs far more than it computes). Hive's results are None when it is not available
    (hms_unavailable_reason). The warehouses are workdir/gw-warehouse and workdir/hms-warehouse."""
    reason = hms_unavailable_reason()
    logs = os.environ.get("SPARK_DIFFERENTIAL_LOGS") == "1"

    async def on_the_gateway() -> Results:
        # Spark's warehouse (spark.sql.warehouse.dir) is the gateway's to change: the locations Spark sends lie there.
        roots = f"metastore.gateway.data.roots={workdir / 'gw-warehouse'}"
        if logs:
            gateway = start_gateway(pg_dsn, roots, "metastore.gateway.access.log=true",
                                    log_path=workdir / "gateway.log")
        else:
            gateway = start_gateway(pg_dsn, roots)
        try:
            await asyncio.to_thread(gateway.wait_serving)
            assert gateway.thrift_address, gateway.output()[-2000:]
            return await run_script(f"thrift://{gateway.thrift_address}", workdir / "gw-warehouse",
                                    workdir / "gw.json", statements)
        finally:
            await asyncio.to_thread(gateway.stop)

    async def on_hive_metastore() -> Results:
        # dbcp: pyspark's jars lack BoneCP, Hive 2.3's default pool, which drop_database needs.
        async with hms_server(workdir=workdir / "hms" if logs else None, log_level="INFO" if logs else "WARN",
                              jvm_args=["-Ddatanucleus.connectionPoolingType=dbcp"],
                              quick_start=quick_start) as address:
            return await run_script(f"thrift://{address}", workdir / "hms-warehouse", workdir / "hms.json",
                                    statements)

    async with asyncio.TaskGroup() as group:
        gateway_run = group.create_task(on_the_gateway())
        hive_run = None if reason else group.create_task(on_hive_metastore())
    return gateway_run.result(), None if hive_run is None else hive_run.result()


def normalised(results: Results, warehouse: Path) -> Results:
    """Each statement's rows and error with the run's warehouse as `<warehouse>` and the volatile rows,
    parameters and lines left out."""
    out = []
    for r in results:
        rows = []
        for row in r.get("rows", []):
            if row and row[0] in VOLATILE_ROWS:
                continue
            cells = [None if c is None else _stable(c.replace(str(warehouse), "<warehouse>")) for c in row]
            if cells[0] in ("Table Properties", "Partition Parameters") and cells[1] == "[]":
                continue
            rows.append(cells)
        error = r.get("error")
        error = error and DATA_FILE.sub("<a data file>", error.replace(str(warehouse), "<warehouse>"))
        out.append({"sql": r["sql"], "rows": rows, "error": error})
    return out


def _stable(cell: str) -> str:
    cell = VOLATILE_PARAMETERS.sub("", cell).replace("[, ", "[")
    return VOLATILE_PROPERTIES.sub("", VOLATILE_LINES.sub("", cell))
