"""get_partition_values through two gateways on one database: what each answers is what its cache, or
PostgreSQL, holds of the latest committed state. A transactional table's partitions an open txn adds are in
neither answer until the txn commits (then at once on the gateway that committed it, and on the other once
it has applied the commit), whatever Hive 4's `validWriteIdList` says (Hive 4 does not read it here). A
plain table's partitions are read back at once on the gateway that wrote them. (What the rows hold is compared with Hive
Metastore 2.3.10 in tests/e2e/test_thrift_partition_values_differential.py.)"""

from __future__ import annotations

from typing import Any, AsyncIterator

import pytest

from gateway.app import Gateway
from gateway.thrift.idl import hms
from tests.conftest import running_gateway, wait_applied
from tests.e2e.test_thrift_snapshots import hive_txn_list, hive_write_id_list
from tests.thrift_client import ThriftClient, thrift_table


class Side:
    def __init__(self, gw: Gateway) -> None:
        self.gw, self.call = gw, ThriftClient(gw.thrift_port)

    async def values(self, table: str, keys: list[str], **fields: Any) -> list[list[str]]:
        answer = await self.call("get_partition_values", hms.PartitionValuesRequest(
            dbName="db", tblName=table, partitionKeys=[hms.FieldSchema(name=k, type="string") for k in keys],
            **fields))
        return [list(r.row) for r in answer.partitionValues]


@pytest.fixture
async def sides(pg_dsn: str) -> AsyncIterator[tuple[Side, Side]]:
    async with running_gateway(pg_dsn) as a_gw, running_gateway(pg_dsn) as b_gw:
        a, b = Side(a_gw), Side(b_gw)
        try:
            await a.call("create_database", hms.Database(name="db", parameters={}))
            await a.call("create_table", thrift_table("acid", keys=["ds", "hr"], transactional="true"))
            await a.call("create_table", thrift_table("plain", keys=["ds"], table_type="EXTERNAL_TABLE",
                                                      EXTERNAL="TRUE"))
            await wait_applied(b_gw)
            yield a, b
        finally:
            a.call.close()
            b.call.close()


def _partition(table: str, values: list[str], write_id: int | None = None) -> Any:
    return hms.Partition(values=values, dbName="db", tableName=table, parameters={}, writeId=write_id)


async def _begin(side: Side) -> tuple[int, int]:
    (txn,) = (await side.call("open_txns", hms.OpenTxnRequest(num_txns=1, user="u", hostname="h"))).txn_ids
    (alloc,) = (await side.call("allocate_table_write_ids", hms.AllocateTableWriteIdsRequest(
        dbName="db", tableName="acid", txnIds=[txn]))).txnToWriteIds
    return txn, alloc.writeId


async def test_an_open_txns_partitions_are_in_no_answer_until_it_commits(sides: tuple[Side, Side]) -> None:
    a, b = sides
    txn, write_id = await _begin(a)
    await a.call("add_partitions", [_partition("acid", ["2024-01-01", "1"], write_id),
                                    _partition("acid", ["2024-01-01", "2"], write_id)])
    await a.call("commit_txn", hms.CommitTxnRequest(txnid=txn))
    txn, write_id = await _begin(a)
    await a.call("add_partition", _partition("acid", ["2024-01-02", "1"], write_id))
    state = await a.call("get_open_txns")  # a reader's snapshot while the txn is open
    (ids,) = (await a.call("get_valid_write_ids", hms.GetValidWriteIdsRequest(
        fullTableNames=["db.acid"], validTxnList=hive_txn_list(state)))).tblValidWriteIds
    before = hive_write_id_list(ids)
    await wait_applied(b.gw)  # b's cache holds the txn's partition, not committed
    committed = [["2024-01-01"]]
    for side in (a, b):
        assert await side.values("acid", ["ds"]) == committed
        assert await side.values("acid", ["ds", "hr"], applyDistinct=False) == [["2024-01-01", "1"],
                                                                                ["2024-01-01", "2"]]
        assert await side.values("acid", ["ds"], filter='ds >= "2024"') == [["2024-01-01", "1"], ["2024-01-01", "2"]]
    await a.call("commit_txn", hms.CommitTxnRequest(txnid=txn))
    assert await a.values("acid", ["ds"]) == [["2024-01-01"], ["2024-01-02"]]  # at once where it committed
    await wait_applied(b.gw)
    assert await b.values("acid", ["ds"], filter='hr = "1"', ascending=False) == [["2024-01-02", "1"],
                                                                                ["2024-01-01", "1"]]
    for side in (a, b):  # Hive 4's validWriteIdList is not read (as Hive 4 reads it nowhere here): the latest
        assert await side.values("acid", ["ds"], validWriteIdList=before) == [["2024-01-01"], ["2024-01-02"]]
    hits = b.gw.cache.stats.hits if b.gw.cache is not None else 0
    assert await b.values("acid", ["hr"]) == [["1"], ["2"]]
    assert b.gw.cache is None or b.gw.cache.stats.hits > hits  # answered from b's cache


async def test_a_plain_tables_partitions_are_read_back_at_once_on_the_gateway_that_wrote_them(
        sides: tuple[Side, Side]) -> None:
    a, b = sides
    await a.call("add_partitions", [_partition("plain", [v]) for v in ("x/y", "b c", "a")])
    assert await a.values("plain", ["ds"]) == [["a"], ["b c"], ["x%2Fy"]]
    await wait_applied(b.gw)
    assert await b.values("plain", ["ds"], filter='ds > "a"') == [["b c"], ["x/y"]]
    assert await b.call("drop_partition", "db", "plain", ["x/y"], False) is True
    assert await b.values("plain", ["ds"], maxParts=5) == [["a"], ["b c"]]
    await wait_applied(a.gw)
    assert await a.values("plain", ["DS"], applyDistinct=False) == [["a"], ["b c"]]


async def test_mistakes_are_meta_exceptions_saying_what_to_send(sides: tuple[Side, Side]) -> None:
    a, _ = sides
    with pytest.raises(hms.MetaException, match=r"'hour' is not one of its partition keys \(ds, hr\)"):
        await a.values("acid", ["ds", "hour"])
    with pytest.raises(hms.MetaException, match="partitionKeys names no key"):
        await a.values("acid", [])
    with pytest.raises(hms.MetaException, match="table db.nope does not exist"):
        await a.values("nope", ["ds"], filter='ds = "a"')
    with pytest.raises(hms.MetaException, match="catalog 'spark' does not exist"):
        await a.values("acid", ["ds"], catName="spark")


async def test_a_reply_over_the_message_size_is_refused_saying_how_to_ask_for_less(pg_dsn: str) -> None:
    async with running_gateway(pg_dsn, **{"hive.metastore.server.max.message.size": "65536"}) as gw:
        side = Side(gw)
        try:
            await side.call("create_database", hms.Database(name="db", parameters={}))
            await side.call("create_table", thrift_table("wide", keys=["k"]))
            long = "v" * 200  # (a directory's name)
            for start in range(0, 400, 100):  # (each call within the message size too)
                await side.call("add_partitions", [_partition("wide", [f"{i:03d}{long}"])
                                                   for i in range(start, start + 100)])
            with pytest.raises(hms.MetaException, match="more than one reply holds.*ask for fewer with maxParts"):
                await side.values("wide", ["k"])
            assert len(await side.values("wide", ["k"], maxParts=200)) == 200
        finally:
            side.call.close()
