"""metastore.v1.Compactor: ALTER TABLE ... COMPACT, SHOW COMPACTIONS and the worker's calls.

Thin: validate, one store call in one database transaction, convert back. The store's errors
carry the messages (store/compaction.py); gateway/errors.py maps them.
"""

from __future__ import annotations

from typing import TypeAlias

import asyncpg
import grpc

from gateway.auth import OPEN_AUTHENTICATOR, Authenticator
from gateway.config import ConfigError, Settings
from gateway.errors import rpc_methods
from gateway.servicers.validation import require
from protos.metastore.v1 import compaction_pb2 as pb
from protos.metastore.v1 import compaction_pb2_grpc
from poller.compactor import CompactorSettings
from store import compaction
from store.compaction_policy import Thresholds
from store.db import Database
from store.errors import InvalidArgument

Ctx: TypeAlias = grpc.aio.ServicerContext

_TYPES = {pb.MAJOR: compaction.MAJOR, pb.MINOR: compaction.MINOR}
_PB_TYPES = {compaction.MAJOR: pb.MAJOR, compaction.MINOR: pb.MINOR}
MAX_PROPERTIES = 100


def compactor_settings(s: Settings) -> CompactorSettings:
    """The compactor loops' settings from the gateway's (Hive's keys, gateway/config.py); a value out
    of range is a ConfigError naming its key, like every other setting."""
    try:
        return _compactor_settings(s)
    except InvalidArgument as exc:
        raise ConfigError(str(exc)) from None


def _compactor_settings(s: Settings) -> CompactorSettings:
    return CompactorSettings(
        initiator_on=s.compactor_initiator_on, cleaner_on=s.compactor_cleaner_on,
        check_interval_s=s.compactor_check_interval_s, cleaner_interval_s=s.compactor_cleaner_interval_s,
        worker_timeout_s=s.compactor_worker_timeout_s, failed_threshold=s.compactor_failed_threshold,
        thresholds=Thresholds(delta_num=s.compactor_delta_num_threshold, delta_pct=s.compactor_delta_pct_threshold,
                              aborted_num=s.compactor_aborted_threshold, aborted_age_s=s.compactor_aborted_time_s),
        retention_succeeded=s.compactor_retention_succeeded, retention_failed=s.compactor_retention_failed,
        retention_attempted=s.compactor_retention_attempted, history_interval_s=s.compactor_history_interval_s,
        txn_timeout_s=s.txn_timeout_s)


def _positive(value: int, what: str) -> int:
    if value <= 0:
        raise InvalidArgument(f"{what} must be positive, got {value}")
    return value


def _host_of(worker_or_initiator_id: str) -> str:
    """Hive names workers and initiators `<host>-<thread or role>`."""
    return worker_or_initiator_id.rsplit("-", 1)[0] if "-" in worker_or_initiator_id else worker_or_initiator_id


def info_message(c: compaction.CompactionInfo) -> pb.CompactionInfo:
    return pb.CompactionInfo(
        id=c.id, db_name=c.db_name, table_name=c.table_name, partition_name=c.partition_name or "", type=c.type,
        state=c.state, worker_host=_host_of(c.worker_id), worker_id=c.worker_id, enqueue_time_ms=c.enqueue_time_ms,
        start_ms=c.start_ms, duration_ms=c.end_ms - c.start_ms if c.end_ms and c.start_ms else 0,
        hadoop_job_id="None", error_message=c.error_message, initiator_host=_host_of(c.initiator_id),
        initiator_id=c.initiator_id, pool_name=c.pool_name, txn_id=c.txn_id, next_txn_id=c.next_txn_id,
        commit_time_ms=c.commit_time_ms, highest_write_id=c.highest_write_id, run_as=c.run_as, end_ms=c.end_ms,
        worker_version=c.worker_version, initiator_version=c.initiator_version)


