from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class TableType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TABLE_TYPE_UNSPECIFIED: _ClassVar[TableType]
    MANAGED: _ClassVar[TableType]
    EXTERNAL: _ClassVar[TableType]
    VIRTUAL_VIEW: _ClassVar[TableType]
TABLE_TYPE_UNSPECIFIED: TableType
MANAGED: TableType
EXTERNAL: TableType
VIRTUAL_VIEW: TableType

class FieldSchema(_message.Message):
    __slots__ = ("name", "type", "comment")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    COMMENT_FIELD_NUMBER: _ClassVar[int]
    name: str
    type: str
    comment: str
    def __init__(self, name: _Optional[str] = ..., type: _Optional[str] = ..., comment: _Optional[str] = ...) -> None: ...

class SerDeInfo(_message.Message):
    __slots__ = ("name", "serialization_lib", "parameters")
    class ParametersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    SERIALIZATION_LIB_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_FIELD_NUMBER: _ClassVar[int]
    name: str
    serialization_lib: str
    parameters: _containers.ScalarMap[str, str]
    def __init__(self, name: _Optional[str] = ..., serialization_lib: _Optional[str] = ..., parameters: _Optional[_Mapping[str, str]] = ...) -> None: ...

class Order(_message.Message):
    __slots__ = ("col", "order")
    COL_FIELD_NUMBER: _ClassVar[int]
    ORDER_FIELD_NUMBER: _ClassVar[int]
    col: str
    order: int
    def __init__(self, col: _Optional[str] = ..., order: _Optional[int] = ...) -> None: ...

class SkewedValueLocation(_message.Message):
    __slots__ = ("values", "location")
    VALUES_FIELD_NUMBER: _ClassVar[int]
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedScalarFieldContainer[str]
    location: str
    def __init__(self, values: _Optional[_Iterable[str]] = ..., location: _Optional[str] = ...) -> None: ...

class SkewedInfo(_message.Message):
    __slots__ = ("col_names", "col_values", "value_locations")
    COL_NAMES_FIELD_NUMBER: _ClassVar[int]
    COL_VALUES_FIELD_NUMBER: _ClassVar[int]
    VALUE_LOCATIONS_FIELD_NUMBER: _ClassVar[int]
    col_names: _containers.RepeatedScalarFieldContainer[str]
    col_values: _containers.RepeatedCompositeFieldContainer[SkewedValues]
    value_locations: _containers.RepeatedCompositeFieldContainer[SkewedValueLocation]
    def __init__(self, col_names: _Optional[_Iterable[str]] = ..., col_values: _Optional[_Iterable[_Union[SkewedValues, _Mapping]]] = ..., value_locations: _Optional[_Iterable[_Union[SkewedValueLocation, _Mapping]]] = ...) -> None: ...

class SkewedValues(_message.Message):
    __slots__ = ("values",)
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, values: _Optional[_Iterable[str]] = ...) -> None: ...

class StorageDescriptor(_message.Message):
    __slots__ = ("location", "input_format", "output_format", "serde", "compressed", "num_buckets", "bucket_cols", "sort_cols", "skewed_info", "parameters", "stored_as_subdirectories")
    class ParametersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    INPUT_FORMAT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FORMAT_FIELD_NUMBER: _ClassVar[int]
    SERDE_FIELD_NUMBER: _ClassVar[int]
    COMPRESSED_FIELD_NUMBER: _ClassVar[int]
    NUM_BUCKETS_FIELD_NUMBER: _ClassVar[int]
    BUCKET_COLS_FIELD_NUMBER: _ClassVar[int]
    SORT_COLS_FIELD_NUMBER: _ClassVar[int]
    SKEWED_INFO_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_FIELD_NUMBER: _ClassVar[int]
    STORED_AS_SUBDIRECTORIES_FIELD_NUMBER: _ClassVar[int]
    location: str
    input_format: str
    output_format: str
    serde: SerDeInfo
    compressed: bool
    num_buckets: int
    bucket_cols: _containers.RepeatedScalarFieldContainer[str]
    sort_cols: _containers.RepeatedCompositeFieldContainer[Order]
    skewed_info: SkewedInfo
    parameters: _containers.ScalarMap[str, str]
    stored_as_subdirectories: bool
    def __init__(self, location: _Optional[str] = ..., input_format: _Optional[str] = ..., output_format: _Optional[str] = ..., serde: _Optional[_Union[SerDeInfo, _Mapping]] = ..., compressed: bool = ..., num_buckets: _Optional[int] = ..., bucket_cols: _Optional[_Iterable[str]] = ..., sort_cols: _Optional[_Iterable[_Union[Order, _Mapping]]] = ..., skewed_info: _Optional[_Union[SkewedInfo, _Mapping]] = ..., parameters: _Optional[_Mapping[str, str]] = ..., stored_as_subdirectories: bool = ...) -> None: ...

