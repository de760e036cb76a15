"""The Hive metastore Thrift methods of column statistics: what Trino reads before planning and merges
and writes back after every INSERT (get_table_statistics_req, get_partitions_statistics_req,
update_table/partition_column_statistics, delete_table_column_statistics), what Hive's ANALYZE
sends (set_aggr_stats_for), and what Hive's planner reads of a partitioned table (get_aggr_stats_for).
The rules are the store's (store/column_stats.py) and Hive's (hive/column_stats.py, hive/stats_aggregation.py).

Hive's ColumnStatisticsData is a union: one member set, `longStats`, `stringStats`, ... Its member's
name less `Stats` is the store's kind; Date, Timestamp and Decimal values are unwrapped to their
numbers (days, seconds, unscaled bytes and scale).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from gateway.config import Settings
from gateway.thrift import convert
from gateway.thrift.convert import check_batch, required
from gateway.thrift.idl import hms
from gateway.thrift.snapshots import snapshot_of
from hive import stats_accuracy
from hive.column_stats import DECIMAL, FIELDS, ColumnStats
from hive.names import (canonical_partition_name, make_partition_name, normalize_identifier,
                        validate_partition_values)
from hive.limits import preview
from store.cache.facade import CachedCatalog, table_key
from store.catalog_store import CatalogStore
from store.column_stats import StatsUpdate
from store.errors import InvalidArgument, NotFound
from store.models import Table
from store.snapshot import ReadSnapshot

# kind -> (the union member's field name, its struct), read from the IDL: member `longStats` is kind "long".
_MEMBERS = {spec[1].removesuffix("Stats"): (spec[1], spec[2]) for spec in hms.ColumnStatisticsData.thrift_spec.values()}
# The kinds whose low and high values are wrapped in a struct of one number.
_WRAPPED = {"date": (hms.Date, "daysSinceEpoch"), "timestamp": (hms.Timestamp, "secondsSinceEpoch")}


def _value_in(kind: str, name: str, value: Any) -> Any:
    if value is None or name not in ("lowValue", "highValue"):
        return value
    if kind in _WRAPPED:
        return getattr(value, _WRAPPED[kind][1])
    if FIELDS[kind][name][0] == DECIMAL:
        return {"unscaled": value.unscaled, "scale": value.scale}
    return value


def _value_out(kind: str, name: str, value: Any) -> Any:
    if name not in ("lowValue", "highValue"):
        return value
    if kind in _WRAPPED:
        wrapper, field = _WRAPPED[kind]
        return wrapper(**{field: value})
    if FIELDS[kind][name][0] == DECIMAL:
        return hms.Decimal(unscaled=value["unscaled"], scale=value["scale"])
    return value


def stats_in(obj: Any) -> ColumnStats:
    """A ColumnStatisticsObj as the store's ColumnStats (checked by the store against the column)."""
    column = required(obj.colName if obj else None, "ColumnStatisticsObj.colName")
    data = required(obj.statsData, f"statsData of column {column}")
    members = [kind for kind, (field, _) in _MEMBERS.items() if getattr(data, field) is not None]
    if len(members) != 1:
        raise InvalidArgument(f"statsData of column {column} must set exactly one of "
                              f"{', '.join(field for field, _ in _MEMBERS.values())}; it sets {len(members)}")
    kind = members[0]
    member = getattr(data, _MEMBERS[kind][0])
    values = {name: _value_in(kind, name, getattr(member, name)) for name in FIELDS[kind]}
    return ColumnStats(column, obj.colType or "", kind, {k: v for k, v in values.items() if v is not None})


def _columns_having_stats(table: Table, parameters: Mapping[str, str]) -> set[str]:
    """The columns whose statistics Hive 4 answers with a table or partition read (its
    StatsSetupConst.getColumnsHavingStats of these parameters); all of a transactional table's."""
    if table.is_acid:
        return {c.name for c in table.columns}
    return set(stats_accuracy.parse(parameters.get(stats_accuracy.STATS_ACCURATE))[1])


