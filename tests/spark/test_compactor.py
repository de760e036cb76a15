"""The compactor end to end: a real gateway (in this process, on its own event loop thread, so the
test can run the Initiator and the Cleaner round by round), a real PostgreSQL and the Spark worker
on the session's local[2] SparkSession.

Test writes go straight through the txn API (open, allocate a write id, Spark writes
`delta_w_w`, commit), which is what the write job does minus its locking and staging.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from pipeline.acid import visible_files
from pipeline.client import ClientConfig, GatewayClient
from pipeline.compactor import run_loop, run_one
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import compaction_pb2 as cpb
from protos.metastore.v1 import compaction_pb2_grpc
from store.compaction_policy import Thresholds
from tests.spark.conftest import create_table
from tests.spark.thread_gateway import ThreadGateway

PART = "2024-01-01"


@dataclasses.dataclass
class Lake:
    gw: ThreadGateway
    client: GatewayClient
    comp: compaction_pb2_grpc.CompactorStub
    spark: Any
    config: ClientConfig
    location: Path = Path()
    seq: int = 0

    def append(self, rows: int, *, commit: bool = True) -> Path:
        """One txn writing `rows` rows as a delta of partition ds=PART; the delta's directory."""
        txn = self.client.open_txn()
        w = self.client.allocate_write_id(txn, "lake", "events")
        if self.location == Path():
            [p] = self.client.add_partitions("lake", "events", [pb.Partition(values=[PART])], txn_id=txn)
            self.location = Path(p.sd.location.removeprefix("file://"))
        data = [(self.seq + i, os.urandom(12).hex()) for i in range(rows)]
        self.seq += rows
        delta = self.location / f"delta_{w:07d}_{w:07d}"
        self.spark.createDataFrame(data, "id long, payload string").coalesce(1).write.parquet(f"file://{delta}")
        if commit:
            self.client.commit_txn(txn)
        else:
            self.client.abort_txn(txn)
        return delta

    def rows(self, txn_id: int = 0) -> list[tuple[int, str]]:
        """Every row a reader with a fresh snapshot (inside txn `txn_id` if given) reads."""
        snap = self.client.snapshot(["lake.events"], txn_id)
        files = visible_files(str(self.location), snap.table("lake.events").write_ids(), snap.txn_list())
        if not files:
            return []
        return sorted((r[0], r[1]) for r in self.spark.read.parquet(*[f"file://{p}" for p, _ in files]).collect())

    def show(self) -> list[cpb.CompactionInfo]:
        return list(self.comp.ShowCompactions(cpb.ShowCompactionsRequest(db_name="lake")).compactions)

    def state(self, compaction_id: int) -> str:
        return next(r.state for r in self.show() if r.id == compaction_id)

    def dirs(self) -> list[str]:
        return sorted(n for n in os.listdir(self.location) if not n.startswith((".", "_")))


@pytest.fixture
def lake(spark: Any, pg_dsn: str, tmp_path: Path) -> Iterator[Lake]:
    gw = ThreadGateway(pg_dsn, data_roots=str(tmp_path))
    config = ClientConfig(gw.address, unavailable_retries=2, backoff_initial_s=0.05)
    client = GatewayClient(config)
    import grpc

    channel = grpc.insecure_channel(gw.address)
    try:
        create_table(client, tmp_path / "events")
        yield Lake(gw, client, compaction_pb2_grpc.CompactorStub(channel), spark, config)
    finally:
        channel.close()
        client.close()
        gw.stop()


def _bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.iterdir() if not f.name.startswith((".", "_")))


def _expected(lake: Lake, aborted: set[str], pct: float, num: int) -> str | None:
    """The test's own reading of Hive's rule over what is on disk (no gateway code)."""
    names = [n for n in lake.dirs() if n not in aborted]
    bases = [n for n in names if n.startswith("base_")]
    deltas = [n for n in names if n.startswith("delta_")]
    assert len(bases) == 1, names  # the Cleaner ran after every compaction
    ratio = sum(_bytes(lake.location / d) for d in deltas) / _bytes(lake.location / bases[0])
    if deltas and ratio > pct:
        return "MAJOR"
    return "MINOR" if len(deltas) > num else None