class Database(_message.Message):
    __slots__ = ("name", "description", "location", "owner", "parameters", "create_time", "owner_type")
    class ParametersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    OWNER_TYPE_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    location: str
    owner: str
    parameters: _containers.ScalarMap[str, str]
    create_time: int
    owner_type: str
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., location: _Optional[str] = ..., owner: _Optional[str] = ..., parameters: _Optional[_Mapping[str, str]] = ..., create_time: _Optional[int] = ..., owner_type: _Optional[str] = ...) -> None: ...

class Table(_message.Message):
    __slots__ = ("table_id", "db_name", "name", "table_type", "transactional", "owner", "columns", "partition_keys", "sd", "parameters", "create_time", "write_id", "view_original_text", "view_expanded_text", "owner_type", "last_access_time", "retention")
    class ParametersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    DB_NAME_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TABLE_TYPE_FIELD_NUMBER: _ClassVar[int]
    TRANSACTIONAL_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    COLUMNS_FIELD_NUMBER: _ClassVar[int]
    PARTITION_KEYS_FIELD_NUMBER: _ClassVar[int]
    SD_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    WRITE_ID_FIELD_NUMBER: _ClassVar[int]
    VIEW_ORIGINAL_TEXT_FIELD_NUMBER: _ClassVar[int]
    VIEW_EXPANDED_TEXT_FIELD_NUMBER: _ClassVar[int]
    OWNER_TYPE_FIELD_NUMBER: _ClassVar[int]
    LAST_ACCESS_TIME_FIELD_NUMBER: _ClassVar[int]
    RETENTION_FIELD_NUMBER: _ClassVar[int]
    table_id: int
    db_name: str
    name: str
    table_type: TableType
    transactional: bool
    owner: str
    columns: _containers.RepeatedCompositeFieldContainer[FieldSchema]
    partition_keys: _containers.RepeatedCompositeFieldContainer[FieldSchema]
    sd: StorageDescriptor
    parameters: _containers.ScalarMap[str, str]
    create_time: int
    write_id: int
    view_original_text: str
    view_expanded_text: str
    owner_type: str
    last_access_time: int
    retention: int
    def __init__(self, table_id: _Optional[int] = ..., db_name: _Optional[str] = ..., name: _Optional[str] = ..., table_type: _Optional[_Union[TableType, str]] = ..., transactional: bool = ..., owner: _Optional[str] = ..., columns: _Optional[_Iterable[_Union[FieldSchema, _Mapping]]] = ..., partition_keys: _Optional[_Iterable[_Union[FieldSchema, _Mapping]]] = ..., sd: _Optional[_Union[StorageDescriptor, _Mapping]] = ..., parameters: _Optional[_Mapping[str, str]] = ..., create_time: _Optional[int] = ..., write_id: _Optional[int] = ..., view_original_text: _Optional[str] = ..., view_expanded_text: _Optional[str] = ..., owner_type: _Optional[str] = ..., last_access_time: _Optional[int] = ..., retention: _Optional[int] = ...) -> None: ...