def _statistics(db_name: str, table_name: str, part_name: str | None, found: list[ColumnStats]) -> Any:
    """A ColumnStatistics of one table (`part_name` None) or partition, dated by its first column's
    analysis, as Hive's ObjectStore dates it."""
    desc = hms.ColumnStatisticsDesc(isTblLevel=part_name is None, dbName=db_name, tableName=table_name,
                                    partName=part_name, lastAnalyzed=found[0].last_analyzed)
    return hms.ColumnStatistics(statsDesc=desc, statsObj=[stats_out(s) for s in found])


def stats_out(stats: ColumnStats) -> Any:
    field, struct = _MEMBERS[stats.kind]
    member = struct(**{name: _value_out(stats.kind, name, value) for name, value in stats.data.items()})
    data = hms.ColumnStatisticsData(**{field: member})
    return hms.ColumnStatisticsObj(colName=stats.column, colType=stats.column_type, statsData=data)


def _check_one_level(levels: list[bool]) -> None:
    """Hive's set_aggr_stats_for takes the first ColumnStatistics' `isTblLevel` for the whole request: a
    table's own statistics come alone ("Expecting only 1 ColumnStatistics for table's column stats, but find
    N", MetaException, in Hive 2.3.10, probed, and Hive 4's SetAggrStatsHandler), and after a partition's
    the others are read as partitions' (Hive 2.3.10 fails on a table's among them, 'Partition name is
    invalid. null', having written the partitions' before it). Refused whole here, nothing written."""
    if levels and levels[0] and len(levels) != 1:
        raise InvalidArgument(f"Expecting only 1 ColumnStatistics for table's column stats, but find {len(levels)} "
                              "(set_aggr_stats_for: a table's own statistics come alone in a request)")
    if levels and not levels[0] and any(levels):
        raise InvalidArgument(f"set_aggr_stats_for: ColumnStatistics {levels.index(True) + 1} of {len(levels)} is a "
                              "table's own (isTblLevel) among partitions' statistics; send it in a request of its own")


