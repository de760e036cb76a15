"""Calls with bounded retries on UNAVAILABLE, and the translation of gRPC errors into the client's.

Only UNAVAILABLE is retried: it is what gRPC answers when the gateway cannot be reached (refused,
reset, DNS) and what the gateway answers when its database is down, both worth waiting out. Every
other status is the gateway's decision about the request (NOT_FOUND, ABORTED, FAILED_PRECONDITION,
DEADLINE_EXCEEDED ...) and is raised at once with the gateway's message. The waits grow from
`backoff_initial_s`, doubling, capped at `backoff_max_s`, with +-20 % jitter so that the tasks of a
job that lost the gateway together do not come back in lock step; after `unavailable_retries`
extra attempts the call raises `GatewayUnavailable` naming the address and how long it tried.

A retried write may have reached the gateway before the connection broke. The calls the jobs
retry are safe that way: reads, CommitTxn and AbortTxns are idempotent, a duplicate OpenTxns leaves
a txn nobody heartbeats (the reaper aborts it), and AllocateTableWriteIds is idempotent per txn.
AddPartitions is all or nothing under the txn; its retry after a lost answer would see
ALREADY_EXISTS for the txn's own partitions, which fails the job and aborts the txn: no wrong state
(the write job adds if absent: its retry skips them, and the job reads them again).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Callable, Iterator, TypeVar

import grpc

from pipeline.client.errors import GatewayError, GatewayUnavailable
from pipeline.client.security import (TLS_CA_CONF, TLS_CERT_CONF, TLS_KEY_CONF, TOKEN_ENV, TOKEN_FILE_CONF,
                                      TOKEN_FILE_ENV)
from hive import backoff

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Backoff:
    """The client's UNAVAILABLE retries: how many, and their waits (hive/backoff.py's, +-`jitter`)."""

    retries: int = 6
    initial_s: float = 0.2
    max_s: float = 5.0
    jitter: float = 0.2

    def delays(self, rng: random.Random | None = None) -> Iterator[float]:
        """The wait before each retry (`retries` of them)."""
        waits = backoff.Backoff(initial_s=self.initial_s, max_s=self.max_s, jitter=self.jitter)
        return waits.delays(self.retries, rng or random.Random())


def translate(exc: grpc.RpcError, method: str, address: str) -> GatewayError:
    """A gRPC error as the client's exception, keeping the gateway's message."""
    code = exc.code() if hasattr(exc, "code") else None
    details = (exc.details() if hasattr(exc, "details") else None) or str(exc)
    name = code.name if code is not None else "UNKNOWN"
    cls = GatewayUnavailable if code == grpc.StatusCode.UNAVAILABLE else GatewayError
    hint = _HINTS.get(code, "") if code is not None else ""
    return cls(f"{method} failed at the metastore gateway {address}: {name}: {details}{hint}",
               method=method, code=code, details=details, address=address)


# Where the job's owner sets what the gateway wanted (its own message says what that was).
_HINTS = {
    grpc.StatusCode.UNAUTHENTICATED: (
        f" (this client's token comes from {TOKEN_FILE_CONF} or {TOKEN_FILE_ENV} / {TOKEN_ENV}, sent over TLS "
        f"with {TLS_CA_CONF}; or a client certificate: {TLS_CERT_CONF} and {TLS_KEY_CONF})"),
}


def call_with_retry(
    call: Callable[[], T], *, method: str, address: str, backoff: Backoff,
    sleep: Callable[[float], object] = time.sleep, clock: Callable[[], float] = time.monotonic,
    first_error: grpc.RpcError | None = None,
) -> T:
    """`call()` until it succeeds, retrying only on UNAVAILABLE with `backoff`. `first_error` is the
    failure of an attempt already made elsewhere (an async batch), so it counts as the first try."""
    started = clock()
    attempts = 0 if first_error is None else 1
    delays = backoff.delays()
    error = first_error
    while True:
        if error is not None:
            if error.code() != grpc.StatusCode.UNAVAILABLE:
                raise translate(error, method, address) from error
            delay = next(delays, None)
            if delay is None:
                raise GatewayUnavailable(
                    f"{method}: the metastore gateway at {address} is unavailable: {attempts} attempts over "
                    f"{clock() - started:.1f}s all answered UNAVAILABLE (last: {error.details()}). Check that the "
                    f"gateway is running and that spark.metastore.gateway.address / METASTORE_GATEWAY_ADDRESS "
                    f"point at it; a gateway with TLS also fails the handshake of a plaintext client or of one "
                    f"whose {TLS_CA_CONF} did not sign its certificate, or without the client certificate "
                    f"({TLS_CERT_CONF}) it asks for.", method=method, code=grpc.StatusCode.UNAVAILABLE,
                    details=error.details() or "", address=address) from error
            sleep(delay)
        attempts += 1
        try:
            return call()
        except grpc.RpcError as exc:
            error = exc
