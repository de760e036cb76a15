"""`GatewayClient`: the generated stubs behind calls a Spark job needs, over one synchronous channel.

Design note. Spark runs Python task code synchronously in worker processes, so the client is
synchronous too: no event loop to own, none to clash with (a notebook has one running already).
Concurrency where it pays, several partition batches in flight, comes from the sync stubs'
`.future()` calls over the one channel: a window of `in_flight` requests is outstanding while the
caller consumes the oldest answer, in request order, with no thread per request. A channel is safe
to share between threads, so one client serves every task of an executor process (see
`pipeline.client.process`).

Every call goes through `call_with_retry` (UNAVAILABLE only, bounded backoff) and errors come out
as `GatewayError` subclasses carrying the gateway's message.

Locks wait as Hive's client does (`pipeline.locking`: the asyncio `LockClient` the gateway's tests
use, and `BlockingLockClient`, its synchronous twin, here): `lock()` runs the blocking one on the
client's own channel, in the caller's thread. Not a grpc.aio channel in an event loop of its own, as
before: gRPC's asyncio layer (grpcio 1.75) has one poller per process that wakes, through one
non-blocking socket, every loop that made a grpc.aio object while any is alive, and keeps those loops
(closed ones too) until the last is gone; so two such loops alive at once (two threads locking, or a
gateway's or a notebook's grpc.aio code in the same process) race for each wake-up byte, the loser
logging `BlockingIOError: [Errno 11]` from PollerCompletionQueue._handle_events (grpc/grpc#25364),
and each lock paid for a new loop, channel and TCP connection.
"""

from __future__ import annotations

import collections
import functools
import logging
import os
import time
from typing import Any, Callable, Iterable, Iterator, Sequence, TypeVar

import grpc

from pipeline.client.channel import open_channel
from pipeline.client.config import ClientConfig
from pipeline.client.errors import GatewayError, TxnAborted
from pipeline.client.retry import Backoff, call_with_retry, translate
from pipeline.client.snapshot import Snapshot, TableSnapshot, full_table_name
from pipeline.client.txn import Transaction
from pipeline.locking import BlockingLockClient, RetryPolicy, to_request
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import catalog_pb2_grpc, locks_pb2_grpc
from protos.metastore.v1 import locks_pb2 as lpb
from protos.metastore.v1 import transactions_pb2 as tpb
from protos.metastore.v1 import transactions_pb2_grpc
from hive.lock_rules import LockPolicy, Statement, TableRef, statement_locks

_log = logging.getLogger(__name__)
T = TypeVar("T")
R = TypeVar("R")


