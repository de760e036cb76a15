from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class LockType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    LOCK_TYPE_UNSPECIFIED: _ClassVar[LockType]
    SHARED_READ: _ClassVar[LockType]
    SHARED_WRITE: _ClassVar[LockType]
    EXCL_WRITE: _ClassVar[LockType]
    EXCLUSIVE: _ClassVar[LockType]

class LockState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    LOCK_STATE_UNSPECIFIED: _ClassVar[LockState]
    ACQUIRED: _ClassVar[LockState]
    WAITING: _ClassVar[LockState]

class DataOperationType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DATA_OPERATION_TYPE_UNSPECIFIED: _ClassVar[DataOperationType]
    DATA_OPERATION_SELECT: _ClassVar[DataOperationType]
    DATA_OPERATION_INSERT: _ClassVar[DataOperationType]
    DATA_OPERATION_UPDATE: _ClassVar[DataOperationType]
    DATA_OPERATION_DELETE: _ClassVar[DataOperationType]
    DATA_OPERATION_UNSET: _ClassVar[DataOperationType]
    DATA_OPERATION_NO_TXN: _ClassVar[DataOperationType]
LOCK_TYPE_UNSPECIFIED: LockType
SHARED_READ: LockType
SHARED_WRITE: LockType
EXCL_WRITE: LockType
EXCLUSIVE: LockType
LOCK_STATE_UNSPECIFIED: LockState
ACQUIRED: LockState
WAITING: LockState
DATA_OPERATION_TYPE_UNSPECIFIED: DataOperationType
DATA_OPERATION_SELECT: DataOperationType
DATA_OPERATION_INSERT: DataOperationType
DATA_OPERATION_UPDATE: DataOperationType
DATA_OPERATION_DELETE: DataOperationType
DATA_OPERATION_UNSET: DataOperationType
DATA_OPERATION_NO_TXN: DataOperationType

class LockComponent(_message.Message):
    __slots__ = ("db_name", "table_name", "partition_name", "type", "operation", "dynamic_partition_write")
    DB_NAME_FIELD_NUMBER: _ClassVar[int]
    TABLE_NAME_FIELD_NUMBER: _ClassVar[int]
    PARTITION_NAME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    OPERATION_FIELD_NUMBER: _ClassVar[int]
    DYNAMIC_PARTITION_WRITE_FIELD_NUMBER: _ClassVar[int]
    db_name: str
    table_name: str
    partition_name: str
    type: LockType
    operation: DataOperationType
    dynamic_partition_write: bool
    def __init__(self, db_name: _Optional[str] = ..., table_name: _Optional[str] = ..., partition_name: _Optional[str] = ..., type: _Optional[_Union[LockType, str]] = ..., operation: _Optional[_Union[DataOperationType, str]] = ..., dynamic_partition_write: bool = ...) -> None: ...

class LockRequest(_message.Message):
    __slots__ = ("components", "txn_id", "user", "hostname", "agent_info")
    COMPONENTS_FIELD_NUMBER: _ClassVar[int]
    TXN_ID_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    HOSTNAME_FIELD_NUMBER: _ClassVar[int]
    AGENT_INFO_FIELD_NUMBER: _ClassVar[int]
    components: _containers.RepeatedCompositeFieldContainer[LockComponent]
    txn_id: int
    user: str
    hostname: str
    agent_info: str
    def __init__(self, components: _Optional[_Iterable[_Union[LockComponent, _Mapping]]] = ..., txn_id: _Optional[int] = ..., user: _Optional[str] = ..., hostname: _Optional[str] = ..., agent_info: _Optional[str] = ...) -> None: ...

class LockResponse(_message.Message):
    __slots__ = ("lock_id", "state", "blocked_by_lock_id", "blocked_by_component_id")
    LOCK_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    BLOCKED_BY_LOCK_ID_FIELD_NUMBER: _ClassVar[int]
    BLOCKED_BY_COMPONENT_ID_FIELD_NUMBER: _ClassVar[int]
    lock_id: int
    state: LockState
    blocked_by_lock_id: int
    blocked_by_component_id: int
    def __init__(self, lock_id: _Optional[int] = ..., state: _Optional[_Union[LockState, str]] = ..., blocked_by_lock_id: _Optional[int] = ..., blocked_by_component_id: _Optional[int] = ...) -> None: ...

