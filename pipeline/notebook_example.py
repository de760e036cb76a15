# %% [markdown]
# # The metastore gateway from a notebook
#
# Cells in the "percent" format: open this file in Jupyter (with jupytext) or VS Code and run the
# cells, or paste them into notebook cells; `python pipeline/notebook_example.py` runs it all.
# It needs a running gateway (`make run` serves one on 127.0.0.1:50051) and writes under
# /tmp/metastore-notebook-demo.

# %%
import os
import sys
from typing import Callable

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # executors' Python: this environment (grpc, pipeline)
GATEWAY = os.environ.get("METASTORE_GATEWAY_ADDRESS", "127.0.0.1:50051")
WAREHOUSE = "/tmp/metastore-notebook-demo"

from pyspark.sql import SparkSession  # noqa: E402

spark = (SparkSession.builder.master("local[2]").appName("metastore notebook")
         .config("spark.metastore.gateway.address", GATEWAY)  # where every job and executor finds the gateway
         .config("spark.ui.showConsoleProgress", "false")
         .getOrCreate())

# %% A transactional table to play with (created once).
import grpc  # noqa: E402

from pipeline.client import ClientConfig, GatewayError, process_client  # noqa: E402
from protos.metastore.v1 import catalog_pb2 as pb  # noqa: E402

config = ClientConfig.from_spark(spark)
client = process_client(config)  # this process's channel; executors build their own


def create_if_missing(rpc: Callable[[object], object], request: object) -> None:
    try:
        rpc(request)
    except grpc.RpcError as exc:
        if exc.code() != grpc.StatusCode.ALREADY_EXISTS:
            raise


create_if_missing(client.catalog.CreateDatabase, pb.CreateDatabaseRequest(database=pb.Database(name="demo")))
create_if_missing(client.catalog.CreateTable, pb.CreateTableRequest(table=pb.Table(
    db_name="demo", name="events", table_type=pb.MANAGED, transactional=True,
    columns=[pb.FieldSchema(name="id", type="bigint"), pb.FieldSchema(name="payload", type="string")],
    partition_keys=[pb.FieldSchema(name="ds", type="string")],
    sd=pb.StorageDescriptor(location=f"file://{WAREHOUSE}/events"))))

# %% Write a partitioned DataFrame in one transaction: delta_<w>_<w> per partition, then commit.
from pipeline.txn_write import txn_write  # noqa: E402

df = spark.createDataFrame([(i, f"event {i}", f"2024-05-0{1 + i % 3}") for i in range(300)],
                           "id long, payload string, ds string")
written = txn_write(df, "demo", "events", file_format="parquet")
print(f"txn {written.txn_id} wrote write id {written.write_id}: added {written.added}, appended {written.appended}")

# %% Read per-partition files and bytes under one pinned snapshot (executors fetch through the gateway).
from pipeline.snapshot_read import snapshot_read  # noqa: E402

result = snapshot_read(spark, "demo", "events")
print(result.snapshot.valid_write_id_list, f"{len(result.rows)} partitions, {result.files} files, {result.bytes} bytes")
spark.createDataFrame([r.key() for r in result.rows],
                      "name string, location string, write_id long, parameters string, files long, bytes long").show(
    truncate=False)

# %% The data itself, under a snapshot: the table's columns and its typed partition columns, over the
# partitions a filter selects (pruned in the gateway) and the files that snapshot may read there.
from pipeline.snapshot_read import read_table  # noqa: E402

read_table(spark, "demo.events", filter="ds >= '2024-05-02'").groupBy("ds").count().show()

# %% Overwrite one partition: later snapshots see only the new rows; a snapshot taken before keeps its rows.
before = client.snapshot(["demo.events"])
txn_write(spark.createDataFrame([(1000, "replacement")], "id long, payload string"), "demo", "events",
          mode="overwrite", partition={"ds": "2024-05-01"})
print(read_table(spark, "demo.events", filter="ds = '2024-05-01'").count(), "rows now,",
      read_table(spark, "demo.events", filter="ds = '2024-05-01'", snapshot=before).count(), "before the overwrite")

# %% A transaction by hand: snapshot, batched reads with several batches in flight, lock, heartbeat.
from hive.lock_rules import Statement  # noqa: E402

try:
    with client.transaction() as txn:  # heartbeated every hive.txn.timeout/2; commit on success, abort on error
        txn.lock(Statement.SELECT, "demo", "events")  # Hive's retries while it waits
        read = txn.table_snapshot("demo", "events").read_context()
        names = client.list_partition_names("demo", "events", read)
        for p in client.get_partitions_by_names("demo", "events", names, read, batch_size=1000, in_flight=4):
            print(p.name, p.write_id, p.sd.location)
except GatewayError as exc:  # the gateway's own message, e.g. unreachable after bounded retries
    print("gateway:", exc)

# %%
spark.stop()
