import pytest
from hypothesis import given
from hypothesis import strategies as st

from hive import names as n
from hive.errors import BadPartitionName
from store.errors import InvalidArgument
from hive.schema import FieldSchema

KEYS = (FieldSchema("ds", "date"), FieldSchema("region", "string"))


def test_escaping_matches_hive_file_utils() -> None:
    assert n.escape_path_name("us/east=1") == "us%2Feast%3D1"
    assert n.escape_path_name("a:b#c%d'e*f?g\\h{i[j]k^l\"m") == "a%3Ab%23c%25d%27e%2Af%3Fg%5Ch%7Bi%5Bj%5Dk%5El%22m"
    assert n.escape_path_name("tab\there\x7f") == "tab%09here%7F"
    assert n.escape_path_name("plain value-1_ok.") == "plain value-1_ok."


@given(st.text())
def test_unescape_inverts_escape(value: str) -> None:
    assert n.unescape_path_name(n.escape_path_name(value)) == value


def test_unescape_leaves_invalid_escapes_alone() -> None:
    assert n.unescape_path_name("100%") == "100%"
    assert n.unescape_path_name("%zz") == "%zz"
    assert n.unescape_path_name("%41%2f") == "A/"


def test_partition_name_round_trip_and_case_insensitive_keys() -> None:
    name = n.make_partition_name(KEYS, ("2024-01-01", "us/east"))
    assert name == "ds=2024-01-01/region=us%2Feast"
    assert n.parse_partition_name(KEYS, "DS=2024-01-01/Region=us%2Feast") == ("2024-01-01", "us/east")
    assert n.canonical_partition_name(KEYS, "DS=2024-01-01/Region=us%2feast") == name


def test_spec_from_name_is_hive_warehouse_make_spec_from_name() -> None:
    """What Hive 2.3.10's partition_name_to_spec answers (tests/e2e/test_thrift_differential.py asks it)."""
    assert n.partition_spec_from_name("ds=2024-01-01/region=us%2Feast") == {"ds": "2024-01-01", "region": "us/east"}
    assert n.partition_spec_from_name("") == {} and n.partition_spec_from_name("bogus") == {}
    assert n.partition_spec_from_name("a=1/junk/b=2") == {"a": "1", "b": "2"}  # non key=value components skipped
    assert n.partition_spec_from_name("a=b=c") == {"a=b": "c"}  # the last '=' splits, as Hive's greedy pattern
    assert list(n.partition_spec_from_name("b=1/a=2/b=3").items()) == [("b", "3"), ("a", "2")]


@given(st.lists(st.tuples(st.text(min_size=1), st.text(min_size=1)), max_size=4, unique_by=lambda kv: kv[0]))
def test_spec_from_name_reads_back_any_escaped_name(pairs: list[tuple[str, str]]) -> None:
    name = "/".join(f"{n.escape_path_name(k)}={n.escape_path_name(v)}" for k, v in pairs)
    if len(name) <= 4000:
        assert n.partition_spec_from_name(name) == dict(pairs)


@pytest.mark.parametrize("bad", ["ds=2024-01-01", "region=x/ds=2024-01-01", "ds2024/region=x", "ds=1/region=x/extra=2"])
def test_partition_name_must_name_the_keys_in_order(bad: str) -> None:
    with pytest.raises(InvalidArgument):
        n.parse_partition_name(KEYS, bad)


@pytest.mark.parametrize(
    "type_, good, bad",
    [
        ("int", "42", "4.2"),
        ("tinyint", "-128", "128"),
        ("bigint", "9223372036854775807", "9223372036854775808"),
        ("date", "2024-02-29", "2023-02-29"),
        ("boolean", "true", "yes"),
        ("decimal(10,2)", "12.50", "twelve"),
        ("varchar(3)", "abc", "abcd"),
        ("timestamp", "2024-01-01 10:00:00", "yesterday"),
    ],
)
def test_partition_values_are_checked_against_key_types(type_: str, good: str, bad: str) -> None:
    keys = (FieldSchema("k", type_),)
    assert n.validate_partition_values(keys, (good,)) == (good,)
    assert n.validate_partition_values(keys, (n.DEFAULT_PARTITION_NAME,)) == (n.DEFAULT_PARTITION_NAME,)
    with pytest.raises(InvalidArgument, match="not a valid"):
        n.validate_partition_values(keys, (bad,))


@pytest.mark.parametrize("type_, given, canonical", [
    ("int", "+7", "7"), ("int", " 7", "7"), ("int", "07", "7"), ("int", "7 ", "7"), ("int", "-007", "-7"),
    ("bigint", "0000", "0"), ("smallint", "-0", "0"), ("boolean", "TRUE", "true"), ("boolean", "False", "false"),
    ("string", " 07", " 07"), ("date", "2024-01-01", "2024-01-01"),
])
def test_typed_partition_values_are_canonicalised_as_hive_typecheck_does(type_: str, given: str,
                                                                         canonical: str) -> None:
    keys = (FieldSchema("k", type_),)
    assert n.validate_partition_values(keys, (given,)) == (canonical,)
    assert n.canonical_partition_name(keys, f"k={n.escape_path_name(given)}") == f"k={n.escape_path_name(canonical)}"


