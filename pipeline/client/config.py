"""The client's settings: one frozen value, resolved on the driver, shipped to executors.

Where the gateway address comes from, first match wins: an explicit `address=`, the Spark conf key
`spark.metastore.gateway.address`, the environment variable `METASTORE_GATEWAY_ADDRESS`. Python
workers on executors have no SparkContext to read a conf from, so the driver resolves a
`ClientConfig` once and ships it with the task (it is a small picklable, hashable value); a job
started without Spark (a test, a script) can rely on the environment alone, and an executor can
also get it through `spark.executorEnv.METASTORE_GATEWAY_ADDRESS`.

Hive's own settings travel the way Spark hands Hive settings to Hadoop: `spark.hadoop.hive.*`
(hive.txn.timeout, hive.lock.numretries, hive.lock.sleep.between.retries). The gateway keeps its
own copy of hive.txn.timeout; the client needs to know it only to heartbeat often enough (every
half of it, as Hive's client does), so set both to the same value.

TLS and the bearer token (`spark.metastore.gateway.tls.*`, `spark.metastore.gateway.token.file`,
or their METASTORE_GATEWAY_* variables: pipeline/client/security.py) are resolved the same way, and
their files are read here, on the driver: the config ships the PEM bytes and the token, so
executors need none of the files.
"""

from __future__ import annotations

import getpass
import os
import socket
from dataclasses import dataclass, field, replace
from typing import Any, Iterator, Mapping, Protocol

from pipeline.client.errors import ClientConfigError
from pipeline.client.security import PLAINTEXT, SECURITY_SETTINGS, ChannelSecurity, resolve_security
from hive import durations

ADDRESS_CONF = "spark.metastore.gateway.address"
ADDRESS_ENV = "METASTORE_GATEWAY_ADDRESS"

# Spark conf key -> ClientConfig field (numbers, durations and booleans; see `ClientConfig.resolve`).
_CONF_KEYS: dict[str, str] = {
    "spark.metastore.gateway.batch.size": "batch_size",
    "spark.metastore.gateway.in.flight": "in_flight",
    "spark.metastore.gateway.call.timeout": "call_timeout_s",
    "spark.metastore.gateway.unavailable.retries": "unavailable_retries",
    "spark.metastore.gateway.unavailable.backoff.max": "backoff_max_s",
    "spark.hadoop.hive.txn.timeout": "txn_timeout_s",
    "spark.hadoop.hive.lock.numretries": "lock_num_retries",
    "spark.hadoop.hive.lock.sleep.between.retries": "lock_sleep_between_retries_s",
    "spark.hadoop.hive.txn.xlock.write": "xlock_write",
    "spark.hadoop.hive.txn.xlock.iow": "xlock_iow",
}
_BOOLEAN_FIELDS = frozenset({"xlock_write", "xlock_iow"})


class ConfLike(Protocol):
    def get(self, key: str, default: Any = None) -> Any: ...


def parse_duration_s(text: str, key: str) -> float:
    """Hive's time values: `300s`, `5m`, `150ms`, `1d`; a bare number is seconds (hive/durations.py)."""
    try:
        return durations.parse_duration(text)
    except durations.DurationError:
        raise ClientConfigError(f"{key}: expected a duration like '300s', '5m' or '150ms', got {text!r}") from None


