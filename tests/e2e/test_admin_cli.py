"""The admin commands of `metastore-gateway` against a real gateway (real PostgreSQL, real gRPC):
what they print as text and as JSON, the state filter of ShowTransactions, abort, and the one-line
errors for a refused call, a usage mistake and an unreachable gateway.

The commands are blocking gRPC clients; they run in a thread so the gateway in this process keeps
serving on the event loop.
"""

from __future__ import annotations

import asyncio
import io
import json
import re
import socket
from typing import Any

import grpc

from gateway.cli import build_parser
from gateway.admin import commands
from gateway.admin.render import text_table
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import locks_pb2 as lpb
from protos.metastore.v1 import locks_pb2_grpc
from protos.metastore.v1 import transactions_pb2 as tpb
from protos.metastore.v1 import transactions_pb2_grpc
from tests.builders import table
from tests.conftest import GatewayClient


async def cli(address: str, *argv: str) -> tuple[int, str, str]:
    args = build_parser().parse_args([*argv, "--address", address])
    out, err = io.StringIO(), io.StringIO()
    code = await asyncio.to_thread(commands.run, args, out, err)
    return code, out.getvalue(), err.getvalue()


async def cli_json(address: str, *argv: str) -> Any:
    code, out, err = await cli(address, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


async def _sales(gateway: GatewayClient) -> tuple[transactions_pb2_grpc.TransactionsStub, int]:
    """sales.orders (transactional, partitioned by ds) with two committed partitions."""
    txns = transactions_pb2_grpc.TransactionsStub(gateway.channel)
    await gateway.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="sales")))
    await gateway.catalog.CreateTable(pb.CreateTableRequest(
        table=table("sales", "orders", keys=(("ds", "string"),), transactional=True)))
    txn = (await txns.OpenTxns(tpb.OpenTxnsRequest(num_txns=1, user="writer", hostname="h1"))).txn_ids[0]
    await txns.AllocateTableWriteIds(tpb.AllocateTableWriteIdsRequest(txn_ids=[txn], db_name="sales",
                                                                      table_name="orders"))
    await gateway.catalog.AddPartitions(pb.AddPartitionsRequest(
        db_name="sales", table_name="orders", txn_id=txn,
        partitions=[pb.Partition(values=["2024-01-01"]), pb.Partition(values=["2024-01-02"])]))
    await txns.CommitTxn(tpb.CommitTxnRequest(txn_id=txn))
    return txns, txn


async def test_catalog_views_under_their_own_snapshot(gateway: GatewayClient) -> None:
    txns, _ = await _sales(gateway)
    assert await cli_json(gateway.address, "show", "databases") == [{"database": "default"}, {"database": "sales"}]
    assert await cli_json(gateway.address, "show", "tables", "sales") == [{"table": "orders"}]
    parts = await cli_json(gateway.address, "show", "partitions", "sales.orders")
    assert parts["partitions"] == ["ds=2024-01-01", "ds=2024-01-02"]
    assert parts["snapshot"].startswith("sales.orders:")
    # An uncommitted partition is not in a snapshot taken while its txn is open.
    open_txn = (await txns.OpenTxns(tpb.OpenTxnsRequest(num_txns=1, user="w2", hostname="h2"))).txn_ids[0]
    await txns.AllocateTableWriteIds(tpb.AllocateTableWriteIdsRequest(txn_ids=[open_txn], db_name="sales",
                                                                      table_name="orders"))
    await gateway.catalog.AddPartitions(pb.AddPartitionsRequest(
        db_name="sales", table_name="orders", txn_id=open_txn, partitions=[pb.Partition(values=["2024-01-03"])]))
    code, out, _ = await cli(gateway.address, "show", "partitions", "sales.orders")
    assert code == 0 and out.split() == ["PARTITION", "ds=2024-01-01", "ds=2024-01-02"]
    described = await cli_json(gateway.address, "describe", "sales.orders")
    assert described["table"] == "sales.orders" and described["transactional"] is True
    assert described["type"] == "MANAGED" and described["table_id"] > 0
    assert [c["name"] for c in described["columns"]] == ["id", "payload"]
    assert described["partition_keys"] == [{"name": "ds", "type": "string", "comment": ""}]
    assert described["snapshot"].startswith("sales.orders:")
    code, text, _ = await cli(gateway.address, "describe", "sales.orders")
    assert code == 0 and "transactional  yes" in text and "partition_keys:" in text


async def test_transactions_by_state_and_abort(gateway: GatewayClient) -> None:
    txns, committed = await _sales(gateway)
    opened = list((await txns.OpenTxns(tpb.OpenTxnsRequest(num_txns=2, user="etl", hostname="h9"))).txn_ids)
    rows = await cli_json(gateway.address, "show", "transactions", "--state", "open")
    assert [r["txn_id"] for r in rows] == opened and {r["user"] for r in rows} == {"etl"}
    assert [r["txn_id"] for r in await cli_json(gateway.address, "show", "transactions", "--state", "committed")
            ] == [committed]
    code, out, err = await cli(gateway.address, "abort", "transactions", str(opened[0]))
    assert code == 0, err
    assert out.split() == ["TXN", "ID", "STATE", str(opened[0]), "ABORTED"]
    assert [r["txn_id"] for r in await cli_json(gateway.address, "show", "transactions", "--state", "aborted")
            ] == [opened[0]]
    everything = await cli_json(gateway.address, "show", "transactions")  # Hive's view: open and aborted
    assert [(r["txn_id"], r["state"]) for r in everything] == [(opened[0], "ABORTED"), (opened[1], "OPEN")]
    code, out, _ = await cli(gateway.address, "show", "transactions")
    header, *lines = out.splitlines()
    assert header.split()[:3] == ["TXN", "ID", "STATE"] and len(lines) == 2
    assert len({line.index("OPEN") if "OPEN" in line else line.index("ABORTED") for line in lines}) == 1  # aligned
    # The server-side filter refuses an unknown state precisely.
    try:
        await txns.ShowTransactions(tpb.ShowTransactionsRequest(state="PENDING"))
        raise AssertionError("an unknown state was accepted")
    except grpc.aio.AioRpcError as exc:
        assert exc.code() == grpc.StatusCode.INVALID_ARGUMENT and "OPEN" in (exc.details() or "")


