"""The fixed set of reads the upgrade test compares: what a gateway answers, over gRPC and Thrift, about
the data tests/upgrade/make_fixture.py wrote, as normalized JSON-able values.

This module is run by two versions of the gateway: by make_fixture.py inside the OLD checkout (recording
expected_reads.json) and by tests/e2e/test_upgrade.py in this one. So it imports only what both have (the
generated protos and the Thrift IDL module) and is loaded by file path in the old checkout.
"""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import thriftpy2.rpc
from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message

from gateway.thrift.idl import SERVICE, hms
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import catalog_pb2_grpc, compaction_pb2, compaction_pb2_grpc, events_pb2, events_pb2_grpc
from protos.metastore.v1 import locks_pb2, locks_pb2_grpc, transactions_pb2, transactions_pb2_grpc

ACID = ("sales", "orders")  # the transactional table: its reads carry a snapshot
PARTITIONED = (("sales", "orders"), ("sales", "clicks"), ("ext", "logs"))
FILTERS = {("sales", "orders"): 'region = "eu"', ("sales", "clicks"): 'ds >= "2026-01-02"',
           ("ext", "logs"): 'day <> "d2"'}
MISSING = {("sales", "orders"): "ds=1999-01-01/region=none", ("sales", "clicks"): "ds=1999-01-01",
           ("ext", "logs"): "day=none"}  # a name of no partition, asked for with the others
STATS_COLUMNS = {("sales", "orders"): ["id", "payload"], ("ext", "logs"): ["id", "msg"]}


def proto(message: Message) -> Any:
    return MessageToDict(message, preserving_proto_field_name=True)


def thrift(value: Any) -> Any:
    """A Thrift struct (or list, map, scalar) as plain values: structs as dicts of their set fields."""
    if isinstance(value, (list, tuple)):
        return [thrift(v) for v in value]
    if isinstance(value, dict):
        return {str(k): thrift(v) for k, v in sorted(value.items())}
    if isinstance(value, bytes):
        return value.hex()
    spec = getattr(value, "thrift_spec", None)
    if spec is not None:
        out = {}
        for field in spec.values():
            name = field[1]
            member = getattr(value, name, None)
            if member is not None:
                out[name] = thrift(member)
        return out
    return value


async def snapshot(channel: grpc.aio.Channel, db: str, table: str) -> pb.ReadContext:
    txns = transactions_pb2_grpc.TransactionsStub(channel)
    txn_list = (await txns.GetOpenTxns(transactions_pb2.GetOpenTxnsRequest())).valid_txn_list
    got = (await txns.GetValidWriteIds(transactions_pb2.GetValidWriteIdsRequest(
        full_table_names=[f"{db}.{table}"], valid_txn_list=txn_list))).tables[0]
    return pb.ReadContext(valid_write_id_list=got.valid_write_id_list, table_id=got.table_id)


