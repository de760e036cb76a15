"""The write job's pure rules, without a SparkSession: Hive column types as Spark types, which casts
are safe, the DataFrame-against-table check, the format names in a storage descriptor, and the
directories a snapshot reads after an INSERT OVERWRITE."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark", reason="pyspark is in the dev extra: pip install -e '.[dev]'")

from pyspark.sql import types as T  # noqa: E402

from pipeline.acid import base_dir_name, choose_dirs, delta_dir_name  # noqa: E402
from pipeline.formats import ORC, PARQUET, format_from_files, format_of, with_format  # noqa: E402
from pipeline.schema import SchemaMismatch, UnsupportedType, can_up_cast, check_frame, spark_type  # noqa: E402
from protos.metastore.v1 import catalog_pb2 as pb  # noqa: E402
from hive.writeids import ValidWriteIdList  # noqa: E402


def _table(columns: list[tuple[str, str]], keys: tuple[tuple[str, str], ...] = (("ds", "string"),)) -> pb.Table:
    return pb.Table(db_name="lake", name="t", columns=[pb.FieldSchema(name=n, type=t) for n, t in columns],
                    partition_keys=[pb.FieldSchema(name=n, type=t) for n, t in keys])


@pytest.mark.parametrize("hive, spark", [
    ("bigint", T.LongType()), ("INT", T.IntegerType()), ("integer", T.IntegerType()), ("tinyint", T.ByteType()),
    ("double precision", T.DoubleType()), ("decimal", T.DecimalType(10, 0)), ("decimal(12, 2)", T.DecimalType(12, 2)),
    ("varchar(10)", T.StringType()), ("char(3)", T.StringType()), ("timestamp", T.TimestampType()),
    ("array<int>", T.ArrayType(T.IntegerType())), ("map<string,array<double>>",
                                                   T.MapType(T.StringType(), T.ArrayType(T.DoubleType()))),
    ("struct<a:int, b:struct<c:string>>", T.StructType([
        T.StructField("a", T.IntegerType()), T.StructField("b", T.StructType([T.StructField("c", T.StringType())]))])),
])
def test_hive_types_read_as_spark_types(hive: str, spark: T.DataType) -> None:
    assert spark_type(hive) == spark


@pytest.mark.parametrize("bad", ["uniontype<int,string>", "array<int", "map<string>", "int)", "", "decimal(x)"])
def test_types_this_job_cannot_map_are_refused_by_name(bad: str) -> None:
    with pytest.raises((UnsupportedType, ValueError)):
        spark_type(bad)


@pytest.mark.parametrize("source, target, ok", [
    (T.IntegerType(), T.LongType(), True), (T.FloatType(), T.DoubleType(), True),
    (T.ByteType(), T.ShortType(), True), (T.IntegerType(), T.DoubleType(), True),
    (T.IntegerType(), T.DecimalType(10, 0), True), (T.IntegerType(), T.DecimalType(9, 0), False),
    (T.DecimalType(5, 2), T.DecimalType(7, 3), True), (T.DecimalType(7, 3), T.DecimalType(7, 2), False),
    (T.DateType(), T.TimestampType(), True), (T.NullType(), T.LongType(), True),
    (T.ArrayType(T.IntegerType()), T.ArrayType(T.LongType()), True),
    # Refused: text into numbers, narrowing, and the lossy steps Spark's canUpCast allows.
    (T.StringType(), T.LongType(), False), (T.LongType(), T.IntegerType(), False),
    (T.DoubleType(), T.FloatType(), False), (T.LongType(), T.DoubleType(), False),
    (T.IntegerType(), T.FloatType(), False), (T.LongType(), T.StringType(), False),
    (T.TimestampType(), T.DateType(), False), (T.ArrayType(T.StringType()), T.ArrayType(T.LongType()), False),
])
def test_only_lossless_up_casts_pass(source: T.DataType, target: T.DataType, ok: bool) -> None:
    assert can_up_cast(source, target) is ok


def test_check_frame_maps_columns_case_insensitively_in_table_order() -> None:
    table = _table([("id", "bigint"), ("payload", "string")], (("ds", "date"), ("hr", "int")))
    schema = T.StructType([T.StructField("HR", T.IntegerType()), T.StructField("Payload", T.StringType()),
                           T.StructField("id", T.IntegerType())])
    plan = check_frame(schema, table, {"ds": "2024-01-01"})
    assert [(t.name, t.source, t.spark_type) for t in plan.data] == [
        ("id", "id", T.LongType()), ("payload", "Payload", T.StringType())]
    assert [(t.name, t.source, t.value) for t in plan.keys] == [("ds", None, "2024-01-01"), ("hr", "HR", None)]
    assert plan.static == ("2024-01-01",) and plan.key_names == ["ds", "hr"]


def test_check_frame_names_every_mismatch_in_one_message() -> None:
    table = _table([("id", "bigint"), ("payload", "string"), ("amount", "decimal(10,2)")])
    schema = T.StructType([T.StructField("id", T.StringType()), T.StructField("amount", T.DoubleType()),
                           T.StructField("ds", T.StringType()), T.StructField("extra", T.IntegerType())])
    with pytest.raises(SchemaMismatch) as caught:
        check_frame(schema, table)
    message = str(caught.value)
    for part in ("column id is bigint but the DataFrame's 'id' is string", "no column for column payload string",
                 "column amount is decimal(10,2) but the DataFrame's 'amount' is double",
                 "'extra' is not a column of the table", "lake.t", "nothing was written"):
        assert part in message, (part, message)
    assert len(message) < 1000


@pytest.mark.parametrize("static, error", [
    ({"hr": "1"}, "must be the first keys"), ({"ds": "not-a-date"}, "not a valid date"),
    ({"nope": "1"}, "not partition keys"),
])
def test_static_partitions_are_a_valid_prefix(static: dict[str, str], error: str) -> None:
    table = _table([("id", "bigint")], (("ds", "date"), ("hr", "int")))
    schema = T.StructType([T.StructField("id", T.LongType()), T.StructField("hr", T.IntegerType()),
                           T.StructField("ds", T.DateType())])
    with pytest.raises(SchemaMismatch, match=error):
        check_frame(schema, table, static)


def test_columns_differing_only_in_case_are_refused() -> None:
    schema = T.StructType([T.StructField("id", T.LongType()), T.StructField("ID", T.LongType()),
                           T.StructField("ds", T.StringType())])
    with pytest.raises(SchemaMismatch, match="differ only in case"):
        check_frame(schema, _table([("id", "bigint")]))


def test_formats_are_recorded_and_recognised_by_hive_class_names() -> None:
    sd = with_format(pb.StorageDescriptor(location="file:/w/t", serde=pb.SerDeInfo(parameters={"k": "v"})), ORC)
    assert (sd.input_format, sd.output_format, sd.serde.serialization_lib) == (
        "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat",
        "org.apache.hadoop.hive.ql.io.orc.OrcSerde")
    assert sd.location == "file:/w/t" and dict(sd.serde.parameters) == {"k": "v"}
    assert format_of(sd) is ORC and format_of(pb.StorageDescriptor()) is None
    assert format_of(pb.StorageDescriptor(input_format=PARQUET.input_format)) is PARQUET
    with pytest.raises(ValueError, match="Parquet and ORC only"):
        format_of(pb.StorageDescriptor(input_format="org.apache.hadoop.mapred.TextInputFormat"))
    assert format_from_files(["/t/ds=1/delta_1_1/part-0.snappy.parquet"]) is PARQUET
    assert format_from_files(["/t/ds=1/delta_1_1/part-0"]) is None


def test_an_overwrite_base_hides_older_deltas_only_from_snapshots_that_see_it() -> None:
    names = [delta_dir_name(1), delta_dir_name(2), base_dir_name(3), delta_dir_name(4)]
    before = ValidWriteIdList.parse("lake.t:2:9223372036854775807::")
    after = ValidWriteIdList.parse("lake.t:4:9223372036854775807::")
    open_overwrite = ValidWriteIdList.parse("lake.t:4:3:3:")  # write id 3 still open: its base is not read
    aborted_overwrite = ValidWriteIdList.parse("lake.t:4:9223372036854775807::3")
    for snapshot, base, deltas in ((before, None, [1, 2]), (after, 3, [4]), (open_overwrite, None, [1, 2, 4]),
                                   (aborted_overwrite, None, [1, 2, 4])):
        chosen_base, chosen, _ = choose_dirs(names, snapshot)
        assert (chosen_base.max_write_id if chosen_base else None) == base, snapshot
        assert [d.max_write_id for d in chosen] == deltas, snapshot
