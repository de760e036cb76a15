"""metastore.v1.Catalog: convert, check batch limits, call the store, convert back."""

from __future__ import annotations

import grpc

from gateway import convert
from gateway.config import Settings
from gateway.errors import rpc_methods
from gateway.servicers.validation import check_batch, require
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import catalog_pb2_grpc
from store.catalog_store import CatalogStore
from store.errors import InvalidArgument
from store.snapshot import ReadSnapshot

Ctx = grpc.aio.ServicerContext


@rpc_methods
class CatalogServicer(catalog_pb2_grpc.CatalogServicer):
    def __init__(self, store: CatalogStore, settings: Settings) -> None:
        self._store = store
        self._settings = settings

    async def CreateDatabase(self, request: pb.CreateDatabaseRequest, context: Ctx) -> pb.CreateDatabaseResponse:
        require(request.database.name, "database.name")
        db, event_id = await self._store.create_database(convert.database_from_pb(request.database))
        return pb.CreateDatabaseResponse(database=convert.database_to_pb(db), event_id=event_id)

    async def GetDatabase(self, request: pb.GetDatabaseRequest, context: Ctx) -> pb.GetDatabaseResponse:
        db = await self._store.get_database(require(request.name, "name"))
        return pb.GetDatabaseResponse(database=convert.database_to_pb(db))

    async def ListDatabases(self, request: pb.ListDatabasesRequest, context: Ctx) -> pb.ListDatabasesResponse:
        return pb.ListDatabasesResponse(names=await self._store.list_databases(request.pattern))

    async def AlterDatabase(self, request: pb.AlterDatabaseRequest, context: Ctx) -> pb.AlterDatabaseResponse:
        db, event_id = await self._store.alter_database(require(request.name, "name"),
                                                        convert.database_from_pb(request.database))
        return pb.AlterDatabaseResponse(database=convert.database_to_pb(db), event_id=event_id)

    async def DropDatabase(self, request: pb.DropDatabaseRequest, context: Ctx) -> pb.DropDatabaseResponse:
        event_id = await self._store.drop_database(require(request.name, "name"), cascade=request.cascade,
                                                   if_exists=request.if_exists)
        return pb.DropDatabaseResponse(event_id=event_id)

    async def CreateTable(self, request: pb.CreateTableRequest, context: Ctx) -> pb.CreateTableResponse:
        require(request.table.db_name, "table.db_name")
        require(request.table.name, "table.name")
        table, event_id = await self._store.create_table(convert.table_from_pb(request.table))
        return pb.CreateTableResponse(table=convert.table_to_pb(table), event_id=event_id)

    async def GetTable(self, request: pb.GetTableRequest, context: Ctx) -> pb.GetTableResponse:
        table = await self._store.get_table(require(request.db_name, "db_name"), require(request.table_name, "table_name"),
                                            _snapshot(request.read))
        return pb.GetTableResponse(table=convert.table_to_pb(table))

    async def ListTables(self, request: pb.ListTablesRequest, context: Ctx) -> pb.ListTablesResponse:
        return pb.ListTablesResponse(names=await self._store.list_tables(require(request.db_name, "db_name"),
                                                                          request.pattern))

    async def AlterTable(self, request: pb.AlterTableRequest, context: Ctx) -> pb.AlterTableResponse:
        table, event_id = await self._store.alter_table(require(request.db_name, "db_name"),
                                                        require(request.table_name, "table_name"),
                                                        convert.table_from_pb(request.table), request.txn_id)
        return pb.AlterTableResponse(table=convert.table_to_pb(table), event_id=event_id)

    async def DropTable(self, request: pb.DropTableRequest, context: Ctx) -> pb.DropTableResponse:
        event_id = await self._store.drop_table(require(request.db_name, "db_name"),
                                                require(request.table_name, "table_name"), if_exists=request.if_exists)
        return pb.DropTableResponse(event_id=event_id)

    async def AddPartitions(self, request: pb.AddPartitionsRequest, context: Ctx) -> pb.AddPartitionsResponse:
        check_batch(len(request.partitions), "AddPartitions", self._settings.max_batch_size)
        added, event_id = await self._store.add_partitions(
            require(request.db_name, "db_name"), require(request.table_name, "table_name"),
            [convert.partition_from_pb(p) for p in request.partitions], if_not_exists=request.if_not_exists,
            expected_table_id=request.table_id, txn_id=request.txn_id,
        )
        return pb.AddPartitionsResponse(partitions=[convert.partition_to_pb(p) for p in added], event_id=event_id)

    async def GetPartitionsByNames(
        self, request: pb.GetPartitionsByNamesRequest, context: Ctx
    ) -> pb.GetPartitionsByNamesResponse:
        check_batch(len(request.names), "GetPartitionsByNames", self._settings.max_batch_size)
        parts = await self._store.get_partitions_by_names(
            require(request.db_name, "db_name"), require(request.table_name, "table_name"), list(request.names),
            _snapshot(request.read),
        )
        return pb.GetPartitionsByNamesResponse(partitions=[convert.partition_to_pb(p) for p in parts])

    async def ListPartitionNames(
        self, request: pb.ListPartitionNamesRequest, context: Ctx
    ) -> pb.ListPartitionNamesResponse:
        limit = self._settings.max_batch_size
        if request.page_size < 0:
            raise InvalidArgument(f"page_size must not be negative, got {request.page_size}")
        names, token = await self._store.list_partition_names(
            require(request.db_name, "db_name"), require(request.table_name, "table_name"),
            min(request.page_size or limit, limit), request.page_token, _snapshot(request.read),
        )
        return pb.ListPartitionNamesResponse(names=names, next_page_token=token)

    async def AlterPartitions(self, request: pb.AlterPartitionsRequest, context: Ctx) -> pb.AlterPartitionsResponse:
        check_batch(len(request.partitions), "AlterPartitions", self._settings.max_batch_size)
        altered, event_id = await self._store.alter_partitions(
            require(request.db_name, "db_name"), require(request.table_name, "table_name"),
            [convert.partition_from_pb(p) for p in request.partitions], request.table_id, request.txn_id,
        )
        return pb.AlterPartitionsResponse(partitions=[convert.partition_to_pb(p) for p in altered], event_id=event_id)

    async def DropPartitions(self, request: pb.DropPartitionsRequest, context: Ctx) -> pb.DropPartitionsResponse:
        check_batch(len(request.names), "DropPartitions", self._settings.max_batch_size)
        names, event_id = await self._store.drop_partitions(
            require(request.db_name, "db_name"), require(request.table_name, "table_name"), list(request.names),
            if_exists=request.if_exists, expected_table_id=request.table_id, txn_id=request.txn_id,
        )
        return pb.DropPartitionsResponse(names=names, event_id=event_id)


def _snapshot(read: pb.ReadContext) -> ReadSnapshot:
    return ReadSnapshot.parse(read.valid_write_id_list, read.txn_id, read.table_id)