class StatsMethods:
    """Mixed into the Thrift handler; needs `_catalog`, `_cached` and `_settings`."""

    _catalog: CatalogStore
    _cached: CachedCatalog
    _settings: Settings

    if TYPE_CHECKING:  # the handler's
        async def _table_to_write(self, db_name: str, table_name: str) -> Table: ...

        async def _txn_of_write_id(self, table: Table, write_id: int | None, what: str) -> int: ...

    async def _write_stats(self, updates: list[StatsUpdate]) -> bool:
        altered, event_id = await self._catalog.update_column_stats(updates)
        for db_name, table_name in altered:  # marked accurate: this gateway's reads show it at once
            self._cached.wrote(db_name, table_name, event_id)
        return True

    def _update_of(self, stats: Any, *, table_level: bool, what: str) -> StatsUpdate:
        desc = required(stats.statsDesc if stats else None, f"{what}: statsDesc")
        objs = required(stats.statsObj, f"{what}: statsObj")
        check_batch(len(objs), what, self._settings.max_batch_size)
        part_name = None if table_level else required(desc.partName, f"{what}: statsDesc.partName")
        return StatsUpdate(required(desc.dbName, f"{what}: statsDesc.dbName"),
                           required(desc.tableName, f"{what}: statsDesc.tableName"), part_name,
                           tuple(stats_in(o) for o in objs))

    def _stats_sent_with(self, stats: Any, table: Table, part_values: Sequence[str] | None,
                         what: str, txn_id: int = 0) -> list[StatsUpdate]:
        """Hive 4's Table.colStats on a create_table and Partition.colStats on an add_partitions (what its
        replication's bootstrap load sends; HMSHandler writes them right after the object, with its write
        id): the statistics to write with the table (`part_values` None) or that partition, which must be
        its own. None sent, or none in them: nothing to write."""
        if stats is None or not stats.statsObj:
            return []
        check_batch(len(stats.statsObj), what, self._settings.max_batch_size)
        desc = stats.statsDesc or hms.ColumnStatisticsDesc()
        named = table_key(desc.dbName or table.db_name, desc.tableName or table.name)
        if named != table_key(table.db_name, table.name):
            raise InvalidArgument(f"{what} names table {'.'.join(named)}, not {table.full_name}, the one it comes "
                                  "with; send another table's statistics with update_table_column_statistics")
        part_name = None
        if part_values is None:
            if desc.isTblLevel is False or desc.partName:
                raise InvalidArgument(f"{what} of table {table.full_name} are a partition's (isTblLevel false or a "
                                      "partName); a table's own statistics come with it")
        else:
            keys = table.partition_keys
            part_name = make_partition_name(keys, validate_partition_values(keys, part_values))
            if desc.isTblLevel:
                raise InvalidArgument(f"{what} of partition {part_name} are the table's own (isTblLevel); send "
                                      "them with update_table_column_statistics")
            if desc.partName and canonical_partition_name(keys, desc.partName) != part_name:
                raise InvalidArgument(f"{what} name partition {preview(desc.partName, 80)}, not {part_name}, the "
                                      "one they come with")
        return [StatsUpdate(table.db_name, table.name, part_name, tuple(stats_in(o) for o in stats.statsObj),
                            txn_id=txn_id)]

    async def update_table_column_statistics(self, stats_obj: Any) -> bool:
        return await self._write_stats([self._update_of(stats_obj, table_level=True,
                                                        what="update_table_column_statistics")])

    async def update_partition_column_statistics(self, stats_obj: Any) -> bool:
        return await self._write_stats([self._update_of(stats_obj, table_level=False,
                                                        what="update_partition_column_statistics")])

    async def set_aggr_stats_for(self, request: Any) -> bool:
        """Hive's ANALYZE and INSERT: a table's own statistics, or partitions', in one transaction. Each
        one is the table's (`isTblLevel`) or its `partName`'s; `needMerge` merges them into the old ones.
        Hive 3's `writeId`, the write id its txn allocated, writes a transactional table's statistics
        under that txn: they become visible when it commits, and its abort discards them. A request is of
        one level, the first's (`_check_one_level`). Each ColumnStatistics is written in turn, so a partition
        named twice gets both: merged into the old ones one after the other with needMerge (Hive 3's and 4's
        result; Hive 2.3 merges each into the statistics it read before writing any, the last one winning),
        written over them without (the last one's values kept, as Hive 2.3; Hive 3 and 4 merge the two)."""
        col_stats = required(request.colStats if request else None, "set_aggr_stats_for: colStats")
        check_batch(len(col_stats), "set_aggr_stats_for", self._settings.max_batch_size)
        levels = [bool(s and s.statsDesc and s.statsDesc.isTblLevel) for s in col_stats]
        _check_one_level(levels)
        updates = [self._update_of(s, table_level=level, what="set_aggr_stats_for")
                   for s, level in zip(col_stats, levels)]
        if request.needMerge:  # Hive's INSERT INTO: the new rows' statistics merged into the old
            updates = [replace(u, merge_old=True) for u in updates]
        return await self._write_stats(await self._under_write_id(updates, request.writeId, "set_aggr_stats_for"))

    async def _under_write_id(self, updates: list[StatsUpdate], write_id: int | None,
                              what: str) -> list[StatsUpdate]:
        """The updates under the txn that allocated `write_id` (Hive 3's and 4's SetPartitionsStatsRequest
        .writeId) where it is set; a table that is not transactional is written at once."""
        if write_id is None or write_id <= 0:
            return updates
        txn_of: dict[tuple[str, str], int] = {}  # 0 for a table that is not transactional: written at once
        for key in dict.fromkeys(table_key(u.db_name, u.table_name) for u in updates):
            txn_of[key] = await self._txn_of_write_id(await self._table_to_write(*key), write_id, what)
        return [replace(u, txn_id=txn_of[table_key(u.db_name, u.table_name)]) for u in updates]

    async def update_table_column_statistics_req(self, req: Any) -> Any:
        """Hive 4's HiveMetaStoreClient.updateTableColumnStatistics: update_table_column_statistics in a
        request, with a writeId for a transactional table's (`_one_stats_request`)."""
        return await self._one_stats_request(req, table_level=True, what="update_table_column_statistics_req")

    async def update_partition_column_statistics_req(self, req: Any) -> Any:
        return await self._one_stats_request(req, table_level=False, what="update_partition_column_statistics_req")

    async def _one_stats_request(self, req: Any, *, table_level: bool, what: str) -> Any:
        """One ColumnStatistics (else InvalidInputException, as Hive 4's HMSHandler answers), never merged
        (that is set_aggr_stats_for's), written under the txn of the request's writeId when set."""
        col_stats = required(req.colStats if req else None, f"{what}: colStats")
        if len(col_stats) != 1:
            raise hms.InvalidInputException(message=f"Only one stats object expected ({what} got {len(col_stats)}); "
                                                    "send several with set_aggr_stats_for")
        if req.needMerge:
            raise hms.InvalidInputException(message=f"Merge is not supported for non-aggregate stats ({what}); "
                                                    "send needMerge with set_aggr_stats_for")
        update = self._update_of(col_stats[0], table_level=table_level, what=what)
        written = await self._write_stats(await self._under_write_id([update], req.writeId, what))
        return hms.SetPartitionsStatsResponse(result=written)

    async def get_table_statistics_req(self, request: Any) -> Any:
        """The table's statistics of the asked columns that have them (none: an empty list), as the request's
        ValidWriteIdList sees them (store/snapshot.py `statistics_seen`: a txn sees its own)."""
        columns = required(request.colNames if request else None, "TableStatsRequest.colNames")
        check_batch(len(columns), "get_table_statistics_req", self._settings.max_batch_size)
        stats = await self._catalog.table_column_stats(required(request.dbName, "TableStatsRequest.dbName"),
                                                       required(request.tblName, "TableStatsRequest.tblName"), columns,
                                                       snapshot_of(request))
        return hms.TableStatsResult(tableStats=[stats_out(s) for s in stats])

    async def get_partitions_statistics_req(self, request: Any) -> Any:
        """Partition name -> its statistics of the asked columns, for the asked partitions that have any."""
        columns = required(request.colNames if request else None, "PartitionsStatsRequest.colNames")
        names = required(request.partNames, "PartitionsStatsRequest.partNames")
        check_batch(len(columns), "get_partitions_statistics_req", self._settings.max_batch_size)
        check_batch(len(names), "get_partitions_statistics_req", self._settings.max_batch_size)
        by_partition = await self._catalog.partition_column_stats(
            required(request.dbName, "PartitionsStatsRequest.dbName"),
            required(request.tblName, "PartitionsStatsRequest.tblName"), names, columns, snapshot_of(request))
        return hms.PartitionsStatsResult(partStats={name: [stats_out(s) for s in stats]
                                                    for name, stats in by_partition.items()})

    async def get_aggr_stats_for(self, request: Any) -> Any:
        """Hive's planner: the asked columns' statistics aggregated over the asked partitions, the missing
        ones' share extrapolated (hive/stats_aggregation.py), and how many partitions have them all."""
        columns = required(request.colNames if request else None, "PartitionsStatsRequest.colNames")
        names = required(request.partNames, "PartitionsStatsRequest.partNames")
        check_batch(len(columns), "get_aggr_stats_for", self._settings.max_batch_size)
        check_batch(len(names), "get_aggr_stats_for", self._settings.max_batch_size)
        stats, parts_found = await self._catalog.aggregate_partition_column_stats(
            required(request.dbName, "PartitionsStatsRequest.dbName"),
            required(request.tblName, "PartitionsStatsRequest.tblName"), names, columns, snapshot_of(request))
        return hms.AggrStats(colStats=[stats_out(s) for s in stats], partsFound=parts_found)

    async def _one_column(self, db_name: str, tbl_name: str, part_name: str | None, col_name: str) -> Any:
        """One column's statistics of the table (`part_name` None) or a partition; NoSuchObjectException
        when it has none (Hive 2.3 answers no result, which its own client reports as an internal error)."""
        db, table, column = required(db_name, "db_name"), required(tbl_name, "tbl_name"), required(col_name, "col_name")
        name: str | None = None
        if part_name is None:
            found = await self._catalog.table_column_stats(db, table, [column])
        else:
            by_partition = await self._catalog.partition_column_stats(db, table, [required(part_name, "part_name")],
                                                                      [column])
            name, found = next(iter(by_partition.items()), (None, []))
        if not found:
            of = f"partition {part_name} of table" if part_name is not None else "table"
            raise NotFound(f"no statistics for column {column} of {of} {db}.{table}")
        return _statistics(normalize_identifier(db, "database"), normalize_identifier(table, "table"), name, found[:1])

    async def partition_statistics_of(self, table: Table, partitions: Sequence[Any],
                                      snapshot: ReadSnapshot) -> list[Any]:
        """Hive 4's get_partitions_by_names_req with get_col_stats: each of `partitions` (Thrift Partitions
        of `table`) with its statistics (a ColumnStatistics) of the columns its COLUMN_STATS_ACCURATE names,
        as `snapshot` sees them (all the table's columns for a transactional table, as
        `table_statistics_of`), or None when it has none, as Hive then leaves its colStats unset."""
        names = [convert.partition_name(table, p.values) for p in partitions]
        having = [_columns_having_stats(table, p.parameters or {}) for p in partitions]
        columns = sorted(set().union(*having))
        found = await self._catalog.partition_column_stats(table.db_name, table.name, sorted(set(names)), columns,
                                                           snapshot) if columns else {}
        return [_statistics(table.db_name, table.name, name, kept)
                if (kept := [s for s in found.get(name, []) if s.column in columns_of]) else None
                for name, columns_of in zip(names, having)]

    async def table_statistics_of(self, table: Table, snapshot: ReadSnapshot) -> Any:
        """Hive 4's get_table_req with getColumnStats: the table's statistics of the columns its
        COLUMN_STATS_ACCURATE names (Hive's StatsSetupConst.getColumnsHavingStats), as `snapshot` sees
        them; None when there are none, and Hive then leaves Table.colStats unset. A transactional
        table's statistics are versioned by write id instead of marked (store/column_stats.py), so all
        its columns' are asked for: the snapshot decides which are seen."""
        columns = _columns_having_stats(table, table.parameters)
        found = await self._catalog.table_column_stats(table.db_name, table.name, sorted(columns),
                                                       snapshot) if columns else []
        return _statistics(table.db_name, table.name, None, found) if found else None

    async def get_table_column_statistics(self, db_name: str, tbl_name: str, col_name: str) -> Any:
        return await self._one_column(db_name, tbl_name, None, col_name)

    async def get_partition_column_statistics(self, db_name: str, tbl_name: str, part_name: str,
                                              col_name: str) -> Any:
        return await self._one_column(db_name, tbl_name, part_name, col_name)

    async def delete_table_column_statistics(self, db_name: str, tbl_name: str, col_name: str | None) -> bool:
        """One column's statistics, or every column's when `col_name` is unset."""
        await self._catalog.delete_column_stats(required(db_name, "db_name"), required(tbl_name, "tbl_name"), None,
                                                col_name or None)
        return True

    async def delete_column_statistics_req(self, req: Any) -> bool:
        """The newest Hive client's deleteColumnStatistics (and its deleteTableColumnStatistics and
        deletePartitionColumnStatistics): `col_names`' statistics (none named: every column's) of the
        table's own when `tableLevel` or the table is unpartitioned, else of `part_names` (none named:
        every partition's), as Hive's HMSHandler reads the request (store/column_stats.py delete_many)."""
        req = required(req, "req")
        db_name, tbl_name = required(req.db_name, "db_name"), required(req.tbl_name, "tbl_name")
        part_names, columns = list(req.part_names or []), list(req.col_names or [])
        check_batch(len(part_names) + len(columns), "delete_column_statistics_req", self._settings.max_batch_size)
        await self._catalog.delete_many_column_stats(db_name, tbl_name, part_names, columns,
                                                     table_level=bool(req.tableLevel))
        return True

    async def delete_partition_column_statistics(self, db_name: str, tbl_name: str, part_name: str,
                                                 col_name: str | None) -> bool:
        await self._catalog.delete_column_stats(required(db_name, "db_name"), required(tbl_name, "tbl_name"),
                                                required(part_name, "part_name"), col_name or None)
        return True
