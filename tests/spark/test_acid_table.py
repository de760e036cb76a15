"""ACID tables end to end on a real local SparkSession and a real gateway (issue 14, parts 1, 2, 4):
a DataFrame that does not fit the table is refused before any txn; writes record the file format;
an overwrite replaces what later snapshots see and not what earlier ones see; `read_table` answers
the rows written, with typed partition columns, pruned by the gateway's filter read."""

from __future__ import annotations

import datetime as dt
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark", reason="pyspark is in the dev extra: pip install -e '.[dev]'")  # the jobs import it

from pipeline.acid import local_path  # noqa: E402
from pipeline.client import ClientConfig, GatewayClient, LockAcquireTimeout, process_client  # noqa: E402
from pipeline.formats import PARQUET  # noqa: E402
from pipeline.schema import SchemaMismatch, parse_text_columns  # noqa: E402
from pipeline.snapshot_read import plan_table_read, read_rows, read_table  # noqa: E402
from pipeline.txn_write import txn_write  # noqa: E402
from protos.metastore.v1 import catalog_pb2 as pb  # noqa: E402
from protos.metastore.v1 import locks_pb2 as lpb  # noqa: E402
from protos.metastore.v1 import transactions_pb2 as tpb  # noqa: E402
from hive.lock_rules import Statement  # noqa: E402
from hive.writeids import ValidTxnList  # noqa: E402
from tests.spark.conftest import create_table  # noqa: E402

pytestmark = pytest.mark.spark
DB = "lake"


def _typed_table(client: GatewayClient, root: Path, name: str) -> pb.Table:
    """lake.<name>: id bigint, payload string, amount double; partitioned by ds date, hr int."""
    return create_table(client, root, table=name, keys=(("ds", "date"), ("hr", "int")))


def _rows(frame: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in frame.collect())


def _files(root: Path) -> list[str]:
    return sorted(str(Path(d, f).relative_to(root)) for d, _, fs in os.walk(root) for f in fs
                  if not f.startswith((".", "_")))


def _txn_hwm(client: GatewayClient) -> int:
    return ValidTxnList.parse(client.valid_txn_list()).high_watermark


def _no_open_txns_or_locks(client: GatewayClient) -> None:
    shown = client.txns.ShowTransactions(tpb.ShowTransactionsRequest()).transactions
    assert [t.txn_id for t in shown if t.state == "OPEN"] == []
    assert list(client.locks.ShowLocks(lpb.ShowLocksRequest()).locks) == []


def test_a_dataframe_that_does_not_fit_is_refused_before_any_txn_and_writes_nothing(
    spark: Any, gateway_address: str, tmp_path: Path,
) -> None:
    root = tmp_path / "events"
    config = ClientConfig(gateway_address)
    with GatewayClient(config) as client:
        create_table(client, root)  # id bigint, payload string; ds string
        hwm = _txn_hwm(client)
        cases = [
            # The report: text committed into a bigint column made the table unreadable.
            (spark.createDataFrame([("not-a-number-0", "p", "2024-01-01")], "id string, payload string, ds string"),
             None, r"column id is bigint but the DataFrame's 'id' is string"),
            (spark.createDataFrame([(1.5, "p", "2024-01-01")], "id double, payload string, ds string"),
             None, r"column id is bigint but the DataFrame's 'id' is double"),
            (spark.createDataFrame([(1, "2024-01-01")], "id long, ds string"),
             None, r"no column for column payload string"),
            (spark.createDataFrame([(1, "p", "x", "2024-01-01")], "id long, payload string, extra string, ds string"),
             None, r"column 'extra' is not a column of the table"),
            (spark.createDataFrame([(1, "p", "2024-01-01")], "id long, payload string, ds string"),
             {"ds": "2024-01-01"}, r"partition key ds is given a static value and is also a DataFrame column"),
            (spark.createDataFrame([(1, "p")], "id long, payload string"),
             {"hr": "1"}, r"hr, which are not partition keys"),
        ]
        for frame, static, message in cases:
            with pytest.raises(SchemaMismatch, match=message) as caught:
                txn_write(frame, DB, "events", config=config, partition=static)
            assert "nothing was written" in str(caught.value) or static is not None
        with pytest.raises(ValueError, match="file format must be one of orc, parquet"):
            txn_write(cases[0][0], DB, "events", config=config, file_format="avro")

        assert _txn_hwm(client) == hwm  # not one txn was opened, so none committed or aborted
        snap = client.snapshot([f"{DB}.events"])
        assert snap.tables[0].write_ids().high_watermark == 0  # no write id was allocated
        assert client.list_partition_names(DB, "events", snap.read_context(f"{DB}.events")) == []
        assert not root.exists() or _files(root) == []
        _no_open_txns_or_locks(client)


