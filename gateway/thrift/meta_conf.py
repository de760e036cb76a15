"""Hive's getMetaConf and setMetaConf: the few metastore settings a client may read and set for its own
connection (`set metaconf:KEY=VALUE` in Hive's CLI and Beeline; client libraries that turn off
`hive.metastore.client.capability.check` before talking to a newer metastore). As Hive 2.3.10 answers
(probed; tests/e2e/test_thrift_differential.py):

- the keys are Hive 2.3's user-settable metastore variables below, by their exact names; any other is
  a MetaException "Invalid configuration key". As Hive 3's and 4's, each is also taken by its
  MetastoreConf name (`metastore.try.direct.sql` for `hive.metastore.try.direct.sql`), which is what
  their clients send, and two more are known: `metastore.expression.proxy` and
  `hive.metastore.disallow.incompatible.col.type.changes` (below);
- a value set lasts as long as its connection, and no other connection sees it; a read answers the
  connection's value, else the gateway's own setting of that name, else Hive's default;
- only the socket time-out is checked (a duration of more than 0); the others are kept as sent.

Setting one of Hive 2.3's changes nothing the gateway does, as in Hive 2.3: the direct-SQL switches choose between
two ways Hive reads its own database (the gateway has one), the socket time-out and the capability
check are the client's own, and the partition whitelist Hive checks values against is the server's
(a connection's pattern is answered back, not applied).

Two settings change what the gateway does. Hive 3's and 4's
`hive.metastore.disallow.incompatible.col.type.changes` decides, for the connection's alters, whether a column
may change to a type its data does not convert to (Hive 2.3 refuses the key). And Hive 4's
`metastore.expression.proxy`: how the connection's partition expressions are read. Hive 4's MSCK REPAIR
sets it to MsckPartitionExpressionProxy before anything else (and fails when it cannot), then names the
partitions it drops as text
(hive/msck_expr.py). This gateway reads that and Hive's own PartitionExpressionForMetastore (the
default: hive/kryo_expr.py); any other class is refused.
"""

from __future__ import annotations

import contextvars
from typing import Callable

from hive import durations
from hive.msck_expr import MSCK_EXPRESSION_PROXY
from store.errors import InvalidArgument

SOCKET_TIMEOUT = "hive.metastore.client.socket.timeout"
EXPRESSION_PROXY = "hive.metastore.expression.proxy"
COLUMN_TYPE_CHECK = "hive.metastore.disallow.incompatible.col.type.changes"
_HIVE_EXPRESSION_PROXY = "org.apache.hadoop.hive.ql.optimizer.ppr.PartitionExpressionForMetastore"

# Hive 2.3's metaConfVars and their defaults.
HIVE_DEFAULTS = {
    "hive.metastore.try.direct.sql": "true",
    "hive.metastore.try.direct.sql.ddl": "true",
    SOCKET_TIMEOUT: "600s",
    "hive.metastore.partition.name.whitelist.pattern": "",
    "hive.metastore.client.capability.check": "false",
    EXPRESSION_PROXY: _HIVE_EXPRESSION_PROXY,  # Hive 3's and 4's
    COLUMN_TYPE_CHECK: "true",  # Hive 3's and 4's
}
_PROXIES_READ = (_HIVE_EXPRESSION_PROXY, MSCK_EXPRESSION_PROXY)

# Hive 3's and 4's MetastoreConf names of the same settings (its varname beside the hiveName above).
_HIVE_PREFIX = "hive.metastore."
_BY_METASTORE_NAME = {"metastore." + key[len(_HIVE_PREFIX):]: key for key in HIVE_DEFAULTS}

# The values a connection set; the server gives each connection (its own task) a fresh map.
_connection_values: contextvars.ContextVar[dict[str, str]] = contextvars.ContextVar("thrift_meta_conf")


def begin_connection() -> None:
    _connection_values.set({})


def get(key: str, gateway_setting: Callable[[str], str | None]) -> str:
    """The connection's value of `key`, else `gateway_setting(key)` when the gateway has one, else Hive's."""
    key = _checked_key(key)
    set_here = _connection_values.get().get(key)
    if set_here is not None:
        return set_here
    own = gateway_setting(key)
    return own if own is not None else HIVE_DEFAULTS[key]


def set_for_connection(key: str, value: str) -> None:
    key = _checked_key(key)
    if key == SOCKET_TIMEOUT:
        try:
            seconds = durations.parse_duration(value)
        except durations.DurationError as e:
            raise InvalidArgument(f"Invalid configuration value {value} for key {key}: {e}") from None
        if seconds <= 0:
            raise InvalidArgument(f"Invalid configuration value {value} for key {key}: the time-out must be more "
                                  "than 0")
    if key == EXPRESSION_PROXY and value not in _PROXIES_READ:
        raise InvalidArgument(f"Invalid configuration value {value[:200]} for key {key}: this metastore reads "
                              f"partition expressions with {' or '.join(_PROXIES_READ)} only")
    _connection_values.get()[key] = value


def reads_msck_expressions() -> bool:
    """Whether this connection set its expression proxy to MSCK's (hive/msck_expr.py)."""
    values = _connection_values.get(None)
    return values is not None and values.get(EXPRESSION_PROXY) == MSCK_EXPRESSION_PROXY


def column_type_check(gateway_default: bool) -> bool:
    """Whether this connection's alters may not change a column to a type its data does not convert to: its
    own value of hive.metastore.disallow.incompatible.col.type.changes, read as Hive's Configuration.getBoolean
    reads it (only "false" turns the check off), else the gateway's setting. hive-metastore-client (PyPI) sets
    it to false before it drops columns, and failed when the key was refused."""
    set_here = _connection_values.get({}).get(COLUMN_TYPE_CHECK)
    if set_here is None:
        return gateway_default
    return set_here.strip().lower() != "false"


def _checked_key(key: str) -> str:
    """`key` by its Hive name (the one HIVE_DEFAULTS holds), or the refusal."""
    if key in HIVE_DEFAULTS:
        return key
    if key in _BY_METASTORE_NAME:
        return _BY_METASTORE_NAME[key]
    raise InvalidArgument(f"Invalid configuration key {key} (a connection may set only "
                          f"{', '.join(sorted(HIVE_DEFAULTS))}, or their metastore.* names)")