def test_a_decimal_key_takes_no_nan_or_infinity_as_hive_decimal() -> None:
    for bad in ("NaN", "Infinity", "-inf"):
        with pytest.raises(InvalidArgument):
            n.validate_partition_values((FieldSchema("k", "decimal(10,2)"),), (bad,))
    assert n.validate_partition_values((FieldSchema("k", "double"),), ("NaN",)) == ("NaN",)


@pytest.mark.parametrize("bad", ["٧", "7.0", "1_000", "0x7", "", " "])
def test_int_partition_values_that_do_not_convert_are_refused(bad: str) -> None:
    with pytest.raises(InvalidArgument):
        n.validate_partition_values((FieldSchema("k", "int"),), (bad,))


def test_long_partition_names_and_values_are_refused_with_a_short_message() -> None:
    keys = (FieldSchema("k", "string"),)
    with pytest.raises(InvalidArgument) as err:
        n.parse_partition_name(keys, "k=" + "x" * 1_000_000)
    assert len(str(err.value)) < 400
    with pytest.raises(InvalidArgument, match="NUL"):
        n.parse_partition_name(keys, "k=a\x00b")


def test_identifiers_follow_hive_rules() -> None:
    assert n.normalize_identifier("Sales_2024", "table") == "sales_2024"
    for bad in ("", "has space", "dash-name", "dot.name", "x" * 129):
        with pytest.raises(InvalidArgument):
            n.normalize_identifier(bad, "table")


def test_columns_and_partition_keys_are_named_by_any_text_in_lower_case_as_hive_stores_them() -> None:
    for name in ("a:b", "c,d", "My Col", " x ", "k-1", "Ü", "a=b/c", "tab\there"):
        assert n.normalize_column_name(name) == name.lower()
        assert n.normalize_partition_key(name) == name.lower()
    for bad in ("", "x" * 768):
        with pytest.raises(InvalidArgument):
            n.normalize_column_name(bad)
    for bad in ("", "x" * 129):
        with pytest.raises(InvalidArgument):
            n.normalize_partition_key(bad)
    keys = [FieldSchema("event date", "string"), FieldSchema("a:b", "int")]
    name = n.make_partition_name(keys, ["2024-01-01", "1"])
    assert name == "event date=2024-01-01/a%3Ab=1"  # Hive 2.3.10's name of it (Warehouse.makePartName)
    assert n.parse_partition_name(keys, name) == ("2024-01-01", "1")


def test_types() -> None:
    assert n.normalize_type("ARRAY<INT>") == "array<int>"
    assert n.normalize_type("decimal(10, 2)") == "decimal(10, 2)"
    with pytest.raises(InvalidArgument):
        n.normalize_type("array<int>", primitive_only=True)
    with pytest.raises(InvalidArgument):
        n.normalize_type("uuid")
    # Hive's serde-described type: Spark's partition column of a type Hive has not (TIMESTAMP_NTZ).
    assert n.normalize_type("<derived from deserializer>", primitive_only=True) == "<derived from deserializer>"
    assert n.canonical_value("<derived from deserializer>", "2024-01-01 10:00:00") == "2024-01-01 10:00:00"


def test_hive_patterns() -> None:
    assert n.matches_hive_pattern("sales_orders", "sales*")
    assert n.matches_hive_pattern("Web", "sales*|web")
    assert not n.matches_hive_pattern("websales", "sales*|web")
    assert n.matches_hive_pattern("anything", "")
    assert n.matches_hive_pattern("t1", ".*")  # Hive 4's SHOW TABLES default
    assert n.matches_hive_pattern("t1", "T.")  # `.` one character
    assert not n.matches_hive_pattern("t", "t_") and not n.matches_hive_pattern("", ".*")


def test_a_partial_specifications_matches_are_one_range_of_sorted_names() -> None:
    """partial_name_prefix is what the cache bisects on: every name a specification matches starts with
    it, and with keys of prefixes of one another (1 and 10) or values Hive escapes, no other matching name
    lies outside the range."""
    from hive.names import make_partition_name, matches_partial_values, partial_name_prefix
    from hive.schema import FieldSchema
    keys = [FieldSchema("ds", "string"), FieldSchema("hr", "string"), FieldSchema("k", "string")]
    values = ["1", "10", "1/", "a=b", "a b", ""]
    partitions = sorted((make_partition_name(keys, v), v) for v in (
        (a, b, c) for a in values[:5] for b in values[:5] for c in ("x", "y")))
    names = [name for name, _ in partitions]
    for partial in (["1"], ["10", ""], ["1/", "a=b"], ["1", "10", "x"], ["", "1"], ["a b", "", "y"], []):
        prefix = partial_name_prefix(keys, partial)
        matching = [name for name, v in partitions if matches_partial_values(v, partial)]
        assert all(name.startswith(prefix) for name in matching), partial
        in_range = [name for name in names if name.startswith(prefix)]
        assert in_range == names[names.index(in_range[0]):names.index(in_range[-1]) + 1], partial  # one range
        assert matching == [name for name in in_range if name in matching], partial
    assert partial_name_prefix(keys, ["1", "", "x"]) == "ds=1/"
    assert partial_name_prefix(keys, ["1", "a=b", "x"]) == "ds=1/hr=a%3Db/k=x"
    assert partial_name_prefix(keys, ["", "2"]) == ""