def test_writes_record_the_format_and_read_table_answers_the_rows_with_typed_partition_columns(
    spark: Any, gateway_address: str, tmp_path: Path,
) -> None:
    from pyspark.sql import types as T

    root = tmp_path / "typed"
    config = ClientConfig(gateway_address)
    full = f"{DB}.typed"
    with GatewayClient(config) as client:
        _typed_table(client, root, "typed")
        day1, day2, day3 = dt.date(2024, 1, 1), dt.date(2024, 1, 2), dt.date(2024, 1, 3)
        # Dynamic partitions; id as int: up-cast to the table's bigint.
        dynamic = [(i, f"p{i}", day1 if i % 2 else day2, i % 3) for i in range(12)]
        written = txn_write(spark.createDataFrame(dynamic, "id int, payload string, ds date, hr int"), DB, "typed",
                            config=config)
        assert written.file_format == "parquet" and len(written.added) == 6
        # A static prefix (ds) and a dynamic hr.
        static_rows = [(100 + i, f"s{i}", i % 2) for i in range(4)]
        txn_write(spark.createDataFrame(static_rows, "id long, payload string, hr int"), DB, "typed",
                  config=config, partition={"ds": "2024-01-03"})
        # The table records Parquet now: ORC files into it are refused, before any txn.
        hwm = _txn_hwm(client)
        with pytest.raises(ValueError, match="stored as parquet"):
            txn_write(spark.createDataFrame(static_rows, "id long, payload string, hr int"), DB, "typed",
                      config=config, partition={"ds": "2024-01-03"}, file_format="orc")
        assert _txn_hwm(client) == hwm

        snap = client.snapshot([full])
        read = snap.read_context(full)
        table = client.get_table(DB, "typed", read)
        assert (table.sd.input_format, table.sd.output_format, table.sd.serde.serialization_lib) == (
            PARQUET.input_format, PARQUET.output_format, PARQUET.serde)
        names = client.list_partition_names(DB, "typed", read)
        assert len(names) == 8
        for p in client.get_partitions_by_names(DB, "typed", names, read):
            assert (p.sd.input_format, p.sd.serde.serialization_lib) == (PARQUET.input_format, PARQUET.serde), p.name

        frame = read_table(spark, full, config=config)
        assert [(f.name, f.dataType) for f in frame.schema.fields] == [
            ("id", T.LongType()), ("payload", T.StringType()), ("ds", T.DateType()), ("hr", T.IntegerType())]
        expected = sorted([(i, p, d, h) for i, p, d, h in dynamic]
                          + [(i, p, day3, h) for i, p, h in static_rows])
        assert _rows(frame) == expected

        # Pruned in the gateway: one filter read, and only the matching partitions' files.
        calls = process_client(config).stats["GetPartitionsByFilter"]
        plan = plan_table_read(process_client(config), full, "ds = '2024-01-03' AND hr = 1")
        assert [p.name for p in plan.locations] == ["ds=2024-01-03/hr=1"]
        assert process_client(config).stats["GetPartitionsByFilter"] == calls + 1
        pruned = read_table(spark, full, filter="ds >= '2024-01-02' AND hr = 0", config=config)
        assert _rows(pruned) == [r for r in expected if r[2] >= day2 and r[3] == 0]

        # The same from the command's code path: JSON lines, partition keys last.
        out = io.StringIO()
        summary = read_rows(spark, DB, "typed", config=config, filter="ds = '2024-01-03'", where="hr = 1",
                            columns=["id", "ds", "hr"], limit=0, out=out)
        printed = [json.loads(line) for line in out.getvalue().splitlines()]
        assert sorted(printed, key=lambda r: r["id"]) == [{"id": i, "ds": "2024-01-03", "hr": 1}
                                                          for i, _, h in static_rows if h == 1]
        assert summary["partitions"] == 2 and summary["rows_printed"] == 2
        _no_open_txns_or_locks(client)


