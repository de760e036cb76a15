"""The store's exceptions: one root, one class per caller-visible outcome.

The gateway maps each class to exactly one gRPC status (gateway/errors.py). Messages are written
for a person: they name the object and say what to do. The database cause is kept as __cause__.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hive.errors import HiveError as HiveError  # Hive's rules' root: the gateway answers it as StoreErrors
from hive.errors import InvalidArgument as InvalidArgument  # a malformed request; not retryable

if TYPE_CHECKING:
    from store.models import Table


class NotPartitioned(InvalidArgument):
    """A partition read of a table that has no partition keys, with the table: gRPC answers it
    INVALID_ARGUMENT, Hive's Thrift listings no partitions (as Hive 2.3 does)."""

    def __init__(self, table: Table) -> None:
        super().__init__(f"table {table.full_name} is not partitioned")
        self.table = table


class StoreError(Exception):
    """Root of every error the store raises on purpose."""



class NotFound(StoreError):
    """A named database, table, partition or transaction does not exist."""


class TableNotFound(NotFound):
    """The table named does not exist, or the database it would be in does not (catalog.get_table): a
    caller that answers a missing table otherwise than a missing partition tells the two apart by it."""


class AlreadyExists(StoreError):
    """The object to create exists already."""


class FailedPrecondition(StoreError):
    """The request is well-formed but the system is not in a state to serve it (non-empty database,
    table id mismatch, snapshot missing or too old, transaction not open)."""


class NeverAllowed(FailedPrecondition):
    """What Hive's metastore refuses whatever the state (dropping the default database): a failed
    precondition over gRPC, a MetaException over Thrift, as Hive answers it."""


class ConstraintRefused(NeverAllowed):
    """A table constraint Hive's metastore refuses as MetaException (store/constraints.py): its name is
    taken, its table has a primary key already, a foreign key refers to no key of its parent, or an alter
    would drop a column a constraint names. A failed precondition over gRPC."""


class Aborted(StoreError):
    """A conflict with a concurrent transaction, or the transaction was aborted; retry the whole txn."""


class WriteConflict(Aborted):
    """A write-write conflict: `txn_id` (0: a write outside any txn) wrote what another txn wrote
    and has not yet committed, or committed after `txn_id` started. Hive's rule: the writer's txn is
    aborted (store/catalog_store.py does so in a transaction of its own, as the failed write's own
    transaction is rolled back)."""

    def __init__(self, message: str, txn_id: int) -> None:
        super().__init__(message)
        self.txn_id = txn_id


class ExpectedParameterChanged(Aborted):
    """A conditional alter (Hive's expected_parameter_key and _value) found the table's parameter holding
    another value: the table was modified concurrently. Hive's message, which Iceberg's HiveCatalog reads
    as a failed commit; MetaException over Thrift, ABORTED over gRPC."""


class ExpectedParameterUnset(InvalidArgument):
    """A conditional alter whose new table does not set the expected parameter (Hive: MetaException)."""


class ResourceExhausted(StoreError):
    """A limit was reached (batch too large, too many open transactions)."""


class Unavailable(StoreError):
    """The database cannot be reached, or no connection became free in time; retryable."""


class CommandTimeout(Unavailable):
    """A statement ran past the pool's command time-out and was cancelled, its transaction rolled back.

    A kind of Unavailable, so it answers UNAVAILABLE (gateway/errors.py and the Thrift table resolve
    a class through its bases): the transaction was rolled back, so a retry is safe (the one doubt,
    a COMMIT itself timing out, is the same as a connection lost at commit, which is Unavailable
    too), and the usual causes (an overloaded database, a long lock wait) pass. Not
    DEADLINE_EXCEEDED: that status says the *caller's* deadline expired, which it did not; the
    message names the time-out instead."""


class StatementCancelled(Unavailable):
    """PostgreSQL cancelled a statement (SQLSTATE 57014): a statement_timeout set on the server for the
    gateway's user or database ran out (a long lock wait, say), or an administrator's pg_cancel_backend.
    The connection is sound and the transaction rolled back, nothing written: retryable, as
    CommandTimeout is, and not a lost connection (the pool is left as it is)."""


class DatabaseCannotServe(Unavailable):
    """The database answers but cannot do the work: it is read-only (a standby, or
    default_transaction_read_only) or out of disk space, memory or connections. Unavailable, so
    retryable once an operator has fixed the database; the message names which."""


class Unauthenticated(StoreError):
    """The caller did not prove who it is (no or an unknown token, no client certificate)."""


class PermissionDenied(StoreError):
    """The caller is known but may not act on this object (another user's txn or lock)."""


class SchemaMismatch(StoreError):
    """The database schema is newer than this gateway understands, or was never migrated."""


class SessionsNotKept(StoreError):
    """The database is reached through a connection pooler that does not keep a client's session on one
    server connection (transaction or statement pooling): found at start-up (store/db.py sessions_kept)."""


# Every error raised on purpose below the gateway, for the one place each protocol maps them.
ON_PURPOSE: tuple[type[Exception], ...] = (StoreError, HiveError)
