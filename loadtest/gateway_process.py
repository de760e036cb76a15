"""A gateway as its own OS process, for benchmarks: `metastore-gateway serve` on a free port."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Sequence

REPO = Path(__file__).resolve().parent.parent


class GatewayProcess:
    """`python -m gateway.cli serve` as its own OS process; output goes to a log file (a pipe nobody
    reads could fill up and stall the server)."""

    def __init__(self, args: Sequence[str], log_path: Path) -> None:
        self.log_path = log_path
        self._log = open(log_path, "w")  # noqa: SIM115 - closed in stop()
        self.argv = [sys.executable, "-m", "gateway.cli", "serve", "--port", "0", "--log-level", "WARNING", *args]
        self.proc = subprocess.Popen(self.argv, cwd=REPO, stdout=self._log, stderr=subprocess.STDOUT, text=True)
        self.address = ""
        self.dsn = ""

    def wait_serving(self, timeout_s: float = 120.0) -> str:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            m = re.search(r"serving on ([\d.]+:\d+) \(database: (.*)\)", self.log_path.read_text())
            if m:
                self.address, self.dsn = m.group(1), m.group(2)
                return self.address
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"the gateway did not start; its output:\n{self.log_path.read_text()[-4000:]}")

    def stop(self, timeout_s: float = 30.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self._log.close()
        return self.proc.returncode