def _compact_and_clean(lake: Lake, compaction_id: int, aborted: set[str]) -> set[str]:
    """Run the worker on the queued entry and the Cleaner after it, checking what readers see at
    each step; the aborted directories still on disk afterwards."""
    before = lake.rows()
    reader = lake.client.open_txn()  # a reader whose snapshot predates the compaction's commit
    assert lake.rows(reader) == before
    seen: dict[str, Any] = {}

    def during(stage: str) -> None:
        if stage == "written":  # the new directory is on disk, its txn not committed
            seen["state"] = lake.state(compaction_id)
            seen["rows"] = lake.rows()

    run = run_one(lake.spark, lake.config, worker_id="test-w1", on_stage=during)
    assert run is not None and run.outcome == "compacted" and run.id == compaction_id, run
    assert seen == {"state": "working", "rows": before}
    assert lake.state(compaction_id) == "ready for cleaning"
    assert lake.rows() == before and lake.rows(reader) == before
    obsolete = [n for n in lake.dirs() if n in run.inputs or n in aborted]
    assert lake.gw.run(lake.gw.compactor.clean_once()) == 0  # the reader may still read them
    assert all((lake.location / n).exists() for n in obsolete)
    assert lake.rows(reader) == before
    lake.client.commit_txn(reader)
    assert lake.gw.run(lake.gw.compactor.clean_once()) == 1
    assert not any((lake.location / n).exists() for n in obsolete)
    assert lake.state(compaction_id) == "succeeded"
    assert lake.rows() == before
    return {n for n in aborted if (lake.location / n).exists()}


def test_thirty_appends_minor_then_major_with_same_rows_throughout(lake: Lake) -> None:
    lake.append(2000)
    first = lake.comp.Compact(cpb.CompactRequest(db_name="lake", table_name="events", partition_name=f"ds={PART}",
                                                 type=cpb.MAJOR))
    run = run_one(lake.spark, lake.config, worker_id="test-w1")
    assert run is not None and run.outcome == "compacted" and run.rows == 2000, run
    assert lake.gw.run(lake.gw.compactor.clean_once()) == 1 and lake.state(first.id) == "succeeded"
    [base] = lake.dirs()
    base_bytes = _bytes(lake.location / base)

    aborted: set[str] = set()
    decisions: list[tuple[int, str]] = []
    pct = 0.0
    for i in range(1, 31):
        delta = lake.append(100)
        if i == 1:
            # Major once the deltas hold about 16 appends' bytes: a minor (at 11 deltas) comes first.
            pct = 16 * _bytes(delta) / base_bytes
            lake.gw.compactor.settings = dataclasses.replace(lake.gw.compactor.settings,
                                                             thresholds=Thresholds(delta_pct=pct))
        if i == 5:
            aborted.add(lake.append(100, commit=False).name)
        expected = _expected(lake, aborted, pct, 10)
        queued = lake.gw.run(lake.gw.compactor.initiate_once())
        assert queued == (1 if expected else 0), (i, expected, lake.dirs())
        if not expected:
            continue
        entry = lake.show()[-1]
        assert (entry.type, entry.state, entry.partition_name) == (expected, "initiated", f"ds={PART}")
        decisions.append((i, expected))
        aborted = _compact_and_clean(lake, entry.id, aborted)
    print("compactions queued (append, type):", decisions)
    assert decisions[0] == (11, "MINOR"), decisions
    assert "MAJOR" in [t for _, t in decisions[1:]], decisions
    assert not aborted  # the aborted txn's files went with the first cleaning
    assert len(lake.rows()) == 2000 + 30 * 100


