"""The worker's calls to the gateway's Compactor service, on a `GatewayClient`'s settings.

A separate channel from the job's `GatewayClient` (the worker makes a handful of calls per
compaction); every call goes through the same deadline and UNAVAILABLE retry (`call_with_retry`).
"""

from __future__ import annotations

import threading
from typing import Any, Callable

import grpc

from pipeline.client import Backoff, ClientConfig, GatewayError, call_with_retry
from pipeline.client.channel import open_channel
from protos.metastore.v1 import compaction_pb2 as cpb
from protos.metastore.v1 import compaction_pb2_grpc


class CompactorClient:
    def __init__(self, config: ClientConfig) -> None:
        self.config = config
        self._channel = open_channel(config)
        self.stub = compaction_pb2_grpc.CompactorStub(self._channel)
        self._backoff = Backoff(retries=config.unavailable_retries, initial_s=config.backoff_initial_s,
                                max_s=config.backoff_max_s)

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> CompactorClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def call(self, method: str, request: Any) -> Any:
        rpc: Callable[..., Any] = getattr(self.stub, method)
        return call_with_retry(lambda: rpc(request, timeout=self.config.call_timeout_s), method=method,
                               address=self.config.address, backoff=self._backoff)


class EntryKeeper:
    """Heartbeats a claimed entry (and, through the gateway, its compaction txn) every
    `interval_s` from a daemon thread. `lost` holds the error once the gateway says the entry is no
    longer this worker's (time-out, txn aborted): the worker must then drop the attempt."""

    def __init__(self, client: CompactorClient, compaction_id: int, worker_id: str, interval_s: float) -> None:
        if interval_s <= 0:
            raise ValueError(f"heartbeat interval must be positive, got {interval_s}")
        self._client = client
        self._request = cpb.HeartbeatCompactionRequest(id=compaction_id, worker_id=worker_id)
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"compaction-{compaction_id}-heartbeat", daemon=True)
        self.lost: GatewayError | None = None
        self.beats = 0

    def start(self) -> EntryKeeper:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(self.interval_s + self._client.config.call_timeout_s)

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self._client.call("HeartbeatCompaction", self._request)
                self.beats += 1
            except GatewayError as exc:
                if exc.code in (grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.NOT_FOUND):
                    self.lost = exc
                    return
                # anything else (the gateway briefly away): the next tick is the retry; the worker
                # timeout is far longer than a few missed beats.
