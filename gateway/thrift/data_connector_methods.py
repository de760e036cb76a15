"""Hive 4's data connectors (the remote databases of CREATE CONNECTOR / CREATE REMOTE DATABASE, and
Impala's CREATE DATA SOURCE): this metastore keeps none. Listing answers none, as Hive's metastore does
when it holds none: Impala's catalog lists them at every start and every INVALIDATE METADATA, and loads no
database at all when the list fails. Reading one is NoSuchObjectException; creating or altering one is
refused, saying so (MetaException), as a remote database is (create_database_req); dropping one that does
not exist is NoSuchObjectException unless `ifNotExists`.
"""

from __future__ import annotations

from typing import Any

from gateway.thrift.convert import required
from hive.limits import preview
from store.errors import NeverAllowed, NotFound

_NONE_KEPT = "this metastore keeps no data connectors (remote databases)"


def _missing(name: Any) -> NotFound:
    return NotFound(f"data connector {preview(str(name), 80)} does not exist: {_NONE_KEPT}")


class DataConnectorMethods:
    """Mixed into the Thrift handler; needs nothing of it."""

    async def get_dataconnectors(self) -> list[str]:
        return []

    async def get_dataconnector_req(self, request: Any) -> Any:
        raise _missing(required(required(request, "request").connectorName, "connectorName"))

    async def create_dataconnector(self, connector: Any) -> None:
        name = required(required(connector, "connector").name, "connector.name")
        raise NeverAllowed(f"{_NONE_KEPT}: data connector {preview(str(name), 80)} was not created")

    async def create_dataconnector_req(self, connectorReq: Any) -> None:  # noqa: N803 - Hive's name
        await self.create_dataconnector(required(connectorReq, "connectorReq").connector)

    async def alter_dataconnector(self, name: str | None, connector: Any) -> None:
        raise _missing(required(name, "name"))

    async def alter_dataconnector_req(self, alterReq: Any) -> None:  # noqa: N803 - Hive's name
        raise _missing(required(required(alterReq, "alterReq").connectorName, "connectorName"))

    async def drop_dataconnector_req(self, dropDcReq: Any) -> None:  # noqa: N803 - Hive's name
        request = required(dropDcReq, "dropDcReq")
        name = required(request.connectorName, "connectorName")
        if not request.ifNotExists:
            raise _missing(name)
