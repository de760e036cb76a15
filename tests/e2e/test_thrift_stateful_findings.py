"""Differences from Hive Metastore 2.3.10 that tests/e2e/test_thrift_stateful_differential.py found, each
pinned here on the gateway alone (Hive's answers, checked against the real one, written in): the same calls
answer as Hive's do."""

from __future__ import annotations

from typing import AsyncIterator

import pytest
from hmsclient.genthrift.hive_metastore import ttypes as ht

from tests.conftest import running_gateway
from tests.e2e.test_thrift_api import Thrift, _table


@pytest.fixture
async def hms(pg_dsn: str) -> AsyncIterator[Thrift]:
    async with running_gateway(pg_dsn) as gw:
        thrift = Thrift(gw)
        try:
            await thrift.call("create_database", ht.Database("db", "", None, {}))
            yield thrift
        finally:
            thrift.client.close()


def _unpartitioned(name: str) -> ht.Table:
    t = _table("db", name)
    t.partitionKeys = []
    return t


async def test_a_database_created_without_an_owner_is_read_back_without_one(hms: Thrift) -> None:
    await hms.call("create_database", ht.Database("nobody", "d", None, {}))
    assert (await hms.call("get_database", "nobody")).ownerName is None
    await hms.call("create_database", ht.Database("somebody", "d", None, {}, ownerName="alice"))
    assert (await hms.call("get_database", "somebody")).ownerName == "alice"
