"""The Thrift methods that touch a table's files as well as its metadata (creates make the missing
directories, drops with deleteData, truncate_table, rename_partition), and the Hive 3/4 request
shapes of alter and of the notification count, on a real gateway whose warehouse is a temporary
directory."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import functools
import os
from dataclasses import replace
from pathlib import Path
from typing import Any, AsyncIterator

import asyncpg
import pytest

from thriftpy2.thrift import TException

from gateway.app import Gateway
from gateway.thrift.idl import hms
from store import catalog
from store.catalog_store import CatalogStore
from store.models import Table, TableType
from store.snapshot import ReadSnapshot
from tests.builders import local_dir
from tests.conftest import behind_a_held_write, running_gateway, wait_applied
from tests.thrift_client import ThriftClient, client_with_database

LATEST = ReadSnapshot(latest_committed=True)
PARQUET = ("org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
           "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
           "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe")


def _conf(tmp_path: Path) -> dict[str, str]:
    """The warehouse under `tmp_path`, whose other directories the tests place tables and partitions in:
    all the gateway's to change (metastore.gateway.data.roots)."""
    return {"hive.metastore.warehouse.dir": str(tmp_path / "warehouse"), "metastore.gateway.data.roots": str(tmp_path)}


@pytest.fixture
async def env(pg_dsn: str, tmp_path: Path) -> AsyncIterator[tuple[ThriftClient, Path]]:
    warehouse = tmp_path / "warehouse"
    async with running_gateway(pg_dsn, **_conf(tmp_path)) as gw, \
            client_with_database(gw.thrift_port) as client:
        yield client, warehouse


def _table(name: str, keys: tuple[str, ...] = ("ds",), *, external: bool = False, location: str | None = None,
           params: dict[str, str] | None = None) -> Any:
    sd = hms.StorageDescriptor(cols=[hms.FieldSchema(name="id", type="bigint", comment="")], location=location,
                               inputFormat=PARQUET[0], outputFormat=PARQUET[1], compressed=False, numBuckets=-1,
                               serdeInfo=hms.SerDeInfo(serializationLib=PARQUET[2], parameters={}),
                               bucketCols=[], sortCols=[], parameters={})
    parameters = {**(params or {}), **({"EXTERNAL": "TRUE"} if external else {})}
    return hms.Table(tableName=name, dbName="db", owner="alice", sd=sd, parameters=parameters,
                     partitionKeys=[hms.FieldSchema(name=k, type="string", comment="") for k in keys],
                     tableType="EXTERNAL_TABLE" if external else "MANAGED_TABLE")


async def _add(client: ThriftClient, table: str, *values: list[str]) -> list[Any]:
    request = hms.AddPartitionsRequest(dbName="db", tblName=table, ifNotExists=False, needResult=True,
                                       parts=[hms.Partition(values=v, dbName="db", tableName=table, parameters={})
                                              for v in values])
    return list((await client("add_partitions_req", request)).partitions)


def _write_file(location: str, name: str = "part-0.parquet") -> Path:
    path = Path(local_dir(location)) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"rows")
    return path


async def test_creates_make_the_missing_directories_and_a_failed_create_leaves_none(
        env: tuple[ThriftClient, Path], tmp_path: Path) -> None:
    """As Hive's metastore does: a database, a table (an external one too) and a partition get their
    directory when it is missing, at the default place or the one named; a view gets none. A create
    the store refuses removes the directories it made (a parent that already existed stays), and a
    location that is a file is refused with nothing created."""
    client, warehouse = env
    assert (warehouse / "db.db").is_dir()
    await client("create_table", _table("t"))
    await _add(client, "t", ["2024-01-01"])
    assert (warehouse / "db.db" / "t" / "ds=2024-01-01").is_dir()
    outside = tmp_path / "lake" / "raw" / "events"
    await client("create_table", _table("ext", external=True, location=f"file://{outside}"))
    assert outside.is_dir()
    placed = tmp_path / "elsewhere" / "p"
    await _add(client, "ext", ["a"])
    request = hms.AddPartitionsRequest(dbName="db", tblName="ext", ifNotExists=False, needResult=True, parts=[
        hms.Partition(values=["b"], dbName="db", tableName="ext", parameters={},
                      sd=hms.StorageDescriptor(location=str(placed), cols=[], parameters={}))])
    await client("add_partitions_req", request)
    assert (outside / "ds=a").is_dir() and placed.is_dir()
    view = hms.Table(tableName="v", dbName="db", owner="alice", tableType="VIRTUAL_VIEW", parameters={},
                     partitionKeys=[], viewOriginalText="select 1", viewExpandedText="select 1",
                     sd=hms.StorageDescriptor(cols=[hms.FieldSchema(name="x", type="int", comment="")], parameters={}))
    await client("create_table", view)
    assert not (warehouse / "db.db" / "v").exists()

    # Refused by the store after the directories were made: they go again, an existing parent stays.
    (tmp_path / "existing").mkdir()
    bad = _table("bad", location=str(tmp_path / "existing" / "new" / "bad"))
    bad.sd.cols = [hms.FieldSchema(name="id", type="no_such_type", comment="")]
    with pytest.raises(TException):
        await client("create_table", bad)
    assert (tmp_path / "existing").is_dir() and not (tmp_path / "existing" / "new").exists()
    with pytest.raises(TException):  # the partition exists: the second one's directory goes again
        await _add(client, "t", ["2024-01-02"], ["2024-01-01"])
    assert not (warehouse / "db.db" / "t" / "ds=2024-01-02").exists()
    with pytest.raises(TException):
        await client("create_database", hms.Database(name="db", description="", parameters={},
                                                     locationUri=str(tmp_path / "dup.db")))
    assert not (tmp_path / "dup.db").exists()

    (tmp_path / "a_file").write_text("x")
    with pytest.raises(TException) as refused:
        await client("create_table", _table("on_file", location=str(tmp_path / "a_file")))
    assert type(refused.value).__name__ == "InvalidObjectException" and "not a directory" in str(refused.value)
    with pytest.raises(TException):
        await client("get_table", "db", "on_file")

    # The partitions' directories are made after their rows are written, before the commit: one that
    # cannot be made refuses the whole add, nothing is committed and the other directories go again.
    request = hms.AddPartitionsRequest(dbName="db", tblName="t", ifNotExists=False, needResult=True, parts=[
        hms.Partition(values=["2024-02-01"], dbName="db", tableName="t", parameters={}),
        hms.Partition(values=["2024-02-02"], dbName="db", tableName="t", parameters={},
                      sd=hms.StorageDescriptor(location=str(tmp_path / "a_file"), cols=[], parameters={}))])
    with pytest.raises(TException) as refused:
        await client("add_partitions_req", request)
    assert type(refused.value).__name__ == "InvalidObjectException" and "not a directory" in str(refused.value)
    assert await client("get_partitions_by_names", "db", "t", ["ds=2024-02-01", "ds=2024-02-02"]) == []
    assert not (warehouse / "db.db" / "t" / "ds=2024-02-01").exists()
    assert [p.values for p in await _add(client, "t", ["2024-02-01"])] == [["2024-02-01"]]  # nothing was left behind


