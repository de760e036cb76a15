"""A client that holds txns and locks through one gateway and then disappears (its gateway killed, or
its own channel closed): what the time-out reaper must clean up. And the recovery probe: how long
after a fault a new commit is applied by every live gateway's poller."""

from __future__ import annotations

import asyncio
import time

import grpc

from loadtest.consistency.model import CALL_TIMEOUT_S, DB, KEYS, table_message
from loadtest.faults.cluster import Cluster, Member
from loadtest.faults.ledger import PhaseStats
from loadtest.harness import Endpoint
from hive import names as hive_names
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import events_pb2 as epb
from protos.metastore.v1 import locks_pb2 as lpb
from protos.metastore.v1 import locks_pb2_grpc
from protos.metastore.v1 import transactions_pb2 as tpb

HELD_TABLES = ("h0", "h1", "h2")  # only the holders lock and write these
PROBE_TABLE = "probe"  # an external table the recovery probe alters


async def create_tables(cluster: Cluster) -> None:
    o = cluster.the_oracle.ep
    for t in HELD_TABLES:
        await o.catalog.CreateTable(pb.CreateTableRequest(table=table_message(t, acid=True)), timeout=CALL_TIMEOUT_S)
    await o.catalog.CreateTable(pb.CreateTableRequest(table=table_message(PROBE_TABLE, acid=False)),
                                timeout=CALL_TIMEOUT_S)


