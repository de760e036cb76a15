"""GetPartitionsByFilter: evaluated in memory on a cache hit, in SQL on a miss, same answer."""

from __future__ import annotations

import asyncio
import random
from typing import cast

import grpc
import pytest

from gateway.app import Gateway
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import transactions_pb2_grpc
from tests.builders import table
from tests.conftest import connect, gateway_settings, wait_applied
from tests.txn_helpers import Txns

KEYS = (("ds", "date"), ("hr", "int"), ("region", "string"))
REGIONS = ["us", "eu", "ap", "it's", "__HIVE_DEFAULT_PARTITION__"]


def _values(rng: random.Random) -> list[str]:
    return [f"2024-01-{rng.randint(1, 9):02d}", str(rng.randint(0, 23)), rng.choice(REGIONS)]


def _random_filter(rng: random.Random, depth: int = 0) -> str:
    if depth < 2 and rng.random() < 0.4:
        op = rng.choice(["AND", "OR"])
        left, right = _random_filter(rng, depth + 1), _random_filter(rng, depth + 1)
        text = f"({left} {op} {right})"
        return f"NOT {text}" if rng.random() < 0.2 else text
    key = rng.choice(["ds", "hr", "region"])
    if key == "ds":
        return rng.choice([f"ds >= '2024-01-0{rng.randint(1, 9)}'", f"ds = '2024-01-0{rng.randint(1, 9)}'",
                           "ds BETWEEN '2024-01-02' AND '2024-01-05'", "ds <> '2024-01-03'"])
    if key == "hr":
        return rng.choice([f"hr < {rng.randint(0, 23)}", f"hr IN (1, 2, {rng.randint(3, 23)})",
                           f"hr != {rng.randint(0, 23)}",
                           "hr NOT BETWEEN 5 AND 10"])
    return rng.choice(["region = 'us'", "region LIKE 'e%'", "region IN ('eu', 'ap')", "region > 'b'",
                       "region = \"it's\"", "region NOT LIKE '_s'"])


async def test_cached_and_database_answers_are_the_same(pg_dsn: str) -> None:
    cached = Gateway(gateway_settings(pg_dsn, **{"metastore.cached.rawstore.cache.update.frequency": "100ms"}))
    direct = Gateway(gateway_settings(pg_dsn, **{"metastore.gateway.cache.enabled": "false"}))
    await cached.start()
    await direct.start()
    cc, dc = await connect(f"127.0.0.1:{cached.port}"), await connect(f"127.0.0.1:{direct.port}")
    t = Txns(cc, transactions_pb2_grpc.TransactionsStub(cc.channel), cached, pg_dsn)
    rng = random.Random(20261121)
    try:
        await cc.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
        await cc.catalog.CreateTable(pb.CreateTableRequest(table=table("db", "t", keys=KEYS, transactional=True)))
        snapshots = []
        for _round in range(4):
            (w,) = await t.open()
            parts = {tuple(_values(rng)) for _ in range(25)}
            await cc.catalog.AddPartitions(pb.AddPartitionsRequest(
                db_name="db", table_name="t", txn_id=w, if_not_exists=True,
                partitions=[pb.Partition(values=list(v)) for v in parts]))
            await t.commit(w)
            snapshots.append(await t.snapshot())
        await cc.catalog.GetPartitionsByFilter(pb.GetPartitionsByFilterRequest(db_name="db", table_name="t",
                                                                               filter="hr > 0",
                                                                               read=snapshots[-1]))
        assert cached.poller is not None
        await cached.poller.wait_loaded()
        await wait_applied(cached)
        hits_before = cast(int, cached.cache_stats()["hits"])
        cached_pages = 0
        for i in range(120):
            text = _random_filter(rng)
            read = snapshots[i % len(snapshots)]
            request = pb.GetPartitionsByFilterRequest(db_name="db", table_name="t", filter=text, read=read)
            a = await cc.catalog.GetPartitionsByFilter(request)
            b = await dc.catalog.GetPartitionsByFilter(request)
            assert [p.name for p in a.partitions] == [p.name for p in b.partitions], text
            assert a == b, text
            if i % 4 == 0:  # paged, alternating between the two gateways: the same partitions, page by page
                page_size = rng.randint(1, 7)
                pages, token, turn = [], "", 0
                while True:
                    reader = (cc, dc)[turn % 2]
                    page = await reader.catalog.GetPartitionsByFilter(pb.GetPartitionsByFilterRequest(
                        db_name="db", table_name="t", filter=text, read=read, page_size=page_size,
                        page_token=token))
                    assert len(page.partitions) <= page_size and (page.partitions or not token), text
                    pages.extend(page.partitions)
                    cached_pages += reader is cc
                    token, turn = page.next_page_token, turn + 1
                    if not token:
                        break
                assert pages == list(a.partitions), (text, page_size)
        # every one answered from memory, pages too
        assert cast(int, cached.cache_stats()["hits"]) - hits_before == 120 + cached_pages
    finally:
        for c in (cc, dc):
            await c.channel.close()
        await cached.stop()
        await direct.stop()


