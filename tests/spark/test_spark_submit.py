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
