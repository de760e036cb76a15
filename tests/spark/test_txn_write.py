"""The transactional write job: a committed write is visible as partitions and `delta_<w>_<w>`
directories; a write that fails midway leaves nothing any snapshot can see."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark", reason="pyspark is in the dev extra: pip install -e '.[dev]'")  # the jobs import it

from pipeline.acid import delta_dir_name, local_path, visible_files  # noqa: E402
from pipeline.client import ClientConfig, CommitOutcomeUnknown, GatewayClient, TxnAborted, process_client  # noqa: E402
from pipeline.snapshot_read import read_on_driver, snapshot_read  # noqa: E402
from pipeline.txn_write import txn_write  # noqa: E402
from protos.metastore.v1 import catalog_pb2 as pb  # noqa: E402
from protos.metastore.v1 import locks_pb2 as lpb  # noqa: E402
from protos.metastore.v1 import transactions_pb2 as tpb  # noqa: E402
from hive.writeids import ValidWriteIdList  # noqa: E402
from tests.rpc_errors import deadline_exceeded  # noqa: E402
from tests.spark.conftest import create_table  # noqa: E402

pytestmark = pytest.mark.spark
DB, TABLE = "lake", "events"
FULL = f"{DB}.{TABLE}"


def _frame(spark: Any, days: list[str], rows_per_day: int = 20) -> Any:
    rows = [(i * 100 + j, f"payload-{day}-{j}", day) for i, day in enumerate(days) for j in range(rows_per_day)]
    return spark.createDataFrame(rows, "id long, payload string, ds string").repartition(2)


def _setup(client: GatewayClient, root: Path) -> None:
    """lake.events with one committed partition (ds=2024-01-01) holding one file in delta_1_1."""
    create_table(client, root)
    with client.transaction() as txn:
        w = txn.allocate_write_id(DB, TABLE)
        (p,) = client.add_partitions(DB, TABLE, [pb.Partition(values=["2024-01-01"])], txn_id=txn.id)
        delta = Path(local_path(p.sd.location)) / delta_dir_name(w)
        delta.mkdir(parents=True)
        (delta / "part-00000.parquet").write_bytes(b"x" * 123)


def _state(client: GatewayClient) -> tuple[list[str], list[tuple[Any, ...]]]:
    """(partition names, rows) as a new snapshot sees them."""
    snap = client.snapshot([FULL])
    names = client.list_partition_names(DB, TABLE, snap.read_context(FULL))
    return names, sorted(r.key() for r in read_on_driver(client, snap.tables[0], snap.valid_txn_list, names))


def _acid_dirs(root: Path) -> list[str]:
    return sorted(str(Path(d).relative_to(root)) for d, _, _ in os.walk(root)
                  if Path(d).name.startswith(("delta_", "_spark_staging")))


def _no_open_txns_or_locks(client: GatewayClient) -> None:
    shown = client.txns.ShowTransactions(tpb.ShowTransactionsRequest()).transactions
    assert [t.txn_id for t in shown if t.state == "OPEN"] == []
    assert list(client.locks.ShowLocks(lpb.ShowLocksRequest()).locks) == []


def test_write_job_commits_partitions_and_delta_directories(spark: Any, gateway_address: str, tmp_path: Path) -> None:
    root = tmp_path / "events"
    config = ClientConfig(gateway_address)
    with GatewayClient(config) as client:
        _setup(client, root)
        before = client.snapshot([FULL])
        stages: list[str] = []
        result = txn_write(_frame(spark, ["2024-01-01", "2024-01-02", "2024-01-03"]), DB, TABLE, config=config,
                           on_stage=stages.append)
        assert stages == ["locked", "written", "registered", "moved", "before_commit", "committed"]
        assert result.write_id == 2
        assert result.added == ["ds=2024-01-02", "ds=2024-01-03"] and result.appended == ["ds=2024-01-01"]
        assert _acid_dirs(root) == [f"ds=2024-01-0{d}/delta_000000{w}_000000{w}"
                                    for d, w in ((1, 1), (1, 2), (2, 2), (3, 2))]

        names, rows = _state(client)
        assert names == ["ds=2024-01-01", "ds=2024-01-02", "ds=2024-01-03"]
        assert all(files >= 1 and size > 0 for *_, files, size in rows)
        job = snapshot_read(spark, DB, TABLE, config=config)
        assert sorted(r.key() for r in job.rows) == rows
        if client.has_filter_reads:
            some = snapshot_read(spark, DB, TABLE, config=config, filter="ds >= '2024-01-02'", lock=False)
            assert sorted(r.key() for r in some.rows) == rows[1:]
        data = spark.read.parquet(*(f"file://{d}" for d in result.delta_dirs))
        assert data.count() == 60 and sorted(r.id for r in data.select("id").collect())[:3] == [0, 1, 2]

        # A snapshot pinned before the write sees neither the new partitions nor the new delta.
        old = read_on_driver(client, before.tables[0], before.valid_txn_list, names)
        assert [(r.name, r.files, r.bytes) for r in old] == [("ds=2024-01-01", 1, 123)]
        _no_open_txns_or_locks(client)


def test_write_job_failing_in_a_task_midway_aborts_and_leaves_nothing(spark: Any, gateway_address: str,
                                                                       tmp_path: Path) -> None:
    from pyspark.sql import functions as F

    root = tmp_path / "events"
    config = ClientConfig(gateway_address)
    with GatewayClient(config) as client:
        _setup(client, root)
        names_before, rows_before = _state(client)

        def check(ds):  # no annotations: pyspark would read them as a pandas UDF's
            if ds == "2024-01-03":
                raise ValueError("bad record in ds=2024-01-03")
            return ds

        frame = _frame(spark, ["2024-01-01", "2024-01-02", "2024-01-03", "2024-01-04"])
        frame = frame.withColumn("ds", F.udf(check, "string")("ds"))  # fails in one task, after others wrote
        with pytest.raises(Exception, match="bad record"):
            txn_write(frame, DB, TABLE, config=config)

        assert _state(client) == (names_before, rows_before)
        wids = ValidWriteIdList.parse(client.snapshot([FULL]).tables[0].valid_write_id_list)
        assert wids.is_write_id_aborted(2)  # the job's txn got write id 2 and was aborted
        assert _acid_dirs(root) == ["ds=2024-01-01/delta_0000001_0000001"]  # staging and its deltas removed
        _no_open_txns_or_locks(client)


def test_write_job_failing_after_its_files_are_in_place_leaves_them_invisible(spark: Any, gateway_address: str,
                                                                              tmp_path: Path) -> None:
    root = tmp_path / "events"
    config = ClientConfig(gateway_address)
    with GatewayClient(config) as client:
        _setup(client, root)
        names_before, rows_before = _state(client)

        def crash(stage: str) -> None:
            if stage == "before_commit":
                raise RuntimeError("driver lost before commit")

        # No clean-up, as if the driver died: the files stay where the job moved them.
        with pytest.raises(RuntimeError, match="before commit"):
            txn_write(_frame(spark, ["2024-01-01", "2024-01-02"]), DB, TABLE, config=config, on_stage=crash,
                      cleanup_on_failure=False)
        left = _acid_dirs(root)
        assert "ds=2024-01-01/delta_0000002_0000002" in left and "ds=2024-01-02/delta_0000002_0000002" in left

        assert _state(client) == (names_before, rows_before)  # the old partition's new delta is not read
        snap = client.snapshot([FULL])
        wids = snap.tables[0].write_ids()
        assert wids.is_write_id_aborted(2)
        assert visible_files(str(root / "ds=2024-01-02"), wids, snap.txn_list()) == []  # even if pointed at it
        assert snapshot_read(spark, DB, TABLE, config=config).rows[0].key() == rows_before[0]
        _no_open_txns_or_locks(client)


def test_write_job_whose_txn_is_aborted_meanwhile_is_cancelled_and_leaves_nothing(
    spark: Any, gateway_address: str, tmp_path: Path,
) -> None:
    from pyspark.sql import functions as F

    root = tmp_path / "events"
    config = ClientConfig(gateway_address, txn_timeout_s=1.0)  # the keeper heartbeats every 0.5 s
    with GatewayClient(config) as client:
        _setup(client, root)
        names_before, rows_before = _state(client)

        def slow(ds):  # no annotations: pyspark would read them as a pandas UDF's
            time.sleep(0.2)
            return ds

        # ~60 s of work per task, so that a job left to run to its end is far from the bound below even when
        # a loaded machine slows the cancellation (13.6 s once with ~10 s of work and a bound of 9 s)
        frame = _frame(spark, ["2024-01-02", "2024-01-03"], rows_per_day=300)
        frame = frame.withColumn("ds", F.udf(slow, "string")("ds"))

        def abort_it() -> None:  # an operator (or the reaper, after a driver stall) aborts the txn
            for _ in range(200):
                shown = client.txns.ShowTransactions(tpb.ShowTransactionsRequest()).transactions
                open_ids = [t.txn_id for t in shown if t.state == "OPEN"]
                if open_ids:
                    time.sleep(1.0)
                    client.abort_txn(open_ids[0])
                    return
                time.sleep(0.05)

        aborter = threading.Thread(target=abort_it)
        aborter.start()
        started = time.monotonic()
        with pytest.raises(TxnAborted, match="aborted"):
            txn_write(frame, DB, TABLE, config=config)
        aborter.join(10)
        assert time.monotonic() - started < 30  # the keeper cancelled the Spark job; it did not run to the end
        assert _state(client) == (names_before, rows_before)
        assert _acid_dirs(root) == ["ds=2024-01-01/delta_0000001_0000001"]
        _no_open_txns_or_locks(client)


def test_two_appends_creating_one_new_partition_at_once_both_commit(spark: Any, gateway_address: str,
                                                                      tmp_path: Path) -> None:
    """Two jobs append to the same new day at once (Hive's two INSERTs into one new partition both
    commit). The second registers it while the first's txn, which added it, is still open: the
    gateway holds its add until the first commits, and it then writes its delta into that partition
    (before: its txn was aborted as a write conflict, after all its Spark work)."""
    root = tmp_path / "events"
    config = ClientConfig(gateway_address)
    with GatewayClient(config) as client:
        _setup(client, root)
        # A first write records the table's format: writes to a table that records none take an
        # exclusive lock, one after another, and these two must run side by side.
        txn_write(_frame(spark, ["2024-01-01"], rows_per_day=1), DB, TABLE, config=config)
        first_registered, second_written = threading.Event(), threading.Event()
        results: list[Any] = []

        def hold_first(stage: str) -> None:  # its partition added, not yet committed ...
            if stage == "before_commit":
                first_registered.set()
                assert second_written.wait(60)
                time.sleep(1.0)  # ... while the second adds the same one

        def first() -> None:
            results.append(txn_write(_frame(spark, ["2024-02-01"], rows_per_day=5), DB, TABLE, config=config,
                                     on_stage=hold_first))

        runner = threading.Thread(target=first)
        runner.start()
        assert first_registered.wait(120)
        second = txn_write(_frame(spark, ["2024-02-01"], rows_per_day=7), DB, TABLE, config=config,
                           on_stage=lambda stage: second_written.set() if stage == "written" else None)
        runner.join(60)
        [first_result] = results
        assert (first_result.write_id, first_result.added) == (3, ["ds=2024-02-01"])
        assert (second.write_id, second.added, second.appended) == (4, [], ["ds=2024-02-01"])
        assert "ds=2024-02-01/delta_0000003_0000003" in _acid_dirs(root)
        assert "ds=2024-02-01/delta_0000004_0000004" in _acid_dirs(root)
        names, rows = _state(client)
        assert names == ["ds=2024-01-01", "ds=2024-02-01"]
        written = [f for d in first_result.delta_dirs + second.delta_dirs for f in os.listdir(local_path(d))
                   if f.endswith(".parquet")]
        assert rows[1][0] == "ds=2024-02-01" and rows[1][4] == len(written) >= 2  # a new snapshot reads both
        day = spark.read.parquet(*(f"file://{d}" for d in first_result.delta_dirs + second.delta_dirs))
        assert day.count() == 12
        _no_open_txns_or_locks(client)


def test_two_first_writes_at_once_to_a_table_that_records_no_format_both_commit(spark: Any, gateway_address: str,
                                                                                 tmp_path: Path) -> None:
    """A table created without a file format (the README's quick start creates one over gRPC) gets it
    from its first write. Two first writes at once both commit: the second waits for the first's lock,
    then finds the format recorded and appends (before: both altered the table and the second was
    aborted as a write conflict, after all its Spark work)."""
    root = tmp_path / "events"
    config = ClientConfig(gateway_address)
    with GatewayClient(config) as client:
        create_table(client, root)
        first_locked = threading.Event()
        results: list[Any] = []
        first_locks: list[str] = []

        def hold_first(stage: str) -> None:
            if stage == "locked":
                first_locks.extend(lpb.LockType.Name(lock.type)
                                   for lock in client.locks.ShowLocks(lpb.ShowLocksRequest()).locks)
                first_locked.set()
                time.sleep(2.0)  # the second asks for its lock meanwhile

        def first() -> None:
            results.append(txn_write(_frame(spark, ["2024-01-01"], rows_per_day=3), DB, TABLE, config=config,
                                     on_stage=hold_first))

        runner = threading.Thread(target=first)
        runner.start()
        assert first_locked.wait(120)
        second = txn_write(_frame(spark, ["2024-01-02"], rows_per_day=4), DB, TABLE, config=config)
        runner.join(60)
        [first_result] = results
        assert first_locks == ["EXCL_WRITE"]  # other writers queue; readers would not
        assert (first_result.write_id, second.write_id) == (1, 2)
        assert first_result.file_format == second.file_format == "parquet"
        table = client.get_table(DB, TABLE, client.snapshot([FULL]).read_context(FULL))
        assert table.sd.input_format.endswith("MapredParquetInputFormat")
        names, rows = _state(client)
        assert names == ["ds=2024-01-01", "ds=2024-01-02"]
        _no_open_txns_or_locks(client)


class _Txns:
    """The job's Transactions stub, with CommitTxn's answers lost: after the commit reached the
    gateway (`reached`), or before (`not reached`); AbortTxns' answers lost too with `lose_aborts`."""

    def __init__(self, real: Any, *, commit_reaches: bool, lose_aborts: bool = False) -> None:
        self.real, self.commit_reaches, self.lose_aborts = real, commit_reaches, lose_aborts
        self.commits = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def CommitTxn(self, request: Any, timeout: float | None = None) -> Any:  # noqa: N802 - the stub's name
        self.commits += 1
        if self.commit_reaches:
            self.real.CommitTxn(request, timeout=timeout)
        raise deadline_exceeded()  # the answer never came

    def AbortTxns(self, request: Any, timeout: float | None = None) -> Any:  # noqa: N802
        if self.lose_aborts:
            raise deadline_exceeded()  # the answer never came
        return self.real.AbortTxns(request, timeout=timeout)


def _with_lost_commit_answers(config: ClientConfig, **faults: bool) -> tuple[Any, _Txns]:
    job_client: Any = process_client(config)  # the client txn_write uses
    faulty = _Txns(job_client.txns, **faults)
    job_client.txns = faulty
    return job_client, faulty


@pytest.mark.parametrize("commit_reaches", [True, False], ids=["commit-landed", "commit-lost"])
def test_write_job_whose_commit_answer_is_lost_keeps_what_committed(spark: Any, gateway_address: str,
                                                                    tmp_path: Path, commit_reaches: bool) -> None:
    """A commit whose answer is lost may have committed: the job asks again (CommitTxn is idempotent)
    and then aborts, whose answer tells. A commit that landed is a success with its files in place
    (before, the job deleted the committed delta: its rows were lost); one that did not is aborted,
    its files removed."""
    root = tmp_path / "events"
    config = ClientConfig(gateway_address)
    with GatewayClient(config) as client:
        _setup(client, root)
        names_before, rows_before = _state(client)
        job_client, faulty = _with_lost_commit_answers(config, commit_reaches=commit_reaches)
        try:
            frame = _frame(spark, ["2024-01-02"], rows_per_day=3)
            if commit_reaches:
                txn_write(frame, DB, TABLE, config=config)
            else:
                with pytest.raises(TxnAborted, match="answer to its commit was lost"):
                    txn_write(frame, DB, TABLE, config=config)
        finally:
            job_client.txns = faulty.real
        assert faulty.commits == 2
        names, rows = _state(client)
        if commit_reaches:
            assert names == ["ds=2024-01-01", "ds=2024-01-02"] and rows[:1] == rows_before and rows[1][2] == 2
            assert "ds=2024-01-02/delta_0000002_0000002" in _acid_dirs(root)
        else:
            assert (names, rows) == (names_before, rows_before)
            assert _acid_dirs(root) == ["ds=2024-01-01/delta_0000001_0000001"]
        _no_open_txns_or_locks(client)


def test_write_job_whose_commit_outcome_stays_unknown_keeps_its_files(spark: Any, gateway_address: str,
                                                                      tmp_path: Path) -> None:
    """When the abort's answer is lost too, nobody knows whether the txn committed: its files stay
    (readers may see them), and the job says so."""
    root = tmp_path / "events"
    config = ClientConfig(gateway_address)
    with GatewayClient(config) as client:
        _setup(client, root)
        _, rows_before = _state(client)
        job_client, faulty = _with_lost_commit_answers(config, commit_reaches=True, lose_aborts=True)
        try:
            with pytest.raises(CommitOutcomeUnknown, match="may have committed"):
                txn_write(_frame(spark, ["2024-01-02"], rows_per_day=3), DB, TABLE, config=config)
        finally:
            job_client.txns = faulty.real
        names, rows = _state(client)  # it had committed: readers see its partition and files
        assert names == ["ds=2024-01-01", "ds=2024-01-02"] and rows[:1] == rows_before and rows[1][2] == 2
        assert "ds=2024-01-02/delta_0000002_0000002" in _acid_dirs(root)