async def test_bad_filters_name_the_position_and_limits_apply(pg_dsn: str) -> None:
    gw = Gateway(gateway_settings(pg_dsn, **{"hive.metastore.limit.partition.request": "2"}))
    await gw.start()
    c = await connect(f"127.0.0.1:{gw.port}")
    try:
        await c.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
        await c.catalog.CreateTable(pb.CreateTableRequest(table=table("db", "e", keys=KEYS, external=True)))
        await c.catalog.AddPartitions(pb.AddPartitionsRequest(db_name="db", table_name="e", partitions=[
            pb.Partition(values=["2024-01-01", str(h), "us"]) for h in range(3)]))
        for bad in ("hr >", "nope = 1", "hr = 'abc'", "(hr = 1"):
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await c.catalog.GetPartitionsByFilter(pb.GetPartitionsByFilterRequest(db_name="db", table_name="e",
                                                                                      filter=bad))
            assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "position" in err.value.details(), bad
        # A number against a string key: refused (it used to compare as text, `region > 5` selecting 'us'), as
        # over Thrift, where Hive Metastore 2.3.10 refuses it too.
        for bad in ("region = 1", "region > 5", "region IN ('us', 2)", "region BETWEEN 1 AND 5"):
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await c.catalog.GetPartitionsByFilter(pb.GetPartitionsByFilterRequest(db_name="db", table_name="e",
                                                                                      filter=bad))
            assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT, bad
            assert "key 'region' has type string, but" in err.value.details() and "is a number" in \
                err.value.details(), bad
        few = await c.catalog.GetPartitionsByFilter(pb.GetPartitionsByFilterRequest(db_name="db", table_name="e",
                                                                                    filter="hr < 2"))
        assert [p.name for p in few.partitions] == ["ds=2024-01-01/hr=0/region=us", "ds=2024-01-01/hr=1/region=us"]
        one = await c.catalog.GetPartitionsByFilter(pb.GetPartitionsByFilterRequest(db_name="db", table_name="e",
                                                                                    filter="hr < 2", max_parts=1))
        assert len(one.partitions) == 1
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await c.catalog.GetPartitionsByFilter(pb.GetPartitionsByFilterRequest(db_name="db", table_name="e",
                                                                                  filter="hr >= 0"))
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    finally:
        await c.channel.close()
        await gw.stop()


async def test_filter_reads_page_past_the_batch_limit_and_the_message_size(pg_dsn: str) -> None:
    """A filter that matches more partitions than one answer may hold (metastore.gateway.max.batch.size,
    or hive.metastore.server.max.message.size) is read in pages: refused whole, answered page by page,
    each page as large as fits, and the PySpark client follows the pages by itself."""
    from pipeline.client import ClientConfig, GatewayClient

    gw = Gateway(gateway_settings(pg_dsn, **{"metastore.gateway.max.batch.size": "10",
                                             "hive.metastore.server.max.message.size": "8192"}))
    await gw.start()
    c = await connect(f"127.0.0.1:{gw.port}")
    try:
        await c.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
        await c.catalog.CreateTable(pb.CreateTableRequest(table=table("db", "e", keys=KEYS, external=True)))
        values = [["2024-01-01", str(h), r] for h in range(12) for r in ("us", "eu")]
        for batch in (values[i:i + 2] for i in range(0, len(values), 2)):  # within the message size
            await c.catalog.AddPartitions(pb.AddPartitionsRequest(db_name="db", table_name="e", partitions=[
                pb.Partition(values=v, parameters={"note": "x" * 3000} if v[1] in ("3", "4") else {})
                for v in batch], need_result=False))

        def request(text: str = "hr >= 1", *, page_size: int = 0, page_token: str = "",
                    max_parts: int = 0) -> pb.GetPartitionsByFilterRequest:
            return pb.GetPartitionsByFilterRequest(db_name="db", table_name="e", filter=text, page_size=page_size,
                                                   page_token=page_token, max_parts=max_parts)

        async def pages(text: str) -> tuple[list[int], list[str]]:
            sizes: list[int] = []
            names: list[str] = []
            token = ""
            while True:
                page = await c.catalog.GetPartitionsByFilter(request(text, page_size=100, page_token=token))
                assert page.ByteSize() <= 8192
                sizes.append(len(page.partitions))
                names.extend(p.name for p in page.partitions)
                token = page.next_page_token
                if not token:
                    return sizes, names

        with pytest.raises(grpc.aio.AioRpcError) as err:  # 22 match: more than one answer may hold
            await c.catalog.GetPartitionsByFilter(request())
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and "page" in err.value.details()
        expected = sorted(f"ds=2024-01-01/hr={h}/region={r}" for h in range(1, 12) for r in ("us", "eu"))
        sizes, names = await pages("hr >= 1")
        assert names == expected
        assert min(sizes[:-1]) < 10  # pages cut short: the partitions with long parameters fill the message size
        sizes, names = await pages("hr >= 5")  # 14 small partitions: pages of the batch limit
        assert (sizes, names) == ([10, 4], [n for n in expected if int(n.split("/")[1][3:]) >= 5])

        for bad, wanted in ((request(page_size=-1), "page_size"), (request(page_size=2, max_parts=2), "max_parts"),
                            (request(page_token="not a token!"), "page_token")):
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await c.catalog.GetPartitionsByFilter(bad)
            assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and wanted in err.value.details(), wanted

        def read_with_client() -> list[str]:
            with GatewayClient(ClientConfig(address=f"127.0.0.1:{gw.port}", batch_size=1000)) as client:
                return [p.name for p in client.get_partitions_by_filter("db", "e", "hr >= 1")]

        assert await asyncio.to_thread(read_with_client) == expected
    finally:
        await c.channel.close()
        await gw.stop()
