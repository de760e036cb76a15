"""loadtest/bench_cache.py's docs section: a figure measured again replaces its subsection, the others stay."""

from __future__ import annotations

import json
from pathlib import Path

from loadtest.bench_cache import TITLES, write_docs
from loadtest.report import markers

META = {"machine": {"nproc": 2, "cpu_model": "AMD EPYC", "mem_gib": 23.5, "kernel": "6", "python": "3.11.7"},
        "pg_version": "18.6"}
LAG = {"figure": "lag", "command": "python -m loadtest.bench_cache --only lag --commits 200",
       "measured": "2026-11-24 13:54 UTC", "commit_ms_p50": 1.9, "snapshot_ms_p50": 3.3, "gateway_lag_p50_ms": 0.9,
       "gateway_lag_p99_ms": 2.1,
       "methods": {"poller": {"n": 200, "p50_ms": 0.9, "p90_ms": 1.08, "p99_ms": 1.43, "max_ms": 1.92,
                              "probes_p50": 1.0}}}


def _document(tmp_path: Path) -> Path:
    start, end = markers("cache")
    doc = tmp_path / "benchmarks.md"
    doc.write_text("\n".join([
        "# Benchmarks", start, "## The synchronized cache", "",
        f"### {TITLES['hit']}", "", "| users | hit share |", "| 4 | **99.87%** |", "",
        f"### {TITLES['lag']}", "", "| poller | old lag row |", "",
        f"### {TITLES['prewarm']}", "", "- **Memory:** 870 bytes per cached partition", "",
        end, "## After", ""]))
    return doc


def test_a_figure_measured_alone_replaces_its_subsection_and_keeps_the_others(tmp_path: Path) -> None:
    doc = _document(tmp_path)
    results = tmp_path / "results"
    results.mkdir()
    (results / "lag.json").write_text(json.dumps(LAG))
    write_docs(doc, results, META)
    text = doc.read_text()
    assert "| 4 | **99.87%** |" in text and "870 bytes per cached partition" in text  # kept as they were
    assert "old lag row" not in text and "| poller | 200 | 0.90 | 1.08 | **1.43** | 1.92 | 1 |" in text
    assert text.index(TITLES["hit"]) < text.index(TITLES["lag"]) < text.index(TITLES["prewarm"])
    assert text.count(markers("cache")[0]) == 1 and text.rstrip().endswith("## After")


def test_without_results_or_a_section_only_the_measured_figures_are_written(tmp_path: Path) -> None:
    doc = tmp_path / "new.md"
    results = tmp_path / "results"
    results.mkdir()
    (results / "lag.json").write_text(json.dumps(LAG))
    write_docs(doc, results, META)
    text = doc.read_text()
    assert TITLES["lag"] in text and TITLES["hit"] not in text and TITLES["prewarm"] not in text
