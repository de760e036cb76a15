"""The Hive metastore Thrift methods: thin adapters from Hive's call shapes to the store.

Each method converts its arguments, makes one store call (or a few for the composite calls Hive
has), and converts back; errors pass through to the server, which answers them with an exception
the method declares. Reads go through the gateway's one read facade (store/cache/facade.py) and
every write hands its outcome to it, as the gRPC servicer does, so a write through either protocol
is read back on this gateway through either. Reads that carry no snapshot (every Hive 2.3 read,
Trino's) get the latest committed state (`LATEST`): a transactional table answers what is committed
now, never uncommitted versions. Names are case-insensitive, as in Hive; the store normalises them.
"""

from __future__ import annotations

import time
from typing import Any, Sequence

from thriftpy2.thrift import TType

from gateway.auth import Ownership
from gateway.config import Settings, settings_keys
from gateway.thrift import convert
from gateway.thrift import wire
from gateway.thrift.idl import hms
from gateway.thrift.server import RawValue
from gateway.thrift.txn_methods import TxnLockMethods
from store.cache.facade import CachedCatalog, VersionsHit
from store.cache.facade import table_key as table_key_of
from store.catalog_store import CatalogStore
from store.lock_store import LockStore
from store.errors import InvalidArgument, NotFound, ResourceExhausted
from store.models import Partition, Table
from hive.names import normalize_identifier, parse_partition_name
from store.snapshot import ReadSnapshot
from store.txn_store import TxnStore

LATEST = ReadSnapshot(latest_committed=True)
ALIVE = 2  # fb303's fb_status.ALIVE
VERSION = "2.3.10-metastore-gateway"
DDL_TIME = "transient_lastDdlTime"


def _stamp_ddl_time(parameters: dict[str, str] | None) -> dict[str, str]:
    """Hive's metastore stamps a table or partition it creates or alters with the time of that DDL
    (seconds) when the client sent none (Hive's own client removes the old one before an alter)."""
    out = dict(parameters or {})
    if out.get(DDL_TIME, "0") in ("", "0"):
        out[DDL_TIME] = str(int(time.time()))
    return out


def _required(value: Any, what: str) -> Any:
    if value is None or value == "":
        raise InvalidArgument(f"{what} is required")
    return value


def _limit(max_parts: int | None, cap: int) -> int:
    """Hive's max_parts: negative means all (here: up to the gateway's batch limit)."""
    if max_parts is None or max_parts < 0:
        return cap
    return min(max_parts, cap)


def _matches_partial(values: Sequence[str], partial: Sequence[str]) -> bool:
    """Hive's partial partition spec: a value per leading key, '' matching any value."""
    return all(want == "" or want == have for want, have in zip(partial, values))


def _check_batch(count: int, what: str, limit: int) -> None:
    if count > limit:
        raise ResourceExhausted(f"{what}: {count} items in one call, more than metastore.gateway.max.batch.size "
                                f"({limit}); split the call")


