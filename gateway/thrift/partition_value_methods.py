"""Hive's get_partition_values over the gateway's partition reads.

The rows are Hive's (hive/partition_values.py has its rules and where this answers otherwise); the
partitions they come from are read as every other partition listing reads them: through the read
facade, the cache first, PostgreSQL on a miss, with the filter read as get_partitions_by_filter reads
it, in the latest committed state, as every Thrift read without a snapshot: a transactional table's
partitions its open txns add are not among them. Hive 4's `validWriteIdList` is not read, as Hive 4
reads it nowhere here: the request carries no table id, without which a snapshot read of a
transactional table is refused (the list could be of another table of the name), so honouring it would
refuse what Hive answers. `partitionOrder` is not read, as Hive reads it nowhere. Hive holds this call
to no hive.metastore.limit.partition.request (it reads no partition objects), nor does the gateway; a
reply that would not fit hive.metastore.server.max.message.size is refused, saying how to ask for less.

Every refusal is a MetaException, as Hive answers every failure of this call: its handler declares
NoSuchObjectException but never raises it (a missing table fails Hive 2.3's to 4.0's store with a
NullPointerException; apache/hive master's GetPartitionsHandler looks the table up first and its
handler answers the NoSuchObjectException as a MetaException): gateway/thrift/errors.py
METHOD_EXCEPTIONS.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gateway.config import Settings
from gateway.thrift.convert import required
from gateway.thrift.data_methods import ALL_PARTITIONS
from gateway.thrift.idl import hms
from gateway.thrift.snapshots import LATEST
from hive.errors import InvalidArgument
from hive.partition_values import filtered_rows, requested_key_indexes, scan_size, unfiltered_rows
from store.errors import ResourceExhausted

if TYPE_CHECKING:
    from store.cache.facade import VersionsHit
    from store.snapshot import ReadSnapshot

# TBinaryProtocol sizes: a PartitionValuesRow is a field header (3), a list header (5), its strings (4 and
# the bytes each) and a stop (1); the reply's envelope (message header, result and response structs) is
# within what a reply's other fields may take.
_ROW_BYTES = 9
_VALUE_BYTES = 4
_ENVELOPE_BYTES = 1024


class PartitionValueMethods:
    """Mixed into the Thrift handler; needs `_settings` and the handler's `_matching_read`."""

    _settings: Settings

    if TYPE_CHECKING:  # the handler's
        async def _matching_read(self, db_name: str | None, tbl_name: str | None, filter_text: str, limit: int,
                                 snapshot: ReadSnapshot) -> VersionsHit: ...

    async def get_partition_values(self, request: Any) -> Any:
        """Hive's get_partition_values (PyPI's hive-metastore-client lists a table's partition values
        with it): without a filter the distinct (applyDistinct, the default) escaped values of the keys
        asked for; with one every key's values of the partitions it selects (hive/partition_values.py)."""
        req = required(request, "request")
        db_name, tbl_name = required(req.dbName, "dbName"), required(req.tblName, "tblName")
        requested = required(req.partitionKeys, "partitionKeys")
        if not requested:  # before the table is read, as Hive fails first on this (undeclared, there)
            raise InvalidArgument(f"get_partition_values of {db_name}.{tbl_name}: partitionKeys names no key; "
                                  "name one or more of its partition keys")
        filter_text = req.filter or ""
        distinct = req.applyDistinct is not False
        ascending = req.ascending is not False
        max_parts = -1 if req.maxParts is None else req.maxParts
        scan = scan_size(filtered=bool(filter_text), distinct=distinct, ascending=ascending, max_parts=max_parts)
        found = await self._matching_read(db_name, tbl_name, filter_text,
                                          ALL_PARTITIONS if scan is None else min(scan, ALL_PARTITIONS), LATEST)
        values = [v.values for v in found.versions]
        if filter_text:
            rows = filtered_rows(values, ascending=ascending, max_parts=max_parts)
        else:
            indexes = requested_key_indexes(found.table.full_name, found.table.partition_keys,
                                            [key.name if key is not None else None for key in requested])
            rows = unfiltered_rows(values, indexes, distinct=distinct, max_parts=max_parts)
        self._check_reply_fits(found.table.full_name, rows)
        return hms.PartitionValuesResponse(partitionValues=[hms.PartitionValuesRow(row=row) for row in rows])

    def _check_reply_fits(self, table_name: str, rows: list[list[str]]) -> None:
        limit = self._settings.max_message_bytes - _ENVELOPE_BYTES
        size = 0
        for row in rows:
            size += _ROW_BYTES + sum(_VALUE_BYTES + len(value.encode()) for value in row)
            if size > limit:
                raise ResourceExhausted(
                    f"get_partition_values of {table_name}: the {len(rows)} rows take more than one reply holds "
                    f"({limit} bytes, hive.metastore.server.max.message.size); ask for fewer with maxParts, "
                    "a filter, or fewer partitionKeys with applyDistinct")
