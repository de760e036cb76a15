"""A varied catalog, written into a real Hive Metastore over Thrift, for the import's tests: databases with
descriptions, owners and parameters; managed, external, partitioned, multi-key and bucketed tables, a view, a
table of a few thousand partitions, partition values and comments that need escaping, table and partition
column statistics, permanent functions, and transactional tables (one with partitions and committed txns,
one written by a txn left open)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from gateway.thrift.idl import hms

PARQUET = ("org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
           "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
           "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe")
ORC = ("org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat",
       "org.apache.hadoop.hive.ql.io.orc.OrcSerde")
TEXT = ("org.apache.hadoop.mapred.TextInputFormat", "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
        "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe")
ODD_VALUES = ["a/b", "x=y", "50%", "with space", "ünïcödé", "it's", "#hash", "colon:1", "back\\slash", "{brace}"]
BIG_PARTITIONS = 1200
JAVA_FUNCTION, JAR, FILE = 1, 1, 2  # Hive's FunctionType.JAVA, ResourceType.JAR and FILE


@dataclass(frozen=True)
class Catalog:
    """What fill() made, for the checks."""

    big_table: tuple[str, str]
    big_partitions: int
    partitions: int  # in all databases
    txn_high_water_mark: int
    busy_txn: int  # the open txn writing busy.locked


def _cols(*pairs: tuple[str, str | None] | tuple[str, str, str | None]) -> list[Any]:
    return [hms.FieldSchema(name=p[0], type=p[1], comment=p[2] if len(p) > 2 else None) for p in pairs]


def _sd(cols: list[Any], fmt: tuple[str, str, str], location: str | None = None, *, buckets: int = -1,
        bucket_cols: list[str] | None = None, serde_params: dict[str, str] | None = None, **extra: Any) -> Any:
    return hms.StorageDescriptor(
        cols=cols, location=location, inputFormat=fmt[0], outputFormat=fmt[1], compressed=False, numBuckets=buckets,
        serdeInfo=hms.SerDeInfo(name=None, serializationLib=fmt[2],
                                parameters=serde_params or {"serialization.format": "1"}),
        bucketCols=bucket_cols or [], sortCols=extra.pop("sort_cols", []), parameters=extra.pop("parameters", {}),
        storedAsSubDirectories=False, **extra)


def _table(db: str, name: str, sd: Any, keys: list[Any] | None = None, *, table_type: str = "MANAGED_TABLE",
           params: dict[str, str] | None = None, owner: str = "alice", retention: int = 0, **extra: Any) -> Any:
    return hms.Table(tableName=name, dbName=db, owner=owner, createTime=0, lastAccessTime=0, retention=retention,
                     sd=sd, partitionKeys=keys or [], parameters=params or {}, tableType=table_type, **extra)


def _partition(table: Any, values: list[str], params: dict[str, str] | None = None) -> Any:
    sd = hms.StorageDescriptor(**{name: getattr(table.sd, name) for name in _SD_FIELDS})
    sd.location = None  # the metastore puts it under the table's
    return hms.Partition(values=values, dbName=table.dbName, tableName=table.tableName, createTime=0,
                         lastAccessTime=0, sd=sd, parameters=params or {})


_SD_FIELDS = ("cols", "location", "inputFormat", "outputFormat", "compressed", "numBuckets", "serdeInfo",
              "bucketCols", "sortCols", "parameters", "storedAsSubDirectories")


def long_stats(column: str, low: int, high: int, ndv: int) -> Any:
    return hms.ColumnStatisticsObj(colName=column, colType="bigint", statsData=hms.ColumnStatisticsData(
        longStats=hms.LongColumnStatsData(lowValue=low, highValue=high, numNulls=0, numDVs=ndv)))


def string_stats(column: str, max_len: int, ndv: int) -> Any:
    return hms.ColumnStatisticsObj(colName=column, colType="string", statsData=hms.ColumnStatisticsData(
        stringStats=hms.StringColumnStatsData(maxColLen=max_len, avgColLen=max_len / 2, numNulls=1, numDVs=ndv)))


def _part_stats(db: str, table: str, name: str, *objs: Any) -> Any:
    return hms.ColumnStatistics(statsDesc=hms.ColumnStatisticsDesc(isTblLevel=False, dbName=db, tableName=table,
                                                                   partName=name), statsObj=list(objs))


def fill(call: Callable[..., Any], lake: Path) -> Catalog:
    """Write the catalog through `call(method, *args)`, a Thrift client of the source metastore."""
    def loc(*parts: str) -> str:
        return "file:" + str(lake.joinpath(*parts))

    call("create_database", hms.Database(name="sales", description="Sales, by day", locationUri=loc("sales.db"),
                                         parameters={"team": "finance", "note": "ü & <x>"}, ownerName="alice",
                                         ownerType=hms.PrincipalType.USER))
    call("create_database", hms.Database(name="web", description=None, locationUri=loc("web.db"), parameters={},
                                         ownerName="ops", ownerType=hms.PrincipalType.ROLE))
    call("create_database", hms.Database(name="odd_names_1", description="names that need care",
                                         locationUri=loc("odd"), parameters={"x": ""}))
    call("create_database", hms.Database(name="busy", description="written right now", locationUri=loc("busy.db"),
                                         parameters={}))

    # A table of a few thousand partitions, two keys, some with statistics.
    orders = _table("sales", "orders", _sd(_cols(("id", "bigint", "order id"), ("amount", "double")), PARQUET,
                                           loc("sales.db", "orders")),
                    _cols(("ds", "string"), ("hr", "int")), params={"EXTERNAL": "FALSE", "owner.note": "big"})
    call("create_table", orders)
    values = [[f"2024-{1 + i // 720:02d}-{1 + (i // 24) % 30:02d}", str(i % 24)] for i in range(BIG_PARTITIONS)]
    for start in range(0, len(values), 1000):
        call("add_partitions_req", hms.AddPartitionsRequest(
            dbName="sales", tblName="orders", parts=[_partition(orders, v, {"numRows": str(i)})
                                                     for i, v in enumerate(values[start:start + 1000], start)],
            ifNotExists=False, needResult=False))
    call("set_aggr_stats_for", hms.SetPartitionsStatsRequest(colStats=[
        _part_stats("sales", "orders", f"ds={v[0]}/hr={v[1]}", long_stats("id", i, i + 100, 50))
        for i, v in enumerate(values[:200])], needMerge=False))

    customers = _table("sales", "customers", _sd(_cols(("id", "bigint"), ("name", "string", "full name")), TEXT,
                                                 loc("external", "customers"), serde_params={
                                                     "field.delim": "\t", "serialization.format": "\t"}),
                       table_type="EXTERNAL_TABLE", params={"EXTERNAL": "TRUE", "comment": "from the CRM"},
                       owner="bob")
    call("create_table", customers)
    call("update_table_column_statistics", hms.ColumnStatistics(
        statsDesc=hms.ColumnStatisticsDesc(isTblLevel=True, dbName="sales", tableName="customers"),
        statsObj=[long_stats("id", 1, 1000, 990), string_stats("name", 40, 900)]))

    call("create_table", _table("sales", "big_orders", hms.StorageDescriptor(
        cols=_cols(("id", "bigint"), ("amount", "double")), location=None, inputFormat=TEXT[0], outputFormat=TEXT[1],
        compressed=False, numBuckets=-1, serdeInfo=hms.SerDeInfo(serializationLib=None, parameters={}), bucketCols=[],
        sortCols=[], parameters={}), table_type="VIRTUAL_VIEW", params={"comment": "a view"},
        viewOriginalText="SELECT id, amount FROM sales.orders WHERE amount > 100",
        viewExpandedText="SELECT `orders`.`id`, `orders`.`amount` FROM `sales`.`orders` WHERE `orders`.`amount` > 100"))

    # Three keys, values a path escapes, comments in many scripts, statistics per partition.
    events = _table("web", "events", _sd(_cols(("user_id", "bigint", "ユーザー"), ("url", "string", "")), ORC,
                                         loc("web.db", "events"), buckets=4, bucket_cols=["user_id"],
                                         sort_cols=[hms.Order(col="user_id", order=1)]),
                    _cols(("country", "string", "ISO code"), ("ds", "date"), ("hr", "int")),
                    params={"orc.compress": "ZLIB", "quote": "it's \"quoted\""}, retention=30, owner="ops")
    call("create_table", events)
    event_values = [[odd, f"2024-01-{1 + i:02d}", str(i)] for i, odd in enumerate(ODD_VALUES)]
    call("add_partitions", [_partition(events, v, {"source": v[0]}) for v in event_values])
    names = call("get_partition_names", "web", "events", -1)
    call("set_aggr_stats_for", hms.SetPartitionsStatsRequest(colStats=[
        _part_stats("web", "events", name, long_stats("user_id", i, 10 * i + 5, i + 1), string_stats("url", 80, i + 2))
        for i, name in enumerate(sorted(names))], needMerge=False))
    call("create_function", hms.Function(
        functionName="to_upper", dbName="web", className="com.example.udf.ToUpper", ownerName="ops",
        ownerType=hms.PrincipalType.USER, createTime=0, functionType=JAVA_FUNCTION,
        resourceUris=[hms.ResourceUri(resourceType=JAR, uri="file:/opt/udfs/upper.jar")]))
    call("create_function", hms.Function(
        functionName="geo_lookup", dbName="sales", className="com.example.udf.Geo", ownerName="alice",
        ownerType=hms.PrincipalType.USER, createTime=0, functionType=JAVA_FUNCTION,
        resourceUris=[hms.ResourceUri(resourceType=JAR, uri="file:/opt/udfs/geo.jar"),
                      hms.ResourceUri(resourceType=FILE, uri="file:/opt/udfs/geo.dat")]))

    call("create_table", _table("odd_names_1", "t_1_", _sd(_cols(("_col0", "string", "tab\there"),
                                                                 ("`weird`", "map<string,array<int>>")), TEXT,
                                                           loc("odd", "t_1_")),
                                _cols(("p", "string")), params={"key with space": "value=1;2", "k": ""}))
    odd = call("get_table", "odd_names_1", "t_1_")
    call("add_partitions", [_partition(odd, [v]) for v in ("%", "a b/c", "__HIVE_DEFAULT_PARTITION__")])

    # What Hive 2.3 takes and the gateway refuses: a parameter with an empty key.
    call("create_database", hms.Database(name="refused", description="", locationUri=loc("refused.db"),
                                         parameters={}))
    empty_key = _table("refused", "empty_key", _sd(_cols(("id", "bigint")), TEXT, loc("refused.db", "empty_key")),
                       _cols(("p", "string")), params={"": "no name"})
    call("create_table", empty_key)
    call("add_partitions", [_partition(empty_key, [v]) for v in ("1", "2")])

    # A transactional table with partitions, after txns that committed: Hive 2.3 names its delta
    # directories by txn ids, so the gateway must count them committed.
    acid_sd = _sd(_cols(("id", "bigint"), ("v", "string")), ORC, loc("sales.db", "acid_parts"), buckets=2,
                  bucket_cols=["id"])
    call("create_table", _table("sales", "acid_parts", acid_sd, _cols(("ds", "string")),
                                params={"transactional": "true"}))
    txns = call("open_txns", hms.OpenTxnRequest(num_txns=5, user="writer", hostname="host")).txn_ids
    for txn in txns:
        call("commit_txn", hms.CommitTxnRequest(txnid=txn))
    acid = call("get_table", "sales", "acid_parts")
    call("add_partitions", [_partition(acid, [f"2024-02-{d:02d}"]) for d in (1, 2, 3)])
    call("set_aggr_stats_for", hms.SetPartitionsStatsRequest(colStats=[
        _part_stats("sales", "acid_parts", f"ds=2024-02-{d:02d}", long_stats("id", d, 100 * d, 10 * d))
        for d in (1, 2)], needMerge=False))

    # A transactional table an open txn is writing: refused until its writer ends.
    call("create_table", _table("busy", "locked", _sd(_cols(("id", "bigint")), ORC, loc("busy.db", "locked"),
                                                      buckets=2, bucket_cols=["id"]),
                                params={"transactional": "true"}))
    call("create_table", _table("busy", "calm", _sd(_cols(("id", "bigint")), PARQUET, loc("busy.db", "calm"))))
    (open_txn,) = call("open_txns", hms.OpenTxnRequest(num_txns=1, user="writer", hostname="host")).txn_ids
    lock = call("lock", hms.LockRequest(component=[hms.LockComponent(
        type=hms.LockType.SHARED_WRITE, level=hms.LockLevel.TABLE, dbname="busy", tablename="locked",
        operationType=hms.DataOperationType.INSERT)], txnid=open_txn, user="writer", hostname="host"))
    assert lock.state == hms.LockState.ACQUIRED, lock
    hwm = call("get_open_txns").txn_high_water_mark
    return Catalog(big_table=("sales", "orders"), big_partitions=BIG_PARTITIONS,
                   partitions=BIG_PARTITIONS + len(ODD_VALUES) + 3 + 3, txn_high_water_mark=hwm, busy_txn=open_txn)


def fill_big_table(call: Callable[..., Any], lake: Path, count: int) -> None:
    """Database `big`, table `events` of `count` partitions (ds, hr), every tenth with a column's statistics
    (Hive 2.3 on Derby writes them at about 20 ms a partition)."""
    call("create_database", hms.Database(name="big", description="", locationUri="file:" + str(lake / "big.db"),
                                         parameters={}))
    sd = _sd(_cols(("id", "bigint"), ("payload", "string")), PARQUET, "file:" + str(lake / "big.db" / "events"))
    table = _table("big", "events", sd, _cols(("ds", "string"), ("hr", "int")))
    call("create_table", table)
    values = [[f"d{i // 24:05d}", str(i % 24)] for i in range(count)]
    for start in range(0, count, 2000):
        batch = values[start:start + 2000]
        call("add_partitions_req", hms.AddPartitionsRequest(
            dbName="big", tblName="events", parts=[_partition(table, v, {"numRows": "1000"}) for v in batch],
            ifNotExists=False, needResult=False))
        call("set_aggr_stats_for", hms.SetPartitionsStatsRequest(colStats=[
            _part_stats("big", "events", f"ds={v[0]}/hr={v[1]}", long_stats("id", 1, 100, 50)) for v in batch[::10]],
            needMerge=False))
