"""Random runs of an ACID table's data lifecycle on Spark, every read checked against a model after
every step.

A seed draws steps over a transactional table of two partitions: appends and INSERT OVERWRITEs through
the write job (`txn_write`, its locks and staging included; into one partition, or both by dynamic
partitioning); slow writers that open a txn, take a write
id and write their delta, then commit or abort steps later; major and minor compactions (requested, then
run by the Spark worker, half of them with another step taken while the worker's output is written and its
txn still open); Cleaner rounds; and readers that take a snapshot and keep it, most inside a txn, some
outside any. After each step a new snapshot's read (`plan_table_read` + `table_frame`, the read job's
path) must give the model's rows, and every reader in a txn must read, with the snapshot it took, the rows
it read when it took it: whatever committed, was compacted or was cleaned since. A snapshot outside any
txn is not protected from the Cleaner: it reads those rows or fails with NotEnoughHistory, never fewer.
At the end every txn ends, each partition is compacted (major) and cleaned: the rows are unchanged and
only the new base is left.

The model knows no directory: a partition's rows under a snapshot are those of its committed writes,
in write-id order, from its last INSERT OVERWRITE on (Hive's rule: a base of write id N replaces every
write id up to N, also one that commits after it). Slow writers take no lock, so an overwrite can hide
one of them: the model says so too.

`make test` runs SHORT_SEED for SHORT_STEPS steps. The soak (`make test-bench`, marker `soak`) runs
ACID_LIFECYCLE_SOAK_SEEDS seeds (default 10) of ACID_LIFECYCLE_SOAK_STEPS steps (default 40) from
ACID_LIFECYCLE_SOAK_FIRST_SEED (default 1000). A failure prints the seed and the steps so far.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import random
from pathlib import Path
from typing import Any, Callable, Iterator

import grpc
import pytest

from pipeline.acid import NotEnoughHistory, parse_acid_dir, visible_files
from pipeline.client import ClientConfig, GatewayClient, Snapshot, close_process_clients
from pipeline.compactor import run_one
from pipeline.snapshot_read import plan_table_read, table_frame
from pipeline.txn_write import txn_write
from protos.metastore.v1 import compaction_pb2 as cpb
from protos.metastore.v1 import compaction_pb2_grpc
from tests.spark.conftest import create_table
from tests.spark.thread_gateway import ThreadGateway

pytestmark = pytest.mark.spark

SHORT_SEED = 7
SHORT_STEPS = 10
SOAK_SEEDS = int(os.environ.get("ACID_LIFECYCLE_SOAK_SEEDS", "10"))
SOAK_STEPS = int(os.environ.get("ACID_LIFECYCLE_SOAK_STEPS", "40"))
SOAK_FIRST_SEED = int(os.environ.get("ACID_LIFECYCLE_SOAK_FIRST_SEED", "1000"))

DB, TABLE = "lake", "events"
NAME = f"{DB}.{TABLE}"
PARTS = ("a", "b")
Row = tuple[int, str, str]  # id, payload, ds


@dataclasses.dataclass
class Write:
    txn_id: int
    write_id: int
    part: str
    overwrite: bool
    rows: list[Row]
    state: str = "open"  # open, committed, aborted


@dataclasses.dataclass
class Reader:
    txn_id: int  # 0: a snapshot taken outside any txn, which no txn protects from the Cleaner
    snapshot: Snapshot
    expected: list[Row]


@dataclasses.dataclass
class Model:
    writes: list[Write] = dataclasses.field(default_factory=list)

    def rows(self) -> list[Row]:
        """What a new snapshot reads: per partition, its committed writes in write-id order from the last
        overwrite on."""
        out: list[Row] = []
        for part in PARTS:
            done = sorted((w for w in self.writes if w.part == part and w.state == "committed"),
                          key=lambda w: w.write_id)
            start = max((i for i, w in enumerate(done) if w.overwrite), default=0)
            out += [row for w in done[start:] for row in w.rows]
        return sorted(out)


@dataclasses.dataclass
class Lifecycle:
    gw: ThreadGateway
    client: GatewayClient
    comp: compaction_pb2_grpc.CompactorStub
    spark: Any
    config: ClientConfig
    rnd: random.Random
    locations: dict[str, Path] = dataclasses.field(default_factory=dict)
    model: Model = dataclasses.field(default_factory=Model)
    readers: list[Reader] = dataclasses.field(default_factory=list)
    log: list[str] = dataclasses.field(default_factory=list)
    ids: Iterator[int] = dataclasses.field(default_factory=lambda: itertools.count(1))
    refused: int = 0  # reads of a snapshot outside any txn refused with NotEnoughHistory

    # -- steps ------------------------------------------------------------------------------------------

    def _new_rows(self, part: str) -> list[Row]:
        return [(next(self.ids), f"r{self.rnd.randrange(10**6)}", part) for _ in range(self.rnd.randint(1, 4))]

    def write_job(self, parts: tuple[str, ...], overwrite: bool) -> None:
        """One write job: into one partition named statically, or into several by the rows' `ds` (dynamic
        partitions: one txn, one write id, a directory per partition; an overwrite replaces those only)."""
        rows = {part: self._new_rows(part) for part in parts}
        mode = "overwrite" if overwrite else "append"
        if len(parts) == 1:
            df = self.spark.createDataFrame([r[:2] for r in rows[parts[0]]], "id long, payload string")
            result = txn_write(df, DB, TABLE, config=self.config, mode=mode, partition={"ds": parts[0]})
        else:
            df = self.spark.createDataFrame([r for part in parts for r in rows[part]],
                                            "id long, payload string, ds string")
            result = txn_write(df, DB, TABLE, config=self.config, mode=mode)
        for part in parts:
            self.model.writes.append(Write(result.txn_id, result.write_id, part, overwrite, rows[part], "committed"))
        self.log.append(f"{mode} {'/'.join(parts)}: txn {result.txn_id} write id {result.write_id} "
                        f"{[os.path.relpath(d, self.locations[parts[0]].parent) for d in result.delta_dirs]}")

    def slow_open(self, part: str) -> None:
        txn = self.client.open_txn()
        write_id = self.client.allocate_write_id(txn, DB, TABLE)
        rows = self._new_rows(part)
        delta = self.locations[part] / f"delta_{write_id:07d}_{write_id:07d}"
        self.spark.createDataFrame([r[:2] for r in rows], "id long, payload string").coalesce(1) \
            .write.parquet(f"file://{delta}")
        self.model.writes.append(Write(txn, write_id, part, False, rows))
        self.log.append(f"slow writer into {part}: txn {txn} write id {write_id}, left open")

    def slow_end(self, write: Write, commit: bool) -> None:
        if commit:
            self.client.commit_txn(write.txn_id)
        else:
            self.client.abort_txn(write.txn_id)
        write.state = "committed" if commit else "aborted"
        self.log.append(f"slow writer txn {write.txn_id} (write id {write.write_id}) {write.state}")

    def compact(self, part: str, major: bool, *, meanwhile: bool = False) -> str:
        """Queue a compaction and run the worker on it; `meanwhile`: one other step (and the checks) once
        the worker has written its output, before it completes (its txn still open)."""
        queued = self.comp.Compact(cpb.CompactRequest(db_name=DB, table_name=TABLE, partition_name=f"ds={part}",
                                                      type=cpb.MAJOR if major else cpb.MINOR))

        def during(stage: str) -> None:
            if stage == "written" and meanwhile:
                self.log.append(f"  while the compaction of {part} has written its output:")
                self.step(compaction=False)
                self.check()

        run = run_one(self.spark, self.config, worker_id="lifecycle", on_stage=during)
        assert run is not None and run.id == queued.id, run
        assert run.outcome in ("compacted", "refused"), run
        self.log.append(f"{'major' if major else 'minor'} compaction of {part}: {run.outcome} "
                        f"{run.inputs} -> {run.output_dir and Path(run.output_dir).name} {run.error or ''}")
        return run.outcome

    def clean(self) -> None:
        cleaned = self.gw.run(self.gw.compactor.clean_once())
        self.log.append(f"cleaner: {cleaned} cleaned; on disk {self.dirs()}")

    def reader_open(self, in_txn: bool) -> None:
        txn = self.client.open_txn() if in_txn else 0
        snapshot = self.client.snapshot([NAME], txn)
        self.readers.append(Reader(txn, snapshot, self.model.rows()))
        self.log.append(f"reader {f'txn {txn}' if txn else 'outside any txn'} took its snapshot "
                        f"({len(self.model.rows())} rows)")

    def reader_close(self, reader: Reader) -> None:
        if reader.txn_id:
            self.client.commit_txn(reader.txn_id)
        self.readers.remove(reader)
        self.log.append(f"reader {f'txn {reader.txn_id}' if reader.txn_id else 'outside any txn'} ended")

    # -- checks -----------------------------------------------------------------------------------------

    def read(self, snapshot: Snapshot | None = None) -> list[Row]:
        plan = plan_table_read(self.client, NAME, snapshot=snapshot)
        return sorted((int(r["id"]), str(r["payload"]), str(r["ds"])) for r in table_frame(self.spark, plan).collect())

    def check(self) -> None:
        assert self.read() == self.model.rows(), "a new snapshot"
        for reader in self.readers:
            if reader.txn_id:
                assert self.read(reader.snapshot) == reader.expected, f"the snapshot reader txn {reader.txn_id} kept"
                continue
            try:  # unprotected: the rows it read, or NotEnoughHistory once what it reads was cleaned; never fewer
                assert self.read(reader.snapshot) == reader.expected, "a snapshot taken outside any txn"
            except NotEnoughHistory as exc:
                self.refused += 1
                self.log.append(f"  the snapshot taken outside any txn is refused: {exc.base} was cleaned under it")

    def dirs(self) -> dict[str, list[str]]:
        return {part: sorted(n for n in os.listdir(loc) if not n.startswith((".", "_")))
                for part, loc in self.locations.items()}

    # -- a run ------------------------------------------------------------------------------------------

    def _parts(self) -> tuple[str, ...]:
        """The partitions a write job writes: one (static) mostly, else both (dynamic)."""
        return PARTS if self.rnd.random() < 0.25 else (self.rnd.choice(PARTS),)

    def step(self, *, compaction: bool = True) -> None:
        open_writes = [w for w in self.model.writes if w.state == "open"]
        choices: list[tuple[int, Callable[[], Any]]] = [
            (4, lambda: self.write_job(self._parts(), overwrite=False)),
            (1, lambda: self.write_job(self._parts(), overwrite=True)),
            (2, self.clean),
        ]
        if compaction:
            choices.append((3, lambda: self.compact(self.rnd.choice(PARTS), major=self.rnd.random() < 0.5,
                                                    meanwhile=self.rnd.random() < 0.5)))
        if len(open_writes) < 3:
            choices.append((2, lambda: self.slow_open(self.rnd.choice(PARTS))))
        if open_writes:
            choices.append((3, lambda: self.slow_end(self.rnd.choice(open_writes), commit=self.rnd.random() < 0.75)))
        if len(self.readers) < 3:
            choices.append((2, lambda: self.reader_open(in_txn=self.rnd.random() < 0.6)))
        if self.readers:
            choices.append((2, lambda: self.reader_close(self.rnd.choice(self.readers))))
        weights, actions = zip(*choices)
        self.rnd.choices(actions, weights)[0]()

    def finish(self) -> None:
        """End every txn, then compact each partition and clean: the same rows, and only the new base left."""
        for write in [w for w in self.model.writes if w.state == "open"]:
            self.slow_end(write, commit=True)
        for reader in list(self.readers):
            self.reader_close(reader)
        self.check()
        compacted = [part for part in PARTS if self.compact(part, major=True) == "compacted"]
        self.clean()
        self.check()
        snapshot = self.client.snapshot([NAME])
        write_ids, txns = snapshot.table(NAME).write_ids(), snapshot.txn_list()
        for part in compacted:
            names = self.dirs()[part]
            assert len(names) == 1 and parse_acid_dir(names[0]) is not None, (part, names)
            used = {Path(path).relative_to(self.locations[part]).parts[0]
                    for path, _ in visible_files(str(self.locations[part]), write_ids, txns)}
            assert used == set(names), (part, names, used)


@pytest.fixture
def gateway_in_thread(pg_dsn: str, tmp_path: Path) -> Iterator[ThreadGateway]:
    gw = ThreadGateway(pg_dsn, data_roots=str(tmp_path))
    try:
        yield gw
    finally:
        close_process_clients()  # the write job's channels, before the gateway stops
        gw.stop()


def run_lifecycle(seed: int, steps: int, gw: ThreadGateway, spark: Any, location: Path) -> None:
    config = ClientConfig(gw.address, unavailable_retries=2, backoff_initial_s=0.05)
    channel = grpc.insecure_channel(gw.address)
    try:
        with GatewayClient(config) as client:
            create_table(client, location)
            run = Lifecycle(gw, client, compaction_pb2_grpc.CompactorStub(channel), spark, config, random.Random(seed))
            run.locations = {part: location / f"ds={part}" for part in PARTS}
            run.write_job(PARTS, overwrite=False)  # both partitions exist before the slow writers, which add none
            plan = plan_table_read(client, NAME)
            assert {p.values[0]: Path(p.location) for p in plan.locations} == run.locations
            try:
                run.check()
                for _ in range(steps):
                    run.step()
                    run.check()
                run.finish()
                print(f"seed {seed}: {steps} steps, {len(run.model.writes)} writes, {run.refused} reads refused "
                      f"(NotEnoughHistory)")
            except BaseException as exc:
                raise AssertionError(f"seed {seed}, after these steps:\n" + "\n".join(run.log)
                                     + f"\non disk: {run.dirs()}") from exc
    finally:
        channel.close()


def test_a_random_acid_lifecycle_reads_as_its_model(spark: Any, gateway_in_thread: ThreadGateway,
                                                     tmp_path: Path) -> None:
    run_lifecycle(SHORT_SEED, SHORT_STEPS, gateway_in_thread, spark, tmp_path / "events")


@pytest.mark.soak
@pytest.mark.timeout(0)
@pytest.mark.parametrize("seed", range(SOAK_FIRST_SEED, SOAK_FIRST_SEED + SOAK_SEEDS))
def test_random_acid_lifecycles_read_as_their_models(spark: Any, gateway_in_thread: ThreadGateway, tmp_path: Path,
                                                     seed: int) -> None:
    run_lifecycle(seed, SOAK_STEPS, gateway_in_thread, spark, tmp_path / "events")
