"""Hive's naming rules: identifiers, column types, partition values and partition names.

Partition names are `k1=v1/k2=v2`, keys and values escaped as Hive's `FileUtils.escapePathName`
does (a fixed set of characters becomes `%XX`, upper-case hex), so a name is also a relative path.
Database, table, column and partition-key names are case-insensitive and normalised to lower case.
"""

from __future__ import annotations

import datetime as _dt
import functools
import re
import warnings
from decimal import Decimal, InvalidOperation
from typing import Mapping, Protocol, Sequence

from hive.errors import BadPartitionName, InvalidArgument, ValueNotWhitelisted
from hive.jdo_regex import like_of_java_regex
from hive.limits import PARTITION_NAME, check_text, preview
from hive.schema import FieldSchema
from hive.wildcard import LikePattern

DEFAULT_PARTITION_NAME = "__HIVE_DEFAULT_PARTITION__"
DEFAULT_DATABASE_NAME = "default"  # always there: created at start, never dropped (Hive's HMSHandler)
MAX_IDENTIFIER_LENGTH = 128  # DBS.NAME and the other identifier columns of Hive's schema
MAX_COLUMN_NAME_LENGTH = 767  # COLUMNS_V2.COLUMN_NAME

DEFAULT_CATALOG_NAME = "hive"  # Hive's metastore.catalog.default: the one catalog this metastore has
CATALOG_MARKER, CATALOG_SEPARATOR, EMPTY_DATABASE_MARKER = "@", "#", "!"  # Hive's MetaStoreUtils constants
_IDENTIFIER = re.compile(r"[A-Za-z0-9_]+")  # MetaStoreUtils.validateName: [\w_]+ (ASCII)
_CHARS_TO_ESCAPE = frozenset(
    [chr(c) for c in range(0x00, 0x20)]
    + ['"', "#", "%", "'", "*", "/", ":", "=", "?", "\\", "\x7f", "{", "[", "]", "^"]
)
# Hive 3's TIMESTAMP WITH LOCAL TIME ZONE is kept under its serde name, as Hive 3 and 4 and Iceberg's
# HiveCatalog (an Iceberg timestamptz column) write it; Hive 2.3's metastore accepts it too (it checks a
# type's first word only).
_PRIMITIVE_TYPES = frozenset(
    ["tinyint", "smallint", "int", "integer", "bigint", "float", "double", "double precision", "decimal", "numeric",
     "boolean", "string", "varchar", "char", "date", "timestamp", "timestamp with local time zone", "binary",
     "interval_year_month", "interval_day_time", "void"]
)
# Hive's MetaStoreUtils.TYPE_FROM_DESERIALIZER: the type of a column its serde describes, which Hive's metastore
# takes as any column's or partition key's type (validateColumnType's one exception to its type names). Spark
# stores a data source table Hive cannot read with a partition column of a type Hive has not (TIMESTAMP_NTZ)
# so typed (Hive Metastore 2.3.10 stores it; no filter compares such a key).
TYPE_FROM_DESERIALIZER = "<derived from deserializer>"
_PARAMETERISED = re.compile(r"(decimal|numeric|varchar|char)\s*\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)")
_INT_RANGES = {"tinyint": 8, "smallint": 16, "int": 32, "integer": 32, "bigint": 64}


def normalize_identifier(name: str, what: str) -> str:
    """Validate a database, table or partition-key name and return it in lower case."""
    if not name:
        raise InvalidArgument(f"{what} name must not be empty")
    if len(name) > MAX_IDENTIFIER_LENGTH:
        raise InvalidArgument(f"{what} name {preview(name, 40)} is longer than {MAX_IDENTIFIER_LENGTH} characters")
    if not _IDENTIFIER.fullmatch(name):
        raise InvalidArgument(
            f"{what} name {name!r} is not valid: use letters, digits and underscores only (Hive's [\\w_]+)"
        )
    return name.lower()


def table_key(db_name: str, table_name: str) -> tuple[str, str]:
    """A table's key, as the cache and the store's row locks order tables: (database, table), validated
    and lower-cased."""
    return normalize_identifier(db_name, "database"), normalize_identifier(table_name, "table")