@rpc_methods
class CompactorServicer(compaction_pb2_grpc.CompactorServicer):
    """With authentication on, the user a compaction runs as and its txn's user are the caller's (an
    admin may name another run_as, as Hive's HiveServer2 does for its session's user), never the
    request's alone: a txn recorded under another user would be that user's to commit or abort."""

    def __init__(self, db: Database, settings: Settings, auth: Authenticator = OPEN_AUTHENTICATOR) -> None:
        self._db = db
        self._settings = settings
        self._auth = auth

    async def Compact(self, request: pb.CompactRequest, context: Ctx) -> pb.CompactResponse:
        if request.type not in _TYPES:
            raise InvalidArgument("type must be MAJOR or MINOR (ALTER TABLE ... COMPACT 'major' | 'minor')")
        if len(request.properties) > MAX_PROPERTIES:
            raise InvalidArgument(f"at most {MAX_PROPERTIES} properties, got {len(request.properties)}")
        db_name, table_name = require(request.db_name, "db_name"), require(request.table_name, "table_name")
        run_as = self._auth.context_identity(context).run_as(request.run_as)

        async def run(conn: asyncpg.Connection) -> compaction.Enqueued:
            table, partition = await compaction.resolve_target(conn, db_name, table_name,
                                                               request.partition_name or None)
            return await compaction.enqueue(conn, table, partition.name if partition else None, _TYPES[request.type],
                                            properties=dict(request.properties), run_as=run_as,
                                            initiator_id="manual", manual=True)

        done = await self._db.transact(run)
        return pb.CompactResponse(id=done.id, accepted=done.accepted, state=compaction.STATE_NAMES[done.state])

    async def ShowCompactions(self, request: pb.ShowCompactionsRequest, context: Ctx) -> pb.ShowCompactionsResponse:
        most = compaction.MAX_SHOW
        if not 0 <= request.limit <= most:
            raise InvalidArgument(f"limit must be 0 (all, up to {most}) to {most}, got {request.limit}")
        rows = await self._db.read(compaction.show, db_name=request.db_name or None,
                                   table_name=request.table_name or None,
                                   partition_name=request.partition_name or None, limit=request.limit or most)
        return pb.ShowCompactionsResponse(compactions=[info_message(c) for c in rows])

    async def ClaimCompaction(self, request: pb.ClaimCompactionRequest, context: Ctx) -> pb.ClaimCompactionResponse:
        compaction.check_worker_id(request.worker_id)
        identity = self._auth.context_identity(context)
        entry = await self._db.transact(compaction.claim_next, request.worker_id, request.worker_version,
                                        user=identity.user if identity.authenticated else "",
                                        run_as=identity.limited_to)
        if entry is None:
            return pb.ClaimCompactionResponse(found=False)
        return pb.ClaimCompactionResponse(found=True, id=entry.id, db_name=entry.db_name, table_name=entry.table_name,
                                          partition_name=entry.partition_name or "", type=_PB_TYPES[entry.type],
                                          properties=dict(entry.properties))

    async def StartCompaction(self, request: pb.StartCompactionRequest, context: Ctx) -> pb.StartCompactionResponse:
        _positive(request.id, "id")
        compaction.check_worker_id(request.worker_id)
        identity = self._auth.context_identity(context)
        job = (await self._db.transact(compaction.start, request.id, request.worker_id,
                                       user=identity.user_or(request.user), host=request.hostname,
                                       caller=identity.limited_to)).value
        return pb.StartCompactionResponse(
            txn_id=job.txn_id, valid_txn_list=job.valid_txn_list.to_string(),
            valid_write_id_list=job.write_ids.to_string(), location=job.location, table_id=job.table.table_id,
            column_names=[c.name for c in job.table.columns], input_format=job.file_format[0],
            serialization_lib=job.file_format[1])

    async def HeartbeatCompaction(self, request: pb.HeartbeatCompactionRequest,
                                  context: Ctx) -> pb.HeartbeatCompactionResponse:
        _positive(request.id, "id")
        compaction.check_worker_id(request.worker_id)
        await self._db.transact(compaction.heartbeat, request.id, request.worker_id,
                                caller=self._auth.context_identity(context).limited_to)
        return pb.HeartbeatCompactionResponse()

    async def CompleteCompaction(self, request: pb.CompleteCompactionRequest,
                                 context: Ctx) -> pb.CompleteCompactionResponse:
        _positive(request.id, "id")
        _positive(request.txn_id, "txn_id")
        compaction.check_worker_id(request.worker_id)
        caller = self._auth.context_identity(context).limited_to
        written = await self._db.transact(compaction.complete, request.id, request.worker_id, request.txn_id,
                                          request.highest_write_id, caller=caller)
        return pb.CompleteCompactionResponse(event_id=max(written.event_ids, default=0))

    async def FailCompaction(self, request: pb.FailCompactionRequest, context: Ctx) -> pb.FailCompactionResponse:
        _positive(request.id, "id")
        compaction.check_worker_id(request.worker_id)
        await self._db.transact(compaction.fail, request.id, request.worker_id,
                                request.error_message or "the worker gave no reason", refused=request.refused,
                                caller=self._auth.context_identity(context).limited_to)
        return pb.FailCompactionResponse()
