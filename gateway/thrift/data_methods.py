"""The Hive metastore Thrift methods that change a managed table's data as well as its metadata:
drops with `deleteData`, truncate_table and rename_partition (gateway/warehouse.py has the rules).

Spark's DROP TABLE, DROP PARTITION and DROP DATABASE ... CASCADE leave deleting a managed table's
files to the metastore, and a partition rename leaves the move to it: without these a re-created
table would read the dropped one's rows. The metadata change is the same store call the other
methods make; the file work is ordered around it as Hive orders it.
"""

from __future__ import annotations

import contextlib
import functools
import uuid
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Sequence

from gateway.auth import thrift_identity
from gateway.config import Settings
from gateway.thrift import convert, meta_conf
from gateway.thrift.convert import required, stamp_ddl_time
from gateway.thrift.expressions import read_expression
from gateway.thrift.idl import hms
from gateway.thrift.own_txn import OwnTxns
from gateway.warehouse import Warehouse
from hive.limits import preview
from hive.names import (canonical_partition_name, leading_partition_values, make_partition_name,
                        matches_partial_values)
from store.cache.facade import CachedCatalog
from store.catalog import (DroppedPartitions, DroppedTable, check_database_droppable, check_exchangeable,
                           require_partitioned)
from store.catalog_store import CatalogStore
from hive.stats_accuracy import NO_CONTEXT, AlterContext
from store.errors import (AlreadyExists, FailedPrecondition, InvalidArgument, NeverAllowed, NotFound,
                          ResourceExhausted)
from store.models import Partition, Table
from store.placement import (exchanged_location, owns_data, renamed_partition_location, renamed_table_location,
                             renames)
from store.snapshot import ReadSnapshot

LATEST = ReadSnapshot(latest_committed=True)
ALL_PARTITIONS = 2**31 - 2  # the largest LIMIT that fits an int4

# Hive 4's truncate_table_req keeps a transactional table's files when its environment context says so.
TRUNCATE_SKIP_DATA_DELETION = "truncateSkipDataDeletion"



