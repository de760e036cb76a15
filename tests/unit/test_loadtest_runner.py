"""Smoke runs of the real runner (worker processes, gRPC) against the echo floor on 127.0.0.1.

Kept short (one second of load each); the arithmetic is tested on virtual time elsewhere.
"""

from __future__ import annotations

import asyncio
import functools
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest
from google.protobuf import empty_pb2

from loadtest import RunConfig, Target, User, run_load, run_targets, task
from loadtest.echo import EchoUser, echo_server, filler_payload, start_echo_server
from loadtest.errors import ConfigError
from loadtest.report import markdown_table, matplotlib_available, write_report

METHOD = "/metastore.v1.Catalog/GetPartitionsByNames"
PAYLOAD = filler_payload(2000)
OPTIONS = {"method": METHOD, "request": b"\x08\x01", "items": 100, "name": "GetPartitionsByNames(100)"}
REPO = Path(__file__).resolve().parents[2]


async def test_echo_server_replies_raw_bytes_and_rejects_unknown_methods() -> None:
    server, port = await start_echo_server({METHOD: PAYLOAD})
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            call = channel.unary_unary(METHOD, request_serializer=None, response_deserializer=None)
            reply = await call(b"anything, not parsed", timeout=5)
            assert reply == PAYLOAD and len(reply) == 2000
            empty_pb2.Empty.FromString(reply)  # the filler is valid protobuf (one unknown field)
            other = channel.unary_unary("/pkg.Svc/Other", request_serializer=None, response_deserializer=None)
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await other(b"", timeout=5)
            assert info.value.code() == grpc.StatusCode.UNIMPLEMENTED
    finally:
        await server.stop(None)


async def test_driver_runs_the_echo_target_in_one_worker_and_reports(tmp_path: Path) -> None:
    target = Target(
        name="echo-floor",
        start=functools.partial(echo_server, {METHOD: PAYLOAD}),
        user_class=EchoUser,
        config=RunConfig(users=2, run_time_s=1.0, workers=1, stop_timeout_s=1.0),
        options=OPTIONS,
    )
    started = time.monotonic()
    [result] = await run_targets([target], progress=False)
    assert time.monotonic() - started < 5.0
    assert result.ok, result.worker_errors
    stats = result.stats["GetPartitionsByNames(100)"]
    assert stats.requests > 0 and stats.failures == 0
    assert stats.items == 100 * stats.requests
    assert result.users_started == 2
    files = write_report([result], tmp_path)
    assert "| echo-floor | GetPartitionsByNames(100) |" in files.markdown.read_text()
    assert files.csv.read_text().count("\n") == 3  # header, the request, the total
    if matplotlib_available():
        assert files.png is not None and files.png.stat().st_size > 0


async def test_two_worker_processes_merge_into_one_result() -> None:
    async with echo_server({METHOD: PAYLOAD}) as address:
        started = time.monotonic()
        result = await run_load(
            EchoUser,
            address,
            RunConfig(users=2, run_time_s=1.0, workers=2, stop_timeout_s=1.0),
            target="echo-2w",
            options=OPTIONS,
            progress=False,
        )
        assert time.monotonic() - started < 5.0
    assert result.ok, result.worker_errors
    total = result.total()
    assert total.requests > 0 and total.failures == 0
    assert result.users_started == 2 and result.tasks_started >= total.requests
    assert sum(p.requests for p in result.series) == total.requests
    assert "echo-2w" in markdown_table([result])


async def test_an_unpicklable_user_class_is_refused_before_any_process_starts() -> None:
    class Local(User):  # defined in a function: workers could not import it
        @task
        async def op(self) -> None: ...

    with pytest.raises(ConfigError, match="module level"):
        await run_load(Local, "127.0.0.1:1", RunConfig(workers=1, run_time_s=1.0), progress=False)


def test_echo_cli_serves_until_sigterm() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "loadtest.echo", "--port", "0", "--size", "64", "--method", METHOD],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
    )
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert line.startswith("listening on 127.0.0.1:"), line + (proc.stderr.read() if proc.stderr else "")
        address = line.split()[-1]

        async def one_call() -> bytes:
            async with grpc.aio.insecure_channel(address) as channel:
                call = channel.unary_unary(METHOD, request_serializer=None, response_deserializer=None)
                return await call(b"", timeout=5)

        with asyncio.Runner(loop_factory=asyncio.new_event_loop) as runner:  # leaves the test loop alone
            assert len(runner.run(one_call())) == 64
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=5) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=5)


class DiesInWorkerOne(EchoUser):
    """User 1 (in worker 1 of 2) kills its process mid-run, as a segfault would."""

    @task
    async def call_method(self) -> None:
        if self.user_id == 1 and self.clock.now() > 0:
            os._exit(3)
        await super().call_method()


class BlocksItsLoop(User):
    """Blocks the worker's event loop so it can neither finish nor obey the stop event."""

    @task
    async def op(self) -> None:
        time.sleep(30)


async def test_a_crashed_worker_is_reported_and_the_others_results_kept() -> None:
    async with echo_server({METHOD: PAYLOAD}) as address:
        result = await run_load(
            DiesInWorkerOne,
            address,
            RunConfig(users=2, run_time_s=1.0, workers=2, stop_timeout_s=1.0),
            options=OPTIONS,
            progress=False,
        )
    assert result.worker_errors == ("worker 1 exited with code 3 without reporting",)
    assert result.total().requests > 0 and result.total().failures == 0


async def test_a_stuck_worker_is_terminated_after_the_bounded_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    import loadtest.runner

    monkeypatch.setattr(loadtest.runner, "_SHUTDOWN_SLACK_S", 0.5)
    started = time.monotonic()
    result = await run_load(
        BlocksItsLoop, "127.0.0.1:1", RunConfig(users=1, run_time_s=0.5, workers=1, stop_timeout_s=0.25), progress=False
    )
    assert time.monotonic() - started < 5.0
    assert len(result.worker_errors) == 1 and "did not finish" in result.worker_errors[0]
