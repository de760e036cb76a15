"""The catalog's value objects: frozen dataclasses, independent of gRPC and of SQL rows."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Mapping

from hive.schema import FieldSchema as FieldSchema  # a column, as Hive's rules (hive/) use it too

OWNER_TYPES = ("USER", "ROLE", "GROUP")  # Hive's PrincipalType names, of a database's or table's owner


class TableType(str, Enum):
    MANAGED = "MANAGED_TABLE"
    EXTERNAL = "EXTERNAL_TABLE"
    VIRTUAL_VIEW = "VIRTUAL_VIEW"


@dataclass(frozen=True, slots=True)
class SerDeInfo:
    name: str = ""
    serialization_lib: str = ""
    parameters: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Order:
    """A sort column of a bucketed table: Hive's order 1 is ascending, 0 descending."""

    column: str
    order: int = 1


@dataclass(frozen=True, slots=True)
class SkewedInfo:
    """Hive's skewed columns, their skewed value tuples, and where each tuple's rows live."""

    column_names: tuple[str, ...] = ()
    column_values: tuple[tuple[str, ...], ...] = ()
    value_locations: tuple[tuple[tuple[str, ...], str], ...] = ()


@dataclass(frozen=True, slots=True)
class StorageDescriptor:
    location: str = ""
    input_format: str = ""
    output_format: str = ""
    serde: SerDeInfo = field(default_factory=SerDeInfo)
    compressed: bool = False
    num_buckets: int = -1
    bucket_cols: tuple[str, ...] = ()
    sort_cols: tuple[Order, ...] = ()
    skewed: SkewedInfo = field(default_factory=SkewedInfo)
    parameters: Mapping[str, str] = field(default_factory=dict)
    stored_as_subdirectories: bool = False


@dataclass(frozen=True, slots=True)
class Database:
    name: str
    description: str | None = None  # None: created without one (Hive's null), not the same as ''
    location: str = ""
    owner: str | None = None  # None: created without one (Hive's null), not the same as ''
    parameters: Mapping[str, str] = field(default_factory=dict)
    create_time: int = 0
    owner_type: str = "USER"  # Hive's PrincipalType name: USER, ROLE or GROUP


# weakref_slot: encodings of a table are memoized while it lives (gateway/thrift/wire.py ByIdentity)
@dataclass(frozen=True, slots=True, weakref_slot=True)
class Table:
    db_name: str
    name: str
    table_type: TableType = TableType.MANAGED
    transactional: bool = False
    owner: str | None = None  # None: created without one (Hive's null), not the same as ''
    columns: tuple[FieldSchema, ...] = ()
    partition_keys: tuple[FieldSchema, ...] = ()
    sd: StorageDescriptor = field(default_factory=StorageDescriptor)
    parameters: Mapping[str, str] = field(default_factory=dict)
    create_time: int = 0
    table_id: int = 0
    write_id: int = 0
    view_original_text: str = ""  # views only: the text as written, and as Hive expanded it
    view_expanded_text: str = ""
    owner_type: str = "USER"  # Hive's PrincipalType name: USER, ROLE or GROUP
    last_access_time: int = 0
    # Hive's Table.retention: kept as the client set it (Hive's metastore reads nothing into it).
    retention: int = 0

    @property
    def full_name(self) -> str:
        return f"{self.db_name}.{self.name}"

    @property
    def is_partitioned(self) -> bool:
        return bool(self.partition_keys)

    @property
    def is_acid(self) -> bool:
        """Hive's ACID table: managed and transactional. Its writes take write ids and its reads
        need the caller's snapshot."""
        return self.transactional and self.table_type is TableType.MANAGED


@dataclass(frozen=True, slots=True)
class TableSummary:
    """What Hive's get_table_meta lists of a table: its names, its type and its comment parameter."""
    db_name: str
    name: str
    table_type: TableType
    comment: str | None = None


@dataclass(frozen=True, slots=True)
class Partition:
    db_name: str
    table_name: str
    values: tuple[str, ...]
    name: str = ""
    sd: StorageDescriptor = field(default_factory=StorageDescriptor)
    parameters: Mapping[str, str] = field(default_factory=dict)
    create_time: int = 0
    write_id: int = 0
    columns: tuple[FieldSchema, ...] | None = None  # its own columns (Hive's sd.cols); None: the table's
    last_access_time: int = 0


RESOURCE_TYPES = ("JAR", "FILE", "ARCHIVE")  # Hive's ResourceType, in the order of its ids 1, 2, 3
FUNCTION_TYPES = ("JAVA",)  # Hive's FunctionType (id 1)


@dataclass(frozen=True, slots=True)
class ResourceUri:
    """A file a function's class needs on the engine's class path (Hive's ResourceUri)."""

    resource_type: str  # one of RESOURCE_TYPES
    uri: str


@dataclass(frozen=True, slots=True)
class Function:
    """A permanent function (Hive's Function): what CREATE FUNCTION in Spark SQL or Hive stores, an
    implementing class and the files it needs, in a database."""

    db_name: str
    name: str
    class_name: str
    owner: str | None = None  # None: created without one (Hive's null), not the same as ''
    owner_type: str = "USER"  # Hive's PrincipalType name: USER, ROLE or GROUP
    function_type: str = "JAVA"  # one of FUNCTION_TYPES
    resource_uris: tuple[ResourceUri, ...] = ()
    create_time: int = 0


@dataclass(frozen=True, slots=True)
class NotificationEvent:
    event_id: int
    event_time_ms: int
    event_type: str
    db_name: str
    table_name: str
    table_id: int
    txn_id: int
    write_id: int
    message: str  # JSON, the new object(s), as Hive's JSON messages


@dataclass(frozen=True, slots=True)
class WriteResult:
    """What a write RPC answers besides its object: the id of the event it appended (0 when the
    request changed nothing, e.g. AddPartitions with if_not_exists and every partition present)."""

    event_id: int
