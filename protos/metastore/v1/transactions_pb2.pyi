from protos.metastore.v1 import locks_pb2 as _locks_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class OpenTxnsRequest(_message.Message):
    __slots__ = ("num_txns", "user", "hostname", "agent_info")
    NUM_TXNS_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    HOSTNAME_FIELD_NUMBER: _ClassVar[int]
    AGENT_INFO_FIELD_NUMBER: _ClassVar[int]
    num_txns: int
    user: str
    hostname: str
    agent_info: str
    def __init__(self, num_txns: _Optional[int] = ..., user: _Optional[str] = ..., hostname: _Optional[str] = ..., agent_info: _Optional[str] = ...) -> None: ...

class OpenTxnsResponse(_message.Message):
    __slots__ = ("txn_ids", "event_id")
    TXN_IDS_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    txn_ids: _containers.RepeatedScalarFieldContainer[int]
    event_id: int
    def __init__(self, txn_ids: _Optional[_Iterable[int]] = ..., event_id: _Optional[int] = ...) -> None: ...

class CommitTxnRequest(_message.Message):
    __slots__ = ("txn_id",)
    TXN_ID_FIELD_NUMBER: _ClassVar[int]
    txn_id: int
    def __init__(self, txn_id: _Optional[int] = ...) -> None: ...

class CommitTxnResponse(_message.Message):
    __slots__ = ("event_id",)
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    event_id: int
    def __init__(self, event_id: _Optional[int] = ...) -> None: ...

class AbortTxnsRequest(_message.Message):
    __slots__ = ("txn_ids",)
    TXN_IDS_FIELD_NUMBER: _ClassVar[int]
    txn_ids: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, txn_ids: _Optional[_Iterable[int]] = ...) -> None: ...

class AbortTxnsResponse(_message.Message):
    __slots__ = ("event_ids",)
    EVENT_IDS_FIELD_NUMBER: _ClassVar[int]
    event_ids: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, event_ids: _Optional[_Iterable[int]] = ...) -> None: ...

class TxnRange(_message.Message):
    __slots__ = ("min_txn_id", "max_txn_id")
    MIN_TXN_ID_FIELD_NUMBER: _ClassVar[int]
    MAX_TXN_ID_FIELD_NUMBER: _ClassVar[int]
    min_txn_id: int
    max_txn_id: int
    def __init__(self, min_txn_id: _Optional[int] = ..., max_txn_id: _Optional[int] = ...) -> None: ...

class HeartbeatRequest(_message.Message):
    __slots__ = ("txn_ids", "lock_ids", "txn_range")
    TXN_IDS_FIELD_NUMBER: _ClassVar[int]
    LOCK_IDS_FIELD_NUMBER: _ClassVar[int]
    TXN_RANGE_FIELD_NUMBER: _ClassVar[int]
    txn_ids: _containers.RepeatedScalarFieldContainer[int]
    lock_ids: _containers.RepeatedScalarFieldContainer[int]
    txn_range: TxnRange
    def __init__(self, txn_ids: _Optional[_Iterable[int]] = ..., lock_ids: _Optional[_Iterable[int]] = ..., txn_range: _Optional[_Union[TxnRange, _Mapping]] = ...) -> None: ...

class HeartbeatResponse(_message.Message):
    __slots__ = ("aborted_txn_ids", "nosuch_txn_ids", "nosuch_lock_ids")
    ABORTED_TXN_IDS_FIELD_NUMBER: _ClassVar[int]
    NOSUCH_TXN_IDS_FIELD_NUMBER: _ClassVar[int]
    NOSUCH_LOCK_IDS_FIELD_NUMBER: _ClassVar[int]
    aborted_txn_ids: _containers.RepeatedScalarFieldContainer[int]
    nosuch_txn_ids: _containers.RepeatedScalarFieldContainer[int]
    nosuch_lock_ids: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, aborted_txn_ids: _Optional[_Iterable[int]] = ..., nosuch_txn_ids: _Optional[_Iterable[int]] = ..., nosuch_lock_ids: _Optional[_Iterable[int]] = ...) -> None: ...

class GetOpenTxnsRequest(_message.Message):
    __slots__ = ("current_txn_id",)
    CURRENT_TXN_ID_FIELD_NUMBER: _ClassVar[int]
    current_txn_id: int
    def __init__(self, current_txn_id: _Optional[int] = ...) -> None: ...

class GetOpenTxnsResponse(_message.Message):
    __slots__ = ("valid_txn_list", "txn_high_water_mark", "open_txn_ids", "aborted_txn_ids")
    VALID_TXN_LIST_FIELD_NUMBER: _ClassVar[int]
    TXN_HIGH_WATER_MARK_FIELD_NUMBER: _ClassVar[int]
    OPEN_TXN_IDS_FIELD_NUMBER: _ClassVar[int]
    ABORTED_TXN_IDS_FIELD_NUMBER: _ClassVar[int]
    valid_txn_list: str
    txn_high_water_mark: int
    open_txn_ids: _containers.RepeatedScalarFieldContainer[int]
    aborted_txn_ids: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, valid_txn_list: _Optional[str] = ..., txn_high_water_mark: _Optional[int] = ..., open_txn_ids: _Optional[_Iterable[int]] = ..., aborted_txn_ids: _Optional[_Iterable[int]] = ...) -> None: ...

class AllocateTableWriteIdsRequest(_message.Message):
    __slots__ = ("txn_ids", "db_name", "table_name")
    TXN_IDS_FIELD_NUMBER: _ClassVar[int]
    DB_NAME_FIELD_NUMBER: _ClassVar[int]
    TABLE_NAME_FIELD_NUMBER: _ClassVar[int]
    txn_ids: _containers.RepeatedScalarFieldContainer[int]
    db_name: str
    table_name: str
    def __init__(self, txn_ids: _Optional[_Iterable[int]] = ..., db_name: _Optional[str] = ..., table_name: _Optional[str] = ...) -> None: ...

