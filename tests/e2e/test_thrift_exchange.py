"""ALTER TABLE ... EXCHANGE PARTITION over Thrift (exchange_partitions; store/catalog.py has the rules,
gateway/thrift/data_methods.py the directory moves). Hive 2.3.10's answers call by call are compared in
tests/e2e/test_thrift_differential.py (EXCHANGE_STEPS); here, what that comparison cannot show: the data
moves with the partitions and back when the exchange fails, another gateway sees both tables change
together once its poller has applied the exchange (non-transactional tables are eventually consistent
across gateways), and the refusals Hive 2.3 answers only with an internal error or a slow duplicate-key failure."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, AsyncIterator

import asyncpg
import pytest

from thriftpy2.thrift import TException

from gateway.app import Gateway
from store import catalog
from store.catalog_store import CatalogStore
from store.models import Partition
from store.snapshot import ReadSnapshot
from tests.builders import local_dir
from tests.conftest import behind_a_held_write, running_gateway, wait_applied
from tests.thrift_client import ThriftClient, client_with_database, thrift_table


KEYS = ("ds", "hr")


@pytest.fixture
async def env(pg_dsn: str, tmp_path: Path) -> AsyncIterator[tuple[ThriftClient, ThriftClient, Path, Gateway]]:
    """Two gateways on one database and warehouse; a client of each, and the second gateway (to wait for
    its poller before a read there)."""
    conf = {"hive.metastore.warehouse.dir": str(tmp_path / "warehouse"), "metastore.gateway.data.roots": str(tmp_path)}
    async with running_gateway(pg_dsn, **conf) as first, running_gateway(pg_dsn, **conf) as second, \
            client_with_database(first.thrift_port) as a:
        b = ThriftClient(second.thrift_port)
        try:
            await a("create_table", thrift_table("src", keys=KEYS))
            await a("create_table", thrift_table("dst", keys=KEYS))
            for day, hour in (("1", "1"), ("1", "2"), ("2", "1")):
                p = await a("append_partition", "db", "src", [day, hour])
                (Path(local_dir(p.sd.location)) / "part-0").write_text(f"{day}/{hour}")
            yield a, b, tmp_path / "warehouse" / "db.db", second
        finally:
            b.close()


async def test_the_data_moves_with_the_partitions_and_every_gateway_sees_both_tables_change(
        env: tuple[ThriftClient, ThriftClient, Path, Gateway]) -> None:
    a, b, db_dir, second = env
    await wait_applied(second)
    assert await b("get_partition_names", "db", "src", -1) == ["ds=1/hr=1", "ds=1/hr=2", "ds=2/hr=1"]  # cached
    moved = await a("exchange_partitions", {"ds": "1"}, "db", "src", "db", "dst")
    assert [(p.tableName, p.values, p.sd.location) for p in moved] == [
        ("dst", ["1", "1"], f"file:{db_dir / 'dst' / 'ds=1' / 'hr=1'}"),
        ("dst", ["1", "2"], f"file:{db_dir / 'dst' / 'ds=1' / 'hr=2'}")]
    assert (db_dir / "dst" / "ds=1" / "hr=2" / "part-0").read_text() == "1/2"
    assert not (db_dir / "src" / "ds=1").exists()  # the emptied parent goes, as after a drop
    await wait_applied(second)
    assert await b("get_partition_names", "db", "src", -1) == ["ds=2/hr=1"]
    assert await b("get_partition_names", "db", "dst", -1) == ["ds=1/hr=1", "ds=1/hr=2"]
    one = await a("exchange_partition", {"ds": "2", "hr": "1"}, "db", "src", "db", "dst")
    assert (one.values, one.sd.location) == (["2", "1"], f"file:{db_dir / 'dst' / 'ds=2' / 'hr=1'}")
    await wait_applied(second)
    assert await b("get_partition_names", "db", "src", -1) == []


async def test_a_refused_exchange_moves_nothing(env: tuple[ThriftClient, ThriftClient, Path, Gateway]) -> None:
    a, b, db_dir, second = env
    # A directory no partition names is in the way of the second move: the first is undone.
    (db_dir / "dst" / "ds=1" / "hr=2").mkdir(parents=True)
    with pytest.raises(TException, match="already exists"):
        await a("exchange_partitions", {"ds": "1"}, "db", "src", "db", "dst")
    (db_dir / "dst" / "ds=1" / "hr=2").rmdir()
    await a("append_partition", "db", "dst", ["1", "2"])
    with pytest.raises(TException, match=r"db.dst already has partition\(s\) ds=1/hr=2; nothing was exchanged"):
        await a("exchange_partitions", {"ds": "1"}, "db", "src", "db", "dst")
    await wait_applied(second)
    assert await b("get_partition_names", "db", "src", -1) == ["ds=1/hr=1", "ds=1/hr=2", "ds=2/hr=1"]
    assert await b("get_partition_names", "db", "dst", -1) == ["ds=1/hr=2"]
    assert sorted(p.relative_to(db_dir / "src").as_posix() for p in (db_dir / "src").rglob("part-0")) == [
        "ds=1/hr=1/part-0", "ds=1/hr=2/part-0", "ds=2/hr=1/part-0"]
    assert not (db_dir / "dst" / "ds=1" / "hr=1").exists()


async def test_an_exchange_into_a_table_with_another_partition_of_its_specification_is_refused(
        env: tuple[ThriftClient, ThriftClient, Path, Gateway]) -> None:
    """Hive 2.3 moves one directory, <source>/ds=1 to <dest>/ds=1, and refuses when dest has it (as its
    engine refuses an exchange into a table with a partition of that specification): dest's ds=1/hr=7 stops
    {ds: 1} although no partition of the two has the same name, not {ds: 1, hr: 1}. Checked on Hive
    Metastore 2.3.10 (MetaException 'The destination path already exists')."""
    a, b, db_dir, second = env
    await a("append_partition", "db", "dst", ["1", "7"])
    with pytest.raises(TException, match=r"db.dst already has partition 'ds=1/hr=7' of the specification 'ds=1'; "
                                         r"nothing was exchanged"):
        await a("exchange_partitions", {"ds": "1"}, "db", "src", "db", "dst")
    await wait_applied(second)
    assert await b("get_partition_names", "db", "src", -1) == ["ds=1/hr=1", "ds=1/hr=2", "ds=2/hr=1"]
    assert await b("get_partition_names", "db", "dst", -1) == ["ds=1/hr=7"]
    assert (db_dir / "src" / "ds=1" / "hr=2" / "part-0").exists()
    one = await a("exchange_partition", {"ds": "1", "hr": "1"}, "db", "src", "db", "dst")
    assert (one.values, one.sd.location) == (["1", "1"], f"file:{db_dir / 'dst' / 'ds=1' / 'hr=1'}")
    await wait_applied(second)
    assert await b("get_partition_names", "db", "dst", -1) == ["ds=1/hr=1", "ds=1/hr=7"]


@pytest.mark.parametrize(("spec", "source", "dest", "says"), [
    ({"ds": "1"}, "src", "src", "a table's partitions cannot be exchanged with itself"),
    ({"hr": "1"}, "src", "dst", "names hr but not the keys before them"),
    ({"ds": ""}, "src", "dst", "must not be empty"),
    ({"ds": "1"}, "src", "acid", "Exchange partition is not allowed with transactional tables (db.acid)"),
    ({"ds": "1"}, "src", "nope", "nope"),
])
async def test_refusals_say_why(env: tuple[ThriftClient, ThriftClient, Path, Gateway], spec: dict[str, str],
                                source: str, dest: str, says: str) -> None:
    a, b, _, second = env
    await a("create_table", thrift_table("acid", keys=KEYS, transactional="true"))
    with pytest.raises(TException) as refused:
        await a("exchange_partitions", spec, "db", source, "db", dest)
    assert says in str(refused.value)
    await wait_applied(second)
    assert await b("get_partition_names", "db", "src", -1) == ["ds=1/hr=1", "ds=1/hr=2", "ds=2/hr=1"]


async def test_an_external_tables_partitions_keep_their_locations(
        env: tuple[ThriftClient, ThriftClient, Path, Gateway], tmp_path: Path) -> None:
    """The gateway moves no external table's data: the partitions change tables, their files stay."""
    a, b, _, second = env
    await a("create_table", thrift_table("lake", table_type="EXTERNAL_TABLE", keys=KEYS,
                                               location=str(tmp_path / "lake"), EXTERNAL="TRUE"))
    p = await a("append_partition", "db", "lake", ["5", "1"])
    (Path(local_dir(p.sd.location)) / "part-0").write_text("5/1")
    (moved,) = await a("exchange_partitions", {"ds": "5"}, "db", "lake", "db", "dst")
    assert moved.sd.location == p.sd.location and (Path(local_dir(p.sd.location)) / "part-0").exists()
    await wait_applied(second)
    assert (await b("get_partition", "db", "dst", ["5", "1"])).sd.location == p.sd.location


