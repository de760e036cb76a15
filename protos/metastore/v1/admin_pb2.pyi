from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class CacheStatsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class CacheStatsResponse(_message.Message):
    __slots__ = ("enabled", "hits", "misses_by_reason", "tables", "partitions", "bytes", "evictions", "poller_position", "poller_lag_events", "poller_lag_ms", "poller_lag_p50_ms", "poller_lag_p99_ms", "fills", "reloads", "resident_bytes", "poller_batches")
    class MissesByReasonEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    ENABLED_FIELD_NUMBER: _ClassVar[int]
    HITS_FIELD_NUMBER: _ClassVar[int]
    MISSES_BY_REASON_FIELD_NUMBER: _ClassVar[int]
    TABLES_FIELD_NUMBER: _ClassVar[int]
    PARTITIONS_FIELD_NUMBER: _ClassVar[int]
    BYTES_FIELD_NUMBER: _ClassVar[int]
    EVICTIONS_FIELD_NUMBER: _ClassVar[int]
    POLLER_POSITION_FIELD_NUMBER: _ClassVar[int]
    POLLER_LAG_EVENTS_FIELD_NUMBER: _ClassVar[int]
    POLLER_LAG_MS_FIELD_NUMBER: _ClassVar[int]
    POLLER_LAG_P50_MS_FIELD_NUMBER: _ClassVar[int]
    POLLER_LAG_P99_MS_FIELD_NUMBER: _ClassVar[int]
    FILLS_FIELD_NUMBER: _ClassVar[int]
    RELOADS_FIELD_NUMBER: _ClassVar[int]
    RESIDENT_BYTES_FIELD_NUMBER: _ClassVar[int]
    POLLER_BATCHES_FIELD_NUMBER: _ClassVar[int]
    enabled: bool
    hits: int
    misses_by_reason: _containers.ScalarMap[str, int]
    tables: int
    partitions: int
    bytes: int
    evictions: int
    poller_position: int
    poller_lag_events: int
    poller_lag_ms: float
    poller_lag_p50_ms: float
    poller_lag_p99_ms: float
    fills: int
    reloads: int
    resident_bytes: int
    poller_batches: int
    def __init__(self, enabled: bool = ..., hits: _Optional[int] = ..., misses_by_reason: _Optional[_Mapping[str, int]] = ..., tables: _Optional[int] = ..., partitions: _Optional[int] = ..., bytes: _Optional[int] = ..., evictions: _Optional[int] = ..., poller_position: _Optional[int] = ..., poller_lag_events: _Optional[int] = ..., poller_lag_ms: _Optional[float] = ..., poller_lag_p50_ms: _Optional[float] = ..., poller_lag_p99_ms: _Optional[float] = ..., fills: _Optional[int] = ..., reloads: _Optional[int] = ..., resident_bytes: _Optional[int] = ..., poller_batches: _Optional[int] = ...) -> None: ...
