"""A Thrift client of the gateway's own IDL (thriftpy2), for the calls of Hive 3 and 4 that older
client libraries do not have. Synchronous, so each call runs in a thread: the gateway serves on
the test's event loop."""

from __future__ import annotations

import asyncio
from typing import Any

import thriftpy2.rpc

from gateway.thrift.idl import SERVICE


class ThriftClient:
    def __init__(self, port: int) -> None:
        self._client = thriftpy2.rpc.make_client(SERVICE, "127.0.0.1", port, timeout=30_000)

    async def __call__(self, method: str, *args: Any) -> Any:
        return await asyncio.to_thread(getattr(self._client, method), *args)

    def close(self) -> None:
        self._client.close()
