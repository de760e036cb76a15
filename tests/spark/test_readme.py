"""README.md's examples in full, in order, Spark's included: the walkthrough's Spark write runs in the
test session's SparkSession (what `getOrCreate()` in the example returns), and what the admin commands
print afterwards is compared with the output the README shows. The examples that start Spark processes
of their own (spark-submit, a Hive-enabled session) need a minute each: they run with SLOW=1."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterator

import pytest

from pipeline.client import close_process_clients
from tests.readme_examples import Runner, examples
from tests.spark.conftest import start_gateway

pytestmark = pytest.mark.spark


@pytest.fixture
def runner(pg_dsn: str, spark: Any) -> Iterator[Runner]:
    lake = Path(tempfile.mkdtemp(prefix="msgw-readme-"))  # not tmp_path: other pytest sessions prune it
    proc = start_gateway(pg_dsn)
    try:
        proc.wait_serving()
        yield Runner(proc.address, proc.thrift_address, lake)
    finally:
        spark.conf.unset("spark.metastore.gateway.address")  # the examples set it on the shared session
        close_process_clients()
        proc.stop()
        shutil.rmtree(lake, ignore_errors=True)


def test_every_example_runs_and_prints_what_the_readme_shows(runner: Runner) -> None:
    slow = os.environ.get("SLOW") == "1"
    ran = 0
    for example in examples():
        if example.kind == "skip":
            continue
        if example.kind in ("spark-process", "spark-submit") and not slow:
            runner.skipped.append(f"README.md:{example.line} ({example.kind}): a Spark process of its own; SLOW=1")
            continue
        if example.kind == "spark":
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(runner.substitute(example.code), f"README.md:{example.line}", "exec"), {})
            runner.last_output = out.getvalue()
        else:
            runner.run(example, timeout_s=600)
        ran += 1
    assert ran >= 12