@dataclass(frozen=True, slots=True)
class ClientConfig:
    """Everything a client needs; equal configs share one channel per process."""

    address: str
    batch_size: int = 1000              # partitions per GetPartitionsByNames / AddPartitions call
    in_flight: int = 4                  # batches outstanding at once per task
    call_timeout_s: float = 60.0        # deadline of each call
    unavailable_retries: int = 6        # extra attempts on UNAVAILABLE (nothing else is retried)
    backoff_initial_s: float = 0.2      # then doubling, with jitter
    backoff_max_s: float = 5.0
    txn_timeout_s: float = 300.0        # hive.txn.timeout: heartbeats go every half of it
    lock_num_retries: int = 100         # hive.lock.numretries
    lock_sleep_between_retries_s: float = 60.0  # hive.lock.sleep.between.retries
    # hive.txn.xlock.write: an insert into a transactional table takes SHARED_READ (false: SHARED_WRITE).
    xlock_write: bool = True
    # hive.txn.xlock.iow: INSERT OVERWRITE takes EXCLUSIVE, waiting for readers too, so that no insert
    # running beside it is hidden by its base; false: EXCL_WRITE, granted beside readers and (as in
    # Hive) beside inserts that take SHARED_READ, whose rows an overwrite committing later may hide.
    xlock_iow: bool = True
    user: str = field(default_factory=lambda: _safe_user())
    hostname: str = field(default_factory=socket.gethostname)
    agent_info: str = "pipeline"
    # TLS and token: its repr names which parts are set, never the key or the token.
    security: ChannelSecurity = PLAINTEXT

    def __post_init__(self) -> None:
        address = self.address.strip()
        if address.startswith(("grpc://", "dns:///")):
            address = address.split("://", 1)[1].lstrip("/")
        if not address or ":" not in address:
            raise ClientConfigError(
                f"metastore gateway address {self.address!r} is not host:port; set {ADDRESS_CONF} "
                f"(e.g. --conf {ADDRESS_CONF}=gateway-host:50051) or {ADDRESS_ENV}")
        object.__setattr__(self, "address", address)
        for name in ("batch_size", "in_flight"):
            if getattr(self, name) < 1:
                raise ClientConfigError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.unavailable_retries < 0 or self.lock_num_retries < 0:
            raise ClientConfigError("retry counts must not be negative")
        for name in ("call_timeout_s", "backoff_initial_s", "backoff_max_s", "txn_timeout_s",
                     "lock_sleep_between_retries_s"):
            if getattr(self, name) <= 0:
                raise ClientConfigError(f"{name} must be positive, got {getattr(self, name)}")

    @property
    def heartbeat_interval_s(self) -> float:
        """Hive's client heartbeats every hive.txn.timeout / 2."""
        return self.txn_timeout_s / 2

    def with_(self, **changes: Any) -> ClientConfig:
        return replace(self, **changes)

    @classmethod
    def resolve(cls, conf: ConfLike | Mapping[str, Any] | None = None, *, address: str | None = None,
                environ: Mapping[str, str] | None = None, **overrides: Any) -> ClientConfig:
        """From an explicit address, else `conf` (a SparkConf, `spark.conf`, or a dict), else the
        environment. Numbers in `conf` use the keys in `_CONF_KEYS`; `overrides` win over all."""
        environ = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        if "security" not in overrides:
            values["security"] = resolve_security(lambda key: None if conf is None else _get(conf, key), environ)
        if conf is not None:
            for key, name in _CONF_KEYS.items():
                raw = _get(conf, key)
                if raw is not None and raw != "":
                    values[name] = _convert(name, raw, key)
            address = address or _get(conf, ADDRESS_CONF)
        address = address or environ.get(ADDRESS_ENV)
        if not address:
            raise ClientConfigError(
                f"no metastore gateway address: pass --conf {ADDRESS_CONF}=host:port to spark-submit, "
                f"set it on the SparkSession, or export {ADDRESS_ENV}=host:port")
        values.update(overrides)
        return cls(address=str(address), **values)

    @classmethod
    def from_spark(cls, spark: Any = None, **overrides: Any) -> ClientConfig:
        """From the active SparkSession's conf (runtime conf included), else the environment."""
        if spark is None:
            from pyspark.sql import SparkSession

            spark = SparkSession.getActiveSession()
        return cls.resolve(spark.conf if spark is not None else None, **overrides)


def _get(conf: ConfLike | Mapping[str, Any], key: str) -> Any:
    try:
        return conf.get(key, None)
    except Exception:  # pyspark's RuntimeConfig raises for some unset keys in older versions
        return None


def _convert(name: str, raw: Any, key: str) -> Any:
    if name in _BOOLEAN_FIELDS:
        if isinstance(raw, bool):
            return raw
        if str(raw).strip().lower() in ("true", "false"):
            return str(raw).strip().lower() == "true"
        raise ClientConfigError(f"{key}: expected true or false, got {raw!r}")
    if name.endswith("_s"):
        return parse_duration_s(raw, key)
    try:
        return int(raw)
    except (TypeError, ValueError):
        raise ClientConfigError(f"{key}: expected an integer, got {raw!r}") from None


def _safe_user() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no passwd entry (containers)
        return "unknown"


def conf_keys() -> Iterator[tuple[str, str]]:
    """(Spark conf key, ClientConfig field) for documentation and `--help`."""
    yield ADDRESS_CONF, "address"
    yield from _CONF_KEYS.items()
    yield from ((key, "security") for key, _ in SECURITY_SETTINGS if key)