async def test_a_managed_tables_partition_exchanged_into_an_external_table_moves_out_of_its_directory(
        env: tuple[ThriftClient, ThriftClient, Path, Gateway], tmp_path: Path) -> None:
    """A managed source's partition goes to its default place under an external destination, as Hive 2.3
    moves it. Left in the source's directory, a drop of the source with its data deleted the partition's
    files, which are the external table's since, and a rename of the source moved them from under it."""
    a, _, db_dir, _ = env
    lake = tmp_path / "lake"
    await a("create_table", thrift_table("lake", table_type="EXTERNAL_TABLE", keys=KEYS, location=str(lake),
                                         EXTERNAL="TRUE"))
    (moved,) = await a("exchange_partitions", {"ds": "2"}, "db", "src", "db", "lake")
    assert moved.sd.location == f"file:{lake / 'ds=2' / 'hr=1'}"
    assert (lake / "ds=2" / "hr=1" / "part-0").read_text() == "2/1"
    assert not (db_dir / "src" / "ds=2").exists()
    renamed = await a("get_table", "db", "src")
    renamed.tableName = "src2"
    await a("alter_table", "db", "src", renamed)
    await a("drop_table", "db", "src2", True)
    assert not (db_dir / "src2").exists() and (lake / "ds=2" / "hr=1" / "part-0").read_text() == "2/1"
    assert (await a("get_partition", "db", "lake", ["2", "1"])).sd.location == moved.sd.location