def test_split_catalog_reads_names_as_hive_parse_db_name_does() -> None:
    assert n.split_catalog("db") == (None, "db")
    assert n.split_catalog("@hive#db") == ("hive", "db")
    assert n.split_catalog("@hive#") == ("hive", None)  # no database: every one, for a pattern
    assert n.split_catalog("@hive#!") == ("hive", "")  # the empty name
    assert n.split_catalog("@hive#a#b") == ("hive", "a#b")  # split once, as Hive's split(#, 2)
    with pytest.raises(InvalidArgument, match="catalog marker"):
        n.split_catalog("@hive")


@pytest.mark.parametrize(("location", "default_fs", "stored"), [
    ("/w/t", "file:///", "file:/w/t"),
    ("/w/t", "hdfs://namenode:8020", "hdfs://namenode:8020/w/t"),
    ("/w/t", "hdfs://namenode:8020/", "hdfs://namenode:8020/w/t"),
    ("file:///w/t", "hdfs://nn", "file:/w/t"),  # Hadoop's Path prints an empty authority so
    ("file:/w/t", "file:///", "file:/w/t"),
    ("hdfs://other/w", "file:///", "hdfs://other/w"),
    ("s3a://bucket/w", "file:///", "s3a://bucket/w"),
    ("", "file:///", ""),  # none given: the default location is the store's
    ("relative/w", "file:///", "relative/w"),
    ("//host/w", "file:///", "//host/w"),
])
def test_a_location_is_qualified_as_hive_stores_it(location: str, default_fs: str, stored: str) -> None:
    assert n.qualified_location(location, default_fs) == stored


@pytest.mark.parametrize("default_fs", ["", "/", "file:", "hdfs:/nn", "hdfs://nn/path", "nn:8020"])
def test_a_default_file_system_needs_a_scheme_and_an_authority_only(default_fs: str) -> None:
    with pytest.raises(ValueError, match="is not a file system URI"):
        n.check_default_fs(default_fs)


@pytest.mark.parametrize(("location", "split"), [
    ("/w/ds=10%3A00", ("", "/w/ds=10%3A00")),
    ("file:/w/ds=10%3A00", ("file", "/w/ds=10%3A00")),
    ("file:///w/a b#c?d", ("file", "/w/a b#c?d")),
    ("FILE://host/w", ("file", "/w")),
    ("hdfs://nn:8020/w", ("hdfs", "/w")),
    ("a/b:c", ("", "a/b:c")),
])
def test_a_location_splits_as_hadoops_path_reads_it(location: str, split: tuple[str, str]) -> None:
    """The path as it is, never URL-decoded: a partition directory Hive escaped is that directory."""
    assert n.split_location(location) == split


@pytest.mark.parametrize(("name", "looked_up"), [
    ("ds=2024-01-01/hr=7", ("ds=2024-01-01/hr=7", True)),
    ("DS=2024-01-01/Hr=07", ("ds=2024-01-01/hr=7", True)),  # keys lower-cased, a typed value canonical
    ("ds=2024-01-01/junk/hr=7", ("ds=2024-01-01/hr=7", True)),  # Hive drops a component that is not key=value
    ("ds=2024-01-01//hr=7/", ("ds=2024-01-01/hr=7", True)),
    ("ds=2024-01-01", ("ds=2024-01-01", False)),  # a key short: it fits no partition
    ("hr=7/ds=2024-01-01", ("hr=7/ds=2024-01-01", False)),
    ("junk", ("", False)),
    ("=x", ("", False)),
    ("ds=a=b/hr=1", ("ds=a%3Db/hr=1", True)),  # an unescaped '=' in a value: read as every name is read here
])
def test_a_statistics_read_looks_a_name_up_as_hive_converts_it(name: str, looked_up: tuple[str, bool]) -> None:
    keys = [FieldSchema("ds", "string"), FieldSchema("hr", "int")]
    assert n.statistics_lookup_name(keys, name) == looked_up


def test_a_statistics_read_refuses_an_empty_name_as_hive_does() -> None:
    with pytest.raises(BadPartitionName, match="Partition name is invalid"):
        n.statistics_lookup_name([FieldSchema("ds", "string")], "")
