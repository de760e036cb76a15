"""One Spark SQL session with Hive support against a Hive metastore at a thrift:// URI: the statements
a data engineer runs, each statement's rows (or its error) written as JSON.

    python tests/spark/hive_sql_script.py thrift://127.0.0.1:9083 WAREHOUSE_DIR OUT.json [STATEMENTS.json]

The statements are STATEMENTS below, or the JSON list of strings in STATEMENTS.json (the random scripts of
tests/spark/test_hive_sql_random_differential.py). `{warehouse}` in a statement is WAREHOUSE_DIR
(external locations are kept under it); the statement is recorded as written, so two runs with different
warehouses compare statement by statement.

Run as its own process: a SparkContext's catalog (Hive or in-memory) is fixed when it starts, so a
Hive-enabled session cannot share the test session's JVM.
"""

from __future__ import annotations

import json
import os
import sys
import time

STATEMENTS = [
    "SHOW DATABASES",
    "CREATE DATABASE shop",
    "CREATE TABLE shop.orders (id BIGINT, amount DOUBLE, note STRING) PARTITIONED BY (ds STRING) STORED AS PARQUET",
    "CREATE TABLE shop.events (id BIGINT, kind STRING) PARTITIONED BY (ds STRING, hr INT) STORED AS ORC",
    "INSERT INTO shop.orders PARTITION (ds='2024-01-01') VALUES (1, 10.0, 'a'), (2, 20.0, 'b')",
    "INSERT OVERWRITE TABLE shop.orders PARTITION (ds='2024-01-01') VALUES (1, 11.0, 'a'), (2, 21.0, 'b')",
    "SET hive.exec.dynamic.partition.mode=nonstrict",
    "INSERT INTO shop.orders PARTITION (ds) VALUES (3, 30.0, 'c', '2024-01-02'), (4, 40.0, 'd', '2024-01-03')",
    "INSERT INTO shop.events PARTITION (ds='2024-01-01', hr=1) VALUES (1, 'click'), (2, 'view')",
    "INSERT INTO shop.events PARTITION (ds='2024-01-01', hr) VALUES (3, 'click', 2)",
    "SHOW PARTITIONS shop.orders",
    "SHOW PARTITIONS shop.events",
    "SELECT id, amount, ds FROM shop.orders WHERE ds >= '2024-01-02' ORDER BY id",
    "SELECT id, amount FROM shop.orders WHERE ds = '2024-01-01' ORDER BY id",
    "SELECT kind, count(*) FROM shop.events WHERE hr = 1 GROUP BY kind ORDER BY kind",
    # Pruned by the metastore as Spark's Hive 2.3 client writes it: `(ds) in (...)`, `ds like "2024-01-0.*"`.
    "SELECT id, ds FROM shop.orders WHERE ds IN ('2024-01-01', '2024-01-03') ORDER BY id",
    "SELECT id, ds FROM shop.orders WHERE ds NOT IN ('2024-01-01', '2024-01-03') ORDER BY id",
    "SELECT id, ds FROM shop.orders WHERE ds LIKE '2024-01-0%' ORDER BY id",
    "SELECT id, ds FROM shop.orders WHERE ds LIKE '%-03' OR ds LIKE '%01-02%' ORDER BY id",
    "CREATE FUNCTION shop.shout AS 'org.apache.hadoop.hive.ql.udf.generic.GenericUDFUpper'",
    "CREATE FUNCTION shop.whisper AS 'org.apache.hadoop.hive.ql.udf.generic.GenericUDFLower'",
    # A name no function can have: not found by Spark's lookup, then refused by the create in Hive's words; a
    # class of any text is stored.
    "CREATE FUNCTION shop.`my-fn` AS 'org.apache.hadoop.hive.ql.udf.generic.GenericUDFUpper'",
    "CREATE FUNCTION shop.blank AS ''",
    "SHOW USER FUNCTIONS IN shop",
    "DESCRIBE FUNCTION shop.shout",
    "SELECT shop.shout(note) FROM shop.orders WHERE ds = '2024-01-01' ORDER BY id",
    "DROP FUNCTION shop.shout",
    "CREATE OR REPLACE FUNCTION shop.whisper AS 'org.apache.hadoop.hive.ql.udf.generic.GenericUDFUpper'",
    "SELECT shop.whisper('quiet')",
    "SHOW USER FUNCTIONS IN shop",
    "ALTER TABLE shop.orders ADD PARTITION (ds='2024-02-01')",
    "SHOW PARTITIONS shop.orders",
    "ALTER TABLE shop.orders DROP PARTITION (ds='2024-02-01')",
    "SHOW PARTITIONS shop.orders",
    "ALTER TABLE shop.orders PARTITION (ds='2024-01-03') RENAME TO PARTITION (ds='2024-01-04')",
    "SELECT id, ds FROM shop.orders WHERE ds >= '2024-01-03' ORDER BY id",
    "TRUNCATE TABLE shop.orders PARTITION (ds='2024-01-04')",
    "SELECT count(*) FROM shop.orders WHERE ds = '2024-01-04'",
    "ANALYZE TABLE shop.orders COMPUTE STATISTICS",
    "ANALYZE TABLE shop.orders PARTITION (ds='2024-01-01') COMPUTE STATISTICS",
    "CREATE TABLE shop.first_day STORED AS PARQUET AS SELECT id, amount FROM shop.orders WHERE ds = '2024-01-01'",
    "SELECT * FROM shop.first_day ORDER BY id",
    "DROP TABLE shop.first_day",
    "DESCRIBE TABLE shop.orders",
    "DESCRIBE TABLE shop.events",
    "DESCRIBE TABLE EXTENDED shop.orders",
    "DESCRIBE TABLE EXTENDED shop.orders PARTITION (ds='2024-01-01')",
    "CREATE VIEW shop.big AS SELECT id, amount FROM shop.orders WHERE amount > 20",
    "SELECT * FROM shop.big ORDER BY id",
    "DESCRIBE TABLE shop.big",
    "MSCK REPAIR TABLE shop.orders",
    "SHOW PARTITIONS shop.orders",
    "ALTER TABLE shop.events RENAME TO shop.clicks",
    "SHOW TABLES IN shop",
    "SELECT count(*) FROM shop.clicks",
    "CREATE TABLE shop.events (id BIGINT, kind STRING) PARTITIONED BY (ds STRING, hr INT) STORED AS ORC",
    "INSERT INTO shop.events PARTITION (ds='2024-01-01', hr=1) VALUES (9, 'new')",
    "SELECT id, kind FROM shop.events ORDER BY id",
    "DROP VIEW shop.big",
    "DROP TABLE shop.clicks",
    "SHOW TABLES IN shop",
    "CREATE TABLE shop.clicks (id BIGINT, kind STRING) PARTITIONED BY (ds STRING, hr INT) STORED AS ORC",
    "SELECT count(*) FROM shop.clicks",
    "DROP TABLE shop.events",
    "DROP TABLE shop.clicks",
    "DROP DATABASE shop CASCADE",
    "SHOW DATABASES",
    # A database of its own for the rest: its location, properties and description.
    "CREATE DATABASE lake COMMENT 'the lake' LOCATION '{warehouse}/lake_dir' WITH DBPROPERTIES ('team'='data')",
    "ALTER DATABASE lake SET DBPROPERTIES ('team'='sales', 'tier'='1')",
    "DESCRIBE DATABASE EXTENDED lake",
    # Spark's datasource tables: partitions kept in the metastore, static and dynamic overwrites.
    "CREATE TABLE lake.sales (id BIGINT, amount DOUBLE, ds STRING, region STRING) USING parquet "
    "PARTITIONED BY (ds, region)",
    "INSERT INTO lake.sales VALUES (1, 10.0, '2024-01-01', 'eu'), (2, 20.0, '2024-01-01', 'us'), "
    "(3, 30.0, '2024-01-02', 'eu')",
    "INSERT INTO lake.sales PARTITION (ds='2024-01-02', region='us') VALUES (4, 40.0)",
    "INSERT OVERWRITE TABLE lake.sales PARTITION (ds='2024-01-01', region='eu') VALUES (5, 50.0)",
    "SET spark.sql.sources.partitionOverwriteMode=dynamic",
    "INSERT OVERWRITE TABLE lake.sales PARTITION (ds, region) VALUES (6, 60.0, '2024-01-03', 'eu'), "
    "(7, 70.0, '2024-01-02', 'us')",
    "SET spark.sql.sources.partitionOverwriteMode=static",
    "SHOW PARTITIONS lake.sales",
    "SHOW PARTITIONS lake.sales PARTITION (region='eu')",
    "SELECT id, amount, ds, region FROM lake.sales WHERE region = 'eu' AND ds >= '2024-01-02' ORDER BY id",
    "SELECT id, ds, region FROM lake.sales ORDER BY id",
    "SHOW CREATE TABLE lake.sales",
    "ANALYZE TABLE lake.sales COMPUTE STATISTICS FOR COLUMNS id, amount",
    "DESCRIBE EXTENDED lake.sales amount",
    "DESCRIBE TABLE EXTENDED lake.sales",
    # An external datasource table over the same files finds its partitions with RECOVER PARTITIONS.
    "CREATE TABLE lake.sales_files (id BIGINT, amount DOUBLE, ds STRING, region STRING) USING parquet "
    "PARTITIONED BY (ds, region) LOCATION '{warehouse}/lake_dir/sales'",
    "ALTER TABLE lake.sales_files RECOVER PARTITIONS",
    "SHOW PARTITIONS lake.sales_files",
    "SELECT id, ds, region FROM lake.sales_files WHERE ds = '2024-01-02' ORDER BY id",
    "DROP TABLE lake.sales_files",
    "SELECT count(*) FROM lake.sales",
    # A managed datasource table renamed: its directory, its partitions' and its `path` move with it.
    "ALTER TABLE lake.sales RENAME TO lake.revenue",
    "SELECT id, ds, region FROM lake.revenue WHERE ds = '2024-01-02' ORDER BY id",
    "DESCRIBE TABLE EXTENDED lake.revenue PARTITION (ds='2024-01-02', region='us')",
    "ALTER TABLE lake.revenue PARTITION (ds='2024-01-03', region='eu') "
    "RENAME TO PARTITION (ds='2024-01-04', region='eu')",
    "SELECT id, ds, region FROM lake.revenue WHERE ds >= '2024-01-03' ORDER BY id",
    "CREATE TABLE lake.daily USING parquet PARTITIONED BY (ds) AS SELECT id, amount, ds FROM lake.revenue",
    "SHOW PARTITIONS lake.daily",
    "TRUNCATE TABLE lake.revenue",
    "SHOW PARTITIONS lake.revenue",
    # Integer and date partition keys, pruned by the metastore: numbers compare as numbers.
    "CREATE TABLE lake.hits (id BIGINT) PARTITIONED BY (day DATE, hr INT) STORED AS PARQUET",
    "INSERT INTO lake.hits PARTITION (day, hr) VALUES (1, DATE'2024-01-01', 9), (2, DATE'2024-01-01', 10), "
    "(3, DATE'2024-01-02', 2)",
    "SHOW PARTITIONS lake.hits",
    "SELECT id FROM lake.hits WHERE hr > 9 ORDER BY id",
    "SELECT id FROM lake.hits WHERE day >= DATE'2024-01-02' ORDER BY id",
    "SELECT id FROM lake.hits WHERE day = DATE'2024-01-01' AND hr = 10",
    "SHOW PARTITIONS lake.hits PARTITION (hr=10)",
    "INSERT OVERWRITE TABLE lake.hits PARTITION (day, hr) VALUES (4, DATE'2024-01-01', 9)",
    "INSERT INTO lake.hits PARTITION (day, hr) VALUES (5, DATE'2024-01-03', NULL)",
    "SHOW PARTITIONS lake.hits",
    "SELECT id FROM lake.hits WHERE hr < 10 ORDER BY id",
    "SELECT id, hr FROM lake.hits WHERE hr IS NULL",
    "SELECT id, day, hr FROM lake.hits ORDER BY id",
    # Partition values with characters a path escapes.
    "CREATE TABLE lake.paths (id BIGINT) PARTITIONED BY (p STRING) STORED AS PARQUET",
    "INSERT INTO lake.paths PARTITION (p='a/b:c') VALUES (1)",
    "INSERT INTO lake.paths PARTITION (p) VALUES (2, 'x y%z'), (3, 'q=r#s')",
    "SHOW PARTITIONS lake.paths",
    "SELECT id, p FROM lake.paths WHERE p = 'a/b:c'",
    "INSERT INTO lake.paths PARTITION (p) VALUES (4, NULL)",
    "SELECT id, p FROM lake.paths WHERE p > 'q' ORDER BY id",
    "SELECT id, p FROM lake.paths WHERE p IS NULL",
    "SELECT id, p FROM lake.paths WHERE p LIKE '%y%'",
    "DESCRIBE TABLE EXTENDED lake.paths PARTITION (p='a/b:c')",
    "ALTER TABLE lake.paths DROP PARTITION (p='x y%z')",
    "SELECT id, p FROM lake.paths ORDER BY id",
    "DROP DATABASE lake",
    "SELECT id FROM lake.hits WHERE hr <> 9 ORDER BY id",
    "SELECT id FROM lake.hits WHERE hr BETWEEN 2 AND 9 OR day = DATE'2024-01-03' ORDER BY id",
    "ALTER TABLE lake.hits DROP PARTITION (hr=9)",  # every day's
    "SHOW PARTITIONS lake.hits",
    # A datasource table keeps its columns' case; Hive's metastore keeps names lower case.
    "CREATE TABLE lake.Upper (Id INT, Name STRING) USING parquet PARTITIONED BY (Name)",
    "INSERT INTO lake.Upper VALUES (1, 'A'), (2, 'b')",
    "SELECT Id FROM lake.Upper WHERE Name = 'A'",
    "SHOW PARTITIONS lake.upper",
    # Columns and keys named by what is not a word, and a key of a type Hive has not (TIMESTAMP_NTZ: Spark's own
    # form, the key typed '<derived from deserializer>'): stored as Hive 2.3 stores them, a key escaped in its
    # directory; a rename of a partition keyed in upper case is moved as Hive moves it (Spark then renames it).
    "CREATE TABLE lake.odd (id INT, `a:b` STRING, `Event Day` STRING) USING parquet "
    "PARTITIONED BY (`a:b`, `Event Day`)",
    "INSERT INTO lake.odd VALUES (1, 'k=v', 'x y')",
    "ALTER TABLE lake.odd PARTITION (`a:b`='k=v', `Event Day`='x y') "
    "RENAME TO PARTITION (`a:b`='q', `Event Day`='x y')",
    "SELECT * FROM lake.odd",
    "DESCRIBE FORMATTED lake.odd PARTITION (`a:b`='q', `Event Day`='x y')",
    "CREATE TABLE lake.ntz (id INT, ts TIMESTAMP_NTZ, l BIGINT) USING parquet PARTITIONED BY (ts, l)",
    "INSERT INTO lake.ntz VALUES (1, TIMESTAMP_NTZ'2024-01-01 10:00:00', 5)",
    "SELECT id, ts, l FROM lake.ntz WHERE l = 5",
    # Spark's alter of it sends its keys without the one it cannot read back: refused by both, in Hive's words.
    "ALTER TABLE lake.ntz SET TBLPROPERTIES ('k'='v')",
    "CREATE TABLE lake.uni (id INT COMMENT 'ключ') PARTITIONED BY (p STRING) STORED AS PARQUET "
    "TBLPROPERTIES ('note'='日本語')",
    "INSERT INTO lake.uni PARTITION (p='日本') VALUES (1)",
    "SELECT id, p FROM lake.uni WHERE p = '日本'",
    # A Hive table's schema and properties changed in place.
    "CREATE TABLE lake.orders (id BIGINT, amount DOUBLE) PARTITIONED BY (ds STRING) STORED AS PARQUET",
    "INSERT INTO lake.orders PARTITION (ds) VALUES (1, 10.0, '2024-01-01'), (2, 20.0, '2024-01-02')",
    "ALTER TABLE lake.orders ADD COLUMNS (channel STRING COMMENT 'where it came from')",
    "ALTER TABLE lake.orders CHANGE COLUMN amount amount DOUBLE COMMENT 'in euros'",
    "ALTER TABLE lake.orders SET TBLPROPERTIES ('team'='sales', 'quality'='gold')",
    "ALTER TABLE lake.orders UNSET TBLPROPERTIES ('quality')",
    "ALTER TABLE lake.orders UNSET TBLPROPERTIES IF EXISTS ('quality')",
    "SHOW TBLPROPERTIES lake.orders",
    "SHOW TBLPROPERTIES lake.orders ('team')",
    "SHOW COLUMNS IN lake.orders",
    "ALTER TABLE lake.orders SET SERDEPROPERTIES ('serialization.encoding'='UTF-8')",
    "INSERT INTO lake.orders PARTITION (ds='2024-01-03') VALUES (3, 30.0, 'web')",
    "SELECT id, amount, channel, ds FROM lake.orders ORDER BY id",
    "ALTER TABLE lake.orders PARTITION (ds='2024-01-02') SET LOCATION '{warehouse}/moved/ds=2024-01-02'",
    "SELECT count(*) FROM lake.orders WHERE ds = '2024-01-02'",
    "ALTER TABLE lake.orders ADD IF NOT EXISTS PARTITION (ds='2024-03-01') PARTITION (ds='2024-01-01')",
    "ALTER TABLE lake.orders ADD PARTITION (ds='2024-01-01')",
    "ALTER TABLE lake.orders DROP IF EXISTS PARTITION (ds='2024-03-01'), PARTITION (ds='2024-03-09')",
    "ALTER TABLE lake.orders DROP PARTITION (ds='2024-03-09')",
    "ALTER TABLE lake.orders PARTITION (ds='2024-01-03') RENAME TO PARTITION (ds='2024-01-01')",
    "ALTER TABLE lake.orders ADD PARTITION (ds='2024-04-01') LOCATION '{warehouse}/lake_dir/orders/ds=2024-01-01'",
    "ALTER TABLE lake.orders PARTITION (ds='2024-04-01') SET SERDEPROPERTIES ('note'='borrowed')",
    "SELECT id, ds FROM lake.orders WHERE ds = '2024-04-01'",
    "SHOW PARTITIONS lake.orders",
    "MSCK REPAIR TABLE lake.orders SYNC PARTITIONS",
    "ANALYZE TABLE lake.orders COMPUTE STATISTICS FOR COLUMNS id, amount",
    "DESCRIBE EXTENDED lake.orders amount",
    "ANALYZE TABLE lake.orders PARTITION (ds='2024-01-01') COMPUTE STATISTICS FOR COLUMNS id",
    "DESCRIBE TABLE EXTENDED lake.orders",
    "DESCRIBE TABLE EXTENDED lake.orders PARTITION (ds='2024-01-02')",
    "SHOW CREATE TABLE lake.orders AS SERDE",
    "SHOW TABLE EXTENDED IN lake LIKE 'ord*'",
    "SHOW TABLE EXTENDED IN lake LIKE 'orders' PARTITION (ds='2024-01-01')",
    # External text tables keep their files when dropped; CREATE TABLE ... LIKE; bucketing.
    "CREATE EXTERNAL TABLE lake.raw (id BIGINT, name STRING) ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' "
    "STORED AS TEXTFILE LOCATION '{warehouse}/raw'",
    "INSERT INTO lake.raw VALUES (1, 'x'), (2, 'y')",
    "DROP TABLE lake.raw",
    "CREATE EXTERNAL TABLE lake.raw (id BIGINT, name STRING) ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' "
    "STORED AS TEXTFILE LOCATION '{warehouse}/raw'",
    "SELECT * FROM lake.raw ORDER BY id",
    "DESCRIBE TABLE EXTENDED lake.raw",
    "ALTER TABLE lake.raw SET LOCATION '{warehouse}/raw_moved'",
    "INSERT INTO lake.raw VALUES (3, 'z')",
    "SELECT * FROM lake.raw ORDER BY id",
    "CREATE TABLE lake.orders_like LIKE lake.orders",
    "SHOW CREATE TABLE lake.orders_like AS SERDE",
    "SHOW PARTITIONS lake.orders_like",
    "CREATE TABLE lake.buckets (id BIGINT, v STRING) CLUSTERED BY (id) SORTED BY (id) INTO 4 BUCKETS STORED AS ORC",
    "DESCRIBE TABLE EXTENDED lake.buckets",
    "CREATE TABLE lake.ds_buckets (id BIGINT, v STRING) USING parquet CLUSTERED BY (id) INTO 4 BUCKETS",
    "SHOW CREATE TABLE lake.ds_buckets",
    "CREATE TABLE lake.nested (id INT COMMENT 'key', tags ARRAY<STRING>, attrs MAP<STRING, INT>, "
    "s STRUCT<a: INT, b: STRING>) COMMENT 'nested things' STORED AS PARQUET TBLPROPERTIES ('k'='v')",
    "COMMENT ON TABLE lake.nested IS 'still nested'",
    # Before the INSERT: Hive's metastore reads the files' sizes into an unpartitioned table's totalSize
    # on every alter (shown as Spark's Statistics), the gateway reads no files (README).
    "DESCRIBE TABLE EXTENDED lake.nested",
    "INSERT INTO lake.nested VALUES (1, array('a', 'b'), map('x', 1), named_struct('a', 1, 'b', 'z'))",
    "SELECT id, tags, attrs, s.b FROM lake.nested",
    # Views: replaced with ALTER VIEW ... AS, listed with SHOW VIEWS.
    "CREATE VIEW lake.recent AS SELECT id, amount FROM lake.orders WHERE ds >= '2024-01-02'",
    "ALTER VIEW lake.recent AS SELECT id, amount, ds FROM lake.orders WHERE ds >= '2024-01-03'",
    "SELECT * FROM lake.recent ORDER BY id",
    "SHOW VIEWS IN lake",
    "DESCRIBE TABLE EXTENDED lake.recent",
    "ALTER VIEW lake.recent RENAME TO lake.latest",
    "SHOW VIEWS IN lake",
    "SHOW TABLES IN lake",
    "SHOW TABLES IN lake LIKE 'h*|nest*'",
    "SHOW DATABASES LIKE 'la*'",
    # Hive 2.3 keeps a database's location (Spark then fails the statement); the gateway, as Hive 3 and 4,
    # changes it (README). Last, so that no other statement depends on it.
    "ALTER DATABASE lake SET LOCATION '{warehouse}/lake_moved'",
    "DESCRIBE DATABASE lake",
    "DROP DATABASE lake CASCADE",
]


def main(uri: str, warehouse: str, out_path: str, statements_path: str | None = None) -> None:
    from pyspark.sql import SparkSession

    statements = STATEMENTS
    if statements_path:
        with open(statements_path) as f:
            statements = json.load(f)

    os.environ["PYSPARK_PYTHON"] = sys.executable
    spark = (SparkSession.builder.master("local[2]").appName("hive metastore differential")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.sql.shuffle.partitions", "2")
             .config("spark.hadoop.hive.metastore.uris", uri)
             .config("spark.sql.warehouse.dir", warehouse)
             .config("spark.driver.extraJavaOptions", "-XX:+UseSerialGC -XX:TieredStopAtLevel=1")
             .enableHiveSupport().getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    results = []
    for statement in statements:
        started = time.monotonic()
        try:
            rows = [[None if v is None else str(v) for v in row]
                    for row in spark.sql(statement.format(warehouse=warehouse)).collect()]
            results.append({"sql": statement, "rows": rows, "seconds": time.monotonic() - started})
        except Exception as exc:  # noqa: BLE001 - recorded for the test to show
            results.append({"sql": statement, "error": str(exc)[:2000], "seconds": time.monotonic() - started})
    spark.stop()
    with open(out_path, "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main(*sys.argv[1:5])