class Partition(_message.Message):
    __slots__ = ("db_name", "table_name", "values", "name", "sd", "parameters", "create_time", "write_id", "columns", "last_access_time")
    class ParametersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    DB_NAME_FIELD_NUMBER: _ClassVar[int]
    TABLE_NAME_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    SD_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    WRITE_ID_FIELD_NUMBER: _ClassVar[int]
    COLUMNS_FIELD_NUMBER: _ClassVar[int]
    LAST_ACCESS_TIME_FIELD_NUMBER: _ClassVar[int]
    db_name: str
    table_name: str
    values: _containers.RepeatedScalarFieldContainer[str]
    name: str
    sd: StorageDescriptor
    parameters: _containers.ScalarMap[str, str]
    create_time: int
    write_id: int
    columns: _containers.RepeatedCompositeFieldContainer[FieldSchema]
    last_access_time: int
    def __init__(self, db_name: _Optional[str] = ..., table_name: _Optional[str] = ..., values: _Optional[_Iterable[str]] = ..., name: _Optional[str] = ..., sd: _Optional[_Union[StorageDescriptor, _Mapping]] = ..., parameters: _Optional[_Mapping[str, str]] = ..., create_time: _Optional[int] = ..., write_id: _Optional[int] = ..., columns: _Optional[_Iterable[_Union[FieldSchema, _Mapping]]] = ..., last_access_time: _Optional[int] = ...) -> None: ...

class ReadContext(_message.Message):
    __slots__ = ("valid_write_id_list", "table_id", "txn_id", "min_event_id")
    VALID_WRITE_ID_LIST_FIELD_NUMBER: _ClassVar[int]
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    TXN_ID_FIELD_NUMBER: _ClassVar[int]
    MIN_EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    valid_write_id_list: str
    table_id: int
    txn_id: int
    min_event_id: int
    def __init__(self, valid_write_id_list: _Optional[str] = ..., table_id: _Optional[int] = ..., txn_id: _Optional[int] = ..., min_event_id: _Optional[int] = ...) -> None: ...

class CreateDatabaseRequest(_message.Message):
    __slots__ = ("database",)
    DATABASE_FIELD_NUMBER: _ClassVar[int]
    database: Database
    def __init__(self, database: _Optional[_Union[Database, _Mapping]] = ...) -> None: ...

class CreateDatabaseResponse(_message.Message):
    __slots__ = ("database", "event_id")
    DATABASE_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    database: Database
    event_id: int
    def __init__(self, database: _Optional[_Union[Database, _Mapping]] = ..., event_id: _Optional[int] = ...) -> None: ...

class GetDatabaseRequest(_message.Message):
    __slots__ = ("name", "read")
    NAME_FIELD_NUMBER: _ClassVar[int]
    READ_FIELD_NUMBER: _ClassVar[int]
    name: str
    read: ReadContext
    def __init__(self, name: _Optional[str] = ..., read: _Optional[_Union[ReadContext, _Mapping]] = ...) -> None: ...

class GetDatabaseResponse(_message.Message):
    __slots__ = ("database",)
    DATABASE_FIELD_NUMBER: _ClassVar[int]
    database: Database
    def __init__(self, database: _Optional[_Union[Database, _Mapping]] = ...) -> None: ...

class ListDatabasesRequest(_message.Message):
    __slots__ = ("pattern",)
    PATTERN_FIELD_NUMBER: _ClassVar[int]
    pattern: str
    def __init__(self, pattern: _Optional[str] = ...) -> None: ...

class ListDatabasesResponse(_message.Message):
    __slots__ = ("names",)
    NAMES_FIELD_NUMBER: _ClassVar[int]
    names: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, names: _Optional[_Iterable[str]] = ...) -> None: ...

class AlterDatabaseRequest(_message.Message):
    __slots__ = ("name", "database")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DATABASE_FIELD_NUMBER: _ClassVar[int]
    name: str
    database: Database
    def __init__(self, name: _Optional[str] = ..., database: _Optional[_Union[Database, _Mapping]] = ...) -> None: ...

