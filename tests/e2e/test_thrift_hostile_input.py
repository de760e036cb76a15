"""The Thrift side of issue 15 part 3: the same validation (reached through the shared store), each
refusal the exception the method declares, with the same bounded message; the connection keeps
serving and nothing changed."""

from __future__ import annotations

from hmsclient.genthrift.hive_metastore import ttypes as ht
from thrift.Thrift import TApplicationException

from tests.e2e.test_thrift_api import Thrift, _partition, _table, gw, hms  # noqa: F401 - fixtures

NUL = "a\x00b"


async def test_nul_and_huge_values_answer_the_declared_exception(hms: Thrift) -> None:  # noqa: F811
    err = await hms.raises(ht.InvalidObjectException, "create_database", ht.Database("d", NUL, None, {}))
    assert "NUL" in err.message
    await hms.call("create_database", ht.Database("d", "", None, {}))
    huge = _table("d", "t")
    huge.owner = "o" * 1_000_000
    err = await hms.raises(ht.InvalidObjectException, "create_table", huge)
    assert "more than the limit" in err.message and len(err.message) <= 1100
    with_nul = _table("d", "t", params={"k": NUL})
    err = await hms.raises(ht.InvalidObjectException, "create_table", with_nul)
    assert "NUL" in err.message
    await hms.call("create_table", _table("d", "t"))
    err = await hms.raises(ht.InvalidObjectException, "add_partition", _partition("d", "t", NUL))
    assert "NUL" in err.message
    err = await hms.raises(ht.MetaException, "get_partitions_by_filter", "d", "t", "(" * 400 + "ds='x'" + ")" * 400, -1)
    assert "deep" in err.message
    assert await hms.call("get_partition_names", "d", "t", -1) == []
    assert await hms.call("get_all_tables", "d") == ["t"]


async def test_a_txn_with_a_nul_user_is_refused(hms: Thrift) -> None:  # noqa: F811
    # open_txns declares no exception: Thrift's TApplicationException carries the same message.
    err = await hms.raises(TApplicationException, "open_txns", ht.OpenTxnRequest(num_txns=1, user=NUL, hostname="h"))
    assert "NUL" in str(err)
    assert (await hms.call("get_open_txns")).txn_high_water_mark == 0  # no txn was opened
