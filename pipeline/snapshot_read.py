"""Snapshot read job: per partition of a table, the files and bytes a pinned snapshot reads.

    spark-submit --conf spark.metastore.gateway.address=HOST:PORT -m pipeline snapshot-read DB TABLE
    python -m pipeline snapshot-read DB TABLE --address HOST:PORT --master 'local[2]'

The driver opens a read txn (heartbeated), takes a SHARED_READ lock on the table under it (Hive's
lock for a SELECT: the table cannot be dropped meanwhile; writers are not blocked), pins the
snapshot (ValidTxnList, then the table's ValidWriteIdList and table id) and lists the partition
names under it. The names are split into Spark partitions; each task gets its executor process's
gateway client (`process_client`), fetches its partitions with GetPartitionsByNames in batches
(several in flight) under the same `ReadContext`, and for each partition lists what that snapshot
may read under its location (`pipeline.acid.visible_files`: delta dirs of write ids that are not
committed in the snapshot are skipped). The txn stays open until the result is materialised, so the
versions the snapshot needs cannot be garbage-collected under it; then it commits (a read txn
changes nothing) and releases the lock.

Whatever other jobs commit meanwhile, every executor answers for the same snapshot: the gateway
serves each read from the versions committed in that ValidWriteIdList (from its cache only when
the cache provably holds them, otherwise from PostgreSQL).
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Sequence

from pipeline.acid import visible_files
from pipeline.client import ClientConfig, GatewayClient, TableSnapshot, Transaction, process_client, process_stats
from protos.metastore.v1 import catalog_pb2 as pb
from hive.lock_rules import Statement
from hive.writeids import ValidTxnList, ValidWriteIdList

SCHEMA = ("name string, location string, write_id long, parameters string, files long, bytes long, "
          "fetch_pid int")
"""One row per partition. `parameters` is the partition's parameters as sorted JSON (comparable);
`fetch_pid` the executor process that fetched it (shows the per-process channel reuse)."""


@dataclass(frozen=True, slots=True)
class PartitionUsage:
    name: str
    location: str
    write_id: int
    parameters: str
    files: int
    bytes: int
    fetch_pid: int = 0

    def key(self) -> tuple[str, str, int, str, int, int]:
        """Everything but the executor pid: what two reads of one snapshot must agree on."""
        return (self.name, self.location, self.write_id, self.parameters, self.files, self.bytes)


def usage_of(partition: pb.Partition, write_ids: ValidWriteIdList | None, txns: ValidTxnList | None,
             pid: int = 0) -> PartitionUsage:
    """The row for one partition as read with the given snapshot."""
    found = visible_files(partition.sd.location, write_ids, txns)
    return PartitionUsage(partition.name, partition.sd.location, int(partition.write_id),
                          json.dumps(dict(partition.parameters), sort_keys=True), len(found),
                          sum(size for _, size in found), pid)


@dataclass(frozen=True, slots=True)
class _Task:
    """What each Spark task needs, pickled once into the closure."""

    config: ClientConfig
    table: TableSnapshot
    valid_txn_list: str
    transactional: bool
    batch_size: int
    in_flight: int


def _fetch_and_measure(task: _Task, names: Iterable[str]) -> Iterator[tuple[Any, ...]]:
    """Executor side: one Spark partition's names -> rows, through this process's client."""
    names = list(names)
    if names:
        yield from _measure(process_client(task.config), task, names, process_stats()["pid"])


def _measure(client: GatewayClient, task: _Task, names: Sequence[str], pid: int) -> Iterator[tuple[Any, ...]]:
    write_ids = task.table.write_ids() if task.transactional else None
    txns = ValidTxnList.parse(task.valid_txn_list) if task.transactional else None
    for p in client.get_partitions_by_names(task.table.db_name, task.table.table_name, names,
                                            task.table.read_context(), batch_size=task.batch_size,
                                            in_flight=task.in_flight):
        u = usage_of(p, write_ids, txns, pid)
        yield (u.name, u.location, u.write_id, u.parameters, u.files, u.bytes, u.fetch_pid)


@dataclass
class SnapshotReadResult:
    snapshot: TableSnapshot
    valid_txn_list: str
    txn_id: int
    rows: list[PartitionUsage]
    timings_s: dict[str, float] = field(default_factory=dict)

    @property
    def files(self) -> int:
        return sum(r.files for r in self.rows)

    @property
    def bytes(self) -> int:
        return sum(r.bytes for r in self.rows)

    def by_name(self) -> dict[str, PartitionUsage]:
        return {r.name: r for r in self.rows}


def plan_slices(count: int, parallelism: int, batch_size: int, in_flight: int) -> int:
    """Spark partitions for `count` names: at least one per core, and no task with more than
    four windows of batches (so a slow task does not hold up the job)."""
    per_window = batch_size * in_flight
    return max(1, min(count, max(parallelism, math.ceil(count / (4 * per_window)))))


def snapshot_read(
    spark: Any, db: str, table: str, *, config: ClientConfig | None = None, txn: Transaction | None = None,
    num_slices: int | None = None, batch_size: int | None = None, in_flight: int | None = None,
    lock: bool = True, output: str | None = None, filter: str | None = None,
) -> SnapshotReadResult:
    """Run the job. With `txn`, read under that open txn (its snapshot; the caller commits it);
    otherwise open a read txn here and commit it after. With `output`, also write the rows as
    Parquet there (inside the txn). With `filter` (a Hive partition filter, e.g.
    `ds >= '2024-01-01'`), only the matching partitions: the driver selects them with one
    GetPartitionsByFilter under the snapshot and the executors fetch those names as usual."""
    config = config or ClientConfig.from_spark(spark)
    client = process_client(config)
    if txn is not None:
        return _run(spark, client, txn, db, table, config, num_slices, batch_size, in_flight, lock, output, filter)
    with client.transaction() as own:
        return _run(spark, client, own, db, table, config, num_slices, batch_size, in_flight, lock, output, filter)


def _run(spark: Any, client: GatewayClient, txn: Transaction, db: str, table: str, config: ClientConfig,
         num_slices: int | None, batch_size: int | None, in_flight: int | None, lock: bool,
         output: str | None, filter: str | None) -> SnapshotReadResult:
    timings: dict[str, float] = {}
    started = time.perf_counter()
    if lock:
        txn.lock(Statement.SELECT, db, table)
    snap = txn.snapshot([f"{db}.{table}"])
    table_snap = snap.tables[0]
    read = table_snap.read_context()
    definition = client.get_table(db, table, read)
    if filter:
        names = [p.name for p in client.get_partitions_by_filter(db, table, filter, read)]
    else:
        names = client.list_partition_names(db, table, read)
    timings["driver_s"] = time.perf_counter() - started
    task = _Task(config, table_snap, snap.valid_txn_list, definition.transactional,
                 batch_size or config.batch_size, in_flight or config.in_flight)
    sc = spark.sparkContext
    slices = num_slices or plan_slices(len(names), sc.defaultParallelism, task.batch_size, task.in_flight)
    job_started = time.perf_counter()
    rows: list[PartitionUsage] = []
    if names:
        rdd = sc.parallelize(names, slices).mapPartitions(lambda it: _fetch_and_measure(task, it))
        if output:  # a DataFrame only when there is something to write: SQL planning costs seconds cold
            frame = spark.createDataFrame(rdd, SCHEMA).cache()
            frame.write.mode("overwrite").parquet(output)
            collected = frame.collect()
            frame.unpersist()
        else:
            collected = rdd.collect()
        rows = [PartitionUsage(*r) for r in collected]
    txn.check()  # a txn aborted under the job (missed heartbeats) no longer protects its snapshot
    timings["executors_s"] = time.perf_counter() - job_started
    timings["total_s"] = time.perf_counter() - started
    return SnapshotReadResult(table_snap, snap.valid_txn_list, txn.id, rows, timings)


def read_on_driver(client: GatewayClient, table: TableSnapshot, valid_txn_list: str, names: Sequence[str],
                   transactional: bool = True) -> list[PartitionUsage]:
    """The same rows computed in this process (a check, and what a small table needs no Spark for)."""
    task = _Task(client.config, table, valid_txn_list, transactional, client.config.batch_size,
                 client.config.in_flight)
    return [PartitionUsage(*r) for r in _measure(client, task, names, 0)]
