"""`python -m loadtest.soak_memory` end to end, short: both protocols' workers run without a failed call,
the catalog they churn stays bounded in the cache, reads are served from it, and the verdict is written."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

from loadtest.gateway_process import REPO


def test_a_short_churn_runs_clean_and_reports(tmp_path: Path) -> None:
    out = tmp_path / "out"
    section = tmp_path / "benchmarks.md"
    done = subprocess.run(
        [sys.executable, "-m", "loadtest.soak_memory", "--duration", "12", "--interval", "2", "--thrift-workers", "2",
         "--max-growth-mib", "64", "--out", str(out), "--section", str(section)],
        cwd=REPO, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "0 failed calls" in done.stdout
    with open(out / "soak_memory.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) >= 6
    last = rows[-1]
    assert int(last["rounds"]) > 20
    # two workers' tables live two rounds each (40 partitions at most), plus the ACID table
    assert int(last["cached_tables"]) <= 2 * 4 + 1 and int(last["cached_partitions"]) <= 2 * 4 * 40
    assert int(last["hits"]) > 0
    assert (out / "soak_memory.png").stat().st_size > 0
    assert "<!-- bench:soak-memory:start -->" in section.read_text()
