"""What every call goes through on its way in and out, on both protocols: metrics, the access log,
and the last line of defence for errors nobody mapped.

`CallObserver.done` is the one place a finished call is recorded (gateway/metrics.py's CallStats)
and, when `metastore.gateway.access.log` is on, logged as one line on the `metastore.access` logger:

    grpc /metastore.v1.Catalog/GetTable OK 0.21ms peer=ipv4:127.0.0.1:50412 user=-

`user` is the authenticated caller when authentication is on (gateway/auth.py; a Thrift
connection's certificate), else the user a request names, if any.

The gRPC side is `ObservingInterceptor`; the Thrift server calls `done` from its dispatch.
Cost per call: the wrapped handler is built once per method and kept, so a call pays a dict
lookup, two clock reads and `CallStats.record`; the access log line is formatted only when enabled.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from typing import Any, Awaitable, Callable

import grpc
from google.protobuf.message import DecodeError

from gateway.auth import OPEN_AUTHENTICATOR, Authenticator
from gateway.metrics import CallStats
from hive.limits import bounded_message
from store.errors import Unauthenticated

_log = logging.getLogger(__name__)
access_log = logging.getLogger("metastore.access")


class CallObserver:
    def __init__(self, calls: CallStats, *, log_access: bool) -> None:
        self.record = calls.record
        self.log_access = log_access

    def done(self, protocol: str, method: str, status: str, seconds: float, peer: str, user: str) -> None:
        """Record a finished call, and log it when the access log is on."""
        self.record(protocol, method, status, seconds)
        if self.log_access:
            self.access(protocol, method, status, seconds, peer, user)

    @staticmethod
    def access(protocol: str, method: str, status: str, seconds: float, peer: str, user: str) -> None:
        access_log.info("%s %s %s %.2fms peer=%s user=%s", protocol, method, status, seconds * 1000,
                        peer or "-", user or "-")


def _user_of(request: Any) -> str:
    """The user a request names (OpenTxns, Lock): what the access log shows in the open mode only."""
    user = getattr(request, "user", "")
    return user[:64] if isinstance(user, str) else ""


def _caller(auth: Authenticator, request: Any, context: grpc.aio.ServicerContext) -> str:
    """The user the access log shows: with authentication on, the authenticated one (a request's user
    field is the client's to write, and ignored then), blank for a call refused as unauthenticated."""
    if not auth.enabled:
        return _user_of(request)
    try:
        return auth.context_identity(context).user
    except Unauthenticated:
        return ""


Unary = Callable[[Any, grpc.aio.ServicerContext], Awaitable[Any]]


class Undecodable:
    """What a unary call's deserializer answers for bytes protobuf cannot parse as the method's request,
    instead of raising: grpc would answer the exception UNKNOWN ("Unexpected <class 'DecodeError'>")
    before any handler ran. The observed call refuses it as the client's mistake, INVALID_ARGUMENT,
    counted and logged like any other call."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


def _tolerant(method: str, deserializer: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
    if deserializer is None:
        return None

    def deserialize(serialized: bytes) -> Any:
        try:
            return deserializer(serialized)
        except DecodeError as exc:
            return Undecodable(f"the request of {method} is not a serialized message of its request type "
                               f"(protobuf: {exc}); send the message the service's .proto declares")

    return deserialize


class ObservingInterceptor(grpc.aio.ServerInterceptor):
    """Times every unary call and records its status code (streaming calls, i.e. reflection and
    health's Watch, pass through uncounted), and refuses a request that does not decode (Undecodable)."""

    def __init__(self, observer: CallObserver, auth: Authenticator = OPEN_AUTHENTICATOR) -> None:
        self._observer = observer
        self._auth = auth
        self._wrapped: dict[str, grpc.RpcMethodHandler] = {}

    async def intercept_service(
        self, continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        method: str = handler_call_details.method
        wrapped = self._wrapped.get(method)
        if wrapped is not None:
            return wrapped
        handler = await continuation(handler_call_details)
        if handler is None or handler.unary_unary is None:
            return handler
        wrapped = grpc.unary_unary_rpc_method_handler(
            self._observe(method, handler.unary_unary),
            request_deserializer=_tolerant(method, handler.request_deserializer),
            response_serializer=handler.response_serializer)
        self._wrapped[method] = wrapped
        return wrapped

    def _observe(self, method: str, inner: Unary) -> Unary:
        observer = self._observer
        record = observer.record
        auth = self._auth

        async def observed(request: Any, context: grpc.aio.ServicerContext) -> Any:
            started = time.perf_counter()
            status = "OK"
            try:
                if type(request) is Undecodable:
                    await context.abort(grpc.StatusCode.INVALID_ARGUMENT, bounded_message(request.reason))
                return await inner(request, context)
            except grpc.aio.AbortError:
                code = context.code()
                status = code.name if isinstance(code, grpc.StatusCode) else "UNKNOWN"
                raise
            except asyncio.CancelledError:
                status = "CANCELLED"
                raise
            except Exception:  # noqa: BLE001 - a handler outside gateway/errors.py's mapping: still no stack trace out
                status = "INTERNAL"
                request_id = uuid.uuid4().hex[:12]
                _log.exception("internal error in %s (request id %s)", method, request_id)
                await context.abort(grpc.StatusCode.INTERNAL,
                                    f"internal error (request id {request_id}); see the gateway log")
            finally:
                seconds = time.perf_counter() - started
                record("grpc", method, status, seconds)
                if observer.log_access:  # the peer and user only when they are logged
                    observer.access("grpc", method, status, seconds, context.peer(), _caller(auth, request, context))

        return observed
