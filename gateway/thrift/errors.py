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
from hive.errors import BadPartitionName, ValueNotWhitelisted
from store import errors as se
from store.partition_events import UnknownEventType

MAX_MESSAGE_CHARS = limits.MAX_MESSAGE_CHARS


class NotServedHere(Exception):
    """A call the gateway answers as a method it does not serve (TApplicationException UNKNOWN_METHOD),
    because the client then does the work itself and gets the right answer: Hive's clients evaluate a
    partition expression themselves (PartitionPruner's fallback) when `get_partitions_by_expr` is
    unknown. The message says why."""

EXCEPTIONS_FOR: dict[type[Exception], tuple[str, ...]] = {
    se.NotFound: ("NoSuchObjectException", "NoSuchTxnException", "NoSuchLockException", "UnknownDBException",
                  "UnknownTableException", "InvalidOperationException", "InvalidObjectException"),
    se.AlreadyExists: ("AlreadyExistsException", "InvalidObjectException", "InvalidOperationException"),
    se.InvalidArgument: ("InvalidObjectException", "InvalidInputException", "InvalidOperationException"),
    se.NeverAllowed: (),  # MetaException, as Hive's
    se.ExpectedParameterChanged: (),  # MetaException, as Hive's (Iceberg's commit matches its message)
    se.ExpectedParameterUnset: (),  # MetaException, as Hive's
    ValueNotWhitelisted: (),  # MetaException, as Hive's
    se.FailedPrecondition: ("InvalidOperationException", "TxnOpenException", "InvalidObjectException"),
    se.Aborted: ("TxnAbortedException", "InvalidOperationException"),
    se.PermissionDenied: ("ConfigValSecurityException",),  # get_config_value's only exception
}

# Where a Hive method answers an error with another of its declared exceptions than the row above
# would pick (checked against Hive 2.3.10: tests/e2e/test_thrift_differential.py). Keyed by the
# method's name without `_with_environment_context`, as both forms answer alike.
METHOD_EXCEPTIONS: dict[tuple[str, type[Exception]], str] = {
    ("create_table", se.NotFound): "InvalidObjectException",  # a table in a missing database
    ("create_table_with_constraints", se.NotFound): "InvalidObjectException",
    ("create_table_req", se.NotFound): "InvalidObjectException",
    ("get_partition_by_name", se.InvalidArgument): "NoSuchObjectException",  # a name that fits no partition
    ("get_table_names_by_filter", se.InvalidArgument): "MetaException",  # a filter Hive cannot parse
    ("get_fields", se.NotFound): "UnknownTableException",  # a missing table or database
    ("get_schema", se.NotFound): "UnknownTableException",
    ("get_fields_req", se.NotFound): "UnknownTableException",  # Hive 4's: the same core as get_fields
    ("get_schema_req", se.NotFound): "UnknownTableException",
    # statistics of a column the table does not have, or of a partition key
    ("update_table_column_statistics", se.InvalidArgument): "MetaException",
    ("update_partition_column_statistics", se.InvalidArgument): "MetaException",
    ("set_aggr_stats_for", se.InvalidArgument): "MetaException",
    ("update_table_column_statistics_req", se.InvalidArgument): "MetaException",  # Hive 4's forms of the two
    ("update_partition_column_statistics_req", se.InvalidArgument): "MetaException",
    # a partition's statistics of a missing table: Hive 2.3 reads the name's values from the table first
    # (getPartValsFromName: "db.t table not found"); a missing partition stays NoSuchObjectException
    ("update_partition_column_statistics", se.TableNotFound): "InvalidObjectException",
    ("update_partition_column_statistics_req", se.TableNotFound): "InvalidObjectException",
    ("delete_partition_column_statistics", se.TableNotFound): "InvalidObjectException",
    # a partition's statistics of an unpartitioned table (Hive: "Invalid partition key & values")
    ("delete_partition_column_statistics", se.NotPartitioned): "MetaException",
    # a partition name that does not name the table's keys (Hive: "incomplete partition name - missing ds")
    ("update_partition_column_statistics", BadPartitionName): "InvalidObjectException",
    ("update_partition_column_statistics_req", BadPartitionName): "InvalidObjectException",
    # a partition of another table in the specs, or one Hive's own checks refuse (too many values, one twice)
    ("add_partitions_pspec", se.InvalidArgument): "MetaException",
    # a missing function, or a rename onto a name another function has
    ("alter_function", se.NotFound): "MetaException",
    ("alter_function", se.AlreadyExists): "MetaException",
    # partitions of other schemas, a specification that names no first keys, a partition dest already has
    ("exchange_partitions", se.InvalidArgument): "MetaException",
    ("exchange_partitions", se.AlreadyExists): "MetaException",
    ("exchange_partition", se.InvalidArgument): "MetaException",
    ("exchange_partition", se.AlreadyExists): "MetaException",
    # a txn that is already committed (Hive: "Transaction ... is already committed")
    ("add_dynamic_partitions", se.FailedPrecondition): "NoSuchTxnException",
    # a database that does not exist (a table that does not is reserved for: store/txns.py
    # reserve_write_ids): not a txn that does not
    ("allocate_table_write_ids", se.TableNotFound): "MetaException",
    ("abort_txn", se.FailedPrecondition): "NoSuchTxnException",
    ("abort_txns", se.FailedPrecondition): "NoSuchTxnException",
    ("lock", se.FailedPrecondition): "NoSuchTxnException",
    # a lock id with no rows (released, timed out, never given): Hive's checkLock finds no txn for it
    ("check_lock", se.NotFound): "NoSuchLockException",
    ("check_lock", se.InvalidArgument): "NoSuchLockException",  # lockid 0 or negative
    # a missing table or database: Hive answers every failure of this call with MetaException
    # (gateway/thrift/partition_value_methods.py), though it declares NoSuchObjectException
    ("get_partition_values", se.NotFound): "MetaException",
    ("markPartitionForEvent", se.NotFound): "UnknownTableException",  # ObjectStore's "Table: t is not found."
    ("isPartitionMarkedForEvent", se.NotFound): "UnknownTableException",
    ("markPartitionForEvent", se.InvalidArgument): "InvalidPartitionException",  # a specification not the keys'
    ("isPartitionMarkedForEvent", se.InvalidArgument): "InvalidPartitionException",
    ("markPartitionForEvent", UnknownEventType): "MetaException",  # Hive's fails on a type it has not
    ("isPartitionMarkedForEvent", UnknownEventType): "MetaException",
}

