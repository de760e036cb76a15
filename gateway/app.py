"""The composition root: builds every component in order and stops them in reverse.

Start: embedded PostgreSQL (unless a DSN is given) -> schema migrations -> connection pool ->
stores -> housekeeping loops, the database probe and the embedded PostgreSQL's supervisor
(gateway/pg_supervisor.py: it restarts a server that died) -> cache, poller and the read-through catalog
over them (store/cache/facade.py) -> metrics, gRPC and Thrift ports open, health NOT_SERVING ->
in the background, the poller's bootstrap (an eager prewarm loads every table here) -> health
SERVING. Until then the cache is empty and every read goes to the database, so a gateway that is
still warming up answers correctly, only slower; a probe tells "warming up" (NOT_SERVING, port
open) from "down" (port closed). Health is SERVING exactly while the gateway is ready and its
database answers (gateway/db_health.py).

Stop (idempotent, also in the middle of a prewarm): health NOT_SERVING -> gRPC and Thrift refuse
new calls at once, calls under way get one grace, shared -> background tasks cancelled -> pool
close (bounded, then terminate) -> detach from the embedded PostgreSQL (the last gateway out stops
it: gateway/embedded_pg.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable
from urllib.parse import urlsplit

import asyncpg

from gateway.auth import Authenticator, is_loopback, thrift_ssl_context
from gateway.config import ConfigError, Settings, data_dir_of, redact_dsn
from gateway.db_health import DatabaseProbe, quiet_pool_reconnects
from gateway.embedded_pg import UNSAFE_FAST_SETTINGS, EmbeddedPostgres
from gateway import wire
from gateway.interceptors import CallObserver
from gateway.metrics import GatewayMetrics, resident_bytes
from gateway.pg_supervisor import PostgresSupervisor
from gateway.server import (GRPC_PORT_SETTING, METRICS_PORT_SETTING, THRIFT_PORT_SETTING, BindError, GrpcServer,
                            check_port_free)
from gateway.servicers.compaction import CompactorServicer, compactor_settings
from gateway.thrift.catalog_names import unqualify_database_names
from gateway.thrift.fb303 import Fb303
from gateway.thrift.handler import HiveMetastoreHandler
from gateway.thrift.idl import SERVICE as THRIFT_SERVICE
from gateway.thrift import wire as thrift_wire
from gateway.thrift.server import ThriftServer, ThriftSettings
from gateway.threads import DaemonThreadExecutor
from gateway.warehouse import Warehouse
from hive.backoff import Backoff
from hive.names import whitelist_pattern
from poller.compactor import Compactor
from poller.housekeeping import Housekeeper, HousekeepingSettings
from poller.poller import Poller
from protos.metastore.v1 import compaction_pb2_grpc
from store.cache.entry import Codec
from store.cache.facade import CachedCatalog
from store.cache.sharded import ShardedCache
from store import migrations
from store.catalog_store import CatalogStore
from store.privilege_store import PrivilegeStore
from store.db import Database, PoolSettings, sessions_kept
from store.errors import SessionsNotKept, Unavailable
from store.lock_store import LockStore
from store.txn_store import TxnLimits, TxnStore

_log = logging.getLogger(__name__)
_BOOTSTRAP_BACKOFF = Backoff(initial_s=0.5, max_s=10.0)
CLEANUP_WAIT_S = 5.0  # how long a stop waits for cancelled calls' clean-ups before it closes the pool
STOP_SLACK_S = 1.0  # past the grace, how long a stop waits for the calls it cut before it looks at the database


# What PostgreSQL answers at connect to a parameter of the DSN's query string it does not take (asyncpg
# sends the ones it does not know itself as run-time settings: `?statment_timeout=5s`, `?search_path=`).
_DSN_PARAMETER_REFUSED = (asyncpg.UndefinedObjectError, asyncpg.InvalidParameterValueError,
                          asyncpg.CantChangeRuntimeParamError)


async def connect_dsn(dsn: str, timeout_s: float = 15.0, **options: Any) -> asyncpg.Connection:
    """A connection to `dsn`, the gateway's first; a DSN that cannot be used as written is a bad setting
    (ConfigError naming metastore.gateway.dsn, one line and exit status 2), never a traceback. Its
    message never quotes the DSN: asyncpg's error for a URL it cannot read may quote part of the
    password (`postgresql://u:p#ss@host/db` reads `p` as the port)."""
    if _authority_ats(dsn) > 1:  # asyncpg splits at the first `@` and names part of the password as the host
        raise ConfigError("metastore.gateway.dsn (--dsn): its user name or password holds an @ that is not "
                          "percent-encoded (write %40 for @)")
    try:
        return await asyncpg.connect(dsn, timeout=timeout_s, **options)
    except asyncpg.ClientConfigurationError as exc:  # its messages name parameters, never their secrets
        raise ConfigError(f"metastore.gateway.dsn (--dsn): {exc}") from None
    except ValueError:  # asyncpg's URL parsing (ClientConfigurationError, a ValueError too, is above)
        raise ConfigError("metastore.gateway.dsn (--dsn): not a PostgreSQL URL asyncpg can read (a port that is not a "
                          "number, or a user name or password holding one of @ : / ? # [ ] not percent-encoded, e.g. "
                          "%23 for #)") from None
    except _DSN_PARAMETER_REFUSED as exc:
        raise ConfigError(f"metastore.gateway.dsn (--dsn): PostgreSQL refused a parameter of its query string "
                          f"({type(exc).__name__}: {exc}); correct or remove it") from None


def _authority_ats(dsn: str) -> int:
    """How many `@` the authority of a URL DSN holds (`postgresql://user:pass@host:port/...`); 0 for a
    DSN that is not a URL (asyncpg's own parsing then says what is wrong)."""
    if not dsn.startswith(("postgresql://", "postgres://")):
        return 0
    try:
        return urlsplit(dsn).netloc.count("@")
    except ValueError:
        return 0


async def migrate_database(dsn: str) -> list[int]:
    await check_sessions_kept(dsn)  # before the migrations, whose lock is a session's
    conn = await connect_dsn(dsn)
    try:
        return await migrations.migrate(conn)
    finally:
        await conn.close()


async def check_sessions_kept(dsn: str) -> None:
    """SessionsNotKept when `dsn` reaches the database through a pooler in transaction or statement mode:
    the gateway would start, then fail now and then (a prepared statement met on another server connection)
    and its poller would hear no NOTIFY (store/db.py sessions_kept)."""
    first = await connect_dsn(dsn, statement_cache_size=0)
    try:
        second = await connect_dsn(dsn, statement_cache_size=0)
        try:
            if not await sessions_kept(first, second):
                raise SessionsNotKept("a connection's statements ran on different server processes")
        finally:
            await second.close()
    finally:
        await first.close()


@dataclass
class Gateway:
    settings: Settings
    dsn: str = ""
    port: int = 0
    _pg: EmbeddedPostgres | None = field(default=None, init=False)
    _pg_starting: asyncio.Future[str] | None = field(default=None, init=False)  # its start() in a thread
    _db: Database | None = field(default=None, init=False)
    _server: GrpcServer | None = field(default=None, init=False)
    _thrift: ThriftServer | None = field(default=None, init=False)
    _catalog_store: CatalogStore | None = field(default=None, init=False)
    thrift_port: int = field(default=0, init=False)
    _background: list[asyncio.Task[None]] = field(default_factory=list, init=False)
    housekeeper: Housekeeper | None = field(default=None, init=False)
    compactor: Compactor | None = field(default=None, init=False)
    cache: ShardedCache | None = field(default=None, init=False)
    cached_catalog: CachedCatalog | None = field(default=None, init=False)
    poller: Poller | None = field(default=None, init=False)
    metrics: GatewayMetrics = field(default_factory=GatewayMetrics, init=False)
    metrics_port: int = field(default=0, init=False)
    data_dir: Path | None = field(default=None, init=False)  # the embedded PostgreSQL's, when it is used
    probe: DatabaseProbe | None = field(default=None, init=False)
    supervisor: PostgresSupervisor | None = field(default=None, init=False)  # of the embedded PostgreSQL
    ready: asyncio.Event = field(default_factory=asyncio.Event, init=False)  # bootstrap (prewarm) done
    _txn_store: TxnStore | None = field(default=None, init=False)
    _lock_store: LockStore | None = field(default=None, init=False)
    _stopped: bool = field(default=False, init=False)
    _unreachable_since: float = field(default=0.0, init=False)  # when the probe last found the database away

    async def start(self, *, wait_ready: bool = True) -> None:
        """Start everything; with `wait_ready` return once the cache is bootstrapped (prewarm
        included) and health is SERVING, else as soon as the ports are open."""
        s = self.settings
        try:
            self._check_ports_free()
            self.dsn = s.dsn or await self._start_embedded()
            applied = await migrate_database(self.dsn)
            if applied:
                _log.info("schema migrated to version %d", applied[-1])
            self._db = await Database.connect(self.dsn, PoolSettings(
                max_size=s.pool_max_size, acquire_timeout_s=s.pool_acquire_timeout_s,
                idle_in_transaction_timeout_s=s.db_idle_in_txn_timeout_s, max_message_bytes=s.max_message_bytes,
                outage_retries=s.hmshandler_retry_attempts, outage_retry_interval_s=s.hmshandler_retry_interval_s))
            background_db = self._db.without_outage_retries()  # for the loops that wait on their own terms
            catalog = self._catalog_store = CatalogStore(
                self._db, warehouse_dir=s.warehouse_root, check_column_types=s.disallow_incompatible_col_type_changes,
                partition_values=whitelist_pattern(s.partition_name_whitelist_pattern), creator_wait_s=s.txn_timeout_s)
            if await catalog.create_default_database():
                _log.info("created Hive's default database at %s", s.warehouse_root)
            # Hive's metastore start-up rule: the users of hive.users.in.admin.role hold the role admin.
            await PrivilegeStore(self._db).ensure_admin_users(s.admin_user_names)
            txn_store = self._txn_store = TxnStore(self._db, TxnLimits(max_open_batch=s.txn_max_open_batch,
                                                                       max_open_txns=s.max_open_txns,
                                                                       group_commit_max=s.txn_group_commit_max))
            self.housekeeper = Housekeeper(background_db, txn_store, HousekeepingSettings(
                txn_timeout_s=s.txn_timeout_s, reaper_start_s=s.reaper_start_s, reaper_interval_s=s.reaper_interval_s,
                housekeeper_interval_s=s.housekeeper_interval_s, event_ttl_s=s.event_ttl_s,
                event_clean_interval_s=s.event_clean_interval_s,
                count_open_txns_interval_s=s.count_open_txns_interval_s))
            self._background.append(asyncio.create_task(self.housekeeper.run(), name="housekeeping"))
            warehouse = Warehouse(s.data_root_list)  # the file work of the Thrift DDL and of the Cleaner
            self.compactor = Compactor(background_db, compactor_settings(s),
                                       outside_data_roots=warehouse.is_outside_roots)
            self._background.append(asyncio.create_task(self.compactor.run(), name="compactor"))
            quiet_pool_reconnects()
            probe = self.probe = DatabaseProbe(self.dsn, interval_s=s.db_check_interval_s,
                                               on_change=self._database_changed)
            self._background.append(asyncio.create_task(probe.run(), name="database probe"))
            if self._pg is not None and s.embedded_restart:
                self.supervisor = PostgresSupervisor(self._pg, lambda: probe.up, interval_s=s.db_check_interval_s)
                self._background.append(asyncio.create_task(self.supervisor.run(), name="embedded PostgreSQL"))
            self.cache = ShardedCache(shards=s.cache_shards, max_partitions=s.cache_max_partitions,
                                      enabled=s.cache_enabled)
            codec = Codec(partition=wire.partition_element, rename_partition=wire.partition_renamer,
                          thrift_partition=thrift_wire.partition_body if s.thrift_enabled else None,
                          table=wire.table_message)
            self.poller = Poller(background_db, self.dsn, self.cache, codec,
                                 interval_s=s.poller_interval_s, batch_size=s.poller_batch_size,
                                 prewarm=s.cache_prewarm, txn_ends=catalog.txn_ends)
            self.metrics.watch(self)
            if s.metrics_port >= 0:
                try:
                    self.metrics_port = self.metrics.serve(s.host, s.metrics_port)
                except OSError as exc:
                    raise BindError(f"{s.host}:{s.metrics_port}", METRICS_PORT_SETTING) from exc
            self.cached_catalog = CachedCatalog(self.cache, catalog, on_fallback=self.metrics.fallback)
            lock_store = self._lock_store = LockStore(self._db, s.txn_group_commit_max,
                                                      on_granted=self.cached_catalog.lock_granted)
            observer = CallObserver(self.metrics.calls, log_access=s.access_log)
            auth = Authenticator.from_settings(s)
            if not s.tls_cert_file and not is_loopback(s.host):
                _log.warning("serving on %s without TLS: anyone who can reach it may read and change the catalog and "
                             "other users' txns; set metastore.gateway.tls.cert.file/key.file (and "
                             "metastore.gateway.auth.token.file or tls.client.ca.file)", s.host)
            self._server = GrpcServer(s, catalog, txn_store, self.cached_catalog, self, lock_store, observer, auth)
            compaction_pb2_grpc.add_CompactorServicer_to_server(CompactorServicer(self._db, s, auth),
                                                                self._server.server)
            self.port = await self._server.start()
            await self._server.set_serving(False)  # open, and says so: warming up
            if s.thrift_enabled:
                handler = HiveMetastoreHandler(catalog, self.cached_catalog, txn_store, lock_store, s,
                                               warehouse=warehouse, fb303=Fb303(self.metrics.calls))
                self._thrift = ThriftServer(THRIFT_SERVICE, handler, ThriftSettings(
                    host=s.host, port=s.thrift_port, framed=s.thrift_framed, max_message_bytes=s.max_message_bytes,
                    max_connections=s.thrift_max_connections, read_timeout_s=s.thrift_read_timeout_s,
                    tls_handshake_timeout_s=s.thrift_tls_handshake_timeout_s,
                    ssl_context=thrift_ssl_context(s), authenticator=auth),
                    on_call=observer.done, prepare_arguments=unqualify_database_names)
                try:
                    await self._thrift.start()
                except OSError as exc:
                    raise BindError(f"{s.host}:{s.thrift_port}", THRIFT_PORT_SETTING) from exc
                self.thrift_port = self._thrift.port
            warmup = asyncio.create_task(self._warm_up(retry=not wait_ready), name="cache bootstrap")
            self._background.append(warmup)
            if wait_ready:
                await warmup  # its failure is start()'s
        except BaseException:
            await self.stop()
            raise

    def _check_ports_free(self) -> None:
        """Each port this gateway will listen on is free, checked before anything starts (each is bound for
        good later, and checked again then): a port in use found only after the embedded PostgreSQL was
        started, or the shared database's schema migrated under gateways still running the old version,
        would have done that for nothing."""
        s = self.settings
        check_port_free(s.host, s.port, GRPC_PORT_SETTING, reuse_port=s.so_reuseport)
        if s.thrift_enabled:
            check_port_free(s.host, s.thrift_port, THRIFT_PORT_SETTING)
        if s.metrics_port > 0:
            check_port_free(s.host, s.metrics_port, METRICS_PORT_SETTING)

    async def _warm_up(self, *, retry: bool) -> None:
        """Bootstrap the cache (an eager prewarm loads everything), then start the poller and say
        SERVING. Cancelled by stop(), a prewarm included. With `retry`, a failed bootstrap (the
        database went away meanwhile) is tried again with a bounded back-off, while health stays
        NOT_SERVING; without it (start() waits for it), the failure is start()'s."""
        assert self.poller is not None
        if self.settings.cache_enabled:
            failures = 0
            while True:
                try:
                    await self.poller.bootstrap()
                    break
                except Exception as exc:  # noqa: BLE001 - retried: the gateway must come up when the database does
                    if not retry:
                        raise
                    failures += 1
                    if failures == 1:
                        _log.warning("loading the cache failed (%s); retrying, health stays NOT_SERVING",
                                     exc, exc_info=not isinstance(exc, Unavailable))
                    await asyncio.sleep(_BOOTSTRAP_BACKOFF.delay(failures))
            if failures:
                _log.info("cache loaded after %d failed attempt(s)", failures)
            self._background.append(asyncio.create_task(self.poller.run(), name="poller"))
        self.ready.set()
        await self._update_health()

    def _database_changed(self, up: bool) -> None:
        """The probe found the database unreachable, or reachable again: health says so, and the connections
        opened before the outage are dropped: the pool's as the outage is found (each at its next use, or its
        release), the poller's LISTEN once the database is back (when it was opened before). A partition, or a
        failover that took the old server away, leaves those silent rather than closed: each call on one
        waited out the command time-out (a write took 70 s after a failover, by hand), and the poller heard
        nothing until its timer's read timed out on one (117 s). Connections opened since are kept."""
        work: list[Awaitable[None]] = [self._update_health()]
        if not up:
            self._unreachable_since = time.monotonic()
            work.append(self._expire_connections())
        elif self.poller is not None:
            self.poller.restart_listener(opened_before=self._unreachable_since)
        for step in work:
            task = asyncio.ensure_future(step)
            self._background.append(task)
            task.add_done_callback(self._forget)

    async def _expire_connections(self) -> None:
        if self._db is not None:
            await self._db.expire_connections()

    def _forget(self, task: asyncio.Task[None]) -> None:
        if task in self._background:
            self._background.remove(task)

    async def _update_health(self) -> None:
        if self._server is not None and not self._stopped:
            await self._server.set_serving(self.serving)

    @property
    def serving(self) -> bool:
        """Ready (prewarm done) and the database answers."""
        return self.ready.is_set() and (self.probe is None or self.probe.up)

    def ops_stats(self) -> dict[str, object]:
        """Txns, locks, the pool, the database and readiness, for metrics."""
        pool = self._db.stats() if self._db is not None else {"size": 0, "idle": 0, "max": 0, "outage_retries": 0}
        probe = self.probe
        return {
            "open_txns": self._txn_store.open_counter.count if self._txn_store is not None else 0,
            "locks_held": probe.locks_held if probe is not None else 0,
            "locks_waiting": probe.locks_waiting if probe is not None else 0,
            "aborted_txns": probe.aborted_txns if probe is not None else 0,
            "oldest_aborted_txn_age_s": probe.oldest_aborted_txn_age_s if probe is not None else 0.0,
            "aborted_write_ids": probe.aborted_write_ids if probe is not None else 0,
            "pool_busy": pool["size"] - pool["idle"], "pool_idle": pool["idle"], "pool_max": pool["max"],
            "database_up": int(probe is None or probe.up), "ready": int(self.serving),
            "embedded_restarts": self.supervisor.restarts if self.supervisor is not None else 0,
            "db_outage_retries": pool["outage_retries"],
            "group_commit": self._group_commit_stats(),
        }

    def _group_commit_stats(self) -> dict[str, tuple[int, int]]:
        """Per call kind, the group-commit batches run and the calls in them (store/group_commit.py)."""
        stats = self._txn_store.group_commit_stats() if self._txn_store is not None else {}
        if self._lock_store is not None:
            stats["Lock"] = self._lock_store.group_commit_stats()
        return stats

    @property
    def embedded(self) -> EmbeddedPostgres | None:
        """The embedded PostgreSQL this gateway uses (None with --dsn)."""
        return self._pg

    @property
    def database(self) -> Database:
        assert self._db is not None, "the gateway is not started"
        return self._db

    def thrift_stats(self) -> dict[str, int]:
        return self._thrift.stats() if self._thrift is not None else {"connections": 0}

    def cache_stats(self) -> dict[str, object]:
        """A snapshot for metrics and `metastore-gateway cache-stats`."""
        cache, poller = self.cache, self.poller
        assert cache is not None and poller is not None
        lags = sorted(poller.stats.lag_samples_ms)
        return {
            "enabled": cache.enabled,
            "hits": cache.stats.hits,
            "misses": dict(cache.stats.misses),
            "tables": len(cache.entries()),
            "partitions": cache.partition_count(),
            "bytes": cache.size_bytes(),
            "evictions": cache.stats.evictions,
            "position": poller.position,
            "lag_events": max(0, poller.stats.head_event_id - poller.position),
            "lag_ms": poller.stats.last_apply_lag_ms,
            "lag_p50_ms": lags[len(lags) // 2] if lags else 0.0,
            "lag_p99_ms": lags[min(len(lags) - 1, int(len(lags) * 0.99))] if lags else 0.0,
            "batches": poller.stats.batches,
            "fills": poller.stats.fills,
            "reloads": poller.stats.reloads,
            "poller_errors": poller.stats.errors,
            "failing_s": poller.stats.failing_s(time.monotonic()),
            "resident_bytes": resident_bytes(),
        }

    async def _start_embedded(self) -> str:
        self.data_dir = data_dir_of(self.settings)
        self._pg = EmbeddedPostgres(self.data_dir,
                                    settings=dict(UNSAFE_FAST_SETTINGS) if self.settings.embedded_unsafe_fast else {})
        # Shielded: a start cancelled by Ctrl-C still finishes in its thread (and attaches), and stop()
        # waits for it before it detaches (_wait_for_embedded_start).
        self._pg_starting = asyncio.ensure_future(asyncio.to_thread(self._pg.start))
        return await asyncio.shield(self._pg_starting)

    async def _wait_for_embedded_start(self) -> None:
        """Wait (bounded by its own time-outs) for a start of the embedded PostgreSQL, or the supervisor's
        restart, still under way in its thread: stopped beside initdb or pg_ctl start, the server would be
        stopped before it runs, then started by the thread with no gateway attached, and left running."""
        pg = self._pg
        if pg is None:
            return
        busy: asyncio.Future[Any]
        if self._pg_starting is not None and not self._pg_starting.done():
            what, busy, bound_s = "start", self._pg_starting, pg.start_timeout_bound_s
        elif self.supervisor is not None and self.supervisor.pending is not None:
            what, busy, bound_s = "restart", self.supervisor.pending, pg.restart_timeout_bound_s
        else:
            return
        _log.info("waiting for the embedded PostgreSQL's %s in %s to finish before stopping it", what, pg.data_dir)
        _, pending = await asyncio.wait([busy], timeout=bound_s)
        if pending:
            _log.warning("the embedded PostgreSQL's %s in %s did not finish within %.0fs; the server may be left "
                         "running (`metastore-gateway postgres status`, `postgres stop`)", what, pg.data_dir, bound_s)

    async def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        if self._catalog_store is not None:  # a write waiting for another txn's end answers UNAVAILABLE now
            self._catalog_store.txn_ends.stop()
        if self._server is not None:
            await self._server.set_serving(False)
        # Both protocols at once: each refuses new calls from here on, and one grace (not one each)
        # bounds the calls under way; each returns as soon as its last call is answered.
        grace_s = self.settings.shutdown_grace_s
        servers_stopping: list[Awaitable[None]] = []
        if self._server is not None:
            servers_stopping.append(self._server.stop(grace_s))
        if self._thrift is not None:
            servers_stopping.append(self._thrift.stop(grace_s))
        stopped = asyncio.ensure_future(asyncio.gather(*servers_stopping))
        _, late = await asyncio.wait([stopped], timeout=grace_s + STOP_SLACK_S)
        if late and self._db is not None and self.probe is not None and not self.probe.up:
            # Calls cut at the grace's end are still waiting on a database that does not answer (frozen, or
            # cut off without a reset): asyncpg's cancel request and the release's rollback would wait on it
            # for up to the command time-out. Its connections cannot be closed in order: drop them.
            _log.warning("calls cut by the stop still wait on the database, which does not answer; dropping the "
                         "pool's connections")
            self._db.terminate()
        await stopped
        for task in self._background:
            task.cancel()
        if self._background:
            await asyncio.wait(list(self._background), timeout=10)
        await asyncio.to_thread(self.metrics.close)  # shutdown() waits for the exporter's loop to notice
        if self._catalog_store is not None:  # the cancelled calls' clean-ups need the pool
            await self._catalog_store.finish_cleanups(CLEANUP_WAIT_S)
        if self._db is not None:
            await self._db.close()
        if self._pg is not None:
            await self._wait_for_embedded_start()
            await asyncio.to_thread(self._pg.stop)


def stop_signals() -> tuple[signal.Signals, ...]:
    """The signals that stop the gateway in order: SIGINT, SIGTERM and SIGHUP (the terminal or SSH session
    of a gateway run in the foreground closing; the JVM, so Hive's metastore, stops on it with its
    shutdown hooks as on SIGTERM). Left at Python's default, SIGHUP killed the process on the spot: calls
    under way cut off, and the embedded PostgreSQL left running with no gateway attached. A SIGHUP this
    process was started ignoring (`nohup`) stays ignored: that is what the operator asked for."""
    ignored = signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    return (signal.SIGINT, signal.SIGTERM) if ignored else (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


async def serve(settings: Settings) -> None:
    """Run until SIGINT, SIGTERM or SIGHUP (`stop_signals`), then shut down in order. A signal during
    start-up (a long eager prewarm, say) is honoured at once: the start is cancelled and everything
    started is stopped.
    Worker threads are daemons (gateway/threads.py): one blocked for good, a file operation on a hung
    mount, does not keep the process from exiting."""
    gateway = Gateway(settings)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.set_default_executor(DaemonThreadExecutor())
    for sig in stop_signals():
        loop.add_signal_handler(sig, stop.set)
    starting = asyncio.create_task(gateway.start(wait_ready=False))
    stopping = asyncio.create_task(stop.wait())
    await asyncio.wait([starting, stopping], return_when=asyncio.FIRST_COMPLETED)
    if not starting.done():
        starting.cancel()
        await asyncio.wait([starting])
        stopping.cancel()
        print("metastore gateway stopped during start-up", flush=True)
        return
    starting.result()  # a start-up failure: its error (start() has stopped what it started)
    with contextlib.suppress(TimeoutError):  # a lazy bootstrap takes milliseconds: then the line says ready
        await asyncio.wait_for(gateway.ready.wait(), 1.0)
    print(startup_line(gateway), flush=True)
    try:
        await stopping
    finally:
        _log.info("shutting down")
        await gateway.stop()
        print("metastore gateway stopped", flush=True)


def startup_line(gateway: Gateway) -> str:
    """One line with every address: gRPC (with the database, in the form loadtest/gateway_process.py
    reads), Thrift, metrics and the data directory."""
    s = gateway.settings
    parts = [f"metastore gateway serving on {s.host}:{gateway.port} (database: {_redact(gateway.dsn)})"]
    if gateway.thrift_port:
        parts.append(f"Hive Thrift API on {s.host}:{gateway.thrift_port}")
    parts.append(f"metrics on http://{s.host}:{gateway.metrics_port}/metrics" if gateway.metrics_port
                 else "metrics off (metastore.gateway.metrics.port)")
    if gateway.data_dir is not None:
        parts.append(f"data directory {gateway.data_dir}")
    if not gateway.serving:
        parts.append("health NOT_SERVING until the cache is loaded")
    return ", ".join(parts)


def _redact(dsn: str) -> str:
    """The DSN as the startup line shows it (gateway/config.py redact_dsn: `user:***@`, which
    loadtest/gateway_process.py relies on, and no `password` query parameter's value)."""
    return redact_dsn(dsn)
