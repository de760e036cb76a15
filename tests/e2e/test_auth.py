"""TLS, authentication and the owners of txns and locks, on real gateways with real certificates:
bearer tokens over gRPC, mutual TLS over gRPC and Thrift, PERMISSION_DENIED for another user's txn
or lock unless an admin, and other users' names hidden in SHOW output."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import os
import re
import ssl
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, AsyncIterator

import grpc
import pytest
import thriftpy2.rpc
from thriftpy2.thrift import TApplicationException
from thriftpy2.transport import TTransportException

from gateway.admin import commands
from gateway.app import Gateway
from gateway.auth import read_token_file
from gateway.cli import build_parser
from gateway.config import ConfigError
from gateway.thrift.idl import SERVICE, hms
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import catalog_pb2_grpc, compaction_pb2_grpc, locks_pb2, locks_pb2_grpc
from protos.metastore.v1 import compaction_pb2 as cpb
from protos.metastore.v1 import events_pb2 as epb
from protos.metastore.v1 import events_pb2_grpc
from protos.metastore.v1 import transactions_pb2 as tpb
from protos.metastore.v1 import transactions_pb2_grpc
from tests.builders import table
from tests.conftest import gateway_settings
from tests.pki import Pki, make_pki, start_tls_gateway
from tests.thrift_client import thrift_table
from grpc_health.v1 import health_pb2, health_pb2_grpc

TOKENS = {"alice": "t-alice", "bob": "t-bob", "root": "t-root"}


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    """A CA, the server's certificate (127.0.0.1) and client certificates for alice, bob and root."""
    return make_pki(tmp_path_factory.mktemp("pki"), TOKENS)


@pytest.fixture
async def token_gateway(pg_dsn: str, pki: dict[str, tuple[str, str]]) -> AsyncIterator[Gateway]:
    gw = Gateway(gateway_settings(pg_dsn, **{
        "metastore.gateway.tls.cert.file": pki["server"][0], "metastore.gateway.tls.key.file": pki["server"][1],
        "metastore.gateway.auth.token.file": pki["tokens"][0], "hive.users.in.admin.role": "root",
        "metastore.gateway.thrift.enabled": "false"}))
    await gw.start()
    try:
        yield gw
    finally:
        await gw.stop()


def _channel(gw: Gateway, pki: dict[str, tuple[str, str]], user: str | None = None) -> grpc.aio.Channel:
    root = Path(pki["ca"][0]).read_bytes()
    client = (Path(pki[user][1]).read_bytes(), Path(pki[user][0]).read_bytes()) if user else (None, None)
    credentials = grpc.ssl_channel_credentials(root, *client)
    return grpc.aio.secure_channel(f"127.0.0.1:{gw.port}", credentials)


def _as(user: str | None, token: str | None = None) -> list[tuple[str, str]]:
    return [("authorization", f"Bearer {token or TOKENS[user or '']}")] if user or token else []


async def test_tokens_over_tls_and_the_owners_of_txns(token_gateway: Gateway, pki: dict[str, tuple[str, str]]) -> None:
    async with _channel(token_gateway, pki) as channel:
        txns = transactions_pb2_grpc.TransactionsStub(channel)
        catalog = catalog_pb2_grpc.CatalogStub(channel)
        health = health_pb2_grpc.HealthStub(channel)
        assert (await health.Check(health_pb2.HealthCheckRequest())).status  # probes need no token

        for metadata, why in (([], "needs authentication"), (_as(None, "nope"), "unknown token")):
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await catalog.ListDatabases(pb.ListDatabasesRequest(), metadata=metadata)
            assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED and why in (info.value.details() or "")

        await catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")), metadata=_as("alice"))
        (mine,) = (await txns.OpenTxns(tpb.OpenTxnsRequest(num_txns=1, user="mallory", hostname="h1"),
                                       metadata=_as("alice"))).txn_ids
        (other,) = (await txns.OpenTxns(tpb.OpenTxnsRequest(num_txns=1, user="x", hostname="h2"),
                                        metadata=_as("bob"))).txn_ids
        for call in (txns.CommitTxn(tpb.CommitTxnRequest(txn_id=mine), metadata=_as("bob")),
                     txns.AbortTxns(tpb.AbortTxnsRequest(txn_ids=[mine, other]), metadata=_as("bob")),
                     txns.Heartbeat(tpb.HeartbeatRequest(txn_ids=[mine]), metadata=_as("bob")),
                     txns.Heartbeat(tpb.HeartbeatRequest(txn_range=tpb.TxnRange(min_txn_id=mine, max_txn_id=other)),
                                    metadata=_as("bob"))):
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await call
            assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
            assert f"txn(s) {mine} belong to another user" in (info.value.details() or "")

        shown = {t.txn_id: (t.user, t.hostname) for t in (await txns.ShowTransactions(
            tpb.ShowTransactionsRequest(), metadata=_as("bob"))).transactions}
        assert shown == {mine: ("", ""), other: ("bob", "h2")}  # the authenticated user, not the request's
        shown = {t.txn_id: (t.user, t.hostname) for t in (await txns.ShowTransactions(
            tpb.ShowTransactionsRequest(), metadata=_as("root"))).transactions}
        assert shown == {mine: ("alice", "h1"), other: ("bob", "h2")}

        await txns.CommitTxn(tpb.CommitTxnRequest(txn_id=mine), metadata=_as("alice"))
        await txns.AbortTxns(tpb.AbortTxnsRequest(txn_ids=[other]), metadata=_as("root"))  # an admin may
        state = {t.txn_id: t.state for t in (await txns.ShowTransactions(
            tpb.ShowTransactionsRequest(state="aborted"), metadata=_as("root"))).transactions}
        assert state == {other: "ABORTED"}


