"""One `GatewayClient` per process and config: what Spark tasks use on executors.

Design note. A PySpark executor runs tasks in Python worker processes that the worker daemon
forks, and reuses a worker for many tasks (spark.python.worker.reuse, on by default). So a task
asks `process_client(config)`: the first task in a worker builds the channel, later tasks reuse it
(channel setup and the TCP/HTTP2 handshake are paid once per worker, not per task). A gRPC channel
does not survive fork(): the child's copy is closed by gRPC's fork handlers (or, without them,
fails with "Bad file descriptor"). The registry therefore remembers the pid it was filled in, and
a process that finds another pid (a forked child) starts empty and builds its own channel; the
parent's channels are left alone, never closed from the child. `os.register_at_fork` also resets
the registry's lock in the child, in case another thread held it at the moment of the fork.

gRPC only supports using channels in a forked child when fork support is on, and reads that setting
when it is imported; so if gRPC is not imported yet, this module imports it with
`GRPC_ENABLE_FORK_SUPPORT=true` (an explicit setting in the environment wins). The registry is
process state by nature: the worker process is its owner, there is no composition root in a Python
worker to hold it.
"""

from __future__ import annotations

import os
import sys
import threading

if "grpc" not in sys.modules and "GRPC_ENABLE_FORK_SUPPORT" not in os.environ:
    # gRPC reads the setting once, when it is imported; taking it out again afterwards keeps it from
    # leaking into child processes (a gateway or a JVM started from this process).
    os.environ["GRPC_ENABLE_FORK_SUPPORT"] = "true"
    try:
        import grpc  # noqa: F401
    finally:
        del os.environ["GRPC_ENABLE_FORK_SUPPORT"]

from pipeline.client.config import ClientConfig  # noqa: E402
from pipeline.client.gateway import GatewayClient  # noqa: E402


class _ProcessClients:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self._clients: dict[ClientConfig, GatewayClient] = {}
        self.created = 0  # channels built in this process (tests and stats)

    def get(self, config: ClientConfig) -> GatewayClient:
        pid = os.getpid()
        with self._lock:
            if pid != self._pid:
                self._forget(pid)
            client = self._clients.get(config)
            if client is None:
                client = self._clients[config] = GatewayClient(config)
                self.created += 1
            return client

    def _forget(self, pid: int) -> None:
        # The inherited clients belong to the parent: drop them without closing.
        self._pid = pid
        self._clients = {}
        self.created = 0

    def after_fork_in_child(self) -> None:
        self._lock = threading.Lock()
        self._forget(os.getpid())

    def close_all(self) -> None:
        with self._lock:
            if self._pid == os.getpid():
                for client in self._clients.values():
                    client.close()
            self._clients = {}


_CLIENTS = _ProcessClients()
os.register_at_fork(after_in_child=_CLIENTS.after_fork_in_child)


def process_client(config: ClientConfig) -> GatewayClient:
    """This process's client for `config`: created on first use, rebuilt after a fork, shared by
    every task (and thread) of the process."""
    return _CLIENTS.get(config)


def process_stats() -> dict[str, int]:
    """{"pid": ..., "channels_created": ...} for this process."""
    return {"pid": os.getpid(), "channels_created": _CLIENTS.created}


def close_process_clients() -> None:
    """Close this process's channels (a driver at the end of a notebook; workers just exit)."""
    _CLIENTS.close_all()
