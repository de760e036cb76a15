"""Transactional write job: a DataFrame into a transactional table, all or nothing.

    spark-submit --conf spark.metastore.gateway.address=HOST:PORT -m pipeline write DB TABLE INPUT
    txn_write(df, "lake", "events")                                   # append, dynamic partitions
    txn_write(df, "lake", "events", mode="overwrite")                 # replace the partitions written
    txn_write(df, "lake", "events", partition={"ds": "2024-01-01"})   # a static partition (prefix)

Before any txn opens, the DataFrame is checked against the table (`pipeline.schema.check_frame`:
column names, and types equal or safely up-cast; the file format against the one the table
records): a DataFrame that does not fit is refused with `SchemaMismatch` naming the columns, and
nothing is written, no txn opened. Then, inside one txn that a heartbeat keeper holds open:

1. Lock the table as Hive does: an INSERT into a transactional table takes SHARED_READ (with
   hive.txn.xlock.write=true: other inserts run beside it, a drop or rename waits); an INSERT
   OVERWRITE takes EXCL_WRITE (Hive 4), so no other write of the table runs beside it.
2. AllocateTableWriteIds: the txn's write id `w` for the table, so the directories can be named.
3. Pin the txn's snapshot; GetTable under it, and check the DataFrame again (the table may have
   changed while the lock was awaited; a mismatch now aborts the txn before anything is written).
4. Spark writes the DataFrame, its columns cast to the table's types and in the table's order,
   partitioned by the table's keys, into a hidden staging directory under the table location
   (`_spark_staging_txn<T>_w<w>/k1=v1/...`). Readers skip hidden entries.
5. The format is recorded where it is not yet: the table's storage descriptor (AlterTable) and
   each partition's (AddPartitions for new partitions, AlterPartitions for old ones without one),
   all under the txn, so they become visible with the data. Appending files of another format to
   a partition that records one is refused (overwriting may change it). A write to a table that
   records no format takes EXCL_WRITE (step 1), so such first writes run one after another (readers
   do not wait) and only the first records it: the others find it recorded once they hold the lock.
6. Each staging partition directory is renamed to `<partition location>/delta_<w>_<w>` for an
   append, or `base_<w>` for an overwrite (Hive's INSERT OVERWRITE of an insert-only table): a
   snapshot that sees write id w reads the base and nothing older in that partition
   (`pipeline.acid.choose_dirs`), while older snapshots, to which w is not yet valid, keep reading
   the older directories, which are left in place for them (a compactor's Cleaner removes them
   once no snapshot can read them). The rename is atomic on one filesystem. An overwrite whose
   partitions are all static and which has no rows writes an empty base: the partition is emptied,
   as Hive's INSERT OVERWRITE ... PARTITION (...) SELECT with no rows does. An unpartitioned
   table has one such directory, under its own location (no partitions to register).
7. Commit. The keeper is stopped first; a txn the gateway aborted meanwhile fails the commit.

If anything fails (a task, the gateway, a hook, a lost txn) the txn is aborted: the partitions it
added and the formats it recorded disappear with it, and its files are under an aborted write id,
which no reader ever reads (`pipeline.acid.visible_files`). They are also removed here (the
staging directory, every directory moved, and partition directories this job created that are
then empty), unless `cleanup_on_failure=False`; a driver that dies outright leaves them for the
same reason harmless, and the gateway's reaper aborts its txn after hive.txn.timeout. If the
gateway reports the txn aborted while Spark is still writing, the keeper cancels the job's Spark
jobs (by job tag).

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
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from pipeline.acid import base_dir_name, delta_dir_name, local_path, staging_dir_name
from pipeline.client import ClientConfig, GatewayClient, Transaction, TxnAborted, process_client
from pipeline.formats import PARQUET, StorageFormat, format_of, storage_format, with_format
from pipeline.schema import FramePlan, check_frame
from protos.metastore.v1 import catalog_pb2 as pb
from hive.lock_rules import Statement
from hive.names import make_partition_name, unescape_path_name

_log = logging.getLogger(__name__)
STAGES = ("locked", "written", "registered", "moved", "before_commit", "committed")
# How often an aborted txn's write cancels its Spark jobs again until it has stopped (txn_write's cancel_spark).
CANCEL_AGAIN_S = 0.5
MODES = ("append", "overwrite")


@dataclass
class WriteResult:
    txn_id: int
    write_id: int
    table_id: int
    added: list[str] = field(default_factory=list)      # partitions created by this write
    appended: list[str] = field(default_factory=list)   # existing partitions that got a new delta (or base)
    delta_dirs: list[str] = field(default_factory=list)  # directories written: delta_w_w, or base_w (overwrite)
    mode: str = "append"
    file_format: str = "parquet"
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

    if os.path.isdir(root):  # Spark makes it even for no rows; be sure anyway
        walk(root, ())
    return out


def txn_write(
    df: Any, db: str, table: str, *, config: ClientConfig | None = None, file_format: str | None = None,
    mode: str = "append", partition: Mapping[str, str] | None = None, cleanup_on_failure: bool = True,
    on_stage: Callable[[str], None] | None = None,
) -> WriteResult:
    """Write `df` into `db.table` in one txn: appended as a new delta per partition written, or
    (`mode="overwrite"`) replacing those partitions' contents for later snapshots. `df` has a
    column per table column and per partition key, except keys given in `partition` (static
    values, a prefix of the keys). `file_format` defaults to the table's recorded format, else
    Parquet; one that contradicts the table's is refused. Raises `SchemaMismatch` (a ValueError)
    before any txn when `df` does not fit the table."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    requested = storage_format(file_format) if file_format is not None else None
    spark = df.sparkSession
    config = config or ClientConfig.from_spark(spark)
    client = process_client(config)
    # The checks a client's mistake fails, before a txn exists: nothing to undo if they fail.
    snap = client.table_snapshot(db, table)
    definition = client.get_table(db, table, snap.read_context())
    _target_format(definition, requested)
    check_frame(df.schema, definition, partition)

    sc = spark.sparkContext
    tag = f"txn-write-{uuid.uuid4().hex[:12]}"
    stage = on_stage or (lambda name: None)
    undo = _Undo()

    stopped = threading.Event()  # set once this write starts no Spark job any more

    def cancel_spark(err: TxnAborted) -> None:
        """Cancel the write's Spark jobs, in the keeper's thread, again and again until the write has
        stopped: cancelJobsWithTag cancels the jobs running now, and a txn aborted while the driver still
        sets up (lock, write id, table) would otherwise see its job start later and run to its end."""
        _log.error("cancelling the Spark jobs of %s: %s", tag, err)
        while True:
            sc.cancelJobsWithTag(tag)
            if stopped.wait(CANCEL_AGAIN_S):
                return

    job = _Job(df, sc, client, db, table, requested, mode, dict(partition or {}), tag, undo, stage)
    txn: Transaction | None = None
    try:
        with client.transaction(on_abort=cancel_spark) as txn:
            try:
                result = job.run(txn)
            finally:
                stopped.set()  # before the txn's end, which waits (bounded) for its keeper's thread
    except BaseException:
        # Never remove what a txn that may have committed wrote: readers may already read it.
        if cleanup_on_failure and (txn is None or txn.state in ("open", "aborted")):
            undo.run()
        raise
    shutil.rmtree(undo.staging, ignore_errors=True)  # only Spark's hidden leftovers remain in it
    stage("committed")
    return result