class DataMethods:
    """Mixed into the Thrift handler; needs `_catalog`, `_cached`, `_settings`, `_warehouse`, `_own_txns` and
    `_table`."""

    _catalog: CatalogStore
    _cached: CachedCatalog
    _settings: Settings
    _warehouse: Warehouse
    _own_txns: OwnTxns

    if TYPE_CHECKING:  # the handler's
        async def _table(self, db_name: str | None, table_name: str | None,
                         snapshot: ReadSnapshot = LATEST) -> Table: ...

        async def _table_to_write(self, db_name: str, table_name: str) -> Table: ...

        async def _table_if_any(self, db_name: str, table_name: str) -> Table | None: ...

        async def _txn_of_write_id(self, table: Table, write_id: int | None, what: str) -> int: ...

        async def alter_partitions(self, db_name: str | None, tbl_name: str | None, new_parts: list[Any] | None,
                                   *, txn_id: int = 0, stats: AlterContext = NO_CONTEXT) -> None: ...

    async def _name_of(self, db_name: str | None, tbl_name: str | None, part_vals: list[str] | None,
                       snapshot: ReadSnapshot = LATEST) -> str:
        """The partition name of `part_vals` (Hive's call shape by values) in the key order of the table
        as `snapshot` sees it (a read's snapshot may see a table that has since been renamed or dropped)."""
        return convert.partition_name(await self._table(db_name, tbl_name, snapshot), required(part_vals, "part_vals"))

    def _check_deletable(self, table: Table | None, what: str) -> None:
        """A managed table's data outside the data roots: its drop, or its partitions', is refused (Warehouse)."""
        if table is not None and owns_data(table):
            self._warehouse.check_deletable(table.sd.location, f"{what} {table.full_name}")

    async def _partitions(self, table: Table) -> list[Partition]:
        """Every partition of `table` now."""
        _, parts = (await self._catalog.list_partitions(table.db_name, table.name, ALL_PARTITIONS, LATEST)).value
        return parts

    # -- databases and tables ---------------------------------------------------------------------
    # A drop with deleteData deletes where the store's drop found the objects, in its transaction, once
    # it has committed (Hive's order): the gateway's own view may not yet show another's SET LOCATION.

    async def drop_database(self, name: str | None, deleteData: bool | None, cascade: bool | None) -> None:  # noqa: N803
        name = required(name, "name")
        check_database_droppable(name)  # the store's refusal first: default sits at the warehouse's root
        if deleteData:
            with contextlib.suppress(NotFound):  # (a missing database is the drop's to refuse)
                database = await self._cached.fetch_database(name)
                self._warehouse.check_deletable(database.location, f"drop database {name}")
        dropped, event_id = await self._catalog.drop_database(name, cascade=bool(cascade), if_exists=False,
                                                              caller=thrift_identity.get().limited_to)
        self._cached.wrote(name, "", event_id)
        if deleteData and dropped is not None:
            locations = [dropped.database.location, *(loc for t in dropped.tables for loc in _data_locations(t))]
            await self._warehouse.delete(locations, f"drop database {name}")

    async def drop_database_req(self, req: Any) -> Any:
        """Hive 4's DROP DATABASE ... CASCADE (HiveMetaStoreClient.dropDatabase(DropDatabaseRequest), after
        it dropped the tables that have client-side hooks): drop_database of `name` in catalog
        `catalogName`; a database that does not exist is no error with `ignoreUnknownDb`. `softDelete`
        (Hive 4's lockless reads: keep transactional tables' files for its Cleaner) and
        `deleteManagedDir` are not read: the files go as drop_database's deleteData says. Answered as
        finished (`_dropped`)."""
        req = required(req, "req")
        name = required(req.name, "name")
        _check_synchronous(req.id, f"drop of database {name}")
        try:
            await self.drop_database(name, req.deleteData, req.cascade)
        except NotFound:
            if not req.ignoreUnknownDb or await self._database_exists(name):
                raise
        return _dropped(f"database {name}")

    async def _database_exists(self, name: str) -> bool:
        try:
            await self._cached.fetch_database(name)
        except NotFound:
            return False
        return True

    async def alter_table(self, dbname: str | None, tbl_name: str | None, new_tbl: Any, *, txn_id: int = 0,
                          cascade: bool = False, stats: AlterContext = NO_CONTEXT) -> None:
        """Hive's alter_table (under `txn_id`: Hive 4's alter_table_req with a write id; with `cascade`,
        ALTER TABLE ... CASCADE: the partitions take the table's new columns, as Hive's alter of a table
        that it does not rename). An unpartitioned table's COLUMN_STATS_ACCURATE goes unless `stats`, what
        the call's EnvironmentContext says, keeps it (store/catalog.py _with_stats_of_alter). A rename of a
        managed table in its default directory moves the directory to the new name's (Hive 3's rule: a
        table placed elsewhere stays there), once the renamed row is written and before the rename
        commits, and back when the commit fails; its partitions under it move along. The move is
        planned here from this gateway's view of the table and decided again by the store on the row
        it locks (store/placement.py): when they differ, the rename is refused (Aborted), nothing
        renamed and nothing moved."""
        db_name, table_name = required(dbname, "dbname"), required(tbl_name, "tbl_name")
        new_tbl = required(new_tbl, "new_tbl")
        new_tbl.parameters = stamp_ddl_time(new_tbl.parameters)
        table = convert.table_from_thrift(new_tbl, default_fs=self._settings.default_fs, db_name=db_name,
                                           name=table_name)
        old = await self._table(db_name, table_name)
        caller = thrift_identity.get().limited_to
        check = meta_conf.column_type_check(self._catalog.check_column_types)  # the connection's setting
        async with self._own_txns.around(old, txn_id, f"alter table {old.full_name}") as txn_id:
            if cascade and not renames(old, table):
                altered, event_id = await self._catalog.alter_table_cascade(
                    db_name, table_name, table, chunk=self._settings.max_batch_size, caller=caller, stats=stats,
                    txn_id=txn_id, check_column_types=check)
            elif txn_id or not renames(old, table):  # (a transactional table keeps its place)
                altered, event_id = await self._catalog.alter_table(db_name, table_name, table, txn_id, caller=caller,
                                                                    stats=stats, check_column_types=check)
            else:
                target = await renamed_table_location(old, table, self._database_location)
                what = f"rename of {old.full_name} to {table.db_name}.{table.name}"
                async with self._warehouse.moving([] if target is None else [(old.sd.location, target)],
                                                  what) as move:
                    altered, event_id = await self._catalog.rename_table_relocating(
                        db_name, table_name, table, move, caller=caller, stats=stats, check_column_types=check)
            self._cached.wrote(db_name, table_name, event_id, txn_id, renamed_to=(altered.db_name, altered.name))

    async def _database_location(self, name: str) -> str:
        return (await self._cached.fetch_database(name)).location

    async def drop_table(self, dbname: str | None, name: str | None, deleteData: bool | None) -> None:  # noqa: N803
        db_name, table_name = required(dbname, "dbname"), required(name, "name")
        if deleteData:
            self._check_deletable(await self._table_if_any(db_name, table_name), "drop table")
        dropped, event_id = await self._catalog.drop_table(db_name, table_name, if_exists=False,
                                                           caller=thrift_identity.get().limited_to)
        self._cached.wrote(db_name, table_name, event_id)
        if deleteData and dropped is not None:
            await self._warehouse.delete(_data_locations(dropped), f"drop table {dropped.table.full_name}")

    async def drop_table_with_environment_context(self, dbname: str | None, name: str | None,
                                                  deleteData: bool | None, environment_context: Any) -> None:  # noqa: N803
        await self.drop_table(dbname, name, deleteData)

    async def drop_table_req(self, req: Any) -> Any:
        """The newest Hive client's drop_table (it sets dropPartitions always: a table goes with its
        partitions here in any case). Answered as finished (`_dropped`)."""
        req = required(req, "req")
        _check_synchronous(req.id, f"drop of table {req.dbName}.{req.tableName}")
        await self.drop_table(req.dbName, req.tableName, req.deleteData)
        return _dropped(f"table {req.dbName}.{req.tableName}")

    async def truncate_table(self, dbName: str | None, tableName: str | None,  # noqa: N803
                             partNames: list[str] | None) -> None:  # noqa: N803
        """Hive's truncate: empty the table's (or the named partitions') directories, keep the
        directories, and set the basic statistics to 0. A transactional table is refused: its files
        are what open snapshots read, so emptying them in place would change a snapshot's answer."""
        await self._truncate(dbName, tableName, partNames)

    async def truncate_table_req(self, req: Any) -> Any:
        """Hive 4's truncate (Hive 4's and Impala's clients send only this). A transactional table is
        truncated under the write id its txn allocated, as Hive 4 does with hive.acid.truncate.usebase:
        an empty base per location, the statistics set to 0 under that write id, all visible when the
        txn commits; its files stay for the cleaner (the client says so with truncateSkipDataDeletion)."""
        req = required(req, "req")
        properties = (req.environmentContext and req.environmentContext.properties) or {}
        keep_files = properties.get(TRUNCATE_SKIP_DATA_DELETION, "false").lower() == "true"
        await self._truncate(req.dbName, req.tableName, req.partNames, write_id=req.writeId, keep_files=keep_files)
        return hms.TruncateTableResponse()

    async def _truncate(self, db_name: str | None, table_name: str | None, part_names: list[str] | None, *,
                        write_id: int | None = None, keep_files: bool = False) -> None:
        db_name, table_name = required(db_name, "dbName"), required(table_name, "tableName")
        what = f"truncate table {db_name}.{table_name}"
        check = functools.partial(_check_truncatable, write_id=write_id, keep_files=keep_files)
        # Checked on the latest version here (the write id's txn needs the table), and again by the store
        # on the version it locks, where the directories are read and emptied.
        table = await self._table_to_write(db_name, table_name)
        check(table)
        txn_id = await self._txn_of_write_id(table, write_id, what)
        if txn_id:
            assert write_id is not None
            empty = functools.partial(self._warehouse.add_empty_base, write_id=write_id, what=what)
        else:
            empty = functools.partial(self._warehouse.empty, what=what)
        truncated, event_id = await self._catalog.truncate(
            db_name, table_name, part_names, chunk=self._settings.max_batch_size, txn_id=txn_id, check=check,
            empty_locations=empty)
        self._cached.wrote(truncated.db_name, truncated.name, event_id, txn_id)

    # -- partitions -------------------------------------------------------------------------------

    async def _drop_partitions(self, db_name: str | None, tbl_name: str | None, names: Sequence[str],
                               delete_data: bool, if_exists: bool, whole: bool = False) -> DroppedPartitions:
        db_name, tbl_name = required(db_name, "db_name"), required(tbl_name, "tbl_name")
        acid = await self._table_if_any(db_name, tbl_name)
        if delete_data:
            self._check_deletable(acid, "drop partitions of")
        async with self._own_txns.around(acid, 0, f"drop partitions of {db_name}.{tbl_name}") as txn_id:
            dropped, event_id = await self._catalog.drop_partitions(db_name, tbl_name, list(names),
                                                                    if_exists=if_exists, whole=whole, txn_id=txn_id)
            table = dropped.table
            self._cached.wrote(table.db_name, table.name, event_id, txn_id)
        if delete_data and owns_data(table):
            locations = [p.location for p in dropped.partitions if p.location]
            await self._warehouse.delete(locations, f"drop partition(s) of {table.full_name}")
            await self._warehouse.delete_empty_parents(locations, table.sd.location)
        return dropped

    async def drop_partition(self, db_name: str | None, tbl_name: str | None, part_vals: list[str] | None,
                             deleteData: bool | None) -> bool:  # noqa: N803
        name = await self._name_of(db_name, tbl_name, part_vals)
        return bool((await self._drop_partitions(db_name, tbl_name, [name], bool(deleteData), if_exists=False)).names)

    async def drop_partition_with_environment_context(self, db_name: str | None, tbl_name: str | None,
                                                      part_vals: list[str] | None, deleteData: bool | None,  # noqa: N803
                                                      environment_context: Any) -> bool:
        return await self.drop_partition(db_name, tbl_name, part_vals, deleteData)

    async def drop_partition_by_name(self, db_name: str | None, tbl_name: str | None, part_name: str | None,
                                     deleteData: bool | None) -> bool:  # noqa: N803
        name = required(part_name, "part_name")
        return bool((await self._drop_partitions(db_name, tbl_name, [name], bool(deleteData), if_exists=False)).names)

    async def drop_partition_by_name_with_environment_context(self, db_name: str | None, tbl_name: str | None,
                                                              part_name: str | None, deleteData: bool | None,  # noqa: N803
                                                              environment_context: Any) -> bool:
        return await self.drop_partition_by_name(db_name, tbl_name, part_name, deleteData)

    async def drop_partition_req(self, req: Any) -> bool:
        """The newest Hive client's drop_partition and drop_partition_by_name: the partition of `partName`,
        else of `partVals`."""
        req = required(req, "req")
        if req.partName is not None:
            return await self.drop_partition_by_name(req.dbName, req.tblName, req.partName, req.deleteData)
        return await self.drop_partition(req.dbName, req.tblName, required(req.partVals, "partName or partVals"),
                                         req.deleteData)

    async def drop_partitions_req(self, req: Any) -> Any:
        """Hive's DropPartitionsRequest by names, or by expressions (Hive 2.3's DROP PARTITION: `_by_exprs`).
        With needResult (Hive's default) it answers the partitions dropped whole, as the drop found them
        (storage descriptor, parameters, create time: what get_partition answered), as Hive's does. As
        Hive 2.3.10's HMSHandler reads them, deleteData and ifExists count only when set and true: a
        request that leaves them unset keeps the files and refuses a missing name (NoSuchObjectException,
        nothing dropped), whatever the IDL's `ifExists = true` says; needResult counts unless set false. By
        names, a partition named twice counts as missing too (`_refuse_repeats`); with ifExists it is
        dropped, and answered, once."""
        req = required(req, "req")
        parts = required(req.parts, "parts")
        table = await self._table(req.dbName, req.tblName)
        selected: list[list[str]] | None = None  # by expressions: each one's partitions
        if parts.names is not None:
            names = parts.names
        elif parts.exprs is not None:
            selected = await self._by_exprs(table, parts.exprs, if_exists=req.ifExists is True)
            names = list(dict.fromkeys(name for each in selected for name in each))
        else:
            raise InvalidArgument("drop_partitions_req: parts names neither partitions nor expressions")
        if len(names) > self._settings.max_batch_size:
            raise ResourceExhausted(f"drop_partitions_req: {len(names)} partitions in one call, more than "
                                    f"metastore.gateway.max.batch.size ({self._settings.max_batch_size}); split it")
        if selected is None and names and req.ifExists is not True:
            _refuse_repeats(table, names)
        need_result = req.needResult is not False
        if not names:
            return hms.DropPartitionsResult(partitions=[] if need_result else None)
        dropped = await self._drop_partitions(table.db_name, table.name, names,
                                              delete_data=req.deleteData is True, if_exists=req.ifExists is True,
                                              whole=need_result)
        if not need_result:
            return hms.DropPartitionsResult(partitions=None)
        # By names in name order, as Hive answers them (the order its read by names found them in: handler.py
        # `_by_names`); by expressions each one's in turn, as Hive answers (once per expression).
        whole = [convert.partition_to_thrift(dropped.table, p)
                 for p in (dropped.whole if selected is not None else sorted(dropped.whole, key=attrgetter("name")))]
        if selected is not None:
            by_name = dict(zip(dropped.names, whole))
            whole = [by_name[name] for each in selected for name in each if name in by_name]
        return hms.DropPartitionsResult(partitions=whole)

    async def _by_exprs(self, table: Table, exprs: list[Any], *, if_exists: bool) -> list[list[str]]:
        """Each DropPartitionsExpr's partitions, as HMSHandler.drop_partitions_req finds them: as this
        connection reads expressions (gateway/thrift/expressions.py: Hive's by PartitionPruner's rule;
        MSCK's, the partitions it names), a partition it cannot decide refused ("Unexpected
        unknown partitions to drop", MetaException), and, unless ifExists, an expression that selects no
        partition refused ("Some partitions to drop are missing", NoSuchObjectException): Hive 4's rule
        (Hive 2.3 only counts partitions against expressions, so an expression matching nothing passes
        beside one matching two). An expression this gateway does not read or evaluate is refused with
        the reason (MetaException), nothing dropped: Hive's client has no fallback here.
        `partArchiveLevel` is not read: this metastore archives no partition. The caller drops them by
        the same path as the by-names form, one transaction, all or nothing."""
        everything = await self._partitions(table)
        values = [p.values for p in everything]
        selected: list[list[str]] = []
        for item in exprs:
            try:
                pruned = read_expression(required(item.expr, "expr"), None)(table.partition_keys, values)
            except InvalidArgument as exc:  # (NotServable; a missing expr)
                raise NeverAllowed(f"drop_partitions_req of {table.full_name}: {exc}") from None
            if pruned.has_unknown:
                raise NeverAllowed("Unexpected unknown partitions to drop")
            if not pruned.selected and not if_exists:
                raise NotFound("Some partitions to drop are missing")
            selected.append([everything[i].name for i in pruned.selected])
        return selected

    async def rename_partition(self, db_name: str | None, tbl_name: str | None, part_vals: list[str] | None,
                               new_part: Any) -> None:
        """Hive's rename_partition; with no old values it is alter_partition (Hive's own rule). A
        managed table's partition in its default directory moves to the new name's directory once the
        renamed rows are written and before the rename commits, and moves back when the commit fails.
        The move is planned here from this gateway's view of the table and decided again by the store
        on the rows it locks (store/placement.py): when they differ, the rename is refused (Aborted),
        nothing renamed and nothing moved. Its COLUMN_STATS_ACCURATE follows alter_partitions' rule (Hive's
        rename is an alter with no EnvironmentContext)."""
        new_part = required(new_part, "new_part")
        if not part_vals:
            await self.alter_partitions(db_name, tbl_name, [new_part])
            return
        table = await self._table(db_name, tbl_name)
        old_name = convert.partition_name(table, part_vals)
        _, found = (await self._catalog.get_partitions_by_names(table.db_name, table.name, [old_name], LATEST)).value
        if not found:
            raise NotFound(f"rename_partition: {table.full_name} has no partition {old_name}")
        source = found[0].sd.location
        new = convert.partition_from_thrift(new_part, default_fs=self._settings.default_fs)
        new_name = convert.partition_name(table, new.values)
        target = await renamed_partition_location(table, source, old_name, new_name, new.sd.location,
                                                  self._database_location)
        what = f"rename partition {old_name} of {table.full_name} to {new_name}"
        async with self._warehouse.moving([] if target is None else [(source, target)], what) as move:
            _, event_id = await self._catalog.rename_partition(table.db_name, table.name, old_name, new, move,
                                                               stats=NO_CONTEXT)
        self._cached.wrote(table.db_name, table.name, event_id)

    async def rename_partition_req(self, req: Any) -> Any:
        """Hive 4's ALTER TABLE ... PARTITION ... RENAME TO (HiveMetaStoreClient.renamePartition sends only
        this): rename_partition of the request's table in catalog `catName`. A transactional table's
        partition is refused, as by rename_partition: a rename under its txn (Hive 4 sends the txnId and
        the new partition's writeId) is not supported here. `clonePart` (Hive 4's rename that copies the
        files for lockless readers) is not read: the directory moves as rename_partition moves it."""
        req = required(req, "req")
        await self.rename_partition(req.dbName, req.tableName, required(req.partVals, "partVals"),
                                    required(req.newPart, "newPart"))
        return hms.RenamePartitionResponse()

    async def exchange_partitions(self, partitionSpecs: dict[str, str] | None, source_db: str | None,  # noqa: N803
                                  source_table_name: str | None, dest_db: str | None,
                                  dest_table_name: str | None) -> list[Any]:
        """Hive's ALTER TABLE dest EXCHANGE PARTITION (spec) WITH TABLE source: the source's partitions
        whose first keys have the spec's values move to dest (store/catalog.py has the rules). When
        the source is managed, each partition's directory at its default place moves to its default
        place under dest (an external dest's too, as Hive moves it; store/placement.py
        exchanged_location) once the exchanged rows are written and before the change commits, and back
        when it fails; otherwise the partitions keep their locations."""
        dest, moved = await self._exchange(partitionSpecs, source_db, source_table_name, dest_db, dest_table_name)
        return [convert.partition_to_thrift(dest, p) for p in moved]

    async def exchange_partition(self, partitionSpecs: dict[str, str] | None, source_db: str | None,  # noqa: N803
                                 source_table_name: str | None, dest_db: str | None,
                                 dest_table_name: str | None) -> Any:
        """exchange_partitions, answering the first partition moved (Hive 2.3 answers an empty one)."""
        dest, moved = await self._exchange(partitionSpecs, source_db, source_table_name, dest_db, dest_table_name)
        return convert.partition_to_thrift(dest, moved[0])

    async def _exchange(self, spec: dict[str, str] | None, source_db: str | None, source_name: str | None,
                        dest_db: str | None, dest_name: str | None) -> tuple[Table, list[Partition]]:
        """Moves the partitions: the destination table and its partitions moved, in name order."""
        spec = required(spec, "partitionSpecs")
        source, dest = await self._table(source_db, source_name), await self._table(dest_db, dest_name)
        check_exchangeable(source, dest)
        prefix = leading_partition_values(source.partition_keys, spec)
        everything = await self._partitions(source)
        matching = [p for p in everything if matches_partial_values(p.values, prefix)]
        specification = make_partition_name(source.partition_keys[:len(prefix)], prefix)
        if not matching:
            raise InvalidArgument(f"exchange partition: {source.full_name} has no partition {specification}")
        names = [p.name for p in matching]
        _, taken = (await self._catalog.get_partitions_by_names(dest.db_name, dest.name, names, LATEST)).value
        if taken:  # (before any directory moves; the store checks again as it adds them)
            raise AlreadyExists(f"exchange partition: {dest.full_name} already has partition(s) "
                                f"{', '.join(p.name for p in taken[:5])}; nothing was exchanged")
        # Planned here from this gateway's view of the tables, decided again by the store on the rows it
        # locks (store/placement.py): a plan that differs is refused, nothing exchanged, nothing moved.
        relocate = all(self._warehouse.local_path(t.sd.location) is not None for t in (source, dest))
        what = f"exchange of {len(names)} partition(s) of {source.full_name} into {dest.full_name}"
        moves = [(p.sd.location, exchanged_location(p, source, dest)) for p in matching] if relocate else []
        async with self._warehouse.moving(moves, what) as move:
            moved, event_id = await self._catalog.exchange_partitions(source.db_name, source.name, dest.db_name,
                                                                      dest.name, names, relocate=relocate,
                                                                      move_locations=move,
                                                                      specification=specification)
        self._cached.wrote(source.db_name, source.name, event_id)
        self._cached.wrote(dest.db_name, dest.name, event_id)
        await self._warehouse.delete_empty_parents([old for old, _ in move.done], source.sd.location)
        return dest, moved


