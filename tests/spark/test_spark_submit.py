"""Both jobs through a real `spark-submit` (a new JVM each: about a minute on 2 cores; SLOW=1)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pipeline.client import ClientConfig, GatewayClient
from tests.conftest import REPO
from tests.spark.conftest import create_table, java_problem

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def _spark_submit(address: str, *args: str) -> dict[str, Any]:
    submit = shutil.which("spark-submit", path=os.path.dirname(sys.executable)) or shutil.which("spark-submit")
    if submit is None or java_problem():
        pytest.skip(java_problem() or "spark-submit not found (pip install pyspark)")
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}
    out = subprocess.run([submit, "--master", "local[2]", "--conf", f"spark.metastore.gateway.address={address}",
                          "--conf", "spark.ui.enabled=false", "--conf",
                          "spark.driver.extraJavaOptions=-XX:TieredStopAtLevel=1",
                          "pipeline/__main__.py", *args],
                         cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    problems = [line for line in out.stderr.splitlines() if " INFO " not in line]
    assert out.returncode == 0, "\n".join(problems[-60:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_spark_submit_writes_then_reads(gateway_address: str, tmp_path: Path) -> None:
    with GatewayClient(ClientConfig(gateway_address)) as client:
        create_table(client, tmp_path / "events")
    data = tmp_path / "input.json"
    data.write_text("".join(json.dumps({"id": i, "payload": f"p{i}", "ds": f"2024-02-0{1 + i % 2}"}) + "\n"
                            for i in range(40)))
    written = _spark_submit(gateway_address, "write", "lake", "events", str(data), "--input-format", "json")
    assert written["added"] == 2 and written["write_id"] == 1
    read = _spark_submit(gateway_address, "snapshot-read", "lake", "events", "--output", str(tmp_path / "usage"))
    assert read["partitions"] == 2 and read["files"] >= 2 and read["valid_write_id_list"] == \
        "lake.events:1:9223372036854775807::"
    assert any(p.suffix == ".parquet" for p in (tmp_path / "usage").iterdir())


def _run_pipeline(address: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m pipeline ...` as a user runs it (its own local[2] master)."""
    if java_problem():
        pytest.skip(java_problem() or "")
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}
    return subprocess.run([sys.executable, "-m", "pipeline", "--address", address, *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600)


def test_the_command_line_overwrites_a_static_partition_reads_rows_and_refuses_a_bad_schema(
    gateway_address: str, tmp_path: Path,
) -> None:
    with GatewayClient(ClientConfig(gateway_address)) as client:
        create_table(client, tmp_path / "events")
    data = tmp_path / "input.json"
    data.write_text("".join(json.dumps({"id": i, "payload": f"p{i}", "ds": f"2024-02-0{1 + i % 2}"}) + "\n"
                            for i in range(6)))
    written = _spark_submit(gateway_address, "write", "lake", "events", str(data), "--input-format", "json")
    assert written["added"] == 2 and written["format"] == "parquet"
    fix = tmp_path / "fix.json"
    fix.write_text(json.dumps({"id": 100, "payload": "fixed"}) + "\n")
    replaced = _spark_submit(gateway_address, "write", "lake", "events", str(fix), "--input-format", "json",
                             "--mode", "overwrite", "--partition", "ds=2024-02-01")
    assert replaced["mode"] == "overwrite" and replaced["appended"] == 1

    read = _run_pipeline(gateway_address, "read", "lake", "events", "--filter", "ds = '2024-02-01'", "--limit", "0")
    assert read.returncode == 0, read.stderr[-3000:]
    assert [json.loads(line) for line in read.stdout.splitlines()] == [{"id": 100, "payload": "fixed",
                                                                       "ds": "2024-02-01"}]
    summary = json.loads(read.stderr.strip().splitlines()[-1])
    assert summary["partitions"] == 1 and summary["valid_write_id_list"] == "lake.events:2:9223372036854775807::"

    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"id": "not-a-number-0", "payload": "x", "ds": "2024-02-03"}) + "\n")
    refused = _run_pipeline(gateway_address, "write", "lake", "events", str(bad), "--input-format", "json")
    assert refused.returncode == 1
    assert "column id is bigint but the DataFrame's 'id' is string" in refused.stderr
    assert not (tmp_path / "events" / "ds=2024-02-03").exists()
