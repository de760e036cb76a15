"""A gateway as its own OS process, for benchmarks and tests: `metastore-gateway serve` on a free port.

The one helper for running a gateway as a subprocess (loadtest.harness, the bench_* scripts and
tests/conftest.py build on it). Ready means: it logged the address it serves on, and the standard
health service there answers SERVING.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Mapping, Sequence

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

REPO = Path(__file__).resolve().parent.parent


class GatewayProcess:
    """`python -m gateway.cli serve --port 0 ARGS` as its own OS process; output goes to a log file (a
    pipe nobody reads could fill up and stall the server). Without `log_path`, a temporary file that
    stop() removes (what it held stays readable through output()). `env` is added to this process's
    environment; `python` is the interpreter to run it with (default: this one). `started_at` /
    `serving_at` are time.monotonic() stamps, for start-up timing."""

    def __init__(self, args: Sequence[str], log_path: Path | None = None, *, log_level: str = "WARNING",
                 env: Mapping[str, str] | None = None, python: str | None = None) -> None:
        self._temporary_log = log_path is None
        if log_path is None:
            fd, name = tempfile.mkstemp(prefix="msgw-gateway-", suffix=".log")
            os.close(fd)
            log_path = Path(name)
        self.log_path = log_path
        self._log = open(log_path, "w")  # noqa: SIM115 - closed in stop()
        self._kept_output: str | None = None
        self.argv = [python or sys.executable, "-m", "gateway.cli", "serve", "--port", "0",
                     "--conf", "hive.metastore.port=0", "--log-level", log_level, *args]
        self.started_at = time.monotonic()
        self.proc = subprocess.Popen(self.argv, cwd=REPO, stdout=self._log, stderr=subprocess.STDOUT, text=True,
                                     env={**os.environ, **env} if env else None)
        self.address = ""
        self.thrift_address = ""
        self.dsn = ""
        self.serving_at = 0.0

    @property
    def pid(self) -> int:
        return self.proc.pid

    def output(self) -> str:
        """Everything the gateway printed so far."""
        if self._kept_output is not None:
            return self._kept_output
        return self.log_path.read_text(errors="replace")

    def wait_serving(self, timeout_s: float = 120.0) -> str:
        """Wait for "serving on HOST:PORT" and for the health check there to answer SERVING; return that
        address (also in `address`, the database in `dsn`). Stop the process and raise with its output
        when it exits or `timeout_s` passes first.
        From asyncio: `await asyncio.to_thread(proc.wait_serving)`."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            m = re.search(r"serving on ([\d.]+:\d+) \(database: (\S+)\)", self.output())
            if m and _serving(m.group(1), deadline):
                self.serving_at = time.monotonic()
                self.address, self.dsn = m.group(1), _usable_dsn(m.group(2), self.output())
                thrift = re.search(r"Hive Thrift API on ([\d.]+:\d+)", self.output())
                self.thrift_address = thrift.group(1) if thrift else ""
                return self.address
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        self.stop()
        raise RuntimeError(f"the gateway did not start; its output:\n{self.output()[-4000:]}")

    def stop(self, timeout_s: float = 30.0) -> int:
        """SIGTERM, then SIGKILL after `timeout_s`; the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        if not self._log.closed:
            self._log.close()
            if self._temporary_log:
                self._kept_output = self.log_path.read_text(errors="replace")
                self.log_path.unlink(missing_ok=True)
        return self.proc.returncode


def _usable_dsn(logged: str, output: str) -> str:
    """The DSN a client can connect with. The startup line hides the password (`user:***@`); when the
    gateway runs its own embedded PostgreSQL it logs the data directory, beside which that server keeps
    the password, so a bench can reach the same database (its probes, a second gateway on it)."""
    data_dir = re.search(r"data directory ([^,\s]+)", output)
    if ":***@" not in logged or data_dir is None:
        return logged
    from gateway.embedded_pg import EmbeddedPostgres

    return logged.replace(":***@", f":{EmbeddedPostgres(Path(data_dir.group(1))).password}@", 1)


def _serving(address: str, deadline: float) -> bool:
    """Whether grpc.health.v1 at `address` answers SERVING (for the whole server) before `deadline`."""
    with grpc.insecure_channel(address) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        while time.monotonic() < deadline:
            try:
                reply = health.Check(health_pb2.HealthCheckRequest(), timeout=max(0.1, deadline - time.monotonic()))
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return True
            except grpc.RpcError:
                pass
            time.sleep(0.02)
    return False