async def test_an_exchange_moves_the_partition_as_a_concurrent_writer_left_it(
        env: tuple[ThriftClient, ThriftClient, Path, Gateway]) -> None:
    """An exchange that waits for a partition another writer holds (an ALTER PARTITION, committing
    meanwhile) moves the partition as that writer left it: the store locks the partitions before it
    reads them (it read them first, its drop then waited and deleted the newer version, and dest got
    the older copy: the ALTER was lost)."""
    a, _, _, gw = env
    store = CatalogStore(gw.database, warehouse_dir=gw.settings.warehouse_dir)
    latest = ReadSnapshot(latest_committed=True)
    _, (before,) = (await store.get_partitions_by_names("db", "src", ["ds=2/hr=1"], latest)).value

    async def alter(conn: asyncpg.Connection) -> Any:
        return await catalog.alter_partitions(conn, "db", "src", [replace(before, parameters={
            **before.parameters, "numRows": "42"})])

    exchanged = await behind_a_held_write(gw, alter, lambda: a("exchange_partition", {"ds": "2"}, "db", "src",
                                                                "db", "dst"))
    assert (await exchanged).parameters["numRows"] == "42"
    _, (after,) = (await store.get_partitions_by_names("db", "dst", ["ds=2/hr=1"], latest)).value
    assert after.parameters["numRows"] == "42"


async def test_an_exchange_waits_for_a_concurrent_add_under_its_specification_and_then_refuses(
        env: tuple[ThriftClient, ThriftClient, Path, Gateway]) -> None:
    """An add of dest's ds=1/hr=7, not yet committed when the exchange of {ds: 1} starts: the exchange
    waits for it (dest's row, locked for update) and then sees it, as it would one after the other;
    with both in share mode, both committed, and dest held a state Hive refuses to make."""
    a, b, _, gw = env

    async def add(conn: asyncpg.Connection) -> Any:
        return await catalog.add_partitions(conn, "db", "dst", [Partition("db", "dst", ("1", "7"))],
                                            if_not_exists=False)

    exchanged = await behind_a_held_write(gw, add, lambda: a("exchange_partitions", {"ds": "1"}, "db", "src",
                                                             "db", "dst"))
    with pytest.raises(TException, match=r"db.dst already has partition 'ds=1/hr=7' of the specification 'ds=1'"):
        await exchanged
    await wait_applied(gw)
    assert await b("get_partition_names", "db", "src", -1) == ["ds=1/hr=1", "ds=1/hr=2", "ds=2/hr=1"]
    assert await b("get_partition_names", "db", "dst", -1) == ["ds=1/hr=7"]


async def test_an_add_under_the_specification_waits_for_a_concurrent_exchange(
        env: tuple[ThriftClient, ThriftClient, Path, Gateway]) -> None:
    """The other order: the exchange of {ds: 1} holds dest, the add of ds=1/hr=7 waits and then lands
    beside the exchanged partitions (Hive allows adding after an exchange)."""
    a, b, _, gw = env

    async def exchange(conn: asyncpg.Connection) -> Any:
        return await catalog.exchange_partitions(conn, "db", "src", "db", "dst", ["ds=1/hr=1", "ds=1/hr=2"],
                                                 relocate=False, specification="ds=1")

    added = await behind_a_held_write(gw, exchange, lambda: a("append_partition", "db", "dst", ["1", "7"]))
    assert (await added).values == ["1", "7"]
    await wait_applied(gw)
    assert await b("get_partition_names", "db", "dst", -1) == ["ds=1/hr=1", "ds=1/hr=2", "ds=1/hr=7"]