class TxnToWriteId(_message.Message):
    __slots__ = ("txn_id", "write_id")
    TXN_ID_FIELD_NUMBER: _ClassVar[int]
    WRITE_ID_FIELD_NUMBER: _ClassVar[int]
    txn_id: int
    write_id: int
    def __init__(self, txn_id: _Optional[int] = ..., write_id: _Optional[int] = ...) -> None: ...

class AllocateTableWriteIdsResponse(_message.Message):
    __slots__ = ("txn_to_write_ids",)
    TXN_TO_WRITE_IDS_FIELD_NUMBER: _ClassVar[int]
    txn_to_write_ids: _containers.RepeatedCompositeFieldContainer[TxnToWriteId]
    def __init__(self, txn_to_write_ids: _Optional[_Iterable[_Union[TxnToWriteId, _Mapping]]] = ...) -> None: ...

class AddDynamicPartitionsRequest(_message.Message):
    __slots__ = ("txn_id", "write_id", "db_name", "table_name", "partition_names", "operation")
    TXN_ID_FIELD_NUMBER: _ClassVar[int]
    WRITE_ID_FIELD_NUMBER: _ClassVar[int]
    DB_NAME_FIELD_NUMBER: _ClassVar[int]
    TABLE_NAME_FIELD_NUMBER: _ClassVar[int]
    PARTITION_NAMES_FIELD_NUMBER: _ClassVar[int]
    OPERATION_FIELD_NUMBER: _ClassVar[int]
    txn_id: int
    write_id: int
    db_name: str
    table_name: str
    partition_names: _containers.RepeatedScalarFieldContainer[str]
    operation: _locks_pb2.DataOperationType
    def __init__(self, txn_id: _Optional[int] = ..., write_id: _Optional[int] = ..., db_name: _Optional[str] = ..., table_name: _Optional[str] = ..., partition_names: _Optional[_Iterable[str]] = ..., operation: _Optional[_Union[_locks_pb2.DataOperationType, str]] = ...) -> None: ...

class AddDynamicPartitionsResponse(_message.Message):
    __slots__ = ("partition_names",)
    PARTITION_NAMES_FIELD_NUMBER: _ClassVar[int]
    partition_names: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, partition_names: _Optional[_Iterable[str]] = ...) -> None: ...

class GetValidWriteIdsRequest(_message.Message):
    __slots__ = ("full_table_names", "valid_txn_list")
    FULL_TABLE_NAMES_FIELD_NUMBER: _ClassVar[int]
    VALID_TXN_LIST_FIELD_NUMBER: _ClassVar[int]
    full_table_names: _containers.RepeatedScalarFieldContainer[str]
    valid_txn_list: str
    def __init__(self, full_table_names: _Optional[_Iterable[str]] = ..., valid_txn_list: _Optional[str] = ...) -> None: ...

class TableValidWriteIds(_message.Message):
    __slots__ = ("full_table_name", "valid_write_id_list", "table_id")
    FULL_TABLE_NAME_FIELD_NUMBER: _ClassVar[int]
    VALID_WRITE_ID_LIST_FIELD_NUMBER: _ClassVar[int]
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    full_table_name: str
    valid_write_id_list: str
    table_id: int
    def __init__(self, full_table_name: _Optional[str] = ..., valid_write_id_list: _Optional[str] = ..., table_id: _Optional[int] = ...) -> None: ...

class GetValidWriteIdsResponse(_message.Message):
    __slots__ = ("tables",)
    TABLES_FIELD_NUMBER: _ClassVar[int]
    tables: _containers.RepeatedCompositeFieldContainer[TableValidWriteIds]
    def __init__(self, tables: _Optional[_Iterable[_Union[TableValidWriteIds, _Mapping]]] = ...) -> None: ...

class ShowTransactionsRequest(_message.Message):
    __slots__ = ("state",)
    STATE_FIELD_NUMBER: _ClassVar[int]
    state: str
    def __init__(self, state: _Optional[str] = ...) -> None: ...

class TxnInfo(_message.Message):
    __slots__ = ("txn_id", "state", "started_time_ms", "last_heartbeat_time_ms", "user", "hostname", "agent_info", "txn_type")
    TXN_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    STARTED_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    LAST_HEARTBEAT_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    HOSTNAME_FIELD_NUMBER: _ClassVar[int]
    AGENT_INFO_FIELD_NUMBER: _ClassVar[int]
    TXN_TYPE_FIELD_NUMBER: _ClassVar[int]
    txn_id: int
    state: str
    started_time_ms: int
    last_heartbeat_time_ms: int
    user: str
    hostname: str
    agent_info: str
    txn_type: int
    def __init__(self, txn_id: _Optional[int] = ..., state: _Optional[str] = ..., started_time_ms: _Optional[int] = ..., last_heartbeat_time_ms: _Optional[int] = ..., user: _Optional[str] = ..., hostname: _Optional[str] = ..., agent_info: _Optional[str] = ..., txn_type: _Optional[int] = ...) -> None: ...

class ShowTransactionsResponse(_message.Message):
    __slots__ = ("transactions", "truncated")
    TRANSACTIONS_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    transactions: _containers.RepeatedCompositeFieldContainer[TxnInfo]
    truncated: bool
    def __init__(self, transactions: _Optional[_Iterable[_Union[TxnInfo, _Mapping]]] = ..., truncated: bool = ...) -> None: ...
