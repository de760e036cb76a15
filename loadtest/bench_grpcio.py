"""Which grpcio to pin, by the numbers: `make bench-grpcio` (= `python -m loadtest.bench_grpcio`).

grpc.aio unary calls were reported to cost more from grpcio 1.75.1 on (grpc/grpc#43091, #43092).
For each version asked for, this builds a virtualenv under `.bench-venvs/` holding that grpcio and
the gateway's other runtime dependencies, and serves from it both a gateway with a warm cache and
the echo floor (the same servers `make bench` measures). One load generator, this project's own
virtualenv, drives every server with GetPartitionsByNames(100) on 10,000 partitions. The targets run
in rounds (each version once per round) so drift of the machine falls on every version alike.
Writes the bench:grpcio section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import functools
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Sequence

import grpc

from loadtest import RunConfig, RunResult, Target, report_rows, run_targets
from loadtest import gateway_targets as gt
from loadtest.echo import EchoUser
from loadtest.gateway_process import GatewayProcess
from loadtest.harness import EchoProcess, postgres, reply_size, running, workdir
from loadtest import report
from loadtest.report import machine_line, markers, write_section
from loadtest.stats import merge_all

REPO = Path(__file__).resolve().parent.parent
VENVS = REPO / ".bench-venvs"
BATCH = 100


def pinned_version() -> str:
    return grpc.__version__


def runtime_requirements(grpcio_version: str) -> list[str]:
    """The gateway's runtime dependencies from pyproject.toml, with grpcio itself at `grpcio_version`
    (grpcio-health-checking and grpcio-reflection keep their pins: they accept any later grpcio)."""
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    return [f"grpcio=={grpcio_version}" if re.match(r"grpcio\s*[=<>~!]", d) else d for d in deps]


def venv_python(grpcio_version: str) -> Path:
    """A virtualenv with this grpcio (built once, reused); its interpreter. The project's own venv for
    the pinned version."""
    if grpcio_version == pinned_version():
        return Path(sys.executable)
    venv = VENVS / f"grpcio-{grpcio_version}"
    python = venv / "bin" / "python"
    stamp = venv / ".installed"
    requirements = runtime_requirements(grpcio_version)
    if stamp.exists() and stamp.read_text() == "\n".join(requirements):
        return python
    print(f"building {venv.relative_to(REPO)} ...", file=sys.stderr, flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *requirements],
                   check=True)
    stamp.write_text("\n".join(requirements))
    return python


def _installed_grpcio(python: Path) -> str:
    return subprocess.run([str(python), "-c", "import grpc; print(grpc.__version__)"], capture_output=True,
                          text=True, check=True).stdout.strip()


async def run(args: argparse.Namespace) -> list[RunResult]:
    pythons = {v: await asyncio.to_thread(venv_python, v) for v in args.versions}
    for version, python in pythons.items():
        installed = await asyncio.to_thread(_installed_grpcio, python)
        if installed != version:
            raise RuntimeError(f"{python} has grpcio {installed}, not {version}")
    with workdir(prefix="msgw-bench-grpcio-") as root:
        async with postgres(root) as dsn:
            return await _run(args, pythons, dsn)


async def _run(args: argparse.Namespace, pythons: dict[str, Path], dsn: str) -> list[RunResult]:
    names = gt.partition_names(args.partitions)
    servers: list[GatewayProcess | EchoProcess] = []
    try:
        targets: dict[str, list[Target]] = {}
        config = RunConfig(users=args.users, run_time_s=args.duration, workers=1, spawn_rate=None)
        request = b""
        for i, (version, python) in enumerate(pythons.items()):
            gateway = GatewayProcess(["--dsn", dsn], python=str(python))
            servers.append(gateway)
            address = await asyncio.to_thread(gateway.wait_serving)
            if i == 0:
                print(f"loading {args.partitions} partitions ...", file=sys.stderr, flush=True)
                await asyncio.to_thread(gt.load_gateway, address, args.partitions)
                with grpc.insecure_channel(address) as channel:
                    request = gt.partitions_request(names[:BATCH], gt.snapshot(channel))
            await asyncio.to_thread(gt.warm, address, names)
            size = await asyncio.to_thread(reply_size, address, request, gt.GET_PARTITIONS)
            echo = await asyncio.to_thread(EchoProcess, size, gt.GET_PARTITIONS, True, str(python))
            servers.append(echo)
            targets[version] = [
                Target(f"gateway-cached grpcio {version}", functools.partial(running, address), gt.GatewayReader,
                       config, {"batch": BATCH, "names": names, "op": "partitions"}),
                Target(f"echo-floor grpcio {version}", functools.partial(running, echo.address), EchoUser, config,
                       {"method": gt.GET_PARTITIONS, "request": request, "items": BATCH,
                        "name": f"GetPartitionsByNames({BATCH})"}),
            ]
        rounds: list[list[RunResult]] = []
        for r in range(args.rounds):
            print(f"round {r + 1} of {args.rounds}", file=sys.stderr, flush=True)
            order = [t for version in args.versions for t in targets[version]]
            rounds.append(await run_targets(order, keep_going=True, pause_s=args.pause))
        return _combine(rounds)
    finally:
        for server in servers:
            await asyncio.to_thread(server.stop)


def _combine(rounds: Sequence[Sequence[RunResult]]) -> list[RunResult]:
    """One result per target: its requests of every round, over the rounds' total time."""
    combined = []
    for runs in zip(*rounds):
        stats = {name: merge_all({str(i): r.stats[name] for i, r in enumerate(runs) if name in r.stats})
                 for name in runs[0].stats}
        combined.append(RunResult(target=runs[0].target, duration_s=sum(r.duration_s for r in runs), stats=stats,
                                  worker_errors=tuple(e for r in runs for e in r.worker_errors)))
    return combined