async def test_writes_under_another_users_txn_are_refused(token_gateway: Gateway,
                                                         pki: dict[str, tuple[str, str]]) -> None:
    """A write under a txn acts on it (it commits or aborts with the txn), so as for the commit only the
    txn's owner or an admin may make one: allocating its write ids, adding, altering or dropping
    partitions, altering the table. A refused write writes nothing."""
    async with _channel(token_gateway, pki) as channel:
        txns = transactions_pb2_grpc.TransactionsStub(channel)
        catalog = catalog_pb2_grpc.CatalogStub(channel)
        await catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")), metadata=_as("alice"))
        acid = table("db", "t", keys=(("ds", "string"),), transactional=True)
        await catalog.CreateTable(pb.CreateTableRequest(table=acid), metadata=_as("alice"))
        (txn,) = (await txns.OpenTxns(tpb.OpenTxnsRequest(num_txns=1, user="u", hostname="h"),
                                      metadata=_as("alice"))).txn_ids
        day = [pb.Partition(values=["2024-01-01"])]
        writes = {
            "AllocateTableWriteIds": lambda user: txns.AllocateTableWriteIds(tpb.AllocateTableWriteIdsRequest(
                txn_ids=[txn], db_name="db", table_name="t"), metadata=_as(user)),
            "AddPartitions": lambda user: catalog.AddPartitions(pb.AddPartitionsRequest(
                db_name="db", table_name="t", partitions=day, txn_id=txn), metadata=_as(user)),
            "AlterPartitions": lambda user: catalog.AlterPartitions(pb.AlterPartitionsRequest(
                db_name="db", table_name="t", partitions=day, txn_id=txn), metadata=_as(user)),
            "DropPartitions": lambda user: catalog.DropPartitions(pb.DropPartitionsRequest(
                db_name="db", table_name="t", names=["ds=2024-01-01"], txn_id=txn), metadata=_as(user)),
            "AlterTable": lambda user: catalog.AlterTable(pb.AlterTableRequest(
                db_name="db", table_name="t", table=acid, txn_id=txn), metadata=_as(user)),
        }
        for what, write in writes.items():
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await write("bob")
            assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED, what
            assert f"{what}: txn(s) {txn} belong to another user" in (info.value.details() or "")

        async def snapshot() -> pb.ReadContext:
            valid_txns = (await txns.GetOpenTxns(tpb.GetOpenTxnsRequest(), metadata=_as("alice"))).valid_txn_list
            (got,) = (await txns.GetValidWriteIds(tpb.GetValidWriteIdsRequest(
                full_table_names=["db.t"], valid_txn_list=valid_txns), metadata=_as("alice"))).tables
            return pb.ReadContext(valid_write_id_list=got.valid_write_id_list, table_id=got.table_id)

        assert (await snapshot()).valid_write_id_list.split(":")[1] == "0"  # bob allocated no write id

        await writes["AllocateTableWriteIds"]("alice")  # the owner may
        await writes["AddPartitions"]("root")  # and an admin
        await txns.CommitTxn(tpb.CommitTxnRequest(txn_id=txn), metadata=_as("alice"))
        names = await catalog.ListPartitionNames(pb.ListPartitionNamesRequest(
            db_name="db", table_name="t", read=await snapshot()), metadata=_as("alice"))
        assert list(names.names) == ["ds=2024-01-01"]


async def test_the_owner_of_a_lock(token_gateway: Gateway, pki: dict[str, tuple[str, str]]) -> None:
    async with _channel(token_gateway, pki) as channel:
        locks = locks_pb2_grpc.LocksStub(channel)
        catalog = catalog_pb2_grpc.CatalogStub(channel)
        await catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")), metadata=_as("alice"))
        component = locks_pb2.LockComponent(db_name="db", type=locks_pb2.SHARED_READ)
        lock_id = (await locks.Lock(locks_pb2.LockRequest(components=[component], user="x", hostname="h"),
                                    metadata=_as("alice"))).lock_id
        for call in (locks.Unlock(locks_pb2.UnlockRequest(lock_id=lock_id), metadata=_as("bob")),
                     locks.CheckLock(locks_pb2.CheckLockRequest(lock_id=lock_id), metadata=_as("bob"))):
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await call
            assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
        seen = (await locks.ShowLocks(locks_pb2.ShowLocksRequest(), metadata=_as("bob"))).locks
        assert [(lk.user, lk.hostname) for lk in seen] == [("", "")]
        seen = (await locks.ShowLocks(locks_pb2.ShowLocksRequest(), metadata=_as("alice"))).locks
        assert [(lk.user, lk.hostname) for lk in seen] == [("alice", "h")]
        await locks.Unlock(locks_pb2.UnlockRequest(lock_id=lock_id), metadata=_as("root"))


async def test_a_drop_runs_under_its_callers_exclusive_lock_only(token_gateway: Gateway,
                                                                 pki: dict[str, tuple[str, str]]) -> None:
    """A drop is let through under an acquired EXCLUSIVE lock on what it drops (Hive's flow: lock, then
    drop). Open, the gateway cannot tell whose lock it is and presumes the caller's; authenticated, it
    can: another user's EXCLUSIVE lock (Hive takes one for INSERT OVERWRITE) guards the table against
    bob's drop like any conflicting lock, and the refusal does not name the holder to a non-admin."""
    async with _channel(token_gateway, pki) as channel:
        locks = locks_pb2_grpc.LocksStub(channel)
        catalog = catalog_pb2_grpc.CatalogStub(channel)
        await catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")), metadata=_as("alice"))
        for name in ("t", "u"):
            await catalog.CreateTable(pb.CreateTableRequest(table=table("db", name, keys=())), metadata=_as("alice"))
        exclusive = [locks_pb2.LockComponent(db_name="db", table_name=name, type=locks_pb2.EXCLUSIVE)
                     for name in ("t", "u")]
        held = await locks.Lock(locks_pb2.LockRequest(components=exclusive, hostname="alices-host"),
                                metadata=_as("alice"))
        assert held.state == locks_pb2.ACQUIRED
        for drop in (catalog.DropTable(pb.DropTableRequest(db_name="db", table_name="t"), metadata=_as("bob")),
                     catalog.DropDatabase(pb.DropDatabaseRequest(name="db", cascade=True), metadata=_as("bob"))):
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await drop
            assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            assert "EXCLUSIVE on db.t held by another user" in (info.value.details() or "")
            assert "alice" not in (info.value.details() or "")
        for name in ("t", "u"):  # nothing was dropped
            await catalog.GetTable(pb.GetTableRequest(db_name="db", table_name=name), metadata=_as("bob"))
        await catalog.DropTable(pb.DropTableRequest(db_name="db", table_name="t"), metadata=_as("alice"))
        await catalog.DropTable(pb.DropTableRequest(db_name="db", table_name="u"), metadata=_as("root"))  # an admin
        await locks.Unlock(locks_pb2.UnlockRequest(lock_id=held.lock_id), metadata=_as("alice"))


