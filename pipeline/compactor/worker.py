"""The compaction worker: one queue entry at a time, the rewrite done by Spark.

Steps of `run_one` (Hive's Worker, hive-reference §7.3, with Hive 4's compaction txn):

1. ClaimCompaction: the oldest initiated entry becomes `working` for this worker; a heartbeat thread
   keeps it (and later its txn) alive. A worker that stops beating loses the entry after
   hive.compactor.worker.timeout: the gateway's Initiator queues it again and aborts its txn.
2. StartCompaction: the gateway opens the compaction txn T and answers its snapshot (the ValidTxnList
   as T sees it, and the compactor's view of the table's write ids: everything up to the lowest open
   write id, aborted ones excluded) and the partition's directory.
3. The directories to read are chosen exactly as a reader's (`pipeline.acid.choose_dirs`) under that
   snapshot: a major compaction reads the base and the deltas, or with no base the original files
   (from before the table was transactional) and the deltas; a minor one the deltas above the base.
   Nothing worth doing (neither a delta nor an original file for a major, fewer than two deltas for
   a minor) is a refusal, as in Hive.
   A snapshot the directory cannot serve (`NotEnoughHistory`; not to happen with the compactor's
   view, which sees every committed compaction) fails the entry like any other error.
4. Spark reads those files and writes `base_<hwm>_v<T>` (major) or `delta_<min>_<max>_v<T>` (minor)
   straight into the partition directory; a base records the originals it holds (ORIGINALS_FILE),
   which the Cleaner removes with the deltas. Until T commits no reader uses it: a directory with a
   visibility txn is read only by snapshots in which that txn is committed.
5. CompleteCompaction: the gateway commits T and marks the entry ready for cleaning in one database
   transaction. The Cleaner deletes the old directories once no open txn can still read them.

Any failure before 5 calls FailCompaction: the entry goes to history as failed, T is aborted, and
what was written carries an aborted visibility txn (never read; the Cleaner removes it). A worker
that dies outright leaves the same state once the gateway times it out.
"""

from __future__ import annotations

import logging
import math
import os
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from pipeline.acid import (base_dir_name, choose_dirs, delta_dir_name, dir_files, entry_files, local_path,
                           parse_acid_dir, record_originals)
from pipeline.client import ClientConfig, GatewayError
from pipeline.compactor.client import CompactorClient, EntryKeeper
from pipeline.formats import format_from_files, format_of
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import compaction_pb2 as cpb
from hive.writeids import ValidTxnList, ValidWriteIdList

_log = logging.getLogger(__name__)
VERSION = "pipeline-compactor"
STAGES = ("claimed", "started", "written", "completed")
TARGET_FILE_BYTES = 128 * 1024 * 1024  # one output file per this many input bytes (an HDFS block)


class NothingToCompact(Exception):
    """The snapshot leaves too little to compact (Hive's "refused")."""


@dataclass
class CompactionRun:
    """What one `run_one` did."""

    id: int
    type: str                       # MAJOR or MINOR
    outcome: str                    # compacted, refused or failed
    partition: str = ""
    txn_id: int = 0
    output_dir: str = ""
    inputs: list[str] = field(default_factory=list)   # input directories
    files_in: int = 0
    bytes_in: int = 0
    bytes_out: int = 0
    rows: int = 0
    seconds: float = 0.0
    error: str = ""


def default_worker_id() -> str:
    """Hive's `<host>-<thread id>` naming, with the process id (one worker per process here)."""
    return f"{socket.gethostname()}-{os.getpid()}-{threading.get_ident() % 100000}"


def _format_of(started: cpb.StartCompactionResponse, files: list[tuple[str, int]]) -> str:
    """The Spark source to read and write with: the format the partition (else the table) records,
    as readers take it (pipeline.snapshot_read), so original files named as Hive named them
    (000000_0) are read too; else the one the data files' suffix names."""
    recorded = pb.StorageDescriptor(input_format=started.input_format,
                                    serde=pb.SerDeInfo(serialization_lib=started.serialization_lib))
    fmt = format_of(recorded) or format_from_files(p for p, _ in files)
    if fmt is None:
        raise ValueError(f"{started.location} records no file format and its files' names do not say (e.g. "
                         f"{files[0][0]}): record one with AlterPartitions or AlterTable (MapredParquetInputFormat "
                         "or OrcInputFormat)")
    return fmt.name


def plan(names: list[str], view: ValidWriteIdList, txns: ValidTxnList, major: bool) -> tuple[list[str], str]:
    """(input entry names, output directory name without the _v suffix) for the snapshot. A major
    compaction with no base also reads the original files (which readers ignore once there is a
    base), and they alone are enough, as in Hive; the inputs list them first."""
    base, deltas, originals = choose_dirs(names, view, txns)
    deltas = [d for d in deltas if d.kind == "delta"]
    if major:
        if originals and not deltas and view.high_watermark < 1:
            raise NothingToCompact("only original files and no write id yet: readers read them as they are; a base "
                                   "needs a write id, so compact after the first transactional write")
        if not deltas and not originals:
            raise NothingToCompact("no delta above the base to fold into a new base")
        return ([base.name] if base is not None else originals) + [d.name for d in deltas], ""
    if len(deltas) < 2:
        raise NothingToCompact(f"{len(deltas)} delta(s) above the base: a minor compaction needs at least two")
    return [d.name for d in deltas], delta_dir_name(deltas[0].min_write_id, deltas[-1].max_write_id)


