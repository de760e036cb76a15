"""metastore.v1.Catalog: convert and validate, call the catalog, convert back.

Reads of tables, partitions and databases go through `CachedCatalog` (store/cache/facade.py): the
cache first, synchronously (no awaits on a hit), and on a miss the database, bounded here by the
call's deadline. Writes go to `CatalogStore` and hand their outcome to `CachedCatalog.wrote`, which
owns the cache's bookkeeping. GetTable and GetPartitionsByNames answer serialized bytes (see
gateway/wire.py and `register`), so cached responses are joined from stored bytes.
"""

from __future__ import annotations

import functools

from typing import NamedTuple, Sequence, TypeAlias

import grpc

from gateway import convert, wire
from gateway.auth import OPEN_AUTHENTICATOR, Authenticator, Ownership
from gateway.config import Settings
from gateway.errors import answers_from_memory, rpc_methods, within_deadline
from gateway.servicers.validation import (PartitionsAnswer, check_batch, check_names_fit, frames_that_fit,
                                         names_that_fit, refuse_partitions_reply, reply_budget, require)
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import catalog_pb2_grpc
from store.cache.facade import CachedCatalog, EncodedNames, Miss, PartitionsHit, database_key, table_key
from store.catalog import decode_page_token, encode_page_token
from store.catalog_store import CatalogStore
from store.errors import InvalidArgument, ResourceExhausted
from store.snapshot import ReadSnapshot, parse_snapshot

RAW_RESPONSE_METHODS = frozenset({"GetTable", "GetPartitionsByNames", "GetPartitionsByFilter"})
UNLIMITED = 2**31

Ctx: TypeAlias = grpc.aio.ServicerContext
NAMES_FIELD = pb.GetPartitionsByNamesRequest.DESCRIPTOR.fields_by_name["names"].number


class NamesRequest(NamedTuple):
    """A GetPartitionsByNamesRequest and its names, read in place from the serialized request
    (EncodedNames: a cache hit makes no str of each; the C file store/cache/_frames.c says why)."""

    message: pb.GetPartitionsByNamesRequest
    names: Sequence[str]

    @classmethod
    def from_bytes(cls, serialized: bytes) -> "NamesRequest":
        message = pb.GetPartitionsByNamesRequest.FromString(serialized)  # what the message is: protobuf's call
        try:
            return cls(message, EncodedNames(serialized, NAMES_FIELD))
        except ValueError:  # a group among unknown fields (protobuf skips one; EncodedNames does not)
            return cls(message, message.names)