async def test_a_compaction_runs_as_and_opens_its_txn_as_the_caller(token_gateway: Gateway,
                                                                     pki: dict[str, tuple[str, str]]) -> None:
    async with _channel(token_gateway, pki) as channel:
        catalog, comp = catalog_pb2_grpc.CatalogStub(channel), compaction_pb2_grpc.CompactorStub(channel)
        txns = transactions_pb2_grpc.TransactionsStub(channel)
        for name in ("bobs", "roots"):
            await catalog.CreateTable(pb.CreateTableRequest(table=table("default", name, keys=(), transactional=True)),
                                      metadata=_as("bob"))
        await comp.Compact(cpb.CompactRequest(db_name="default", table_name="bobs", type=cpb.MAJOR, run_as="root"),
                           metadata=_as("bob"))
        await comp.Compact(cpb.CompactRequest(db_name="default", table_name="roots", type=cpb.MAJOR, run_as="hive"),
                           metadata=_as("root"))  # an admin names whom it runs as
        shown = (await comp.ShowCompactions(cpb.ShowCompactionsRequest(), metadata=_as("root"))).compactions
        assert sorted((c.table_name, c.run_as) for c in shown) == [("bobs", "bob"), ("roots", "hive")]

        claim = await comp.ClaimCompaction(cpb.ClaimCompactionRequest(worker_id="h-1"), metadata=_as("bob"))
        started = await comp.StartCompaction(cpb.StartCompactionRequest(
            id=claim.id, worker_id="h-1", user="alice", hostname="h"), metadata=_as("bob"))
        rows = (await txns.ShowTransactions(tpb.ShowTransactionsRequest(), metadata=_as("root"))).transactions
        assert [t.user for t in rows if t.txn_id == started.txn_id] == ["bob"]
        with pytest.raises(grpc.aio.AioRpcError) as info:  # the txn is not alice's to abort
            await txns.AbortTxns(tpb.AbortTxnsRequest(txn_ids=[started.txn_id]), metadata=_as("alice"))
        assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED


async def test_a_non_admin_worker_claims_only_compactions_that_run_as_it(token_gateway: Gateway,
                                                                         pki: dict[str, tuple[str, str]]) -> None:
    """A compaction rewrites its table's data with its run-as user's authority: alice's worker does not
    get bob's entry (nor could it fail it until the Initiator gives up on the partition); bob's worker
    and an admin's do."""
    async with _channel(token_gateway, pki) as channel:
        catalog, comp = catalog_pb2_grpc.CatalogStub(channel), compaction_pb2_grpc.CompactorStub(channel)
        for name in ("first", "second"):
            await catalog.CreateTable(pb.CreateTableRequest(table=table("default", name, keys=(), transactional=True)),
                                      metadata=_as("bob"))
            await comp.Compact(cpb.CompactRequest(db_name="default", table_name=name, type=cpb.MAJOR),
                               metadata=_as("bob"))
        claim = comp.ClaimCompaction
        assert not (await claim(cpb.ClaimCompactionRequest(worker_id="h-1"), metadata=_as("alice"))).found
        got = await claim(cpb.ClaimCompactionRequest(worker_id="h-2"), metadata=_as("bob"))
        assert (got.found, got.table_name) == (True, "first")
        got = await claim(cpb.ClaimCompactionRequest(worker_id="h-3"), metadata=_as("root"))
        assert (got.found, got.table_name) == (True, "second")
        shown = (await comp.ShowCompactions(cpb.ShowCompactionsRequest(), metadata=_as("root"))).compactions
        assert sorted((c.table_name, c.state, c.worker_id) for c in shown) == [
            ("first", "working", "h-2"), ("second", "working", "h-3")]


async def test_a_claimed_compaction_is_the_claimers(token_gateway: Gateway, pki: dict[str, tuple[str, str]]) -> None:
    """The worker id is no secret (ShowCompactions lists it): another non-admin naming it may not start,
    heartbeat, complete or fail the compaction; the claimer and an admin may."""
    async with _channel(token_gateway, pki) as channel:
        catalog, comp = catalog_pb2_grpc.CatalogStub(channel), compaction_pb2_grpc.CompactorStub(channel)
        await catalog.CreateTable(pb.CreateTableRequest(table=table("default", "t", keys=(), transactional=True)),
                                  metadata=_as("bob"))
        await comp.Compact(cpb.CompactRequest(db_name="default", table_name="t", type=cpb.MAJOR), metadata=_as("bob"))
        claim = await comp.ClaimCompaction(cpb.ClaimCompactionRequest(worker_id="h-1"), metadata=_as("bob"))
        (shown,) = (await comp.ShowCompactions(cpb.ShowCompactionsRequest(), metadata=_as("alice"))).compactions
        worker, started = shown.worker_id, cpb.StartCompactionResponse()
        calls = {
            "start": lambda user: comp.StartCompaction(cpb.StartCompactionRequest(
                id=claim.id, worker_id=worker, hostname="h"), metadata=_as(user)),
            "heartbeat": lambda user: comp.HeartbeatCompaction(cpb.HeartbeatCompactionRequest(
                id=claim.id, worker_id=worker), metadata=_as(user)),
            "complete": lambda user: comp.CompleteCompaction(cpb.CompleteCompactionRequest(
                id=claim.id, worker_id=worker, txn_id=started.txn_id, highest_write_id=1), metadata=_as(user)),
            "fail": lambda user: comp.FailCompaction(cpb.FailCompactionRequest(
                id=claim.id, worker_id=worker, error_message="mallory was here"), metadata=_as(user)),
        }
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await calls["start"]("alice")
        assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED, "start"
        assert "claimed by another user's worker" in (info.value.details() or "")
        started = await calls["start"]("bob")
        for what in ("heartbeat", "complete", "fail"):
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await calls[what]("alice")
            assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED, what
        await calls["heartbeat"]("root")  # an admin may act on any
        await calls["heartbeat"]("bob")
        (shown,) = (await comp.ShowCompactions(cpb.ShowCompactionsRequest(), metadata=_as("root"))).compactions
        assert (shown.state, shown.error_message) == ("working", "")  # alice changed nothing
        await calls["fail"]("bob")


