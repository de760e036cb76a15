"""Hive's getMetaConf and setMetaConf: the few metastore settings a client may read and set for its own
connection (`set metaconf:KEY=VALUE` in Hive's CLI and Beeline; client libraries that turn off
`hive.metastore.client.capability.check` before talking to a newer metastore). As Hive 2.3.10 answers
(probed; tests/e2e/test_thrift_differential.py):

- the keys are Hive 2.3's user-settable metastore variables below, by their exact names; any other is
  a MetaException "Invalid configuration key";
- a value set lasts as long as its connection, and no other connection sees it; a read answers the
  connection's value, else the gateway's own setting of that name, else Hive's default;
- only the socket time-out is checked (a duration of more than 0); the others are kept as sent.

Setting one changes nothing the gateway does, as in Hive 2.3: the direct-SQL switches choose between
two ways Hive reads its own database (the gateway has one), the socket time-out and the capability
check are the client's own, and the partition whitelist Hive checks values against is the server's
(a connection's pattern is answered back, not applied).
"""

from __future__ import annotations

import contextvars
from typing import Callable

from hive import durations
from store.errors import InvalidArgument

SOCKET_TIMEOUT = "hive.metastore.client.socket.timeout"

# Hive 2.3's metaConfVars and their defaults.
HIVE_DEFAULTS = {
    "hive.metastore.try.direct.sql": "true",
    "hive.metastore.try.direct.sql.ddl": "true",
    SOCKET_TIMEOUT: "600s",
    "hive.metastore.partition.name.whitelist.pattern": "",
    "hive.metastore.client.capability.check": "false",
}

# The values a connection set; the server gives each connection (its own task) a fresh map.
_connection_values: contextvars.ContextVar[dict[str, str]] = contextvars.ContextVar("thrift_meta_conf")


def begin_connection() -> None:
    _connection_values.set({})


def get(key: str, gateway_setting: Callable[[str], str | None]) -> str:
    """The connection's value of `key`, else `gateway_setting(key)` when the gateway has one, else Hive's."""
    _check_key(key)
    set_here = _connection_values.get().get(key)
    if set_here is not None:
        return set_here
    own = gateway_setting(key)
    return own if own is not None else HIVE_DEFAULTS[key]


def set_for_connection(key: str, value: str) -> None:
    _check_key(key)
    if key == SOCKET_TIMEOUT:
        try:
            seconds = durations.parse_duration(value)
        except durations.DurationError as e:
            raise InvalidArgument(f"Invalid configuration value {value} for key {key}: {e}") from None
        if seconds <= 0:
            raise InvalidArgument(f"Invalid configuration value {value} for key {key}: the time-out must be more "
                                  "than 0")
    _connection_values.get()[key] = value


def _check_key(key: str) -> None:
    if key not in HIVE_DEFAULTS:
        raise InvalidArgument(f"Invalid configuration key {key} (a connection may set only "
                              f"{', '.join(sorted(HIVE_DEFAULTS))})")