def split_catalog(name: str) -> tuple[str | None, str | None]:
    """Hive's MetaStoreUtils.parseDbName: (catalog, database) of a database name as Hive 3's and 4's
    clients send it in the calls whose arguments have no catalog of their own, `@cat#db`
    (prependCatalogToDbName); `@cat#` names no database (null: every one, where a pattern is meant),
    `@cat#!` the empty name. A name without the marker is (None, name): no catalog named."""
    if not name.startswith(CATALOG_MARKER):
        return None, name
    if name.endswith(CATALOG_SEPARATOR):
        return name[1:-1], None
    if name.endswith(CATALOG_SEPARATOR + EMPTY_DATABASE_MARKER):
        return name[1:-2], ""
    catalog, sep, database = name[1:].partition(CATALOG_SEPARATOR)
    if not sep:
        raise InvalidArgument(f"{preview(name)} is prepended with the catalog marker but does not appear to have "
                              "a catalog name in it")
    return catalog, database


def normalize_column_name(name: str) -> str:
    """A column's name in lower case. Hive's metastore takes any text as a column's name since quoted
    identifiers (HIVE-6013: its validateColumnName accepts every name), lower-cased, not trimmed: Spark's
    data source tables have columns named `a:b`, `c,d` or `my col`, which Hive 2.3.10 stores as sent (a
    table it refused would be stored in Spark's own form instead, unreadable by Hive). Only an empty name,
    which Hive stores too, is refused here, and one longer than Hive's COLUMN_NAME (a NUL is refused with
    every other text: hive/limits.py)."""
    if not name or len(name) > MAX_COLUMN_NAME_LENGTH:
        raise InvalidArgument(f"column name {preview(name, 40)} must have 1 to {MAX_COLUMN_NAME_LENGTH} characters")
    return name.lower()


def normalize_partition_key(name: str) -> str:
    """A partition key's name in lower case: any text, as for columns (normalize_column_name), up to
    Hive's PARTITION_KEYS.PKEY_NAME width. Spark's data source tables are partitioned by columns named
    `event date` or `k-1` as readily as by `ds`; Hive 2.3.10 stores them lower-cased and escapes them in
    partition names and directories (`a%3Ab=x` of key `a:b`, as a value is: make_partition_name). A filter
    cannot name such a key (its grammar's identifiers are words), as in Hive. Only an empty name, which
    would make names no `key=value` reading can split, is refused here (Hive stores that too)."""
    if not name:
        raise InvalidArgument("partition key name must not be empty")
    if len(name) > MAX_IDENTIFIER_LENGTH:
        raise InvalidArgument(f"partition key name {preview(name, 40)} is longer than {MAX_IDENTIFIER_LENGTH} "
                              "characters")
    return name.lower()


def normalize_type(type_name: str, *, primitive_only: bool = False) -> str:
    """Check a Hive type name (primitive, parameterised, or complex) and return it in lower case."""
    t = " ".join(type_name.strip().lower().split())
    if not t:
        raise InvalidArgument("column type must not be empty")
    if t in _PRIMITIVE_TYPES or t == TYPE_FROM_DESERIALIZER or _PARAMETERISED.fullmatch(t):
        return t
    if not primitive_only and re.fullmatch(r"(array|map|struct|uniontype)<.+>", t) and t.count("<") == t.count(">"):
        return t
    kind = "partition key type" if primitive_only else "column type"
    only = " (primitive types only)" if primitive_only else ""
    raise InvalidArgument(f"{kind} {preview(type_name)} is not a Hive type{only}")


def escape_path_name(s: str) -> str:
    """Hive's FileUtils.escapePathName."""
    return "".join(f"%{ord(c):02X}" if c in _CHARS_TO_ESCAPE else c for c in s)


def unescape_path_name(s: str) -> str:
    """Hive's FileUtils.unescapePathName: `%XX` with two hex digits decodes, anything else is literal."""
    out: list[str] = []
    i = 0
    while i < len(s):
        c = s[i]
        if c == "%" and i + 2 < len(s) and _is_hex(s[i + 1 : i + 3]):
            out.append(chr(int(s[i + 1 : i + 3], 16)))
            i += 3
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _is_hex(s: str) -> bool:
    return len(s) == 2 and all(c in "0123456789abcdefABCDEF" for c in s)


class NamedKey(Protocol):
    """A partition key as far as its name goes: `store.models.FieldSchema` or the protobuf FieldSchema."""

    @property
    def name(self) -> str: ...


def make_partition_name(keys: Sequence[NamedKey], values: Sequence[str]) -> str:
    """Hive's Warehouse.makePartName: `k1=v1/k2=v2` with keys and values escaped."""
    if len(keys) != len(values):
        raise InvalidArgument(
            f"partition has {len(values)} values but the table has {len(keys)} partition keys "
            f"({', '.join(k.name for k in keys)})"
        )
    name = "/".join(f"{escape_path_name(k.name)}={escape_path_name(v)}" for k, v in zip(keys, values))
    if len(name) > PARTITION_NAME:  # a name every read by name refuses (parse_partition_name) is never made
        raise InvalidArgument(
            f"the partition name of these values has {len(name)} characters escaped, more than the limit of "
            f"{PARTITION_NAME} (each character Hive escapes in a path, such as '/', ':' or '%', takes three): "
            f"{preview(name, 40)}; use shorter values"
        )
    return name