def _dropped(what: str) -> Any:
    """The newest Hive's answer to a drop it may run asynchronously (drop_database_req, drop_table_req:
    an operation id the client could poll): here every drop has finished when it is answered, also one
    asked for with asyncDrop."""
    return hms.AsyncOperationResp(id=uuid.uuid4().hex, message=f"dropped {what}", finished=True)


def _check_synchronous(operation_id: str | None, what: str) -> None:
    """A request naming an operation id polls or cancels an asynchronous drop: none runs here."""
    if operation_id is not None:
        raise InvalidArgument(f"{what}: no operation {preview(operation_id, 40)} to poll or cancel; this "
                              "metastore drops at once and answers each drop finished")


def _check_truncatable(table: Table, write_id: int | None, keep_files: bool) -> None:
    if table.transactional and not (keep_files and write_id and write_id > 0):
        raise FailedPrecondition(f"{table.full_name} is transactional: truncating its files in place would change "
                                 f"what open snapshots read; truncate it under its txn's write id with an empty "
                                 f"base (Hive 4's truncate_table_req) or overwrite it in a transaction instead")
    if not owns_data(table):
        raise FailedPrecondition(f"{table.full_name} is not a managed table: its data is not the metastore's "
                                 f"to delete")
    if keep_files and not table.transactional:
        raise InvalidArgument(f"truncate table {table.full_name}: {TRUNCATE_SKIP_DATA_DELETION} keeps the files, "
                              f"and only a transactional table's empty base hides them from readers; "
                              f"{table.full_name} is not transactional")


def _refuse_repeats(table: Table, names: Sequence[str]) -> None:
    """Hive's drop_partitions_req by names compares the number of partitions it found with the number of
    names sent (Hive 2.3.10's HMSHandler, probed; Hive 4's DropPartitionsHandler: `parts.size() !=
    partNames.size()`): a partition named twice, in any spelling, is found once, so the request is refused
    as one naming a missing partition (NoSuchObjectException, nothing dropped) unless ifExists."""
    require_partitioned(table)
    seen: set[str] = set()
    for name in names:
        canonical = canonical_partition_name(table.partition_keys, name)
        if canonical in seen:
            raise NotFound(f"Some partitions to drop are missing: {table.full_name}'s partition {preview(canonical)} "
                           "is named more than once, and each name must find a partition of its own (set ifExists "
                           "to drop it once); nothing was dropped")
        seen.add(canonical)


def _data_locations(dropped: DroppedTable) -> list[str]:
    """Where a dropped table's data is the metastore's to delete: a managed table's directory, and its
    partitions placed outside it."""
    return dropped.data_locations if owns_data(dropped.table) else []