async def test_concurrent_creates_of_one_name_leave_the_winners_directory(pg_dsn: str, tmp_path: Path) -> None:
    """Several clients add the same new partition (or create the same table) at once: one wins, the
    others get AlreadyExists, and the winner's directory stays. A loser never touches it: directories
    are made after the insert that proves the object new, inside its transaction, as in Hive's
    metastore (made before it, a loser that had made the directory removed it on losing, under the
    winner's partition: 138 of 300 rounds of four clients)."""
    warehouse = tmp_path / "warehouse"
    async with running_gateway(pg_dsn, **_conf(tmp_path)) as gw, \
            client_with_database(gw.thrift_port) as client:
        await client("create_table", _table("t"))
        clients = [ThriftClient(gw.thrift_port) for _ in range(4)]

        async def at_once(method: str, *args: Any) -> list[str]:
            outcomes = await asyncio.gather(*(c(method, *args) for c in clients), return_exceptions=True)
            return sorted(type(o).__name__ for o in outcomes)

        losers = ["AlreadyExistsException"] * 3
        try:
            for i in range(40):
                part = hms.Partition(values=[f"d{i}"], dbName="db", tableName="t", parameters={})
                request = hms.AddPartitionsRequest(dbName="db", tblName="t", ifNotExists=False, needResult=False,
                                                   parts=[part])
                assert await at_once("add_partitions_req", request) == ["AddPartitionsResult", *losers]
                assert (warehouse / "db.db" / "t" / f"ds=d{i}").is_dir(), f"round {i}"
            for i in range(10):
                assert await at_once("create_table", _table(f"n{i}")) == [*losers, "NoneType"]
                assert (warehouse / "db.db" / f"n{i}").is_dir(), f"round {i} of create_table"
        finally:
            for c in clients:
                c.close()


async def test_concurrent_renames_of_one_object_leave_the_winners_files_where_it_points(pg_dsn: str,
                                                                                         tmp_path: Path) -> None:
    """Two clients rename the same managed table (or partition, or exchange it into two tables) at
    once: one wins, and its table's or partition's location holds the files. The directory moves
    once the moved rows are written, inside the transaction, as in Hive's metastore: the loser waits
    on those rows, finds the old name gone and moves nothing (moved before, a loser's move, undone
    when it lost, could leave the winner pointing at a directory that was never made)."""
    async with running_gateway(pg_dsn, **_conf(tmp_path)) as gw, \
            client_with_database(gw.thrift_port) as client:
        clients = [ThriftClient(gw.thrift_port) for _ in range(2)]
        try:
            for i in range(15):
                await client("create_table", _table(f"t{i}"))
                (p,) = await _add(client, f"t{i}", ["x"])
                data = _write_file(p.sd.location)
                renames = []
                for c, to in zip(clients, ("a", "b")):
                    renamed = await client("get_table", "db", f"t{i}")
                    renamed.tableName = f"{to}{i}"
                    renames.append(c("alter_table", "db", f"t{i}", renamed))
                outcomes = await asyncio.gather(*renames, return_exceptions=True)
                (winner,) = [to for to, o in zip("ab", outcomes) if not isinstance(o, BaseException)]
                moved = await client("get_partition", "db", f"{winner}{i}", ["x"])
                assert (Path(local_dir(moved.sd.location)) / data.name).exists(), f"round {i}: {outcomes}"

                part = await client("get_partition", "db", f"{winner}{i}", ["x"])
                renames = [c("rename_partition", "db", f"{winner}{i}", ["x"],
                             hms.Partition(values=[to], dbName="db", tableName=f"{winner}{i}", parameters={},
                                           sd=part.sd)) for c, to in zip(clients, ("y", "z"))]
                outcomes = await asyncio.gather(*renames, return_exceptions=True)
                (winner_part,) = [to for to, o in zip("yz", outcomes) if not isinstance(o, BaseException)]
                moved = await client("get_partition", "db", f"{winner}{i}", [winner_part])
                assert (Path(local_dir(moved.sd.location)) / data.name).exists(), \
                    f"round {i} of rename_partition: {outcomes}"

                for to in ("a", "b"):
                    await client("create_table", _table(f"e{to}{i}"))
                exchanges = [c("exchange_partition", {"ds": winner_part}, "db", f"{winner}{i}", "db", f"e{to}{i}")
                             for c, to in zip(clients, ("a", "b"))]
                outcomes = await asyncio.gather(*exchanges, return_exceptions=True)
                (into,) = [to for to, o in zip("ab", outcomes) if not isinstance(o, BaseException)]
                moved = await client("get_partition", "db", f"e{into}{i}", [winner_part])
                assert (Path(local_dir(moved.sd.location)) / data.name).exists(), \
                    f"round {i} of exchange_partition: {outcomes}"
        finally:
            for c in clients:
                c.close()