def parse_partition_name(keys: Sequence[FieldSchema], name: str) -> tuple[str, ...]:
    """Split a partition name into its unescaped values, checking it names exactly the table's keys
    in order; the name is matched case-insensitively on the keys, as Hive does."""
    check_text(name, "partition name", PARTITION_NAME)
    parts = name.split("/")
    if len(parts) != len(keys):
        raise BadPartitionName(
            f"partition name {preview(name)} has {len(parts)} components but the table's partition keys are "
            f"{'/'.join(k.name for k in keys)}"
        )
    values: list[str] = []
    for part, key in zip(parts, keys):
        k, sep, v = part.partition("=")
        if not sep or unescape_path_name(k).lower() != key.name:
            raise BadPartitionName(
                f"partition name {preview(name)} does not match the partition keys {'/'.join(k.name for k in keys)}: "
                f"expected '{key.name}=<value>' where it has {preview(part, 80)}"
            )
        values.append(unescape_path_name(v))
    return tuple(values)


_SPEC_COMPONENT = re.compile(r"([^/]+)=([^/]+)")


def partition_spec_from_name(name: str) -> dict[str, str]:
    """Hive's Warehouse.makeSpecFromName, without a table: each `key=value` component of a partition
    name, unescaped, in order. As Hive's, a component that is not `key=value` is left out (so '' and
    'bogus' give nothing), and a key named twice keeps its first place and its last value."""
    check_text(name, "partition name", PARTITION_NAME)
    spec: dict[str, str] = {}
    for component in name.split("/"):
        matched = _SPEC_COMPONENT.fullmatch(component)
        if matched:
            spec[unescape_path_name(matched.group(1))] = unescape_path_name(matched.group(2))
    return spec


def canonical_partition_name(keys: Sequence[FieldSchema], name: str) -> str:
    """The stored form of a caller's partition name (keys lower-cased, escaping canonical, typed
    values in their canonical form: `hr=07` names the partition `hr=7`). A value that does not fit
    its key is kept as given: no partition has it, so the name matches nothing."""
    values = parse_partition_name(keys, name)
    return make_partition_name(keys, [canonical_value(k.type, v) or v for k, v in zip(keys, values)])


def statistics_lookup_name(keys: Sequence[FieldSchema], name: str) -> tuple[str, bool]:
    """The name a read of column statistics by partition name looks up, and whether it fits a partition of
    the table. Hive's reads (get_partitions_statistics_req, get_aggr_stats_for) first convert each name
    (HMSHandler.lowerCaseConvertPartName: Warehouse.makeEscSpecFromName's `key=value` components, the
    others dropped, keys lower-cased), then match it exactly (Hive 2.3.10, probed: 'ds=4/junk' reads
    ds=4's statistics, 'junk', '=4' and 'ds=4/x=1' of a table keyed by ds read none). A name that fits the
    table's keys is answered in its stored form (canonical_partition_name); one that does not finds
    nothing, and is answered as Hive converted it (get_aggr_stats_for counts it among the partitions
    asked). '' is refused, as by Hive ('Partition name is invalid').
    """
    if not name:
        raise BadPartitionName("Partition name is invalid: '' (statistics are read by names of the form "
                               f"'{'/'.join(f'{k.name}=<value>' for k in keys) or 'key=<value>'}')")
    check_text(name, "partition name", PARTITION_NAME)
    spec: dict[str, str] = {}
    for component in name.split("/"):
        matched = _SPEC_COMPONENT.fullmatch(component)
        if matched:
            spec[matched.group(1).lower()] = matched.group(2)
    converted = "/".join(f"{key}={value}" for key, value in spec.items())
    try:
        return canonical_partition_name(keys, converted), True
    except BadPartitionName:
        return converted, False