def _mutual_tls(pki: dict[str, tuple[str, str]]) -> dict[str, str]:
    """The settings of a gateway that requires client certificates signed by the test CA."""
    return {"metastore.gateway.tls.cert.file": pki["server"][0], "metastore.gateway.tls.key.file": pki["server"][1],
            "metastore.gateway.tls.client.ca.file": pki["ca"][0]}


def _thrift_as(gw: Gateway, pki: dict[str, tuple[str, str]], user: str) -> Any:
    """A Thrift client of the gateway presenting `user`'s certificate."""
    context = ssl.create_default_context(cafile=pki["ca"][0])
    context.load_cert_chain(*pki[user])
    return thriftpy2.rpc.make_client(SERVICE, "127.0.0.1", gw.thrift_port, ssl_context=context, timeout=10_000)


async def test_mutual_tls_on_grpc_and_thrift(pg_dsn: str, pki: dict[str, tuple[str, str]]) -> None:
    gw = Gateway(gateway_settings(pg_dsn, **_mutual_tls(pki), **{"hive.users.in.admin.role": "root"}))
    await gw.start()

    def thrift(user: str) -> Any:
        return _thrift_as(gw, pki, user)

    try:
        async with _channel(gw, pki, "alice") as channel:  # the certificate is the identity: no token
            txns = transactions_pb2_grpc.TransactionsStub(channel)
            (mine,) = (await txns.OpenTxns(tpb.OpenTxnsRequest(num_txns=1, user="mallory", hostname="h"))).txn_ids
            shown = (await txns.ShowTransactions(tpb.ShowTransactionsRequest())).transactions
            assert [(t.txn_id, t.user) for t in shown] == [(mine, "alice")]
            await catalog_pb2_grpc.CatalogStub(channel).CreateTable(pb.CreateTableRequest(
                table=table("default", "acid", keys=(), transactional=True)))

        # Connecting blocks (the TLS handshake): in threads, as the gateway serves on this loop.
        alice, bob, root = [await asyncio.to_thread(thrift, user) for user in ("alice", "bob", "root")]
        try:
            assert await asyncio.to_thread(alice.get_all_databases) == ["default"]
            (t2,) = (await asyncio.to_thread(alice.open_txns, hms.OpenTxnRequest(
                num_txns=1, user="mallory", hostname="h"))).txn_ids
            with pytest.raises(TApplicationException, match="belong to another user"):
                await asyncio.to_thread(bob.commit_txn, hms.CommitTxnRequest(txnid=t2))
            with pytest.raises(hms.MetaException, match=f"allocate_table_write_ids: txn\\(s\\) {t2} belong to another"):
                await asyncio.to_thread(bob.allocate_table_write_ids, hms.AllocateTableWriteIdsRequest(
                    txnIds=[t2], dbName="default", tableName="acid"))
            info = await asyncio.to_thread(bob.get_open_txns_info)
            assert {t.id: t.user for t in info.open_txns} == {mine: "", t2: ""}
            info = await asyncio.to_thread(root.get_open_txns_info)
            assert {t.id: t.user for t in info.open_txns} == {mine: "alice", t2: "alice"}
            await asyncio.to_thread(root.abort_txns, hms.AbortTxnsRequest(txn_ids=[mine]))
            await asyncio.to_thread(alice.commit_txn, hms.CommitTxnRequest(txnid=t2))
            await asyncio.to_thread(bob.compact2, hms.CompactionRequest(
                dbname="default", tablename="acid", type=2, runas="root"))
            assert [c.runAs for c in (await asyncio.to_thread(root.show_compact, hms.ShowCompactRequest())).compacts
                    ] == ["bob"]  # the connection's user, not the request's
        finally:
            for client in (alice, bob, root):
                client.close()

        # No client certificate: the TLS handshake refuses it, on both ports.
        async with _channel(gw, pki) as channel:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await catalog_pb2_grpc.CatalogStub(channel).ListDatabases(pb.ListDatabasesRequest(), timeout=10)
            assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
        with pytest.raises((ssl.SSLError, OSError, TTransportException)):  # refused, or closed after TLS 1.3's finish
            plain = ssl.create_default_context(cafile=pki["ca"][0])
            client = await asyncio.to_thread(thriftpy2.rpc.make_client, SERVICE, "127.0.0.1", gw.thrift_port,
                                             ssl_context=plain, timeout=5000)
            await asyncio.to_thread(client.get_all_databases)
    finally:
        await gw.stop()


