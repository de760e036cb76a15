"""The connection pool and the one place asyncpg errors become store errors.

`Database.transact(fn, *args)` runs `fn(conn, *args)` in one database transaction and retries it
a bounded number of times on serialization failures and deadlocks, the only errors for which a
blind retry is correct. Connection loss becomes `Unavailable` (retryable by the caller), and so do
a database that cannot serve (read-only, or out of disk space, memory or connections, or refusing the
pool's new connections: credentials changed, database gone or closed to connections:
`DatabaseCannotServe`, logged once a minute at most rather than a traceback per call), a statement
PostgreSQL cancelled (its statement_timeout, pg_cancel_backend: `StatementCancelled`, logged alike), and the two
time-outs, each named for what it is: no connection became free within the acquire
time-out (the pool is busy), or a statement ran past asyncpg's `command_timeout`
(`CommandTimeout`; asyncpg cancels the statement, the transaction rolls back).

A call that could not reach the database, or lost its connection before anything of it could have
been committed, waits for the database and is tried again, as Hive's RetryingHMSHandler retries a
call on a JDO connection failure: up to `outage_retries` times (hive.hmshandler.retry.attempts),
the waits doubling from 50 ms up to `outage_retry_interval_s` (hive.hmshandler.retry.interval), so a
database restart or a short failover is a slower call, not a failed query. "Before anything could
have been committed" is: the connection was never had (refused, the server starting up), the call
is a read, or a transaction's statements ran but its COMMIT was not sent. A connection lost after a
write's COMMIT (or its single autocommitted statement) was sent is not retried: the write may have
been committed, and only the caller can tell whether doing it again is right.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import Any, AsyncIterator, Awaitable, Callable, Concatenate, Mapping, ParamSpec, TypeVar, overload

import asyncpg

from hive.backoff import Backoff
from hive.limits import bounded_message
from store.errors import CommandTimeout, DatabaseCannotServe, InvalidArgument, StatementCancelled, Unavailable
from store.events import DEFAULT_MAX_MESSAGE_BYTES, Outcome, Written, append_events
from store.sql import session as session_sql

_log = logging.getLogger(__name__)

P = ParamSpec("P")
T = TypeVar("T")

# Between attempts after a conflict: uniform in [0, 0.01 * 2**attempt] s (attempt 1, 2 ...), jittered in full
# so colliding writers do not collide again in lock step.
_CONFLICT_BACKOFF = Backoff(initial_s=0.005, max_s=1.0, jitter=1.0)

_RETRYABLE = (asyncpg.SerializationError, asyncpg.DeadlockDetectedError)
# Between attempts while the database is away: 50 ms doubling up to hive.hmshandler.retry.interval, each
# jittered by half, so the calls that waited out a restart do not all reconnect in the same instant.
_OUTAGE_FIRST_WAIT_S = 0.05
_OUTAGE_JITTER = 0.5
_OUTAGE_CAUSE = "a call could not reach the database, or lost its connection before its commit"
# A value PostgreSQL refused (class 22: a NUL in text, a string too long for an index, a number out
# of range) or that asyncpg could not encode: the request's mistake, caught before the connection
# errors since asyncpg's encoding DataError is an InterfaceError. Validation (store/model_checks.py)
# refuses these first with a precise message; this is the net under it.
_BAD_VALUE = (asyncpg.DataError, asyncpg.ProgramLimitExceededError, asyncpg.exceptions._base.DataError)
# The connection is gone or going, or the database is not there: what this gateway calls an outage,
# here (Unavailable), in the poller's loop and in the health probe (gateway/db_health.py), one list.
CONNECTION_LOST = (
    asyncpg.PostgresConnectionError,
    asyncpg.InterfaceError,
    # "cannot switch to state 12; another operation (2) is in progress", with no other operation: a
    # server that ends an idle session (fast shutdown, pg_terminate_backend, a crash) sends an
    # ErrorResponse, then closes the socket. asyncpg 0.32 reads the ErrorResponse on an idle connection
    # as a protocol error and waits for a ReadyForQuery that never comes (coreproto.pyx,
    # _read_server_messages), and is_closed() stays False until the EOF is read a loop pass later: a
    # statement started in between raises this (tests/e2e/test_poller_lost_listener.py shows it).
    asyncpg.InternalClientError,
    asyncpg.CannotConnectNowError,
    asyncpg.OperatorInterventionError,  # admin/crash shutdown (its QueryCanceledError is _CANCELLED, below)
    # The server ended a transaction this gateway left idle too long (PoolSettings below) and closed
    # the connection: the gateway was stopped or starved mid-call; nothing of the call was written.
    asyncpg.exceptions.IdleInTransactionSessionTimeoutError,
    ConnectionError,
    OSError,
)
# The database answers but cannot do the work, whatever the call: an operator must fix the database
# (SQLSTATE 25006, and class 53: disk full, out of memory, too many connections).
CANNOT_SERVE = (asyncpg.ReadOnlySQLTransactionError, asyncpg.InsufficientResourcesError)
# What PostgreSQL answers a new connection of the pool it refuses while the gateway serves (asyncpg's
# pool opens them as it needs them, and anew after a restart or a lost connection): the user's password
# changed or its login was taken away, or pg_hba.conf rejects it (class 28), the database was dropped or
# renamed (3D000), or it takes no connections (ALTER DATABASE ... ALLOW_CONNECTIONS false: 55000). Each
# was an untranslated error, so INTERNAL with a traceback per call. Caught only where a connection is
# acquired: 55000 from a statement means something else.
CONNECT_REFUSED = (asyncpg.InvalidAuthorizationSpecificationError, asyncpg.InvalidCatalogNameError,
                   asyncpg.ObjectNotInPrerequisiteStateError)
# PostgreSQL cancelled the statement (statement_timeout on the server, pg_cancel_backend): an
# OperatorInterventionError by its SQLSTATE class (57), but the connection is sound. Caught before
# CONNECTION_LOST, so that it is not called a lost connection nor makes the pool replace every connection.
_CANCELLED = asyncpg.QueryCanceledError
_CANCELLED_CAUSE = "the database cancelled a statement (statement_timeout set on the server, or pg_cancel_backend)"
# The same cause is logged again at most this often while it lasts (each call answers it anyway).
_CANNOT_SERVE_LOG_INTERVAL_S = 60.0


def _cancelling() -> bool:
    """True when this task is being cancelled: a TimeoutError then belongs to the caller's own
    time-out (asyncio.timeout turns the cancellation into one), not to the database."""
    return (task := asyncio.current_task()) is not None and task.cancelling() > 0


def _own_deadline(exc: BaseException) -> bool:
    """A TimeoutError while this task is cancelled: the call's own deadline ran out, to be passed on
    as it is (TimeoutError is an OSError, so it would otherwise read as a lost connection)."""
    return isinstance(exc, TimeoutError) and _cancelling()


async def set_session(conn: asyncpg.Connection, settings: Mapping[str, str]) -> None:
    """Apply `settings` to `conn`'s session with one statement, not as startup parameters: a connection
    pooler in between, as PgBouncer, refuses to connect a client that sends a startup parameter it does
    not know ("unsupported startup parameter: idle_in_transaction_session_timeout"), so the gateway could
    not start behind one."""
    if settings:
        await conn.execute(session_sql.SET_SESSION, list(settings), list(settings.values()))


async def sessions_kept(first: asyncpg.Connection, second: asyncpg.Connection, timeout_s: float = 10.0) -> bool:
    """Whether `first`'s session stays on one server process across its statements while `second` holds a
    transaction open. Never false for connections to PostgreSQL itself, or through a pooler in session mode;
    false behind one in transaction mode (PgBouncer's pool_mode = transaction), which lends the server
    connection `first` had to `second`'s transaction and gives `first` another. The gateway keeps state in
    its sessions (prepared statements, the poller's LISTEN, the migrations' lock), so it cannot work so.
    Pass connections without a statement cache: a named prepared statement would itself collide there.
    `first` waiting for a server connection while `second` holds one (a pool of one) is the same finding:
    a session's own never waits."""
    before = await first.fetchval(session_sql.BACKEND_PID, timeout=timeout_s)
    async with second.transaction():
        await second.fetchval(session_sql.BACKEND_PID, timeout=timeout_s)
        try:
            after = await first.fetchval(session_sql.BACKEND_PID, timeout=timeout_s)
        except asyncio.TimeoutError:
            return False
    return bool(before == after)


def _connection_init(session: Mapping[str, str]) -> Callable[[asyncpg.Connection], Awaitable[None]]:
    """What the pool runs on each new connection: the jsonb codec, and `session`'s settings."""

    async def init(conn: asyncpg.Connection) -> None:
        await conn.set_type_codec("jsonb", encoder=json.dumps, decoder=json.loads, schema="pg_catalog")
        await set_session(conn, session)

    return init


async def _keep_session(conn: asyncpg.Connection) -> None:
    """The pool's reset on release, a no-op. asyncpg's default sends one more round trip per call
    (advisory unlock all, CLOSE ALL, UNLISTEN *, RESET ALL) to undo session state, and pooled
    connections never make any: advisory locks are transaction-scoped (pg_try_advisory_xact_lock),
    cursors live inside transactions, nothing SETs outside one, and LISTEN (the poller) and the
    migrations' session lock use connections of their own. An open transaction is still rolled
    back by asyncpg before this runs."""


def _session_settings(settings: PoolSettings) -> dict[str, str]:
    ms = round(settings.idle_in_transaction_timeout_s * 1000)
    return {"idle_in_transaction_session_timeout": str(ms)} if ms > 0 else {}


def _short(exc: BaseException) -> str:
    return bounded_message(f"{type(exc).__name__}: {exc}", 300)


def _bad_value(exc: BaseException) -> InvalidArgument:
    return InvalidArgument(f"the request holds a value the metastore database cannot store ({_short(exc)})")


def cannot_serve_cause(exc: BaseException) -> str:
    """What a `CANNOT_SERVE` error says of the database, for a person."""
    if isinstance(exc, asyncpg.ReadOnlySQLTransactionError):
        return "the database is read-only (a standby, or default_transaction_read_only)"
    if isinstance(exc, asyncpg.DiskFullError):
        return "the database is out of disk space"
    if isinstance(exc, asyncpg.OutOfMemoryError):
        return "the database is out of memory"
    if isinstance(exc, asyncpg.TooManyConnectionsError):
        return "the database is out of connections (max_connections)"
    return "the database is out of disk space/memory/connections"


def connect_refused_cause(exc: BaseException) -> str:
    """What a `CONNECT_REFUSED` error says of the database, for a person."""
    if isinstance(exc, asyncpg.InvalidCatalogNameError):
        return "the database refuses the gateway's new connections: the database no longer exists (dropped or renamed)"
    if isinstance(exc, asyncpg.ObjectNotInPrerequisiteStateError):
        return "the database refuses the gateway's new connections (ALTER DATABASE ... ALLOW_CONNECTIONS false?)"
    return ("the database refuses the gateway's credentials for new connections (the user's password changed, its "
            "login was revoked, or pg_hba.conf rejects it: fix the database or --dsn)")


def _lost(exc: BaseException, *, maybe_committed: bool) -> Unavailable:
    if maybe_committed:
        return Unavailable(f"lost the connection to PostgreSQL after the write was sent ({_short(exc)}): it may "
                           "have been committed; retry the call if it was not")
    return Unavailable(f"lost the connection to PostgreSQL ({_short(exc)}); retry the call")


class _Attempt:
    """One attempt of a call: whether it has sent what may commit (a write's COMMIT, or its one autocommitted
    statement). A connection lost after that leaves the call's outcome unknown, so it is not retried."""

    __slots__ = ("maybe_committed",)

    def __init__(self) -> None:
        self.maybe_committed = False


@dataclass(frozen=True, slots=True)
class PoolSettings:
    min_size: int = 2
    max_size: int = 10
    acquire_timeout_s: float = 10.0
    command_timeout_s: float = 60.0
    max_retries: int = 5
    # PostgreSQL's idle_in_transaction_session_timeout for the pool's sessions (0: none). A gateway
    # transaction idles only between its own round trips; one idle for seconds belongs to a gateway
    # that was stopped (SIGSTOP, a frozen VM) or wedged while holding row locks every writer needs
    # (the notification sequence, the txn counter), so the server ends it and the others go on.
    idle_in_transaction_timeout_s: float = 5.0
    # hive.metastore.server.max.message.size: the events a transaction appends are sized so that a
    # read of the notification log can answer each of them (store/events.py).
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    # hive.hmshandler.retry.attempts and .interval (module docstring): how often a call that met the database
    # away is tried again, and the longest wait between two tries. 0: it answers UNAVAILABLE at once (the
    # store's own default; the gateway passes Hive's, 10 and 2 s).
    outage_retries: int = 0
    outage_retry_interval_s: float = 2.0


class Database:
    """Owns the asyncpg pool. Create with `await Database.connect(dsn, settings)`."""

    def __init__(self, pool: asyncpg.Pool, settings: PoolSettings) -> None:
        self._pool = pool
        self._settings = settings
        self._cannot_serve_logged: dict[str, float] = {}  # cause -> time.monotonic() it was last logged
        self._outage_backoff = Backoff(initial_s=min(_OUTAGE_FIRST_WAIT_S, settings.outage_retry_interval_s),
                                       max_s=settings.outage_retry_interval_s, jitter=_OUTAGE_JITTER)
        # Shared with the views of `without_outage_retries`: the waits for the database, and the connections
        # checked out of the pool now.
        self._counts = {"outage_retries": 0, "in_use": 0}

    def without_outage_retries(self) -> "Database":
        """This pool with calls that answer an outage at once: for the loops that wait on their own terms
        (the poller, housekeeping, the compactor), whose back-off and failure metrics must see it as it is."""
        view = Database(self._pool, replace(self._settings, outage_retries=0))
        view._cannot_serve_logged, view._counts = self._cannot_serve_logged, self._counts
        return view

    @classmethod
    async def connect(cls, dsn: str, settings: PoolSettings = PoolSettings()) -> "Database":
        try:
            pool = await asyncpg.create_pool(
                dsn,
                # datanucleus.connectionPool.maxPoolSize may be below the usual floor (asyncpg refuses min > max).
                min_size=min(settings.min_size, settings.max_size),
                max_size=settings.max_size,
                command_timeout=settings.command_timeout_s,
                init=_connection_init(_session_settings(settings)),
                reset=_keep_session,
            )
        except CONNECTION_LOST as exc:
            raise Unavailable(f"cannot connect to PostgreSQL: {_short(exc)}") from exc
        except CANNOT_SERVE as exc:
            raise DatabaseCannotServe(f"{cannot_serve_cause(exc)} ({_short(exc)})") from exc
        assert pool is not None
        return cls(pool, settings)

    @property
    def pool(self) -> asyncpg.Pool:
        return self._pool

    @property
    def command_timeout_s(self) -> float:
        """How long one statement may run (asyncpg's `command_timeout`); connections of their own use it too."""
        return self._settings.command_timeout_s

    @overload
    async def transact(  # an Outcome: its events appended, `Written` back (listed first: it wins, as at run time)
        self,
        fn: Callable[Concatenate[asyncpg.Connection, P], Awaitable[Outcome[T]]],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> Written[T]: ...

    @overload
    async def transact(
        self,
        fn: Callable[Concatenate[asyncpg.Connection, P], Awaitable[T]],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T: ...

    async def transact(
        self,
        fn: Callable[Concatenate[asyncpg.Connection, P], Awaitable[Any]],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> Any:
        """Run `fn(conn, ...)` inside one transaction; bounded retry on serialization/deadlock.

        When `fn` returns an `Outcome`, its events are appended in order as the transaction's last
        step (after `fn` returned, right before commit: the event ids are allocated last) and the
        answer is `Written(value, event ids)`; otherwise `fn`'s result as it is."""

        async def in_transaction(conn: asyncpg.Connection, attempt: _Attempt) -> Any:
            async with conn.transaction():
                result = await fn(conn, *args, **kwargs)
                if isinstance(result, Outcome):
                    result = Written(result.value, tuple(await append_events(conn, result.events,
                                                                             self._settings.max_message_bytes)))
                attempt.maybe_committed = True  # leaving the block sends COMMIT
            return result

        return await self._attempts(in_transaction)

    async def run(
        self,
        fn: Callable[Concatenate[asyncpg.Connection, P], Awaitable[T]],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        """Run `fn(conn, ...)`, one statement (a write with its events appended in it, or a read that
        needs one snapshot), outside an explicit transaction: PostgreSQL commits the statement by
        itself, so the call costs one round trip, and the row locks a write takes are held only while
        the server executes and flushes it, never while a BEGIN or COMMIT waits on the gateway.
        Retries and errors as `transact`. A later read `fn` may send (to word an error) runs in a
        transaction of its own."""

        def autocommitted(conn: asyncpg.Connection, attempt: _Attempt) -> Awaitable[T]:
            attempt.maybe_committed = True  # the statement commits itself
            return fn(conn, *args, **kwargs)

        return await self._attempts(autocommitted)

    async def read(
        self,
        fn: Callable[Concatenate[asyncpg.Connection, P], Awaitable[T]],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        """Run a read-only `fn(conn, ...)` in one REPEATABLE READ snapshot (consistent multi-query reads)."""

        async def in_snapshot(conn: asyncpg.Connection, attempt: _Attempt) -> T:
            async with conn.transaction(isolation="repeatable_read", readonly=True):
                return await fn(conn, *args, **kwargs)

        return await self._attempts(in_snapshot)

    async def _attempts(self, attempt_once: Callable[[asyncpg.Connection, _Attempt], Awaitable[T]]) -> T:
        """`attempt_once(conn, attempt)` on a pooled connection, again after a conflict (bounded) and
        while the database is away (bounded, module docstring); database errors become store errors."""
        conflicts = outages = 0
        while True:
            attempt = _Attempt()
            try:
                async with self._connection() as conn:
                    return await attempt_once(conn, attempt)
            except _RETRYABLE as exc:
                conflicts += 1
                if conflicts > self._settings.max_retries:
                    # Nothing was written and the call may simply be repeated: the status that says so.
                    raise Unavailable(
                        f"gave up after {conflicts} attempts, each rolled back by a conflict with concurrent writers "
                        f"({_short(exc)}); nothing was written, retry the call") from exc
                await asyncio.sleep(_CONFLICT_BACKOFF.delay(conflicts))
            except _BAD_VALUE as exc:
                raise _bad_value(exc) from exc
            except CANNOT_SERVE as exc:
                raise self._cannot_serve(exc) from exc
            except _CANCELLED as exc:
                raise self._cancelled(exc) from exc
            except CONNECTION_LOST as exc:
                if _own_deadline(exc):
                    raise
                await self.expire_connections()  # the server likely restarted: the idle connections are dead too
                if attempt.maybe_committed or outages >= self._settings.outage_retries:
                    raise _lost(exc, maybe_committed=attempt.maybe_committed) from exc
                outages += 1
                self._counts["outage_retries"] += 1
                self._log_now_and_then(_OUTAGE_CAUSE, f"such calls wait and are tried again, up to "
                                       f"{self._settings.outage_retries} times (hive.hmshandler.retry.attempts)", exc)
                await asyncio.sleep(self._outage_backoff.delay(outages - 1))

    def _cannot_serve(self, exc: BaseException) -> DatabaseCannotServe:
        """What a `CANNOT_SERVE` error becomes; its cause logged once a minute at most, not with a
        traceback per call: every call answers it, and the fix is the database's, not the gateway's."""
        cause = cannot_serve_cause(exc)
        self._log_now_and_then(cause, "calls answer UNAVAILABLE until it is fixed", exc)
        return DatabaseCannotServe(f"{cause} ({_short(exc)}); retry once it is fixed")

    def _cancelled(self, exc: BaseException) -> StatementCancelled:
        """What a statement PostgreSQL cancelled becomes: UNAVAILABLE saying so, logged as `_cannot_serve`
        logs (an operator who set statement_timeout learns that it cuts the gateway's statements)."""
        self._log_now_and_then(_CANCELLED_CAUSE, "the calls it cut answer UNAVAILABLE", exc)
        return StatementCancelled(f"{_CANCELLED_CAUSE} ({_short(exc)}); its transaction was rolled back and "
                                  "nothing was written: retry the call")

    def _log_now_and_then(self, cause: str, consequence: str, exc: BaseException) -> None:
        """A warning for `cause`, again at most once a minute while it lasts."""
        now = time.monotonic()
        last = self._cannot_serve_logged.get(cause)
        if last is None or now - last >= _CANNOT_SERVE_LOG_INTERVAL_S:
            self._cannot_serve_logged[cause] = now
            _log.warning("%s: %s (%s)", cause, consequence, _short(exc))

    async def expire_connections(self) -> None:
        """Replace every pooled connection at its next acquire. A lost connection usually means the
        server restarted and the idle ones are dead too: without this each would fail one call
        before the pool noticed."""
        await self._pool.expire_connections()

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[asyncpg.Connection]:
        """A pooled connection, released however the block ends. The two time-outs become
        `Unavailable` with their own messages: the acquire (every connection busy) and, inside the
        block, asyncpg's `command_timeout` (it raises TimeoutError from the statement it cancelled)."""
        s = self._settings
        try:
            conn = await self._pool.acquire(timeout=s.acquire_timeout_s)
        except CONNECT_REFUSED as exc:
            cause = connect_refused_cause(exc)
            self._log_now_and_then(cause, "calls answer UNAVAILABLE until it is fixed", exc)
            raise DatabaseCannotServe(f"{cause} ({_short(exc)}); retry once it is fixed") from exc
        except asyncio.TimeoutError as exc:
            if _cancelling():
                raise
            if self._counts["in_use"] < s.max_size:
                # A connection was free to open, and opening it took the whole time: the server does not answer.
                silent = (f"no database connection could be opened within {s.acquire_timeout_s:g}s "
                          "(metastore.gateway.pool.acquire.timeout): the database host does not answer (down, a "
                          "network partition, a failover under way)")
                self._log_now_and_then(silent, "the calls it held up answer UNAVAILABLE", exc)
                raise Unavailable(f"{silent}; retry the call") from exc
            busy = (f"no database connection became free in time: all {s.max_size} connections of the pool stayed "
                    f"busy for {s.acquire_timeout_s:g}s (metastore.gateway.pool.acquire.timeout)")
            self._log_now_and_then(busy, "the calls it held up answer UNAVAILABLE", exc)
            raise Unavailable(f"{busy}; retry, or raise datanucleus.connectionPool.maxPoolSize") from exc
        self._counts["in_use"] += 1
        try:
            yield conn
        except asyncio.TimeoutError as exc:
            if _cancelling():
                raise
            ran_long = (f"a database statement ran longer than the command time-out ({s.command_timeout_s:g}s) and "
                        "was cancelled")
            self._log_now_and_then(ran_long, "the database is overloaded or a statement waits on a lock held "
                                   "elsewhere (pg_locks); the calls it cut answer UNAVAILABLE", exc)
            raise CommandTimeout(
                f"{ran_long}, its transaction rolled back. Retry; if it keeps happening the database is overloaded "
                "or a statement waits on a lock held elsewhere"
            ) from exc
        finally:
            self._counts["in_use"] -= 1
            await self._pool.release(conn)

    async def close(self, timeout_s: float = 10.0) -> None:
        """Close gracefully within `timeout_s`, then terminate what is left."""
        try:
            await asyncio.wait_for(self._pool.close(), timeout_s)
        except (asyncio.TimeoutError, Exception):  # noqa: BLE001 - shutdown must finish
            _log.warning("pool did not close within %.1fs; terminating connections", timeout_s)
            self._pool.terminate()

    def terminate(self) -> None:
        """Drop every connection at once, without a word to the server (one that does not answer)."""
        self._pool.terminate()

    def stats(self) -> dict[str, Any]:
        return {"size": self._pool.get_size(), "idle": self._pool.get_idle_size(), "max": self._pool.get_max_size(),
                "outage_retries": self._counts["outage_retries"]}
