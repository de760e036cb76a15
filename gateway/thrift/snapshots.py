"""The snapshot a Thrift read carries: Hive 3's and 4's requests send the table's ValidWriteIdList
(`validWriteIdList`) and Hive 4's the table id (`id`); Hive 2.3 clients and Trino send neither, and
read the latest committed state (LATEST)."""

from __future__ import annotations

from typing import Any

from gateway.thrift.convert import required
from store.cache.facade import table_key as table_key_of
from store.snapshot import ReadSnapshot, parse_snapshot

LATEST = ReadSnapshot(latest_committed=True)


def snapshot_of(req: Any) -> ReadSnapshot:
    """The snapshot a request carries (`validWriteIdList`, the table `id` when the struct has one and it is
    set), or LATEST; a list of another table than the one the request reads (dbName and tblName; db_name
    and tbl_name in GetPartitionsByNamesRequest) is refused whichever path would answer, as over gRPC."""
    if not req.validWriteIdList:
        return LATEST
    table_id = getattr(req, "id", None)
    snapshot = parse_snapshot(req.validWriteIdList, 0, table_id if table_id and table_id > 0 else 0)
    db_name = getattr(req, "dbName", None) or getattr(req, "db_name", None)
    table_name = getattr(req, "tblName", None) or getattr(req, "tbl_name", None)
    snapshot.check_table_name(".".join(table_key_of(required(db_name, "dbName"), required(table_name, "tblName"))))
    return snapshot