def _target_format(definition: pb.Table, requested: StorageFormat | None) -> StorageFormat:
    """The format to write: the table's, else the one asked for, else Parquet."""
    full = f"{definition.db_name}.{definition.name}"
    if not definition.transactional:
        raise ValueError(f"{full} is not a transactional table; this job writes ACID delta directories")
    recorded = format_of(definition.sd)
    if recorded is not None and requested is not None and recorded != requested:
        raise ValueError(f"{full} is stored as {recorded.name} (its storage descriptor says so); writing "
                         f"{requested.name} files into it would leave readers unable to read them: write "
                         f"{recorded.name}, or leave the format out")
    return recorded or requested or PARQUET


@dataclass
class _Job:
    df: Any
    sc: Any
    client: GatewayClient
    db: str
    table: str
    requested: StorageFormat | None
    mode: str
    static: dict[str, str]
    tag: str
    undo: _Undo
    stage: Callable[[str], None]

    @property
    def full(self) -> str:
        return f"{self.db}.{self.table}"

    def run(self, txn: Transaction) -> WriteResult:
        started = time.perf_counter()
        timings: dict[str, float] = {}
        overwrite = self.mode == "overwrite"
        if overwrite:
            txn.lock(Statement.INSERT_OVERWRITE, self.db, self.table)
        elif format_of(self.client.get_table(self.db, self.table,
                                             txn.table_snapshot(self.db, self.table).read_context()).sd) is None:
            # This write records the table's format, an alter of the table under the txn: two such writes
            # at once would both alter it and the later commit would lose (a write conflict). So it takes
            # EXCL_WRITE (an overwrite's lock without hive.txn.xlock.iow), for which writers queue and
            # readers do not: the snapshot taken once it is held shows the format an earlier write recorded.
            txn.lock(Statement.INSERT_OVERWRITE, self.db, self.table, xlock_iow=False)
        else:
            txn.lock(Statement.INSERT_DYNAMIC, self.db, self.table)
        self.stage("locked")
        write_id = txn.allocate_write_id(self.db, self.table)
        snap = txn.table_snapshot(self.db, self.table)
        read = snap.read_context()
        definition = self.client.get_table(self.db, self.table, read)
        fmt = _target_format(definition, self.requested)
        plan = check_frame(self.df.schema, definition, self.static)  # the table as the txn sees it, under the lock
        table_root = local_path(definition.sd.location)
        self.undo.staging = os.path.join(table_root, staging_dir_name(txn.id, write_id))
        timings["driver_setup_s"] = time.perf_counter() - started

        t = time.perf_counter()
        self._spark_write(txn, plan, fmt)
        txn.check()
        timings["spark_write_s"] = time.perf_counter() - t
        self.stage("written")

        t = time.perf_counter()
        keys = list(definition.partition_keys)
        by_name: dict[str, tuple[tuple[str, ...], str | None]] = {
            make_partition_name(keys, values) if keys else "": (values, path)
            for values, path in _staging_leaves(self.undo.staging, len(keys))}
        if not by_name and len(plan.static) == len(keys):
            # No rows for a fully static partition: Hive still creates the partition, and an
            # overwrite empties it (an empty base).
            by_name[make_partition_name(keys, plan.static)] = (plan.static, None)
        if format_of(definition.sd) is None:
            altered = pb.Table()
            altered.CopyFrom(definition)
            altered.sd.CopyFrom(with_format(definition.sd, fmt))
            self.client.alter_table(self.db, self.table, altered, txn_id=txn.id)
        if keys:
            added, existing = self._register(txn, by_name, read, fmt, snap.table_id)
            parents = {name: local_path((added.get(name) or existing[name]).sd.location) for name in by_name}
        else:  # the table's location is the one ACID directory root
            added, existing, parents = {}, {}, {"": table_root}
        self.stage("registered")

        result = WriteResult(txn.id, write_id, snap.table_id, sorted(added), sorted(existing), mode=self.mode,
                             file_format=fmt.name)
        target_name = base_dir_name(write_id) if overwrite else delta_dir_name(write_id)
        for name, (_, source) in sorted(by_name.items()):
            target = self._move(source, parents[name], target_name, write_id, txn.id, empty_ok=overwrite)
            if target:
                result.delta_dirs.append(target)
        self.stage("moved")
        timings["register_and_move_s"] = time.perf_counter() - t
        txn.check()
        self.stage("before_commit")
        timings["total_s"] = time.perf_counter() - started
        result.timings_s = timings
        return result

    def _spark_write(self, txn: Transaction, plan: FramePlan, fmt: StorageFormat) -> None:
        self.sc.addJobTag(self.tag)
        try:
            writer = plan.apply(self.df).write  # type: ignore[attr-defined]
            if plan.key_names:
                writer = writer.partitionBy(*plan.key_names)
            writer.format(fmt.name).mode("errorifexists").save("file://" + os.path.abspath(self.undo.staging))
        except Exception:
            txn.check()  # cancelled because the txn was aborted: say that, not Spark's "job cancelled"
            raise
        finally:
            self.sc.removeJobTag(self.tag)

    def _register(self, txn: Transaction, by_name: dict[str, tuple[tuple[str, ...], str | None]],
                  read: pb.ReadContext, fmt: StorageFormat, table_id: int,
                  ) -> tuple[dict[str, pb.Partition], dict[str, pb.Partition]]:
        """(added, existing) partitions among those written: new ones are added under the txn
        with the format; old ones get the format recorded where they have none.

        New ones are added if absent, as Hive's INSERT does: another writer may add one of them
        meanwhile (two appends to one new day). The gateway then waits for that writer's txn to end
        and skips what it committed; those are read again, from a snapshot taken now."""
        existing = {p.name: p for p in self.client.get_partitions_by_names(self.db, self.table, list(by_name), read)}
        absent = [name for name in by_name if name not in existing]
        new = [pb.Partition(values=list(by_name[name][0]), sd=with_format(pb.StorageDescriptor(), fmt))
               for name in absent]
        added = {p.name: p for p in self.client.add_partitions(self.db, self.table, new, txn_id=txn.id,
                                                                table_id=table_id, if_not_exists=True)}
        raced = [name for name in absent if name not in added]
        if raced:
            now = txn.table_snapshot(self.db, self.table).read_context()
            existing.update((p.name, p) for p in self.client.get_partitions_by_names(self.db, self.table, raced, now))
        self._record_format(txn, existing, fmt, table_id)
        return added, existing

    def _record_format(self, txn: Transaction, existing: dict[str, pb.Partition], fmt: StorageFormat,
                       table_id: int) -> None:
        """Existing partitions that record no format get this write's; one that records another
        refuses an append (a partition's files are one format) and takes the new one on overwrite."""
        stale: list[pb.Partition] = []
        for name, p in sorted(existing.items()):
            try:
                recorded = format_of(p.sd)
            except ValueError as exc:
                raise ValueError(f"partition {name} of {self.full}: {exc}") from exc
            if recorded == fmt:
                continue
            if recorded is not None and self.mode != "overwrite":
                raise ValueError(f"partition {name} of {self.full} holds {recorded.name} files; appending "
                                 f"{fmt.name} files would mix formats in one partition (write {recorded.name}, "
                                 f"or overwrite the partition); nothing was written")
            stale.append(pb.Partition(values=list(p.values), sd=with_format(p.sd, fmt), parameters=p.parameters))
        if stale:
            self.client.alter_partitions(self.db, self.table, stale, txn_id=txn.id, table_id=table_id)

    def _move(self, source: str | None, parent: str, name: str, write_id: int, txn_id: int, *,
              empty_ok: bool) -> str | None:
        """Put one partition's staged files at `parent/name`; None when there was nothing to put."""
        if source is None and not empty_ok:
            return None
        self.undo.makedirs(parent)
        target = os.path.join(parent, name)
        if os.path.exists(target):
            raise FileExistsError(f"{target} exists already: write id {write_id} of txn {txn_id} was used by "
                                  f"another writer (a bug) or a failed earlier attempt was not cleaned up")
        if source is None:
            os.mkdir(target)
        else:
            try:
                os.rename(source, target)
            except OSError:  # another filesystem (a partition with its own location)
                shutil.move(source, target)
        self.undo.moved.append(target)
        return target
