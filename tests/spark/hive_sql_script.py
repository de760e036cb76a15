"""One Spark SQL session with Hive support against a Hive metastore at a thrift:// URI: the statements
a data engineer runs, each statement's rows (or its error) written as JSON.

    python tests/spark/hive_sql_script.py thrift://127.0.0.1:9083 WAREHOUSE_DIR OUT.json

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
]


def main(uri: str, warehouse: str, out_path: str) -> None:
    from pyspark.sql import SparkSession

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
    for statement in STATEMENTS:
        started = time.monotonic()
        try:
            rows = [[None if v is None else str(v) for v in row] for row in spark.sql(statement).collect()]
            results.append({"sql": statement, "rows": rows, "seconds": time.monotonic() - started})
        except Exception as exc:  # noqa: BLE001 - recorded for the test to show
            results.append({"sql": statement, "error": str(exc)[:2000], "seconds": time.monotonic() - started})
    spark.stop()
    with open(out_path, "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main(*sys.argv[1:4])
