"""The connection pool and the one place asyncpg errors become store errors.

`Database.transact(fn, *args)` runs `fn(conn, *args)` in one database transaction and retries it
a bounded number of times on serialization failures and deadlocks, the only errors for which a
blind retry is correct. Connection loss becomes `Unavailable` (retryable by the caller).
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Concatenate, ParamSpec, TypeVar

import asyncpg

from store.errors import StoreError, Unavailable

_log = logging.getLogger(__name__)

P = ParamSpec("P")
T = TypeVar("T")

_RETRYABLE = (asyncpg.SerializationError, asyncpg.DeadlockDetectedError)
_CONNECTION_LOST = (
    asyncpg.PostgresConnectionError,
    asyncpg.InterfaceError,
    asyncpg.CannotConnectNowError,
    asyncpg.AdminShutdownError,
    ConnectionError,
    OSError,
)


async def _init_connection(conn: asyncpg.Connection) -> None:
    await conn.set_type_codec("jsonb", encoder=json.dumps, decoder=json.loads, schema="pg_catalog")


@dataclass(frozen=True, slots=True)
class PoolSettings:
    min_size: int = 2
    max_size: int = 10
    acquire_timeout_s: float = 10.0
    command_timeout_s: float = 60.0
    max_retries: int = 5


class Database:
    """Owns the asyncpg pool. Create with `await Database.connect(dsn, settings)`."""

    def __init__(self, pool: asyncpg.Pool, settings: PoolSettings) -> None:
        self._pool = pool
        self._settings = settings

    @classmethod
    async def connect(cls, dsn: str, settings: PoolSettings = PoolSettings()) -> "Database":
        try:
            pool = await asyncpg.create_pool(
                dsn,
                min_size=settings.min_size,
                max_size=settings.max_size,
                command_timeout=settings.command_timeout_s,
                init=_init_connection,
            )
        except _CONNECTION_LOST as exc:
            raise Unavailable(f"cannot connect to PostgreSQL: {exc}") from exc
        assert pool is not None
        return cls(pool, settings)

    @property
    def pool(self) -> asyncpg.Pool:
        return self._pool

    async def transact(
        self,
        fn: Callable[Concatenate[asyncpg.Connection, P], Awaitable[T]],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        """Run `fn(conn, ...)` inside one transaction; bounded retry on serialization/deadlock."""
        attempt = 0
        while True:
            attempt += 1
            try:
                async with self._pool.acquire(timeout=self._settings.acquire_timeout_s) as conn:
                    async with conn.transaction():
                        return await fn(conn, *args, **kwargs)
            except _RETRYABLE as exc:
                if attempt > self._settings.max_retries:
                    raise StoreError(f"gave up after {attempt} attempts on a database conflict: {exc}") from exc
                # Jittered back-off so colliding writers do not collide again in lock step.
                await asyncio.sleep(random.uniform(0, 0.01 * 2**attempt))
            except asyncio.TimeoutError as exc:
                if (task := asyncio.current_task()) is not None and task.cancelling():
                    raise
                raise Unavailable("no database connection became free in time (pool exhausted)") from exc
            except _CONNECTION_LOST as exc:
                raise Unavailable(f"lost the connection to PostgreSQL: {exc}") from exc

    async def read(
        self,
        fn: Callable[Concatenate[asyncpg.Connection, P], Awaitable[T]],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        """Run a read-only `fn(conn, ...)` in one REPEATABLE READ snapshot (consistent multi-query reads)."""
        try:
            async with self._pool.acquire(timeout=self._settings.acquire_timeout_s) as conn:
                async with conn.transaction(isolation="repeatable_read", readonly=True):
                    return await fn(conn, *args, **kwargs)
        except asyncio.TimeoutError as exc:
            if (task := asyncio.current_task()) is not None and task.cancelling():
                raise
            raise Unavailable("no database connection became free in time (pool exhausted)") from exc
        except _CONNECTION_LOST as exc:
            raise Unavailable(f"lost the connection to PostgreSQL: {exc}") from exc

    async def close(self, timeout_s: float = 10.0) -> None:
        """Close gracefully within `timeout_s`, then terminate what is left."""
        try:
            await asyncio.wait_for(self._pool.close(), timeout_s)
        except (asyncio.TimeoutError, Exception):  # noqa: BLE001 - shutdown must finish
            _log.warning("pool did not close within %.1fs; terminating connections", timeout_s)
            self._pool.terminate()

    def stats(self) -> dict[str, Any]:
        return {"size": self._pool.get_size(), "idle": self._pool.get_idle_size(), "max": self._pool.get_max_size()}
