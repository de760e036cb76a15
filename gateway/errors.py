"""The one table from exceptions to gRPC status codes, applied once to every servicer method.

Store errors carry messages written for people and pass through. Anything else is a bug: the
caller gets INTERNAL with a request id, the log gets the traceback under the same id.
Cancellation is never caught here.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import uuid
from typing import Any, Awaitable, Callable, TypeVar

import grpc

from hive.limits import bounded_message
from store import errors as se

_log = logging.getLogger(__name__)

STATUS_OF: dict[type[Exception], grpc.StatusCode] = {
    se.InvalidArgument: grpc.StatusCode.INVALID_ARGUMENT,
    se.NotFound: grpc.StatusCode.NOT_FOUND,
    se.AlreadyExists: grpc.StatusCode.ALREADY_EXISTS,
    se.FailedPrecondition: grpc.StatusCode.FAILED_PRECONDITION,
    se.Aborted: grpc.StatusCode.ABORTED,
    se.ResourceExhausted: grpc.StatusCode.RESOURCE_EXHAUSTED,
    se.Unavailable: grpc.StatusCode.UNAVAILABLE,
    se.SchemaMismatch: grpc.StatusCode.FAILED_PRECONDITION,
    se.Unauthenticated: grpc.StatusCode.UNAUTHENTICATED,
    se.PermissionDenied: grpc.StatusCode.PERMISSION_DENIED,
}


def status_for(exc: Exception) -> grpc.StatusCode:
    for cls in type(exc).__mro__:
        if cls in STATUS_OF:
            return STATUS_OF[cls]
    return grpc.StatusCode.INTERNAL


R = TypeVar("R")
Handler = Callable[[Any, Any, grpc.aio.ServicerContext], Awaitable[R]]


async def within_deadline(awaitable: Awaitable[R], context: grpc.aio.ServicerContext) -> R:
    """Await, bounded by the call's deadline (TimeoutError past it)."""
    remaining = context.time_remaining()
    if remaining is None:
        return await awaitable
    async with asyncio.timeout(remaining):
        return await awaitable


def answers_from_memory(method: Handler[R]) -> Handler[R]:
    """Mark a cache-first read: `rpc` does not wrap it in a deadline (a hit never awaits); the
    method bounds its database fallback itself with `within_deadline`."""
    method._answers_from_memory = True  # type: ignore[attr-defined]
    return method


def rpc(method: Handler[R]) -> Handler[R]:
    """Wrap a unary servicer method: deadline bound, error mapping. `context.abort` is terminal."""
    bounded = not getattr(method, "_answers_from_memory", False)

    @functools.wraps(method)
    async def wrapper(self: Any, request: Any, context: grpc.aio.ServicerContext) -> R:
        try:
            if bounded:
                return await within_deadline(method(self, request, context), context)
            return await method(self, request, context)
        except se.ON_PURPOSE as exc:
            # Cut: a message may quote what the caller sent, and must fit gRPC's status metadata.
            await context.abort(status_for(exc), bounded_message(str(exc)))
        except TimeoutError:
            await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED,
                                "the call's deadline expired before the gateway answered")
        except (asyncio.CancelledError, grpc.aio.AbortError):
            raise
        except Exception:  # noqa: BLE001 - the boundary: never leak a stack trace to a client
            request_id = uuid.uuid4().hex[:12]
            _log.exception("internal error in %s (request id %s)", method.__qualname__, request_id)
            await context.abort(grpc.StatusCode.INTERNAL,
                                f"internal error (request id {request_id}); see the gateway log")
        raise AssertionError("unreachable: abort raises")

    return wrapper


def rpc_methods(cls: type) -> type:
    """Class decorator: apply `rpc` to every public coroutine method defined on the servicer."""
    for name, member in list(vars(cls).items()):
        if not name.startswith("_") and inspect.iscoroutinefunction(member):
            setattr(cls, name, rpc(member))
    return cls