def test_overwrite_replaces_what_later_snapshots_see_and_older_snapshots_keep_reading_their_files(
    spark: Any, gateway_address: str, tmp_path: Path,
) -> None:
    root = tmp_path / "events"
    config = ClientConfig(gateway_address)
    full = f"{DB}.events"
    schema = "id long, payload string, ds string"
    with GatewayClient(config) as client:
        create_table(client, root)
        first = [(i, f"a{i}", d) for i, d in enumerate(["2024-01-01"] * 3 + ["2024-01-02"] * 2)]
        txn_write(spark.createDataFrame(first, schema), DB, "events", config=config, file_format="orc")

        # A reader pins its snapshot in a read txn holding Hive's SELECT lock, before the writes below.
        with client.transaction() as reader:
            reader.lock(Statement.SELECT, DB, "events")
            before = reader.snapshot([full])
            pinned = read_table(spark, full, snapshot=before, config=config)
            assert _rows(pinned) == sorted(first)

            # An overwrite waits for the reader (hive.txn.xlock.iow: EXCLUSIVE); one that gives up
            # waiting leaves nothing.
            impatient = ClientConfig(gateway_address, lock_num_retries=1, lock_sleep_between_retries_s=0.2)
            with pytest.raises(LockAcquireTimeout):
                txn_write(spark.createDataFrame([(9, "z", "2024-01-01")], schema), DB, "events", config=impatient,
                          mode="overwrite")
            assert sorted(p.name for p in (root / "ds=2024-01-01").iterdir()) == ["delta_0000001_0000001"]

            appended = [(10, "b10", "2024-01-01"), (11, "b11", "2024-01-02")]
            txn_write(spark.createDataFrame(appended, schema), DB, "events", config=config)  # beside the reader
            after_append = client.snapshot([full])
            replacement = [(20, "c20", "2024-01-01")]
            # hive.txn.xlock.iow=false: EXCL_WRITE, granted beside the reader.
            result = txn_write(spark.createDataFrame(replacement, schema), DB, "events", mode="overwrite",
                               config=config.with_(xlock_iow=False))
            assert result.write_id == 3 and result.appended == ["ds=2024-01-01"] and result.file_format == "orc"
            assert [Path(d).name for d in result.delta_dirs] == ["base_0000003"]

            # The reader's DataFrame and a new read under its snapshot: the same rows as before.
            assert _rows(pinned) == sorted(first)
            assert _rows(read_table(spark, full, snapshot=before, config=config)) == sorted(first)
        # A snapshot between the append and the overwrite sees the append, not the overwrite.
        assert _rows(read_table(spark, full, snapshot=after_append, config=config)) == sorted(first + appended)
        # Later snapshots: ds=2024-01-01 holds only the overwrite; ds=2024-01-02 was not written, so it stays.
        now = sorted(replacement + [r for r in first + appended if r[2] == "2024-01-02"])
        assert _rows(read_table(spark, full, config=config)) == now
        # The old directories are still there for older snapshots (a Cleaner's job to remove).
        assert sorted(p.name for p in (root / "ds=2024-01-01").iterdir()) == [
            "base_0000003", "delta_0000001_0000001", "delta_0000002_0000002"]

        # An append after the overwrite reads on top of the base.
        txn_write(spark.createDataFrame([(30, "d30", "2024-01-01")], schema), DB, "events", config=config)
        now = sorted(now + [(30, "d30", "2024-01-01")])
        assert _rows(read_table(spark, full, config=config)) == now

        # A static overwrite with no rows empties its partition, for later snapshots only.
        before_empty = client.snapshot([full])
        txn_write(spark.createDataFrame([], "id long, payload string"), DB, "events", config=config,
                  mode="overwrite", partition={"ds": "2024-01-02"})
        assert (root / "ds=2024-01-02" / "base_0000005").is_dir()
        assert _rows(read_table(spark, full, config=config)) == [r for r in now if r[2] != "2024-01-02"]
        assert _rows(read_table(spark, full, snapshot=before_empty, config=config)) == now
        _no_open_txns_or_locks(client)


def test_read_table_reads_a_partition_at_a_location_of_its_own(spark: Any, gateway_address: str,
                                                               tmp_path: Path) -> None:
    root = tmp_path / "events"
    config = ClientConfig(gateway_address)
    full = f"{DB}.events"
    schema = "id long, payload string, ds string"
    with GatewayClient(config) as client:
        create_table(client, root)
        txn_write(spark.createDataFrame([(1, "x", "2024-01-01"), (2, "y", "a b/c")], schema), DB, "events",
                  config=config)
        # Move one partition elsewhere, as ALTER TABLE ... PARTITION ... SET LOCATION does.
        with client.transaction() as txn:
            read = txn.table_snapshot(DB, "events").read_context()
            (p,) = client.get_partitions_by_names(DB, "events", ["ds=2024-01-01"], read)
            elsewhere = tmp_path / "elsewhere" / "day1"
            os.renames(local_path(p.sd.location), elsewhere)
            moved = pb.Partition(values=list(p.values), sd=p.sd, parameters=p.parameters)
            moved.sd.location = f"file://{elsewhere}"
            client.alter_partitions(DB, "events", [moved], txn_id=txn.id)
        frame = read_table(spark, full, config=config)
        assert _rows(frame) == [(1, "x", "2024-01-01"), (2, "y", "a b/c")]
        plan = plan_table_read(process_client(config), full)
        assert {p.name: p.format for p in plan.locations} == {"ds=2024-01-01": PARQUET, "ds=a b%2Fc": PARQUET}


