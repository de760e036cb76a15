"""The gateway's file work stays inside its data roots (metastore.gateway.data.roots; by default the
warehouse directory, gateway/warehouse.py): a client that places a database, a managed table or a
partition anywhere else cannot have the gateway delete, empty or move what is there. A drop with deleteData
of such a database or table (or of its partitions), a truncate or a rename that would move it is refused
with nothing changed; a partition placed outside by itself is dropped and its files left; a create makes
no directory; a symbolic link out of the warehouse and the warehouse's root itself count as outside.
Inside the roots the gateway deletes as before. (Found by a security audit: every call below deleted or
moved the canary's directory.)"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, AsyncIterator

import pytest

from gateway.thrift.idl import hms
from tests.conftest import running_gateway
from tests.thrift_client import ThriftClient

PARQUET = ("org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
           "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
           "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe")


def _table(db: str, name: str, location: str | None = None, keys: tuple[str, ...] = (), *,
           external: bool = False) -> Any:
    sd = hms.StorageDescriptor(cols=[hms.FieldSchema(name="id", type="bigint", comment="")], location=location,
                               inputFormat=PARQUET[0], outputFormat=PARQUET[1], compressed=False, numBuckets=-1,
                               serdeInfo=hms.SerDeInfo(serializationLib=PARQUET[2], parameters={}),
                               bucketCols=[], sortCols=[], parameters={})
    return hms.Table(tableName=name, dbName=db, owner="alice", sd=sd,
                     parameters={"EXTERNAL": "TRUE"} if external else {},
                     partitionKeys=[hms.FieldSchema(name=k, type="string", comment="") for k in keys],
                     tableType="EXTERNAL_TABLE" if external else "MANAGED_TABLE")


def _canary(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "precious.txt"
    path.write_text("keep me")
    return path


class Env:
    def __init__(self, client: ThriftClient, tmp: Path) -> None:
        self.call, self.warehouse, self.victims = client, tmp / "warehouse", tmp / "victims"


@pytest.fixture
async def env(pg_dsn: str, tmp_path: Path) -> AsyncIterator[Env]:
    async with running_gateway(pg_dsn, **{"hive.metastore.warehouse.dir": str(tmp_path / "warehouse")}) as gw:
        client = ThriftClient(gw.thrift_port)
        try:
            await client("create_database", hms.Database(name="db", parameters={}))
            yield Env(client, tmp_path)
        finally:
            client.close()


async def test_drops_of_data_outside_the_data_roots_are_refused_with_nothing_changed(env: Env) -> None:
    """As Hive's metastore refuses to drop what it may not delete: dropped, the metadata would go and the files
    stay, and a table made again under the name would read them."""
    db_file = _canary(env.victims / "db_dir")
    await env.call("create_database", hms.Database(name="evil", locationUri=f"file:{db_file.parent}", parameters={}))
    with pytest.raises(hms.InvalidOperationException, match="outside the gateway's data roots"):
        await env.call("drop_database", "evil", True, True)
    assert db_file.exists() and (await env.call("get_database", "evil")).name == "evil"
    await env.call("drop_database", "evil", False, True)  # without its data: the files are not the gateway's
    assert db_file.exists()

    # A location that climbs out of the warehouse with `..`, and its partitions.
    table_file = _canary(env.victims / "table_dir")
    await env.call("create_table", _table("db", "climber", f"file:{env.warehouse}/../victims/table_dir", ("ds",)))
    await env.call("add_partition", hms.Partition(dbName="db", tableName="climber", values=["a"], parameters={}))
    with pytest.raises(hms.MetaException, match="outside the gateway's data roots"):
        await env.call("drop_partition", "db", "climber", ["a"], True)
    with pytest.raises(hms.MetaException, match="outside the gateway's data roots"):
        await env.call("drop_table", "db", "climber", True)
    assert table_file.exists() and await env.call("get_partition_names", "db", "climber", -1) == ["ds=a"]

    # A symbolic link inside the warehouse to a directory outside.
    linked_file = _canary(env.victims / "linked")
    os.symlink(linked_file.parent, env.warehouse / "link")
    await env.call("create_table", _table("db", "linked", f"file:{env.warehouse}/link"))
    with pytest.raises(hms.MetaException, match="outside the gateway's data roots"):
        await env.call("drop_table", "db", "linked", True)
    assert linked_file.exists()

    # The warehouse's root itself, as a database's location: the other database's files stay.
    inside = _canary(env.warehouse / "db.db" / "kept")
    await env.call("create_database", hms.Database(name="rooted", locationUri=f"file:{env.warehouse}", parameters={}))
    with pytest.raises(hms.InvalidOperationException, match="outside the gateway's data roots"):
        await env.call("drop_database", "rooted", True, True)
    assert inside.exists() and env.warehouse.is_dir()

    # A partition of a table inside the roots placed outside by itself: dropped, its files left (logged).
    part_file = _canary(env.victims / "part_dir")
    await env.call("create_table", _table("db", "parted", keys=("ds",)))
    await env.call("add_partition", hms.Partition(dbName="db", tableName="parted", values=["a"], parameters={},
                                                  sd=hms.StorageDescriptor(location=str(part_file.parent))))
    assert await env.call("drop_partition", "db", "parted", ["a"], True)
    assert part_file.exists()

    # Inside the roots, a managed table's data goes with it, as before.
    await env.call("create_table", _table("db", "plain"))
    plain = _canary(Path((await env.call("get_table", "db", "plain")).sd.location.removeprefix("file:")))
    await env.call("drop_table", "db", "plain", True)
    assert not plain.exists()


async def test_truncates_and_moves_outside_the_data_roots_are_refused_with_nothing_changed(env: Env) -> None:
    trunc_file = _canary(env.victims / "trunc_dir")
    await env.call("create_table", _table("db", "t", str(trunc_file.parent)))
    with pytest.raises(hms.MetaException, match="outside the gateway's data roots"):
        await env.call("truncate_table", "db", "t", None)
    assert trunc_file.exists()

    # A managed table at its default place under a database placed outside: a rename would move it.
    moved_file = _canary(env.victims / "renameparent" / "victim")
    await env.call("create_database", hms.Database(name="outdb", locationUri=str(env.victims / "renameparent"),
                                                   parameters={}))
    await env.call("create_table", _table("outdb", "victim"))
    table = await env.call("get_table", "outdb", "victim")
    table.tableName = "moved"
    with pytest.raises(hms.InvalidOperationException, match="outside the gateway's data roots"):
        await env.call("alter_table", "outdb", "victim", table)
    assert moved_file.exists() and not (env.victims / "renameparent" / "moved").exists()
    assert (await env.call("get_table", "outdb", "victim")).tableName == "victim"

    # A create makes no directory outside the roots (an external table's included).
    await env.call("create_table", _table("db", "ext", str(env.victims / "new_dir"), external=True))
    assert not (env.victims / "new_dir").exists()


async def test_anywhere_restores_the_bound_of_the_os_user_alone(pg_dsn: str, tmp_path: Path) -> None:
    conf = {"hive.metastore.warehouse.dir": str(tmp_path / "warehouse"), "metastore.gateway.data.roots": "*"}
    async with running_gateway(pg_dsn, **conf) as gw:
        client = ThriftClient(gw.thrift_port)
        try:
            await client("create_database", hms.Database(name="db", parameters={}))
            outside = _canary(tmp_path / "elsewhere")
            await client("create_table", _table("db", "t", str(outside.parent)))
            await client("drop_table", "db", "t", True)
            assert not outside.exists()
        finally:
            client.close()
