"""An asyncio load generator, Locust-style, for gRPC services (or anything awaitable), and the
benchmarks built on it.

Define a `User` subclass with `@task` methods that time their requests with `self.measure(...)`,
run it against one address with `run_load`, or against several targets in a row with `run_targets`,
and turn the results into CSV / markdown / PNG with the functions re-exported here from `report`.

The load generator is four modules: `users` (User, tasks, wait times, GrpcUser), `engine` (RunConfig
and one event loop's share of a run), `runner` (worker processes, `run_load`, `Target`, `run_targets`)
and `stats` (accumulators, aggregation, progress line), on `clock` and `histogram`. Each benchmark
(`bench_*`, `consistency/`) is its workload plus a main on one harness: gateway processes with
health-based readiness, a fresh database and a work directory (`harness`, `gateway_process`), the
machine's and PostgreSQL's probes through psutil (`probes`), one histogram, one report and plot
renderer (`report`, which also writes the sections of docs/benchmarks.md). The benchmarks reach the
gateway through its public gRPC API and its command line (the two in-process profilers, `profile_hit`
and `profile_poller`, time the gateway's own code and import it by design).

Why not Locust itself: Locust runs its users on gevent, which monkey-patches sockets and cannot drive
grpc.aio channels on an asyncio (or uvloop) event loop, the client stack whose cost these figures
measure; it records response times in whole milliseconds (rounded further above 100 ms), where a cached
read takes a fraction of one and `Histogram` keeps microseconds with a bounded relative error; and its
users cannot run on an injected clock in tests. The user/task/wait-time model is Locust's, kept so that
the users read familiar.
"""

from loadtest.clock import Clock, LoopClock, ManualClock, SystemClock, VirtualTimeLoop
from loadtest.engine import RunConfig
from loadtest.errors import ConfigError, LoadTestError, RunnerError, StopUser
from loadtest.histogram import Histogram
from loadtest.report import (
    METRICS, ReportRow, compare_ratios, comparison_table, markdown_table, plot, report_rows, to_csv, write_csv,
    write_report,
)
from loadtest.runner import Target, run_load, run_targets
from loadtest.stats import TOTAL, RequestStats, RunResult, TimePoint
from loadtest.users import GrpcUser, Measurement, User, between, constant, constant_throughput, task

__all__ = [
    "Clock", "ConfigError", "GrpcUser", "Histogram", "LoadTestError", "LoopClock", "METRICS", "ManualClock",
    "Measurement", "ReportRow", "RequestStats", "RunConfig", "RunResult", "RunnerError", "StopUser", "SystemClock",
    "TOTAL", "Target", "TimePoint", "User", "VirtualTimeLoop", "between", "compare_ratios", "comparison_table",
    "constant", "constant_throughput", "markdown_table", "plot", "report_rows", "run_load", "run_targets", "task",
    "to_csv", "write_csv", "write_report",
]