async def test_show_locks_plain_and_extended(gateway: GatewayClient) -> None:
    await _sales(gateway)
    locks = locks_pb2_grpc.LocksStub(gateway.channel)
    held = await locks.Lock(lpb.LockRequest(components=[lpb.LockComponent(
        db_name="sales", table_name="orders", type=lpb.EXCLUSIVE, operation=lpb.DATA_OPERATION_NO_TXN)],
        user="alice", hostname="h1"))
    waiting = await locks.Lock(lpb.LockRequest(components=[lpb.LockComponent(
        db_name="sales", table_name="orders", type=lpb.SHARED_READ, operation=lpb.DATA_OPERATION_SELECT)],
        user="bob", hostname="h2"))
    assert waiting.state == lpb.WAITING
    rows = await cli_json(gateway.address, "show", "locks", "sales.orders")
    by_user = {r["user"]: r for r in rows if r["table"] == "orders"}
    assert by_user["alice"]["state"] == "ACQUIRED" and by_user["bob"]["state"] == "WAITING"
    assert "blocked_by" not in by_user["bob"]
    extended = await cli_json(gateway.address, "show", "locks", "sales", "--extended")
    bob = next(r for r in extended if r["user"] == "bob" and r["table"] == "orders")
    assert bob["blocked_by"] == f"{held.lock_id}.1" and bob["operation"] == "DATA_OPERATION_SELECT"
    code, out, _ = await cli(gateway.address, "show", "locks", "--extended")
    assert code == 0 and "BLOCKED BY" in out.splitlines()[0]
    await locks.Unlock(lpb.UnlockRequest(lock_id=waiting.lock_id))
    await locks.Unlock(lpb.UnlockRequest(lock_id=held.lock_id))
    code, out, _ = await cli(gateway.address, "show", "locks")
    assert (code, out.strip()) == (0, "(no locks)")


async def test_cache_stats_names_memory(gateway: GatewayClient) -> None:
    await _sales(gateway)
    stats = await cli_json(gateway.address, "cache-stats")
    assert stats["enabled"] is True and stats["resident_bytes"] > 10_000_000
    code, out, _ = await cli(gateway.address, "cache-stats")
    assert code == 0 and "MB resident" in out and out.startswith("cache            enabled")
    shown = re.search(r"over its last (\d+) of (\d+) batches\)", out)  # the count read a moment later
    assert shown is not None and int(shown.group(2)) >= stats["poller_batches"]
    assert int(shown.group(1)) == min(int(shown.group(2)), 1000)


async def test_errors_are_one_line_with_the_cause(gateway: GatewayClient) -> None:
    code, out, err = await cli(gateway.address, "describe", "nosuch.table")
    assert code == 1 and out == "" and err.count("\n") == 1 and err.split(": ")[1].startswith("NOT_FOUND")
    code, _, err = await cli(gateway.address, "describe", "orders")
    assert code == 2 and "db.table" in err
    code, _, err = await cli(gateway.address, "abort", "transactions", "0")
    assert code == 2 and "positive" in err
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        free = f"127.0.0.1:{s.getsockname()[1]}"
    code, _, err = await cli(free, "show", "databases", "--timeout", "3")
    assert code == 1 and err.count("\n") == 1 and "--address" in err and free in err


def test_text_tables_align_and_mark_empty_cells() -> None:
    rendered = text_table([("id", "ID"), ("name", "NAME")], [{"id": 7, "name": "a"}, {"id": 1234, "name": ""}])
    assert rendered.splitlines() == ["ID    NAME", "   7  a", "1234  -"]


async def test_compact_and_show_compactions(gateway: GatewayClient) -> None:
    await _sales(gateway)
    queued = await cli_json(gateway.address, "compact", "sales.orders", "ds=2024-01-01", "major",
                            "--property", "compactor.mapreduce.map.memory.mb=2048")
    assert queued[0]["accepted"] is True and queued[0]["state"] == "initiated"
    again = await cli_json(gateway.address, "compact", "sales.orders", "ds=2024-01-01", "minor")
    assert again[0] == {"id": queued[0]["id"], "accepted": False, "state": "initiated"}  # one active entry
    rows = await cli_json(gateway.address, "show", "compactions", "sales.orders")
    assert [(r["id"], r["partition"], r["type"], r["state"]) for r in rows] == [
        (queued[0]["id"], "ds=2024-01-01", "MAJOR", "initiated")]
    assert await cli_json(gateway.address, "show", "compactions", "web") == []
    code, out, _ = await cli(gateway.address, "show", "compactions")
    assert code == 0 and "ds=2024-01-01" in out and "initiated" in out and out.startswith("ID")
    code, _, err = await cli(gateway.address, "compact", "sales.orders", "sideways")
    assert code == 2 and "major|minor" in err
    code, _, err = await cli(gateway.address, "compact", "sales.orders", "major")  # partitioned: needs one
    assert code == 1 and err.startswith("metastore-gateway compact: INVALID_ARGUMENT"), err
