"""The pipeline's gateway client against real gateway processes (no Spark needed): txns, snapshots,
batched reads with several batches in flight, UNAVAILABLE retries, the heartbeat keeper, the lock
helper, and one channel per process rebuilt after a fork."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Sequence

import grpc
import pytest

from pipeline.acid import choose_dirs, delta_dir_name, parse_acid_dir, visible_files
from pipeline.client import (ADDRESS_CONF, ADDRESS_ENV, Backoff, ClientConfig, ClientConfigError, GatewayClient,
                             GatewayError, GatewayUnavailable, LockAcquireTimeout, TxnAborted, call_with_retry)
from pipeline.client.gateway import in_halves
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import locks_pb2 as lpb
from hive.lock_rules import Statement
from hive.writeids import ValidWriteIdList
from tests.conftest import REPO
from tests.rpc_errors import deadline_exceeded, unavailable
from tests.spark.conftest import create_table, start_gateway

pytestmark = pytest.mark.spark
C = grpc.StatusCode


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_config_comes_from_argument_then_spark_conf_then_environment() -> None:
    env = {ADDRESS_ENV: "env-host:1"}
    conf = {ADDRESS_CONF: "conf-host:2", "spark.metastore.gateway.batch.size": "250",
            "spark.hadoop.hive.txn.timeout": "5m"}
    assert ClientConfig.resolve(conf, address="arg-host:3", environ=env).address == "arg-host:3"
    from_conf = ClientConfig.resolve(conf, environ=env)
    assert (from_conf.address, from_conf.batch_size, from_conf.heartbeat_interval_s) == ("conf-host:2", 250, 150.0)
    assert ClientConfig.resolve({}, environ=env).address == "env-host:1"
    with pytest.raises(ClientConfigError, match=f"{ADDRESS_CONF}.*{ADDRESS_ENV}"):
        ClientConfig.resolve({}, environ={})
    with pytest.raises(ClientConfigError, match="not host:port"):
        ClientConfig("nohost")
    with pytest.raises(ClientConfigError, match="duration"):
        ClientConfig.resolve({ADDRESS_CONF: "h:1", "spark.hadoop.hive.txn.timeout": "soon"}, environ={})
    assert (from_conf.xlock_write, from_conf.xlock_iow) == (True, True)  # Hive's defaults
    iow = ClientConfig.resolve({ADDRESS_CONF: "h:1", "spark.hadoop.hive.txn.xlock.iow": "FALSE"}, environ={})
    assert (iow.xlock_write, iow.xlock_iow) == (True, False)
    with pytest.raises(ClientConfigError, match="hive.txn.xlock.iow: expected true or false"):
        ClientConfig.resolve({ADDRESS_CONF: "h:1", "spark.hadoop.hive.txn.xlock.iow": "yes"}, environ={})


def test_only_unavailable_is_retried_with_growing_backoff() -> None:
    sleeps: list[float] = []
    answers: list[object] = [unavailable(), unavailable(), "ok"]

    def call() -> object:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    backoff = Backoff(retries=3, initial_s=0.1, max_s=0.15, jitter=0)
    assert call_with_retry(call, method="M", address="a:1", backoff=backoff, sleep=sleeps.append) == "ok"
    assert sleeps == [0.1, 0.15]
    with pytest.raises(GatewayUnavailable, match="4 attempts"):
        call_with_retry(lambda: (_ for _ in ()).throw(unavailable()), method="M", address="a:1", backoff=backoff,
                        sleep=lambda s: None)


def test_unreachable_gateway_fails_after_bounded_retries_naming_the_address() -> None:
    address = f"127.0.0.1:{_free_port()}"
    with GatewayClient(ClientConfig(address, unavailable_retries=3, backoff_initial_s=0.05, backoff_max_s=0.1)) as c:
        started = time.monotonic()
        with pytest.raises(GatewayUnavailable) as err:
            c.open_txn()
    assert time.monotonic() - started < 10
    message = str(err.value)
    assert address in message and "4 attempts" in message and ADDRESS_ENV in message
    assert c.stats["OpenTxns"] == 1  # one logical call, four attempts


def test_other_errors_raise_at_once_with_the_gateway_message(client: GatewayClient, tmp_path: Path) -> None:
    with pytest.raises(GatewayError) as err:
        client.get_table("nope", "missing")
    assert err.value.code == C.NOT_FOUND and "nope" in err.value.details
    create_table(client, tmp_path / "t")
    with pytest.raises(GatewayError) as err:  # a transactional read without a snapshot
        list(client.get_partitions_by_names("lake", "events", ["ds=a"]))
    assert err.value.code == C.FAILED_PRECONDITION and "ValidWriteIdList" in err.value.details
    assert not isinstance(err.value, GatewayUnavailable)


def test_txn_commit_abort_snapshots_and_batched_reads_in_request_order(client: GatewayClient, tmp_path: Path) -> None:
    table = create_table(client, tmp_path / "t")
    values = [f"d{i:05d}" for i in range(2500)]
    with client.transaction() as txn:
        write_id = txn.allocate_write_id("lake", "events")
        added = client.add_partitions("lake", "events", [pb.Partition(values=[v]) for v in values], txn_id=txn.id,
                                      table_id=table.table_id)
    assert txn.state == "committed" and len(added) == 2500 and write_id == 1
    assert added[0].sd.location == f"file://{tmp_path}/t/ds=d00000"

    with pytest.raises(RuntimeError):
        with client.transaction() as doomed:
            client.add_partitions("lake", "events", [pb.Partition(values=["gone"])], txn_id=doomed.id)
            raise RuntimeError("the job failed")
    assert doomed.state == "aborted"

    snap = client.snapshot(["lake.events"])
    assert snap.tables[0].table_id == table.table_id
    assert ValidWriteIdList.parse(snap.tables[0].valid_write_id_list).is_write_id_aborted(2)
    read = snap.read_context("lake.events")
    names = client.list_partition_names("lake", "events", read, page_size=700)
    assert names == [f"ds={v}" for v in values]
    wanted = names[::-1] + ["ds=gone", "ds=missing"]
    before = client.stats["GetPartitionsByNames"]
    got = list(client.get_partitions_by_names("lake", "events", wanted, read, batch_size=300, in_flight=3))
    assert [p.name for p in got] == names[::-1]  # request order; unknown and aborted names left out
    assert client.stats["GetPartitionsByNames"] - before == 9
    assert {p.write_id for p in got} == {1}


def test_add_partitions_sends_a_batch_whose_answer_is_too_large_again_in_halves(pg_dsn: str, tmp_path: Path) -> None:
    """With hive.metastore.server.max.message.size at 64 KiB, the answer to a batch of 1,000 partitions
    (~130 KB of storage descriptors; the request ~15 KB) cannot be sent: the gateway refuses the batch
    before it commits, and the client sends it again in halves until each answer fits, so the write job
    gets every partition's location (before: GatewayError RESOURCE_EXHAUSTED, the job failed)."""
    proc = start_gateway(pg_dsn, "hive.metastore.server.max.message.size=65536")
    address = proc.wait_serving()
    try:
        with GatewayClient(ClientConfig(address, unavailable_retries=0)) as client:
            table = create_table(client, tmp_path / "t")
            values = [f"d{i:05d}" for i in range(1000)]
            with client.transaction() as txn:
                txn.allocate_write_id("lake", "events")
                added = client.add_partitions("lake", "events", [pb.Partition(values=[v]) for v in values],
                                              txn_id=txn.id, table_id=table.table_id)
            assert [p.name for p in added] == [f"ds={v}" for v in values]
            assert added[-1].sd.location == f"file://{tmp_path}/t/ds=d00999"
            assert client.stats["AddPartitions"] > 2  # refused whole, then halves (and their halves)
            read = client.snapshot(["lake.events"]).read_context("lake.events")
            assert client.list_partition_names("lake", "events", read) == [f"ds={v}" for v in values]
    finally:
        proc.stop()


