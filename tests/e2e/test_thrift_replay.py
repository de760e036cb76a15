"""The benchmarks' replaying Thrift reader against a real gateway: the first reply is decoded and
checked, later ones must equal it byte for byte, and a changed answer is an error, never a call
counted as served."""

from __future__ import annotations

import asyncio
import socket
from typing import AsyncIterator

import pytest
from hmsclient.genthrift.hive_metastore import ThriftHiveMetastore as T

from gateway.app import Gateway
from gateway.thrift.idl import hms
from loadtest.thrift_replay import ReplayCall, ReplayError, encode_call
from tests.conftest import gateway_settings
from tests.thrift_client import ThriftClient


@pytest.fixture
async def env(pg_dsn: str) -> AsyncIterator[tuple[Gateway, ThriftClient]]:
    gw = Gateway(gateway_settings(pg_dsn))
    await gw.start()
    client = ThriftClient(gw.thrift_port)
    await client("create_database", hms.Database(name="db", description="", parameters={}))
    sd = hms.StorageDescriptor(cols=[hms.FieldSchema(name="id", type="bigint", comment="")], parameters={},
                               serdeInfo=hms.SerDeInfo(serializationLib="s", parameters={}))
    await client("create_table", hms.Table(tableName="t", dbName="db", sd=sd, parameters={},
                                           partitionKeys=[hms.FieldSchema(name="ds", type="string", comment="")]))
    await client("add_partitions_req", hms.AddPartitionsRequest(
        dbName="db", tblName="t", ifNotExists=False, needResult=False,
        parts=[hms.Partition(values=[str(i)], dbName="db", tableName="t", parameters={}) for i in range(5)]))
    try:
        yield gw, client
    finally:
        client.close()
        await gw.stop()


def _replay(port: int, names: list[str]) -> ReplayCall:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    request = encode_call("get_partitions_by_names", T.get_partitions_by_names_args("db", "t", names))
    return ReplayCall(sock, request, T.get_partitions_by_names_result, lambda r: len(r.success))


async def test_replies_are_checked_in_full_once_then_byte_for_byte(env: tuple[Gateway, ThriftClient]) -> None:
    gw, client = env
    call = _replay(gw.thrift_port, ["ds=1", "ds=3", "ds=9"])
    assert [await asyncio.to_thread(call) for _ in range(3)] == [2, 2, 2]
    changed = await client("get_partition", "db", "t", ["3"])
    changed.parameters = {"numRows": "7"}
    await client("alter_partition", "db", "t", changed)
    with pytest.raises(ReplayError, match="differs from the first answer"):
        for _ in range(200):  # until this gateway's cache has the new version (read-your-writes holds it)
            await asyncio.to_thread(call)


async def test_an_exception_answer_is_an_error(env: tuple[Gateway, ThriftClient]) -> None:
    gw, _ = env
    sock = socket.create_connection(("127.0.0.1", gw.thrift_port), timeout=10)
    request = encode_call("get_partitions_by_names", T.get_partitions_by_names_args("db", "missing", ["ds=1"]))
    with pytest.raises(ReplayError, match="missing"):
        await asyncio.to_thread(ReplayCall(sock, request, T.get_partitions_by_names_result, len))
