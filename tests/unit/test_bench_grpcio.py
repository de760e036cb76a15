"""The grpcio comparison's own arithmetic: which requirements a version's venv gets, and rounds combined."""

from __future__ import annotations

from loadtest import RunResult
from loadtest.bench_grpcio import _combine, runtime_requirements
from loadtest.stats import RequestStats


def test_only_grpcio_itself_changes_version() -> None:
    reqs = runtime_requirements("1.85.1")
    assert "grpcio==1.85.1" in reqs
    assert [r for r in reqs if r.startswith("grpcio-health-checking")] == ["grpcio-health-checking==1.75.0"]
    assert not any(r.startswith("grpcio==1.75") for r in reqs)
    assert any(r.startswith("asyncpg") for r in reqs)


def _result(target: str, requests: int, duration_s: float, latency_s: float) -> RunResult:
    stats = RequestStats()
    for _ in range(requests):
        stats.record(latency_s, None, 100)
    return RunResult(target=target, duration_s=duration_s, stats={"read": stats})


def test_rounds_combine_into_one_rate_per_target() -> None:
    rounds = [[_result("a", 100, 10.0, 0.001), _result("b", 50, 10.0, 0.004)],
              [_result("a", 300, 10.0, 0.002), _result("b", 50, 10.0, 0.004)]]
    a, b = _combine(rounds)
    assert (a.target, a.duration_s, a.stats["read"].requests, a.stats["read"].items) == ("a", 20.0, 400, 40000)
    assert a.stats["read"].latency.count == 400
    assert (b.target, b.stats["read"].requests) == ("b", 100)