class Holder:
    """Through one gateway, on its own channel: txn 1 writes a partition of h0 under an EXCLUSIVE lock
    on h0, txn 2 writes one of h1 under a SHARED_WRITE lock, and a standalone EXCLUSIVE lock on h2; all
    kept alive by heartbeats through that gateway only, until `vanish()` or the gateway's death."""

    def __init__(self, cluster: Cluster, via: Member, label: str) -> None:
        self.cluster = cluster
        self.via = via
        self.label = label
        self.txn_ids: list[int] = []
        self.lock_ids: list[int] = []
        self.partitions: list[tuple[str, str]] = []  # (table, name) written, never committed
        self._ep: Endpoint | None = None
        self._beat: asyncio.Task[None] | None = None

    async def hold(self) -> None:
        ep = self._ep = await Endpoint.open(f"{self.via.name}-holder", self.via.ep.address)
        locks = locks_pb2_grpc.LocksStub(ep.channel)
        calls, g = self.cluster.calls, self.via.name
        opened = await calls(g, "OpenTxns", ep.txns.OpenTxns(tpb.OpenTxnsRequest(
            num_txns=2, user="faults", hostname="holder", agent_info=self.label), timeout=CALL_TIMEOUT_S))
        self.txn_ids = list(opened.txn_ids)
        for txn, table, kind in zip(self.txn_ids, HELD_TABLES, (lpb.EXCLUSIVE, lpb.SHARED_WRITE)):
            await calls(g, "AllocateTableWriteIds", ep.txns.AllocateTableWriteIds(tpb.AllocateTableWriteIdsRequest(
                txn_ids=[txn], db_name=DB, table_name=table), timeout=CALL_TIMEOUT_S))
            self.lock_ids.append(await self._lock(locks, table, kind, txn))
            values = (self.label, str(txn))
            await calls(g, "AddPartitions", ep.catalog.AddPartitions(pb.AddPartitionsRequest(
                db_name=DB, table_name=table, txn_id=txn,
                partitions=[pb.Partition(values=list(values), parameters={"tag": f"held{txn}"})]),
                timeout=CALL_TIMEOUT_S))
            self.partitions.append((table, hive_names.make_partition_name(KEYS, values)))
        self.lock_ids.append(await self._lock(locks, HELD_TABLES[2], lpb.EXCLUSIVE, 0))
        self._beat = asyncio.create_task(self._heartbeat())

    async def _lock(self, locks: locks_pb2_grpc.LocksStub, table: str, kind: int, txn: int) -> int:
        got = await self.cluster.calls(self.via.name, "Lock", locks.Lock(lpb.LockRequest(
            components=[lpb.LockComponent(db_name=DB, table_name=table, type=kind)],  # type: ignore[arg-type]
            txn_id=txn, user="faults", hostname="holder"), timeout=CALL_TIMEOUT_S))
        if got.state != lpb.ACQUIRED:
            raise AssertionError(f"the holder's lock on {table} was not granted at once: {got}")
        return int(got.lock_id)

    async def _heartbeat(self) -> None:
        assert self._ep is not None
        timing = self.cluster.timing
        while True:
            await asyncio.sleep(timing.heartbeat_s)
            try:
                await self.cluster.calls(self.via.name, "Heartbeat", self._ep.txns.Heartbeat(tpb.HeartbeatRequest(
                    txn_ids=self.txn_ids, lock_ids=self.lock_ids[-1:]), timeout=timing.heartbeat_s))
            except grpc.aio.AioRpcError:
                pass  # its gateway is gone: the client keeps trying it, as a client pinned to one host does

    async def vanish(self, in_flight: int = 8) -> None:
        """The client goes away without a word: no commit, no abort, no unlock, no more heartbeats; and
        with `in_flight` writes under its txns still running, which the gateway sees cancelled midway."""
        if self._beat is not None:
            self._beat.cancel()
            await asyncio.gather(self._beat, return_exceptions=True)
        assert self._ep is not None
        writes = []
        for i in range(in_flight):
            txn, table = self.txn_ids[i % 2], HELD_TABLES[i % 2]
            values = (f"{self.label}x", str(i))
            self.partitions.append((table, hive_names.make_partition_name(KEYS, values)))
            writes.append(asyncio.ensure_future(self._ep.catalog.AddPartitions(pb.AddPartitionsRequest(
                db_name=DB, table_name=table, txn_id=txn,
                partitions=[pb.Partition(values=list(values), parameters={"tag": f"held{txn}"})]),
                timeout=CALL_TIMEOUT_S)))
        await asyncio.sleep(0.005)  # sent; most not answered yet
        await self._ep.channel.close()  # cancels them: the gateway's handlers are cancelled mid-call
        await asyncio.gather(*writes, return_exceptions=True)

    async def stop(self) -> None:
        if self._beat is not None:
            self._beat.cancel()
            await asyncio.gather(self._beat, return_exceptions=True)
        if self._ep is not None:
            await self._ep.channel.close()

    async def wait_reaped(self, since: float, stats: PhaseStats) -> None:
        """Until its txns are no longer open and its locks are gone (asked through the oracle); the
        time from `since` into stats.figures["reap_s"], checked against hive.txn.timeout plus the
        reaper's interval. Then: its partitions are not visible, and an EXCLUSIVE lock on all three
        tables is granted at once through another gateway."""
        o, timing = self.cluster.the_oracle, self.cluster.timing
        bound = timing.txn_timeout_s + 2 * timing.reaper_interval_s + timing.heartbeat_s + 2.0
        async with asyncio.timeout(bound + 30):
            while True:
                open_txns = await o.ep.txns.ShowTransactions(tpb.ShowTransactionsRequest(state="OPEN"),
                                                             timeout=CALL_TIMEOUT_S)
                held = await o.locks.ShowLocks(lpb.ShowLocksRequest(db_name=DB, extended=True), timeout=CALL_TIMEOUT_S)
                still = ({t.txn_id for t in open_txns.transactions} & set(self.txn_ids)
                         or {lk.lock_id for lk in held.locks} & set(self.lock_ids))
                if not still:
                    break
                await asyncio.sleep(0.1)
        stats.figures["reap_s"] = reap_s = time.monotonic() - since
        if reap_s > bound:
            stats.violate(f"{self.label}: txns {self.txn_ids} / locks {self.lock_ids} reaped after {reap_s:.1f}s, "
                          f"beyond hive.txn.timeout + reaper interval ({bound:.1f}s)")
        aborted = await o.ep.txns.ShowTransactions(tpb.ShowTransactionsRequest(state="ABORTED"), timeout=CALL_TIMEOUT_S)
        if not set(self.txn_ids) <= {t.txn_id for t in aborted.transactions}:
            stats.violate(f"{self.label}: txns {self.txn_ids} are not listed ABORTED after the time-out")
        for table, name in self.partitions:
            state = await o.ep.txns.GetOpenTxns(tpb.GetOpenTxnsRequest(), timeout=CALL_TIMEOUT_S)
            ids = await o.ep.txns.GetValidWriteIds(tpb.GetValidWriteIdsRequest(
                full_table_names=[f"{DB}.{table}"], valid_txn_list=state.valid_txn_list), timeout=CALL_TIMEOUT_S)
            got = await o.ep.catalog.GetPartitionsByNames(pb.GetPartitionsByNamesRequest(
                db_name=DB, table_name=table, names=[name], read=pb.ReadContext(
                    valid_write_id_list=ids.tables[0].valid_write_id_list, table_id=ids.tables[0].table_id)),
                timeout=CALL_TIMEOUT_S)
            if got.partitions:
                stats.violate(f"{self.label}: the reaped txn's partition {table}/{name} is visible")
        other = next(m for m in self.cluster.live() if m.name != self.via.name)
        probe = await other.locks.Lock(lpb.LockRequest(
            components=[lpb.LockComponent(db_name=DB, table_name=t, type=lpb.EXCLUSIVE) for t in HELD_TABLES],
            user="faults", hostname="checker"), timeout=CALL_TIMEOUT_S)
        if probe.state != lpb.ACQUIRED:
            stats.violate(f"{self.label}: an EXCLUSIVE lock on {HELD_TABLES} still waits after the reaping: {probe}")
        await other.locks.Unlock(lpb.UnlockRequest(lock_id=probe.lock_id), timeout=CALL_TIMEOUT_S)
        stats.counts["reaped_txns_checked"] += len(self.txn_ids)
        stats.counts["reaped_locks_checked"] += len(self.lock_ids)