def validate_partition_values(keys: Sequence[FieldSchema], values: Sequence[str]) -> tuple[str, ...]:
    """Check each value against its key's type and return the values in canonical form;
    `__HIVE_DEFAULT_PARTITION__` fits every type.

    Hive (`hive.typecheck.on.insert`, on by default) converts a typed key's value to the key's type
    and writes the converted value back, so `07`, `+7` and ` 7` of an int key all name the partition
    `7`: one partition, not four. Integral and boolean keys are canonicalised here; a value that
    does not convert is refused."""
    if len(keys) != len(values):
        raise InvalidArgument(
            f"partition has {len(values)} values but the table has {len(keys)} partition keys "
            f"({', '.join(k.name for k in keys)})"
        )
    out: list[str] = []
    for key, value in zip(keys, values):
        if value == "":
            raise InvalidArgument(f"partition value for key {key.name!r} must not be empty")
        canonical = canonical_value(key.type, value)
        if canonical is None:
            raise InvalidArgument(f"partition value {preview(value)} is not a valid {key.type} for key {key.name!r}")
        out.append(canonical)
    return tuple(out)


def matches_partial_values(values: Sequence[str], partial: Sequence[str]) -> bool:
    """Hive's partial partition specification (get_partitions_ps and its kin): a value per leading
    key, '' matching any value; the values are compared as given."""
    return all(want == "" or want == have for want, have in zip(partial, values))


def partial_name_prefix(keys: Sequence[FieldSchema], partial: Sequence[str]) -> str:
    """What the name of every partition a partial specification matches starts with: its leading run of
    given values as a name (`ds=1/` of `['1', '']`, `ds=1/hr=2` of `['1', '2']`); '' when the first is
    any. Partition names in sorted order hold the matches of a specification in one range from it."""
    count = 0
    while count < min(len(partial), len(keys)) and partial[count] != "":
        count += 1
    if not count:
        return ""
    prefix = make_partition_name(keys[:count], partial[:count])
    return prefix if count == len(keys) else prefix + "/"


def leading_partition_values(keys: Sequence[FieldSchema], spec: Mapping[str, str]) -> tuple[str, ...]:
    """The values of a partition specification that names a table's first keys (Hive's EXCHANGE
    PARTITION names `ds` of `ds/hr`, or both), in key order and canonical form: each key named must be
    one of the table's, with a value, and together they are the first keys, none skipped."""
    names = [k.name for k in keys]
    unknown = sorted(k for k in spec if k not in names)
    if not spec or unknown:
        raise InvalidArgument(f"the partition specification {preview(str(dict(spec)))} must name the first of the "
                              f"partition keys {'/'.join(names)} (keys are in lower case)"
                              + (f"; {', '.join(map(preview, unknown))} is not one" if unknown else ""))
    count = len(spec)
    if set(spec) != set(names[:count]):
        raise InvalidArgument(f"the partition specification names {', '.join(k for k in names if k in spec)} but "
                              f"not the keys before them: it must name the first of {'/'.join(names)}, none skipped")
    return validate_partition_values(keys[:count], [spec[k] for k in names[:count]])


def canonical_value(type_name: str, value: str) -> str | None:
    """`value` in the canonical form of its key's type, or None when it does not fit the type."""
    if value == DEFAULT_PARTITION_NAME:
        return value
    base = type_name.split("(")[0].strip()
    if base in _INT_RANGES:
        text = value.strip()
        if not re.fullmatch(r"[+-]?[0-9]+", text):
            return None
        number, limit = int(text), 1 << (_INT_RANGES[base] - 1)
        return str(number) if -limit <= number < limit else None
    if base == "boolean":
        lowered = value.strip().lower()
        return lowered if lowered in ("true", "false") else None
    return value if _value_fits(type_name, value) else None


def _value_fits(type_name: str, value: str) -> bool:
    base = type_name.split("(")[0].strip()
    if base in ("float", "double", "double precision", "decimal", "numeric"):
        try:
            number = Decimal(value.strip())
        except InvalidOperation:
            return False
        # Java's Double.parseDouble takes NaN and Infinity; Hive's decimal (HiveDecimal) does not.
        return number.is_finite() or base in ("float", "double", "double precision")
    if base == "date":
        try:
            _dt.date.fromisoformat(value)
        except ValueError:
            return False
        return bool(re.fullmatch(r"\d{4}-\d{2}-\d{2}", value))
    if base == "timestamp":
        try:
            _dt.datetime.fromisoformat(value)
        except ValueError:
            return False
        return True
    m = _PARAMETERISED.fullmatch(type_name)
    if m and m.group(1) in ("varchar", "char"):
        return len(value) <= int(m.group(2))
    return True


def whitelist_pattern(text: str) -> re.Pattern[str] | None:
    """hive.metastore.partition.name.whitelist.pattern, compiled; None when empty (every value is allowed).
    Java and Python read the common syntax alike; Java's class intersection (`[a-z&&[^e]]`), which
    Python would read as literal characters, is refused. Raises ValueError saying why."""
    if not text:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)  # Python's "Possible set intersection" and the like
        try:
            return re.compile(text)
        except FutureWarning as e:
            raise ValueError(f"{text!r} uses Java's character class operations (&&, nested classes), which Python's "
                             f"engine reads otherwise ({e}); write the class out") from None
        except re.error as e:
            raise ValueError(f"{text!r} is not a regular expression: {e}") from None