def run_one(spark: Any, config: ClientConfig, *, worker_id: str | None = None, heartbeat_interval_s: float = 30.0,
            on_stage: Callable[[str], None] | None = None) -> CompactionRun | None:
    """Claim the next initiated entry and compact it; None when the queue has none."""
    worker_id = worker_id or default_worker_id()
    stage = on_stage or (lambda name: None)
    with CompactorClient(config) as client:
        claim = client.call("ClaimCompaction", cpb.ClaimCompactionRequest(worker_id=worker_id,
                                                                          worker_version=VERSION))
        if not claim.found:
            return None
        major = claim.type == cpb.MAJOR
        run = CompactionRun(claim.id, "MAJOR" if major else "MINOR", "failed", claim.partition_name)
        started = time.perf_counter()
        keeper = EntryKeeper(client, claim.id, worker_id, heartbeat_interval_s).start()
        try:
            stage("claimed")
            _compact(spark, client, claim, worker_id, major, run, keeper, stage, config)
        except NothingToCompact as exc:
            run.outcome, run.error = "refused", str(exc)
            _give_up(client, claim.id, worker_id, str(exc), refused=True)
        except Exception as exc:  # noqa: BLE001 - every failure is reported to the queue, then re-raised
            run.error = f"{type(exc).__name__}: {exc}"
            _give_up(client, claim.id, worker_id, run.error, refused=False)
            raise
        finally:
            keeper.stop()
            run.seconds = time.perf_counter() - started
        return run


def _give_up(client: CompactorClient, compaction_id: int, worker_id: str, message: str, *, refused: bool) -> None:
    try:
        client.call("FailCompaction", cpb.FailCompactionRequest(id=compaction_id, worker_id=worker_id,
                                                                error_message=message[:4000], refused=refused))
    except GatewayError as exc:  # the entry was taken back already: the time-out path owns it now
        _log.warning("could not report compaction %d as %s: %s", compaction_id,
                     "refused" if refused else "failed", exc)


def _compact(spark: Any, client: CompactorClient, claim: cpb.ClaimCompactionResponse, worker_id: str, major: bool,
             run: CompactionRun, keeper: EntryKeeper, stage: Callable[[str], None], config: ClientConfig) -> None:
    started = client.call("StartCompaction", cpb.StartCompactionRequest(
        id=claim.id, worker_id=worker_id, user=config.user, hostname=config.hostname))
    run.txn_id = started.txn_id
    stage("started")
    view = ValidWriteIdList.parse(started.valid_write_id_list)
    txns = ValidTxnList.parse(started.valid_txn_list)
    root = local_path(started.location)
    try:
        names = sorted(os.listdir(root))
    except FileNotFoundError:
        raise NothingToCompact(f"{started.location} does not exist: nothing was written there") from None
    inputs, delta_name = plan(names, view, txns, major)
    output = (base_dir_name(view.high_watermark, started.txn_id) if major
              else f"{delta_name}_v{started.txn_id:07d}")
    files = [f for name in inputs for f in entry_files(root, name)]
    if not files:
        raise NothingToCompact(f"the directories {inputs} hold no data files")
    run.inputs, run.files_in, run.bytes_in = inputs, len(files), sum(size for _, size in files)
    fmt = _format_of(started, files)
    target = os.path.join(root, output)
    df = spark.read.format(fmt).load(["file://" + p for p, _ in files])
    (df.coalesce(max(1, math.ceil(run.bytes_in / TARGET_FILE_BYTES))).write.format(fmt).mode("errorifexists")
     .save("file://" + target))
    record_originals(target, [name for name in inputs if parse_acid_dir(name) is None])  # for the Cleaner
    run.output_dir = target
    written = dir_files(target)
    run.bytes_out = sum(size for _, size in written)
    run.rows = spark.read.format(fmt).load("file://" + target).count()  # from the files' footers
    stage("written")
    if keeper.lost is not None:
        raise keeper.lost
    client.call("CompleteCompaction", cpb.CompleteCompactionRequest(
        id=claim.id, worker_id=worker_id, txn_id=started.txn_id,
        highest_write_id=view.high_watermark if major else _max_write_id(delta_name)))
    run.outcome = "compacted"
    stage("completed")


def _max_write_id(delta_name: str) -> int:
    return int(delta_name.split("_")[2])


def run_loop(spark: Any, config: ClientConfig, *, worker_id: str | None = None, poll_interval_s: float = 10.8,
             heartbeat_interval_s: float = 30.0, max_compactions: int | None = None,
             stop: threading.Event | None = None, on_run: Callable[[CompactionRun], None] | None = None) -> int:
    """Claim and compact until `stop` is set (or `max_compactions` ran); sleeps `poll_interval_s`
    (hive.compactor.worker.sleep.time) when the queue is empty. A failed compaction is reported and
    logged and the loop goes on. Returns the number of entries handled."""
    stop = stop or threading.Event()
    handled = 0
    while not stop.is_set() and (max_compactions is None or handled < max_compactions):
        try:
            run = run_one(spark, config, worker_id=worker_id, heartbeat_interval_s=heartbeat_interval_s)
        except Exception:  # noqa: BLE001 - one bad entry must not stop the worker; it is in history as failed
            _log.exception("compaction failed")
            handled += 1
            stop.wait(poll_interval_s)
            continue
        if run is None:
            stop.wait(poll_interval_s)
            continue
        handled += 1
        if on_run is not None:
            on_run(run)
    return handled