def _refused(code: grpc.StatusCode = grpc.StatusCode.RESOURCE_EXHAUSTED) -> GatewayError:
    return GatewayError("refused", method="M", code=code)


def test_in_halves_splits_a_batch_refused_as_too_large_depth_first_keeping_the_order() -> None:
    calls: list[list[int]] = []

    def send(batch: Sequence[int]) -> list[int]:  # refuses more than 3 items
        calls.append(list(batch))
        if len(batch) > 3:
            raise _refused()
        return [i * 10 for i in batch]

    assert in_halves(list(range(10)), send) == [i * 10 for i in range(10)]
    assert calls == [list(range(10)), [0, 1, 2, 3, 4], [0, 1], [2, 3, 4], [5, 6, 7, 8, 9], [5, 6], [7, 8, 9]]
    calls.clear()
    assert in_halves([1, 2, 3, 4], send, first=lambda: (_ for _ in ()).throw(_refused())) == [10, 20, 30, 40]
    assert calls == [[1, 2], [3, 4]], "first() was the first attempt"


def test_in_halves_raises_a_refusal_of_one_item_and_any_other_error_at_once() -> None:
    calls: list[int] = []

    def refuse(batch: Sequence[int]) -> list[int]:
        calls.append(len(batch))
        raise _refused()

    with pytest.raises(GatewayError, match="refused"):  # not about size: down one path, then raised
        in_halves(list(range(1000)), refuse)
    assert calls == [1000, 500, 250, 125, 62, 31, 15, 7, 3, 1]
    calls.clear()

    def fail(batch: Sequence[int]) -> list[int]:
        calls.append(len(batch))
        raise _refused(grpc.StatusCode.NOT_FOUND)

    with pytest.raises(GatewayError):
        in_halves(list(range(8)), fail)
    assert calls == [8]