async def test_roles_are_an_admins_and_grants_an_owners_over_thrift(pg_dsn: str,
                                                                     pki: dict[str, tuple[str, str]]) -> None:
    """Hive's SQL-standard authorization: only the admin role manages roles, and a non-admin grants or
    revokes privileges only on what it owns. A refusal is MetaException and changes nothing."""
    gw = Gateway(gateway_settings(pg_dsn, **_mutual_tls(pki), **{"hive.users.in.admin.role": "root"}))
    await gw.start()

    def thrift(user: str) -> Any:
        return _thrift_as(gw, pki, user)

    def bag(table_name: str | None, principal: str = "bob") -> Any:
        kind = 3 if table_name else 1  # TABLE, else GLOBAL
        return hms.PrivilegeBag(privileges=[hms.HiveObjectPrivilege(
            hiveObject=hms.HiveObjectRef(objectType=kind, dbName="default" if table_name else None,
                                         objectName=table_name),
            principalName=principal, principalType=1,
            grantInfo=hms.PrivilegeGrantInfo(privilege="SELECT", grantor="x", grantorType=1, grantOption=False))])

    alice, bob, root = [await asyncio.to_thread(thrift, user) for user in ("alice", "bob", "root")]
    try:
        for name, owner in (("alices", "alice"), ("bobs", "bob")):
            await asyncio.to_thread(alice.create_table, thrift_table(name, "default", owner))
        refused = {
            "create_role": (bob.create_role, hms.Role(roleName="mine", ownerName="bob")),
            "drop_role": (bob.drop_role, "admin"),
            "grant_role": (bob.grant_role, "admin", "bob", 1, "root", 1, True),
            "revoke_role": (bob.revoke_role, "admin", "root", 1),
            "grant_revoke_role": (bob.grant_revoke_role, hms.GrantRevokeRoleRequest(
                requestType=1, roleName="admin", principalName="bob", principalType=1)),
            "grant_privileges": (bob.grant_privileges, bag("alices")),
            "revoke_privileges": (bob.revoke_privileges, bag("alices", "alice")),
            "grant_revoke_privileges": (bob.grant_revoke_privileges, hms.GrantRevokePrivilegeRequest(
                requestType=1, privileges=bag(None))),
        }
        await asyncio.to_thread(alice.grant_privileges, bag("alices", "alice"))  # the owner may
        for call, *args in refused.values():
            with pytest.raises(hms.MetaException, match="only an admin|only its owner or an admin"):
                await asyncio.to_thread(call, *args)
        roles = await asyncio.to_thread(bob.get_role_grants_for_principal, hms.GetRoleGrantsForPrincipalRequest(
            principal_name="bob", principal_type=1))
        assert [g.roleName for g in roles.principalGrants] == ["public"]  # bob is no admin
        assert "mine" not in await asyncio.to_thread(root.get_role_names)
        held = await asyncio.to_thread(root.list_privileges, None, None, bag("alices").privileges[0].hiveObject)
        assert {(p.principalName, p.grantInfo.privilege) for p in held} == {("alice", "SELECT")}

        assert await asyncio.to_thread(bob.grant_privileges, bag("bobs", "alice"))  # on his own table
        assert await asyncio.to_thread(root.create_role, hms.Role(roleName="analysts", ownerName="root"))
        assert await asyncio.to_thread(root.grant_role, "analysts", "bob", 1, "root", 1, False)
        assert await asyncio.to_thread(root.grant_privileges, bag("alices"))  # an admin on anything
        # Each non-admin grant names its caller as grantor, whatever it sent ("x"); an admin's is as sent.
        grantors = {}
        for name in ("alices", "bobs"):
            for p in await asyncio.to_thread(root.list_privileges, None, None, bag(name).privileges[0].hiveObject):
                grantors[(name, p.principalName)] = (p.grantInfo.grantor, p.grantInfo.grantorType)
        assert grantors == {("alices", "alice"): ("alice", 1), ("bobs", "alice"): ("bob", 1),
                            ("alices", "bob"): ("x", 1)}
    finally:
        for client in (alice, bob, root):
            client.close()
        await gw.stop()


async def test_thrift_connections_count_before_their_tls_handshake(pg_dsn: str,
                                                                  pki: dict[str, tuple[str, str]]) -> None:
    """Connections that never start a TLS handshake count against hive.metastore.server.max.threads
    (those over it are closed at once) and are closed after the handshake time-out, so they cannot hold
    descriptors unauthenticated; a client with a certificate is served afterwards."""
    gw = Gateway(gateway_settings(pg_dsn, **_mutual_tls(pki), **{
        "hive.metastore.server.max.threads": "2", "metastore.gateway.thrift.tls.handshake.timeout": "500ms"}))
    await gw.start()

    async def closed(stream: tuple[asyncio.StreamReader, asyncio.StreamWriter], within_s: float) -> bool:
        try:
            return await asyncio.wait_for(stream[0].read(1), within_s) == b""
        except TimeoutError:
            return False
        except ConnectionError:
            return True

    def thrift(user: str) -> Any:
        return _thrift_as(gw, pki, user)

    try:
        silent = [await asyncio.open_connection("127.0.0.1", gw.thrift_port) for _ in range(20)]
        await asyncio.sleep(0.1)
        assert gw.thrift_stats() == {"connections": 2}
        outcomes = await asyncio.gather(*(closed(s, 0.2) for s in silent[2:]))
        assert all(outcomes)  # over the limit: closed at once, before any handshake
        assert not any(await asyncio.gather(*(closed(s, 0.1) for s in silent[:2])))  # within the time-out
        assert all(await asyncio.gather(*(closed(s, 2.0) for s in silent[:2])))  # no handshake: closed
        assert gw.thrift_stats() == {"connections": 0}
        for _, writer in silent:
            writer.close()
        alice = await asyncio.to_thread(thrift, "alice")
        try:
            assert await asyncio.to_thread(alice.get_all_databases) == ["default"]
        finally:
            alice.close()
    finally:
        await gw.stop()


