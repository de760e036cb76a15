from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CompactionType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    COMPACTION_TYPE_UNSPECIFIED: _ClassVar[CompactionType]
    MAJOR: _ClassVar[CompactionType]
    MINOR: _ClassVar[CompactionType]
COMPACTION_TYPE_UNSPECIFIED: CompactionType
MAJOR: CompactionType
MINOR: CompactionType

class CompactRequest(_message.Message):
    __slots__ = ("db_name", "table_name", "partition_name", "type", "properties", "run_as")
    class PropertiesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    DB_NAME_FIELD_NUMBER: _ClassVar[int]
    TABLE_NAME_FIELD_NUMBER: _ClassVar[int]
    PARTITION_NAME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    PROPERTIES_FIELD_NUMBER: _ClassVar[int]
    RUN_AS_FIELD_NUMBER: _ClassVar[int]
    db_name: str
    table_name: str
    partition_name: str
    type: CompactionType
    properties: _containers.ScalarMap[str, str]
    run_as: str
    def __init__(self, db_name: _Optional[str] = ..., table_name: _Optional[str] = ..., partition_name: _Optional[str] = ..., type: _Optional[_Union[CompactionType, str]] = ..., properties: _Optional[_Mapping[str, str]] = ..., run_as: _Optional[str] = ...) -> None: ...

class CompactResponse(_message.Message):
    __slots__ = ("id", "accepted", "state")
    ID_FIELD_NUMBER: _ClassVar[int]
    ACCEPTED_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    id: int
    accepted: bool
    state: str
    def __init__(self, id: _Optional[int] = ..., accepted: bool = ..., state: _Optional[str] = ...) -> None: ...

class ShowCompactionsRequest(_message.Message):
    __slots__ = ("db_name", "table_name", "partition_name", "limit")
    DB_NAME_FIELD_NUMBER: _ClassVar[int]
    TABLE_NAME_FIELD_NUMBER: _ClassVar[int]
    PARTITION_NAME_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    db_name: str
    table_name: str
    partition_name: str
    limit: int
    def __init__(self, db_name: _Optional[str] = ..., table_name: _Optional[str] = ..., partition_name: _Optional[str] = ..., limit: _Optional[int] = ...) -> None: ...

class CompactionInfo(_message.Message):
    __slots__ = ("id", "db_name", "table_name", "partition_name", "type", "state", "worker_host", "worker_id", "enqueue_time_ms", "start_ms", "duration_ms", "hadoop_job_id", "error_message", "initiator_host", "initiator_id", "pool_name", "txn_id", "next_txn_id", "commit_time_ms", "highest_write_id", "run_as", "end_ms", "worker_version", "initiator_version")
    ID_FIELD_NUMBER: _ClassVar[int]
    DB_NAME_FIELD_NUMBER: _ClassVar[int]
    TABLE_NAME_FIELD_NUMBER: _ClassVar[int]
    PARTITION_NAME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    WORKER_HOST_FIELD_NUMBER: _ClassVar[int]
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    ENQUEUE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    START_MS_FIELD_NUMBER: _ClassVar[int]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    HADOOP_JOB_ID_FIELD_NUMBER: _ClassVar[int]
    ERROR_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    INITIATOR_HOST_FIELD_NUMBER: _ClassVar[int]
    INITIATOR_ID_FIELD_NUMBER: _ClassVar[int]
    POOL_NAME_FIELD_NUMBER: _ClassVar[int]
    TXN_ID_FIELD_NUMBER: _ClassVar[int]
    NEXT_TXN_ID_FIELD_NUMBER: _ClassVar[int]
    COMMIT_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    HIGHEST_WRITE_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_AS_FIELD_NUMBER: _ClassVar[int]
    END_MS_FIELD_NUMBER: _ClassVar[int]
    WORKER_VERSION_FIELD_NUMBER: _ClassVar[int]
    INITIATOR_VERSION_FIELD_NUMBER: _ClassVar[int]
    id: int
    db_name: str
    table_name: str
    partition_name: str
    type: str
    state: str
    worker_host: str
    worker_id: str
    enqueue_time_ms: int
    start_ms: int
    duration_ms: int
    hadoop_job_id: str
    error_message: str
    initiator_host: str
    initiator_id: str
    pool_name: str
    txn_id: int
    next_txn_id: int
    commit_time_ms: int
    highest_write_id: int
    run_as: str
    end_ms: int
    worker_version: str
    initiator_version: str
    def __init__(self, id: _Optional[int] = ..., db_name: _Optional[str] = ..., table_name: _Optional[str] = ..., partition_name: _Optional[str] = ..., type: _Optional[str] = ..., state: _Optional[str] = ..., worker_host: _Optional[str] = ..., worker_id: _Optional[str] = ..., enqueue_time_ms: _Optional[int] = ..., start_ms: _Optional[int] = ..., duration_ms: _Optional[int] = ..., hadoop_job_id: _Optional[str] = ..., error_message: _Optional[str] = ..., initiator_host: _Optional[str] = ..., initiator_id: _Optional[str] = ..., pool_name: _Optional[str] = ..., txn_id: _Optional[int] = ..., next_txn_id: _Optional[int] = ..., commit_time_ms: _Optional[int] = ..., highest_write_id: _Optional[int] = ..., run_as: _Optional[str] = ..., end_ms: _Optional[int] = ..., worker_version: _Optional[str] = ..., initiator_version: _Optional[str] = ...) -> None: ...