def render(results: Sequence[RunResult], args: argparse.Namespace) -> str:
    rows = {r.target: next(x for x in report_rows([r]) if x.name.startswith("Get")) for r in results if r.stats}
    start, end = markers("grpcio")
    lines = [start, "## Which grpcio: the cached read path and the echo floor, per grpcio version", "",
             f"Measured {dt.date.today().isoformat()} on {machine_line()}; load generator (this project's venv) "
             f"on the same machine, {args.users} callers, "
             f"GetPartitionsByNames({BATCH}) on {args.partitions} partitions, {args.rounds} rounds of "
             f"{args.duration:g} s per target, servers on uvloop.",
             f"Command: `make bench-grpcio` (= `python -m loadtest.bench_grpcio --versions {' '.join(args.versions)} "
             f"--rounds {args.rounds} --duration {args.duration:g}`).", "",
             *report.table(["grpcio", "target", "calls/s", "p50 ms", "p99 ms", "failures"],
                           [[v, kind, "—", "—", "—", "did not run"] if row is None else
                            [v, kind, f"{row.calls_per_s:.0f}", f"{row.p50_ms:.2f}", f"{row.p99_ms:.2f}", row.failures]
                            for v in args.versions for kind in ("gateway-cached", "echo-floor")
                            for row in [rows.get(f"{kind} grpcio {v}")]], numeric_from=2)]
    base = args.versions[0]
    lines += ["", f"Relative to grpcio {base}:", ""]
    for version in args.versions[1:]:
        parts = []
        for kind in ("gateway-cached", "echo-floor"):
            a, b = rows.get(f"{kind} grpcio {version}"), rows.get(f"{kind} grpcio {base}")
            if a and b and b.calls_per_s:
                parts.append(f"{kind} {a.calls_per_s / b.calls_per_s:.2f}x the calls/s")
        lines.append(f"- grpcio {version}: {', '.join(parts) or 'not measured'}.")
    return "\n".join([*lines, "", end])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m loadtest.bench_grpcio", description=__doc__.split("\n")[0])
    parser.add_argument("--versions", nargs="+", default=[pinned_version(), "1.85.1"],
                        help="grpcio versions to serve with; the first is the baseline")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per target per round")
    parser.add_argument("--users", type=int, default=16)
    parser.add_argument("--partitions", type=int, default=10000)
    parser.add_argument("--pause", type=float, default=1.0)
    parser.add_argument("--out", default=str(REPO / "docs" / "benchmarks.md"))
    args = parser.parse_args(argv)
    results = asyncio.run(run(args))
    section = render(results, args)
    write_section(Path(args.out), "grpcio", section)
    print(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