class AlterDatabaseResponse(_message.Message):
    __slots__ = ("database", "event_id")
    DATABASE_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    database: Database
    event_id: int
    def __init__(self, database: _Optional[_Union[Database, _Mapping]] = ..., event_id: _Optional[int] = ...) -> None: ...

class DropDatabaseRequest(_message.Message):
    __slots__ = ("name", "cascade", "if_exists")
    NAME_FIELD_NUMBER: _ClassVar[int]
    CASCADE_FIELD_NUMBER: _ClassVar[int]
    IF_EXISTS_FIELD_NUMBER: _ClassVar[int]
    name: str
    cascade: bool
    if_exists: bool
    def __init__(self, name: _Optional[str] = ..., cascade: bool = ..., if_exists: bool = ...) -> None: ...

class DropDatabaseResponse(_message.Message):
    __slots__ = ("event_id",)
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    event_id: int
    def __init__(self, event_id: _Optional[int] = ...) -> None: ...

class CreateTableRequest(_message.Message):
    __slots__ = ("table",)
    TABLE_FIELD_NUMBER: _ClassVar[int]
    table: Table
    def __init__(self, table: _Optional[_Union[Table, _Mapping]] = ...) -> None: ...

class CreateTableResponse(_message.Message):
    __slots__ = ("table", "event_id")
    TABLE_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    table: Table
    event_id: int
    def __init__(self, table: _Optional[_Union[Table, _Mapping]] = ..., event_id: _Optional[int] = ...) -> None: ...

class GetTableRequest(_message.Message):
    __slots__ = ("db_name", "table_name", "read")
    DB_NAME_FIELD_NUMBER: _ClassVar[int]
    TABLE_NAME_FIELD_NUMBER: _ClassVar[int]
    READ_FIELD_NUMBER: _ClassVar[int]
    db_name: str
    table_name: str
    read: ReadContext
    def __init__(self, db_name: _Optional[str] = ..., table_name: _Optional[str] = ..., read: _Optional[_Union[ReadContext, _Mapping]] = ...) -> None: ...

class GetTableResponse(_message.Message):
    __slots__ = ("table",)
    TABLE_FIELD_NUMBER: _ClassVar[int]
    table: Table
    def __init__(self, table: _Optional[_Union[Table, _Mapping]] = ...) -> None: ...

class ListTablesRequest(_message.Message):
    __slots__ = ("db_name", "pattern")
    DB_NAME_FIELD_NUMBER: _ClassVar[int]
    PATTERN_FIELD_NUMBER: _ClassVar[int]
    db_name: str
    pattern: str
    def __init__(self, db_name: _Optional[str] = ..., pattern: _Optional[str] = ...) -> None: ...

class ListTablesResponse(_message.Message):
    __slots__ = ("names",)
    NAMES_FIELD_NUMBER: _ClassVar[int]
    names: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, names: _Optional[_Iterable[str]] = ...) -> None: ...

class AlterTableRequest(_message.Message):
    __slots__ = ("db_name", "table_name", "table", "txn_id", "table_id")
    DB_NAME_FIELD_NUMBER: _ClassVar[int]
    TABLE_NAME_FIELD_NUMBER: _ClassVar[int]
    TABLE_FIELD_NUMBER: _ClassVar[int]
    TXN_ID_FIELD_NUMBER: _ClassVar[int]
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    db_name: str
    table_name: str
    table: Table
    txn_id: int
    table_id: int
    def __init__(self, db_name: _Optional[str] = ..., table_name: _Optional[str] = ..., table: _Optional[_Union[Table, _Mapping]] = ..., txn_id: _Optional[int] = ..., table_id: _Optional[int] = ...) -> None: ...

class AlterTableResponse(_message.Message):
    __slots__ = ("table", "event_id")
    TABLE_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    table: Table
    event_id: int
    def __init__(self, table: _Optional[_Union[Table, _Mapping]] = ..., event_id: _Optional[int] = ...) -> None: ...