# A client's mistake in a method that declares neither its row above nor MetaException (the txn and
# lock methods, get_config_value): a txn or lock id that is not positive, a request naming none, or more
# ids than one call may carry names no txn or lock this call can act on (Hive: "No such transaction
# txnid:0"); a config key that is unset names none a client may read. Tried after MetaException, so the
# methods that declare it answer as before.
LAST_RESORT: dict[type[Exception], tuple[str, ...]] = {
    se.InvalidArgument: ("NoSuchTxnException", "NoSuchLockException", "ConfigValSecurityException"),
    se.ResourceExhausted: ("NoSuchTxnException", "NoSuchLockException"),
}


def bounded(message: str) -> str:
    return limits.bounded_message(message, MAX_MESSAGE_CHARS)


def declared_exception(method: str, result_spec: dict[int, Any], exc: BaseException,
                       message: str) -> tuple[str, Any] | None:
    """(result field name, exception object) for `exc` among what `method` declares, or None."""
    declared = {spec[2].__name__: spec[1] for fid, spec in result_spec.items() if fid != 0}
    wanted: tuple[str, ...] = ()
    base = method.removesuffix("_with_environment_context")
    for cls in type(exc).__mro__:
        if (base, cls) in METHOD_EXCEPTIONS:
            wanted = (METHOD_EXCEPTIONS[base, cls],)
            break
        if cls in EXCEPTIONS_FOR:
            wanted = EXCEPTIONS_FOR[cls]
            break
    last = next((LAST_RESORT[cls] for cls in type(exc).__mro__ if cls in LAST_RESORT), ())
    for name in (*wanted, "MetaException", *last):
        if name in declared:
            exc_cls = next(spec[2] for fid, spec in result_spec.items() if fid != 0 and spec[2].__name__ == name)
            return declared[name], exc_cls(message=bounded(message))
    return None