def check_whitelisted(values: Sequence[str], pattern: re.Pattern[str] | None) -> None:
    """Hive's rule for a partition's values when the whitelist pattern is set: each must match it whole.
    Raises ValueNotWhitelisted (an InvalidArgument) naming the first that does not."""
    if pattern is None:
        return
    for value in values:
        if pattern.fullmatch(value) is None:
            raise ValueNotWhitelisted(
                f"partition value {preview(value)} contains a character not matched by the whitelist pattern "
                f"{pattern.pattern!r} (hive.metastore.partition.name.whitelist.pattern)")


_FILE_SYSTEM = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://([^/]*)/?")


def check_default_fs(default_fs: str) -> None:
    """fs.defaultFS as Hadoop writes it: a scheme and an authority, no path (`file:///`,
    `hdfs://namenode:8020`, `s3a://bucket`). Raises ValueError saying what is wrong."""
    if _FILE_SYSTEM.fullmatch(default_fs) is None:
        raise ValueError(f"{preview(default_fs)} is not a file system URI (examples: file:///, hdfs://namenode:8020)")


def qualified_location(location: str, default_fs: str) -> str:
    """A location as Hive's metastore stores the one a client sends (Warehouse.getDnsPath, for a database,
    a table and a partition, created or altered): an absolute path without a scheme takes the default file
    system's scheme and authority (fs.defaultFS `file:///` makes `/p` `file:/p`, `hdfs://nn:8020` makes it
    `hdfs://nn:8020/p`), and an empty authority is dropped as Hadoop's Path prints it (`file:///p` is
    `file:/p`). Anything else is kept as sent: empty (none given), a relative path (the store refuses
    it), a location with its scheme and authority."""
    if location.startswith("/") and not location.startswith("//"):
        match = _FILE_SYSTEM.fullmatch(default_fs)
        assert match is not None, "fs.defaultFS is checked at start (check_default_fs)"
        scheme, authority = match.groups()
        return f"{scheme}:{'//' + authority if authority else ''}{location}"
    scheme, _ = split_location(location)
    after = location[len(scheme) + 1:]
    if scheme and after.startswith("///"):
        return f"{location[:len(scheme)]}:{after[2:]}"
    return location


def split_location(location: str) -> tuple[str, str]:
    """(scheme in lower case, path) as Hadoop's Path splits a location: a scheme is what comes before a
    `:` that precedes every `/`; an authority after `//` is skipped."""
    colon, slash = location.find(":"), location.find("/")
    scheme, rest = ("", location) if colon == -1 or -1 < slash < colon else (location[:colon], location[colon + 1:])
    if rest.startswith("//"):
        end = rest.find("/", 2)
        rest = rest[end:] if end != -1 else "/"
    return scheme.lower(), rest


def default_location(parent: str, child: str) -> str:
    """Where Hive's Warehouse puts an object created without a location: a database at
    `<warehouse>/<name>.db`, a table at `<database location>/<name>`, a partition at
    `<table location>/<partition name>` (the child named as the caller says)."""
    return f"{parent.rstrip('/')}/{child}"


def matches_hive_pattern(name: str, pattern: str) -> bool:
    """Hive's SHOW TABLES/DATABASES/FUNCTIONS pattern, as its ObjectStore runs it (appendPatternCondition):
    `|` separates alternatives, each has its `*` made `.*` and is then matched by JDOQL's String.matches,
    which DataNucleus runs as SQL LIKE (hive/jdo_regex.py): `*` and `.*` match any run, `.` one
    character, every other character itself; case-insensitive. So Hive 4's default pattern `.*` (which
    becomes `..*`) matches every name. An empty pattern matches everything. Linear in the name for each
    alternative (hive/wildcard.py), whatever the pattern."""
    if not pattern or pattern == "*":
        return True
    lowered = name.lower()
    return any(alternative.fullmatch(lowered) for alternative in _pattern_alternatives(pattern))


@functools.lru_cache(maxsize=256)  # a listing matches every name against one pattern: translate it once
def _pattern_alternatives(pattern: str) -> tuple[LikePattern, ...]:
    return tuple(LikePattern(like_of_java_regex(a.strip().replace("*", ".*"))) for a in pattern.lower().split("|"))