class DropTableRequest(_message.Message):
    __slots__ = ("db_name", "table_name", "if_exists", "table_id")
    DB_NAME_FIELD_NUMBER: _ClassVar[int]
    TABLE_NAME_FIELD_NUMBER: _ClassVar[int]
    IF_EXISTS_FIELD_NUMBER: _ClassVar[int]
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    db_name: str
    table_name: str
    if_exists: bool
    table_id: int
    def __init__(self, db_name: _Optional[str] = ..., table_name: _Optional[str] = ..., if_exists: bool = ..., table_id: _Optional[int] = ...) -> None: ...

class DropTableResponse(_message.Message):
    __slots__ = ("event_id",)
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    event_id: int
    def __init__(self, event_id: _Optional[int] = ...) -> None: ...

class AddPartitionsRequest(_message.Message):
    __slots__ = ("db_name", "table_name", "partitions", "if_not_exists", "txn_id", "table_id", "need_result")
    DB_NAME_FIELD_NUMBER: _ClassVar[int]
    TABLE_NAME_FIELD_NUMBER: _ClassVar[int]
    PARTITIONS_FIELD_NUMBER: _ClassVar[int]
    IF_NOT_EXISTS_FIELD_NUMBER: _ClassVar[int]
    TXN_ID_FIELD_NUMBER: _ClassVar[int]
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    NEED_RESULT_FIELD_NUMBER: _ClassVar[int]
    db_name: str
    table_name: str
    partitions: _containers.RepeatedCompositeFieldContainer[Partition]
    if_not_exists: bool
    txn_id: int
    table_id: int
    need_result: bool
    def __init__(self, db_name: _Optional[str] = ..., table_name: _Optional[str] = ..., partitions: _Optional[_Iterable[_Union[Partition, _Mapping]]] = ..., if_not_exists: bool = ..., txn_id: _Optional[int] = ..., table_id: _Optional[int] = ..., need_result: bool = ...) -> None: ...

class AddPartitionsResponse(_message.Message):
    __slots__ = ("partitions", "event_id")
    PARTITIONS_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    partitions: _containers.RepeatedCompositeFieldContainer[Partition]
    event_id: int
    def __init__(self, partitions: _Optional[_Iterable[_Union[Partition, _Mapping]]] = ..., event_id: _Optional[int] = ...) -> None: ...

class GetPartitionsByNamesRequest(_message.Message):
    __slots__ = ("db_name", "table_name", "names", "read")
    DB_NAME_FIELD_NUMBER: _ClassVar[int]
    TABLE_NAME_FIELD_NUMBER: _ClassVar[int]
    NAMES_FIELD_NUMBER: _ClassVar[int]
    READ_FIELD_NUMBER: _ClassVar[int]
    db_name: str
    table_name: str
    names: _containers.RepeatedScalarFieldContainer[str]
    read: ReadContext
    def __init__(self, db_name: _Optional[str] = ..., table_name: _Optional[str] = ..., names: _Optional[_Iterable[str]] = ..., read: _Optional[_Union[ReadContext, _Mapping]] = ...) -> None: ...

class GetPartitionsByNamesResponse(_message.Message):
    __slots__ = ("partitions",)
    PARTITIONS_FIELD_NUMBER: _ClassVar[int]
    partitions: _containers.RepeatedCompositeFieldContainer[Partition]
    def __init__(self, partitions: _Optional[_Iterable[_Union[Partition, _Mapping]]] = ...) -> None: ...

