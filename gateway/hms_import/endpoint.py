"""One side of an import: a Hive metastore Thrift endpoint (`thrift://host:port`), called through the
gateway's own IDL with thriftpy2.

Every call has a socket time-out. A connection error (refused, reset, timed out, the server gone mid-answer)
closes the connection and is retried on a new one, a bounded number of times with hive/backoff.py's waits,
then raised as `EndpointUnreachable` naming the endpoint and the last error. What the server answers,
a declared exception or a TApplicationException, is never retried: it is the answer. Retrying a write
is safe here because every write the importer sends is idempotent by construction (an object that
already exists is compared, not written again; partitions are added with ifNotExists).
"""

from __future__ import annotations

import logging
import socket
import ssl
import time
from dataclasses import dataclass
from typing import Any, Callable
from urllib.parse import urlsplit

import thriftpy2.rpc
from thriftpy2.thrift import TApplicationException
from thriftpy2.transport import TTransportException

from gateway.thrift.idl import SERVICE, hms
from hive.backoff import Backoff

log = logging.getLogger(__name__)

# What a lost or refused connection raises in thriftpy2 and the socket layer (TimeoutError is an OSError).
CONNECTION_ERRORS: tuple[type[BaseException], ...] = (TTransportException, OSError, EOFError)


class HmsImportError(Exception):
    """The root of the importer's errors: each says what failed and what to do."""


class EndpointUnreachable(HmsImportError):
    """An endpoint did not answer within the retries."""


class ImportUsageError(HmsImportError):
    """A usage error: an endpoint that is no `thrift://host:port`, a bound out of range."""


@dataclass(frozen=True)
class EndpointAddress:
    host: str
    port: int

    def __str__(self) -> str:
        return f"thrift://{self.host}:{self.port}"


def parse_thrift_url(text: str, what: str) -> EndpointAddress:
    """`thrift://host:port` (the scheme may be left out) as an address; ImportUsageError saying what is wrong."""
    raw = text.strip()
    url = urlsplit(raw if "://" in raw else f"thrift://{raw}")
    if url.scheme != "thrift":
        raise ImportUsageError(f"{what} {text!r}: the scheme must be thrift:// (thrift://host:port)")
    try:
        port = url.port
    except ValueError:
        raise ImportUsageError(f"{what} {text!r}: the port must be a number from 1 to 65535") from None
    if not url.hostname or port is None or port == 0:
        raise ImportUsageError(f"{what} {text!r}: expected thrift://host:port")
    if url.path not in ("", "/") or url.query:
        raise ImportUsageError(f"{what} {text!r}: expected thrift://host:port, with no path or query")
    return EndpointAddress(url.hostname, port)


@dataclass(frozen=True)
class RetryPolicy:
    """How long a call may take and how often a lost connection is tried again."""

    call_timeout_s: float = 60.0
    retries: int = 5
    backoff: Backoff = Backoff(initial_s=0.5, max_s=10.0, jitter=0.5)

    def __post_init__(self) -> None:
        if not 0 < self.call_timeout_s <= 3600:
            raise ImportUsageError(f"--timeout must be above 0 and at most 3600 seconds, got {self.call_timeout_s}")
        if not 0 <= self.retries <= 100:
            raise ImportUsageError(f"--retries must be between 0 and 100, got {self.retries}")


class ThriftEndpoint:
    """A synchronous client of one metastore: `call(method, *args)` with time-out and bounded retries."""

    def __init__(self, role: str, address: EndpointAddress, policy: RetryPolicy, *,
                 ssl_context: ssl.SSLContext | None = None, sleep: Callable[[float], None] = time.sleep) -> None:
        self.role = role  # "source" or "gateway": named in every error
        self.address = address
        self._policy = policy
        self._ssl_context = ssl_context
        self._sleep = sleep
        self._client: Any = None
        self.calls = 0
        self.seconds = 0.0  # spent waiting for answers, retries' waits included: where an import's time goes

    def __enter__(self) -> ThriftEndpoint:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            try:
                client.close()
            except Exception:  # noqa: BLE001 - a broken connection's close has nothing left to tell
                pass

    def _connected(self) -> Any:
        if self._client is None:
            self._client = thriftpy2.rpc.make_client(
                SERVICE, self.address.host, self.address.port, timeout=int(self._policy.call_timeout_s * 1000),
                ssl_context=self._ssl_context)
        return self._client

    def get(self, method: str, *args: Any) -> Any:
        """`call`'s answer, or None when the server has no such object (NoSuchObjectException)."""
        try:
            return self.call(method, *args)
        except hms.NoSuchObjectException:
            return None

    def call(self, method: str, *args: Any) -> Any:
        """The server's answer to `method(*args)`; its declared exceptions raised as they come.
        EndpointUnreachable once the connection failed `retries` + 1 times in a row."""
        last: BaseException | None = None
        for attempt in range(self._policy.retries + 1):
            if attempt:
                wait = self._policy.backoff.delay(attempt - 1)
                log.info("%s %s: %s failed (%s); again in %.1f s (%d of %d)", self.role, self.address, method,
                         _describe(last), wait, attempt, self._policy.retries)
                self._sleep(wait)
            started = time.monotonic()
            try:
                client = self._connected()
                self.calls += 1
                return getattr(client, method)(*args)
            except TApplicationException:
                raise
            except CONNECTION_ERRORS as exc:
                last = exc
                self.close()  # the connection is in an unknown state: mid-message or gone
            finally:
                self.seconds += time.monotonic() - started
        raise EndpointUnreachable(
            f"the {self.role} metastore at {self.address} did not answer {method} "
            f"({self._policy.retries + 1} tries, each within {self._policy.call_timeout_s:g} s): {_describe(last)}")

    def has_method(self, method: str, *args: Any) -> tuple[bool, Any]:
        """(True, answer) when the server serves `method`, (False, None) when it answers UNKNOWN_METHOD
        (an older Hive than the call: Hive 2.3 has no write ids)."""
        try:
            return True, self.call(method, *args)
        except TApplicationException as exc:
            if exc.type == TApplicationException.UNKNOWN_METHOD:
                return False, None
            raise


def _describe(exc: BaseException | None) -> str:
    if exc is None:
        return "no error"
    if isinstance(exc, socket.timeout):
        return "timed out"
    text = str(exc) or type(exc).__name__
    return text if len(text) <= 300 else text[:300] + "..."
