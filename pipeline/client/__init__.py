"""The PySpark side's client of the metastore gateway (see README, "PySpark").

    from pipeline.client import ClientConfig, process_client

    config = ClientConfig.from_spark(spark)          # spark.metastore.gateway.address, tls.*, token.file; or env
    client = process_client(config)                  # one channel per process, rebuilt after fork
    with client.transaction() as txn:                # heartbeated; commit on success, abort on error
        snap = txn.snapshot(["sales.orders"])        # ValidTxnList -> ValidWriteIdLists + table ids
        read = snap.read_context("sales.orders")
        names = client.list_partition_names("sales", "orders", read)
        for p in client.get_partitions_by_names("sales", "orders", names, read):  # batches in flight
            ...
"""

from __future__ import annotations

# process first: it enables gRPC fork support before anything imports grpc.
from pipeline.client.process import close_process_clients, process_client, process_stats  # isort: skip
from pipeline.client.channel import open_channel
from pipeline.client.config import ADDRESS_CONF, ADDRESS_ENV, ClientConfig, parse_duration_s
from pipeline.client.errors import ClientConfigError, CommitOutcomeUnknown, GatewayError, GatewayUnavailable, TxnAborted
from pipeline.client.gateway import GatewayClient
from pipeline.client.retry import Backoff, call_with_retry
from pipeline.client.security import ChannelSecurity
from pipeline.client.snapshot import Snapshot, TableSnapshot, full_table_name
from pipeline.client.txn import HeartbeatKeeper, Transaction
from pipeline.locking import LockAcquireTimeout

__all__ = [
    "ADDRESS_CONF", "ADDRESS_ENV", "Backoff", "ChannelSecurity", "ClientConfig", "ClientConfigError",
    "CommitOutcomeUnknown", "GatewayClient", "GatewayError", "GatewayUnavailable", "HeartbeatKeeper",
    "LockAcquireTimeout", "Snapshot", "TableSnapshot", "Transaction", "TxnAborted", "call_with_retry",
    "close_process_clients", "full_table_name", "open_channel", "parse_duration_s", "process_client", "process_stats",
]
