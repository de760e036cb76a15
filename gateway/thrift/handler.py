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

import re
from operator import attrgetter
from typing import Any, Awaitable, Sequence

from thriftpy2.thrift import TType

from gateway.auth import Ownership, thrift_identity
from gateway.config import Settings, as_hive_writes_it, secret_keys, settings_keys
from gateway.thrift import convert
from gateway.thrift.convert import check_batch, matches_none, required, stamp_ddl_time
from gateway.thrift import meta_conf, wire
from gateway.thrift.idl import hms
from gateway.thrift.catalog_names import check_catalog
from gateway.thrift.errors import NotServedHere
from gateway.thrift.expressions import read_expression
from gateway.thrift.own_txn import OwnTxns
from gateway.thrift.server import RawValue
from gateway.thrift.compaction_methods import CompactionMethods
from gateway.thrift.constraint_methods import ConstraintMethods
from gateway.thrift.data_methods import ALL_PARTITIONS, DataMethods
from gateway.thrift.fb303 import Fb303, Fb303Methods
from gateway.thrift.function_methods import FunctionMethods
from gateway.thrift.catalog_methods import CatalogMethods
from gateway.thrift.data_connector_methods import DataConnectorMethods
from gateway.thrift.event_methods import EventLogMethods
from gateway.thrift.hs2_service_methods import HiveServiceMethods
from gateway.thrift.partition_event_methods import PartitionEventMethods
from gateway.thrift.partition_value_methods import PartitionValueMethods
from gateway.thrift.privilege_methods import PrivilegeMethods, grants_of_privilege_set
from gateway.thrift.stats_methods import StatsMethods
from gateway.thrift.txn_methods import TxnLockMethods
from gateway.warehouse import Warehouse
from store.cache.facade import CachedCatalog, VersionsHit
from store.cache.facade import database_key
from store.cache.facade import table_key as table_key_of
from store.catalog_store import CatalogStore
from store.constraints import ConstraintColumn
from store.lock_store import LockStore
from store.privilege_store import PrivilegeStore
from store.errors import (FailedPrecondition, InvalidArgument, NotFound, NotPartitioned, PermissionDenied,
                          ResourceExhausted)
from store.models import Database, Partition, Table, TableType
from hive import serde_schema
from hive.errors import ValueNotWhitelisted
from hive.limits import preview
from hive.partition_expr import NotServable
from hive.partition_filter import HIVE_PARTITION_FILTER
from hive.partition_order import ordered, parse_order
from hive.stats_accuracy import EXPECTED_PARAMETER_KEY, EXPECTED_PARAMETER_VALUE, NO_CONTEXT, AlterContext
from hive.names import (DEFAULT_CATALOG_NAME, DEFAULT_PARTITION_NAME, make_partition_name, matches_partial_values,
                        normalize_identifier, parse_partition_name, partition_spec_from_name)
from store.snapshot import ReadSnapshot
from store.txn_store import TxnStore
from gateway.thrift.snapshots import LATEST, snapshot_of

# Hive's TableType names: a listing may name any of them (the gateway holds tables of the first three).
_MATERIALIZED_VIEW = "MATERIALIZED_VIEW"  # a Hive table type this metastore refuses to create
HIVE_TABLE_TYPES = frozenset({t.value for t in TableType} | {"INDEX_TABLE", _MATERIALIZED_VIEW})


# Hive's HiveMetaStore.get_config_value: keys outside these families answer ConfigValSecurityException.
_READABLE_CONFIG = re.compile(r"(hive|hdfs|mapred|metastore).*", re.DOTALL)


# What the gateway does, always, in the words of Hive's settings that choose it in Hive's metastore: clients
# read these to check a metastore is set up for them. Impala's event processor will not start unless the
# first three read so (EventProcessorConfigValidator); Kudu's HMS integration checks the listener.
_FIXED_BEHAVIOUR = {
    # Hive's messages carry the objects (tableObjJson, partitionListJson, ...: gateway/thrift/hive_events.py).
    "hive.metastore.notifications.add.thrift.objects": "true",
    # Every alter is logged, not only those that change what Hive calls basic.
    "hive.metastore.alter.notifications.basic": "false",
    # The DML events clients fire are logged (fire_listener_event, add_write_notification_log).
    "hive.metastore.dml.events": "true",
    # The log is written in each change's own transaction, as DbNotificationListener writes Hive's.
    "hive.metastore.transactional.event.listeners": "org.apache.hive.hcatalog.listener.DbNotificationListener",
}


def _not_served_by_expr(exc: NotServable) -> NotServedHere:
    """get_partitions_by_expr's answer to an expression it does not read or evaluate: UNKNOWN_METHOD."""
    return NotServedHere(f"get_partitions_by_expr: {exc}; evaluate it over the partition names")


# Hive 4's PartitionFilterMode (get_partitions_with_specs).
_BY_NAMES, _BY_VALUES, _BY_EXPR = 0, 1, 2

# Hive.getPartitionNames' expression when a SHOW PARTITIONS has no WHERE (ObjectStore: no filter).
_NO_PARTITION_FILTER = b"\xff"


def _selected_by(expr: bytes, default_partition_name: str | None, table: Table,
                 values: Sequence[Sequence[str]]) -> list[int]:
    """The positions of the partitions (their `values`) a WHERE's expression keeps, undecided ones among
    them (as Hive's PartitionPruner keeps them); InvalidArgument for an expression not read here."""
    try:
        return list(read_expression(expr, default_partition_name)(table.partition_keys, values).selected)
    except NotServable as exc:
        raise InvalidArgument(f"SHOW PARTITIONS ... WHERE: {exc}. This metastore reads Hive 2.3's serialized "
                              "expressions only (Hive 4 writes Kryo 5): name the partitions with PARTITION (...), "
                              "or list them all and filter") from None


def _wanted(max_parts: int | None) -> int:
    """Hive's max_parts: at most that many; negative (Hive's -1) means every one, never a silent cut."""
    return ALL_PARTITIONS if max_parts is None or max_parts < 0 else max_parts


async def _none_if_unpartitioned(read: Awaitable[VersionsHit]) -> VersionsHit:
    """A partition listing of a table without partition keys lists none, as Hive 2.3 answers (gRPC's
    reads, Thrift's reads by values and filters naming a key refuse it: store.errors.NotPartitioned)."""
    try:
        return await read
    except NotPartitioned as exc:
        return VersionsHit(exc.table, [])


def _alter_context(environment_context: Any, expected: tuple[str | None, str | None] = (None, None)
                   ) -> AlterContext:
    """What an alter's EnvironmentContext (a call's argument, or a Hive 4 request's field; unset: none)
    says about statistics and a condition on a parameter; `expected`: Hive 4's AlterTableRequest
    expectedParameterKey and expectedParameterValue, which take the context's place when set."""
    properties = dict((environment_context and environment_context.properties) or {})
    for name, value in zip((EXPECTED_PARAMETER_KEY, EXPECTED_PARAMETER_VALUE), expected):
        if value is not None:
            properties[name] = value
    return AlterContext.of(properties)


_REMOTE_DATABASE = 2  # Hive 4's DatabaseType.REMOTE (NATIVE = 1)


def _cascades(environment_context: Any) -> bool:
    """Hive's ALTER TABLE ... CASCADE, sent as the context's CASCADE=true (StatsSetupConst.CASCADE)."""
    return str(((environment_context and environment_context.properties) or {}).get("CASCADE", "")).lower() == "true"


