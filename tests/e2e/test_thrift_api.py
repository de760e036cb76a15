"""Hive's metastore Thrift API on a real gateway, driven by a third-party client (hmsclient, Apache
Thrift's Python library) and by raw sockets for the inputs no client library would send.

hmsclient is synchronous: every call runs in a thread (`call`), as the gateway serves on this loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
from typing import Any, AsyncIterator, TypeVar

import pytest
from hmsclient import hmsclient
from hmsclient.genthrift.hive_metastore import ThriftHiveMetastore
from hmsclient.genthrift.hive_metastore import ttypes as ht
from thrift.Thrift import TApplicationException

from gateway.app import Gateway
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import transactions_pb2 as tpb
from protos.metastore.v1 import transactions_pb2_grpc
from tests.builders import table
from tests.conftest import connect, gateway_settings, running_gateway, wait_applied

E = TypeVar("E", bound=BaseException)
PARQUET = ("org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
           "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
           "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe")


class Thrift:
    def __init__(self, gw: Gateway) -> None:
        self.gw = gw
        self.port = gw.thrift_port
        self.client = hmsclient.HMSClient(host="127.0.0.1", port=self.port)
        self.client.open()

    async def call(self, method: str, *args: Any) -> Any:
        # The generated client's method (hmsclient overrides some with helpers of its own).
        return await asyncio.to_thread(getattr(ThriftHiveMetastore.Client, method), self.client, *args)

    async def raises(self, exc_type: type[E], method: str, *args: Any) -> E:
        with pytest.raises(exc_type) as info:
            await self.call(method, *args)
        return info.value


@pytest.fixture
async def gw(pg_dsn: str) -> AsyncIterator[Gateway]:
    gateway = Gateway(gateway_settings(pg_dsn, **{"metastore.gateway.thrift.read.timeout": "1s"}))
    await gateway.start()
    try:
        yield gateway
    finally:
        await gateway.stop()


@pytest.fixture
async def hms(gw: Gateway) -> AsyncIterator[Thrift]:
    thrift = Thrift(gw)
    try:
        yield thrift
    finally:
        thrift.client.close()


@contextlib.asynccontextmanager
async def thrift_with_database(dsn: str) -> AsyncIterator[Thrift]:
    """A gateway on `dsn` and a Thrift client of it, with the database `db` made."""
    async with running_gateway(dsn) as gw:
        thrift = Thrift(gw)
        try:
            await thrift.call("create_database", ht.Database("db", "", None, {}))
            yield thrift
        finally:
            thrift.client.close()


def _table(db: str, name: str, *, params: dict[str, str] | None = None, external: bool = False) -> ht.Table:
    sd = ht.StorageDescriptor(
        cols=[ht.FieldSchema("id", "bigint", "the id"), ht.FieldSchema("amount", "double", None)],
        location=None, inputFormat=PARQUET[0], outputFormat=PARQUET[1], compressed=False, numBuckets=-1,
        serdeInfo=ht.SerDeInfo(None, PARQUET[2], {"serialization.format": "1"}), bucketCols=[], sortCols=[],
        parameters={}, storedAsSubDirectories=False)
    return ht.Table(tableName=name, dbName=db, owner="alice", createTime=0, lastAccessTime=0, retention=0, sd=sd,
                    partitionKeys=[ht.FieldSchema("ds", "string", None)], parameters=dict(params or {}),
                    tableType="EXTERNAL_TABLE" if external else "MANAGED_TABLE")


def _partition(db: str, name: str, ds: str, **params: str) -> ht.Partition:
    return ht.Partition(values=[ds], dbName=db, tableName=name, parameters=dict(params))


async def test_fb303_and_session_start_as_spark_does(hms: Thrift) -> None:
    assert await hms.call("getName") == "metastore-gateway"
    assert await hms.call("getStatus") == 2  # ALIVE
    assert await hms.call("set_ugi", "alice", ["alice", "staff"]) == ["alice", "staff"]
    # Hive's metastore creates its default database at start (Spark asks for it first) and never drops it.
    default = await hms.call("get_database", "DEFAULT")
    assert (default.name, default.description, default.ownerName, default.ownerType) == (
        "default", "Default Hive database", "public", ht.PrincipalType.ROLE)
    assert default.locationUri == hms.gw.settings.warehouse_root.rstrip("/")  # the root, qualified as Hive's
    await hms.raises(ht.AlreadyExistsException, "create_database", ht.Database("default", "mine", None, {}))
    refused = await hms.raises(ht.MetaException, "drop_database", "default", True, True)  # as Hive 2.3.10's
    assert "Can not drop default database" in refused.message
    assert await hms.call("get_databases", "*") == ["default"]
    assert await hms.call("get_config_value", "hive.txn.timeout", "x") == "300s"  # with its unit, as Hive
    assert await hms.call("get_config_value", "hive.no.such.key", "fallback") == "fallback"
    # As Hive's: only keys of Hive's families are readable, and never a setting that holds a credential.
    # Nor where the gateway keeps its files and keys, or who its admins are (a security audit read them).
    for hidden in ("no.such.key", "javax.jdo.option.ConnectionPassword", "metastore.gateway.dsn",
                   "metastore.gateway.data.dir", "metastore.gateway.tls.key.file", "metastore.gateway.auth.token.file",
                   "hive.users.in.admin.role", "metastore.gateway.data.roots"):
        refused = await hms.raises(ht.ConfigValSecurityException, "get_config_value", hidden, "x")
        assert f"the config key {hidden} cannot be accessed" in refused.message


async def test_database_table_and_partition_lifecycle(hms: Thrift) -> None:
    await hms.call("create_database", ht.Database("sales", "", None, {"team": "a"}, ownerName="alice"))
    err = await hms.raises(ht.AlreadyExistsException, "create_database", ht.Database("sales", "", None, {}))
    assert "sales already exists" in err.message
    assert (await hms.call("get_database", "sales")).ownerType == ht.PrincipalType.USER
    # ALTER DATABASE ... SET OWNER ROLE: the owner's type is kept, read back and sent to every cache
    owned = await hms.call("get_database", "sales")
    owned.ownerName, owned.ownerType = "analysts", ht.PrincipalType.ROLE
    await hms.call("alter_database", "sales", owned)
    assert ((await hms.call("get_database", "sales")).ownerName,
            (await hms.call("get_database", "sales")).ownerType) == ("analysts", ht.PrincipalType.ROLE)
    await hms.call("create_table", _table("sales", "orders", params={"spark.sql.sources.schema": "{}"}))
    got = await hms.call("get_table", "sales", "orders")
    assert (got.tableName, got.dbName, got.owner, got.tableType) == ("orders", "sales", "alice", "MANAGED_TABLE")
    # a column sent without a comment reads back with none (null), as Hive answers ('' sent reads the same)
    assert [(c.name, c.type, c.comment) for c in got.sd.cols] == [("id", "bigint", "the id"),
                                                                  ("amount", "double", None)]
    assert (got.sd.inputFormat, got.sd.serdeInfo.serializationLib) == (PARQUET[0], PARQUET[2])
    assert got.sd.serdeInfo.parameters == {"serialization.format": "1"}
    assert got.sd.location.endswith("/sales.db/orders") and got.parameters["spark.sql.sources.schema"] == "{}"
    assert int(got.parameters["transient_lastDdlTime"]) > 1_700_000_000  # stamped, as Hive's metastore does
    assert await hms.call("get_tables", "sales", "ord*") == ["orders"]
    assert await hms.call("get_all_tables", "sales") == ["orders"]

    request = ht.AddPartitionsRequest("sales", "orders", [_partition("sales", "orders", d, src=d)
                                                         for d in ("2024-01-01", "2024-01-02", "2024-02-01")],
                                      ifNotExists=False, needResult=True)
    added = await hms.call("add_partitions_req", request)
    assert [p.values for p in added.partitions] == [["2024-01-01"], ["2024-01-02"], ["2024-02-01"]]
    assert await hms.call("get_partition_names", "sales", "orders", -1) == [
        "ds=2024-01-01", "ds=2024-01-02", "ds=2024-02-01"]
    pruned = await hms.call("get_partitions_by_filter", "sales", "orders", 'ds >= "2024-01-02"', -1)
    assert [p.values for p in pruned] == [["2024-01-02"], ["2024-02-01"]]
    assert [c.name for c in pruned[0].sd.cols] == ["id", "amount"]  # the table's columns, as Hive answers
    by_ps = await hms.call("get_partitions_ps_with_auth", "sales", "orders", ["2024-01-01"], -1, "alice", [])
    assert [p.parameters["src"] for p in by_ps] == ["2024-01-01"]
    assert len(await hms.call("get_partitions_ps_with_auth", "sales", "orders", [""], -1, "alice", [])) == 3
    by_names = await hms.call("get_partitions_by_names", "sales", "orders", ["ds=2024-02-01", "ds=1999-01-01"])
    assert [p.values for p in by_names] == [["2024-02-01"]]
    await hms.raises(ht.AlreadyExistsException, "add_partition", _partition("sales", "orders", "2024-01-01"))

    one = await hms.call("get_partition", "sales", "orders", ["2024-01-01"])
    one.parameters["spark.sql.statistics.numRows"] = "42"
    await hms.call("alter_partitions", "sales", "orders", [one])
    assert (await hms.call("get_partition_by_name", "sales", "orders", "ds=2024-01-01")).parameters[
        "spark.sql.statistics.numRows"] == "42"
    assert await hms.call("drop_partition", "sales", "orders", ["2024-01-02"], True) is True
    await hms.raises(ht.NoSuchObjectException, "get_partition", "sales", "orders", ["2024-01-02"])

    got.parameters["spark.sql.statistics.totalSize"] = "1234"
    await hms.call("alter_table_with_environment_context", "sales", "orders", got, None)
    assert (await hms.call("get_table", "sales", "orders")).parameters["spark.sql.statistics.totalSize"] == "1234"
    got.tableName = "orders_v2"
    await hms.call("alter_table", "sales", "orders", got)
    assert await hms.call("get_all_tables", "sales") == ["orders_v2"]
    # Hive's own sentence first: Spark's client matches "Database <name> is not empty" to answer
    # its SCHEMA_NOT_EMPTY error (with any other text, DROP DATABASE fails with the raw exception).
    refused = await hms.raises(ht.InvalidOperationException, "drop_database", "sales", True, False)
    assert refused.message.startswith("Database sales is not empty. One or more tables exist"), refused.message
    await hms.call("drop_table", "sales", "orders_v2", True)
    await hms.raises(ht.NoSuchObjectException, "get_table", "sales", "orders_v2")
    await hms.call("drop_database", "sales", True, True)
    assert await hms.call("get_all_databases") == ["default"]


async def test_a_partition_named_twice_is_skipped_where_it_exists_and_refused_where_new(hms: Thrift) -> None:
    """Spark's MSCK REPAIR TABLE sends `hr=2` and `Hr=2` directories as one partition twice, with ifNotExists:
    Hive skips each copy of one that exists before it looks further, and the repair goes on. One that is new
    named twice is refused whole, as by Hive, and so is any named twice without ifNotExists."""
    await hms.call("create_database", ht.Database("sales", "", None, {}))
    await hms.call("create_table", _table("sales", "orders"))
    await hms.call("add_partition", _partition("sales", "orders", "2024-01-01"))

    def request(*days: str, if_not_exists: bool = True) -> ht.AddPartitionsRequest:
        return ht.AddPartitionsRequest("sales", "orders", [_partition("sales", "orders", d) for d in days],
                                       ifNotExists=if_not_exists, needResult=True)

    added = await hms.call("add_partitions_req", request("2024-01-01", "2024-01-02", "2024-01-01"))
    assert [p.values for p in added.partitions] == [["2024-01-02"]]
    err = await hms.raises(ht.InvalidObjectException, "add_partitions_req",
                           request("2024-01-01", "2024-01-03", "2024-01-03"))
    assert "ds=2024-01-03 appears twice" in err.message
    await hms.raises(ht.InvalidObjectException, "add_partitions_req",
                     request("2024-01-01", "2024-01-01", if_not_exists=False))
    assert await hms.call("get_partition_names", "sales", "orders", -1) == ["ds=2024-01-01", "ds=2024-01-02"]


async def test_failures_answer_a_declared_exception_and_the_connection_keeps_serving(hms: Thrift) -> None:
    err = await hms.raises(ht.NoSuchObjectException, "get_table", "nodb", "t")
    assert err.message == "database nodb does not exist"
    await hms.call("create_database", ht.Database("d", "", None, {}))
    err = await hms.raises(ht.InvalidObjectException, "create_table", _table("d", "bad name!"))
    assert "bad name!" in err.message
    err = await hms.raises(ht.NoSuchObjectException, "get_partitions_by_filter", "d", "missing", "ds = 1", -1)
    assert err.message == "table d.missing does not exist"
    await hms.call("create_table", _table("d", "t"))
    err = await hms.raises(ht.MetaException, "get_partitions_by_filter", "d", "t", "ds = ", -1)
    assert "filter" in err.message.lower()
    assert await hms.call("get_all_databases") == ["d", "default"]


async def test_unknown_method_answers_unknown_method(hms: Thrift) -> None:
    err = await hms.raises(TApplicationException, "get_partitions_by_expr",
                           ht.PartitionsByExprRequest("d", "t", b"", None, -1))
    assert err.type == TApplicationException.UNKNOWN_METHOD
    assert await hms.call("get_all_databases") == ["default"]  # the same connection goes on


async def _uncommitted_partition(client: Any) -> tuple[transactions_pb2_grpc.TransactionsStub, int]:
    """Transactional table db.t with partition p=a added over gRPC by a txn left open: (stub, txn)."""
    txns = transactions_pb2_grpc.TransactionsStub(client.channel)
    await client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
    await client.catalog.CreateTable(pb.CreateTableRequest(
        table=table("db", "t", keys=(("p", "string"),), transactional=True)))
    (txn,) = (await txns.OpenTxns(tpb.OpenTxnsRequest(num_txns=1, user="u"))).txn_ids
    await client.catalog.AddPartitions(pb.AddPartitionsRequest(
        db_name="db", table_name="t", txn_id=txn, partitions=[pb.Partition(values=["a"])]))
    return txns, txn


async def test_transactional_table_reads_without_a_snapshot_see_only_committed_state(gw: Gateway, hms: Thrift) -> None:
    client = await connect(f"127.0.0.1:{gw.port}")
    try:
        txns, txn = await _uncommitted_partition(client)
        assert await hms.call("get_partition_names", "db", "t", -1) == []  # uncommitted: not seen
        assert await hms.call("get_partitions_by_names", "db", "t", ["p=a"]) == []
        await txns.CommitTxn(tpb.CommitTxnRequest(txn_id=txn))
        assert await hms.call("get_partition_names", "db", "t", -1) == ["p=a"]
        assert (await hms.call("get_table", "db", "t")).parameters["transactional"] == "true"
    finally:
        await client.channel.close()


# -- raw bytes: what a broken or hostile client sends --------------------------------------------


def _call_header(name: str, seqid: int = 1) -> bytes:
    return struct.pack("!iI", -2147418111, len(name)) + name.encode() + struct.pack("!i", seqid)  # 0x80010001


async def _raw(port: int, payload: bytes, *, read: bool = True, wait_s: float = 5.0) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(payload)
        await writer.drain()
        if not read:
            return b""
        async with asyncio.timeout(wait_s):
            return await reader.read()  # until the server closes the connection
    finally:
        writer.close()


async def test_a_list_of_two_billion_elements_closes_the_connection_at_once(hms: Thrift) -> None:
    bomb = _call_header("get_partitions_by_names") + bytes([11]) + struct.pack("!h", 1) + struct.pack("!i", 1) + b"d" \
        + bytes([15]) + struct.pack("!h", 3) + bytes([11]) + struct.pack("!i", 2**31 - 1)
    assert await _raw(hms.port, bomb, wait_s=2.0) == b""
    assert await hms.call("get_all_databases") == ["default"]  # other clients keep being served


async def test_half_a_message_then_silence_is_closed_after_the_read_timeout(hms: Thrift) -> None:
    started = asyncio.get_running_loop().time()
    assert await _raw(hms.port, _call_header("get_all_databases")[:7], wait_s=5.0) == b""
    assert asyncio.get_running_loop().time() - started < 4.5  # read timeout is 1s in this fixture
    assert await hms.call("get_all_databases") == ["default"]


async def test_a_message_trickled_slower_than_the_read_timeout_is_closed(hms: Thrift) -> None:
    """One byte each 0.4 s keeps every read under the time-out (1s here); the message as a whole must still
    arrive within it (a security audit held 8 connections of 90 MB each open this way, 926 MB)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", hms.port)
    header = _call_header("get_all_databases")
    started = asyncio.get_running_loop().time()
    try:
        for byte in header[:-1]:
            writer.write(bytes([byte]))
            await writer.drain()
            if reader.at_eof() or await _closed(reader, 0.4):
                break
        elapsed = asyncio.get_running_loop().time() - started
    finally:
        writer.close()
    assert elapsed < 3.0, f"still open after {elapsed:.1f} s of a trickled message"
    assert await hms.call("get_all_databases") == ["default"]


