"""The snapshot read job under a concurrent writer: what the executors compute equals what the
database holds for the pinned snapshot, however much is committed while they run."""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence

import pytest

pytest.importorskip("pyspark", reason="pyspark is in the dev extra: pip install -e '.[dev]'")  # the jobs import it

from pipeline.acid import delta_dir_name, local_path  # noqa: E402
from pipeline.client import ADDRESS_CONF, ClientConfig, GatewayClient, TableSnapshot  # noqa: E402
from pipeline.snapshot_read import read_on_driver, snapshot_read  # noqa: E402
from protos.metastore.v1 import catalog_pb2 as pb  # noqa: E402
from tests.spark.conftest import create_table, start_gateway  # noqa: E402

pytestmark = pytest.mark.spark
DB, TABLE = "lake", "events"


@dataclass
class Writer:
    """Commits rounds of changes to lake.events like another job would: new partitions, altered
    old ones (parameters, and for some a new location), new delta files in old partitions."""

    client: GatewayClient
    root: Path
    rounds: int = 0
    commit_times: list[float] = field(default_factory=list)

    def commit_round(self, add: Sequence[str], alter: Sequence[str] = (), relocate: Sequence[str] = (),
                     append: Sequence[str] = ()) -> None:
        with self.client.transaction() as txn:
            w = txn.allocate_write_id(DB, TABLE)
            read = txn.table_snapshot(DB, TABLE).read_context()
            added = self.client.add_partitions(DB, TABLE, [pb.Partition(values=[v]) for v in add], txn_id=txn.id)
            old = {p.values[0]: p for p in self.client.get_partitions_by_names(
                DB, TABLE, [f"ds={v}" for v in {*alter, *relocate, *append}], read)}
            changed = []
            for v in {*alter, *relocate}:
                p = pb.Partition(values=[v], sd=old[v].sd, parameters={**old[v].parameters,
                                                                       "tag": f"round{self.rounds}"})
                if v in relocate:
                    p.sd.location = f"file://{self.root}/relocated/r{self.rounds}/ds={v}"
                changed.append(p)
            changed_now = {p.values[0]: p for p in self.client.alter_partitions(DB, TABLE, changed, txn_id=txn.id)}
            for p in [*added, *(changed_now.get(v) or old[v] for v in append)]:
                self._write_files(p.sd.location, w, count=1 + len(p.name) % 3)
        self.rounds += 1
        self.commit_times.append(time.monotonic())

    @staticmethod
    def _write_files(location: str, write_id: int, count: int) -> None:
        delta = Path(local_path(location)) / delta_dir_name(write_id)
        delta.mkdir(parents=True, exist_ok=True)
        for i in range(count):
            (delta / f"part-{i:05d}.parquet").write_bytes(os.urandom(100 + 37 * i + write_id))
        (delta / "_SUCCESS").write_bytes(b"")


@pytest.fixture
def no_cache_gateway(pg_dsn: str, gateway_address: str) -> Iterator[str]:
    """A second gateway on the same database with its cache off: every read from PostgreSQL."""
    proc = start_gateway(pg_dsn, "metastore.gateway.cache.enabled=false")
    try:
        yield proc.wait_serving()
    finally:
        proc.stop()


def _read(address: str, table: TableSnapshot, valid_txn_list: str, names: list[str]) -> list[tuple[Any, ...]]:
    with GatewayClient(ClientConfig(address, batch_size=50)) as c:
        return [r.key() for r in read_on_driver(c, table, valid_txn_list, names)]


def test_snapshot_read_under_a_concurrent_writer_equals_the_pinned_snapshot(
    spark: Any, gateway_address: str, no_cache_gateway: str, tmp_path: Path,
) -> None:
    root = tmp_path / "events"
    config = ClientConfig(gateway_address)
    spark.conf.set(ADDRESS_CONF, gateway_address)  # the job finds the gateway in the Spark conf
    with GatewayClient(config) as client, GatewayClient(config) as writer_client:
        create_table(client, root)
        writer = Writer(writer_client, root)
        writer.commit_round(add=[f"d{i:03d}" for i in range(120)])
        writer.commit_round(add=[], alter=[f"d{i:03d}" for i in range(0, 120, 6)],
                            relocate=[f"d{i:03d}" for i in range(1, 120, 12)],
                            append=[f"d{i:03d}" for i in range(2, 120, 5)])

        with client.transaction() as reader:
            snap = reader.snapshot([f"{DB}.{TABLE}"])
            table = snap.tables[0]
            pinned_names = client.list_partition_names(DB, TABLE, table.read_context())
            pinned = _read(gateway_address, table, snap.valid_txn_list, pinned_names)  # before anyone else writes

            # Another job commits right after the pin, and keeps committing while the executors read.
            counter = iter(range(1000, 10**6))

            def one_round() -> None:
                n = next(counter)
                olds = [f"d{(n * 7 + k) % 120:03d}" for k in range(8)]
                writer.commit_round(add=[f"n{n}_{k}" for k in range(5)], alter=olds[:4], relocate=olds[4:6],
                                    append=olds[2:8])

            one_round()
            stop = threading.Event()
            errors: list[BaseException] = []

            def keep_writing() -> None:
                try:
                    while not stop.is_set():
                        one_round()
                        time.sleep(0.2)  # a steady writer, not a CPU hog on a 2-core machine
                except BaseException as exc:  # reported by the test
                    errors.append(exc)

            thread = threading.Thread(target=keep_writing)
            thread.start()
            job_started = time.monotonic()
            try:
                result = snapshot_read(spark, DB, TABLE, txn=reader, num_slices=6, batch_size=10, in_flight=2)
            finally:
                job_ended = time.monotonic()
                stop.set()
                thread.join(30)
            assert not errors, errors
            assert any(job_started < t < job_ended for t in writer.commit_times), "no commit during the job"

            rows = sorted(r.key() for r in result.rows)
            assert result.snapshot == table and len(rows) == 120
            assert rows == sorted(pinned)
            # The same ReadContext now, after all those commits: through the caching gateway, and from
            # PostgreSQL directly (cache off), with the same file rule.
            assert sorted(_read(gateway_address, table, snap.valid_txn_list, pinned_names)) == rows
            assert sorted(_read(no_cache_gateway, table, snap.valid_txn_list, pinned_names)) == rows
            pids = {r.fetch_pid for r in result.rows}
            assert 0 not in pids and len(pids) < 6  # 6 tasks, reused workers: one channel per worker process

        # What the writer did is real: a new snapshot sees different partitions, tags, locations and files.
        fresh = client.snapshot([f"{DB}.{TABLE}"])
        fresh_names = client.list_partition_names(DB, TABLE, fresh.read_context(DB, TABLE))
        now = {r[0]: r for r in _read(gateway_address, fresh.tables[0], fresh.valid_txn_list, fresh_names)}
        then = {r[0]: r for r in rows}
        assert len(now) == 120 + 5 * (writer.rounds - 2) and writer.rounds >= 4
        changed = [n for n in then if now[n] != then[n]]
        assert len(changed) >= 8
        assert any(now[n][1] != then[n][1] for n in changed)  # relocated
        assert any(now[n][4] > then[n][4] for n in changed)  # more files visible
