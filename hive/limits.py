"""Bounds on free text: what a request may carry and how much of it a message may repeat.

Design note. Every string a client sends ends up in a PostgreSQL `text` or `jsonb` value, in the
notification log, in the cache and in later replies. PostgreSQL cannot store a NUL character in
either, and nothing else bounds a field but the request size, so one 5 MB user name makes every
later ShowTransactions reply too large for a default client. Hence each free-text field has a
limit, taken from the width of the matching column in Hive's metastore schema where that width is
not known to be too small for real clients (Spark writes table parameters longer than Hive's 4000
characters, so parameter values get more), and no free text may hold a NUL. A refused value is
named in the error by its first `PREVIEW_CHARS` characters only: an error repeats what the caller
sent, and a message must stay small enough for gRPC's status metadata and a Thrift exception.

Pure: no I/O, standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping

from hive.errors import InvalidArgument

PREVIEW_CHARS = 200
"""How much of a refused value an error message quotes."""
MAX_MESSAGE_CHARS = 1000
"""The longest error message either protocol sends (longer ones are cut, the cut said)."""

# Hive's schema widths (package.jdo / hive-schema-*.sql), and where this gateway departs from them.
NAME = 128                  # DBS.NAME, TBLS.TBL_NAME, SERDES.NAME, TXNS.TXN_USER, HIVE_LOCKS.HL_USER
HOST = 255                  # TXNS.TXN_HOST is 128; a fully qualified host name may have 253
OWNER = 767                 # TBLS.OWNER
AGENT_INFO = 1024           # TXNS.TXN_AGENT_INFO is 128; engines send longer agent strings
DESCRIPTION = 4000          # DBS.DESC
LOCATION = 4000             # DBS.DB_LOCATION_URI, SDS.LOCATION
CLASS_NAME = 4000           # SDS.INPUT_FORMAT, SDS.OUTPUT_FORMAT, SERDES.SLIB
COLUMN_TYPE = 65536         # COLUMNS_V2.TYPE_NAME is MEDIUMTEXT in Hive 3: nested structs are long
COMMENT = 4000              # COLUMNS_V2.COMMENT is 256; Spark copies longer comments from its schema
PARAM_KEY = 256             # TABLE_PARAMS.PARAM_KEY
PARAM_VALUE = 65536         # TABLE_PARAMS.PARAM_VALUE is 4000 in Hive's schema, MEDIUMTEXT in newer ones
PARAMS_TOTAL = 1 << 20      # all keys and values of one map together: bounds every reply that carries it
VIEW_TEXT = 1 << 20         # TBLS.VIEW_ORIGINAL_TEXT / VIEW_EXPANDED_TEXT (MEDIUMTEXT)
PARTITION_VALUE = 1024      # PARTITION_KEY_VALS.PART_KEY_VAL is 256
PARTITION_NAME = 4000       # PARTITIONS.PART_NAME is 767 (escaped names of several long values need more)
# A page token is base64 of a partition name: PARTITION_NAME characters of up to 4 bytes each in UTF-8
# (21,336 characters), so that every name the gateway makes gives a token it takes back.
PAGE_TOKEN = 4 * -(-PARTITION_NAME * 4 // 3)
FILTER = 65536              # a partition filter's text
PATTERN = 4096              # a SHOW TABLES / SHOW DATABASES pattern
SNAPSHOT = 1 << 22          # a ValidWriteIdList / ValidTxnList string (one id per exception)
LIST_ITEMS = 1000           # entries of a repeated field that has no batch limit of its own (bucket columns ...)


def preview(value: str, limit: int = PREVIEW_CHARS) -> str:
    """`value` repr'd for a message, cut to `limit` characters with its length said."""
    if len(value) <= limit:
        return repr(value)
    return f"{value[:limit]!r}... ({len(value)} characters)"


def bounded_message(message: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """An error message cut to `limit` characters (the cut is marked)."""
    if len(message) <= limit:
        return message
    return message[:limit] + f"... ({len(message) - limit} more characters)"


def check_text(value: str, what: str, limit: int) -> str:
    """`value` unchanged when it has no NUL and at most `limit` characters; InvalidArgument otherwise."""
    if len(value) > limit:
        raise InvalidArgument(f"{what} has {len(value)} characters, more than the limit of {limit}: "
                              f"{preview(value, 40)}")
    if "\x00" in value:
        raise InvalidArgument(f"{what} contains a NUL character (\\x00), which no metastore text may hold: "
                              f"{preview(value)}")
    return value


def check_params(params: Mapping[str, str], what: str) -> Mapping[str, str]:
    """A parameter map: each key and value checked, and the whole map within `PARAMS_TOTAL`."""
    total = 0
    for key, value in params.items():
        check_text(key, f"{what} key", PARAM_KEY)
        if not key:
            raise InvalidArgument(f"{what}: a parameter key must not be empty")
        check_text(value, f"{what}[{preview(key, 40)}]", PARAM_VALUE)
        total += len(key) + len(value)
    if total > PARAMS_TOTAL:
        raise InvalidArgument(f"{what} hold {total} characters in all, more than the limit of {PARAMS_TOTAL}")
    return params


def check_count(count: int, what: str, limit: int = LIST_ITEMS) -> None:
    if count > limit:
        raise InvalidArgument(f"{what} has {count} entries, more than the limit of {limit}")