async def grpc_reads(channel: grpc.aio.Channel) -> dict[str, Any]:
    catalog = catalog_pb2_grpc.CatalogStub(channel)
    txns = transactions_pb2_grpc.TransactionsStub(channel)
    out: dict[str, Any] = {}
    dbs = list((await catalog.ListDatabases(pb.ListDatabasesRequest(pattern="*"))).names)
    out["databases"] = dbs
    for db in dbs:
        out[f"database {db}"] = proto(await catalog.GetDatabase(pb.GetDatabaseRequest(name=db)))
        tables = list((await catalog.ListTables(pb.ListTablesRequest(db_name=db, pattern="*"))).names)
        out[f"tables {db}"] = tables
        for t in tables:
            read = await snapshot(channel, db, t) if (db, t) == ACID else None
            out[f"table {db}.{t}"] = proto(await catalog.GetTable(pb.GetTableRequest(db_name=db, table_name=t,
                                                                                      read=read)))
    for db, t in PARTITIONED:
        read = await snapshot(channel, db, t) if (db, t) == ACID else pb.ReadContext()
        names = list((await catalog.ListPartitionNames(pb.ListPartitionNamesRequest(
            db_name=db, table_name=t, read=read))).names)
        out[f"partition names {db}.{t}"] = names
        out[f"partitions by names {db}.{t}"] = proto(await catalog.GetPartitionsByNames(
            pb.GetPartitionsByNamesRequest(db_name=db, table_name=t, names=[*names, MISSING[(db, t)]], read=read)))
        out[f"partitions by filter {db}.{t}"] = proto(await catalog.GetPartitionsByFilter(
            pb.GetPartitionsByFilterRequest(db_name=db, table_name=t, filter=FILTERS[(db, t)], read=read)))
    events = events_pb2_grpc.EventsStub(channel)
    out["notification events from 0"] = proto(await events.GetNextNotification(
        events_pb2.GetNextNotificationRequest(last_event_id=0)))
    out["current event id"] = proto(await events.GetCurrentNotificationEventId(
        events_pb2.GetCurrentNotificationEventIdRequest()))
    out["open txns"] = proto(await txns.GetOpenTxns(transactions_pb2.GetOpenTxnsRequest()))
    out["show transactions"] = proto(await txns.ShowTransactions(transactions_pb2.ShowTransactionsRequest()))
    out["valid write ids"] = proto(await txns.GetValidWriteIds(transactions_pb2.GetValidWriteIdsRequest(
        full_table_names=["sales.orders", "sales.clicks"], valid_txn_list=out["open txns"]["valid_txn_list"])))
    out["locks"] = proto(await locks_pb2_grpc.LocksStub(channel).ShowLocks(locks_pb2.ShowLocksRequest()))
    out["compactions"] = proto(await compaction_pb2_grpc.CompactorStub(channel).ShowCompactions(
        compaction_pb2.ShowCompactionsRequest()))
    return out


def thrift_reads_sync(port: int) -> dict[str, Any]:
    client = thriftpy2.rpc.make_client(SERVICE, "127.0.0.1", port, timeout=30_000)
    out: dict[str, Any] = {}
    try:
        dbs = client.get_all_databases()
        out["databases"] = dbs
        for db in dbs:
            out[f"database {db}"] = thrift(client.get_database(db))
            tables = client.get_all_tables(db)
            out[f"tables {db}"] = tables
            for t in tables:
                out[f"table {db}.{t}"] = thrift(client.get_table(db, t))
        for db, t in PARTITIONED:
            names = client.get_partition_names(db, t, -1)
            out[f"partition names {db}.{t}"] = names
            out[f"partitions by names {db}.{t}"] = thrift(client.get_partitions_by_names(db, t, names))
            out[f"partitions by filter {db}.{t}"] = thrift(client.get_partitions_by_filter(
                db, t, FILTERS[(db, t)], -1))
        for (db, t), columns in STATS_COLUMNS.items():
            out[f"table stats {db}.{t}"] = thrift(client.get_table_statistics_req(hms.TableStatsRequest(
                dbName=db, tblName=t, colNames=columns)))
            names = client.get_partition_names(db, t, -1)
            out[f"partition stats {db}.{t}"] = thrift(client.get_partitions_statistics_req(
                hms.PartitionsStatsRequest(dbName=db, tblName=t, colNames=columns, partNames=names)))
        out["notification events from 0"] = thrift(client.get_next_notification(
            hms.NotificationEventRequest(lastEvent=0)))
        out["current event id"] = thrift(client.get_current_notificationEventId())
        out["open txns"] = thrift(client.get_open_txns())
        out["open txns info"] = thrift(client.get_open_txns_info())
        out["locks"] = thrift(client.show_locks(hms.ShowLocksRequest()))
        out["compactions"] = thrift(client.show_compact(hms.ShowCompactRequest()))
    finally:
        client.close()
    return out


async def all_reads(channel: grpc.aio.Channel, thrift_port: int) -> dict[str, Any]:
    """Every read, keyed "grpc: ..." and "thrift: ..."."""
    out = {f"grpc: {k}": v for k, v in (await grpc_reads(channel)).items()}
    out.update({f"thrift: {k}": v for k, v in (await asyncio.to_thread(thrift_reads_sync, thrift_port)).items()})
    return out