@rpc_methods
class CatalogServicer(catalog_pb2_grpc.CatalogServicer):
    def __init__(self, store: CatalogStore, settings: Settings, catalog: CachedCatalog | None = None,
                 owners: Ownership | None = None, auth: Authenticator = OPEN_AUTHENTICATOR) -> None:
        self._store = store
        self._settings = settings
        self._catalog = catalog if catalog is not None else CachedCatalog.uncached(store)
        self._owners = owners
        self._auth = auth

    async def _check_txn(self, context: Ctx, txn_id: int, what: str) -> None:
        """A write under a txn acts on that txn (its writes commit or abort with it): only the txn's owner
        or an admin may, as for its commit (gateway/auth.py; the Thrift writes that name a write id too)."""
        if txn_id and self._owners is not None:
            await self._owners.check_txns(self._auth.context_identity(context), [txn_id], what)

    async def CreateDatabase(self, request: pb.CreateDatabaseRequest, context: Ctx) -> pb.CreateDatabaseResponse:
        require(request.database.name, "database.name")
        db, event_id = await self._store.create_database(convert.database_from_pb(request.database))
        self._catalog.wrote(db.name, "", event_id)
        return pb.CreateDatabaseResponse(database=convert.database_to_pb(db), event_id=event_id)

    @answers_from_memory
    async def GetDatabase(self, request: pb.GetDatabaseRequest, context: Ctx) -> pb.GetDatabaseResponse:
        name = database_key(require(request.name, "name"))
        cached = self._catalog.cached_database(name, request.read.min_event_id)
        if isinstance(cached, Miss):
            cached = await within_deadline(self._catalog.fetch_database(name), context)
        return pb.GetDatabaseResponse(database=convert.database_to_pb(cached))

    async def ListDatabases(self, request: pb.ListDatabasesRequest, context: Ctx) -> pb.ListDatabasesResponse:
        names = await self._store.list_databases(request.pattern)
        check_names_fit(names, "databases", "ListDatabases", reply_budget(self._settings.max_message_bytes))
        return pb.ListDatabasesResponse(names=names)

    async def AlterDatabase(self, request: pb.AlterDatabaseRequest, context: Ctx) -> pb.AlterDatabaseResponse:
        db, event_id = await self._store.alter_database(require(request.name, "name"),
                                                        convert.database_from_pb(request.database),
                                                        caller=self._auth.context_identity(context).limited_to)
        self._catalog.wrote(db.name, "", event_id)
        return pb.AlterDatabaseResponse(database=convert.database_to_pb(db), event_id=event_id)

    async def DropDatabase(self, request: pb.DropDatabaseRequest, context: Ctx) -> pb.DropDatabaseResponse:
        _, event_id = await self._store.drop_database(require(request.name, "name"), cascade=request.cascade,
                                                      if_exists=request.if_exists,
                                                      caller=self._auth.context_identity(context).limited_to)
        self._catalog.wrote(request.name, "", event_id)
        return pb.DropDatabaseResponse(event_id=event_id)

    async def CreateTable(self, request: pb.CreateTableRequest, context: Ctx) -> pb.CreateTableResponse:
        require(request.table.db_name, "table.db_name")
        require(request.table.name, "table.name")
        table, event_id = await self._store.create_table(convert.table_from_pb(request.table))
        self._catalog.wrote(table.db_name, table.name, event_id)
        return pb.CreateTableResponse(table=convert.table_to_pb(table), event_id=event_id)

    @answers_from_memory
    async def GetTable(self, request: pb.GetTableRequest, context: Ctx) -> bytes:
        db_name, table_name, snapshot = _target(request.db_name, request.table_name, request.read)
        cached = self._catalog.cached_table(db_name, table_name, snapshot, request.read.min_event_id)
        if isinstance(cached, bytes):
            return wire.table_response(cached)
        table = await within_deadline(self._catalog.fetch_table(db_name, table_name, snapshot), context)
        return pb.GetTableResponse(table=convert.table_to_pb(table)).SerializeToString()

    async def ListTables(self, request: pb.ListTablesRequest, context: Ctx) -> pb.ListTablesResponse:
        names = await self._store.list_tables(require(request.db_name, "db_name"), request.pattern)
        check_names_fit(names, f"tables in {request.db_name}", "ListTables",
                        reply_budget(self._settings.max_message_bytes))
        return pb.ListTablesResponse(names=names)

    async def AlterTable(self, request: pb.AlterTableRequest, context: Ctx) -> pb.AlterTableResponse:
        await self._check_txn(context, request.txn_id, "AlterTable")
        table, event_id = await self._store.alter_table(require(request.db_name, "db_name"),
                                                        require(request.table_name, "table_name"),
                                                        convert.table_from_pb(request.table), request.txn_id,
                                                        request.table_id,
                                                        caller=self._auth.context_identity(context).limited_to)
        self._catalog.wrote(request.db_name, request.table_name, event_id, request.txn_id,
                            renamed_to=(table.db_name, table.name))
        return pb.AlterTableResponse(table=convert.table_to_pb(table), event_id=event_id)

    async def DropTable(self, request: pb.DropTableRequest, context: Ctx) -> pb.DropTableResponse:
        _, event_id = await self._store.drop_table(require(request.db_name, "db_name"),
                                                   require(request.table_name, "table_name"),
                                                   if_exists=request.if_exists, expected_table_id=request.table_id,
                                                   caller=self._auth.context_identity(context).limited_to)
        self._catalog.wrote(request.db_name, request.table_name, event_id)
        return pb.DropTableResponse(event_id=event_id)

    async def AddPartitions(self, request: pb.AddPartitionsRequest, context: Ctx) -> pb.AddPartitionsResponse:
        check_batch(len(request.partitions), "AddPartitions", self._settings.max_batch_size)
        await self._check_txn(context, request.txn_id, "AddPartitions")
        need_result = request.need_result if request.HasField("need_result") else True  # Hive's default
        answer = PartitionsAnswer("AddPartitions", self._settings.max_message_bytes) if need_result else None
        _, event_id = await self._store.add_partitions(
            require(request.db_name, "db_name"), require(request.table_name, "table_name"),
            [convert.partition_from_pb(p) for p in request.partitions], if_not_exists=request.if_not_exists,
            expected_table_id=request.table_id, txn_id=request.txn_id, check_answer=answer,
        )
        self._catalog.wrote(request.db_name, request.table_name, event_id, request.txn_id)
        return pb.AddPartitionsResponse(partitions=answer.partitions if answer else [], event_id=event_id)

    @answers_from_memory
    async def GetPartitionsByNames(self, request: NamesRequest, context: Ctx) -> bytes:
        message, names = request
        check_batch(len(names), "GetPartitionsByNames", self._settings.max_batch_size)
        db_name, table_name, snapshot = _target(message.db_name, message.table_name, message.read)
        cached = self._catalog.cached_partitions_encoded(db_name, table_name, names, snapshot,
                                                         message.read.min_event_id)
        if isinstance(cached, bytes):
            return self._fits("GetPartitionsByNames", cached, db_name, table_name)
        _, parts = await within_deadline(
            self._catalog.fetch_partitions_by_names(db_name, table_name, list(names), snapshot), context)
        return self._fits("GetPartitionsByNames", pb.GetPartitionsByNamesResponse(
            partitions=[convert.partition_to_pb(p) for p in parts]).SerializeToString(), db_name, table_name)

    @answers_from_memory
    async def GetPartitionsByFilter(self, request: pb.GetPartitionsByFilterRequest, context: Ctx) -> bytes:
        if request.page_size or request.page_token:
            return await self._filter_page(request, context)
        if request.max_parts < -1:
            raise InvalidArgument(f"max_parts must be positive, or 0 or -1 for no limit (Hive's -1); got "
                                  f"{request.max_parts}")
        if request.max_parts > self._settings.max_batch_size:
            raise ResourceExhausted(
                f"max_parts {request.max_parts} is more than metastore.gateway.max.batch.size "
                f"({self._settings.max_batch_size}); read fewer partitions per call")
        db_name, table_name, snapshot = _target(request.db_name, request.table_name, request.read)
        hive_limit = self._settings.partition_request_limit
        # Every answer is bounded: with no limit of Hive's, by the gateway's batch limit (refused when more match).
        limit = hive_limit if hive_limit >= 0 else self._settings.max_batch_size
        wanted = request.max_parts if request.max_parts > 0 else UNLIMITED
        scan = min(limit, wanted)
        cached = self._catalog.cached_partitions_by_filter(db_name, table_name, request.filter, scan, snapshot,
                                                           request.read.min_event_id)
        if isinstance(cached, PartitionsHit):
            self._check_partition_limit(len(cached.frames), wanted, f"{db_name}.{table_name}")
            return self._fits("GetPartitionsByFilter", b"".join(cached.frames[:wanted]), db_name, table_name)
        _, parts = await within_deadline(
            self._catalog.fetch_partitions_by_filter(db_name, table_name, request.filter, scan, snapshot), context)
        self._check_partition_limit(len(parts), wanted, f"{db_name}.{table_name}")
        return self._fits("GetPartitionsByFilter", pb.GetPartitionsByFilterResponse(
            partitions=[convert.partition_to_pb(p) for p in parts[:wanted]]).SerializeToString(), db_name, table_name)

    async def _filter_page(self, request: pb.GetPartitionsByFilterRequest, context: Ctx) -> bytes:
        """One page of a filter read: at most page_size matches after the token's name, in name order, and
        the next page's token; fewer when more would not fit hive.metastore.server.max.message.size."""
        if request.page_size < 0:
            raise InvalidArgument(f"page_size must not be negative, got {request.page_size}")
        if request.max_parts:
            raise InvalidArgument("max_parts does not combine with paging (page_size, page_token): page with "
                                  "page_size alone, or ask for max_parts in one unpaged call")
        page_size = min(request.page_size or self._settings.max_batch_size, self._settings.max_batch_size)
        if self._settings.partition_request_limit >= 0:  # Hive's limit bounds each page
            page_size = min(page_size, self._settings.partition_request_limit)
        db_name, table_name, snapshot = _target(request.db_name, request.table_name, request.read)
        if page_size == 0:
            raise ResourceExhausted(f"no partition of {db_name}.{table_name} may be read: "
                                    "hive.metastore.limit.partition.request is 0")
        after = decode_page_token(request.page_token)
        cached = self._catalog.cached_partitions_by_filter(db_name, table_name, request.filter, page_size, snapshot,
                                                           request.read.min_event_id, after=after)
        if isinstance(cached, PartitionsHit):
            frames, names = cached.frames, cached.names
        else:
            _, parts = await within_deadline(self._catalog.fetch_partitions_by_filter(
                db_name, table_name, request.filter, page_size, snapshot, after=after), context)
            frames, names = [wire.partition_element(p) for p in parts], [p.name for p in parts]
        page = frames[:page_size]  # one more was read to tell whether another page follows
        kept = frames_that_fit(page, names, self._settings.max_message_bytes)
        if page and not kept:
            refuse_partitions_reply("GetPartitionsByFilter", page[0], self._settings.max_message_bytes,
                                    f"{db_name}.{table_name}", "ask for a smaller page_size")
        token = encode_page_token(names[kept - 1]) if len(frames) > kept else ""
        return b"".join(page[:kept]) + wire.next_page_token_field(token)

    def _fits(self, call: str, reply: bytes, db_name: str, table_name: str) -> bytes:
        """A partitions answer, refused here, clearly, when over the message size (validation.py). A hit
        that fits (every one, in practice) costs one comparison: the words of a refusal are built only for one."""
        if len(reply) <= self._settings.max_message_bytes:
            return reply
        fewer = ("ask for fewer names per call" if call == "GetPartitionsByNames"
                 else "narrow the filter, or read it in pages (page_size)")
        refuse_partitions_reply(call, reply, self._settings.max_message_bytes, f"{db_name}.{table_name}", fewer)

    def _check_partition_limit(self, matched: int, wanted: int, table: str) -> None:
        """`matched` rows were read with a scan of at most limit + 1 (store/catalog.py)."""
        hive_limit = self._settings.partition_request_limit
        if 0 <= hive_limit < matched:
            raise ResourceExhausted(
                f"the filter matches more than {hive_limit} partitions of {table} "
                "(hive.metastore.limit.partition.request); narrow the filter, or read it in pages (page_size)"
            )
        batch = self._settings.max_batch_size
        if hive_limit < 0 and matched > batch and wanted > batch:
            raise ResourceExhausted(
                f"the filter matches more than {batch} partitions of {table} (metastore.gateway.max.batch.size, "
                "the most one answer holds); narrow the filter, or read it in pages (page_size)"
            )

    @answers_from_memory
    async def ListPartitionNames(
        self, request: pb.ListPartitionNamesRequest, context: Ctx
    ) -> pb.ListPartitionNamesResponse:
        limit = self._settings.max_batch_size
        if request.page_size < 0:
            raise InvalidArgument(f"page_size must not be negative, got {request.page_size}")
        page_size = min(request.page_size or limit, limit)
        db_name, table_name, snapshot = _target(request.db_name, request.table_name, request.read)
        cached = self._catalog.cached_partition_names(db_name, table_name, decode_page_token(request.page_token),
                                                      page_size, snapshot, request.read.min_event_id)
        if not isinstance(cached, Miss):
            found, last = cached
            token = encode_page_token(last) if last else ""
        else:
            found, token = await within_deadline(
                self._catalog.fetch_partition_names(db_name, table_name, page_size, request.page_token, snapshot),
                context)
        # A page answers fewer names rather than more bytes than hive.metastore.server.max.message.size.
        if (kept := names_that_fit(found, self._settings.max_message_bytes)) < len(found):
            found, token = found[:kept], encode_page_token(found[kept - 1])
        return pb.ListPartitionNamesResponse(names=found, next_page_token=token)

    async def AlterPartitions(self, request: pb.AlterPartitionsRequest, context: Ctx) -> pb.AlterPartitionsResponse:
        check_batch(len(request.partitions), "AlterPartitions", self._settings.max_batch_size)
        await self._check_txn(context, request.txn_id, "AlterPartitions")
        need_result = request.need_result if request.HasField("need_result") else True
        answer = PartitionsAnswer("AlterPartitions", self._settings.max_message_bytes, "alter") if need_result else None
        _, event_id = await self._store.alter_partitions(
            require(request.db_name, "db_name"), require(request.table_name, "table_name"),
            [convert.partition_from_pb(p) for p in request.partitions], request.table_id, request.txn_id,
            check_answer=answer,
        )
        self._catalog.wrote(request.db_name, request.table_name, event_id, request.txn_id)
        return pb.AlterPartitionsResponse(partitions=answer.partitions if answer else [], event_id=event_id)

    async def DropPartitions(self, request: pb.DropPartitionsRequest, context: Ctx) -> pb.DropPartitionsResponse:
        check_batch(len(request.names), "DropPartitions", self._settings.max_batch_size)
        await self._check_txn(context, request.txn_id, "DropPartitions")
        dropped, event_id = await self._store.drop_partitions(
            require(request.db_name, "db_name"), require(request.table_name, "table_name"), list(request.names),
            if_exists=request.if_exists, expected_table_id=request.table_id, txn_id=request.txn_id,
        )
        self._catalog.wrote(request.db_name, request.table_name, event_id, request.txn_id)
        return pb.DropPartitionsResponse(names=dropped.names, event_id=event_id)


