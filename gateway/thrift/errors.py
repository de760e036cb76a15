"""The one table from store errors to the exceptions Hive's Thrift methods declare.

Each Thrift method declares its own exceptions (`throws (...)`), and a client only understands those:
thriftpy2 and Hive's Java client drop the connection on anything else. So an error becomes the first
exception in its row below that the method declares; MetaException, which nearly every method
declares, is the last resort. The message is the one the gRPC status would carry, cut to a bound.
A method that declares no exception at all gets TApplicationException INTERNAL_ERROR with the message.
"""

from __future__ import annotations

from typing import Any

from hive import limits
from store import errors as se

MAX_MESSAGE_CHARS = limits.MAX_MESSAGE_CHARS

EXCEPTIONS_FOR: dict[type[Exception], tuple[str, ...]] = {
    se.NotFound: ("NoSuchObjectException", "NoSuchTxnException", "NoSuchLockException", "UnknownDBException",
                  "UnknownTableException", "InvalidOperationException", "InvalidObjectException"),
    se.AlreadyExists: ("AlreadyExistsException", "InvalidObjectException", "InvalidOperationException"),
    se.InvalidArgument: ("InvalidObjectException", "InvalidInputException", "InvalidOperationException"),
    se.NeverAllowed: (),  # MetaException, as Hive's
    se.FailedPrecondition: ("InvalidOperationException", "TxnOpenException", "InvalidObjectException"),
    se.Aborted: ("TxnAbortedException", "InvalidOperationException"),
}


def bounded(message: str) -> str:
    return limits.bounded_message(message, MAX_MESSAGE_CHARS)


def declared_exception(result_spec: dict[int, Any], exc: BaseException, message: str) -> tuple[str, Any] | None:
    """(result field name, exception object) for `exc` among what the method declares, or None."""
    declared = {spec[2].__name__: spec[1] for fid, spec in result_spec.items() if fid != 0}
    wanted: tuple[str, ...] = ()
    for cls in type(exc).__mro__:
        if cls in EXCEPTIONS_FOR:
            wanted = EXCEPTIONS_FOR[cls]
            break
    for name in (*wanted, "MetaException"):
        if name in declared:
            exc_cls = next(spec[2] for fid, spec in result_spec.items() if fid != 0 and spec[2].__name__ == name)
            return declared[name], exc_cls(message=bounded(message))
    return None
