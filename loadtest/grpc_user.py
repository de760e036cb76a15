"""`GrpcUser`: a `User` with its own grpc.aio channel to the target, for any generated stub.

    class CatalogReader(GrpcUser):
        async def on_start(self) -> None:
            await super().on_start()                      # opens and connects self.channel
            self.stub = catalog_pb2_grpc.CatalogStub(self.channel)

        @task
        async def get_table(self) -> None:
            async with self.measure("GetTable") as m:
                await self.stub.GetTable(request, timeout=self.call_timeout_s)

One channel per user models independent clients (each with its own HTTP/2 connection); several
users sharing a connection would measure stream multiplexing instead.
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar, Sequence

import grpc

from loadtest.users import User


class GrpcUser(User):
    """Opens `self.channel` (insecure, to `self.host`) in `on_start` and waits until it is connected,
    so connection setup is not timed as a request; closes it in `on_stop`."""

    channel_options: ClassVar[Sequence[tuple[str, Any]]] = ()
    connect_timeout_s: ClassVar[float] = 10.0
    call_timeout_s: ClassVar[float] = 10.0

    channel: grpc.aio.Channel | None = None

    async def on_start(self) -> None:
        self.channel = grpc.aio.insecure_channel(self.host, options=list(self.channel_options))
        await asyncio.wait_for(self.channel.channel_ready(), timeout=self.connect_timeout_s)

    async def on_stop(self) -> None:
        channel, self.channel = self.channel, None
        if channel is not None:
            await channel.close(grace=None)
