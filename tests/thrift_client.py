"""A Thrift client of the gateway's own IDL (thriftpy2), for the calls of Hive 3 and 4 that older
client libraries do not have. Synchronous, so each call runs in a thread: the gateway serves on
the test's event loop."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, AsyncIterator, Sequence

import thriftpy2.rpc

from gateway.thrift.idl import SERVICE, hms


class ThriftClient:
    def __init__(self, port: int) -> None:
        self.port = port
        self._client = thriftpy2.rpc.make_client(SERVICE, "127.0.0.1", port, timeout=30_000)

    async def __call__(self, method: str, *args: Any) -> Any:
        return await asyncio.to_thread(getattr(self._client, method), *args)

    def close(self) -> None:
        self._client.close()


@contextlib.asynccontextmanager
async def client_with_database(port: int, db: str = "db") -> AsyncIterator[ThriftClient]:
    """A client of the gateway's Thrift port, after it created database `db`; closed on exit."""
    client = ThriftClient(port)
    try:
        await client("create_database", hms.Database(name=db, description="", parameters={}))
        yield client
    finally:
        client.close()


def thrift_table(name: str, db: str = "db", owner: str = "alice", table_type: str = "MANAGED_TABLE", *,
                 keys: Sequence[str] = (), location: str | None = None, **params: str) -> Any:
    """A one-column Thrift Table with the given parameters, partitioned by string `keys` (none: not)."""
    sd = hms.StorageDescriptor(cols=[hms.FieldSchema(name="id", type="bigint", comment="")], location=location,
                               inputFormat="in", outputFormat="out", compressed=False, numBuckets=-1,
                               serdeInfo=hms.SerDeInfo(serializationLib="serde", parameters={}), bucketCols=[],
                               sortCols=[], parameters={})
    return hms.Table(tableName=name, dbName=db, owner=owner, sd=sd, parameters=dict(params), tableType=table_type,
                     partitionKeys=[hms.FieldSchema(name=k, type="string", comment="") for k in keys])
