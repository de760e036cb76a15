"""Hive's partition events over Thrift: markPartitionForEvent and isPartitionMarkedForEvent
(store/partition_events.py). Paimon's Hive catalog marks each partition LOAD_DONE when its mark-done action
includes mark-event, and asks for the marks when it lists partitions; before these were served, its job
failed at the mark (UNKNOWN_METHOD)."""

from __future__ import annotations

from typing import Any

from gateway.config import Settings
from gateway.thrift.convert import required
from store.catalog_store import CatalogStore


class PartitionEventMethods:
    """Mixed into the Thrift handler; needs `_catalog` and `_settings`."""

    _catalog: CatalogStore
    _settings: Settings

    async def markPartitionForEvent(self, db_name: str | None, tbl_name: str | None,  # noqa: N802 - Hive's name
                                    part_vals: dict[str, str] | None, eventType: int | None) -> None:  # noqa: N803
        await self._catalog.mark_partition(required(db_name, "db_name"), required(tbl_name, "tbl_name"),
                                           _spec(part_vals), required(eventType, "eventType"))

    async def isPartitionMarkedForEvent(self, db_name: str | None, tbl_name: str | None,  # noqa: N802
                                        part_vals: dict[str, str] | None, eventType: int | None) -> bool:  # noqa: N803
        return await self._catalog.is_partition_marked(
            required(db_name, "db_name"), required(tbl_name, "tbl_name"), _spec(part_vals),
            required(eventType, "eventType"), self._settings.partition_event_expiry_s)


def _spec(part_vals: Any) -> dict[str, str]:
    return dict(required(part_vals, "part_vals"))
