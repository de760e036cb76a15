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

The rows themselves: `read_table(spark, "db.table", filter=..., snapshot=...)` answers a DataFrame
of the table's columns and its partition keys (typed as the keys are), over the partitions the
filter selects (one GetPartitionsByFilter under the snapshot: pruning happens in the gateway) and,
in each, exactly the files that snapshot may read (`visible_files`: the usable base, the deltas
above it). The file list is fixed when `read_table` returns, so however the DataFrame is computed
later it reads that snapshot's files; to keep a compactor's Cleaner from deleting them meanwhile,
read under a txn that stays open until the DataFrame is consumed (the Cleaner waits for every txn
that could read them, hive-reference §7.3):

    with client.transaction() as txn:
        txn.lock(Statement.SELECT, "lake", "events")          # a drop waits for the read
        snap = txn.snapshot(["lake.events"])
        rows = read_table(spark, "lake.events", filter="ds >= '2024-01-02'", snapshot=snap).collect()

From a shell: `python -m pipeline read DB TABLE [--filter F] [--where SQL] [--limit N | --output PATH]`.
"""

from __future__ import annotations

import functools
import json
import math
import os
import sys
import time
from dataclasses import dataclass, field
from typing import IO, Any, Iterable, Iterator, Sequence

from pipeline.acid import local_path, visible_files
from pipeline.client import (ClientConfig, GatewayClient, Snapshot, TableSnapshot, Transaction, process_client,
                             process_stats)
from pipeline.formats import StorageFormat, format_from_files, format_of
from pipeline.schema import spark_type, table_schema
from protos.metastore.v1 import catalog_pb2 as pb
from hive.lock_rules import Statement
from hive.names import DEFAULT_PARTITION_NAME
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
    names = partition_names(client, definition, read, filter)
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


def _require_keys_for(definition: pb.Table, filter: str | None) -> None:
    if filter and not definition.partition_keys:
        raise ValueError(f"{definition.db_name}.{definition.name} has no partition keys: a partition filter "
                         f"({filter!r}) cannot apply to it")


def partition_names(client: GatewayClient, definition: pb.Table, read: pb.ReadContext,
                    filter: str | None) -> list[str]:
    """The names of the partitions a read covers: those matching `filter` (pruned by the gateway
    with one GetPartitionsByFilter under the snapshot), or all."""
    _require_keys_for(definition, filter)
    if filter:
        return [p.name for p in client.get_partitions_by_filter(definition.db_name, definition.name, filter, read)]
    return client.list_partition_names(definition.db_name, definition.name, read)


def selected_partitions(client: GatewayClient, definition: pb.Table, read: pb.ReadContext,
                        filter: str | None) -> list[pb.Partition]:
    """The partitions themselves (one call with a filter; names then batches without)."""
    _require_keys_for(definition, filter)
    db, table = definition.db_name, definition.name
    if filter:
        return client.get_partitions_by_filter(db, table, filter, read)
    return list(client.get_partitions_by_names(db, table, client.list_partition_names(db, table, read), read))


# -- the rows: read_table ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PartitionFiles:
    """One location a read covers and the files the snapshot reads there."""

    name: str                  # the partition name ('' for an unpartitioned table)
    values: tuple[str, ...]
    location: str              # a local path
    format: StorageFormat | None  # None only when there are no files
    files: tuple[str, ...]
    bytes: int


@dataclass(frozen=True, slots=True)
class TableRead:
    """What `read_table` reads: the table as the snapshot sees it and the files per location."""

    table: pb.Table
    snapshot: TableSnapshot
    valid_txn_list: str
    locations: tuple[PartitionFiles, ...]

    @property
    def files(self) -> int:
        return sum(len(p.files) for p in self.locations)

    @property
    def bytes(self) -> int:
        return sum(p.bytes for p in self.locations)

    def summary(self) -> dict[str, Any]:
        return {"table": self.snapshot.full_name, "valid_write_id_list": self.snapshot.valid_write_id_list,
                "valid_txn_list": self.valid_txn_list, "partitions": len(self.locations) if self.table.partition_keys
                else 0, "files": self.files, "bytes": self.bytes}


def _split_name(name: str) -> tuple[str, str]:
    db, dot, table = name.partition(".")
    if not dot or not db or not table or "." in table:
        raise ValueError(f"table name must be 'db.table', got {name!r}")
    return db, table


def _files_of(location: str, name: str, values: tuple[str, ...], declared: pb.StorageDescriptor,
              table_sd: pb.StorageDescriptor, write_ids: ValidWriteIdList | None,
              txns: ValidTxnList | None) -> PartitionFiles:
    found = visible_files(location, write_ids, txns)
    paths = tuple(path for path, _ in found)
    try:
        fmt = format_of(declared) or format_of(table_sd) or format_from_files(paths)
    except ValueError as exc:
        raise ValueError(f"partition {name or '(table)'}: {exc}") from exc
    if fmt is None and paths:
        raise ValueError(f"partition {name or '(table)'} records no file format and its files' names do not say "
                         f"(e.g. {paths[0]}): record one with AlterPartitions (MapredParquetInputFormat or "
                         f"OrcInputFormat)")
    return PartitionFiles(name, values, local_path(location), fmt, paths, sum(size for _, size in found))


def plan_table_read(client: GatewayClient, name: str, filter: str | None = None,
                    snapshot: Snapshot | None = None) -> TableRead:
    """The partitions and files a read of `name` ('db.table') covers under `snapshot` (None: a
    new snapshot, taken outside any txn). `NotEnoughHistory` when a partition was compacted and
    cleaned since `snapshot` was taken (no open txn held it): take a new snapshot."""
    db, table = _split_name(name)
    snap = snapshot if snapshot is not None else client.snapshot([name])
    try:
        table_snap = snap.table(name)
    except KeyError as exc:
        raise ValueError(str(exc.args[0])) from None
    read = table_snap.read_context()
    definition = client.get_table(db, table, read)
    write_ids = table_snap.write_ids() if definition.transactional else None
    txns = snap.txn_list() if definition.transactional else None
    if not definition.partition_keys:
        _require_keys_for(definition, filter)
        only = _files_of(definition.sd.location, "", (), definition.sd, definition.sd, write_ids, txns)
        return TableRead(definition, table_snap, snap.valid_txn_list, (only,))
    locations = tuple(_files_of(p.sd.location, p.name, tuple(p.values), p.sd, definition.sd, write_ids, txns)
                      for p in selected_partitions(client, definition, read, filter))
    return TableRead(definition, table_snap, snap.valid_txn_list, locations)


def read_table(spark: Any, name: str, filter: str | None = None, snapshot: Snapshot | None = None, *,
               config: ClientConfig | None = None) -> Any:
    """A DataFrame of `name` ('db.table') under `snapshot` (None: a new one): the table's columns
    then its partition keys, over the partitions `filter` (a Hive partition filter, e.g.
    "ds >= '2024-01-01' AND hr IN (1, 2)") selects and the files the snapshot may read there."""
    client = process_client(config or ClientConfig.from_spark(spark))
    return table_frame(spark, plan_table_read(client, name, filter, snapshot))


def _uri(path: str) -> str:
    return "file://" + os.path.abspath(path)


def table_frame(spark: Any, plan: TableRead) -> Any:
    """The DataFrame over a planned read. Partitions at their usual place (`<table>/<name>`) are
    read in one scan per format, their key values parsed from the directory names by Spark (which
    unescapes Hive's `%XX` and reads `__HIVE_DEFAULT_PARTITION__` as null) and typed by the schema
    given; a partition with a location of its own is a scan of its own with its values as
    constants. Then one union, in the table's column order."""
    from pyspark.sql import functions as F

    table = plan.table
    schema = table_schema(table)
    data_schema = table_schema(table, with_keys=False)
    root = os.path.normpath(local_path(table.sd.location))
    together: dict[str, list[str]] = {}
    frames = []
    for p in plan.locations:
        if not p.files or p.format is None:
            continue
        if not table.partition_keys:
            frames.append(spark.read.schema(data_schema).format(p.format.name).load([_uri(f) for f in p.files]))
        elif os.path.normpath(p.location) == os.path.join(root, p.name):
            together.setdefault(p.format.name, []).extend(_uri(f) for f in p.files)
        else:
            frame = spark.read.schema(data_schema).format(p.format.name).load([_uri(f) for f in p.files])
            for key, value in zip(table.partition_keys, p.values):
                literal = F.lit(None if value == DEFAULT_PARTITION_NAME else value)
                frame = frame.withColumn(key.name.lower(), literal.cast(spark_type(key.type)))
            frames.append(frame)
    for fmt, files in sorted(together.items()):
        frames.append(spark.read.schema(schema).option("basePath", _uri(root)).format(fmt).load(files))
    if not frames:
        return spark.createDataFrame([], schema)
    columns = schema.fieldNames()
    return functools.reduce(lambda a, b: a.unionByName(b), (f.select(*columns) for f in frames))


def read_rows(spark: Any, db: str, table: str, *, config: ClientConfig | None = None, filter: str | None = None,
              where: str | None = None, columns: Sequence[str] = (), limit: int = 20, output: str | None = None,
              output_format: str = "parquet", lock: bool = True, out: IO[str] | None = None) -> dict[str, Any]:
    """`python -m pipeline read`: under a read txn (SHARED_READ lock, held until done), the rows of
    the table, narrowed by `filter` (partitions, in the gateway), `where` (a Spark SQL condition on
    the rows) and `columns`; written to `output` (a new directory, `output_format`), or printed to
    `out` as JSON lines (at most `limit`; 0: all). Answers a summary of what was read."""
    config = config or ClientConfig.from_spark(spark)
    client = process_client(config)
    out = out or sys.stdout
    name = f"{db}.{table}"
    with client.transaction() as txn:
        if lock:
            txn.lock(Statement.SELECT, db, table)
        plan = plan_table_read(client, name, filter, txn.snapshot([name]))
        frame = table_frame(spark, plan)
        if where:
            frame = frame.where(where)
        if columns:
            frame = frame.select(*columns)
        summary = {**plan.summary(), "txn_id": txn.id}
        if output:
            frame.write.format(output_format).mode("errorifexists").save(output)
            summary["output"] = output
        else:
            rows = frame.limit(limit).collect() if limit > 0 else frame.collect()
            for row in rows:
                out.write(json.dumps(row.asDict(recursive=True), default=str, sort_keys=False) + "\n")
            summary["rows_printed"] = len(rows)
        txn.check()  # an aborted txn no longer protected the files read
    return summary