class ShowCompactionsResponse(_message.Message):
    __slots__ = ("compactions",)
    COMPACTIONS_FIELD_NUMBER: _ClassVar[int]
    compactions: _containers.RepeatedCompositeFieldContainer[CompactionInfo]
    def __init__(self, compactions: _Optional[_Iterable[_Union[CompactionInfo, _Mapping]]] = ...) -> None: ...

class ClaimCompactionRequest(_message.Message):
    __slots__ = ("worker_id", "worker_version")
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    WORKER_VERSION_FIELD_NUMBER: _ClassVar[int]
    worker_id: str
    worker_version: str
    def __init__(self, worker_id: _Optional[str] = ..., worker_version: _Optional[str] = ...) -> None: ...

class ClaimCompactionResponse(_message.Message):
    __slots__ = ("found", "id", "db_name", "table_name", "partition_name", "type", "properties")
    class PropertiesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    FOUND_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    DB_NAME_FIELD_NUMBER: _ClassVar[int]
    TABLE_NAME_FIELD_NUMBER: _ClassVar[int]
    PARTITION_NAME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    PROPERTIES_FIELD_NUMBER: _ClassVar[int]
    found: bool
    id: int
    db_name: str
    table_name: str
    partition_name: str
    type: CompactionType
    properties: _containers.ScalarMap[str, str]
    def __init__(self, found: bool = ..., id: _Optional[int] = ..., db_name: _Optional[str] = ..., table_name: _Optional[str] = ..., partition_name: _Optional[str] = ..., type: _Optional[_Union[CompactionType, str]] = ..., properties: _Optional[_Mapping[str, str]] = ...) -> None: ...

class StartCompactionRequest(_message.Message):
    __slots__ = ("id", "worker_id", "user", "hostname")
    ID_FIELD_NUMBER: _ClassVar[int]
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    HOSTNAME_FIELD_NUMBER: _ClassVar[int]
    id: int
    worker_id: str
    user: str
    hostname: str
    def __init__(self, id: _Optional[int] = ..., worker_id: _Optional[str] = ..., user: _Optional[str] = ..., hostname: _Optional[str] = ...) -> None: ...

class StartCompactionResponse(_message.Message):
    __slots__ = ("txn_id", "valid_txn_list", "valid_write_id_list", "location", "table_id", "column_names", "input_format", "serialization_lib")
    TXN_ID_FIELD_NUMBER: _ClassVar[int]
    VALID_TXN_LIST_FIELD_NUMBER: _ClassVar[int]
    VALID_WRITE_ID_LIST_FIELD_NUMBER: _ClassVar[int]
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    COLUMN_NAMES_FIELD_NUMBER: _ClassVar[int]
    INPUT_FORMAT_FIELD_NUMBER: _ClassVar[int]
    SERIALIZATION_LIB_FIELD_NUMBER: _ClassVar[int]
    txn_id: int
    valid_txn_list: str
    valid_write_id_list: str
    location: str
    table_id: int
    column_names: _containers.RepeatedScalarFieldContainer[str]
    input_format: str
    serialization_lib: str
    def __init__(self, txn_id: _Optional[int] = ..., valid_txn_list: _Optional[str] = ..., valid_write_id_list: _Optional[str] = ..., location: _Optional[str] = ..., table_id: _Optional[int] = ..., column_names: _Optional[_Iterable[str]] = ..., input_format: _Optional[str] = ..., serialization_lib: _Optional[str] = ...) -> None: ...

class HeartbeatCompactionRequest(_message.Message):
    __slots__ = ("id", "worker_id")
    ID_FIELD_NUMBER: _ClassVar[int]
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    id: int
    worker_id: str
    def __init__(self, id: _Optional[int] = ..., worker_id: _Optional[str] = ...) -> None: ...

class HeartbeatCompactionResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class CompleteCompactionRequest(_message.Message):
    __slots__ = ("id", "worker_id", "txn_id", "highest_write_id")
    ID_FIELD_NUMBER: _ClassVar[int]
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    TXN_ID_FIELD_NUMBER: _ClassVar[int]
    HIGHEST_WRITE_ID_FIELD_NUMBER: _ClassVar[int]
    id: int
    worker_id: str
    txn_id: int
    highest_write_id: int
    def __init__(self, id: _Optional[int] = ..., worker_id: _Optional[str] = ..., txn_id: _Optional[int] = ..., highest_write_id: _Optional[int] = ...) -> None: ...

class CompleteCompactionResponse(_message.Message):
    __slots__ = ("event_id",)
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    event_id: int
    def __init__(self, event_id: _Optional[int] = ...) -> None: ...

class FailCompactionRequest(_message.Message):
    __slots__ = ("id", "worker_id", "error_message", "refused")
    ID_FIELD_NUMBER: _ClassVar[int]
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    ERROR_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    REFUSED_FIELD_NUMBER: _ClassVar[int]
    id: int
    worker_id: str
    error_message: str
    refused: bool
    def __init__(self, id: _Optional[int] = ..., worker_id: _Optional[str] = ..., error_message: _Optional[str] = ..., refused: bool = ...) -> None: ...

class FailCompactionResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...