async def _until_waiting(watch: asyncpg.Connection) -> None:
    """Return once another session of this database waits on a lock (PostgreSQL says so)."""
    async with asyncio.timeout(20):
        while not await watch.fetchval("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                                       "AND wait_event_type = 'Lock'"):
            await asyncio.sleep(0.005)


async def _behind(pg_dsn: str, held: str, call: Any) -> Any:
    """`call`'s outcome when it runs while a transaction that ran `held` is open, and waits on it (the
    transaction commits once PostgreSQL reports the wait): the interleaving made certain, not timed."""
    holder, watch = await asyncpg.connect(pg_dsn), await asyncpg.connect(pg_dsn)
    try:
        async with holder.transaction():
            await holder.execute(held)
            waiting = asyncio.ensure_future(call())
            await _until_waiting(watch)
        return (await asyncio.gather(waiting, return_exceptions=True))[0]
    finally:
        await holder.close()
        await watch.close()


async def test_writes_that_wait_for_a_concurrent_drop_or_create_answer_as_if_it_came_first(pg_dsn: str,
                                                                                          tmp_path: Path) -> None:
    """A create_table in a database, or a rename into it, that waits for a DROP DATABASE finds the
    database gone (InvalidObjectException and InvalidOperationException, as when the drop came first),
    and a rename onto a name another transaction is creating finds it taken (InvalidOperationException):
    declared exceptions, not an internal error from the foreign key or the unique index; nothing changed."""
    async with running_gateway(pg_dsn, **_conf(tmp_path)) as gw, \
            client_with_database(gw.thrift_port) as client:
        placed = tmp_path / "placed"
        await client("create_table", _table("t", location=str(placed)))
        data = _write_file(str(placed))

        def dropping(db: str) -> str:
            return f"DELETE FROM dbs WHERE name = '{db}'"

        await client("create_database", hms.Database(name="gone", description="", parameters={}))
        created = _table("n")
        created.dbName = "gone"
        refused = await _behind(pg_dsn, dropping("gone"), lambda: client("create_table", created))
        assert isinstance(refused, hms.InvalidObjectException) and "gone does not exist" in refused.message

        await client("create_database", hms.Database(name="gone2", description="", parameters={}))
        moved = await client("get_table", "db", "t")
        moved.dbName = "gone2"
        refused = await _behind(pg_dsn, dropping("gone2"), lambda: client("alter_table", "db", "t", moved))
        assert isinstance(refused, hms.InvalidOperationException) and "gone2 does not exist" in refused.message

        renamed = await client("get_table", "db", "t")
        renamed.tableName = "u"
        creating_u = ("INSERT INTO tbls (table_id, db_name, tbl_name, table_type, transactional, body, create_time) "
                      "SELECT nextval('table_id_seq'), db_name, 'u', table_type, transactional, body, create_time "
                      "FROM tbls WHERE db_name = 'db' AND tbl_name = 't' AND dropped_wid IS NULL")
        refused = await _behind(pg_dsn, creating_u, lambda: client("alter_table", "db", "t", renamed))
        assert isinstance(refused, hms.InvalidOperationException) and "already exists" in refused.message
        assert (await client("get_table", "db", "t")).sd.location == f"file:{placed}" and data.exists()


async def test_a_rename_or_exchange_from_a_stale_view_of_the_tables_moves_nothing(pg_dsn: str,
                                                                                  tmp_path: Path) -> None:
    """The gateway plans a rename's or an exchange's moves from the tables it has cached; when a table
    was moved meanwhile (another gateway's ALTER TABLE ... SET LOCATION, not yet applied here), the
    change is refused in its transaction, where the tables' current locations are read: nothing
    changes and no directory moves (the rename moved the old directory under a table that no longer
    lived there; the exchange moved the files where the stale table was, not where the partition
    was recorded)."""
    warehouse = tmp_path / "warehouse"
    async with running_gateway(pg_dsn, **_conf(tmp_path)) as gw, \
            client_with_database(gw.thrift_port) as client:
        p, data = await _source_and_dest(client)
        async with _stale_view(gw, client, "t", "dest") as other_gateway:
            for name in ("t", "dest"):
                current = await other_gateway.latest_table("db", name)
                await other_gateway.alter_table("db", name, replace(current, sd=replace(
                    current.sd, location=str(tmp_path / f"{name}-elsewhere"))))

            renamed = await client("get_table", "db", "t")  # this gateway's stale copy
            assert renamed.sd.location == f"file:{warehouse / 'db.db' / 't'}"
            with pytest.raises(hms.MetaException, match="changed while"):
                await client("exchange_partition", {"ds": "x"}, "db", "t", "db", "dest")
            renamed.tableName = "u"
            with pytest.raises(hms.InvalidOperationException, match="changed while"):
                await client("alter_table", "db", "t", renamed)
        assert data.exists() and not (warehouse / "db.db" / "u").exists()
        assert not (warehouse / "db.db" / "dest" / "ds=x").exists()
        assert await client("get_partition_names", "db", "t", -1) == ["ds=x"]
        assert (await other_gateway.latest_table("db", "t")).sd.location == str(tmp_path / "t-elsewhere")


async def _source_and_dest(client: ThriftClient, file_name: str = "part-0.parquet") -> tuple[Any, Path]:
    """Managed tables db.t and db.dest, and t's partition ds=x holding a file: the partition and the file."""
    for name in ("t", "dest"):
        await client("create_table", _table(name))
    (p,) = await _add(client, "t", ["x"])
    return p, _write_file(p.sd.location, file_name)


@contextlib.asynccontextmanager
async def _stale_view(gw: Gateway, client: ThriftClient, *names: str) -> AsyncIterator[CatalogStore]:
    """Once this gateway has the tables cached, its poller pauses for the block: its view stays as it
    is while another gateway (the store yielded, on the same database) changes them."""
    assert gw.poller is not None and gw.cached_catalog is not None
    async with asyncio.timeout(10):  # (a read's miss asks for the fill)
        for name in names:
            while not isinstance(gw.cached_catalog.cached_table_object("db", name, ReadSnapshot(
                    latest_committed=True)), Table):
                await client("get_table", "db", name)
                await asyncio.sleep(0.01)
    gw.poller.pause()
    try:
        yield CatalogStore(gw.database, warehouse_dir=gw.settings.warehouse_dir)
    finally:
        gw.poller.resume()


async def _make_external(other_gateway: CatalogStore, name: str) -> None:
    current = await other_gateway.latest_table("db", name)
    await other_gateway.alter_table("db", name, replace(current, table_type=TableType.EXTERNAL,
                                                        parameters={**current.parameters, "EXTERNAL": "TRUE"}))


async def test_a_partition_rename_from_a_stale_view_of_a_table_made_external_moves_nothing(
        pg_dsn: str, tmp_path: Path) -> None:
    """The gateway plans whether a partition rename moves the directory from the table it has cached;
    when another gateway made the table external meanwhile (not yet applied here), its data is no
    longer the metastore's to move: the rename is refused in its transaction, where the table is read
    as it is, with nothing renamed and nothing moved (it moved the external table's directory). Once
    this gateway has caught up, the retry renames it and the data stays."""
    warehouse = tmp_path / "warehouse"
    async with running_gateway(pg_dsn, **_conf(tmp_path)) as gw, \
            client_with_database(gw.thrift_port) as client:
        await client("create_table", _table("t"))
        (p,) = await _add(client, "t", ["x"])
        data = _write_file(p.sd.location)
        renamed = hms.Partition(values=["y"], dbName="db", tableName="t", parameters={}, sd=p.sd)
        async with _stale_view(gw, client, "t") as other_gateway:
            await _make_external(other_gateway, "t")
            assert (await client("get_table", "db", "t")).tableType == "MANAGED_TABLE"  # this gateway's stale copy
            with pytest.raises(hms.InvalidOperationException, match="changed while"):
                await client("rename_partition", "db", "t", ["x"], renamed)
        assert data.exists() and not (warehouse / "db.db" / "t" / "ds=y").exists()
        await wait_applied(gw)
        assert await client("get_partition_names", "db", "t", -1) == ["ds=x"]

        await client("rename_partition", "db", "t", ["x"], renamed)
        assert (await client("get_partition", "db", "t", ["y"])).sd.location == p.sd.location and data.exists()


async def test_a_table_rename_from_a_stale_view_of_a_table_made_external_moves_nothing(
        pg_dsn: str, tmp_path: Path) -> None:
    """The gateway plans whether a table rename moves the directory from the table it has cached; when
    another gateway made the table external meanwhile (not yet applied here), the rename is refused
    in its transaction, where the table is read as it is, with nothing renamed and nothing moved (it
    moved the external table's directory to the new name's, the client's object saying EXTERNAL
    too). Once this gateway has caught up, the retry renames it and the data stays."""
    warehouse = tmp_path / "warehouse"
    async with running_gateway(pg_dsn, **_conf(tmp_path)) as gw, \
            client_with_database(gw.thrift_port) as client:
        await client("create_table", _table("t", ()))
        location = (await client("get_table", "db", "t")).sd.location
        data = _write_file(location)
        async with _stale_view(gw, client, "t") as other_gateway:
            await _make_external(other_gateway, "t")
            renamed = await client("get_table", "db", "t")  # this gateway's stale copy, made what the client knows
            assert renamed.tableType == "MANAGED_TABLE"
            renamed.tableType, renamed.parameters = "EXTERNAL_TABLE", {**renamed.parameters, "EXTERNAL": "TRUE"}
            renamed.tableName = "u"
            with pytest.raises(hms.InvalidOperationException, match="changed while"):
                await client("alter_table", "db", "t", renamed)
        assert data.exists() and not (warehouse / "db.db" / "u").exists()
        assert (await other_gateway.latest_table("db", "t")).sd.location == location
        await wait_applied(gw)

        await client("alter_table", "db", "t", renamed)
        assert (await client("get_table", "db", "u")).sd.location == location and data.exists()


async def test_an_exchange_from_a_stale_view_of_a_source_made_external_moves_nothing(
        pg_dsn: str, tmp_path: Path) -> None:
    """The gateway plans whether an exchange moves the partitions' directories from the tables it has
    cached (the source's ownership decides: store/placement.py exchanged_location); when another gateway
    made the source external meanwhile (not yet applied here), its data is no longer the metastore's to
    move: the exchange is refused in its transaction, where the tables are read as they are, with
    nothing exchanged and nothing moved (it moved the external table's partition directory). Once this
    gateway has caught up, the retry exchanges it and the data stays where it is."""
    warehouse = tmp_path / "warehouse"
    async with running_gateway(pg_dsn, **_conf(tmp_path)) as gw, \
            client_with_database(gw.thrift_port) as client:
        p, data = await _source_and_dest(client)
        async with _stale_view(gw, client, "t", "dest") as other_gateway:
            await _make_external(other_gateway, "t")
            with pytest.raises(hms.MetaException, match="changed while"):
                await client("exchange_partition", {"ds": "x"}, "db", "t", "db", "dest")
        assert data.exists() and not (warehouse / "db.db" / "dest" / "ds=x").exists()
        await wait_applied(gw)
        assert await client("get_partition_names", "db", "t", -1) == ["ds=x"]
        assert await client("get_partition_names", "db", "dest", -1) == []

        moved = await client("exchange_partition", {"ds": "x"}, "db", "t", "db", "dest")
        assert moved.sd.location == p.sd.location and data.exists()



async def test_a_partition_moved_while_a_rename_or_exchange_waits_for_it_moves_nothing(
        pg_dsn: str, tmp_path: Path) -> None:
    """A rename or an exchange plans its move from where the partition was before its transaction;
    when a concurrent ALTER PARTITION ... SET LOCATION holds the partition meanwhile and commits, the
    store finds the partition elsewhere and the change is refused, with nothing changed and nothing
    moved (the rename moved the old directory to the new name's and left the data the committed ALTER
    pointed at orphaned; the exchange, likewise, into the destination)."""
    warehouse = tmp_path / "warehouse"
    async with running_gateway(pg_dsn, **_conf(tmp_path)) as gw, \
            client_with_database(gw.thrift_port) as client:
        p, old_file = await _source_and_dest(client, "old.parquet")
        store = CatalogStore(gw.database, warehouse_dir=gw.settings.warehouse_dir)
        _, (at_first,) = (await store.get_partitions_by_names("db", "t", ["ds=x"], LATEST)).value
        renamed = hms.Partition(values=["y"], dbName="db", tableName="t", parameters={}, sd=p.sd)
        calls = {"rename_partition": ("db", "t", ["x"], renamed),
                 "exchange_partition": ({"ds": "x"}, "db", "t", "db", "dest")}
        for method, args in calls.items():
            elsewhere = str(tmp_path / f"elsewhere-{method}")
            new_file = _write_file(elsewhere, "new.parquet")

            async def set_location(conn: asyncpg.Connection, to: str = elsewhere) -> Any:
                return await catalog.alter_partitions(conn, "db", "t", [replace(at_first, sd=replace(
                    at_first.sd, location=to))])

            refused = await behind_a_held_write(gw, set_location, functools.partial(client, method, *args))
            with pytest.raises(TException, match="changed while"):
                await refused
            assert old_file.exists() and new_file.exists(), method
            assert not (warehouse / "db.db" / "t" / "ds=y").exists(), method
            assert not (warehouse / "db.db" / "dest" / "ds=x").exists(), method
            _, (now,) = (await store.get_partitions_by_names("db", "t", ["ds=x"], LATEST)).value
            assert now.sd.location == elsewhere, method
            await store.alter_partitions("db", "t", [at_first])  # (back where it was, for the next call)


async def test_a_drop_from_a_stale_view_deletes_where_the_objects_are_not_where_they_were(pg_dsn: str,
                                                                                          tmp_path: Path) -> None:
    """A drop with deleteData deletes the locations its own transaction found: when another gateway
    moved the table or the database (SET LOCATION, not yet applied here), the new directory goes and
    the old one, no longer theirs, stays (the gateway's cached view deleted the old and left the new)."""
    async with running_gateway(pg_dsn, **_conf(tmp_path)) as gw, \
            client_with_database(gw.thrift_port) as client:
        await client("create_table", _table("t"))
        old_file = _write_file((await client("get_table", "db", "t")).sd.location)
        async with _stale_view(gw, client, "t") as other_gateway:
            current = await other_gateway.latest_table("db", "t")
            moved_to = str(tmp_path / "t-elsewhere")
            await other_gateway.alter_table("db", "t", replace(current, sd=replace(current.sd, location=moved_to)))
            new_file = _write_file(moved_to)
            assert (await client("get_table", "db", "t")).sd.location != moved_to  # this gateway's stale copy

            await client("drop_table", "db", "t", True)
            assert not new_file.exists() and old_file.exists()

            db = (await other_gateway.get_database("db")).value
            db_moved_to = str(tmp_path / "db-elsewhere")
            await other_gateway.alter_database("db", replace(db, location=db_moved_to))
            db_file = _write_file(db_moved_to)
            await client("drop_database", "db", True, True)
        assert not db_file.exists() and old_file.exists()


async def test_a_truncate_from_a_stale_view_empties_the_table_where_it_is_and_keeps_others_changes(
        pg_dsn: str, tmp_path: Path) -> None:
    """A truncate reads the table in its own transaction: when another gateway changed it (SET LOCATION
    and a parameter, not yet applied here), the new directory is emptied, the old one is left alone,
    and the other's change stays (the gateway's cached copy emptied the old directory and wrote its
    stale table back over the change)."""
    async with running_gateway(pg_dsn, **_conf(tmp_path)) as gw, \
            client_with_database(gw.thrift_port) as client:
        await client("create_table", _table("t", (), params={"numRows": "5"}))
        old_file = _write_file((await client("get_table", "db", "t")).sd.location)
        async with _stale_view(gw, client, "t") as other_gateway:
            current = await other_gateway.latest_table("db", "t")
            moved_to = str(tmp_path / "t-elsewhere")
            await other_gateway.alter_table("db", "t", replace(current, sd=replace(current.sd, location=moved_to),
                                                              parameters={**current.parameters, "note": "moved"}))
            new_file = _write_file(moved_to)
            assert (await client("get_table", "db", "t")).sd.location != moved_to  # this gateway's stale copy
            await client("truncate_table", "db", "t", None)
        assert not new_file.exists() and Path(moved_to).is_dir() and old_file.exists()
        after = await other_gateway.latest_table("db", "t")
        assert after.sd.location == moved_to and after.parameters["note"] == "moved"
        assert after.parameters["numRows"] == "0"


async def test_drop_table_deletes_a_managed_tables_data_and_keeps_an_external_ones(
        env: tuple[ThriftClient, Path], tmp_path: Path) -> None:
    client, warehouse = env
    await client("create_table", _table("managed"))
    outside = tmp_path / "elsewhere" / "ds=b"
    (p_in,) = await _add(client, "managed", ["a"])
    moved = hms.Partition(values=["b"], dbName="db", tableName="managed", parameters={},
                          sd=hms.StorageDescriptor(location=str(outside)))
    await client("add_partition", moved)
    in_file, out_file = _write_file(p_in.sd.location), _write_file(str(outside))
    assert in_file.is_relative_to(warehouse / "db.db" / "managed")

    external_dir = tmp_path / "external"
    await client("create_table", _table("ext", external=True, location=str(external_dir)))
    ext_file = _write_file(str(external_dir))

    await client("drop_table", "db", "managed", True)
    assert not (warehouse / "db.db" / "managed").exists() and not out_file.exists() and not outside.exists()
    await client("drop_table", "db", "ext", True)
    assert ext_file.exists(), "an external table's data is not the metastore's to delete"

    await client("create_table", _table("kept"))
    kept = _write_file((await client("get_table", "db", "kept")).sd.location)
    await client("drop_table", "db", "kept", False)
    assert kept.exists(), "deleteData=false keeps the files"


async def test_drop_partition_deletes_its_directory_and_empty_parents(env: tuple[ThriftClient, Path]) -> None:
    client, warehouse = env
    await client("create_table", _table("t", ("a", "b")))
    p1, p2 = await _add(client, "t", ["1", "x"], ["2", "y"])
    f1, f2 = _write_file(p1.sd.location), _write_file(p2.sd.location)
    assert await client("drop_partition", "db", "t", ["1", "x"], True) is True
    assert not f1.exists() and not (warehouse / "db.db" / "t" / "a=1").exists()
    assert f2.exists() and (warehouse / "db.db" / "t").is_dir()

    result = await client("drop_partitions_req", hms.DropPartitionsRequest(
        dbName="db", tblName="t", parts=hms.RequestPartsSpec(names=["a=2/b=y"]), deleteData=False, needResult=True))
    assert result.partitions == [p2], "the partition dropped, whole, as get_partition had it (as Hive answers)"
    assert f2.exists(), "deleteData=false keeps the files"


async def test_drop_partitions_req_deletes_files_and_skips_missing_names_only_when_asked(
        env: tuple[ThriftClient, Path]) -> None:
    """Hive 2.3.10's drop_partitions_req reads deleteData and ifExists as set and true: a request that leaves
    them unset (a client other than Hive's may) keeps the files and refuses a missing name, whatever the
    IDL's `ifExists = true` default; needResult unset answers the partitions, as Hive's does."""
    client, _ = env
    await client("create_table", _table("t"))
    kept, refused, deleted = await _add(client, "t", ["kept"], ["refused"], ["deleted"])
    files = {p.values[0]: _write_file(p.sd.location) for p in (kept, refused, deleted)}

    def request(names: list[str], **flags: bool) -> Any:  # a flag not given is not sent
        return hms.DropPartitionsRequest(dbName="db", tblName="t", parts=hms.RequestPartsSpec(names=names),
                                         **{"ifExists": None, "needResult": None, **flags})

    with pytest.raises(hms.NoSuchObjectException):  # ifExists unset: as false, nothing dropped
        await client("drop_partitions_req", request(["ds=refused", "ds=missing"]))
    assert await client("get_partition_names", "db", "t", -1) == ["ds=deleted", "ds=kept", "ds=refused"]

    result = await client("drop_partitions_req", request(["ds=kept"]))
    assert result.partitions == [kept]
    assert files["kept"].exists(), "deleteData unset keeps the files"
    result = await client("drop_partitions_req", request(["ds=refused", "ds=missing"], ifExists=True))
    assert result.partitions == [refused] and files["refused"].exists()
    await client("drop_partitions_req", request(["ds=deleted"], deleteData=True))
    assert not files["deleted"].exists() and not Path(local_dir(deleted.sd.location)).exists()
    assert await client("get_partition_names", "db", "t", -1) == []


async def test_a_partition_directory_hive_escaped_is_made_and_deleted_by_its_escaped_name(
        env: tuple[ThriftClient, Path]) -> None:
    """A value with `:` is `%3A` in the directory's name (Hive's escaping, which Spark writes too): the
    location is that name as it is, not a URL to decode, so the drop deletes the directory the data is in."""
    client, warehouse = env
    await client("create_table", _table("t"))
    (part,) = await _add(client, "t", ["10:00 x"])
    directory = warehouse / "db.db" / "t" / "ds=10%3A00 x"
    assert part.sd.location.endswith("/ds=10%3A00 x") and directory.is_dir()
    _write_file(part.sd.location)
    await client("drop_partition", "db", "t", ["10:00 x"], True)
    assert not directory.exists() and sorted(os.listdir(warehouse / "db.db" / "t")) == []


async def test_drop_database_cascade_with_delete_data(env: tuple[ThriftClient, Path]) -> None:
    client, warehouse = env
    await client("create_table", _table("t"))
    (p,) = await _add(client, "t", ["a"])
    data = _write_file(p.sd.location)
    await client("drop_database", "db", True, True)
    assert not data.exists() and not (warehouse / "db.db").exists()
    with pytest.raises(TException):
        await client("get_database", "db")


async def test_truncate_empties_the_directories_and_zeroes_the_basic_stats(env: tuple[ThriftClient, Path]) -> None:
    client, _ = env
    stats = {"numFiles": "3", "numRows": "30", "totalSize": "300", "comment": "kept"}
    await client("create_table", _table("plain", keys=(), params=stats))
    location = (await client("get_table", "db", "plain")).sd.location
    _write_file(location)
    _write_file(location, "sub/part-1.parquet")
    await client("truncate_table", "db", "plain", None)
    assert os.path.isdir(local_dir(location)) and os.listdir(local_dir(location)) == []
    params = (await client("get_table", "db", "plain")).parameters
    assert {k: params[k] for k in ("numFiles", "numRows", "totalSize", "comment")} == {
        "numFiles": "0", "numRows": "0", "totalSize": "0", "comment": "kept"}

    await client("create_table", _table("parted"))
    pa, pb = await _add(client, "parted", ["a"], ["b"])
    fa, fb = _write_file(pa.sd.location), _write_file(pb.sd.location)
    await client("truncate_table", "db", "parted", ["ds=a"])
    assert not fa.exists() and os.path.isdir(local_dir(pa.sd.location)) and fb.exists()
    err = await _raises(client, "truncate_table", "db", "parted", ["ds=zzz"])
    assert "ds=zzz" in err.message and fb.exists()


async def test_truncate_of_partition_names_on_an_unpartitioned_table_empties_nothing(
        env: tuple[ThriftClient, Path]) -> None:
    """Partition names an unpartitioned table cannot have are refused, as names a partitioned table does
    not have are: nothing is emptied and the statistics stay (Hive 3 and 4 find no such partition and
    empty nothing). An empty list names none: nothing is truncated."""
    client, _ = env
    await client("create_table", _table("plain", keys=(), params={"numRows": "30"}))
    data = _write_file((await client("get_table", "db", "plain")).sd.location)
    err = await _raises(client, "truncate_table", "db", "plain", ["ds=1"])
    assert type(err).__name__ == "MetaException" and "not partitioned" in err.message and "ds=1" in err.message
    with pytest.raises(hms.MetaException):
        await client("truncate_table_req", hms.TruncateTableRequest(dbName="db", tableName="plain",
                                                                    partNames=["ds=1"]))
    await client("truncate_table", "db", "plain", [])
    assert data.exists() and (await client("get_table", "db", "plain")).parameters["numRows"] == "30"


async def test_truncate_empties_every_partition_of_a_table_larger_than_one_batch(pg_dsn: str, tmp_path: Path) -> None:
    """Hive truncates every partition: a table with more than metastore.gateway.max.batch.size of them is
    truncated whole, in one transaction whose ALTER_PARTITION events each carry at most a batch."""
    conf = {**_conf(tmp_path), "metastore.gateway.max.batch.size": "3",
            "hive.metastore.event.message.factory": "metastore-gateway-json-1"}  # the log's events, as stored
    async with running_gateway(pg_dsn, **conf) as gw, client_with_database(gw.thrift_port) as client:
        await client("create_table", _table("big", params={"numRows": "5"}))
        parts = [p for start in range(0, 7, 3)
                 for p in await _add(client, "big", *([str(v)] for v in range(start, min(start + 3, 7))))]
        files = [_write_file(p.sd.location) for p in parts]
        for p in parts:
            await client("alter_partition", "db", "big", hms.Partition(
                values=p.values, dbName="db", tableName="big", sd=p.sd, parameters={"numRows": "10"}))
        before = (await client("get_current_notificationEventId")).eventId
        await client("truncate_table", "db", "big", None)
        assert not any(f.exists() for f in files) and all(os.path.isdir(local_dir(p.sd.location)) for p in parts)
        assert {p.parameters["numRows"] for p in await client("get_partitions", "db", "big", -1)} == {"0"}
        events = (await client("get_next_notification", hms.NotificationEventRequest(
            lastEvent=before, maxEvents=100))).events
        assert [e.eventType for e in events] == ["ALTER_PARTITION"] * 3  # 7 partitions: 3 + 3 + 1


async def test_truncate_refuses_transactional_and_external_tables(env: tuple[ThriftClient, Path],
                                                                   tmp_path: Path) -> None:
    client, _ = env
    await client("create_table", _table("acid", params={"transactional": "true"}))
    await client("create_table", _table("ext", external=True, location=str(tmp_path / "ext")))
    kept = _write_file(str(tmp_path / "ext"))
    assert "transactional" in (await _raises(client, "truncate_table", "db", "acid", None)).message
    assert "not a managed table" in (await _raises(client, "truncate_table", "db", "ext", None)).message
    assert kept.exists()


async def test_rename_partition_moves_its_directory_with_it(env: tuple[ThriftClient, Path]) -> None:
    client, warehouse = env
    await client("create_table", _table("t"))
    old, other = await _add(client, "t", ["old"], ["other"])
    data = _write_file(old.sd.location)
    renamed = hms.Partition(values=["new"], dbName="db", tableName="t", parameters={"k": "v"}, sd=old.sd)
    await client("rename_partition", "db", "t", ["old"], renamed)
    assert await client("get_partition_names", "db", "t", -1) == ["ds=new", "ds=other"]
    got = await client("get_partition", "db", "t", ["new"])
    assert got.sd.location == f"file:{warehouse / 'db.db' / 't' / 'ds=new'}" and got.parameters["k"] == "v"
    assert (Path(local_dir(got.sd.location)) / data.name).exists() and not data.exists()

    # The new name exists: nothing changes, the directory stays where it was.
    clash = hms.Partition(values=["other"], dbName="db", tableName="t", parameters={}, sd=got.sd)
    err = await _raises(client, "rename_partition", "db", "t", ["new"], clash)
    assert "ds=other" in err.message
    assert await client("get_partition_names", "db", "t", -1) == ["ds=new", "ds=other"]
    assert (Path(local_dir(got.sd.location)) / data.name).exists()
    assert (await _raises(client, "rename_partition", "db", "t", ["gone"], clash)).message.endswith("ds=gone")

    # No old values: Hive's rule makes it an alter of the partition.
    got.parameters = {"altered": "yes"}
    await client("rename_partition", "db", "t", [], got)
    assert (await client("get_partition", "db", "t", ["new"])).parameters["altered"] == "yes"


async def test_a_partition_in_its_directory_spelled_as_spark_does_moves_with_its_rename(
        env: tuple[ThriftClient, Path], tmp_path: Path) -> None:
    """Spark keeps a Hive table's partition columns in the case they were declared in and writes `Ds=x/Hr=1`
    where the metastore's name is `ds=x/hr=1`. Its rename of such a partition counts on the metastore moving
    it to the new name's default directory, as Hive does, and then renames that to its own spelling; a
    partition left where it was failed Spark's ALTER TABLE ... RENAME TO PARTITION ("Unable to rename
    partition path"). A partition placed elsewhere still stays."""
    client, warehouse = env
    await client("create_table", _table("t", ("ds", "hr")))
    home = warehouse / "db.db" / "t"
    table = await client("get_table", "db", "t")

    def at(values: list[str], location: Path) -> Any:
        sd = copy.deepcopy(table.sd)
        sd.location = str(location)
        return hms.Partition(values=values, dbName="db", tableName="t", parameters={}, sd=sd)
    await client("add_partitions", [at(["a b/c", "1"], home / "Ds=a b%2Fc" / "Hr=1"),
                                    at(["x", "2"], tmp_path / "elsewhere")])
    data = _write_file(str(home / "Ds=a b%2Fc" / "Hr=1"))
    for old_values, new_values in ((["a b/c", "1"], ["é/ü", "3"]), (["x", "2"], ["y", "2"])):
        old = await client("get_partition", "db", "t", old_values)
        await client("rename_partition", "db", "t", old_values, hms.Partition(
            values=new_values, dbName="db", tableName="t", parameters={}, sd=old.sd))
    assert (await client("get_partition", "db", "t", ["é/ü", "3"])).sd.location == f"file:{home / 'ds=é%2Fü' / 'hr=3'}"
    assert (home / "ds=é%2Fü" / "hr=3" / data.name).exists() and not data.exists()
    assert (await client("get_partition", "db", "t", ["y", "2"])).sd.location == f"file:{tmp_path / 'elsewhere'}"


async def test_a_partition_left_in_its_table_s_default_directory_moves_with_its_rename(
        env: tuple[ThriftClient, Path]) -> None:
    """A managed table given another location (SET LOCATION moves no partition) keeps its partitions in its
    default directory; Hive moves such a partition, as every managed table's, to the new name's directory under
    the table's location when it is renamed, and Spark's rename of one whose key is declared in upper case
    counts on it. Found by the stateful differential soak (seed 5858, STATEFUL_DIFFERENTIAL_STEPS=32, 171st
    example: add_partition, alter_table's location, rename_partition): the gateway took the partition for one
    placed elsewhere and left it there."""
    client, warehouse = env
    await client("create_table", _table("t", ("Ds",)))
    (old,) = await _add(client, "t", ["a"])
    assert old.sd.location == f"file:{warehouse / 'db.db' / 't' / 'ds=a'}"
    data = _write_file(old.sd.location)
    table = await client("get_table", "db", "t")
    table.sd.location = f"file:{warehouse / 'moved' / 't'}"
    await client("alter_table", "db", "t", table)
    assert (await client("get_partition", "db", "t", ["a"])).sd.location == old.sd.location
    await client("rename_partition", "db", "t", ["a"], hms.Partition(
        values=["b"], dbName="db", tableName="t", parameters={}, sd=old.sd))
    got = await client("get_partition", "db", "t", ["b"])
    assert got.sd.location == f"file:{warehouse / 'moved' / 't' / 'ds=b'}"
    assert (Path(local_dir(got.sd.location)) / data.name).exists() and not data.exists()


async def test_a_renamed_partition_keeps_its_grants_and_the_statistics_of_the_columns_it_keeps(
        env: tuple[ThriftClient, Path]) -> None:
    """As Hive's metastore: grants stay with the partition; column statistics too (Hive 3 and 4; Hive
    2.3 deletes them) unless the renamed partition no longer has the column with the same type."""
    client, _ = env
    await client("create_table", _table("t"))
    (old, _other) = await _add(client, "t", ["old"], ["other"])
    id_stats = hms.ColumnStatisticsObj(colName="id", colType="bigint", statsData=hms.ColumnStatisticsData(
        longStats=hms.LongColumnStatsData(lowValue=1, highValue=9, numNulls=0, numDVs=9)))
    await client("update_partition_column_statistics", hms.ColumnStatistics(
        statsDesc=hms.ColumnStatisticsDesc(isTblLevel=False, dbName="db", tableName="t", partName="ds=old"),
        statsObj=[id_stats]))
    grant = hms.PrivilegeGrantInfo(privilege="SELECT", createTime=0, grantor="bob", grantorType=1, grantOption=False)

    def on(value: str) -> Any:
        return hms.HiveObjectRef(objectType=hms.HiveObjectType.PARTITION, dbName="db", objectName="t",
                                 partValues=[value])
    await client("grant_privileges", hms.PrivilegeBag(privileges=[hms.HiveObjectPrivilege(
        hiveObject=on("old"), principalName="carol", principalType=1, grantInfo=grant)]))

    async def kept(value: str) -> tuple[list[str], list[str]]:
        stats = await client("get_partitions_statistics_req", hms.PartitionsStatsRequest(
            dbName="db", tblName="t", colNames=["id"], partNames=[f"ds={value}"]))
        grants = await client("list_privileges", None, None, on(value))
        return ([s.colName for s in stats.partStats.get(f"ds={value}", [])],
                [f"{g.principalName}:{g.grantInfo.privilege}" for g in grants])

    def renamed(value: str, id_type: str) -> Any:
        sd = old.sd
        sd.cols = [hms.FieldSchema(name="id", type=id_type, comment="")]
        return hms.Partition(values=[value], dbName="db", tableName="t", parameters={}, sd=sd)

    await client("rename_partition", "db", "t", ["old"], renamed("mid", "bigint"))
    assert await kept("mid") == (["id"], ["carol:SELECT"])
    assert await kept("old") == ([], [])
    with pytest.raises(TException):  # the new name exists: nothing moves
        await client("rename_partition", "db", "t", ["mid"], renamed("other", "bigint"))
    assert await kept("mid") == (["id"], ["carol:SELECT"]) and await kept("other") == ([], [])
    with pytest.raises(hms.InvalidOperationException, match="already exists"):  # to its own values: nothing moves
        await client("rename_partition", "db", "t", ["mid"], renamed("mid", "bigint"))
    assert await kept("mid") == (["id"], ["carol:SELECT"])
    await client("rename_partition", "db", "t", ["mid"], renamed("new", "string"))  # id retyped
    assert await kept("new") == ([], ["carol:SELECT"])
    assert await kept("mid") == ([], [])


async def test_hive4_alter_requests_and_the_notification_count(env: tuple[ThriftClient, Path]) -> None:
    client, _ = env
    await client("create_table", _table("t"))
    (p,) = await _add(client, "t", ["a"])
    first = (await client("get_current_notificationEventId")).eventId
    table = await client("get_table", "db", "t")
    table.parameters["owner.team"] = "blue"
    await client("alter_table_req", hms.AlterTableRequest(dbName="db", tableName="t", table=table))
    assert (await client("get_table", "db", "t")).parameters["owner.team"] == "blue"
    p.parameters = {"numRows": "5"}
    await client("alter_partitions_req", hms.AlterPartitionsRequest(dbName="db", tableName="t", partitions=[p]))
    assert (await client("get_partition", "db", "t", ["a"])).parameters["numRows"] == "5"

    def count(**kw: Any) -> Any:
        return client("get_notification_events_count", hms.NotificationEventsCountRequest(dbName="db", **kw))
    assert (await count(fromEventId=first)).eventsCount == 2
    # (event 1 is the default database's, created at the gateway's start: not db's)
    assert (await count(fromEventId=0)).eventsCount == first + 1
    assert (await count(fromEventId=0, toEventId=first)).eventsCount == first - 1
    assert (await count(fromEventId=0, limit=1)).eventsCount == 1
    assert (await client("get_notification_events_count", hms.NotificationEventsCountRequest(
        fromEventId=0, dbName="other"))).eventsCount == 0
    assert "not negative" in (await _raises(client, "get_notification_events_count",
                                            hms.NotificationEventsCountRequest(fromEventId=-1, dbName="db"))).message


async def test_the_notification_count_counts_txn_events_and_every_database_as_hive(
        env: tuple[ThriftClient, Path]) -> None:
    """Hive's getNotificationEventsCount counts the database's events and those of no database (OPEN_TXN,
    COMMIT_TXN: "dbName could be NULL in case of transaction related events, which also need to be
    counted"), every database's for dbName "*", and bounds by toEventId whenever it is set, 0 included.
    The gateway counted the database's alone (1 of these 3) and nothing for "*"."""
    client, _ = env
    start = (await client("get_current_notificationEventId")).eventId
    await client("create_database", hms.Database(name="db2", description="", parameters={}))
    txn = (await client("open_txns", hms.OpenTxnRequest(num_txns=1, user="u", hostname="h"))).txn_ids[0]
    await client("commit_txn", hms.CommitTxnRequest(txnid=txn))
    assert (await client("get_current_notificationEventId")).eventId - start == 3

    async def count(db_name: str, **kw: Any) -> int:
        reply = await client("get_notification_events_count",
                             hms.NotificationEventsCountRequest(fromEventId=start, dbName=db_name, **kw))
        return int(reply.eventsCount)
    assert (await count("db2"), await count("*"), await count("db")) == (3, 3, 2)
    assert (await count("db2", toEventId=start + 1), await count("*", toEventId=0)) == (1, 0)


async def _raises(client: ThriftClient, method: str, *args: Any) -> Any:
    with pytest.raises(TException) as info:
        await client(method, *args)
    return info.value


async def test_renaming_a_managed_table_moves_its_directory_and_partitions(env: tuple[ThriftClient, Path],
                                                                             tmp_path: Path) -> None:
    client, warehouse = env
    await client("create_table", _table("t"))
    (p,) = await _add(client, "t", ["a"])
    data = _write_file(p.sd.location)
    renamed = await client("get_table", "db", "t")
    renamed.tableName = "u"
    await client("alter_table", "db", "t", renamed)
    got = await client("get_table", "db", "u")
    assert got.sd.location == f"file:{warehouse / 'db.db' / 'u'}"
    moved = await client("get_partition", "db", "u", ["a"])
    assert moved.sd.location == f"file:{warehouse / 'db.db' / 'u' / 'ds=a'}"
    assert (Path(local_dir(moved.sd.location)) / data.name).exists() and not (warehouse / "db.db" / "t").exists()

    # The old name is free again, with an empty directory of its own.
    await client("create_table", _table("t"))
    assert await client("get_partition_names", "db", "t", -1) == []

    # A table placed elsewhere by its creator stays there; so does an external table's data.
    placed = tmp_path / "placed"
    await client("create_table", _table("placed", location=str(placed)))
    kept = _write_file(str(placed))
    table = await client("get_table", "db", "placed")
    table.tableName = "placed2"
    await client("alter_table", "db", "placed", table)
    assert (await client("get_table", "db", "placed2")).sd.location == f"file:{placed}" and kept.exists()

    # The target directory exists: nothing is renamed, nothing moves.
    (warehouse / "db.db" / "v").mkdir(parents=True)
    clash = await client("get_table", "db", "u")
    clash.tableName = "v"
    err = await _raises(client, "alter_table", "db", "u", clash)
    assert "already exists" in err.message
    assert (await client("get_table", "db", "u")).sd.location == f"file:{warehouse / 'db.db' / 'u'}"
    assert (Path(local_dir(moved.sd.location)) / data.name).exists()


async def test_alter_table_cascade_of_columns_differing_only_in_case_or_comment_still_cascades(
        env: tuple[ThriftClient, Path]) -> None:
    """Hive cascades when the columns sent differ from the stored ones in anything (FieldSchema.equals:
    the name as sent, the type, the comment), not only in names and types as stored: a CHANGE COLUMN ...
    COMMENT ... CASCADE, or columns sent in upper case, give every partition the table's columns. Found by
    the stateful differential soak (seed 6464, 32 steps: an ALTER TABLE CASCADE of the table's own columns
    with one spelled 'ID' left a partition with its own columns as they were)."""
    client, _ = env
    for name in ("t1", "t2"):
        await client("create_table", _table(name))
        table = await client("get_table", "db", name)
        sd = copy.deepcopy(table.sd)
        sd.cols = [hms.FieldSchema(name="id", type="bigint", comment=""),
                   hms.FieldSchema(name="name", type="string", comment="")]
        await client("add_partition", hms.Partition(values=["1"], dbName="db", tableName=name, sd=sd, parameters={}))
    sent = {"t1": [hms.FieldSchema(name="ID", type="bigint", comment="")],
            "t2": [hms.FieldSchema(name="id", type="bigint", comment="the key")]}
    for name, cols in sent.items():
        table = await client("get_table", "db", name)
        table.sd.cols = cols
        await client("alter_table_with_cascade", "db", name, table, True)
    seen = {name: [(c.name, c.comment) for c in (await client("get_partition", "db", name, ["1"])).sd.cols]
            for name in sent}
    assert seen == {"t1": [("id", None)], "t2": [("id", "the key")]}


async def test_alter_table_cascade_gives_every_partition_the_new_columns(env: tuple[ThriftClient, Path]) -> None:
    """Hive's ALTER TABLE ... ADD COLUMNS ... CASCADE: Hive 1's client sends alter_table_with_cascade,
    Hive 2's and 3's alter_table_with_environment_context with CASCADE=true; every partition then has
    the table's new columns (HiveAlterHandler.alterTable). Without CASCADE a partition keeps its own,
    as in Hive. Before, CASCADE was ignored: Hive read such partitions with their old columns."""
    client, _ = env
    cascades = {"t1": ("alter_table_with_cascade", True),
                "t2": ("alter_table_with_environment_context", hms.EnvironmentContext(properties={"CASCADE": "true"})),
                "t3": ("alter_table_with_environment_context", hms.EnvironmentContext(properties={}))}
    for name in cascades:
        await client("create_table", _table(name))
        table = await client("get_table", "db", name)
        await client("add_partition", hms.Partition(values=["1"], dbName="db", tableName=name, sd=table.sd,
                                                    parameters={}))
    wider = [hms.FieldSchema(name="id", type="bigint", comment=""),
             hms.FieldSchema(name="extra", type="string", comment="")]
    for name, (method, how) in cascades.items():
        table = await client("get_table", "db", name)
        table.sd.cols = wider
        await client(method, "db", name, table, how)
    seen = {name: [c.name for c in (await client("get_partition", "db", name, ["1"])).sd.cols] for name in cascades}
    assert seen == {"t1": ["id", "extra"], "t2": ["id", "extra"], "t3": ["id"]}