class HiveMetastoreHandler(TxnLockMethods):
    """ThriftHiveMetastore (and fb303) over the gateway's stores; txns and locks in TxnLockMethods."""

    def __init__(self, catalog: CatalogStore, cached: CachedCatalog, txns: TxnStore, locks: LockStore,
                 settings: Settings) -> None:
        self._catalog = catalog
        self._cached = cached
        self._txns = txns
        self._locks = locks
        self._owners = Ownership(txns, locks)
        self._settings = settings
        self._started = int(time.time())

    # -- fb303 and session ------------------------------------------------------------------------

    async def getName(self) -> str:  # noqa: N802 - Thrift's method names
        return "metastore-gateway"

    async def getVersion(self) -> str:  # noqa: N802
        return VERSION

    async def getStatus(self) -> int:  # noqa: N802
        return ALIVE

    async def aliveSince(self) -> int:  # noqa: N802
        return self._started

    async def shutdown(self) -> None:
        """fb303's shutdown: clients send it when they close a connection; it stops nothing here."""

    async def set_ugi(self, user_name: str | None, group_names: list[str] | None) -> list[str]:
        return list(group_names or [])

    async def get_config_value(self, name: str | None, defaultValue: str | None) -> str:  # noqa: N803
        field_name = settings_keys().get(_required(name, "name"))
        if field_name is None:
            return defaultValue or ""
        value = getattr(self._settings, field_name)
        return str(value).lower() if isinstance(value, bool) else str(value)

    # -- databases --------------------------------------------------------------------------------

    async def get_database(self, name: str | None) -> Any:
        return convert.database_to_thrift(await self._cached.fetch_database(_required(name, "name")))

    async def get_databases(self, pattern: str | None) -> list[str]:
        return await self._catalog.list_databases(pattern or "")

    async def get_all_databases(self) -> list[str]:
        return await self._catalog.list_databases("")

    async def create_database(self, database: Any) -> None:
        model = convert.database_from_thrift(_required(database, "database"))
        db, event_id = await self._catalog.create_database(model)
        self._cached.wrote(db.name, "", event_id)

    async def alter_database(self, dbname: str | None, db: Any) -> None:
        altered, event_id = await self._catalog.alter_database(_required(dbname, "dbname"),
                                                               convert.database_from_thrift(_required(db, "db")))
        self._cached.wrote(altered.name, "", event_id)

    async def drop_database(self, name: str | None, deleteData: bool | None, cascade: bool | None) -> None:  # noqa: N803
        event_id = await self._catalog.drop_database(_required(name, "name"), cascade=bool(cascade), if_exists=False)
        self._cached.wrote(name or "", "", event_id)

    # -- tables -----------------------------------------------------------------------------------

    async def _table(self, db_name: str | None, table_name: str | None, snapshot: ReadSnapshot = LATEST) -> Table:
        """Clients ask for a table many times per statement: the cache answers when it may."""
        db_key, table_key = table_key_of(_required(db_name, "db_name"), _required(table_name, "table_name"))
        cached = self._cached.cached_table_object(db_key, table_key, snapshot)
        if isinstance(cached, Table):
            return cached
        return await self._cached.fetch_table(db_key, table_key, snapshot)

    async def get_table(self, dbname: str | None, tbl_name: str | None) -> Any:
        return convert.table_to_thrift(await self._table(dbname, tbl_name))

    async def get_table_req(self, req: Any) -> Any:
        """Hive 4 clients may pass their snapshot: then the write-id-checked read, as over gRPC."""
        req = _required(req, "req")
        snapshot = LATEST
        if req.validWriteIdList:
            snapshot = ReadSnapshot.parse(req.validWriteIdList, 0, req.id if req.id and req.id > 0 else 0)
        table = await self._table(req.dbName, req.tblName, snapshot)
        return hms.GetTableResult(table=convert.table_to_thrift(table))

    async def get_table_objects_by_name(self, dbname: str | None, tbl_names: list[str] | None) -> list[Any]:
        _check_batch(len(tbl_names or []), "get_table_objects_by_name", self._settings.max_batch_size)
        found = []
        for name in tbl_names or []:
            try:
                found.append(convert.table_to_thrift(await self._table(dbname, name)))
            except NotFound:
                continue  # Hive leaves out the names that do not exist
        return found

    async def get_table_objects_by_name_req(self, req: Any) -> Any:
        req = _required(req, "req")
        return hms.GetTablesResult(tables=await self.get_table_objects_by_name(req.dbName, req.tblNames))

    async def get_tables(self, db_name: str | None, pattern: str | None) -> list[str]:
        return await self._catalog.list_tables(_required(db_name, "db_name"), pattern or "")

    async def get_all_tables(self, db_name: str | None) -> list[str]:
        return await self._catalog.list_tables(_required(db_name, "db_name"), "")

    async def get_tables_by_type(self, db_name: str | None, pattern: str | None, tableType: str | None) -> list[str]:  # noqa: N803
        names = await self.get_tables(db_name, pattern)
        if not tableType:
            return names
        tables = await self.get_table_objects_by_name(db_name, names)
        return [t.tableName for t in tables if t.tableType == tableType]

    async def get_table_meta(self, db_patterns: str | None, tbl_patterns: str | None,
                             tbl_types: list[str] | None) -> list[Any]:
        out = []
        for db in await self._catalog.list_databases(db_patterns or ""):
            for t in await self.get_table_objects_by_name(db, await self.get_tables(db, tbl_patterns)):
                if not tbl_types or t.tableType in tbl_types:
                    out.append(hms.TableMeta(dbName=t.dbName, tableName=t.tableName, tableType=t.tableType,
                                             comments=t.parameters.get("comment")))
        return out

    async def create_table(self, tbl: Any) -> None:
        tbl = _required(tbl, "tbl")
        tbl.parameters = _stamp_ddl_time(tbl.parameters)
        table, event_id = await self._catalog.create_table(convert.table_from_thrift(tbl))
        self._cached.wrote(table.db_name, table.name, event_id)

    async def create_table_with_environment_context(self, tbl: Any, environment_context: Any) -> None:
        await self.create_table(tbl)

    async def alter_table(self, dbname: str | None, tbl_name: str | None, new_tbl: Any) -> None:
        db_name, table_name = _required(dbname, "dbname"), _required(tbl_name, "tbl_name")
        new_tbl = _required(new_tbl, "new_tbl")
        new_tbl.parameters = _stamp_ddl_time(new_tbl.parameters)
        table = convert.table_from_thrift(new_tbl, db_name=db_name, name=table_name)
        altered, event_id = await self._catalog.alter_table(db_name, table_name, table)
        self._cached.wrote(db_name, table_name, event_id, renamed_to=(altered.db_name, altered.name))

    async def alter_table_with_environment_context(self, dbname: str | None, tbl_name: str | None, new_tbl: Any,
                                                   environment_context: Any) -> None:
        await self.alter_table(dbname, tbl_name, new_tbl)

    async def alter_table_with_cascade(self, dbname: str | None, tbl_name: str | None, new_tbl: Any,
                                       cascade: bool | None) -> None:
        await self.alter_table(dbname, tbl_name, new_tbl)

    async def drop_table(self, dbname: str | None, name: str | None, deleteData: bool | None) -> None:  # noqa: N803
        event_id = await self._catalog.drop_table(_required(dbname, "dbname"), _required(name, "name"), if_exists=False)
        self._cached.wrote(dbname or "", name or "", event_id)

    async def drop_table_with_environment_context(self, dbname: str | None, name: str | None,
                                                  deleteData: bool | None, environment_context: Any) -> None:  # noqa: N803
        await self.drop_table(dbname, name, deleteData)

    # -- partitions: writes -----------------------------------------------------------------------

    async def _add(self, parts: list[Any], *, if_not_exists: bool, db_name: str = "",
                   table_name: str = "") -> list[Any]:
        _check_batch(len(parts), "add_partitions", self._settings.max_batch_size)
        for p in parts:
            p.parameters = _stamp_ddl_time(p.parameters)
        models = [convert.partition_from_thrift(p) for p in parts]
        targets = {(normalize_identifier(p.db_name or db_name, "database"),
                    normalize_identifier(p.table_name or table_name, "table")) for p in models}
        if not models:
            return []
        if len(targets) != 1:
            raise InvalidArgument("the partitions of one add_partitions call must all belong to one table")
        ((db, table_name_),) = targets
        added, event_id = await self._catalog.add_partitions(db, table_name_, models, if_not_exists=if_not_exists)
        self._cached.wrote(db, table_name_, event_id)
        table = await self._table(db, table_name_)
        return [convert.partition_to_thrift(table, p) for p in added]

    async def add_partition(self, new_part: Any) -> Any:
        return (await self._add([_required(new_part, "new_part")], if_not_exists=False))[0]

    async def add_partitions(self, new_parts: list[Any] | None) -> int:
        return len(await self._add(new_parts or [], if_not_exists=False))

    async def add_partitions_req(self, request: Any) -> Any:
        request = _required(request, "request")
        added = await self._add(request.parts or [], if_not_exists=bool(request.ifNotExists),
                                db_name=_required(request.dbName, "dbName"),
                                table_name=_required(request.tblName, "tblName"))
        return hms.AddPartitionsResult(partitions=added if request.needResult is not False else None)

    async def alter_partition(self, db_name: str | None, tbl_name: str | None, new_part: Any) -> None:
        await self.alter_partitions(db_name, tbl_name, [_required(new_part, "new_part")])

    async def alter_partitions(self, db_name: str | None, tbl_name: str | None, new_parts: list[Any] | None) -> None:
        _check_batch(len(new_parts or []), "alter_partitions", self._settings.max_batch_size)
        for p in new_parts or []:
            p.parameters = _stamp_ddl_time(p.parameters)
        _, event_id = await self._catalog.alter_partitions(
            _required(db_name, "db_name"), _required(tbl_name, "tbl_name"),
            [convert.partition_from_thrift(p) for p in new_parts or []])
        self._cached.wrote(db_name or "", tbl_name or "", event_id)

    async def alter_partitions_with_environment_context(self, db_name: str | None, tbl_name: str | None,
                                                        new_parts: list[Any] | None, environment_context: Any) -> None:
        await self.alter_partitions(db_name, tbl_name, new_parts)

    async def _drop(self, db_name: str | None, tbl_name: str | None, names: list[str]) -> bool:
        dropped, event_id = await self._catalog.drop_partitions(_required(db_name, "db_name"),
                                                                _required(tbl_name, "tbl_name"), names, if_exists=False)
        self._cached.wrote(db_name or "", tbl_name or "", event_id)
        return bool(dropped)

    async def _name_of(self, db_name: str | None, tbl_name: str | None, part_vals: list[str] | None) -> str:
        table = await self._table(db_name, tbl_name)
        return convert.partition_name(table, _required(part_vals, "part_vals"))

    async def drop_partition(self, db_name: str | None, tbl_name: str | None, part_vals: list[str] | None,
                             deleteData: bool | None) -> bool:  # noqa: N803
        return await self._drop(db_name, tbl_name, [await self._name_of(db_name, tbl_name, part_vals)])

    async def drop_partition_with_environment_context(self, db_name: str | None, tbl_name: str | None,
                                                      part_vals: list[str] | None, deleteData: bool | None,  # noqa: N803
                                                      environment_context: Any) -> bool:
        return await self.drop_partition(db_name, tbl_name, part_vals, deleteData)

    async def drop_partition_by_name(self, db_name: str | None, tbl_name: str | None, part_name: str | None,
                                     deleteData: bool | None) -> bool:  # noqa: N803
        return await self._drop(db_name, tbl_name, [_required(part_name, "part_name")])

    async def drop_partition_by_name_with_environment_context(self, db_name: str | None, tbl_name: str | None,
                                                              part_name: str | None, deleteData: bool | None,  # noqa: N803
                                                              environment_context: Any) -> bool:
        return await self.drop_partition_by_name(db_name, tbl_name, part_name, deleteData)

    async def drop_partitions_req(self, req: Any) -> Any:
        """Hive's DropPartitionsRequest by names (expressions are not supported: InvalidObjectException)."""
        req = _required(req, "req")
        parts = _required(req.parts, "parts")
        if parts.names is None:
            raise InvalidArgument("drop_partitions_req by expression is not supported by this gateway; pass names")
        _check_batch(len(parts.names), "drop_partitions_req", self._settings.max_batch_size)
        table = await self._table(req.dbName, req.tblName)
        dropped: list[str] = []
        if parts.names:
            dropped, event_id = await self._catalog.drop_partitions(table.db_name, table.name, parts.names,
                                                                    if_exists=bool(req.ifExists))
            self._cached.wrote(table.db_name, table.name, event_id)
        result = [convert.partition_to_thrift(table, Partition(table.db_name, table.name,
                                                                 parse_partition_name(table.partition_keys, n), n))
                  for n in dropped]
        return hms.DropPartitionsResult(partitions=result if req.needResult is not False else None)

    # -- partitions: reads ------------------------------------------------------------------------
    # Cache first (pre-encoded Thrift bytes, gateway/thrift/wire.py), else PostgreSQL; both answers
    # are framed by the same code, so they are the same bytes.

    async def _by_names(self, db_name: str | None, tbl_name: str | None, names: list[str],
                        snapshot: ReadSnapshot = LATEST) -> VersionsHit:
        _check_batch(len(names), "get_partitions_by_names", self._settings.max_batch_size)
        db_key, table_key = table_key_of(_required(db_name, "db_name"), _required(tbl_name, "tbl_name"))
        hit = self._cached.cached_partition_versions(db_key, table_key, names, snapshot)
        if isinstance(hit, VersionsHit):
            return hit
        table = await self._table(db_key, table_key, snapshot)
        parts = await self._cached.fetch_partitions_by_names(db_key, table_key, names, snapshot)
        return VersionsHit(table, [wire.version_of(p) for p in parts])

    async def _matching(self, db_name: str | None, tbl_name: str | None, filter_text: str, limit: int) -> VersionsHit:
        """Partitions matching a Hive filter ('' matches all), in name order, at most `limit` + 1."""
        db_key, table_key = table_key_of(_required(db_name, "db_name"), _required(tbl_name, "tbl_name"))
        hit = self._cached.cached_versions_by_filter(db_key, table_key, filter_text, limit, LATEST)
        if isinstance(hit, VersionsHit):
            return hit
        if filter_text:
            table = await self._table(db_key, table_key)
            parts = await self._cached.fetch_partitions_by_filter(db_key, table_key, filter_text, limit, LATEST)
        else:
            table, parts = await self._cached.fetch_partitions(db_key, table_key, limit, LATEST)
        return VersionsHit(table, [wire.version_of(p) for p in parts])

    async def _partial(self, db_name: str | None, tbl_name: str | None, partial: Sequence[str],
                       max_parts: int | None) -> VersionsHit:
        """Hive's partial specification (a value per leading key, '' for any), up to `max_parts`."""
        limit = _limit(max_parts, self._settings.max_batch_size)
        found = await self._matching(db_name, tbl_name, "", self._settings.max_batch_size if partial else limit)
        versions = [v for v in found.versions if _matches_partial(v.values, partial)] if partial else found.versions
        return VersionsHit(found.table, versions[:limit])

    @staticmethod
    def _list(found: VersionsHit) -> RawValue:
        return RawValue(TType.LIST, wire.partition_list(found.table, found.versions))

    async def get_partitions(self, db_name: str | None, tbl_name: str | None, max_parts: int | None) -> RawValue:
        return self._list(await self._partial(db_name, tbl_name, (), max_parts))

    async def get_partitions_with_auth(self, db_name: str | None, tbl_name: str | None, max_parts: int | None,
                                       user_name: str | None, group_names: list[str] | None) -> RawValue:
        return await self.get_partitions(db_name, tbl_name, max_parts)

    async def get_partitions_ps(self, db_name: str | None, tbl_name: str | None, part_vals: list[str] | None,
                                max_parts: int | None) -> RawValue:
        return self._list(await self._partial(db_name, tbl_name, part_vals or (), max_parts))

    async def get_partitions_ps_with_auth(self, db_name: str | None, tbl_name: str | None,
                                          part_vals: list[str] | None, max_parts: int | None, user_name: str | None,
                                          group_names: list[str] | None) -> RawValue:
        return await self.get_partitions_ps(db_name, tbl_name, part_vals, max_parts)

    async def get_partition_names(self, db_name: str | None, tbl_name: str | None, max_parts: int | None) -> list[str]:
        return await self.get_partition_names_ps(db_name, tbl_name, [], max_parts)

    async def get_partition_names_ps(self, db_name: str | None, tbl_name: str | None, part_vals: list[str] | None,
                                     max_parts: int | None) -> list[str]:
        found = await self._partial(db_name, tbl_name, part_vals or (), max_parts)
        return [convert.partition_name(found.table, v.values) for v in found.versions]

    async def get_partitions_by_names(self, db_name: str | None, tbl_name: str | None,
                                      names: list[str] | None) -> RawValue:
        return self._list(await self._by_names(db_name, tbl_name, names or []))

    async def get_partitions_by_names_req(self, req: Any) -> RawValue:
        req = _required(req, "req")
        snapshot = LATEST
        if req.validWriteIdList:
            snapshot = ReadSnapshot.parse(req.validWriteIdList, 0, req.id if req.id and req.id > 0 else 0)
        found = await self._by_names(req.db_name, req.tbl_name, req.names or [], snapshot)
        return RawValue(TType.STRUCT, wire.partition_list_field(1, found.table, found.versions))

    async def _one(self, db_name: str | None, tbl_name: str | None, name: str) -> RawValue:
        found = await self._by_names(db_name, tbl_name, [name])
        if not found.versions:
            raise NotFound(f"partition {name} of {db_name}.{tbl_name} does not exist")
        return RawValue(TType.STRUCT, wire.partition_element(found.table, found.versions[0]))

    async def get_partition(self, db_name: str | None, tbl_name: str | None,
                            part_vals: list[str] | None) -> RawValue:
        return await self._one(db_name, tbl_name, await self._name_of(db_name, tbl_name, part_vals))

    async def get_partition_with_auth(self, db_name: str | None, tbl_name: str | None, part_vals: list[str] | None,
                                      user_name: str | None, group_names: list[str] | None) -> RawValue:
        return await self.get_partition(db_name, tbl_name, part_vals)

    async def get_partition_by_name(self, db_name: str | None, tbl_name: str | None,
                                    part_name: str | None) -> RawValue:
        return await self._one(db_name, tbl_name, _required(part_name, "part_name"))

    async def get_partitions_by_filter(self, db_name: str | None, tbl_name: str | None, filter: str | None,  # noqa: A002
                                       max_parts: int | None) -> RawValue:
        limit = _limit(max_parts, self._settings.max_batch_size)
        found = await self._matching(db_name, tbl_name, filter or "", limit)
        return self._list(VersionsHit(found.table, found.versions[:limit]))

    async def get_num_partitions_by_filter(self, db_name: str | None, tbl_name: str | None,
                                           filter: str | None) -> int:  # noqa: A002
        found = await self._matching(db_name, tbl_name, filter or "", self._settings.max_batch_size)
        return min(len(found.versions), self._settings.max_batch_size)

    # -- functions: the gateway stores none ---------------------------------------------------------

    async def get_function(self, dbName: str | None, funcName: str | None) -> Any:  # noqa: N803
        raise NotFound(f"function {dbName}.{funcName} does not exist (this gateway stores no functions)")

    async def get_functions(self, dbName: str | None, pattern: str | None) -> list[str]:  # noqa: N803
        return []

    async def get_all_functions(self) -> Any:
        return hms.GetAllFunctionsResponse(functions=[])