async def _closed(reader: asyncio.StreamReader, wait_s: float) -> bool:
    """Whether the server closed the connection within `wait_s` (it sends nothing before a whole call)."""
    try:
        async with asyncio.timeout(wait_s):
            return await reader.read(1) == b""
    except TimeoutError:
        return False


async def test_a_client_that_never_reads_its_replies_is_closed_after_the_read_timeout(gw: Gateway,
                                                                                       hms: Thrift) -> None:
    """Calls sent and their replies never read: once the sockets are full the reply waits, and after the
    read time-out (1s here) the connection is closed rather than held for good."""
    await hms.call("create_database", ht.Database("db", "", None, {}))
    await hms.call("create_table", _table("db", "big", params={f"p{i}": "x" * 60_000 for i in range(15)}))

    def string(field: int, value: str) -> bytes:
        return bytes([11]) + struct.pack("!hi", field, len(value)) + value.encode()

    get_table = _call_header("get_table") + string(1, "db") + string(2, "big") + bytes([0])
    before = gw.thrift_stats()["connections"]  # the fixture's client
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    loop = asyncio.get_running_loop()
    try:
        await loop.sock_connect(sock, ("127.0.0.1", hms.port))
        await loop.sock_sendall(sock, get_table * 40)  # about 36 MB of replies, never read
        async with asyncio.timeout(10):
            while gw.thrift_stats()["connections"] == before:  # the server took the connection
                await asyncio.sleep(0.05)
            while gw.thrift_stats()["connections"] > before:  # ... and closes it
                await asyncio.sleep(0.1)
    finally:
        sock.close()
    assert await hms.call("get_all_databases") == ["db", "default"]  # other clients keep being served


