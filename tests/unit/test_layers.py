"""The layers import one way: `hive` (Hive's pure value types and rules) imports none of the project's
other packages and does no I/O; the PySpark pipeline reaches the gateway through its API and `hive`,
never the store's internals."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
IO_MODULES = {"asyncpg", "grpc", "socket", "subprocess", "pyspark", "thriftpy2", "http", "urllib"}


def _imports(package: str) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in sorted((REPO / package).rglob("*.py")):
        tree = ast.parse(path.read_text())
        names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module and not n.level}
        found[str(path.relative_to(REPO))] = {name.split(".")[0] for name in names}
    return found


def test_hive_is_pure_and_at_the_bottom() -> None:
    for path, roots in _imports("hive").items():
        assert not roots & {"store", "gateway", "poller", "pipeline", "loadtest", "protos"}, (path, roots)
        assert not roots & IO_MODULES, (path, roots)


def test_the_pipeline_does_not_import_the_store() -> None:
    for path, roots in _imports("pipeline").items():
        assert "store" not in roots and "poller" not in roots, (path, roots)