def _write_id_named(request_write_id: int | None, objects: Sequence[Any], what: str) -> int:
    """The write id a Hive 3 or 4 write names its txn by, 0 for none: the request's `writeId` when set
    (Trino's alter_table_req and alter_partitions_req, Hive 4's Hive.alterPartitions), else the one the
    written objects carry, `Table.writeId` or each `Partition.writeId`: Hive 4's Hive.alterTable (an
    INSERT into a transactional table, its statistics task, a DDL on it) and Hive.alterPartition set only
    those and the request's validWriteIdList, and its loads into new partitions set each partition's.
    The objects of one call are one txn's: different write ids among them are refused."""
    if request_write_id is not None and request_write_id > 0:
        return request_write_id
    write_ids = sorted({o.writeId for o in objects if o is not None and o.writeId is not None and o.writeId > 0})
    if len(write_ids) > 1:
        raise InvalidArgument(f"the objects of one {what} call carry their txn's one write id, not "
                              f"{len(write_ids)} ({', '.join(map(str, write_ids[:5]))})")
    return write_ids[0] if write_ids else 0


class HiveMetastoreHandler(Fb303Methods, DataMethods, TxnLockMethods, EventLogMethods, CompactionMethods,
                           StatsMethods, ConstraintMethods, FunctionMethods, PrivilegeMethods, PartitionValueMethods,
                           HiveServiceMethods, DataConnectorMethods, CatalogMethods, PartitionEventMethods):
    """ThriftHiveMetastore over the gateway's stores; fb303 (status, counters, options) in Fb303Methods,
    drops, truncate and partition renames (which touch a managed table's files) in DataMethods, txns and
    locks in TxnLockMethods, the notification log (reads, DML events, write notifications) in EventLogMethods,
    compact2 and show_compact in CompactionMethods, column statistics in
    StatsMethods, table constraints in ConstraintMethods, permanent functions in
    FunctionMethods, roles and privileges in PrivilegeMethods, get_partition_values in
    PartitionValueMethods, HiveServer2's own services (resource plans, scheduled queries: none kept) in
    HiveServiceMethods, data connectors (none kept) in DataConnectorMethods, the one catalog in CatalogMethods,
    partitions marked for events in PartitionEventMethods."""

    def __init__(self, catalog: CatalogStore, cached: CachedCatalog, txns: TxnStore, locks: LockStore,
                 settings: Settings, warehouse: Warehouse | None = None, fb303: Fb303 | None = None) -> None:
        self._catalog = catalog
        self._warehouse = warehouse or Warehouse(settings.data_root_list)
        self._cached = cached
        self._txns = txns
        self._locks = locks
        self._owners = Ownership(txns, locks)
        self._own_txns = OwnTxns(txns, cached)  # a transactional table's write outside a txn (own_txn.py)
        self._settings = settings
        self._fb303 = fb303 or Fb303()
        self._compaction_db = catalog.database  # compact2 / show_compact (gateway/thrift/compaction_methods.py)
        self._privileges = PrivilegeStore(catalog.database)  # gateway/thrift/privilege_methods.py

    # -- session ---------------------------------------------------------------------------------

    async def flushCache(self) -> None:  # noqa: N802
        """Hive's Driver sends this before it compiles each query, so that it reads no objects a cache kept
        from an earlier one. Hive's own store keeps none; this gateway's cache is kept in step with the
        notification log and answers under the freshness rule, so there is nothing to drop, and dropping
        it would turn every query's reads into misses. Answered at once."""

    async def set_ugi(self, user_name: str | None, group_names: list[str] | None) -> list[str]:
        """Hive's first call of an unsecured connection: the user it runs as. Authorizes nothing here; it
        names the txns the gateway opens for this connection's writes (gateway/thrift/own_txn.py), as Hive
        names the caller's own txns. Each connection is one task, so the name lasts as long as it does."""
        thrift_identity.set(thrift_identity.get().claiming(user_name or ""))
        return list(group_names or [])

    async def get_config_value(self, name: str | None, defaultValue: str | None) -> str:  # noqa: N803
        """A setting of this gateway by Hive's name, else what the gateway does in the terms of one of
        Hive's settings it has no setting for (_FIXED_BEHAVIOUR), else `defaultValue`; as Hive's, only keys
        of Hive's own families may be read (a client could otherwise read any secret the server's config
        holds)."""
        key: str = required(name, "name")
        if not _READABLE_CONFIG.match(key) or key in secret_keys():
            raise PermissionDenied(f"For security reasons, the config key {key} cannot be accessed")
        value = self._setting_by_key(key)
        if value is None:
            value = _FIXED_BEHAVIOUR.get(key)
        return (defaultValue or "") if value is None else value

    async def getMetaConf(self, key: str | None) -> str:  # noqa: N802
        """One of the metastore settings a connection may set (gateway/thrift/meta_conf.py)."""
        return meta_conf.get(required(key, "key"), self._setting_by_key)

    async def setMetaConf(self, key: str | None, value: str | None) -> None:  # noqa: N802
        meta_conf.set_for_connection(required(key, "key"), required(value, "value"))

    def _setting_by_key(self, key: str) -> str | None:
        """This gateway's setting of Hive's name `key` as Hive writes it, or None when it has none."""
        field_name = settings_keys().get(key)
        if field_name is None:
            return None
        return as_hive_writes_it(field_name, getattr(self._settings, field_name))

    # -- databases --------------------------------------------------------------------------------

    async def get_database(self, name: str | None) -> Any:
        """The cache first, as over gRPC: Spark asks for the database around most statements, and a
        database read from PostgreSQL holds this gateway's reads of it back until the poller catches up."""
        key = database_key(required(name, "name"))
        cached = self._cached.cached_database(key)
        database = cached if isinstance(cached, Database) else await self._cached.fetch_database(key)
        return convert.database_to_thrift(database)

    async def get_database_req(self, request: Any) -> Any:
        """Hive 4's form of get_database, the only one its HiveMetaStoreClient.getDatabase sends (every
        statement that names a database reads it so): database `name` of catalog `catalogName`."""
        request = required(request, "request")
        return await self.get_database(required(request.name, "name"))

    async def get_databases(self, pattern: str | None) -> list[str]:
        if matches_none(pattern):
            return []
        return await self._catalog.list_databases(pattern or "")

    async def get_all_databases(self) -> list[str]:
        return await self._catalog.list_databases("")

    async def create_database(self, database: Any) -> None:
        """Creates the database's directory where it is missing, as Hive's metastore does
        (gateway/warehouse.py)."""
        model = convert.database_from_thrift(required(database, "database"), default_fs=self._settings.default_fs)
        name = normalize_identifier(model.name, "database")
        async with self._warehouse.creating(f"create database {name}") as make_locations:
            db, event_id = await self._catalog.create_database(model, make_locations)
        self._cached.wrote(db.name, "", event_id)

    async def create_database_req(self, req: Any) -> None:
        """The newest Hive client's create_database (HIVE-26537): the database the request describes, in
        this metastore's one catalog. Its managedLocationUri is not kept, as create_database keeps none of
        Hive 4's added fields; a remote database (Hive 4's data connectors) is refused."""
        req = required(req, "req")
        if req.dataConnectorName or req.type == _REMOTE_DATABASE:
            raise InvalidArgument(f"database {preview(str(req.databaseName), 80)} is remote (data connector "
                                  f"{preview(str(req.dataConnectorName), 80)}): this metastore has no data connectors")
        await self.create_database(hms.Database(
            name=required(req.databaseName, "databaseName"), description=req.description,
            locationUri=req.locationUri, parameters=req.parameters, privileges=req.privileges,
            ownerName=req.ownerName, ownerType=req.ownerType))

    async def alter_database_req(self, req: Any) -> None:
        """The newest Hive client's alter_database (its oldDbName `@hive#db`, read as the bare name)."""
        req = required(req, "req")
        await self.alter_database(required(req.oldDbName, "oldDbName"), required(req.newDb, "newDb"))

    async def alter_database(self, dbname: str | None, db: Any) -> None:
        altered, event_id = await self._catalog.alter_database(
            required(dbname, "dbname"),
            convert.database_from_thrift(required(db, "db"), default_fs=self._settings.default_fs, altering=True),
            caller=thrift_identity.get().limited_to)
        self._cached.wrote(altered.name, "", event_id)

    # -- tables -----------------------------------------------------------------------------------

    async def _table(self, db_name: str | None, table_name: str | None, snapshot: ReadSnapshot = LATEST) -> Table:
        """Clients ask for a table many times per statement: the cache answers when it may. An empty
        database or table name names no table (NoSuchObjectException, as Hive looks it up as any other
        name); an unset one is a bad request."""
        if db_name == "" or table_name == "":
            raise NotFound(f"table {db_name or '?'}.{table_name or '?'} does not exist")
        db_key, table_key = table_key_of(required(db_name, "db_name"), required(table_name, "table_name"))
        cached = self._cached.cached_table_object(db_key, table_key, snapshot)
        if isinstance(cached, Table):
            return cached
        return await self._cached.fetch_table(db_key, table_key, snapshot)

    async def _table_if_any(self, db_name: str, table_name: str) -> Table | None:
        """`_table`, or None when there is no such table: for a write that would rather the store said so,
        in its own words, than this read."""
        try:
            return await self._table(db_name, table_name)
        except NotFound:
            return None

    async def _table_to_write(self, db_name: str, table_name: str) -> Table:
        """The table a write prepares with (the txn of its write id, the shape of its answer): its latest
        version, the one the write itself then finds, open txns' changes included, in one statement. Not
        `_table`: that answers the committed state, and while this gateway's own writes to the table are
        not yet applied it is a snapshot read of several statements."""
        return await self._catalog.latest_table(db_name, table_name)

    async def get_table(self, dbname: str | None, tbl_name: str | None) -> RawValue:
        return RawValue(TType.STRUCT, wire.table_struct(await self._table(dbname, tbl_name)))

    async def get_table_req(self, req: Any) -> RawValue:
        """Hive 4 clients may pass their snapshot: then the write-id-checked read, as over gRPC. With
        getColumnStats, the table's column statistics as that snapshot sees them go in its colStats."""
        req = required(req, "req")
        snapshot = snapshot_of(req)
        table = await self._table(req.dbName, req.tblName, snapshot)
        body = wire.table_struct(table)
        if req.getColumnStats and (stats := await self.table_statistics_of(table, snapshot)) is not None:
            body = body[:-1] + wire.struct_field(21, wire.encode(stats))  # Table.colStats, then the Table's stop
        return RawValue(TType.STRUCT, wire.struct_field(1, body))  # GetTableResult

    async def _columns(self, db_name: str | None, table_name: str | None, *, with_keys: bool) -> list[Any]:
        """The columns as the table's SerDe reads them (hive/serde_schema.py), then with `with_keys` its
        partition keys; `table.component` names a column's fields, as in Hive, where get_schema reads only
        the table's name."""
        base, _, component = (table_name or "").partition(".")
        component = "" if with_keys else component
        table = await self._table(db_name, base if table_name is not None else None)
        keys = convert.fields_to_thrift(table.partition_keys) if with_keys else []
        lib = table.sd.serde.serialization_lib
        if not component and (not lib or lib in serde_schema.METASTORE_SCHEMA_SERDES):
            return convert.fields_to_thrift(table.columns) + keys
        stored = [serde_schema.Column(c.name, c.type, c.comment or None) for c in table.columns]
        columns = serde_schema.serde_columns(lib, dict(table.sd.serde.parameters), dict(table.parameters), stored,
                                             component)
        return [hms.FieldSchema(name=c.name, type=c.type, comment=c.comment) for c in columns] + keys

    async def get_fields(self, db_name: str | None, table_name: str | None) -> list[Any]:
        """The table's columns, as its SerDe reads them."""
        return await self._columns(db_name, table_name, with_keys=False)

    async def get_fields_with_environment_context(self, db_name: str | None, table_name: str | None,
                                                  environment_context: Any) -> list[Any]:
        return await self.get_fields(db_name, table_name)

    async def get_schema(self, db_name: str | None, table_name: str | None) -> list[Any]:
        """The table's columns, as its SerDe reads them, then its partition keys."""
        return await self._columns(db_name, table_name, with_keys=True)

    async def get_schema_with_environment_context(self, db_name: str | None, table_name: str | None,
                                                  environment_context: Any) -> list[Any]:
        return await self.get_schema(db_name, table_name)

    async def get_fields_req(self, req: Any) -> Any:
        """Hive 4's form of get_fields, the only one its HiveMetaStoreClient.getFields sends; as in Hive,
        the request's snapshot and table id are not read."""
        req = required(req, "req")
        return hms.GetFieldsResponse(fields=await self.get_fields(required(req.dbName, "dbName"),
                                                                  required(req.tblName, "tblName")))

    async def get_schema_req(self, req: Any) -> Any:
        """Hive 4's form of get_schema (its HiveMetaStoreClient.getSchema's), read as get_fields_req."""
        req = required(req, "req")
        return hms.GetSchemaResponse(fields=await self.get_schema(required(req.dbName, "dbName"),
                                                                  required(req.tblName, "tblName")))

    async def _tables(self, dbname: str | None, tbl_names: list[str] | None) -> list[Table]:
        check_batch(len(tbl_names or []), "get_table_objects_by_name", self._settings.max_batch_size)
        return await self._tables_named(dbname, tbl_names or [])

    async def _tables_named(self, dbname: str | None, tbl_names: Sequence[str]) -> list[Table]:
        # Each table once, however often and in whatever case it is named: Hive selects the tables whose
        # names are among the lower-cased ones asked for.
        found: dict[tuple[str, str], Table] = {}
        for name in tbl_names:
            try:
                table = await self._table(dbname, name)
            except NotFound:
                continue  # Hive leaves out the names that do not exist
            found.setdefault((table.db_name, table.name), table)
        return list(found.values())

    async def get_table_objects_by_name(self, dbname: str | None, tbl_names: list[str] | None) -> RawValue:
        return RawValue(TType.LIST, wire.table_list(await self._tables(dbname, tbl_names)))

    async def get_table_objects_by_name_req(self, req: Any) -> RawValue:
        """The tables named, or with Hive 4's tablesPattern those whose names match it as get_tables'
        pattern does (hive/names.py matches_hive_pattern): Hive 4's SHOW TABLES sends the pattern, `.*`
        when the statement has none, and no names (HiveMetaStoreClient.getTables). Both sent: the named
        tables that match; neither: InvalidOperationException, as Hive 4's HMSHandler
        getTableObjectsInternal answers. A database that does not exist, or an empty name, is
        UnknownDBException, as Hive 2.3 and 4 answer this form (the plain form answers no tables: Hive's
        declares no exception for it), but for an empty list of names, which asks the store nothing there
        and answers no tables. An empty table name names no table. projectionSpec is not applied: whole
        tables are answered, which hold every field it can ask for."""
        req = required(req, "req")
        if req.dbName == "":
            raise NotFound("the database name is empty")  # Hive's UnknownDBException
        if req.tablesPattern is None:
            if req.tblNames is None:
                raise InvalidArgument(f"{req.dbName} cannot find null tables")
            if not req.tblNames:
                return RawValue(TType.STRUCT, wire.list_field(1, wire.table_list([])))
            await self.get_database(req.dbName)  # a missing one: NotFound, Hive's UnknownDBException
            found = await self._tables(req.dbName, req.tblNames)
        else:
            await self.get_database(req.dbName)
            matching = await self._table_names(req.dbName, req.tablesPattern)
            if req.tblNames is not None:
                asked = {name.lower() for name in req.tblNames}
                matching = [name for name in matching if name in asked]
            found = await self._tables_named(req.dbName, matching)
        tables = wire.table_list(found)
        return RawValue(TType.STRUCT, wire.list_field(1, tables))  # GetTablesResult

    async def get_tables(self, db_name: str | None, pattern: str | None) -> list[str]:
        if matches_none(pattern):
            return []
        return await self._table_names(db_name, pattern or "")

    async def get_all_tables(self, db_name: str | None) -> list[str]:
        return await self._table_names(db_name, "")

    async def get_tables_by_type(self, db_name: str | None, pattern: str | None, tableType: str | None) -> list[str]:  # noqa: N803
        if tableType not in HIVE_TABLE_TYPES:  # Hive's TableType.valueOf
            raise InvalidArgument(f"tableType {tableType!r} is not one of Hive's table types: "
                                  f"{', '.join(sorted(HIVE_TABLE_TYPES))}")
        if matches_none(pattern):
            return []
        return await self._table_names(db_name, pattern or "", tableType)

    async def get_materialized_views_for_rewriting(self, db_name: str | None) -> list[str]:
        """Hive 4's planner looks for materialized views to rewrite a query with (its registry at start,
        and per query): those of the database (none: this metastore creates no materialized view, a
        table of that type is refused, so Hive's rewriting finds nothing to use)."""
        return await self._table_names(db_name, "", _MATERIALIZED_VIEW)

    async def get_all_materialized_view_objects_for_rewriting(self) -> list[Any]:
        """Hive 4's HiveMaterializedViewsRegistry loads every database's at start (as above: none)."""
        summaries = await self._catalog.list_table_summaries("", "", (_MATERIALIZED_VIEW,))
        return [convert.table_to_thrift(await self._table(s.db_name, s.name)) for s in summaries]

    async def _table_names(self, db_name: str | None, pattern: str, table_type: str | None = None) -> list[str]:
        """A database that does not exist has no tables: Hive 2.3's answer, where gRPC's ListTables says NOT_FOUND."""
        try:
            return await self._catalog.list_tables(required(db_name, "db_name"), pattern, table_type)
        except NotFound:
            return []

    async def get_table_names_by_filter(self, dbname: str | None, filter_text: str | None,
                                        max_tables: int | None) -> list[str]:
        """Trino lists a schema's views with it (hive/table_filter.py); a negative maximum means all."""
        if not dbname:
            raise NotFound("the database name is empty")  # Hive's UnknownDBException
        if filter_text is None:
            raise InvalidArgument("filter is required; an empty filter selects every table")
        limit = None if max_tables is None or max_tables < 0 else max_tables
        return await self._catalog.list_table_names_by_filter(dbname, filter_text, limit)

    async def get_table_meta(self, db_patterns: str | None, tbl_patterns: str | None,
                             tbl_types: list[str] | None) -> list[Any]:
        if matches_none(db_patterns, tbl_patterns):
            return []
        return [hms.TableMeta(dbName=t.db_name, tableName=t.name, tableType=t.table_type.value, comments=t.comment)
                for t in await self._catalog.list_table_summaries(db_patterns or "", tbl_patterns or "",
                                                                  tbl_types or ())]

    async def create_table(self, tbl: Any, constraints: Sequence[ConstraintColumn] = ()) -> None:
        """Creates the table's directory where it is missing (an external table's too; a view has none),
        as Hive's metastore does (gateway/warehouse.py). Hive 4's colStats on it are written with it, and
        the constraints of a create_table_with_constraints (ConstraintMethods)."""
        tbl = required(tbl, "tbl")
        tbl.parameters = stamp_ddl_time(tbl.parameters)
        model = convert.table_from_thrift(tbl, default_fs=self._settings.default_fs)
        name = f"{model.db_name}.{model.name}"
        grants = grants_of_privilege_set(tbl.privileges)  # the creator's grants on it, stored with it
        stats = self._stats_sent_with(tbl.colStats, model, None, "create_table: Table.colStats")
        async with self._warehouse.creating(f"create table {name}") as make_locations:
            table, event_id = await self._catalog.create_table(model, grants, make_locations, stats, constraints)
        self._cached.wrote(table.db_name, table.name, event_id)

    async def create_table_with_environment_context(self, tbl: Any, environment_context: Any) -> None:
        await self.create_table(tbl)

    async def translate_table_dryrun(self, request: Any) -> Any:
        """Hive 4's CREATE TABLE ... AS SELECT asks first how the metastore would create the table
        (Hive.getTranslateTableDryrun, from its SemanticAnalyzer and TaskCompiler; an error fails the
        statement): Hive's HMSHandler answers the table its transformer makes of it, or the table as sent,
        in its catalog, when none is set (metastore.metadata.transformer.class empty). This metastore has
        no transformer: it creates a table as sent, so it answers it so. Nothing is created."""
        tbl = required(required(request, "request").table, "table")
        check_catalog(tbl.catName)
        tbl.catName = tbl.catName or DEFAULT_CATALOG_NAME
        return tbl

    async def alter_table_with_environment_context(self, dbname: str | None, tbl_name: str | None, new_tbl: Any,
                                                   environment_context: Any) -> None:
        """Hive 2 and 3's clients send ALTER TABLE ... CASCADE as the context's CASCADE=true; Spark sends
        DO_NOT_UPDATE_STATS=true with every alter (AlterContext)."""
        await self.alter_table(dbname, tbl_name, new_tbl, cascade=_cascades(environment_context),
                               stats=_alter_context(environment_context))

    async def alter_table_with_cascade(self, dbname: str | None, tbl_name: str | None, new_tbl: Any,
                                       cascade: bool | None) -> None:
        await self.alter_table(dbname, tbl_name, new_tbl, cascade=bool(cascade))

    async def alter_table_req(self, req: Any) -> Any:
        """Hive 4's alter_table_req: a transactional table is altered under the txn that allocated the
        request's writeId (what Trino and Hive 4 send after writing its files), else as alter_table."""
        req = required(req, "req")
        txn_id = await self._txn_of_request(req, [required(req.table, "table")], "alter_table_req")
        await self.alter_table(req.dbName, req.tableName, req.table, txn_id=txn_id,
                               cascade=_cascades(req.environmentContext),
                               stats=_alter_context(req.environmentContext,
                                                    (req.expectedParameterKey, req.expectedParameterValue)))
        return hms.AlterTableResponse()

    # -- partitions: writes -----------------------------------------------------------------------

    async def _add(self, parts: list[Any], *, if_not_exists: bool, db_name: str = "",
                   table_name: str = "") -> tuple[Table | None, list[Partition]]:
        """Add the partitions (all of one table); the table and the partitions added, as the store has
        them (converted back to Thrift only by the calls that answer them)."""
        check_batch(len(parts), "add_partitions", self._settings.max_batch_size)
        for p in parts:
            p.parameters = stamp_ddl_time(p.parameters)
        models = [convert.partition_from_thrift(p, default_fs=self._settings.default_fs) for p in parts]
        targets = {(normalize_identifier(p.db_name or db_name, "database"),
                    normalize_identifier(p.table_name or table_name, "table")) for p in models}
        if not models:
            return None, []
        if len(targets) != 1:
            raise InvalidArgument("the partitions of one add_partitions call must all belong to one table")
        ((db, table_name_),) = targets
        table = await self._table_to_write(db, table_name_)
        # Hive 3's and 4's loads into new partitions of a transactional table name their txn by the write id
        # set on each partition; one call is one txn's.
        named = await self._txn_of_write_id(table, _write_id_named(None, parts, "add_partitions"), "add_partitions",
                                            table_stamp=True)
        what = f"add partitions to {table.full_name}"
        async with self._own_txns.around(table, named, what) as txn_id:
            # Hive 4's colStats on each, written with them under the same txn (also, as Hive's, a partition's
            # that `if_not_exists` finds already there).
            stats = [u for p, m in zip(parts, models)
                     for u in self._stats_sent_with(p.colStats, table, m.values,
                                                    "add_partitions: Partition.colStats", txn_id)]
            # Each added partition's directory where it is missing, as Hive's metastore does (gateway/warehouse.py).
            async with self._warehouse.creating(what) as make_locations:
                added, event_id = await self._catalog.add_partitions(
                    db, table_name_, models, if_not_exists=if_not_exists, txn_id=txn_id,
                    make_locations=make_locations, stats=stats)
            self._cached.wrote(db, table_name_, event_id, txn_id)
        return table, added

    async def _add_one(self, new_part: Any, *, db_name: str = "", table_name: str = "") -> Any:
        table, (added,) = await self._add([new_part], if_not_exists=False, db_name=db_name, table_name=table_name)
        assert table is not None  # (one partition was added)
        return convert.partition_to_thrift(table, added)

    async def add_partition(self, new_part: Any) -> Any:
        return await self._add_one(required(new_part, "new_part"))

    async def add_partition_with_environment_context(self, new_part: Any, environment_context: Any) -> Any:
        """What Hive 3's and 4's clients send for one partition (Hive's metastore reads no file statistics
        it could be told to skip)."""
        return await self.add_partition(new_part)

    async def add_partitions(self, new_parts: list[Any] | None) -> int:
        _, added = await self._add(new_parts or [], if_not_exists=False)
        return len(added)

    async def add_partitions_req(self, request: Any) -> Any:
        request = required(request, "request")
        table, added = await self._add(request.parts or [], if_not_exists=bool(request.ifNotExists),
                                       db_name=required(request.dbName, "dbName"),
                                       table_name=required(request.tblName, "tblName"))
        if request.needResult is False or table is None:  # no partitions: Hive 2.3 answers at once, none set
            return hms.AddPartitionsResult(partitions=None)
        return hms.AddPartitionsResult(partitions=[convert.partition_to_thrift(table, p) for p in added])

    async def add_partitions_pspec(self, new_parts: list[Any] | None) -> int:
        """Hive's add_partitions_pspec (HCatalog's HCatClient.addPartitionSpec): the specs' partitions
        (convert.partitions_of_spec) added to the first spec's table as add_partitions adds them, all or
        none, a partition that exists AlreadyExistsException; one of another table is refused, as Hive's
        'Partition does not belong to target table'. No specs: 0, as Hive answers."""
        specs = new_parts or []
        if not specs:
            return 0
        first = required(specs[0], "new_parts[0]")
        db = normalize_identifier(required(first.dbName, "dbName"), "database")
        name = normalize_identifier(required(first.tableName, "tableName"), "table")
        parts = [p for spec in specs for p in convert.partitions_of_spec(spec)]
        for p in parts:
            if p is not None and (normalize_identifier(p.dbName or db, "database"),
                                  normalize_identifier(p.tableName or name, "table")) != (db, name):
                raise InvalidArgument(f"a partition of {p.dbName}.{p.tableName} does not belong to target table "
                                      f"{db}.{name} (the first PartitionSpec's)")
        _, added = await self._add(parts, if_not_exists=False, db_name=db, table_name=name)
        return len(added)

    async def append_partition(self, db_name: str | None, tbl_name: str | None, part_vals: list[str] | None) -> Any:
        """Add the partition with these values, its storage descriptor the table's (as Hive's): a copy, so
        the partition keeps the columns the table has now when the table's change without CASCADE."""
        table = await self._table(db_name, tbl_name)
        sd = convert.sd_to_thrift(table.sd, table.columns)
        sd.location = None  # the partition's own default directory
        new_part = hms.Partition(values=list(part_vals or []), dbName=db_name, tableName=tbl_name, parameters={},
                                 sd=sd)
        return await self._add_one(new_part, db_name=db_name or "", table_name=tbl_name or "")

    async def append_partition_req(self, req: Any) -> Any:
        """The newest Hive client's append_partition and append_partition_by_name: the partition of
        `partVals`, else of `name`."""
        req = required(req, "req")
        if req.partVals is not None:
            return await self.append_partition(req.dbName, req.tableName, req.partVals)
        return await self.append_partition_by_name(req.dbName, req.tableName, required(req.name, "name or partVals"))

    async def append_partition_with_environment_context(self, db_name: str | None, tbl_name: str | None,
                                                        part_vals: list[str] | None, environment_context: Any) -> Any:
        return await self.append_partition(db_name, tbl_name, part_vals)

    async def append_partition_by_name(self, db_name: str | None, tbl_name: str | None, part_name: str | None) -> Any:
        table = await self._table(db_name, tbl_name)
        return await self.append_partition(db_name, tbl_name,
                                           list(parse_partition_name(table.partition_keys,
                                                                     required(part_name, "part_name"))))

    async def append_partition_by_name_with_environment_context(self, db_name: str | None, tbl_name: str | None,
                                                                part_name: str | None, environment_context: Any) -> Any:
        return await self.append_partition_by_name(db_name, tbl_name, part_name)

    async def alter_partition(self, db_name: str | None, tbl_name: str | None, new_part: Any) -> None:
        await self.alter_partitions(db_name, tbl_name, [required(new_part, "new_part")])

    async def alter_partition_with_environment_context(self, db_name: str | None, tbl_name: str | None,
                                                       new_part: Any, environment_context: Any) -> None:
        """What Hive 3's and 4's clients and Trino send for one partition."""
        await self.alter_partitions(db_name, tbl_name, [required(new_part, "new_part")],
                                    stats=_alter_context(environment_context))

    async def alter_partitions(self, db_name: str | None, tbl_name: str | None, new_parts: list[Any] | None, *,
                               txn_id: int = 0, stats: AlterContext = NO_CONTEXT) -> None:
        """Hive's alter_partitions: each partition's COLUMN_STATS_ACCURATE goes when its fast statistics
        differ from the stored ones, unless `stats`, what the call's EnvironmentContext says, keeps it
        (hive/stats_accuracy.py after_partition_alter)."""
        check_batch(len(new_parts or []), "alter_partitions", self._settings.max_batch_size)
        db_name, tbl_name = required(db_name, "db_name"), required(tbl_name, "tbl_name")
        for p in new_parts or []:
            p.parameters = stamp_ddl_time(p.parameters)
        models = [convert.partition_from_thrift(p, default_fs=self._settings.default_fs) for p in new_parts or []]
        table = None if txn_id else await self._table_if_any(db_name, tbl_name)
        async with self._own_txns.around(table, txn_id, f"alter partitions of {db_name}.{tbl_name}") as txn_id:
            _, event_id = await self._catalog.alter_partitions(db_name, tbl_name, models, txn_id=txn_id, stats=stats)
            self._cached.wrote(db_name, tbl_name, event_id, txn_id)

    async def alter_partitions_with_environment_context(self, db_name: str | None, tbl_name: str | None,
                                                        new_parts: list[Any] | None, environment_context: Any) -> None:
        await self.alter_partitions(db_name, tbl_name, new_parts,
                                    stats=_alter_context(environment_context))

    async def alter_partitions_req(self, req: Any) -> Any:
        """Hive 4's alter_partitions_req: under the txn of its writeId for a transactional table (Trino's
        and Hive 4's statistics after a write), else as alter_partitions."""
        req = required(req, "req")
        partitions = required(req.partitions, "partitions")
        txn_id = await self._txn_of_request(req, partitions, "alter_partitions_req")
        await self.alter_partitions(req.dbName, req.tableName, partitions, txn_id=txn_id,
                                    stats=_alter_context(req.environmentContext))
        return hms.AlterPartitionsResponse()

    async def _txn_of_request(self, req: Any, objects: Sequence[Any], what: str) -> int:
        """_txn_of_write_id for a Hive 4 request of `dbName` and `tableName` that alters `objects` (its
        Table, its Partitions) under the write id it names (_write_id_named; the table is read only when
        one is named)."""
        write_id = _write_id_named(req.writeId, objects, what)
        if not write_id:
            return 0
        table = await self._table_to_write(required(req.dbName, "dbName"), required(req.tableName, "tableName"))
        return await self._txn_of_write_id(table, write_id, what)

    async def _txn_of_write_id(self, table: Table, write_id: int | None, what: str, *,
                               table_stamp: bool = False) -> int:
        """The open txn a Hive 4 write names by the write id it allocated for `table` (Hive's writes carry
        the write id, not the txn), checked to be the caller's; 0 when the table is not transactional (its
        writes take no write id) or no write id is given (a write outside a txn: own_txn.py). With
        `table_stamp`, the table's own write id, of a txn that ended, names no txn either (Hive 4's MSCK)."""
        if not table.is_acid or not write_id or write_id <= 0:
            return 0
        found = await self._txns.txn_of_write_id(table.table_id, write_id)
        if table_stamp and write_id == table.write_id and (found is None or found[1] != "o"):
            # The table's own write id, of a txn that ended: Hive 4's MSCK REPAIR stamps the partitions it
            # adds so (Msck.createPartitionsInBatches: partition.setWriteId(table.getWriteId())), outside
            # any txn. A write outside a txn, then (gateway/thrift/own_txn.py).
            return 0
        if found is None:
            raise InvalidArgument(f"{what}: no txn holds write id {write_id} of {table.full_name} "
                                  f"(allocate_table_write_ids allocates one)")
        txn_id, state = found
        if state != "o":
            ended = {"c": "committed", "a": "aborted"}.get(state or "", "no longer open")
            raise FailedPrecondition(f"{what}: write id {write_id} of {table.full_name} belongs to txn {txn_id}, "
                                     f"which is {ended}")
        await self._owners.check_txns(thrift_identity.get(), [txn_id], what)
        return txn_id

    # -- partitions: reads ------------------------------------------------------------------------
    # Cache first (pre-encoded Thrift bytes, gateway/thrift/wire.py), else PostgreSQL; both answers
    # are framed by the same code, so they are the same bytes.

    async def _by_names(self, db_name: str | None, tbl_name: str | None, names: list[str],
                        snapshot: ReadSnapshot = LATEST) -> VersionsHit:
        """The partitions of these names the snapshot sees, each once, in the order of their names, as Hive
        answers a read by names: its database's query orders them by name (Hive 2.3.10, probed on Derby and
        PostgreSQL; Hive 4's MetaStoreDirectSql.getPartitionsFromPartitionIds, 'order by PART_NAME asc',
        and its JDO path alike). Hive orders each batch of hive.direct.sql.max.elements.in.clause (1000)
        names on its own; the whole answer is ordered here."""
        check_batch(len(names), "get_partitions_by_names", self._settings.max_batch_size)
        db_key, table_key = table_key_of(required(db_name, "db_name"), required(tbl_name, "tbl_name"))
        hit = self._cached.cached_partition_versions(db_key, table_key, names, snapshot, in_name_order=True)
        if isinstance(hit, VersionsHit):
            return hit
        table, parts = await self._cached.fetch_partitions_by_names(db_key, table_key, names, snapshot)
        return VersionsHit(table, [wire.version_of(p) for p in sorted(parts, key=attrgetter("name"))])

    async def _listed_by_names(self, db_name: str | None, tbl_name: str | None, names: list[str],
                               snapshot: ReadSnapshot = LATEST) -> VersionsHit:
        """`_by_names` for the listings by names (get_partition_by_name, a read of one partition, refuses a
        table without partition keys)."""
        return await _none_if_unpartitioned(self._by_names(db_name, tbl_name, names, snapshot))

    async def _matching(self, db_name: str | None, tbl_name: str | None, filter_text: str, limit: int,
                        snapshot: ReadSnapshot = LATEST) -> VersionsHit:
        """Partitions matching a Hive 2.3 filter ('' matches all), in name order, at most `limit` + 1; a
        table without partition keys has none when there is no filter (a filter names a key it lacks)."""
        read = self._matching_read(db_name, tbl_name, filter_text, limit, snapshot)
        return await (read if filter_text else _none_if_unpartitioned(read))

    async def _matching_read(self, db_name: str | None, tbl_name: str | None, filter_text: str, limit: int,
                             snapshot: ReadSnapshot) -> VersionsHit:
        db_key, table_key = table_key_of(required(db_name, "db_name"), required(tbl_name, "tbl_name"))
        hit = self._cached.cached_versions_by_filter(db_key, table_key, filter_text, limit, snapshot,
                                                     dialect=HIVE_PARTITION_FILTER)
        if isinstance(hit, VersionsHit):
            return hit
        if filter_text:
            table, parts = await self._cached.fetch_partitions_by_filter(db_key, table_key, filter_text, limit,
                                                                         snapshot, HIVE_PARTITION_FILTER)
        else:
            table, parts = await self._cached.fetch_partitions(db_key, table_key, limit, snapshot)
        return VersionsHit(table, [wire.version_of(p) for p in parts])

    async def _partial(self, db_name: str | None, tbl_name: str | None, partial: Sequence[str],
                       max_parts: int | None, snapshot: ReadSnapshot = LATEST, *, limited: bool = False
                       ) -> VersionsHit:
        """Hive's partial specification (a value per leading key, '' for any), up to `max_parts`; a call
        Hive holds to hive.metastore.limit.partition.request is `limited` (get_partitions, not the
        names or the `_ps` calls: Hive 2.3.10's rule, probed)."""
        wanted = _wanted(max_parts)
        if partial:
            found = await self._matching_partial(db_name, tbl_name, partial, snapshot)
        else:
            found = await self._matching(db_name, tbl_name, "", self._scan_for(wanted) if limited else wanted,
                                         snapshot)
        if limited:
            self._check_partition_request(found.table, wanted, len(found.versions))
        return VersionsHit(found.table, found.versions[:wanted])

    async def _matching_partial(self, db_name: str | None, tbl_name: str | None, partial: Sequence[str],
                                snapshot: ReadSnapshot) -> VersionsHit:
        """Every partition a partial specification matches, in name order."""
        db_key, table_key = table_key_of(required(db_name, "db_name"), required(tbl_name, "tbl_name"))
        found = self._cached.cached_versions_by_partial(db_key, table_key, partial, ALL_PARTITIONS, snapshot)
        if not isinstance(found, VersionsHit):
            # The cache decided (and counted) this read: the database answers, without asking it again.
            table, parts = await self._cached.fetch_partitions(db_key, table_key, ALL_PARTITIONS, snapshot)
            found = VersionsHit(table, [wire.version_of(p) for p in parts if matches_partial_values(p.values, partial)])
        keys = found.table.partition_keys
        if len(partial) > len(keys):  # (MetaException, as Hive's)
            raise InvalidArgument(
                f"Incorrect number of partition values: {len(partial)} for the {len(keys)} partition keys of "
                f"{found.table.full_name} ({', '.join(k.name for k in keys)})")
        return found

    def _scan_for(self, wanted: int) -> int:
        """How many partitions a limited listing reads: what is wanted, and with Hive's
        hive.metastore.limit.partition.request set, at most one more than it (enough to tell it was passed)."""
        hive_limit = self._settings.partition_request_limit
        return wanted if hive_limit < 0 else min(wanted, hive_limit + 1)

    def _check_partition_request(self, table: Table, wanted: int, matched: int) -> None:
        """Hive's checkLimitNumberOfPartitions: the request is max_parts when given, else what matched."""
        hive_limit = self._settings.partition_request_limit
        requested = matched if wanted == ALL_PARTITIONS else wanted
        if 0 <= hive_limit < requested:
            # (a read of every partition stopped one past the limit: how many more is not known)
            scanned = f"={requested}" if wanted != ALL_PARTITIONS else f">{hive_limit}"
            raise ResourceExhausted(
                f"Number of partitions scanned ({scanned}) on table '{table.name}' exceeds limit (={hive_limit}). "
                "This is controlled on the metastore server by hive.metastore.limit.partition.request.")

    @staticmethod
    def _list(found: VersionsHit) -> RawValue:
        return RawValue(TType.LIST, wire.partition_list(found.table, found.versions))

    async def get_partitions(self, db_name: str | None, tbl_name: str | None, max_parts: int | None) -> RawValue:
        return self._list(await self._partial(db_name, tbl_name, (), max_parts, limited=True))

    async def get_partitions_pspec(self, db_name: str | None, tbl_name: str | None, max_parts: int | None
                                   ) -> RawValue:
        """Hive's listPartitionSpecs: get_partitions' partitions in one PartitionSpec (wire.partition_spec_list)."""
        found = await self._partial(db_name, tbl_name, (), max_parts, limited=True)
        return RawValue(TType.LIST, wire.partition_spec_list(found.table, found.versions))

    async def get_part_specs_by_filter(self, db_name: str | None, tbl_name: str | None, filter: str | None,  # noqa: A002
                                       max_parts: int | None) -> RawValue:
        """Hive's listPartitionSpecsByFilter (Flink's HiveCatalog prunes partitions with it; it falls back to
        every name on an error): get_partitions_by_filter's partitions in one PartitionSpec."""
        found = await self._by_filter(db_name, tbl_name, filter, max_parts)
        return RawValue(TType.LIST, wire.partition_spec_list(found.table, found.versions))

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
        # Hive 2.3's getPartitionNamesNoTxn limits the names only when max_parts > 0: 0 is every name,
        # where get_partitions and the _ps calls answer none for 0 (probed against Hive 2.3.10).
        return await self.get_partition_names_ps(db_name, tbl_name, [], -1 if max_parts == 0 else max_parts)

    async def fetch_partition_names_req(self, partitionReq: Any) -> list[str]:
        """Hive 4's form of get_partition_names, for a plain SHOW PARTITIONS: HiveMetaStoreClient's
        listPartitionNames sends it after 4.0 (HIVE-26537 deprecated the flat calls; 4.0's client sends
        get_partition_names). The names of the table's partitions, at most maxParts of them, and none for
        0, as Hive 4 answers it (its HMSHandler reads them with RawStore.listPartitionNames, whose
        ObjectStore.getPartitionNamesNoTxn answers no name for max 0), where Hive 2.3's get_partition_names
        answers every name."""
        req = required(partitionReq, "partitionReq")
        return await self.get_partition_names_ps(req.dbName, req.tblName, [], req.maxParts)

    async def get_partition_names_ps(self, db_name: str | None, tbl_name: str | None, part_vals: list[str] | None,
                                     max_parts: int | None) -> list[str]:
        found = await self._partial(db_name, tbl_name, part_vals or (), max_parts)
        return [convert.partition_name(found.table, v.values) for v in found.versions]

    async def get_partitions_by_names(self, db_name: str | None, tbl_name: str | None,
                                      names: list[str] | None) -> RawValue:
        return self._list(await self._listed_by_names(db_name, tbl_name, names or []))

    async def get_partitions_by_names_req(self, req: Any) -> RawValue:
        """With get_col_stats (Hive 4), each partition's column statistics as the snapshot sees them go
        in its colStats (StatsMethods.partition_statistics_of)."""
        req = required(req, "req")
        snapshot = snapshot_of(req)
        found = await self._listed_by_names(req.db_name, req.tbl_name, req.names or [], snapshot)
        if not (req.get_col_stats and found.versions):
            return RawValue(TType.STRUCT, wire.partition_list_field(1, found.table, found.versions))
        elements = [wire.partition_element(found.table, v) for v in found.versions]
        stats = await self.partition_statistics_of(found.table, [wire.decode(e, hms.Partition()) for e in elements],
                                                   snapshot)
        return RawValue(TType.STRUCT, wire.list_field(1, wire.struct_list(  # GetPartitionsByNamesResult
            [e if s is None else e[:-1] + wire.struct_field(12, wire.encode(s))  # Partition.colStats
             for e, s in zip(elements, stats, strict=True)])))

    # Hive 4's request shapes of the reads above: their snapshot, when they carry one, is the
    # write-id-checked read (as over gRPC); without one, the latest committed state.

    async def get_partition_req(self, req: Any) -> RawValue:
        req = required(req, "req")
        snapshot = snapshot_of(req)  # the name too: the table the snapshot sees, not the latest one
        element = await self._element(req.dbName, req.tblName,
                                      await self._name_of(req.dbName, req.tblName, req.partVals, snapshot), snapshot)
        return RawValue(TType.STRUCT, wire.struct_field(1, element))  # GetPartitionResponse

    async def get_partitions_req(self, req: Any) -> RawValue:
        req = required(req, "req")
        found = await self._partial(req.dbName, req.tblName, (), req.maxParts, snapshot_of(req), limited=True)
        return RawValue(TType.STRUCT, wire.partition_list_field(1, found.table, found.versions))

    async def get_partitions_ps_with_auth_req(self, req: Any) -> RawValue:
        """Hive 4's form of get_partitions_ps_with_auth, what its Hive.getPartitions sends for a table's
        partitions: held to hive.metastore.limit.partition.request, as Hive 4 holds it; with `partNames`
        (Hive 4's batched reads by name, Hive.getPartitionsAuthByNames), those partitions, as
        get_partitions_by_names_req answers them."""
        req = required(req, "req")
        if req.partNames:  # (bounded by _by_names, as every read by names)
            found = await self._listed_by_names(req.dbName, req.tblName, req.partNames, snapshot_of(req))
        else:
            found = await self._partial(req.dbName, req.tblName, req.partVals or (), req.maxParts, snapshot_of(req),
                                        limited=True)
        return RawValue(TType.STRUCT, wire.partition_list_field(1, found.table, found.versions))

    async def get_partition_names_ps_req(self, req: Any) -> Any:
        req = required(req, "req")
        found = await self._partial(req.dbName, req.tblName, req.partValues or (), req.maxParts, snapshot_of(req))
        return hms.GetPartitionNamesPsResponse(names=[convert.partition_name(found.table, v.values)
                                                      for v in found.versions])

    async def get_partitions_by_filter_req(self, req: Any) -> RawValue:
        req = required(req, "req")
        return await self.get_partitions_by_filter(req.dbName, req.tblName, req.filter, req.maxParts)

    async def _element(self, db_name: str | None, tbl_name: str | None, name: str,
                       snapshot: ReadSnapshot = LATEST) -> bytes:
        """The partition `name` as a `Partition` struct value."""
        found = await self._by_names(db_name, tbl_name, [name], snapshot)
        if not found.versions:
            raise NotFound(f"partition {name} of {db_name}.{tbl_name} does not exist")
        return wire.partition_element(found.table, found.versions[0])

    async def _one(self, db_name: str | None, tbl_name: str | None, name: str) -> RawValue:
        return RawValue(TType.STRUCT, await self._element(db_name, tbl_name, name))

    async def get_partition(self, db_name: str | None, tbl_name: str | None,
                            part_vals: list[str] | None) -> RawValue:
        return await self._one(db_name, tbl_name, await self._name_of(db_name, tbl_name, part_vals))

    async def get_partition_with_auth(self, db_name: str | None, tbl_name: str | None, part_vals: list[str] | None,
                                      user_name: str | None, group_names: list[str] | None) -> RawValue:
        return await self.get_partition(db_name, tbl_name, part_vals)

    async def get_partition_by_name(self, db_name: str | None, tbl_name: str | None,
                                    part_name: str | None) -> RawValue:
        """Hive's get_partition_by_name reads the name as a specification (getPartValsFromName: its `key=value`
        components, in any order, the others left out, each of the table's keys taken by its name as stored),
        so `hr=1/ds=2024-01-01` names ds=2024-01-01/hr=1 (Airflow's NamedHivePartitionSensor sends names so)."""
        name = required(part_name, "part_name")
        table = await self._table(db_name, tbl_name)
        if table.partition_keys and name:  # ('' is no name: refused as such)
            spec = partition_spec_from_name(name)
            missing = [k.name for k in table.partition_keys if k.name not in spec]
            if missing:
                raise InvalidArgument(f"incomplete partition name - missing {missing[0]}")
            name = make_partition_name(table.partition_keys, [spec[k.name] for k in table.partition_keys])
        return await self._one(db_name, tbl_name, name)

    # Hive's parsing of a partition name, without a table (the rule in hive/names.py).

    async def partition_name_to_vals(self, part_name: str | None) -> list[str]:
        return list(partition_spec_from_name(part_name or "").values())

    async def partition_name_to_spec(self, part_name: str | None) -> dict[str, str]:
        return partition_spec_from_name(part_name or "")

    async def partition_name_has_valid_characters(self, part_vals: list[str] | None,
                                                  throw_exception: bool | None) -> bool:
        """What hive.metastore.partition.name.whitelist.pattern says of these values, asked before a
        write (Hive's and Impala's clients): false, or with `throw_exception` a MetaException naming the value."""
        try:
            self._catalog.check_partition_values(list(part_vals or []))
        except ValueNotWhitelisted:
            if throw_exception:
                raise
            return False
        return True

    async def get_partitions_by_filter(self, db_name: str | None, tbl_name: str | None, filter: str | None,  # noqa: A002
                                       max_parts: int | None) -> RawValue:
        return self._list(await self._by_filter(db_name, tbl_name, filter, max_parts))

    async def _by_filter(self, db_name: str | None, tbl_name: str | None, filter: str | None,  # noqa: A002
                         max_parts: int | None) -> VersionsHit:
        """The partitions Hive's partition filter `filter` selects, at most `max_parts`, under Hive's
        hive.metastore.limit.partition.request."""
        wanted = _wanted(max_parts)
        found = await self._matching(db_name, tbl_name, filter or "", self._scan_for(wanted))
        self._check_partition_request(found.table, wanted, len(found.versions))
        return VersionsHit(found.table, found.versions[:wanted])

    async def get_partitions_by_expr(self, req: Any) -> RawValue:
        """Hive 2.3's partition pruning and DROP PARTITION: the partitions a Kryo-serialized expression
        selects, by PartitionPruner's rule (hive/partition_expr.py; an undecided partition is selected
        and sets hasUnknownPartitions), at most maxParts of them in name order, from the same listing
        (cached or not) as every partition read. An expression this gateway does not read or evaluate
        (a Hive 3 or 4 layout, a function or column it does not know, another default partition name)
        is answered UNKNOWN_METHOD, on which Hive's clients evaluate the expression themselves over the
        partition names (IncompatibleMetastoreException: PartitionPruner.pruneBySequentialScan), the one
        answer that keeps each of them right; a partial answer with hasUnknownPartitions fails Hive's
        DROP PARTITION ("Unexpected unknown partitions")."""
        req = required(req, "req")
        try:
            pruning = read_expression(required(req.expr, "expr"), req.defaultPartitionName)
        except NotServable as exc:
            raise _not_served_by_expr(exc) from None
        found = await self._matching(req.dbName, req.tblName, "", ALL_PARTITIONS)
        try:
            pruned = pruning(found.table.partition_keys, [v.values for v in found.versions])
        except NotServable as exc:
            raise _not_served_by_expr(exc) from None
        wanted = _wanted(req.maxParts)
        self._check_partition_request(found.table, wanted, len(pruned.selected))
        versions = [found.versions[i] for i in pruned.selected[:wanted]]
        return RawValue(TType.STRUCT, wire.partitions_by_expr_result(found.table, versions, pruned.has_unknown))

    async def get_partition_names_req(self, req: Any) -> list[str]:
        """Hive 4's SHOW PARTITIONS with a WHERE or an ORDER BY (ShowPartitionsOperation ->
        Hive.getPartitionNames(Table, expr, order, maxParts), which has no fallback): the names of the
        partitions the expression keeps (every one for Hive's no-filter byte, -1), in `order` as Hive's
        metastore sorts them on PostgreSQL (hive/partition_order.py), at most maxParts after the sort, as
        the request's snapshot sees them. An expression this gateway does not read is refused, saying so,
        where a wrong list would mislead: Hive 4 writes it with Kryo 5, which hive/kryo_expr.py (Hive 2.3's
        layout) does not read, so a WHERE from Hive 4 is refused and an ORDER BY or LIMIT alone is served."""
        req = required(req, "req")
        expr = required(req.expr, "expr")
        found = await self._partial(req.dbName, req.tblName, (), ALL_PARTITIONS, snapshot_of(req))
        table, values = found.table, [v.values for v in found.versions]
        if expr != _NO_PARTITION_FILTER:
            values = [values[i] for i in _selected_by(expr, req.defaultPartitionName, table, values)]
        keys = table.partition_keys
        names = ordered([convert.partition_name(table, v) for v in values], values, [k.type for k in keys],
                        parse_order(req.order, len(keys)), req.defaultPartitionName or DEFAULT_PARTITION_NAME)
        return names[:_wanted(req.maxParts)]

    async def get_partitions_with_specs(self, request: Any) -> RawValue:
        """Hive 4's MSCK REPAIR (HiveMetaStoreChecker: the partition names, then batches of them BY_NAMES)
        and its MetaStoreServerUtils.getPartitionsByProjectSpec: the partitions the filter spec selects, as
        the request's snapshot sees them, in name order. No filters: every partition; BY_NAMES: by names;
        BY_VALUES: by values of the leading keys ('' any), as get_partitions_ps; BY_EXPR: by Hive's
        partition filters, each of which must hold, as get_partitions_by_filter reads one. The projection is
        not applied: each partition comes whole, which Hive's clients read alike (wire.py
        partition_specs_response)."""
        req = required(request, "request")
        spec = req.filterSpec
        filters, mode = (list(spec.filters or []), spec.filterMode) if spec else ([], None)
        snapshot = snapshot_of(req)
        if not filters:
            found = await self._partial(req.dbName, req.tblName, (), ALL_PARTITIONS, snapshot)
        elif mode == _BY_NAMES:
            found = await self._by_names(req.dbName, req.tblName, filters, snapshot)
        elif mode == _BY_VALUES:
            found = await self._partial(req.dbName, req.tblName, filters, ALL_PARTITIONS, snapshot)
        elif mode == _BY_EXPR:
            found = await self._matching(req.dbName, req.tblName, " AND ".join(f"({f})" for f in filters),
                                         ALL_PARTITIONS, snapshot)
        else:
            raise InvalidArgument(f"get_partitions_with_specs: filterMode {mode!r} is not one of BY_NAMES (0), "
                                  "BY_VALUES (1), BY_EXPR (2)")
        return RawValue(TType.STRUCT, wire.partition_specs_response(found.table, found.versions))

    async def get_num_partitions_by_filter(self, db_name: str | None, tbl_name: str | None,
                                           filter: str | None) -> int:  # noqa: A002
        return len((await self._matching(db_name, tbl_name, filter or "", ALL_PARTITIONS)).versions)