def test_get_partitions_by_names_asks_for_a_batch_whose_answer_is_too_large_again_in_halves(
        pg_dsn: str, tmp_path: Path) -> None:
    """With hive.metastore.server.max.message.size at 64 KiB, the answer to a batch of 1,000 partitions
    (~126 KB) cannot be sent: the gateway refuses it, and the client asks again in halves, in order, the
    other batches in flight (before: GatewayError RESOURCE_EXHAUSTED, the job failed). A partition too
    large for any answer (written through a gateway whose setting was larger) fails the read, named."""
    values = [f"d{i:05d}" for i in range(3000)]
    writer = start_gateway(pg_dsn, "hive.metastore.server.max.message.size=1048576")
    try:
        with GatewayClient(ClientConfig(writer.wait_serving(), unavailable_retries=0)) as client:
            table = create_table(client, tmp_path / "t")
            with client.transaction() as txn:
                txn.allocate_write_id("lake", "events")
                client.add_partitions("lake", "events", [pb.Partition(values=[v]) for v in values],
                                      txn_id=txn.id, table_id=table.table_id)
                client.add_partitions("lake", "events", [pb.Partition(
                    values=["zbig"], parameters={f"p{i}": "x" * 10_000 for i in range(7)})], txn_id=txn.id)
    finally:
        writer.stop()
    proc = start_gateway(pg_dsn, "hive.metastore.server.max.message.size=65536")
    try:
        with GatewayClient(ClientConfig(proc.wait_serving(), unavailable_retries=0)) as client:
            read = client.snapshot(["lake.events"]).read_context("lake.events")
            names = [f"ds={v}" for v in values]
            got = list(client.get_partitions_by_names("lake", "events", names[::-1], read, in_flight=2))
            assert [p.name for p in got] == names[::-1]
            assert got[0].sd.location == f"file://{tmp_path}/t/ds=d02999"
            assert client.stats["GetPartitionsByNames"] > 3  # refused whole, then halves (and their halves)
            with pytest.raises(GatewayError) as too_large:
                list(client.get_partitions_by_names("lake", "events", [names[0], "ds=zbig"], read))
            assert too_large.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "partition ds=zbig of lake.events alone takes" in too_large.value.details
            assert "hive.metastore.server.max.message.size (65536)" in too_large.value.details
            # AlterPartitions answers what it altered: the same halving (before: refused whole)
            with client.transaction() as txn:
                txn.allocate_write_id("lake", "events")
                altered = client.alter_partitions("lake", "events", [
                    pb.Partition(values=[v], parameters={"tag": "t"}) for v in values[:1000]], txn_id=txn.id)
            assert [p.name for p in altered] == names[:1000] and client.stats["AlterPartitions"] > 2
    finally:
        proc.stop()