async def recovery_s(cluster: Cluster, since: float, tag: str, stats: PhaseStats) -> float:
    """Seconds from `since` (the database's return, a SIGCONT, a kill) until a commit made after it is
    applied by every live gateway's poller. The probe write goes through the oracle and is retried
    while the database is still refusing it (counted in the phase like every call); the time until it
    was acknowledged goes to stats.figures["probe_commit_s"], the slowest gateway's apply delay after
    that ack to ["probe_apply_s"]: the two parts of the recovery (the write path's, the poller's); the
    largest poller_lag_ms the gateways report then to ["poller_lag_after_s"]."""
    o = cluster.the_oracle
    async with asyncio.timeout(60):
        while True:
            try:
                got = await cluster.calls("oracle", "AlterTable", o.ep.catalog.AlterTable(pb.AlterTableRequest(
                    db_name=DB, table_name=PROBE_TABLE, table=table_message(PROBE_TABLE, acid=False, tag=tag)),
                    timeout=CALL_TIMEOUT_S))
                break
            except grpc.aio.AioRpcError:
                await asyncio.sleep(0.05)
        acked = time.monotonic()
        pending = {m.name: m for m in cluster.live()}
        lag_ms = 0.0
        while pending:
            positions = await asyncio.gather(*(m.ep.stats() for m in pending.values()))
            for name, s in zip(list(pending), positions):
                if s.poller_position >= got.event_id:
                    del pending[name]
                    lag_ms = max(lag_ms, s.poller_lag_ms)
            if pending:
                await asyncio.sleep(0.02)
    done = time.monotonic()
    # Admin.CacheStats' own figure once the probe is applied: the commit-to-apply delay of the last event.
    stats.figures["poller_lag_after_s"] = lag_ms / 1000
    stats.figures["probe_commit_s"] = acked - since
    stats.figures["probe_apply_s"] = done - acked
    return done - since


async def log_head(cluster: Cluster) -> int:
    got = await cluster.the_oracle.ep.events.GetCurrentNotificationEventId(
        epb.GetCurrentNotificationEventIdRequest(), timeout=CALL_TIMEOUT_S)
    return int(got.event_id)