class GetPartitionsByFilterRequest(_message.Message):
    __slots__ = ("db_name", "table_name", "filter", "max_parts", "read", "page_size", "page_token")
    DB_NAME_FIELD_NUMBER: _ClassVar[int]
    TABLE_NAME_FIELD_NUMBER: _ClassVar[int]
    FILTER_FIELD_NUMBER: _ClassVar[int]
    MAX_PARTS_FIELD_NUMBER: _ClassVar[int]
    READ_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    db_name: str
    table_name: str
    filter: str
    max_parts: int
    read: ReadContext
    page_size: int
    page_token: str
    def __init__(self, db_name: _Optional[str] = ..., table_name: _Optional[str] = ..., filter: _Optional[str] = ..., max_parts: _Optional[int] = ..., read: _Optional[_Union[ReadContext, _Mapping]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class GetPartitionsByFilterResponse(_message.Message):
    __slots__ = ("partitions", "next_page_token")
    PARTITIONS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    partitions: _containers.RepeatedCompositeFieldContainer[Partition]
    next_page_token: str
    def __init__(self, partitions: _Optional[_Iterable[_Union[Partition, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ListPartitionNamesRequest(_message.Message):
    __slots__ = ("db_name", "table_name", "page_size", "page_token", "read")
    DB_NAME_FIELD_NUMBER: _ClassVar[int]
    TABLE_NAME_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    READ_FIELD_NUMBER: _ClassVar[int]
    db_name: str
    table_name: str
    page_size: int
    page_token: str
    read: ReadContext
    def __init__(self, db_name: _Optional[str] = ..., table_name: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., read: _Optional[_Union[ReadContext, _Mapping]] = ...) -> None: ...

class ListPartitionNamesResponse(_message.Message):
    __slots__ = ("names", "next_page_token")
    NAMES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    names: _containers.RepeatedScalarFieldContainer[str]
    next_page_token: str
    def __init__(self, names: _Optional[_Iterable[str]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class AlterPartitionsRequest(_message.Message):
    __slots__ = ("db_name", "table_name", "partitions", "txn_id", "table_id", "need_result")
    DB_NAME_FIELD_NUMBER: _ClassVar[int]
    TABLE_NAME_FIELD_NUMBER: _ClassVar[int]
    PARTITIONS_FIELD_NUMBER: _ClassVar[int]
    TXN_ID_FIELD_NUMBER: _ClassVar[int]
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    NEED_RESULT_FIELD_NUMBER: _ClassVar[int]
    db_name: str
    table_name: str
    partitions: _containers.RepeatedCompositeFieldContainer[Partition]
    txn_id: int
    table_id: int
    need_result: bool
    def __init__(self, db_name: _Optional[str] = ..., table_name: _Optional[str] = ..., partitions: _Optional[_Iterable[_Union[Partition, _Mapping]]] = ..., txn_id: _Optional[int] = ..., table_id: _Optional[int] = ..., need_result: bool = ...) -> None: ...

class AlterPartitionsResponse(_message.Message):
    __slots__ = ("partitions", "event_id")
    PARTITIONS_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    partitions: _containers.RepeatedCompositeFieldContainer[Partition]
    event_id: int
    def __init__(self, partitions: _Optional[_Iterable[_Union[Partition, _Mapping]]] = ..., event_id: _Optional[int] = ...) -> None: ...

class DropPartitionsRequest(_message.Message):
    __slots__ = ("db_name", "table_name", "names", "if_exists", "txn_id", "table_id")
    DB_NAME_FIELD_NUMBER: _ClassVar[int]
    TABLE_NAME_FIELD_NUMBER: _ClassVar[int]
    NAMES_FIELD_NUMBER: _ClassVar[int]
    IF_EXISTS_FIELD_NUMBER: _ClassVar[int]
    TXN_ID_FIELD_NUMBER: _ClassVar[int]
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    db_name: str
    table_name: str
    names: _containers.RepeatedScalarFieldContainer[str]
    if_exists: bool
    txn_id: int
    table_id: int
    def __init__(self, db_name: _Optional[str] = ..., table_name: _Optional[str] = ..., names: _Optional[_Iterable[str]] = ..., if_exists: bool = ..., txn_id: _Optional[int] = ..., table_id: _Optional[int] = ...) -> None: ...

class DropPartitionsResponse(_message.Message):
    __slots__ = ("names", "event_id")
    NAMES_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    names: _containers.RepeatedScalarFieldContainer[str]
    event_id: int
    def __init__(self, names: _Optional[_Iterable[str]] = ..., event_id: _Optional[int] = ...) -> None: ...