def test_filter_reads_answer_for_the_snapshot(client: GatewayClient, tmp_path: Path) -> None:
    if not client.has_filter_reads:
        pytest.skip("these protos have no GetPartitionsByFilter")
    create_table(client, tmp_path / "t")
    with client.transaction() as txn:
        client.add_partitions("lake", "events", [pb.Partition(values=[f"2024-01-0{d}"]) for d in range(1, 6)],
                              txn_id=txn.id)
    snap = client.snapshot(["lake.events"])
    with client.transaction() as later:  # committed after the snapshot: not in its answer
        client.add_partitions("lake", "events", [pb.Partition(values=["2024-01-09"])], txn_id=later.id)
    got = client.get_partitions_by_filter("lake", "events", "ds >= '2024-01-03'", snap.read_context("lake.events"))
    assert [p.name for p in got] == ["ds=2024-01-03", "ds=2024-01-04", "ds=2024-01-05"]
    with pytest.raises(GatewayError) as err:
        client.get_partitions_by_filter("lake", "events", "ds >>> 1", snap.read_context("lake.events"))
    assert err.value.code == C.INVALID_ARGUMENT


def test_heartbeat_keeper_outlives_the_timeout_and_surfaces_an_abort(pg_dsn: str, tmp_path: Path) -> None:
    proc = start_gateway(pg_dsn, "hive.txn.timeout=1s", "hive.timedout.txn.reaper.start=100ms",
                         "hive.timedout.txn.reaper.interval=200ms")
    address = proc.wait_serving()
    try:
        config = ClientConfig(address, txn_timeout_s=1.0)  # heartbeats every 0.5 s
        with GatewayClient(config) as client, GatewayClient(config) as other:
            create_table(client, tmp_path / "t")
            with client.transaction() as kept:
                client.add_partitions("lake", "events", [pb.Partition(values=["kept"])], txn_id=kept.id)
                time.sleep(2.5)  # well past hive.txn.timeout: only the keeper keeps it alive
                assert kept.keeper is not None and kept.keeper.beats >= 3
            assert kept.state == "committed"

            seen: list[TxnAborted] = []
            victim = client.transaction(on_abort=seen.append)
            other.abort_txn(victim.id)  # e.g. an operator, or the reaper after a driver stall
            deadline = time.monotonic() + 5
            while not seen and time.monotonic() < deadline:
                time.sleep(0.05)
            assert seen and seen[0].txn_id == victim.id and "aborted" in str(seen[0])
            with pytest.raises(TxnAborted):
                victim.check()
            with pytest.raises(TxnAborted):
                victim.commit()
            names = client.list_partition_names("lake", "events", client.snapshot(["lake.events"]).read_context(
                "lake.events"))
            assert names == ["ds=kept"]
    finally:
        proc.stop()


class _StalledHeartbeats:
    """The client's Transactions stub, with its next `stalls` Heartbeat calls hanging to their deadline."""

    def __init__(self, real: Any, stalls: int) -> None:
        self.real, self.stalls = real, stalls

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def Heartbeat(self, request: Any, timeout: float | None = None) -> Any:  # noqa: N802 - the stub's name
        if self.stalls > 0:
            self.stalls -= 1
            time.sleep(timeout or 0)
            raise deadline_exceeded()
        return self.real.Heartbeat(request, timeout=timeout)


def test_one_stalled_heartbeat_does_not_let_the_reaper_abort_the_txn(pg_dsn: str, tmp_path: Path) -> None:
    """A beat that hangs to its deadline is retried soon: before, the next beat came a whole interval
    (hive.txn.timeout / 2) after the failure, past the time-out, and the reaper aborted a healthy txn."""
    proc = start_gateway(pg_dsn, "hive.txn.timeout=2s", "hive.timedout.txn.reaper.start=100ms",
                         "hive.timedout.txn.reaper.interval=100ms")
    address = proc.wait_serving()
    try:
        config = ClientConfig(address, txn_timeout_s=2.0)  # the keeper beats every 1 s
        with GatewayClient(config) as client:
            create_table(client, tmp_path / "t")
            stubs: Any = client
            stubs.txns = _StalledHeartbeats(client.txns, stalls=1)
            txn = client.transaction()
            time.sleep(3.5)  # a Spark job at work; the gateway answers every beat after the first
            assert txn.keeper is not None and txn.keeper.failures == 1 and txn.keeper.beats >= 2
            txn.commit()
            assert txn.state == "committed"
    finally:
        proc.stop()


