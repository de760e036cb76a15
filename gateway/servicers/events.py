"""metastore.v1.Events: the notification log."""

from __future__ import annotations

from typing import TypeAlias

import grpc

from gateway import convert
from gateway.auth import OPEN_AUTHENTICATOR, Authenticator, check_notification_reader
from gateway.config import Settings
from gateway.errors import rpc_methods
from protos.metastore.v1 import events_pb2 as pb
from protos.metastore.v1 import events_pb2_grpc
from store.catalog_store import CatalogStore
from store.errors import InvalidArgument
from store.events import EventFilter

Ctx: TypeAlias = grpc.aio.ServicerContext


@rpc_methods
class EventsServicer(events_pb2_grpc.EventsServicer):
    def __init__(self, store: CatalogStore, settings: Settings, auth: Authenticator = OPEN_AUTHENTICATOR) -> None:
        self._store = store
        self._settings = settings
        self._auth = auth

    def _check_reader(self, context: Ctx, what: str) -> None:
        check_notification_reader(self._auth.context_identity(context), self._settings.notification_api_auth, what)

    async def GetCurrentNotificationEventId(
        self, request: pb.GetCurrentNotificationEventIdRequest, context: Ctx
    ) -> pb.GetCurrentNotificationEventIdResponse:
        self._check_reader(context, "GetCurrentNotificationEventId")
        return pb.GetCurrentNotificationEventIdResponse(event_id=await self._store.current_event_id())

    async def GetNextNotification(
        self, request: pb.GetNextNotificationRequest, context: Ctx
    ) -> pb.GetNextNotificationResponse:
        self._check_reader(context, "GetNextNotification")
        if request.max_events < 0 or request.last_event_id < 0:
            raise InvalidArgument("last_event_id and max_events must not be negative")
        limit = min(request.max_events or self._settings.default_event_batch, self._settings.max_event_response)
        which = EventFilter(request.db_name, (request.table_name,) if request.table_name else ())
        events = await self._store.next_events(request.last_event_id, limit, which,
                                               max_message_bytes=self._settings.max_message_bytes)
        return pb.GetNextNotificationResponse(events=[convert.event_to_pb(e) for e in events])
