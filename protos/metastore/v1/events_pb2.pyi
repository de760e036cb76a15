from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class NotificationEvent(_message.Message):
    __slots__ = ("event_id", "event_time_ms", "event_type", "db_name", "table_name", "table_id", "txn_id", "write_id", "message")
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    DB_NAME_FIELD_NUMBER: _ClassVar[int]
    TABLE_NAME_FIELD_NUMBER: _ClassVar[int]
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    TXN_ID_FIELD_NUMBER: _ClassVar[int]
    WRITE_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    event_id: int
    event_time_ms: int
    event_type: str
    db_name: str
    table_name: str
    table_id: int
    txn_id: int
    write_id: int
    message: str
    def __init__(self, event_id: _Optional[int] = ..., event_time_ms: _Optional[int] = ..., event_type: _Optional[str] = ..., db_name: _Optional[str] = ..., table_name: _Optional[str] = ..., table_id: _Optional[int] = ..., txn_id: _Optional[int] = ..., write_id: _Optional[int] = ..., message: _Optional[str] = ...) -> None: ...

class GetCurrentNotificationEventIdRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetCurrentNotificationEventIdResponse(_message.Message):
    __slots__ = ("event_id",)
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    event_id: int
    def __init__(self, event_id: _Optional[int] = ...) -> None: ...

class GetNextNotificationRequest(_message.Message):
    __slots__ = ("last_event_id", "max_events", "db_name", "table_name")
    LAST_EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    MAX_EVENTS_FIELD_NUMBER: _ClassVar[int]
    DB_NAME_FIELD_NUMBER: _ClassVar[int]
    TABLE_NAME_FIELD_NUMBER: _ClassVar[int]
    last_event_id: int
    max_events: int
    db_name: str
    table_name: str
    def __init__(self, last_event_id: _Optional[int] = ..., max_events: _Optional[int] = ..., db_name: _Optional[str] = ..., table_name: _Optional[str] = ...) -> None: ...

class GetNextNotificationResponse(_message.Message):
    __slots__ = ("events",)
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[NotificationEvent]
    def __init__(self, events: _Optional[_Iterable[_Union[NotificationEvent, _Mapping]]] = ...) -> None: ...
