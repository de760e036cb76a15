"""The foundation's end-to-end story on the embedded default: 10,000 partitions, a rename that
keeps the table id, a full restart (gateway and PostgreSQL), and the same answers afterwards."""

from __future__ import annotations

import random
from pathlib import Path

from gateway.app import Gateway
from gateway.config import load_settings
from protos.metastore.v1 import catalog_pb2 as pb
from tests.builders import day_hour_values, part_name, partitions, table
from tests.conftest import connect


async def _start_embedded(data_dir: Path) -> Gateway:
    gw = Gateway(load_settings(environ={}, overrides={
        "metastore.gateway.data.dir": str(data_dir), "metastore.gateway.port": 0, "hive.metastore.port": 0,
        "metastore.gateway.embedded.unsafe.fast": "true", "metastore.gateway.shutdown.grace": "2s"}))
    await gw.start()
    return gw


async def test_ten_thousand_partitions_survive_rename_and_restart(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    gw = await _start_embedded(tmp_path / "data")
    client = await connect(f"127.0.0.1:{gw.port}")
    try:
        await client.catalog.CreateDatabase(pb.CreateDatabaseRequest(database=pb.Database(name="lake")))
        created = await client.catalog.CreateTable(pb.CreateTableRequest(table=table("lake", "events")))
        table_id = created.table.table_id
        values = day_hour_values(10_000)
        for start in range(0, len(values), 1000):
            await client.catalog.AddPartitions(pb.AddPartitionsRequest(
                db_name="lake", table_name="events", partitions=partitions(values[start:start + 1000])))

        sample = random.Random(7).sample(values, 100)
        names = [part_name(*v) for v in sample]
        before = await client.catalog.GetPartitionsByNames(
            pb.GetPartitionsByNamesRequest(db_name="lake", table_name="events", names=names))
        assert [p.name for p in before.partitions] == names
        assert all(p.sd.location.endswith("/lake.db/events/" + p.name) for p in before.partitions)

        renamed = await client.catalog.AlterTable(pb.AlterTableRequest(
            db_name="lake", table_name="events", table=table("lake", "events_v2")))
        assert renamed.table.table_id == table_id
    finally:
        await client.channel.close()
        await gw.stop()

    gw = await _start_embedded(tmp_path / "data")  # a new server process would see the same files
    client = await connect(f"127.0.0.1:{gw.port}")
    try:
        got = await client.catalog.GetTable(pb.GetTableRequest(db_name="lake", table_name="events_v2"))
        assert got.table.table_id == table_id
        after = await client.catalog.GetPartitionsByNames(pb.GetPartitionsByNamesRequest(
            db_name="lake", table_name="events_v2", names=names, read=pb.ReadContext(table_id=table_id)))
        assert [p.name for p in after.partitions] == names
        assert [p.sd for p in after.partitions] == [p.sd for p in before.partitions]
        assert {p.table_name for p in after.partitions} == {"events_v2"}
        listed, token = [], ""
        while True:
            page = await client.catalog.ListPartitionNames(pb.ListPartitionNamesRequest(
                db_name="lake", table_name="events_v2", page_size=3000, page_token=token))
            listed += page.names
            token = page.next_page_token
            if not token:
                break
        assert len(listed) == 10_000 and listed == sorted(listed)
    finally:
        await client.channel.close()
        await gw.stop()