@pytest.mark.parametrize("loop", ["uvloop", "asyncio"])
def test_concurrent_thrift_tls_handshakes_all_complete_on_either_event_loop(pg_dsn: str, pki: Pki, loop: str) -> None:
    """Clients that send their ClientHello as soon as they connect, 20 at once, are all served, each
    within a bound, by `metastore-gateway serve` on uvloop (its default) and on asyncio: no byte of a TLS
    connection is read before the TLS layer owns it. Under uvloop the connection's stream reader once took
    a ClientHello before the upgrade to TLS, and that handshake hung until the handshake time-out."""
    proc, _ = start_tls_gateway(pg_dsn, pki, f"metastore.gateway.tls.client.ca.file={pki['ca'][0]}",
                                client="alice", serve_args=("--loop", loop))
    try:
        found = re.search(r"Hive Thrift API on ([\d.]+):(\d+)", proc.output())
        assert found, proc.output()[-4000:]
        host, port = found.group(1), int(found.group(2))
        clients = 20
        ready = threading.Barrier(clients)

        def call(user: str) -> tuple[str, Any, float]:
            context = ssl.create_default_context(cafile=pki["ca"][0])
            context.load_cert_chain(*pki[user])
            ready.wait(30)
            started = time.monotonic()
            try:  # connect, then the handshake at once (the ClientHello follows the connect), then a call
                client = thriftpy2.rpc.make_client(SERVICE, host, port, ssl_context=context, timeout=5000)
                try:
                    answer = client.get_open_txns_info()  # answered for the certificate's user
                finally:
                    client.close()
            except Exception as exc:  # noqa: BLE001 - reported below, with every other client's outcome
                return user, repr(exc), time.monotonic() - started
            return user, answer.txn_high_water_mark, time.monotonic() - started

        with ThreadPoolExecutor(clients) as pool:
            outcomes = list(pool.map(call, [("alice", "bob", "root")[i % 3] for i in range(clients)]))
        failed = [outcome for outcome in outcomes if not isinstance(outcome[1], int)]
        assert not failed, f"{len(failed)} of {clients} TLS clients failed on {loop}: {failed}"
        assert max(seconds for *_, seconds in outcomes) < 5.0, outcomes
    finally:
        proc.stop()


async def test_the_access_log_names_the_authenticated_user(pg_dsn: str, pki: dict[str, tuple[str, str]],
                                                           caplog: pytest.LogCaptureFixture) -> None:
    gw = Gateway(gateway_settings(pg_dsn, **_mutual_tls(pki), **{"metastore.gateway.auth.token.file": pki["tokens"][0],
                                                                  "metastore.gateway.access.log": "true"}))
    await gw.start()
    caplog.set_level(logging.INFO, logger="metastore.access")

    def thrift(user: str) -> Any:
        return _thrift_as(gw, pki, user)

    try:
        async with _channel(gw, pki, "alice") as channel:  # alice's certificate, bob's token: the token names him
            await transactions_pb2_grpc.TransactionsStub(channel).OpenTxns(
                tpb.OpenTxnsRequest(num_txns=1, user="mallory", hostname="h"), metadata=_as("bob"))
        client = await asyncio.to_thread(thrift, "alice")
        try:
            await asyncio.to_thread(client.open_txns, hms.OpenTxnRequest(num_txns=1, user="mallory", hostname="h"))
        finally:
            client.close()
    finally:
        await gw.stop()
    lines = [r.getMessage() for r in caplog.records if r.name == "metastore.access" and "pen" in r.getMessage()]
    assert [line.split()[1] + " " + line.split()[-1] for line in lines] == [
        "/metastore.v1.Transactions/OpenTxns user=bob", "open_txns user=alice"]


def test_token_files_and_settings_are_checked(tmp_path: Path, pki: dict[str, tuple[str, str]]) -> None:
    loose = tmp_path / "loose"
    loose.write_text("t,alice\n")
    os.chmod(loose, 0o644)
    with pytest.raises(ConfigError, match="chmod 600"):
        read_token_file(str(loose))
    bad = tmp_path / "bad"
    bad.write_text("just-a-token\n")
    os.chmod(bad, 0o600)
    with pytest.raises(ConfigError, match="line 1 is not 'token,user'"):
        read_token_file(str(bad))
    with pytest.raises(ConfigError, match="needs TLS"):
        gateway_settings("postgresql://x", **{"metastore.gateway.auth.token.file": str(bad)})
    with pytest.raises(ConfigError, match="only by certificate"):
        gateway_settings("postgresql://x", **{"metastore.gateway.auth.token.file": str(bad),
                                              "metastore.gateway.tls.cert.file": pki["server"][0],
                                              "metastore.gateway.tls.key.file": pki["server"][1]})
    with pytest.raises(ConfigError, match="go together"):
        gateway_settings("postgresql://x", **{"metastore.gateway.tls.cert.file": pki["server"][0]})


async def test_admin_commands_over_tls_with_a_token(token_gateway: Gateway, pki: dict[str, tuple[str, str]],
                                                    tmp_path: Path) -> None:
    async def cli(*argv: str) -> tuple[int, str, str]:
        args = build_parser().parse_args([*argv, "--address", f"127.0.0.1:{token_gateway.port}", "--json"])
        out, err = io.StringIO(), io.StringIO()
        code = await asyncio.to_thread(commands.run, args, out, err)
        return code, out.getvalue(), err.getvalue()

    token_file = tmp_path / "token"
    token_file.write_text(TOKENS["root"] + "\n")
    code, out, err = await cli("show", "databases", "--tls-ca", pki["ca"][0], "--token-file", str(token_file))
    assert (code, json.loads(out)) == (0, [{"database": "default"}]), err
    code, _, err = await cli("show", "databases", "--tls-ca", pki["ca"][0])
    assert code == 1 and err.startswith("metastore-gateway show databases: UNAUTHENTICATED"), err
    code, _, err = await cli("show", "databases", "--token-file", str(token_file))
    assert code == 2 and "needs TLS" in err, err


