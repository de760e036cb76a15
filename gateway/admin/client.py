"""The admin commands' view of a running gateway: its public gRPC API, nothing else.

Each method makes the calls one command needs and returns plain rows (dicts), which
gateway/admin/render.py prints. Reads of a managed table take their own snapshot first
(GetOpenTxns, then GetValidWriteIds), as any client must; the snapshot is shown with the answer
so that two runs can be compared.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import TracebackType
from typing import Any

from gateway.auth import PLAIN, ClientCredentials, client_channel
from protos.metastore.v1 import admin_pb2, admin_pb2_grpc, catalog_pb2, catalog_pb2_grpc, locks_pb2, locks_pb2_grpc
from protos.metastore.v1 import compaction_pb2, compaction_pb2_grpc, transactions_pb2, transactions_pb2_grpc

Row = dict[str, Any]


class AdminUsageError(ValueError):
    """An argument the gateway need not be asked about (a malformed name); the message says what to type."""


@dataclass(frozen=True)
class Snapshot:
    valid_txn_list: str
    valid_write_id_list: str
    table_id: int

    def read_context(self) -> catalog_pb2.ReadContext:
        return catalog_pb2.ReadContext(valid_write_id_list=self.valid_write_id_list, table_id=self.table_id)


def split_table_name(name: str) -> tuple[str, str]:
    """`db.table` -> (db, table); anything else is a usage error naming the expected form."""
    db, sep, table = name.partition(".")
    if not sep or not db or not table or "." in table:
        raise AdminUsageError(f"expected a table as db.table, got {name[:200]!r}")
    return db, table


class AdminClient:
    """A blocking client of one gateway; every call bounded by `timeout_s`. Use as a context manager."""

    def __init__(self, address: str, timeout_s: float = 10.0,
                 credentials: ClientCredentials = PLAIN) -> None:
        self.address = address
        self._timeout = timeout_s
        self._channel = client_channel(address, credentials)
        self._catalog = catalog_pb2_grpc.CatalogStub(self._channel)
        self._txns = transactions_pb2_grpc.TransactionsStub(self._channel)
        self._locks = locks_pb2_grpc.LocksStub(self._channel)
        self._admin = admin_pb2_grpc.AdminStub(self._channel)
        self._compactor = compaction_pb2_grpc.CompactorStub(self._channel)

    def __enter__(self) -> AdminClient:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._channel.close()

    # -- catalog ---------------------------------------------------------------------------------

    def databases(self, pattern: str = "") -> list[Row]:
        reply = self._catalog.ListDatabases(catalog_pb2.ListDatabasesRequest(pattern=pattern), timeout=self._timeout)
        return [{"database": name} for name in reply.names]

    def tables(self, db_name: str, pattern: str = "") -> list[Row]:
        reply = self._catalog.ListTables(catalog_pb2.ListTablesRequest(db_name=db_name, pattern=pattern),
                                         timeout=self._timeout)
        return [{"table": name} for name in reply.names]

    def snapshot(self, db_name: str, table_name: str) -> Snapshot:
        txn_list = self._txns.GetOpenTxns(transactions_pb2.GetOpenTxnsRequest(), timeout=self._timeout).valid_txn_list
        got = self._txns.GetValidWriteIds(transactions_pb2.GetValidWriteIdsRequest(
            full_table_names=[f"{db_name}.{table_name}"], valid_txn_list=txn_list), timeout=self._timeout).tables[0]
        return Snapshot(txn_list, got.valid_write_id_list, got.table_id)

    def partitions(self, db_name: str, table_name: str, limit: int = 0) -> tuple[Snapshot, list[Row]]:
        """Partition names under one snapshot, every page of them (or the first `limit`)."""
        snap = self.snapshot(db_name, table_name)
        names: list[str] = []
        token = ""
        while True:
            reply = self._catalog.ListPartitionNames(catalog_pb2.ListPartitionNamesRequest(
                db_name=db_name, table_name=table_name, page_token=token, read=snap.read_context()),
                timeout=self._timeout)
            names.extend(reply.names)
            token = reply.next_page_token
            if not token or (limit and len(names) >= limit):
                break
        return snap, [{"partition": n} for n in (names[:limit] if limit else names)]

    def describe(self, db_name: str, table_name: str) -> Row:
        snap = self.snapshot(db_name, table_name)
        t = self._catalog.GetTable(catalog_pb2.GetTableRequest(db_name=db_name, table_name=table_name,
                                                               read=snap.read_context()), timeout=self._timeout).table
        return {
            "table": f"{t.db_name}.{t.name}",
            "table_id": t.table_id,
            "type": catalog_pb2.TableType.Name(t.table_type),
            "transactional": t.transactional,
            "owner": t.owner,
            "location": t.sd.location,
            "input_format": t.sd.input_format,
            "output_format": t.sd.output_format,
            "serde": t.sd.serde.serialization_lib,
            "write_id": t.write_id,
            "parameters": dict(t.parameters),
            "snapshot": snap.valid_write_id_list,
            "columns": [{"name": c.name, "type": c.type, "comment": c.comment} for c in t.columns],
            "partition_keys": [{"name": c.name, "type": c.type, "comment": c.comment} for c in t.partition_keys],
        }

    # -- transactions and locks --------------------------------------------------------------------

    def transactions(self, state: str = "") -> list[Row]:
        reply = self._txns.ShowTransactions(transactions_pb2.ShowTransactionsRequest(state=state.upper()),
                                            timeout=self._timeout)
        return [{"txn_id": t.txn_id, "state": t.state, "user": t.user, "host": t.hostname,
                 "started_ms": t.started_time_ms, "last_heartbeat_ms": t.last_heartbeat_time_ms,
                 "agent_info": t.agent_info} for t in reply.transactions]

    def abort(self, txn_ids: list[int]) -> list[int]:
        reply = self._txns.AbortTxns(transactions_pb2.AbortTxnsRequest(txn_ids=txn_ids), timeout=self._timeout)
        return list(reply.event_ids)

    def locks(self, target: str = "", extended: bool = False) -> list[Row]:
        db_name, _, table_name = target.partition(".")
        reply = self._locks.ShowLocks(locks_pb2.ShowLocksRequest(db_name=db_name, table_name=table_name,
                                                                 extended=extended), timeout=self._timeout)
        rows: list[Row] = []
        for lk in reply.locks:
            row: Row = {"lock_id": f"{lk.lock_id}.{lk.component_id}", "database": lk.db_name,
                        "table": lk.table_name, "partition": lk.partition_name,
                        "state": locks_pb2.LockState.Name(lk.state), "type": locks_pb2.LockType.Name(lk.type),
                        "txn_id": lk.txn_id or None, "user": lk.user, "host": lk.hostname}
            if extended:
                row.update({"blocked_by": f"{lk.blocked_by_lock_id}.{lk.blocked_by_component_id}"
                            if lk.blocked_by_lock_id else None,
                            "acquired_at_ms": lk.acquired_at_ms or None,
                            "last_heartbeat_ms": lk.last_heartbeat_ms or None, "agent_info": lk.agent_info,
                            "operation": locks_pb2.DataOperationType.Name(lk.operation)})
            rows.append(row)
        return rows

    # -- this gateway -------------------------------------------------------------------------------

    # -- compaction ------------------------------------------------------------------------------

    def compactions(self, db_name: str = "", table_name: str = "") -> list[Row]:
        reply = self._compactor.ShowCompactions(compaction_pb2.ShowCompactionsRequest(
            db_name=db_name, table_name=table_name), timeout=self._timeout)
        return [{"id": c.id, "database": c.db_name, "table": c.table_name, "partition": c.partition_name or None,
                 "type": c.type, "state": c.state, "worker": c.worker_id or None,
                 "enqueued_ms": c.enqueue_time_ms or None, "started_ms": c.start_ms or None,
                 "duration_ms": c.duration_ms or None, "error": c.error_message or None} for c in reply.compactions]

    def compact(self, db_name: str, table_name: str, partition: str, kind: str,
                properties: dict[str, str]) -> Row:
        kinds = {"major": compaction_pb2.MAJOR, "minor": compaction_pb2.MINOR}
        reply = self._compactor.Compact(compaction_pb2.CompactRequest(
            db_name=db_name, table_name=table_name, partition_name=partition, type=kinds[kind.lower()],
            properties=properties), timeout=self._timeout)
        return {"id": reply.id, "accepted": reply.accepted, "state": reply.state}

    def cache_stats(self) -> Row:
        s = self._admin.CacheStats(admin_pb2.CacheStatsRequest(), timeout=self._timeout)
        reads = s.hits + sum(s.misses_by_reason.values())
        return {"enabled": s.enabled, "hits": s.hits, "reads": reads,
                "hit_ratio": round(s.hits / reads, 4) if reads else 0.0,
                "misses_by_reason": dict(s.misses_by_reason), "tables": s.tables, "partitions": s.partitions,
                "encoded_bytes": s.bytes, "evictions": s.evictions, "poller_position": s.poller_position,
                "poller_lag_events": s.poller_lag_events, "poller_lag_ms": s.poller_lag_ms,
                "poller_lag_p50_ms": s.poller_lag_p50_ms, "poller_lag_p99_ms": s.poller_lag_p99_ms,
                "poller_batches": s.poller_batches,
                "fills": s.fills, "reloads": s.reloads, "resident_bytes": s.resident_bytes}
