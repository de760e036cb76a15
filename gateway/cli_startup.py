"""Start-up failures as one line naming the cause and the fix, instead of a traceback.

Only failures an operator causes and can fix are explained (a port in use, a database that does
not answer, refuses the credentials, is read-only or is out of disk space, memory or connections, refuses
the gateway's user the rights to its tables, cancels a statement (statement_timeout), a bad setting (a
DSN that cannot be used as written too: gateway/app.py connect_dsn), the embedded PostgreSQL failing); anything
else is a bug and keeps its traceback.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import asyncpg

from gateway.config import ConfigError, Settings, redact_dsn
from gateway.embedded_pg import EmbeddedPostgresError
from gateway.server import BindError
from store.db import CANNOT_SERVE, cannot_serve_cause
from store.errors import DatabaseCannotServe, SchemaMismatch, SessionsNotKept, StatementCancelled, Unavailable


def where(dsn: str) -> str:
    """The database a DSN names, without its password: host:port/database when the URL names a host,
    else the whole DSN as `redact_dsn` shows it (a socket directory or a host in the query string)."""
    try:
        parts = urlsplit(dsn)
        host, port = parts.hostname, parts.port
    except ValueError:  # an unreadable port or address: the redacted DSN says so
        return redact_dsn(dsn)
    return f"{host}:{port or 5432}{parts.path}" if host else redact_dsn(dsn)


def explain(exc: BaseException, settings: Settings | None) -> str | None:
    """The one line for a start-up failure an operator can fix; None for anything else (a bug)."""
    dsn = settings.dsn if settings is not None else ""
    database = f"the database at {where(dsn)}" if dsn else "the embedded PostgreSQL"
    fix_dsn = "check that PostgreSQL runs there and that --dsn (metastore.gateway.dsn) names it" if dsn else \
        "see its log in the data directory"
    if isinstance(exc, (BindError, ConfigError, SchemaMismatch)):
        return str(exc)
    if isinstance(exc, EmbeddedPostgresError):
        return f"the embedded PostgreSQL did not start: {_short(exc)}"
    if isinstance(exc, (asyncpg.InvalidPasswordError, asyncpg.InvalidAuthorizationSpecificationError)):
        return f"{database} refused the credentials: {_short(exc)}; fix the user or password in --dsn"
    cannot_serve = exc.__cause__ if isinstance(exc, DatabaseCannotServe) else exc
    if isinstance(cannot_serve, CANNOT_SERVE):
        return (f"{cannot_serve_cause(cannot_serve)} ({database}): {_short(cannot_serve)}; point --dsn at a primary "
                "with default_transaction_read_only off, or free disk space, memory or connections there")
    if isinstance(exc, asyncpg.InsufficientPrivilegeError):
        user = f" {_user(dsn)}" if _user(dsn) else ""
        return (f"{database} refused the gateway's user{user} a step of its start-up ({_short(exc)}): the gateway "
                "creates and changes its own tables; make the user the database's owner (ALTER DATABASE ... OWNER TO "
                "...), or let it create in schema public (GRANT CREATE ON SCHEMA public TO ...: PostgreSQL 15 and "
                "later no longer let every user), and own the gateway's tables")
    cancelled = exc.__cause__ if isinstance(exc, StatementCancelled) else exc
    if isinstance(cancelled, asyncpg.QueryCanceledError):
        return (f"{database} cancelled a statement of the gateway's start-up ({_short(cancelled)}): a "
                "statement_timeout set for the gateway's user or database (ALTER ROLE or ALTER DATABASE ... SET "
                "statement_timeout) shorter than the schema migration, the cache's load or a lock wait take, or an "
                "administrator's pg_cancel_backend; raise it, or set it to 0 for the gateway's user, and start again")
    if isinstance(exc, (SessionsNotKept, asyncpg.DuplicatePreparedStatementError,
                        asyncpg.InvalidSQLStatementNameError)):
        # found by the start-up's check, or asyncpg's prepared statements met on another server connection
        return (f"{database} is reached through a connection pooler in transaction or statement mode (PgBouncer's "
                "pool_mode = transaction), which hands each transaction another server connection "
                f"({str(exc).splitlines()[0][:200]}): "
                "the gateway keeps state in its sessions (prepared statements, the poller's LISTEN, the migrations' "
                "lock); give its database pool_mode = session in the pooler, or point --dsn at PostgreSQL itself")
    if isinstance(exc, asyncpg.InvalidCatalogNameError):
        return f"{database}: {_short(exc)}; create it (CREATE DATABASE) or name an existing one in --dsn"
    if isinstance(exc, (Unavailable, OSError, TimeoutError, asyncpg.CannotConnectNowError,
                        asyncpg.PostgresConnectionError)):
        return f"cannot connect to {database}: {_short(exc)}; {fix_dsn}"
    return None


def _user(dsn: str) -> str:
    """The user name a DSN's URL names ("" when it names none, or cannot be read)."""
    try:
        return urlsplit(dsn).username or ""
    except ValueError:
        return ""


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:300]
