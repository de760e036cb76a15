"""The notification log over Thrift: reading it (get_current_notificationEventId, get_next_notification with
Hive 4's filters, get_notification_events_count), the DML events clients fire into it (fire_listener_event),
and Hive's write notification log of transactional loads (add_write_notification_log, its batch form,
get_all_write_event_info)."""

from __future__ import annotations

from typing import Any

from gateway.auth import Ownership, check_notification_reader, thrift_identity
from gateway.config import GATEWAY_EVENTS, Settings
from gateway.thrift import convert, hive_events
from gateway.thrift.catalog_names import check_catalog
from gateway.thrift.convert import required
from gateway.thrift.idl import hms
from gateway.thrift.tjson import tjson
from gateway.thrift.txn_methods import txn_id_of
from hive.repl_files import FILE_SEPARATOR, encoded_files
from store.catalog_store import CatalogStore
from store.dml_events import Insert
from store.errors import InvalidArgument, NeverAllowed, NotFound
from store.events import EventFilter
from store.models import Table
from store.write_notifications import WriteNotification


class EventLogMethods:
    """Mixed into the Thrift handler; needs `_catalog`, `_settings` and `_owners`."""

    _owners: Ownership
    _catalog: CatalogStore
    _settings: Settings

    def _check_reader(self, what: str) -> None:
        check_notification_reader(thrift_identity.get(), self._settings.notification_api_auth, what)

    async def get_current_notificationEventId(self) -> Any:  # noqa: N802 - Hive's method name
        self._check_reader("get_current_notificationEventId")
        return hms.CurrentNotificationEventId(eventId=await self._catalog.current_event_id())

    async def get_next_notification(self, rqst: Any) -> Any:
        """The log after lastEvent, at most maxEvents, within what one response carries. Hive 4's filters,
        each that is set, keep only the events of its database, of its tables, of no type in its skip list
        and of a type in its type list, as Hive 4's metastore filters them (the answer then has gaps in its
        ids, which its clients allow when they filter); a catalog other than this metastore's is refused
        by the catalog check every request passes (catalog_names.py)."""
        self._check_reader("get_next_notification")
        last = rqst.lastEvent if rqst is not None and rqst.lastEvent is not None else -1
        if last < 0 or (rqst.maxEvents is not None and rqst.maxEvents < 0):
            raise InvalidArgument("get_next_notification needs lastEvent and maxEvents that are not negative")
        limit = min(rqst.maxEvents or self._settings.default_event_batch, self._settings.max_event_response)
        skip = tuple(rqst.eventTypeSkipList or ())
        only = tuple(rqst.eventTypeList) if rqst.eventTypeList is not None else None
        hive_format = self._settings.event_message_factory != GATEWAY_EVENTS
        stored_skip, stored_only = hive_events.stored_type_filter(skip, only) if hive_format else (skip, only)
        which = EventFilter(rqst.dbName or "", tuple(rqst.tableNames or ()), stored_skip, stored_only)
        events = await self._catalog.next_events(last, limit, which, max_message_bytes=self._settings.max_message_bytes)
        if not hive_format:
            return hms.NotificationEventResponse(events=hive_events.gateway_events(events))
        answered = await hive_events.hive_events(events, self._event_table, self._settings.max_message_bytes)
        return hms.NotificationEventResponse(events=[e for e in answered if hive_events.kept(e.eventType, skip, only)])

    async def _event_table(self, db_name: str, table_name: str) -> Table | None:
        """The table a partition event names, as it is now (gateway/thrift/hive_events.py); None: none."""
        try:
            return await self._catalog.latest_table(db_name, table_name)
        except NotFound:
            return None

    async def fire_listener_event(self, rqst: Any) -> Any:
        """Hive's DML events (hive.metastore.dml.events: Hive.loadTable and loadPartition after an INSERT or
        a LOAD): one INSERT event per insert in the log, their ids answered (store/dml_events.py). One
        insert (`insertData`) names its partition by the request's partitionVals; several (`insertDatas`,
        Hive 4) each by its own partitionVal, which must be set, as Hive's metastore requires. Hive 4's
        refreshEvent (a RELOAD event for Impala) is refused, saying so: this metastore logs no reloads. A
        Hive 2.3 client's request arrives in its own layout (gateway/thrift/layouts.py)."""
        rqst = required(rqst, "rqst")
        data = required(rqst.data, "data")
        if data.insertData is not None:
            inserts = [_insert(data.insertData, rqst.partitionVals, rqst.successful)]
        elif data.insertDatas is not None:
            if any(d.partitionVal is None for d in data.insertDatas):
                raise InvalidArgument("Partition values must be set when firing multiple insert events")
            inserts = [_insert(d, d.partitionVal, rqst.successful) for d in data.insertDatas]
        elif data.refreshEvent is not None:
            raise NeverAllowed("fire_listener_event: this metastore logs no RELOAD (refresh) events; only inserts")
        else:
            raise InvalidArgument("fire_listener_event: data sets no event (insertData or insertDatas)")
        event_ids = await self._catalog.log_inserts(required(rqst.dbName, "dbName"),
                                                    required(rqst.tableName, "tableName"), inserts)
        return hms.FireEventResponse(eventIds=list(event_ids))

    async def add_write_notification_log(self, rqst: Any) -> Any:
        """Hive 3's and 4's loadTable / loadPartition into a transactional table with hive.metastore.dml.events:
        the files its txn wrote there, kept for get_all_write_event_info (store/write_notifications.py). The
        caller must own the txn (the gateway's txn ownership, as for its other writes)."""
        rqst = required(rqst, "rqst")
        note = await self._write_notification(rqst, "add_write_notification_log")
        await self._catalog.record_write_notifications(required(rqst.db, "db"), required(rqst.table, "table"), [note],
                                                       skip_missing_partitions=False)
        return hms.WriteNotificationLogResponse()

    async def add_write_notification_log_in_batch(self, rqst: Any) -> Any:
        """Hive 4's loadDynamicPartitions: add_write_notification_log of several loads into one table, all or
        none; as Hive's, a partition that does not exist is passed over, and an empty list does nothing."""
        rqst = required(rqst, "rqst")
        check_catalog(rqst.catalog)
        requests = required(rqst.requestList, "requestList")
        if not requests:
            return hms.WriteNotificationLogBatchResponse()
        notes = [await self._write_notification(r, "add_write_notification_log_in_batch") for r in requests]
        await self._catalog.record_write_notifications(required(rqst.db, "db"), required(rqst.table, "table"), notes,
                                                       skip_missing_partitions=True)
        return hms.WriteNotificationLogBatchResponse()

    async def _write_notification(self, rqst: Any, what: str) -> WriteNotification:
        txn_id = txn_id_of(rqst.txnId, "txnId")
        await self._owners.check_txns(thrift_identity.get(), [txn_id], what)
        info = required(rqst.fileInfo, "fileInfo")
        files = required(info.filesAdded, "fileInfo.filesAdded")
        sub_directories = info.subDirectoryList or []
        if sub_directories and len(sub_directories) != len(files):
            raise InvalidArgument(f"{what}: fileInfo.subDirectoryList has {len(sub_directories)} entries for "
                                  f"{len(files)} files: send one per file, or none")
        return WriteNotification(txn_id, required(rqst.writeId, "writeId"),
                                 tuple(rqst.partitionVals) if rqst.partitionVals else None,
                                 tuple(encoded_files(files, sub_directories)))

    async def get_all_write_event_info(self, request: Any) -> list[Any]:
        """A txn's write notifications (of one database and table when named), by database, table and
        partition: what Hive's REPL DUMP and Impala's event processor read at each COMMIT_TXN. None logged
        (or no such txn) is an empty list, as Hive answers. The table and partition objects are as the load
        found them, in TJSON as Hive keeps them; the files joined by `]` as Hive joins them."""
        request = required(request, "request")
        infos = await self._catalog.write_event_infos(required(request.txnId, "txnId"), request.dbName,
                                                      request.tableName)
        return [hms.WriteEventInfo(
            writeId=i.write_id, database=i.db_name, table=i.table_name, files=FILE_SEPARATOR.join(i.files),
            partition=i.part_name, tableObj=tjson(convert.table_to_thrift(i.table)),
            partitionObj=tjson(convert.partition_to_thrift(i.table, i.partition)) if i.partition else None)
            for i in infos]

    async def get_notification_events_count(self, rqst: Any) -> Any:
        """Hive's count of a database's events and of those of no database (the txns') after
        `fromEventId` (to `toEventId` when it is set, 0 included; at most `limit`); dbName "*": every
        database's."""
        self._check_reader("get_notification_events_count")
        rqst = rqst if rqst is not None else hms.NotificationEventsCountRequest()
        after, to, limit = rqst.fromEventId, rqst.toEventId, rqst.limit
        if after is None or after < 0 or (to is not None and to < 0) or (limit is not None and limit < 0):
            raise InvalidArgument("get_notification_events_count needs fromEventId, toEventId and limit that are "
                                  "not negative")
        if not rqst.dbName:
            raise InvalidArgument("get_notification_events_count needs dbName")
        count = await self._catalog.count_events(after, rqst.dbName, to)
        return hms.NotificationEventsCountResponse(eventsCount=count if limit is None else min(count, limit))


def _insert(data: Any, partition_values: list[str] | None, successful: bool | None) -> Insert:
    """An InsertEventRequestData as the store logs it; an unset `replace` is true, as Hive's InsertEvent reads it."""
    return Insert(partition_values=tuple(partition_values) if partition_values else None,
                  files=tuple(required(data.filesAdded, "filesAdded")), checksums=tuple(data.filesAddedChecksum or ()),
                  sub_directories=tuple(data.subDirectoryList or ()), replace=data.replace is not False,
                  successful=successful is not False)