def test_a_lock_wait_on_a_gateway_that_stops_answering_ends_in_an_error(pg_dsn: str, tmp_path: Path) -> None:
    """Lock, CheckLock and Unlock carry the client's call deadline like every other call: before, a
    job waiting for a lock hung for as long as the gateway did (a stop-the-world pause, a wedged host)."""
    import signal

    proc = start_gateway(pg_dsn)
    address = proc.wait_serving()
    try:
        config = ClientConfig(address, call_timeout_s=1.0, unavailable_retries=0, lock_num_retries=1000,
                              lock_sleep_between_retries_s=0.2)
        with GatewayClient(config) as client:
            create_table(client, tmp_path / "t")
            holder = client.transaction(heartbeat=False)
            holder.lock(Statement.INSERT_OVERWRITE, "lake", "events")  # EXCLUSIVE
            reader = client.transaction(heartbeat=False)
            outcome: list[object] = []

            def wait_for_the_lock() -> None:
                try:
                    outcome.append(reader.lock(Statement.SELECT, "lake", "events"))  # CheckLock every 0.2 s
                except BaseException as exc:  # noqa: BLE001 - what ended the wait is the result
                    outcome.append(exc)

            waiter = threading.Thread(target=wait_for_the_lock, daemon=True)
            waiter.start()
            time.sleep(1.0)
            assert waiter.is_alive() and not outcome
            os.kill(proc.pid, signal.SIGSTOP)
            try:
                waiter.join(15.0)
                assert not waiter.is_alive(), "the lock wait outlived the gateway's silence"
            finally:
                os.kill(proc.pid, signal.SIGCONT)
            assert len(outcome) == 1 and isinstance(outcome[0], GatewayError)
            assert outcome[0].code == grpc.StatusCode.DEADLINE_EXCEEDED
            holder.abort()
            reader.abort()
    finally:
        proc.stop()


def test_lock_helper_waits_with_hive_retries_then_gives_up_and_releases(gateway_address: str, tmp_path: Path) -> None:
    config = ClientConfig(gateway_address, lock_num_retries=3, lock_sleep_between_retries_s=0.2)
    with GatewayClient(config) as client:
        create_table(client, tmp_path / "t")
        holder = client.transaction()
        client.lock_table_for(Statement.DROP_TABLE, "lake", "events", holder.id)  # EXCLUSIVE on the table
        reader = client.transaction()
        started = time.monotonic()
        with pytest.raises(LockAcquireTimeout) as err:
            reader.lock(Statement.SELECT, "lake", "events")
        assert err.value.retries == 3 and 0.4 < time.monotonic() - started < 5  # 0.1 + 0.2 + 0.2 s of back-off
        shown = client.locks.ShowLocks(lpb.ShowLocksRequest(db_name="lake", table_name="events"))
        assert [lock.txn_id for lock in shown.locks] == [holder.id]  # the waiting request was released

        waiter_result: list[lpb.LockResponse] = []
        waiter = threading.Thread(target=lambda: waiter_result.append(reader.lock(Statement.SELECT, "lake", "events")))
        waiter.start()
        time.sleep(0.3)
        holder.commit()  # releases the EXCLUSIVE lock; the reader's back-off finds it free
        waiter.join(10)
        assert waiter_result and waiter_result[0].state == lpb.ACQUIRED
        reader.commit()


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _event_loops() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, asyncio.AbstractEventLoop))


