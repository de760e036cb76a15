"""`make bench` end to end at toy size: every target starts, answers, and the report is written.

The full smoke run (every workload, two rounds; ~26 s) is marked `bench` (`make test-bench`); `make test`
keeps a tiny one: the headline workload only, one short round, which still starts PostgreSQL, a gateway
process, the echo floor and the load generator, and renders the report."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadtest import bench_read


def test_bench_read_tiny(tmp_path: Path) -> None:
    out = tmp_path / "benchmarks.md"
    assert bench_read.main(["--duration", "0.3", "--users", "2", "--partitions", "200", "--skip-hms", "--workers", "0",
                            "--pause", "0", "--rounds", "1", "--only", "100", "--out", str(out)]) == 0
    text = out.read_text()
    assert bench_read.START in text and bench_read.END in text
    assert "### GetPartitionsByNames(100)" in text
    rows = [line for line in text.splitlines() if line.startswith("| gateway-") or line.startswith("| echo-floor")]
    assert [row.split("|")[1].strip() for row in rows] == ["gateway-cached", "echo-floor", "gateway-thrift",
                                                               "gateway-thrift-decoding"], rows
    assert all(line.rstrip().endswith("| 0 |") for line in rows), rows  # no failures


@pytest.mark.bench
def test_bench_read_smoke(tmp_path: Path) -> None:
    out = tmp_path / "benchmarks.md"
    assert bench_read.main(["--duration", "1", "--users", "2", "--partitions", "1000", "--skip-hms", "--workers", "0",
                            "--pause", "0", "--rounds", "2", "--out", str(out)]) == 0
    text = out.read_text()
    assert bench_read.START in text and bench_read.END in text
    for workload in ("GetPartitionsByNames(1)", "GetPartitionsByNames(100)", "GetPartitionsByNames(1000)", "GetTable",
                     "mixed"):
        assert f"### {workload}" in text
    rows = [line for line in text.splitlines() if line.startswith("| gateway-") or line.startswith("| echo-floor")]
    # cached, cache off, echo and Thrift in four workloads; the mixed pair; the decoding Thrift client once
    assert len(rows) == 4 * 4 + 2 + 1
    assert all(line.rstrip().endswith("| 0 |") for line in rows), rows  # no failures anywhere
    rounds = text.split("round by round", 1)[1].split("### Goals", 1)[0]
    assert [line.split("|")[1].strip() for line in rounds.splitlines()
            if line.startswith("| ") and line.split("|")[1].strip().isdigit()] == ["1", "2"]
    assert "(rounds: " in text  # the echo goals are judged on the median of both rounds