async def test_every_thrift_call_on_another_users_txn_write_id_or_lock_is_refused_and_changes_nothing(
        pg_dsn: str, pki: dict[str, tuple[str, str]], tmp_path: Path) -> None:
    """Over Thrift, where Hive 3's and 4's writes name a transactional table's write id rather than its
    txn: each call that acts on alice's txn (by id, by a write id it allocated, or by a range or list
    holding it) or on her lock is refused to bob, with the method's exception (MetaException where it
    declares one, else TApplicationException, both with the message), and changes nothing: her txn and
    lock stay as they were, bob's own txn in the same abort_txns stays open, no partition is written."""
    gw = Gateway(gateway_settings(pg_dsn, **_mutual_tls(pki), **{
        "hive.users.in.admin.role": "root", "hive.metastore.warehouse.dir": str(tmp_path / "warehouse")}))
    await gw.start()
    alice, bob, root = [await asyncio.to_thread(_thrift_as, gw, pki, user) for user in ("alice", "bob", "root")]

    async def call(client: Any, method: str, *args: Any) -> Any:
        return await asyncio.to_thread(getattr(client, method), *args)

    try:
        acid = thrift_table("acid", "default", "alice", keys=["ds"], transactional="true")
        await call(alice, "create_table", acid)
        (txn,) = (await call(alice, "open_txns", hms.OpenTxnRequest(num_txns=1, user="u", hostname="h"))).txn_ids
        (alloc,) = (await call(alice, "allocate_table_write_ids", hms.AllocateTableWriteIdsRequest(
            dbName="default", tableName="acid", txnIds=[txn]))).txnToWriteIds
        write_id = alloc.writeId
        lock = (await call(alice, "lock", hms.LockRequest(component=[hms.LockComponent(
            type=1, level=1, dbname="default")], user="u", hostname="h"))).lockid
        (own,) = (await call(bob, "open_txns", hms.OpenTxnRequest(num_txns=1, user="u", hostname="h"))).txn_ids

        def part(value: str) -> Any:
            return hms.Partition(values=[value], dbName="default", tableName="acid", parameters={}, writeId=write_id)

        skip = hms.EnvironmentContext(properties={"truncateSkipDataDeletion": "true"})
        refused: dict[str, tuple[Any, ...]] = {
            "commit_txn": (hms.CommitTxnRequest(txnid=txn),),
            "abort_txn": (hms.AbortTxnRequest(txnid=txn),),
            "abort_txns": (hms.AbortTxnsRequest(txn_ids=[own, txn]),),
            "heartbeat": (hms.HeartbeatRequest(txnid=txn),),
            "heartbeat_txn_range": (hms.HeartbeatTxnRangeRequest(min=min(own, txn), max=max(own, txn)),),
            "allocate_table_write_ids": (hms.AllocateTableWriteIdsRequest(
                dbName="default", tableName="acid", txnIds=[txn]),),
            "lock": (hms.LockRequest(component=[hms.LockComponent(type=2, level=2, dbname="default",
                                                                  tablename="acid")],
                                     txnid=txn, user="u", hostname="h"),),
            "add_dynamic_partitions": (hms.AddDynamicPartitions(txnid=txn, writeid=write_id, dbname="default",
                                                                tablename="acid", partitionnames=["ds=1"]),),
            "add_partition": (part("1"),),
            "add_partitions": ([part("1")],),
            "add_partitions_req": (hms.AddPartitionsRequest(dbName="default", tblName="acid", parts=[part("1")],
                                                            ifNotExists=False),),
            "alter_partitions_req": (hms.AlterPartitionsRequest(dbName="default", tableName="acid",
                                                                partitions=[part("1")], writeId=write_id),),
            "alter_table_req": (hms.AlterTableRequest(dbName="default", tableName="acid", table=acid,
                                                      writeId=write_id),),
            "truncate_table_req": (hms.TruncateTableRequest(dbName="default", tableName="acid", writeId=write_id,
                                                            environmentContext=skip),),
        }
        for method, args in refused.items():
            with pytest.raises((hms.MetaException, TApplicationException), match="belong to another user") as info:
                await call(bob, method, *args)
            assert f"txn(s) {txn} belong" in str(info.value), method
        for method in ("check_lock", "unlock"):
            request = hms.CheckLockRequest(lockid=lock) if method == "check_lock" else hms.UnlockRequest(lockid=lock)
            with pytest.raises(TApplicationException, match=f"lock\\(s\\) {lock} belong to another user"):
                await call(bob, method, request)
        with pytest.raises(TApplicationException, match=f"lock\\(s\\) {lock} belong to another user"):
            await call(bob, "heartbeat", hms.HeartbeatRequest(lockid=lock))

        # A drop under alice's EXCLUSIVE lock is refused to bob as over gRPC, and hers is let through.
        await call(alice, "create_table", thrift_table("plain", "default", "alice"))
        exclusive = (await call(alice, "lock", hms.LockRequest(component=[hms.LockComponent(
            type=3, level=2, dbname="default", tablename="plain")], user="u", hostname="h"))).lockid
        with pytest.raises(hms.MetaException, match="EXCLUSIVE on default.plain held by another user"):
            await call(bob, "drop_table", "default", "plain", False)
        await call(alice, "drop_table", "default", "plain", False)
        await call(alice, "unlock", hms.UnlockRequest(lockid=exclusive))

        # Nothing changed: both txns open, alice's lock held, her write id the only one, no partition.
        states = {t.id: t.state for t in (await call(root, "get_open_txns_info")).open_txns}
        assert (states[txn], states[own]) == (3, 3)  # OPEN
        assert [lk.lockid for lk in (await call(root, "show_locks", hms.ShowLocksRequest())).locks] == [lock]
        (ids,) = (await call(root, "get_valid_write_ids", hms.GetValidWriteIdsRequest(
            fullTableNames=["default.acid"]))).tblValidWriteIds
        assert ids.writeIdHighWaterMark == write_id
        assert await call(root, "get_partition_names", "default", "acid", -1) == []

        # The owner, and an admin, may.
        beat = await call(bob, "heartbeat_txn_range", hms.HeartbeatTxnRangeRequest(min=own, max=own))
        assert (list(beat.aborted), list(beat.nosuch)) == ([], [])
        await call(alice, "add_partitions_req", hms.AddPartitionsRequest(
            dbName="default", tblName="acid", parts=[part("1")], ifNotExists=False))
        await call(root, "alter_partitions_req", hms.AlterPartitionsRequest(
            dbName="default", tableName="acid", partitions=[part("1")], writeId=write_id))
        await call(root, "unlock", hms.UnlockRequest(lockid=lock))
        await call(alice, "commit_txn", hms.CommitTxnRequest(txnid=txn))
        await call(bob, "abort_txns", hms.AbortTxnsRequest(txn_ids=[own]))
        assert await call(root, "get_partition_names", "default", "acid", -1) == ["ds=1"]
    finally:
        for client in (alice, bob, root):
            client.close()
        await gw.stop()