class CheckLockRequest(_message.Message):
    __slots__ = ("lock_id",)
    LOCK_ID_FIELD_NUMBER: _ClassVar[int]
    lock_id: int
    def __init__(self, lock_id: _Optional[int] = ...) -> None: ...

class UnlockRequest(_message.Message):
    __slots__ = ("lock_id",)
    LOCK_ID_FIELD_NUMBER: _ClassVar[int]
    lock_id: int
    def __init__(self, lock_id: _Optional[int] = ...) -> None: ...

class UnlockResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ShowLocksRequest(_message.Message):
    __slots__ = ("db_name", "table_name", "partition_name", "extended", "txn_id")
    DB_NAME_FIELD_NUMBER: _ClassVar[int]
    TABLE_NAME_FIELD_NUMBER: _ClassVar[int]
    PARTITION_NAME_FIELD_NUMBER: _ClassVar[int]
    EXTENDED_FIELD_NUMBER: _ClassVar[int]
    TXN_ID_FIELD_NUMBER: _ClassVar[int]
    db_name: str
    table_name: str
    partition_name: str
    extended: bool
    txn_id: int
    def __init__(self, db_name: _Optional[str] = ..., table_name: _Optional[str] = ..., partition_name: _Optional[str] = ..., extended: bool = ..., txn_id: _Optional[int] = ...) -> None: ...

class LockInfo(_message.Message):
    __slots__ = ("lock_id", "component_id", "db_name", "table_name", "partition_name", "state", "blocked_by_lock_id", "blocked_by_component_id", "type", "txn_id", "last_heartbeat_ms", "acquired_at_ms", "user", "hostname", "agent_info", "operation")
    LOCK_ID_FIELD_NUMBER: _ClassVar[int]
    COMPONENT_ID_FIELD_NUMBER: _ClassVar[int]
    DB_NAME_FIELD_NUMBER: _ClassVar[int]
    TABLE_NAME_FIELD_NUMBER: _ClassVar[int]
    PARTITION_NAME_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    BLOCKED_BY_LOCK_ID_FIELD_NUMBER: _ClassVar[int]
    BLOCKED_BY_COMPONENT_ID_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    TXN_ID_FIELD_NUMBER: _ClassVar[int]
    LAST_HEARTBEAT_MS_FIELD_NUMBER: _ClassVar[int]
    ACQUIRED_AT_MS_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    HOSTNAME_FIELD_NUMBER: _ClassVar[int]
    AGENT_INFO_FIELD_NUMBER: _ClassVar[int]
    OPERATION_FIELD_NUMBER: _ClassVar[int]
    lock_id: int
    component_id: int
    db_name: str
    table_name: str
    partition_name: str
    state: LockState
    blocked_by_lock_id: int
    blocked_by_component_id: int
    type: LockType
    txn_id: int
    last_heartbeat_ms: int
    acquired_at_ms: int
    user: str
    hostname: str
    agent_info: str
    operation: DataOperationType
    def __init__(self, lock_id: _Optional[int] = ..., component_id: _Optional[int] = ..., db_name: _Optional[str] = ..., table_name: _Optional[str] = ..., partition_name: _Optional[str] = ..., state: _Optional[_Union[LockState, str]] = ..., blocked_by_lock_id: _Optional[int] = ..., blocked_by_component_id: _Optional[int] = ..., type: _Optional[_Union[LockType, str]] = ..., txn_id: _Optional[int] = ..., last_heartbeat_ms: _Optional[int] = ..., acquired_at_ms: _Optional[int] = ..., user: _Optional[str] = ..., hostname: _Optional[str] = ..., agent_info: _Optional[str] = ..., operation: _Optional[_Union[DataOperationType, str]] = ...) -> None: ...

class ShowLocksResponse(_message.Message):
    __slots__ = ("locks", "text", "truncated")
    LOCKS_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    locks: _containers.RepeatedCompositeFieldContainer[LockInfo]
    text: str
    truncated: bool
    def __init__(self, locks: _Optional[_Iterable[_Union[LockInfo, _Mapping]]] = ..., text: _Optional[str] = ..., truncated: bool = ...) -> None: ...
