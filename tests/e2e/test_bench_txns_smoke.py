"""Smoke run of `python -m loadtest.bench_txns`: a real gateway process on a fresh embedded PostgreSQL
(fsync off), a real load-generator worker process, two seconds per client count (about 10 s on an idle
2-core machine). It checks the plumbing (transactions commit, the markdown section is written in
place, the report files exist), not the numbers. Marked `bench`: it runs in `make test-bench`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loadtest import bench_txns


@pytest.mark.bench
def test_bench_txns_runs_and_replaces_only_its_section(tmp_path: Path) -> None:
    out = tmp_path / "benchmarks.md"
    out.write_text(f"# Benchmarks\n\nintro\n\n{bench_txns.SECTION_START}\nstale\n{bench_txns.SECTION_END}\n\n"
                   "## another section\n\nkept\n")
    results = tmp_path / "results"
    code = bench_txns.main(["--duration", "2", "--clients", "1,2", "--fsync", "off", "--pause", "0", "--retries", "0",
                            "--quiet", "--no-plot", "--out", str(out), "--results-dir", str(results)])
    assert code == 0

    data = json.loads((results / "bench_txns.json").read_text())
    [mode] = data["modes"]
    assert mode["mode"] == "off" and mode["pg_settings"]["fsync"] == "off"
    runs = {r["clients"]: r for r in mode["runs"]}
    assert set(runs) == {1, 2}
    for r in runs.values():
        assert r["failures"] == 0 and not r["worker_errors"]
        assert r["txns"] > 0 and r["partitions"] == 10 * r["txns"]
    assert (results / "bench_txns.csv").read_text().count(bench_txns.REQUEST) == 2

    text = out.read_text()
    assert text.count(bench_txns.SECTION_START) == 1 and text.count(bench_txns.SECTION_END) == 1
    assert "stale" not in text
    assert text.startswith("# Benchmarks\n\nintro\n\n" + bench_txns.SECTION_START)
    assert text.endswith("## another section\n\nkept\n")
    assert "python -m loadtest.bench_txns --duration 2 --clients 1,2" in text
    assert "| unsafe fast (fsync off) | 2 |" in text