def test_an_unpartitioned_table_is_appended_to_overwritten_and_read(spark: Any, gateway_address: str,
                                                                     tmp_path: Path) -> None:
    root = tmp_path / "flat"
    config = ClientConfig(gateway_address)
    full = f"{DB}.flat"
    schema = "id long, payload string"
    with GatewayClient(config) as client:
        create_table(client, root, table="flat", keys=())
        txn_write(spark.createDataFrame([(1, "a"), (2, "b")], schema), DB, "flat", config=config)
        txn_write(spark.createDataFrame([(3, "c")], schema), DB, "flat", config=config)
        before = client.snapshot([full])
        result = txn_write(spark.createDataFrame([(4, "d")], schema), DB, "flat", config=config, mode="overwrite")
        assert result.added == [] and [Path(d).name for d in result.delta_dirs] == ["base_0000003"]
        assert sorted(p.name for p in root.iterdir()) == ["base_0000003", "delta_0000001_0000001",
                                                         "delta_0000002_0000002"]
        assert _rows(read_table(spark, full, config=config)) == [(4, "d")]
        assert _rows(read_table(spark, full, snapshot=before, config=config)) == [(1, "a"), (2, "b"), (3, "c")]
        with pytest.raises(ValueError, match="no partition keys"):
            read_table(spark, full, filter="id = 1", config=config)
        _no_open_txns_or_locks(client)


def test_text_input_is_parsed_as_the_table_types_and_a_bad_value_is_named(spark: Any) -> None:
    from pyspark.sql import types as T

    table = pb.Table(db_name=DB, name="t", columns=[pb.FieldSchema(name="id", type="bigint"),
                                                    pb.FieldSchema(name="payload", type="string")],
                     partition_keys=[pb.FieldSchema(name="ds", type="date")])
    text = "id string, payload string, ds string"  # what CSV input reads as
    good = parse_text_columns(spark.createDataFrame([("1", "7", "2024-01-01"), (None, "x", "2024-01-02")], text),
                              table)
    assert [(f.name, f.dataType) for f in good.schema.fields] == [
        ("id", T.LongType()), ("payload", T.StringType()), ("ds", T.DateType())]
    assert [tuple(r) for r in good.orderBy("payload").collect()] == [
        (1, "7", dt.date(2024, 1, 1)), (None, "x", dt.date(2024, 1, 2))]
    bad = spark.createDataFrame([("1", "a", "2024-01-01"), ("not-a-number-0", "b", "2024-02-30")], text)
    with pytest.raises(SchemaMismatch, match=r"1 value\(s\) of 'id' are not bigint \(e.g. 'not-a-number-0'\); "
                                             r"1 value\(s\) of 'ds' are not date"):
        parse_text_columns(bad, table)


def test_data_written_before_formats_were_recorded_is_read_and_gets_its_format_with_the_next_write(
    spark: Any, gateway_address: str, tmp_path: Path,
) -> None:
    root = tmp_path / "events"
    config = ClientConfig(gateway_address)
    full = f"{DB}.events"
    schema = "id long, payload string"
    with GatewayClient(config) as client:
        create_table(client, root)
        with client.transaction() as txn:  # as the earlier write job did: no format anywhere
            w = txn.allocate_write_id(DB, "events")
            (p,) = client.add_partitions(DB, "events", [pb.Partition(values=["2024-01-01"])], txn_id=txn.id)
            spark.createDataFrame([(1, "old")], schema).write.parquet(f"{p.sd.location}/delta_{w:07d}_{w:07d}")
        before = client.snapshot([full])
        old_read = before.read_context(full)
        assert client.get_table(DB, "events", old_read).sd.input_format == ""
        assert _rows(read_table(spark, full, config=config)) == [(1, "old", "2024-01-01")]  # by the files' suffix

        txn_write(spark.createDataFrame([(2, "new", "2024-01-01"), (3, "new", "2024-01-02")], f"{schema}, ds string"),
                  DB, "events", config=config)
        snap = client.snapshot([full])
        read = snap.read_context(full)
        assert client.get_table(DB, "events", read).sd.input_format == PARQUET.input_format
        parts = client.get_partitions_by_names(DB, "events", ["ds=2024-01-01", "ds=2024-01-02"], read)
        assert [(q.name, q.sd.serde.serialization_lib) for q in parts] == [("ds=2024-01-01", PARQUET.serde),
                                                                           ("ds=2024-01-02", PARQUET.serde)]
        # Recorded under the write's txn: the older snapshot still sees the definitions it saw.
        assert client.get_table(DB, "events", old_read).sd.input_format == ""
        (old_p,) = client.get_partitions_by_names(DB, "events", ["ds=2024-01-01"], old_read)
        assert old_p.sd.input_format == ""
        assert _rows(read_table(spark, full, config=config)) == [
            (1, "old", "2024-01-01"), (2, "new", "2024-01-01"), (3, "new", "2024-01-02")]
        _no_open_txns_or_locks(client)
