"""Transactional write job: a partitioned DataFrame into a transactional table, all or nothing.

    spark-submit --conf spark.metastore.gateway.address=HOST:PORT -m pipeline write DB TABLE INPUT

Steps, all inside one txn that a heartbeat keeper holds open:

1. Lock the table as Hive does for an INSERT into a transactional table (SHARED_READ with
   hive.txn.xlock.write=true: other inserts run beside it, a drop or rename waits), bound to the txn.
2. AllocateTableWriteIds: the txn's write id `w` for the table, so the directories can be named.
3. Pin the txn's snapshot; GetTable under it: location, partition keys, `transactional`.
4. Spark writes the DataFrame, partitioned by the table's keys, into a hidden staging directory
   under the table location (`_spark_staging_txn<T>_w<w>/k1=v1/...`). Readers skip hidden entries.
5. For each written partition: the partitions that do not exist in the txn's snapshot are added
   (AddPartitions with `txn_id`, all invisible until commit); then each staging partition directory
   is renamed to `<partition location>/delta_<w>_<w>` (Hive's `delta_%07d_%07d`), which is atomic
   on one filesystem. Existing partitions get a new delta beside their old ones (an insert).
6. Commit. The keeper is stopped first; a txn the gateway aborted meanwhile fails the commit.

If anything fails (a task, the gateway, a hook, a lost txn) the txn is aborted: the partitions it
added disappear with it, and its files are under an aborted write id, which no reader ever reads
(`pipeline.acid.visible_files`). They are also removed here (the staging directory, every
`delta_<w>_<w>` moved, and partition directories this job created that are then empty), unless
`cleanup_on_failure=False`; a driver that dies outright leaves them for the same reason harmless,
and the gateway's reaper aborts its txn after hive.txn.timeout. If the gateway reports the txn
aborted while Spark is still writing, the keeper cancels the job's Spark jobs (by job tag).

`on_stage(name)` is called after each step ("locked", "written", "registered", "moved",
"before_commit", "committed"): progress reporting, and where tests inject a failure.

The files are plain Parquet or ORC, Hive's insert-only ("MM") layout, not ORC ACID row files.
Partition values are written by Spark the way Hive names directories (`%XX` escaping,
`__HIVE_DEFAULT_PARTITION__` for null) and are checked by the gateway against the key types.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable

from pipeline.acid import delta_dir_name, local_path
from pipeline.client import ClientConfig, GatewayClient, Transaction, TxnAborted, process_client
from protos.metastore.v1 import catalog_pb2 as pb
from hive.lock_rules import Statement
from hive.names import make_partition_name, unescape_path_name

_log = logging.getLogger(__name__)
STAGES = ("locked", "written", "registered", "moved", "before_commit", "committed")


@dataclass
class WriteResult:
    txn_id: int
    write_id: int
    table_id: int
    added: list[str] = field(default_factory=list)      # partitions created by this write
    appended: list[str] = field(default_factory=list)   # existing partitions that got a new delta
    delta_dirs: list[str] = field(default_factory=list)
    timings_s: dict[str, float] = field(default_factory=dict)


@dataclass
class _Undo:
    """What to remove if the write fails: the staging tree, moved deltas, created directories."""

    staging: str = ""
    moved: list[str] = field(default_factory=list)
    created_dirs: list[str] = field(default_factory=list)

    def makedirs(self, path: str) -> None:
        missing: list[str] = []
        p = os.path.abspath(path)
        while not os.path.exists(p):
            missing.append(p)
            p = os.path.dirname(p)
        os.makedirs(path, exist_ok=True)
        self.created_dirs.extend(missing)  # deepest first

    def run(self) -> None:
        for path in [*self.moved, self.staging]:
            if path:
                shutil.rmtree(path, ignore_errors=True)
        for path in self.created_dirs:
            try:
                os.rmdir(path)  # only if empty: another writer may have put something there
            except OSError:
                pass


def _staging_leaves(root: str, depth: int) -> list[tuple[tuple[str, ...], str]]:
    """(partition values, directory) of Spark's `k1=v1/.../kN=vN` output directories."""
    out: list[tuple[tuple[str, ...], str]] = []

    def walk(path: str, values: tuple[str, ...]) -> None:
        if len(values) == depth:
            out.append((values, path))
            return
        for entry in sorted(os.scandir(path), key=lambda e: e.name):
            if entry.is_dir() and not entry.name.startswith(("_", ".")) and "=" in entry.name:
                walk(entry.path, values + (unescape_path_name(entry.name.split("=", 1)[1]),))

    walk(root, ())
    return out