async def test_only_an_owner_or_an_admin_changes_who_owns_a_table_or_database(
        pg_dsn: str, pki: dict[str, tuple[str, str]]) -> None:
    """A non-admin grants only on what it owns, and an engine's SQL-standard authorization gives the
    owner every privilege: so an alter that names itself the owner of another user's table or database
    would take it over. Such an alter is refused (MetaException over Thrift, PERMISSION_DENIED over
    gRPC) and changes nothing; other alters of it are not owner checks, and are let through as before;
    its owner may give it away, an admin may change any owner."""
    gw = Gateway(gateway_settings(pg_dsn, **_mutual_tls(pki), **{"hive.users.in.admin.role": "root"}))
    await gw.start()
    alice, bob, root = [await asyncio.to_thread(_thrift_as, gw, pki, user) for user in ("alice", "bob", "root")]

    async def call(client: Any, method: str, *args: Any) -> Any:
        return await asyncio.to_thread(getattr(client, method), *args)

    try:
        await call(alice, "create_database", hms.Database(name="alicedb", description="", parameters={},
                                                          ownerName="alice", ownerType=1))
        await call(alice, "create_table", thrift_table("alices", "default", "alice"))
        grant = hms.PrivilegeBag(privileges=[hms.HiveObjectPrivilege(
            hiveObject=hms.HiveObjectRef(objectType=3, dbName="default", objectName="alices"),
            principalName="bob", principalType=1,
            grantInfo=hms.PrivilegeGrantInfo(privilege="SELECT", grantor="bob", grantorType=1, grantOption=False))])

        with pytest.raises(hms.MetaException, match="only its owner or an admin"):
            await call(bob, "alter_table", "default", "alices", thrift_table("alices", "default", "bob"))
        with pytest.raises(hms.MetaException, match="only its owner or an admin"):
            await call(bob, "alter_table_with_environment_context", "default", "alices",
                       thrift_table("alices", "default", "bob"), None)
        db = await call(alice, "get_database", "alicedb")
        db.ownerName = "bob"
        with pytest.raises(hms.MetaException, match="only its owner or an admin"):
            await call(bob, "alter_database", "alicedb", db)
        async with _channel(gw, pki, "bob") as channel:
            catalog = catalog_pb2_grpc.CatalogStub(channel)
            taken = table("default", "alices", keys=())
            taken.owner = "bob"
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await catalog.AlterTable(pb.AlterTableRequest(db_name="default", table_name="alices", table=taken))
            assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await catalog.AlterDatabase(pb.AlterDatabaseRequest(name="alicedb", database=pb.Database(
                    name="alicedb", owner="bob", owner_type="USER")))
            assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
        with pytest.raises(hms.MetaException, match="only its owner or an admin"):  # so still not his to grant on
            await call(bob, "grant_privileges", grant)
        assert (await call(root, "get_table", "default", "alices")).owner == "alice"
        assert (await call(root, "get_database", "alicedb")).ownerName == "alice"

        await call(bob, "alter_table", "default", "alices",  # not an owner change: as before
                   thrift_table("alices", "default", "alice", comment="bob was here"))
        await call(alice, "create_table", thrift_table("nobodys", "default", ""))
        async with _channel(gw, pki, "bob") as channel:  # gRPC's owner '' (none) is no change of its owner ''
            await catalog_pb2_grpc.CatalogStub(channel).AlterTable(pb.AlterTableRequest(
                db_name="default", table_name="nobodys", table=table("default", "nobodys", keys=())))
        await call(alice, "alter_table", "default", "alices", thrift_table("alices", "default", "bob"))  # given
        assert await call(bob, "grant_privileges", grant)
        db.ownerName = "alice"
        await call(root, "alter_database", "alicedb", db)  # an admin may
        assert (await call(root, "get_database", "alicedb")).ownerName == "alice"
    finally:
        for client in (alice, bob, root):
            client.close()
        await gw.stop()


async def test_only_an_admin_reads_the_notification_log(pg_dsn: str, pki: dict[str, tuple[str, str]]) -> None:
    """Hive 3's and 4's hive.metastore.event.db.notification.api.auth (on by default): the log holds every
    table's objects whole, so a non-admin may not read it, over either protocol (a security audit read
    10,000 events of every user as alice); false lets every authenticated user read it."""
    for restricted in (True, False):
        gw = Gateway(gateway_settings(pg_dsn, **_mutual_tls(pki), **{
            "hive.users.in.admin.role": "root",
            "hive.metastore.event.db.notification.api.auth": str(restricted).lower()}))
        await gw.start()
        try:
            for user in ("alice", "root"):
                client = await asyncio.to_thread(_thrift_as, gw, pki, user)
                try:
                    calls = [("get_current_notificationEventId", ()),
                             ("get_next_notification", (hms.NotificationEventRequest(lastEvent=0, maxEvents=5),)),
                             ("get_notification_events_count",
                              (hms.NotificationEventsCountRequest(fromEventId=0, dbName="default"),))]
                    for method, args in calls:
                        if restricted and user == "alice":
                            with pytest.raises(TApplicationException, match="User alice is not allowed"):
                                await asyncio.to_thread(getattr(client, method), *args)
                        else:
                            await asyncio.to_thread(getattr(client, method), *args)
                finally:
                    client.close()
                async with _channel(gw, pki, user) as channel:
                    events = events_pb2_grpc.EventsStub(channel)
                    for rpc, request in ((events.GetCurrentNotificationEventId,
                                          epb.GetCurrentNotificationEventIdRequest()),
                                         (events.GetNextNotification, epb.GetNextNotificationRequest(max_events=5))):
                        if restricted and user == "alice":
                            with pytest.raises(grpc.aio.AioRpcError) as refused:
                                await rpc(request)
                            assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
                        else:
                            await rpc(request)
        finally:
            await gw.stop()