def test_lock_calls_leave_nothing_behind_and_log_no_event_loop_errors(
        gateway_address: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Locks from sync code, from inside a running event loop (a notebook) and from two threads at
    once: no thread, file descriptor or event loop is left behind per call, and nothing is logged as an
    unhandled exception in an event loop. Before, every lock ran on a new grpc.aio channel in a new
    event loop: gRPC kept each loop (its process-wide poller binds every loop that uses grpc.aio and
    never lets go), and two loops alive at once (two threads locking; a gateway in the same process)
    raced for its wake-up byte, the loser logging `BlockingIOError: [Errno 11]` from
    PollerCompletionQueue._handle_events."""
    rounds = 20
    config = ClientConfig(gateway_address, lock_num_retries=1000, lock_sleep_between_retries_s=0.02)
    with GatewayClient(config) as client:
        create_table(client, tmp_path / "t")
        create_table(client, tmp_path / "u", table="other")

        def lock_once(table: str = "events") -> None:
            with client.transaction(heartbeat=False) as txn:
                assert txn.lock(Statement.SELECT, "lake", table).state == lpb.ACQUIRED

        lock_once()  # gRPC's one-time state (its threads, the channel's connection) is made now
        fds, threads, loops = _open_fds(), threading.active_count(), _event_loops()
        caplog.set_level(logging.ERROR, logger="asyncio")
        for _ in range(rounds):
            lock_once()

        async def in_a_running_loop() -> None:
            for _ in range(rounds):
                lock_once()

        asyncio.run(in_a_running_loop())

        holder = client.transaction(heartbeat=False)
        holder.lock(Statement.INSERT_OVERWRITE, "lake", "events")  # EXCLUSIVE: the waiter polls CheckLock
        waiter = client.transaction(heartbeat=False)
        waited: list[object] = []
        thread = threading.Thread(target=lambda: waited.append(waiter.lock(Statement.SELECT, "lake", "events")))
        thread.start()
        for _ in range(rounds):  # meanwhile, this thread's locks on another table
            lock_once("other")
        holder.commit()
        thread.join(30)
        assert not thread.is_alive() and waited and waited[0].state == lpb.ACQUIRED  # type: ignore[attr-defined]
        waiter.commit()
        assert not [r for r in caplog.records if r.name == "asyncio"], caplog.text
        assert threading.active_count() <= threads, threading.enumerate()
        assert _open_fds() <= fds + 2, sorted(os.listdir("/proc/self/fd"))
        assert _event_loops() <= loops


_FORK_SCRIPT = r"""
import json, os, sys
import pipeline.client as pc  # first: turns on gRPC fork support before grpc is imported
config = pc.ClientConfig(sys.argv[1])
parent = pc.process_client(config)
assert pc.process_client(config) is parent  # reused, not rebuilt
parent.valid_txn_list()
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    child = pc.process_client(config)
    out = {"new_client": child is not parent, "stats": pc.process_stats(), "works": bool(child.valid_txn_list()),
           "reused": pc.process_client(config) is child}
    os.write(w, json.dumps(out).encode())
    os._exit(0)
os.waitpid(pid, 0)
child = json.loads(os.read(r, 10000))
print(json.dumps({"child": child, "parent_pid": os.getpid(), "parent_works": bool(parent.valid_txn_list()),
                  "parent_stats": pc.process_stats()}))
"""


def test_one_channel_per_process_rebuilt_after_fork(gateway_address: str) -> None:
    out = subprocess.run([sys.executable, "-c", _FORK_SCRIPT, gateway_address], cwd=REPO, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    child = report["child"]
    assert child["new_client"] and child["works"] and child["reused"]
    assert child["stats"]["pid"] != report["parent_pid"] and child["stats"]["channels_created"] == 1
    assert report["parent_works"] and report["parent_stats"]["channels_created"] == 1


def test_acid_names_and_what_a_snapshot_reads(tmp_path: Path) -> None:
    assert delta_dir_name(5) == "delta_0000005_0000005" and delta_dir_name(12345678, 12345679) == \
        "delta_12345678_12345679"
    assert parse_acid_dir("delta_0000005_0000007_0001") is not None and parse_acid_dir("part-0.parquet") is None
    snap = ValidWriteIdList.parse("db.t:6:4:4:5")  # 4 open, 5 aborted, 6 committed
    names = ["delta_0000001_0000001", "delta_0000004_0000004", "delta_0000005_0000005", "delta_0000006_0000006",
             "delta_0000007_0000007", "_spark_staging", ".hidden", "000000_0", "delta_0000001_0000003"]
    base, deltas, originals = choose_dirs(names, snap)
    assert base is None and [d.name for d in deltas] == ["delta_0000001_0000003", "delta_0000006_0000006"]
    assert originals == ["000000_0"]
    base, deltas, originals = choose_dirs(names + ["base_0000003"], snap)
    assert base is not None and base.name == "base_0000003" and originals == []
    assert [d.name for d in deltas] == ["delta_0000006_0000006"]
    for name in ("delta_0000001_0000001", "delta_0000004_0000004"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "part-0.parquet").write_bytes(b"x" * 10)
        (tmp_path / name / ".part-0.parquet.crc").write_bytes(b"c")
    assert visible_files(f"file://{tmp_path}", snap) == [(str(tmp_path / "delta_0000001_0000001/part-0.parquet"), 10)]
    assert visible_files(str(tmp_path / "missing"), snap) == []
    with pytest.raises(ValueError, match="local filesystem"):
        visible_files("s3://bucket/x", snap)
    assert json.dumps(sorted(p for p, _ in visible_files(str(tmp_path), None)))  # non-ACID: every visible file