async def test_garbage_and_wrong_argument_types(hms: Thrift) -> None:
    assert await _raw(hms.port, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", wait_s=3.0) == b""
    # get_database(name) with field 1 sent as an i32: skipped by type, so the name is missing.
    wrong = _call_header("get_database") + bytes([8]) + struct.pack("!hi", 1, 7) + bytes([0])
    reply = await _raw_reply(hms.port, wrong)
    assert b"name is required" in reply  # a MetaException, and the connection answered


async def _raw_reply(port: int, payload: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(payload)
        await writer.drain()
        async with asyncio.timeout(5):
            return await reader.read(65536)
    finally:
        writer.close()


async def test_many_idle_connections_do_not_stop_service(hms: Thrift) -> None:
    idle = [await asyncio.open_connection("127.0.0.1", hms.port) for _ in range(500)]
    try:
        assert await hms.call("get_all_databases") == ["default"]
        assert hms.gw.thrift_stats()["connections"] >= 500
    finally:
        for _, writer in idle:
            writer.close()



async def test_what_spark_and_hive_write_round_trips(gw: Gateway, hms: Thrift) -> None:
    """Views, sort and skew, serde and descriptor parameters, per-partition columns and
    parameters the size Spark writes: read back as written, over Thrift and over gRPC."""
    await hms.call("create_database", ht.Database("d", "", None, {}))
    schema = '{"type":"struct","fields":[' + ",".join(f'{{"name":"c{i}","type":"long"}}' for i in range(2000)) + "]}"
    t = _table("d", "t", params={"spark.sql.sources.schema": schema})
    t.sd.numBuckets, t.sd.bucketCols = 4, ["id"]
    t.sd.sortCols = [ht.Order("id", 0)]
    t.sd.skewedInfo = ht.SkewedInfo(["id"], [["1"], ["2"]], {})
    t.sd.parameters = {"k": "v"}
    t.sd.storedAsSubDirectories = True
    await hms.call("create_table", t)
    got = await hms.call("get_table", "d", "t")
    assert len(got.parameters["spark.sql.sources.schema"]) == len(schema) > 60_000
    assert ([(o.col, o.order) for o in got.sd.sortCols], got.sd.numBuckets, got.sd.bucketCols) == \
        ([("id", 0)], 4, ["id"])
    assert got.sd.skewedInfo.skewedColValues == [["1"], ["2"]]
    # Skew locations are a map keyed by lists; Python's Thrift client cannot decode those (Java's can), so
    # they are written over Thrift here and read back over gRPC below.
    skewed = _table("d", "skewed")
    skewed.sd.skewedInfo = ht.SkewedInfo(["id"], [["1"]], {("1",): "/w/d/skewed/id=1"})
    await hms.call("create_table", skewed)
    assert (got.sd.parameters, got.sd.storedAsSubDirectories) == ({"k": "v"}, True)

    old = _partition("d", "t", "2024-01-01")
    old.sd = ht.StorageDescriptor(cols=[ht.FieldSchema("id", "bigint", None)], location="/elsewhere/p1",
                                  serdeInfo=ht.SerDeInfo(None, PARQUET[2], {}))
    same = _partition("d", "t", "2024-01-02")
    same.sd = ht.StorageDescriptor(cols=got.sd.cols)
    await hms.call("add_partitions", [old, same])
    p1, p2 = await hms.call("get_partitions_by_names", "d", "t", ["ds=2024-01-01", "ds=2024-01-02"])
    assert [c.name for c in p1.sd.cols] == ["id"] and p1.sd.location == "file:/elsewhere/p1"
    assert [c.name for c in p2.sd.cols] == ["id", "amount"]
    got.sd.cols.append(ht.FieldSchema("note", "string", None))  # ALTER TABLE ADD COLUMNS, without CASCADE
    await hms.call("alter_table", "d", "t", got)
    assert [c.name for c in (await hms.call("get_table", "d", "t")).sd.cols] == ["id", "amount", "note"]
    p2 = (await hms.call("get_partitions_by_names", "d", "t", ["ds=2024-01-02"]))[0]
    assert [c.name for c in p2.sd.cols] == ["id", "amount"]  # a partition keeps the columns it was written with

    view = ht.Table(tableName="v", dbName="d", owner="alice", sd=ht.StorageDescriptor(
        cols=[ht.FieldSchema("id", "bigint", None)], serdeInfo=ht.SerDeInfo(None, None, {})), partitionKeys=[],
        parameters={}, viewOriginalText="SELECT id FROM t", viewExpandedText="SELECT `t`.`id` FROM `d`.`t`",
        tableType="VIRTUAL_VIEW")
    await hms.call("create_table", view)
    got_view = await hms.call("get_table", "d", "v")
    assert (got_view.tableType, got_view.viewOriginalText, got_view.viewExpandedText) == (
        "VIRTUAL_VIEW", "SELECT id FROM t", "SELECT `t`.`id` FROM `d`.`t`")
    assert await hms.call("get_tables_by_type", "d", "*", "VIRTUAL_VIEW") == ["v"]

    client = await connect(f"127.0.0.1:{gw.port}")
    try:
        table_pb = (await client.catalog.GetTable(pb.GetTableRequest(db_name="d", table_name="v"))).table
        assert (table_pb.table_type, table_pb.view_expanded_text) == (pb.VIRTUAL_VIEW, "SELECT `t`.`id` FROM `d`.`t`")
        t_pb = (await client.catalog.GetTable(pb.GetTableRequest(db_name="d", table_name="t"))).table
        assert (t_pb.owner_type, [(o.col, o.order) for o in t_pb.sd.sort_cols]) == ("USER", [("id", 0)])
        assert [list(v.values) for v in t_pb.sd.skewed_info.col_values] == [["1"], ["2"]]
        skewed_pb = (await client.catalog.GetTable(pb.GetTableRequest(db_name="d", table_name="skewed"))).table
        assert [(list(x.values), x.location) for x in skewed_pb.sd.skewed_info.value_locations] == [
            (["1"], "/w/d/skewed/id=1")]
        parts = (await client.catalog.GetPartitionsByNames(pb.GetPartitionsByNamesRequest(
            db_name="d", table_name="t", names=["ds=2024-01-01", "ds=2024-01-02"]))).partitions
        assert [[c.name for c in p.columns] for p in parts] == [["id"], ["id", "amount"]]
    finally:
        await client.channel.close()


async def test_thrift_writes_on_one_gateway_read_through_grpc_on_another_and_back(gw: Gateway, hms: Thrift) -> None:
    other = Gateway(gateway_settings(gw.dsn))
    await other.start()
    client = await connect(f"127.0.0.1:{other.port}")
    try:
        # Thrift on the first gateway, gRPC on the second, once its poller has applied the writes (reads
        # without a snapshot are eventually consistent across gateways; with a snapshot they are exact).
        await hms.call("create_database", ht.Database("x", "", None, {}))
        await hms.call("create_table", _table("x", "t", params={"k": "1"}))
        await hms.call("add_partitions", [_partition("x", "t", "2024-01-01", tag="thrift")])
        await wait_applied(other)
        got = (await client.catalog.GetTable(pb.GetTableRequest(db_name="x", table_name="t"))).table
        assert got.parameters["k"] == "1"
        parts = (await client.catalog.GetPartitionsByNames(pb.GetPartitionsByNamesRequest(
            db_name="x", table_name="t", names=["ds=2024-01-01"]))).partitions
        assert [p.parameters["tag"] for p in parts] == ["thrift"]
        # gRPC on the second gateway, Thrift on the first, the same way.
        await client.catalog.CreateTable(pb.CreateTableRequest(table=table("x", "u", keys=(("ds", "string"),))))
        await client.catalog.AddPartitions(pb.AddPartitionsRequest(db_name="x", table_name="u", partitions=[
            pb.Partition(values=["2024-01-02"], parameters={"tag": "grpc"})]))
        await wait_applied(gw)
        assert (await hms.call("get_table", "x", "u")).tableName == "u"
        assert [p.parameters["tag"] for p in await hms.call("get_partitions", "x", "u", -1)] == ["grpc"]
        # And a change to a table the first gateway has cached.
        got.parameters["k"] = "2"
        await client.catalog.AlterTable(pb.AlterTableRequest(db_name="x", table_name="t", table=got))
        await client.catalog.AddPartitions(pb.AddPartitionsRequest(db_name="x", table_name="t", partitions=[
            pb.Partition(values=["2024-01-02"], parameters={"tag": "grpc"})]))
        await wait_applied(gw)
        assert (await hms.call("get_table", "x", "t")).parameters["k"] == "2"
        assert [p.parameters["tag"] for p in await hms.call("get_partitions", "x", "t", -1)] == ["thrift", "grpc"]
        # A Thrift write is read back over gRPC on the gateway that took it, though its cache holds the
        # table and its poller is paused: the Thrift handler hands the write to the same facade.
        assert (await gw_grpc_table(gw, "x", "t")).parameters["k"] == "2"  # a miss: the table is loaded
        assert gw.poller is not None and gw.cache is not None
        await gw.poller.wait_loaded()
        assert gw.cache.by_name("x", "t") is not None
        gw.poller.pause()
        t = await hms.call("get_table", "x", "t")
        t.parameters["k"] = "3"
        await hms.call("alter_table", "x", "t", t)
        assert (await gw_grpc_table(gw, "x", "t")).parameters["k"] == "3"
        gw.poller.resume()
    finally:
        await client.channel.close()
        await other.stop()


async def gw_grpc_table(gw: Gateway, db: str, name: str) -> pb.Table:
    client = await connect(f"127.0.0.1:{gw.port}")
    try:
        return (await client.catalog.GetTable(pb.GetTableRequest(db_name=db, table_name=name))).table
    finally:
        await client.channel.close()


async def test_stop_closes_idle_connections_at_once(pg_dsn: str) -> None:
    gateway = Gateway(gateway_settings(pg_dsn, **{"metastore.gateway.shutdown.grace": "20s"}))
    await gateway.start()
    thrift = Thrift(gateway)
    try:
        assert await thrift.call("get_all_databases") == ["default"]  # a connection, now idle, as Spark keeps them
        started = asyncio.get_running_loop().time()
        await gateway.stop()
        assert asyncio.get_running_loop().time() - started < 10  # well inside the 20 s grace of calls under way
    finally:
        thrift.client.close()
        await gateway.stop()


async def test_partition_reads_come_from_the_cache_and_equal_the_databases(gw: Gateway, hms: Thrift) -> None:
    await hms.call("create_database", ht.Database("d", "", None, {}))
    await hms.call("create_table", _table("d", "t"))
    await hms.call("add_partitions", [_partition("d", "t", f"2024-01-{i:02d}", n=str(i)) for i in range(1, 21)])
    names = [f"ds=2024-01-{i:02d}" for i in (3, 1, 20)] + ["ds=1999-01-01"]
    assert len(await hms.call("get_partitions_by_names", "d", "t", names)) == 3  # a miss starts the table's load
    assert gw.poller is not None and gw.cache is not None
    await gw.poller.wait_loaded()
    await wait_applied(gw)
    cached: dict[str, Any] = {}
    hits = gw.cache.stats.hits
    cached["names"] = await hms.call("get_partitions_by_names", "d", "t", names)
    cached["present"] = await hms.call("get_partitions_by_names", "d", "t", names[:3])  # the live view's path
    cached["filter"] = await hms.call("get_partitions_by_filter", "d", "t", 'ds >= "2024-01-18"', -1)
    cached["ps"] = await hms.call("get_partitions_ps_with_auth", "d", "t", ["2024-01-05"], -1, "u", [])
    cached["all"] = await hms.call("get_partitions", "d", "t", 5)
    cached["one"] = await hms.call("get_partition_by_name", "d", "t", "ds=2024-01-07")
    cached["part names"] = await hms.call("get_partition_names", "d", "t", -1)
    # Every one of them answered from the cache (get_partition_by_name with two hits: the table's keys, which
    # read its name, then the partition).
    assert gw.cache.stats.hits == hits + 8

    oracle = Gateway(gateway_settings(gw.dsn, **{"metastore.gateway.cache.enabled": "false"}))
    await oracle.start()
    client = hmsclient.HMSClient(host="127.0.0.1", port=oracle.thrift_port)
    client.open()
    try:
        def call(method: str, *args: Any) -> Any:
            return getattr(ThriftHiveMetastore.Client, method)(client, *args)

        from_database = {
            "names": await asyncio.to_thread(call, "get_partitions_by_names", "d", "t", names),
            "present": await asyncio.to_thread(call, "get_partitions_by_names", "d", "t", names[:3]),
            "filter": await asyncio.to_thread(call, "get_partitions_by_filter", "d", "t", 'ds >= "2024-01-18"', -1),
            "ps": await asyncio.to_thread(call, "get_partitions_ps_with_auth", "d", "t", ["2024-01-05"], -1, "u", []),
            "all": await asyncio.to_thread(call, "get_partitions", "d", "t", 5),
            "one": await asyncio.to_thread(call, "get_partition_by_name", "d", "t", "ds=2024-01-07"),
            "part names": await asyncio.to_thread(call, "get_partition_names", "d", "t", -1),
        }
    finally:
        client.close()
        await oracle.stop()
    assert cached == from_database
    assert [p.values[0] for p in cached["names"]] == ["2024-01-01", "2024-01-03", "2024-01-20"]  # name order
    assert [p.values[0] for p in cached["filter"]] == ["2024-01-18", "2024-01-19", "2024-01-20"]
    assert len(cached["all"]) == 5 and len(cached["part names"]) == 20


async def test_framed_transport_when_hive_asks_for_it(pg_dsn: str) -> None:
    """hive.metastore.thrift.framed.transport.enabled: every message in a 4-byte length frame, both ways;
    a cached reply of many partitions is framed whole, as an uncached one."""
    from thrift.protocol import TBinaryProtocol
    from thrift.transport import TSocket, TTransport

    gateway = Gateway(gateway_settings(pg_dsn, **{"hive.metastore.thrift.framed.transport.enabled": "true"}))
    await gateway.start()
    transport = TTransport.TFramedTransport(TSocket.TSocket("127.0.0.1", gateway.thrift_port))
    client = ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocol(transport))
    transport.open()
    try:
        def call(method: str, *args: Any) -> Any:
            return getattr(client, method)(*args)

        await asyncio.to_thread(call, "create_database", ht.Database("f", "", None, {}))
        await asyncio.to_thread(call, "create_table", _table("f", "t"))
        days = [f"2024-03-{i:02d}" for i in range(1, 31)]
        await asyncio.to_thread(call, "add_partitions", [_partition("f", "t", d, n=d) for d in days])
        names = [f"ds={d}" for d in reversed(days)]
        from_database = await asyncio.to_thread(call, "get_partitions_by_names", "f", "t", names)
        assert gateway.poller is not None and gateway.cache is not None
        await gateway.poller.wait_loaded()
        await wait_applied(gateway)
        hits = gateway.cache.stats.hits
        cached = await asyncio.to_thread(call, "get_partitions_by_names", "f", "t", names)
        assert gateway.cache.stats.hits == hits + 1
        assert cached == from_database and [p.parameters["n"] for p in cached] == days  # Hive's name order
        assert "f" in await asyncio.to_thread(call, "get_all_databases")  # a plain struct reply, framed too
    finally:
        transport.close()
        await gateway.stop()


async def test_a_commit_through_this_gateway_is_seen_at_once_by_reads_without_a_snapshot(
        gw: Gateway, hms: Thrift) -> None:
    client = await connect(f"127.0.0.1:{gw.port}")
    try:
        txns, txn = await _uncommitted_partition(client)
        assert await hms.call("get_partition_names", "db", "t", -1) == []
        assert gw.poller is not None and gw.cache is not None
        await gw.poller.wait_loaded()
        await wait_applied(gw)
        assert await hms.call("get_partition_names", "db", "t", -1) == []  # from the cache: not committed
        gw.poller.pause()
        await txns.CommitTxn(tpb.CommitTxnRequest(txn_id=txn))
        assert await hms.call("get_partition_names", "db", "t", -1) == ["p=a"]  # the cache is held back
        gw.poller.resume()
    finally:
        await client.channel.close()