def txn_write(
    df: Any, db: str, table: str, *, config: ClientConfig | None = None, file_format: str = "parquet",
    cleanup_on_failure: bool = True, on_stage: Callable[[str], None] | None = None,
) -> WriteResult:
    """Write `df` (it must have a column per partition key) into `db.table` in one txn."""
    if file_format not in ("parquet", "orc"):
        raise ValueError(f"file_format must be 'parquet' or 'orc', got {file_format!r}")
    spark = df.sparkSession
    config = config or ClientConfig.from_spark(spark)
    client = process_client(config)
    sc = spark.sparkContext
    tag = f"txn-write-{uuid.uuid4().hex[:12]}"
    stage = on_stage or (lambda name: None)
    undo = _Undo()

    def cancel_spark(err: TxnAborted) -> None:
        _log.error("cancelling the Spark jobs of %s: %s", tag, err)
        sc.cancelJobsWithTag(tag)

    try:
        with client.transaction(on_abort=cancel_spark) as txn:
            result = _write(df, sc, client, txn, db, table, file_format, tag, undo, stage)
    except BaseException:
        if cleanup_on_failure:
            undo.run()
        raise
    shutil.rmtree(undo.staging, ignore_errors=True)  # only Spark's hidden leftovers remain in it
    stage("committed")
    return result


def _write(df: Any, sc: Any, client: GatewayClient, txn: Transaction, db: str, table: str, file_format: str,
           tag: str, undo: _Undo, stage: Callable[[str], None]) -> WriteResult:
    started = time.perf_counter()
    timings: dict[str, float] = {}
    txn.lock(Statement.INSERT_DYNAMIC, db, table)
    stage("locked")
    write_id = txn.allocate_write_id(db, table)
    snap = txn.table_snapshot(db, table)
    read = snap.read_context()
    definition = client.get_table(db, table, read)
    if not definition.transactional:
        raise ValueError(f"{db}.{table} is not a transactional table; this job writes ACID delta directories")
    keys = list(definition.partition_keys)
    if not keys:
        raise ValueError(f"{db}.{table} has no partition keys; this job writes partitioned tables")
    columns = {c.lower(): c for c in df.columns}
    missing = [k.name for k in keys if k.name not in columns]
    if missing:
        raise ValueError(f"the DataFrame has no column for partition key(s) {', '.join(missing)} of {db}.{table} "
                         f"(columns: {', '.join(df.columns)})")
    key_columns = [columns[k.name] for k in keys]
    data_columns = [c for c in df.columns if c.lower() not in {k.name for k in keys}]
    table_root = local_path(definition.sd.location)
    undo.staging = os.path.join(table_root, f"_spark_staging_txn{txn.id}_w{write_id}")
    timings["driver_setup_s"] = time.perf_counter() - started

    t = time.perf_counter()
    sc.addJobTag(tag)
    try:
        (df.select(*data_columns, *key_columns).write.partitionBy(*key_columns).format(file_format)
         .mode("errorifexists").save("file://" + os.path.abspath(undo.staging)))
    except Exception:
        txn.check()  # cancelled because the txn was aborted: say that, not Spark's "job cancelled"
        raise
    finally:
        sc.removeJobTag(tag)
    txn.check()
    timings["spark_write_s"] = time.perf_counter() - t
    stage("written")

    t = time.perf_counter()
    leaves = _staging_leaves(undo.staging, len(keys))
    by_name = {make_partition_name(keys, values): (values, path) for values, path in leaves}
    existing = {p.name: p for p in client.get_partitions_by_names(db, table, list(by_name), read)}
    new = [pb.Partition(values=list(values)) for name, (values, _) in by_name.items() if name not in existing]
    added = {p.name: p for p in client.add_partitions(db, table, new, txn_id=txn.id, table_id=snap.table_id)}
    stage("registered")

    result = WriteResult(txn.id, write_id, snap.table_id, sorted(added), sorted(existing))
    delta = delta_dir_name(write_id)
    for name, (_, source) in sorted(by_name.items()):
        partition = added.get(name) or existing[name]
        target_parent = local_path(partition.sd.location)
        undo.makedirs(target_parent)
        target = os.path.join(target_parent, delta)
        if os.path.exists(target):
            raise FileExistsError(f"{target} exists already: write id {write_id} of txn {txn.id} was used by "
                                  f"another writer (a bug) or a failed earlier attempt was not cleaned up")
        try:
            os.rename(source, target)
        except OSError:  # another filesystem (a partition with its own location)
            shutil.move(source, target)
        undo.moved.append(target)
        result.delta_dirs.append(target)
    stage("moved")
    timings["register_and_move_s"] = time.perf_counter() - t
    txn.check()
    stage("before_commit")
    timings["total_s"] = time.perf_counter() - started
    result.timings_s = timings
    return result
