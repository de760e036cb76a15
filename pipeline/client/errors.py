"""The client's exceptions: one root, one class per outcome a job handles differently.

Every error keeps the gateway's own message (its status details are written for a person) and the
gRPC error as `__cause__`.
"""

from __future__ import annotations

from typing import Any

import grpc


class GatewayError(Exception):
    """A call to the metastore gateway failed. `code` is the gRPC status (None when the failure
    happened before a call, e.g. a bad address), `details` the gateway's message."""

    def __init__(self, message: str, *, method: str = "", code: grpc.StatusCode | None = None,
                 details: str = "", address: str = "") -> None:
        super().__init__(message)
        self.method = method
        self.code = code
        self.details = details
        self.address = address


class GatewayUnavailable(GatewayError):
    """UNAVAILABLE through every retry: the gateway is not reachable, or its database is down."""


class TxnAborted(GatewayError):
    """The transaction is aborted (by the gateway's time-out reaper, another client, or a conflict);
    nothing it wrote will ever be visible. Raised by commit, by `Transaction.check()` and by the
    heartbeat keeper's report."""

    def __init__(self, message: str, *, txn_id: int, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.txn_id = txn_id


class CommitOutcomeUnknown(GatewayError):
    """CommitTxn's answer never came (its deadline passed, the connection was lost) and neither a
    retry nor an abort told how it ended: the txn may have committed. Nothing it wrote was removed:
    if it committed, readers see it; if not, the gateway aborts it after hive.txn.timeout and the
    Cleaner removes its files. Check the table (or SHOW TRANSACTIONS) before writing again."""

    def __init__(self, message: str, *, txn_id: int, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.txn_id = txn_id


class ClientConfigError(ValueError):
    """The client's settings are missing or malformed (no gateway address, a bad number)."""