# A query's table name arrives with each of its many reads: normalise each form once (its snapshot:
# store.snapshot.parse_snapshot).
@functools.lru_cache(maxsize=1024)
def _table_key(db_name: str, table_name: str) -> tuple[str, str]:
    return table_key(require(db_name, "db_name"), require(table_name, "table_name"))


def _snapshot(read: pb.ReadContext) -> ReadSnapshot:
    return parse_snapshot(read.valid_write_id_list, read.txn_id, read.table_id)




def _target(db_name: str, table_name: str, read: pb.ReadContext) -> tuple[str, str, ReadSnapshot]:
    """Normalised names and the parsed snapshot; the same checks whichever path answers."""
    db_key, tbl_key = _table_key(db_name, table_name)
    snapshot = _snapshot(read)
    snapshot.check_table_name(f"{db_key}.{tbl_key}")
    return db_key, tbl_key, snapshot


def register(servicer: CatalogServicer, server: grpc.aio.Server) -> None:
    """Like the generated add_CatalogServicer_to_server, but the methods in
    RAW_RESPONSE_METHODS return serialized bytes (no response serializer), and GetPartitionsByNames
    takes a NamesRequest."""
    service = pb.DESCRIPTOR.services_by_name["Catalog"]
    handlers = {}
    for method in service.methods:
        request_cls = getattr(pb, method.input_type.name)
        response_cls = getattr(pb, method.output_type.name)
        handlers[method.name] = grpc.unary_unary_rpc_method_handler(
            getattr(servicer, method.name),
            request_deserializer=NamesRequest.from_bytes if method.name == "GetPartitionsByNames"
            else request_cls.FromString,
            response_serializer=None if method.name in RAW_RESPONSE_METHODS else response_cls.SerializeToString,
        )
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service.full_name, handlers),))