def test_major_compaction_keeps_the_rows_of_files_from_before_the_table_was_transactional(lake: Lake,
                                                                                          tmp_path: Path) -> None:
    lake.append(30)
    # An "original" file, as a table altered to transactional=true keeps its old files, named as
    # Hive names them: the format is the one the table records, not the name's.
    old = tmp_path / "old"
    lake.spark.createDataFrame([(-i, "old") for i in range(1, 6)], "id long, payload string").coalesce(1) \
        .write.parquet(f"file://{old}")
    [part] = old.glob("part-*.parquet")
    part.rename(lake.location / "000000_0")
    lake.append(20)
    assert len(lake.rows()) == 55
    queued = lake.comp.Compact(cpb.CompactRequest(db_name="lake", table_name="events", partition_name=f"ds={PART}",
                                                  type=cpb.MAJOR))
    _compact_and_clean(lake, queued.id, set())  # the rows at every step, the inputs removed by the Cleaner
    assert [n[:5] for n in lake.dirs()] == ["base_"] and len(lake.rows()) == 55


class _Killed(BaseException):
    """The worker process dies: no FailCompaction, no more heartbeats."""


def test_killed_worker_leaves_readers_unaffected_and_is_retried(lake: Lake) -> None:
    for _ in range(3):
        lake.append(50)
    before = lake.rows()
    queued = lake.comp.Compact(cpb.CompactRequest(db_name="lake", table_name="events", partition_name=f"ds={PART}",
                                                  type=cpb.MAJOR))

    def die(stage: str) -> None:
        if stage == "written":
            raise _Killed()

    with pytest.raises(_Killed):
        run_one(lake.spark, lake.config, worker_id="doomed-1", heartbeat_interval_s=0.2, on_stage=die)
    [dead] = [n for n in lake.dirs() if n.startswith("base_")]
    assert lake.state(queued.id) == "working" and lake.rows() == before
    lake.gw.compactor.settings = dataclasses.replace(lake.gw.compactor.settings, worker_timeout_s=0.5)
    time.sleep(1.0)
    lake.gw.run(lake.gw.compactor.initiate_once())
    row = next(r for r in lake.show() if r.id == queued.id)
    assert row.state == "initiated" and "timed out" in row.error_message
    assert lake.rows() == before
    run = run_one(lake.spark, lake.config, worker_id="test-w2", heartbeat_interval_s=0.2)
    assert run is not None and run.id == queued.id and run.outcome == "compacted"
    assert lake.gw.run(lake.gw.compactor.clean_once()) == 1
    assert lake.dirs() == [Path(run.output_dir).name] and dead not in lake.dirs()
    assert lake.rows() == before and lake.state(queued.id) == "succeeded"


def test_worker_loop_takes_entries_until_told_to_stop(lake: Lake) -> None:
    for _ in range(2):
        lake.append(20)
    before = lake.rows()
    lake.comp.Compact(cpb.CompactRequest(db_name="lake", table_name="events", partition_name=f"ds={PART}",
                                         type=cpb.MINOR))
    runs: list[Any] = []
    handled = run_loop(lake.spark, lake.config, worker_id="loop-1", poll_interval_s=0.05, max_compactions=1,
                       on_run=runs.append)
    assert handled == 1 and [r.outcome for r in runs] == ["compacted"]
    assert Path(runs[0].output_dir).name == f"delta_0000001_0000002_v{runs[0].txn_id:07d}"
    # Only the minor compaction's own delta is left: another minor one has nothing to do (refused).
    lake.gw.run(lake.gw.compactor.clean_once())
    lake.comp.Compact(cpb.CompactRequest(db_name="lake", table_name="events", partition_name=f"ds={PART}",
                                         type=cpb.MINOR))
    stop = threading.Event()

    def record_and_stop(run: Any) -> None:
        runs.append(run)
        stop.set()

    handled = run_loop(lake.spark, lake.config, worker_id="loop-1", poll_interval_s=0.05, on_run=record_and_stop,
                       stop=stop)
    assert handled == 1 and runs[-1].outcome == "refused" and "at least two" in runs[-1].error
    assert [r.state for r in lake.show()] == ["succeeded", "refused"]
    assert lake.rows() == before