def _chunks(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


def in_halves(batch: Sequence[T], send: Callable[[Sequence[T]], list[R]],
              first: Callable[[], list[R]] | None = None) -> list[R]:
    """`send(batch)` (or `first()`: that call already made another way), and when the gateway refuses it
    as too large (RESOURCE_EXHAUSTED, nothing of it done: more items than its metastore.gateway.max.batch.size,
    or an answer over its hive.metastore.server.max.message.size), the two halves instead, each the same
    way, down to one item; the answers joined in the batch's order. Depth first, so a refusal that is
    not about size (too many concurrent calls) is raised by the first single item refused, after about
    log2(len(batch)) more calls. For calls that may be split: reads, and writes all or nothing per call."""
    try:
        return first() if first is not None else send(batch)
    except GatewayError as exc:
        if exc.code != grpc.StatusCode.RESOURCE_EXHAUSTED or len(batch) == 1:
            raise
    half = len(batch) // 2
    return [*in_halves(batch[:half], send), *in_halves(batch[half:], send)]


def _every_page(page: Callable[[str], tuple[Sequence[R], str]]) -> list[R]:
    """Every item of a paged read: `page(token)` answers a page and the next page's token ("" after the last)."""
    items: list[R] = []
    token = ""
    while True:
        found, token = page(token)
        items.extend(found)
        if not token:
            return items


class GatewayClient:
    """One channel to one gateway. Thread-safe; not fork-safe (use `process_client` in Spark tasks)."""

    def __init__(self, config: ClientConfig, *, sleep: Callable[[float], object] = time.sleep) -> None:
        self.config = config
        self.pid = os.getpid()
        self._sleep = sleep
        self._backoff = Backoff(retries=config.unavailable_retries, initial_s=config.backoff_initial_s,
                                max_s=config.backoff_max_s)
        self._channel = open_channel(config)  # TLS and the token when the config has them
        self.catalog = catalog_pb2_grpc.CatalogStub(self._channel)
        self.txns = transactions_pb2_grpc.TransactionsStub(self._channel)
        self.locks = locks_pb2_grpc.LocksStub(self._channel)
        self.stats: collections.Counter[str] = collections.Counter()

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> GatewayClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- plumbing -----------------------------------------------------------------------------

    def call(self, rpc: grpc.UnaryUnaryMultiCallable, request: Any, *, method: str,
             first_error: grpc.RpcError | None = None, timeout_s: float | None = None) -> Any:
        """One unary call with the client's deadline (or `timeout_s`) and UNAVAILABLE retries."""
        self.stats[method] += 1
        timeout = self.config.call_timeout_s if timeout_s is None else timeout_s
        return call_with_retry(lambda: rpc(request, timeout=timeout), method=method,
                               address=self.config.address, backoff=self._backoff, sleep=self._sleep,
                               first_error=first_error)

    # -- transactions -------------------------------------------------------------------------

    def open_txn(self) -> int:
        reply = self.call(self.txns.OpenTxns, tpb.OpenTxnsRequest(
            num_txns=1, user=self.config.user, hostname=self.config.hostname, agent_info=self.config.agent_info),
            method="OpenTxns")
        return int(reply.txn_ids[0])

    def commit_txn(self, txn_id: int) -> int:
        """Commit; answers the commit's event id (0 if it was committed already). An aborted txn
        raises `GatewayError` with code ABORTED (see `Transaction.commit` for `TxnAborted`)."""
        return int(self.call(self.txns.CommitTxn, tpb.CommitTxnRequest(txn_id=txn_id), method="CommitTxn").event_id)

    def abort_txn(self, txn_id: int) -> None:
        self.call(self.txns.AbortTxns, tpb.AbortTxnsRequest(txn_ids=[txn_id]), method="AbortTxns")

    def heartbeat(self, txn_ids: Sequence[int] = (), lock_ids: Sequence[int] = ()) -> tpb.HeartbeatResponse:
        return self.call(self.txns.Heartbeat, tpb.HeartbeatRequest(txn_ids=list(txn_ids), lock_ids=list(lock_ids)),
                         method="Heartbeat")

    def allocate_write_id(self, txn_id: int, db: str, table: str) -> int:
        """The txn's write id for the table (allocated once; asking again answers the same id)."""
        reply = self.call(self.txns.AllocateTableWriteIds, tpb.AllocateTableWriteIdsRequest(
            txn_ids=[txn_id], db_name=db, table_name=table), method="AllocateTableWriteIds")
        return int(reply.txn_to_write_ids[0].write_id)

    def valid_txn_list(self, current_txn_id: int = 0) -> str:
        return str(self.call(self.txns.GetOpenTxns, tpb.GetOpenTxnsRequest(current_txn_id=current_txn_id),
                             method="GetOpenTxns").valid_txn_list)

    def snapshot(self, tables: Iterable[str], txn_id: int = 0) -> Snapshot:
        """The ValidTxnList (as txn `txn_id` sees it, or outside any txn), then each table's
        ValidWriteIdList and table id for it. `tables` are `db.table` names."""
        names = [t.lower() for t in tables]
        txn_list = self.valid_txn_list(txn_id)
        reply = self.call(self.txns.GetValidWriteIds, tpb.GetValidWriteIdsRequest(
            full_table_names=names, valid_txn_list=txn_list), method="GetValidWriteIds")
        got = {t.full_table_name.lower(): t for t in reply.tables}
        return Snapshot(txn_list, txn_id, tuple(
            TableSnapshot(n, got[n].valid_write_id_list, int(got[n].table_id), txn_id) for n in names))

    # -- locks --------------------------------------------------------------------------------

    def lock(self, request: lpb.LockRequest) -> lpb.LockResponse:
        """Lock, waiting as Hive's DbLockManager does (`pipeline.locking`: 100 ms doubling up to
        hive.lock.sleep.between.retries, hive.lock.numretries times); `LockAcquireTimeout` when
        still waiting then. Not retried on UNAVAILABLE: a retried Lock could enqueue twice."""
        policy = RetryPolicy(num_retries=self.config.lock_num_retries,
                             max_sleep_s=self.config.lock_sleep_between_retries_s)
        self.stats["Lock"] += 1
        try:
            return BlockingLockClient(self.locks, policy, call_timeout_s=self.config.call_timeout_s).acquire(request)
        except grpc.RpcError as exc:
            raise translate(exc, "Lock", self.config.address) from exc

    def lock_table_for(self, statement: Statement, db: str, table: str, txn_id: int, *,
                       xlock_iow: bool | None = None) -> lpb.LockResponse:
        """The lock Hive takes for `statement` on a transactional table, bound to `txn_id`
        (released by its commit or abort): SELECT -> SHARED_READ; INSERT -> SHARED_READ with
        hive.txn.xlock.write=true; INSERT OVERWRITE -> EXCLUSIVE with hive.txn.xlock.iow=true, else
        EXCL_WRITE (hive.lock_rules; both settings from the config, `xlock_iow` overriding its)."""
        ref = TableRef(db, table, transactional=True)
        policy = LockPolicy(xlock_write=self.config.xlock_write,
                            xlock_iow=self.config.xlock_iow if xlock_iow is None else xlock_iow)
        plan = (statement_locks(statement, inputs=[ref], policy=policy) if statement is Statement.SELECT
                else statement_locks(statement, target=ref, policy=policy))
        return self.lock(to_request(plan, txn_id=txn_id, user=self.config.user, hostname=self.config.hostname,
                                    agent_info=self.config.agent_info))

    # -- catalog ------------------------------------------------------------------------------

    def get_table(self, db: str, table: str, read: pb.ReadContext | None = None) -> pb.Table:
        return self.call(self.catalog.GetTable, pb.GetTableRequest(db_name=db, table_name=table, read=read),
                         method="GetTable").table

    def list_partition_names(self, db: str, table: str, read: pb.ReadContext | None = None,
                             page_size: int = 0) -> list[str]:
        """Every partition name in byte order, following pages."""
        def page(token: str) -> tuple[Sequence[str], str]:
            reply = self.call(self.catalog.ListPartitionNames, pb.ListPartitionNamesRequest(
                db_name=db, table_name=table, page_size=page_size, page_token=token, read=read),
                method="ListPartitionNames")
            return reply.names, reply.next_page_token

        return _every_page(page)

    def get_partitions_by_names(
        self, db: str, table: str, names: Sequence[str], read: pb.ReadContext | None = None, *,
        batch_size: int | None = None, in_flight: int | None = None,
    ) -> Iterator[pb.Partition]:
        """The partitions named, in request order (missing names are left out), fetched in
        batches of `batch_size` with up to `in_flight` batches outstanding on the channel. A batch
        whose answer the gateway cannot send (RESOURCE_EXHAUSTED: over its
        hive.metastore.server.max.message.size, big partitions or a small setting) is asked again in
        halves, down to one name (`in_halves`); a partition too large for any answer fails the read,
        the gateway's message naming it and the setting."""
        size = batch_size or self.config.batch_size
        window = in_flight or self.config.in_flight
        rpc = self.catalog.GetPartitionsByNames

        def request(batch: Sequence[str]) -> pb.GetPartitionsByNamesRequest:
            return pb.GetPartitionsByNamesRequest(db_name=db, table_name=table, names=list(batch), read=read)

        def fetch(batch: Sequence[str], first_error: grpc.RpcError | None = None) -> list[pb.Partition]:
            return list(self.call(rpc, request(batch), method="GetPartitionsByNames",
                                  first_error=first_error).partitions)

        batches = _chunks(names, size)
        pending: collections.deque[tuple[Sequence[str], grpc.Future]] = collections.deque()

        def submit() -> None:
            batch = next(batches, None)
            if batch is not None:
                self.stats["GetPartitionsByNames"] += 1
                pending.append((batch, rpc.future(request(batch), timeout=self.config.call_timeout_s)))

        for _ in range(window):
            submit()
        try:
            while pending:
                batch, future = pending.popleft()
                try:
                    found = list(future.result().partitions)
                except grpc.RpcError as exc:  # retried here, in order; the other batches stay in flight
                    found = in_halves(batch, fetch, first=functools.partial(fetch, batch, exc))
                submit()
                yield from found
        finally:
            for _, future in pending:  # the caller stopped early: do not leave calls running
                future.cancel()

    @property
    def has_filter_reads(self) -> bool:
        """Whether these stubs have Catalog.GetPartitionsByFilter."""
        return hasattr(pb, "GetPartitionsByFilterRequest")

    def get_partitions_by_filter(self, db: str, table: str, filter: str, read: pb.ReadContext | None = None, *,
                                 max_parts: int = 0, page_size: int = 0) -> list[pb.Partition]:
        """The partitions matching a Hive partition filter (`ds >= '2024-01-01' AND hr IN (1, 2)`),
        in name order, following pages (of `page_size`, by default the config's batch size; the gateway
        answers fewer when more would pass its batch limit or hive.metastore.server.max.message.size), all
        under the one `read` snapshot; with `max_parts`, at most that many in one call. A bad filter is
        INVALID_ARGUMENT with the position of the error."""
        if not self.has_filter_reads:
            raise GatewayError("this client's generated stubs have no Catalog.GetPartitionsByFilter; "
                               "regenerate protos/ (make protos) from a catalog.proto that has it",
                               method="GetPartitionsByFilter", address=self.config.address)
        if max_parts:
            request = pb.GetPartitionsByFilterRequest(db_name=db, table_name=table, filter=filter,
                                                      max_parts=max_parts, read=read)
            return list(self.call(self.catalog.GetPartitionsByFilter, request,
                                  method="GetPartitionsByFilter").partitions)

        def page(token: str) -> tuple[Sequence[pb.Partition], str]:
            reply = self.call(self.catalog.GetPartitionsByFilter, pb.GetPartitionsByFilterRequest(
                db_name=db, table_name=table, filter=filter, read=read, page_size=page_size or self.config.batch_size,
                page_token=token), method="GetPartitionsByFilter")
            return reply.partitions, reply.next_page_token

        return _every_page(page)

    def alter_table(self, db: str, table: str, definition: pb.Table, *, txn_id: int = 0) -> pb.Table:
        """Replace the table's definition (under `txn_id` for a transactional table: a new version,
        visible when the txn commits). Answers the table as stored."""
        return self.call(self.catalog.AlterTable, pb.AlterTableRequest(
            db_name=db, table_name=table, table=definition, txn_id=txn_id), method="AlterTable").table

    def add_partitions(self, db: str, table: str, partitions: Sequence[pb.Partition], *, txn_id: int,
                       table_id: int = 0, if_not_exists: bool = False) -> list[pb.Partition]:
        """AddPartitions in batches under `txn_id` (all invisible until the txn commits, all gone
        if it aborts). Answers the partitions added, as stored (names and locations set): with
        `if_not_exists`, those that existed (or another txn added first) are skipped, not answered.
        The gateway holds a call that found one added by a txn still open until that txn ends (at
        most hive.txn.timeout), so the deadline covers that wait too. A batch the gateway refuses as
        too large (RESOURCE_EXHAUSTED, nothing of it added: more partitions than its
        metastore.gateway.max.batch.size, or an answer over its hive.metastore.server.max.message.size)
        is sent again as two halves, down to one partition."""
        def add(batch: Sequence[pb.Partition]) -> list[pb.Partition]:
            return list(self.call(self.catalog.AddPartitions, pb.AddPartitionsRequest(
                db_name=db, table_name=table, partitions=list(batch), txn_id=txn_id, table_id=table_id,
                if_not_exists=if_not_exists), method="AddPartitions",
                timeout_s=self.config.call_timeout_s + self.config.txn_timeout_s).partitions)

        return [p for batch in _chunks(partitions, self.config.batch_size) for p in in_halves(batch, add)]

    def alter_partitions(self, db: str, table: str, partitions: Sequence[pb.Partition], *, txn_id: int,
                         table_id: int = 0) -> list[pb.Partition]:
        """AlterPartitions in batches under `txn_id`; answers the partitions as altered (as stored). A batch
        the gateway refuses as too large is sent again in halves, as for add_partitions."""
        def alter(batch: Sequence[pb.Partition]) -> list[pb.Partition]:
            return list(self.call(self.catalog.AlterPartitions, pb.AlterPartitionsRequest(
                db_name=db, table_name=table, partitions=list(batch), txn_id=txn_id, table_id=table_id),
                method="AlterPartitions").partitions)

        return [p for batch in _chunks(partitions, self.config.batch_size) for p in in_halves(batch, alter)]

    def transaction(self, *, heartbeat: bool = True,
                    on_abort: Callable[[TxnAborted], None] | None = None) -> Transaction:
        """Open a txn, heartbeated every hive.txn.timeout / 2: `with client.transaction() as txn:`
        commits on success and aborts on an exception. `on_abort` runs (in the keeper's thread) if
        the gateway reports the txn aborted while it is still in use."""
        return Transaction.open(self, heartbeat=heartbeat, on_abort=on_abort)

    def table_snapshot(self, db: str, table: str, txn_id: int = 0) -> TableSnapshot:
        return self.snapshot([full_table_name(db, table)], txn_id).tables[0]

