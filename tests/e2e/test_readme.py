"""Every example of README.md runs as written against a real gateway (a process of its own, on a
fresh database): the Python snippets, the shell commands, the settings file. The Spark examples and
the printed output of the walkthrough (which needs Spark's write) run in tests/spark/test_readme.py."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Iterator

import pytest

from tests.conftest import GatewayProcess
from tests.readme_examples import KINDS, Example, Runner, examples


@pytest.fixture
def runner(pg_dsn: str) -> Iterator[Runner]:
    lake = Path(tempfile.mkdtemp(prefix="msgw-readme-"))  # not tmp_path: other pytest sessions prune it
    proc = GatewayProcess("--dsn", pg_dsn, "--conf", "metastore.gateway.shutdown.grace=2s")
    try:
        proc.wait_serving()
        yield Runner(proc.address, proc.thrift_address, lake)
    finally:
        proc.stop()
        shutil.rmtree(lake, ignore_errors=True)


def test_every_block_is_annotated_and_skips_say_why() -> None:
    found = examples()
    assert {e.kind for e in found} <= KINDS
    assert len(found) >= 10
    assert all(e.note for e in found if e.kind == "skip")


def test_the_examples_run_as_written(runner: Runner) -> None:
    ran: list[Example] = []
    for example in examples():
        if example.kind in ("python", "sh", "toml") and "after spark" not in example.note:
            runner.run(example)
            ran.append(example)
    assert len(ran) >= 6
    assert any("CreateTable" in e.code and "transactional=True" in e.code for e in ran)
