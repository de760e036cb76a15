"""hive.metastore.partition.name.whitelist.pattern over both protocols: a partition value the pattern does
not match whole is refused on add, append and rename, saying which value and which setting, and nothing
is written. Hive 2.3.10's answers over Thrift are compared call by call in
tests/e2e/test_thrift_differential.py (the whitelist steps of LISTING_STEPS)."""

from __future__ import annotations

import grpc
import pytest

from gateway.config import ConfigError
from protos.metastore.v1 import catalog_pb2 as pb
from tests.builders import partitions, table
from tests.conftest import connect, gateway_settings, running_gateway


async def test_a_value_outside_the_whitelist_is_refused_over_grpc_and_nothing_is_written(pg_dsn: str) -> None:
    async with running_gateway(pg_dsn, **{"hive.metastore.partition.name.whitelist.pattern": r"[\w-]*"}) as gw:
        client = await connect(f"127.0.0.1:{gw.port}")
        try:
            await client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="db")))
            await client.catalog.CreateTable(pb.CreateTableRequest(table=table("db", "t")))
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await client.catalog.AddPartitions(pb.AddPartitionsRequest(
                    db_name="db", table_name="t", partitions=partitions([("2024-01-01", "1"), ("2024-01-01", "a b")])))
            assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "partition value 'a b'" in (caught.value.details() or "")
            assert "hive.metastore.partition.name.whitelist.pattern" in (caught.value.details() or "")
            names = await client.catalog.ListPartitionNames(pb.ListPartitionNamesRequest(db_name="db", table_name="t"))
            assert list(names.names) == []  # all or nothing: the allowed partition of the call is not added
            await client.catalog.AddPartitions(pb.AddPartitionsRequest(
                db_name="db", table_name="t", partitions=partitions([("2024-01-01", "1")])))
        finally:
            await client.channel.close()


@pytest.mark.parametrize(("pattern", "why"), [
    ("[a-z&&[^e]]*", "Java's character class operations"),
    ("(unclosed", "not a regular expression"),
])
def test_a_pattern_python_would_read_otherwise_is_refused_at_start(pattern: str, why: str) -> None:
    with pytest.raises(ConfigError, match="hive.metastore.partition.name.whitelist.pattern") as caught:
        gateway_settings("postgresql://unused", **{"hive.metastore.partition.name.whitelist.pattern": pattern})
    assert why in str(caught.value)
