"""A TCP front of the test's PostgreSQL (its Unix socket) that a test can cut off, as a network partition or a
failover would, without closing anything: a client then meets a server that does not answer."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any
from urllib.parse import parse_qs, urlsplit


class FailingOverFront:
    """`partition()`: from then on nothing passes on any connection, old or new, and nothing is closed.
    `fail_over()`: new connections pass again; the ones opened before stay silent."""

    def __init__(self, dsn: str) -> None:
        self._dsn = urlsplit(dsn)
        query = parse_qs(self._dsn.query)
        self.socket = f"{query['host'][0]}/.s.PGSQL.{query['port'][0]}"
        self.generation = 0
        self.blocked = False
        self.tasks: set[asyncio.Task[Any]] = set()

    def partition(self) -> None:
        self.generation += 1
        self.blocked = True

    def fail_over(self) -> None:
        self.blocked = False

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        born = self.generation
        task = asyncio.current_task()
        assert task is not None
        self.tasks.add(task)
        up_reader, up_writer = await asyncio.open_unix_connection(self.socket)

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError):
                while data := await src.read(65536):
                    if not self.blocked and born == self.generation:
                        dst.write(data)
                        await dst.drain()
            dst.close()

        try:
            await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        except asyncio.CancelledError:  # close(): the connections the failover left silent end here
            writer.close()
            up_writer.close()
        finally:
            self.tasks.discard(task)

    async def start(self, query: str = "") -> str:
        """Listen; the DSN of the database through this front (`query`: its query string, if any)."""
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        d = self._dsn
        return f"postgresql://{d.username}:{d.password}@127.0.0.1:{port}{d.path}" + (f"?{query}" if query else "")

    async def close(self) -> None:
        self.server.close()
        for task in list(self.tasks):
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
