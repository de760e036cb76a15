"""The gateway's settings: one frozen object, read from a file, the environment and flags.

Keys use Hive's names and defaults where Hive has one (e.g. `hive.txn.timeout`, 300s). Sources,
weakest first: built-in defaults, a TOML file (`--config`), environment variables, flags
(`--conf key=value`, or the named shorthands of `serve`). An environment variable is the key in
upper case with dots as underscores, prefixed `MSGW_`: `hive.txn.timeout` -> `MSGW_HIVE_TXN_TIMEOUT`.
Durations take Hive's suffixes (ms, s, m, h, d: hive/durations.py); a bare number is in the unit the Hive
Metastore reads that key's bare numbers in (`_setting`'s `unit`), seconds for the gateway's own keys.

An `MSGW_` variable that names no setting is reported (`load_settings(..., warn=...)`), so a typo
does not silently leave a default in force. `effective_settings` lists every value with where it
came from, for `metastore-gateway settings --config ... --conf ...`.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Mapping
from urllib.parse import unquote, urlsplit

from hive import durations
from hive.names import check_default_fs, qualified_location, whitelist_pattern

ENV_PREFIX = "MSGW_"
# Variables of the command line tools themselves, not settings (gateway/cli.py, gateway/admin/commands.py).
TOOL_VARIABLES = frozenset({"MSGW_LOG_LEVEL", "MSGW_ADDRESS", "MSGW_TOKEN", "MSGW_TLS_CA", "MSGW_TLS_CERT",
                            "MSGW_TLS_KEY"})


class ConfigError(ValueError):
    """A setting is unknown or has a value of the wrong shape; the message names the key."""


def parse_duration(value: str | int | float, key: str, bare_unit: str = "s") -> float:
    """Seconds in a duration setting (hive/durations.py), a bare number in `bare_unit`; ConfigError
    naming `key` otherwise."""
    try:
        return durations.parse_duration(value, bare_unit)
    except durations.DurationError:
        raise ConfigError(f"{key}: {value!r} is not a duration (examples: 300s, 100ms, 5m)") from None


# The smallest hive.metastore.server.max.message.size: a notification read answers at least one
# event, whose envelope takes 2.5 KiB besides its message (store/events.py's EVENT_ENVELOPE_BYTES and
# RESPONSE_ENVELOPE_BYTES), and the messages of small writes take hundreds of bytes.
MIN_MESSAGE_BYTES = 4096

# hive.metastore.event.message.factory: Hive's class names that write Hive's JSON messages, and the
# value that keeps the gateway's own (gateway/thrift/hive_events.py).
HIVE_EVENT_FACTORIES = frozenset({
    "org.apache.hadoop.hive.metastore.messaging.json.JSONMessageFactory",  # Hive 2.3 and 3.0's default
    "org.apache.hadoop.hive.metastore.messaging.json.JSONMessageEncoder",  # Hive 3.1 and 4's default
})
GATEWAY_EVENTS = "metastore-gateway-json-1"


def _setting(key: str, default: Any, doc: str, kind: str = "", *, secret: bool = False, unit: str = "s") -> Any:
    """A setting: its Hive-style key, default and help text; `secret` ones are never shown to a client
    (Thrift's get_config_value): they may hold a credential, or say where the gateway keeps its own
    files and keys, or who its admins are. A duration's `unit` is what a bare number
    means (hive/durations.py UNITS): Hive's for its keys, where the Hive Metastore reads the key (its
    MetastoreConf, Hive 3.0 on) or else HiveConf gives it one; seconds for the gateway's own keys."""
    assert unit in durations.UNITS, unit
    return field(default=default, metadata={"key": key, "doc": doc, "kind": kind, "secret": secret, "unit": unit})


@dataclass(frozen=True)
class Settings:
    """Every knob of the gateway. Construct through `load_settings`, which validates."""

    host: str = _setting("metastore.gateway.host", "127.0.0.1", "address the gRPC server binds")
    port: int = _setting("metastore.gateway.port", 50051, "gRPC port (0: pick a free one)")
    dsn: str = _setting("metastore.gateway.dsn", "", "PostgreSQL DSN; empty: start the embedded server", secret=True)
    data_dir: str = _setting("metastore.gateway.data.dir", "",
                             "where the embedded PostgreSQL keeps its data (empty: ~/.local/share/metastore-gateway, "
                             "as root /var/lib/metastore-gateway/data); a relative path is taken from the directory "
                             "the gateway starts in", secret=True)
    warehouse_dir: str = _setting("hive.metastore.warehouse.dir", "/user/hive/warehouse",
                                  "default root of database locations")
    data_roots: str = _setting(
        "metastore.gateway.data.roots", "",
        "local directories (paths or file: URIs, comma-separated) inside which the gateway makes, moves, empties "
        "and deletes data directories for DDL (gateway/warehouse.py); a location elsewhere is left as it is: a drop "
        "leaves its files, a create makes no directory, a truncate or a move is refused (empty: "
        "hive.metastore.warehouse.dir; *: anywhere the gateway's OS user may write)", secret=True)
    default_fs: str = _setting("fs.defaultFS", "file:///",
                               "the default file system (Hadoop's key): a location a Thrift client sends as a path "
                               "without a scheme, and hive.metastore.warehouse.dir given as one, take its scheme and "
                               "authority, as Hive's metastore stores them")
    pool_max_size: int = _setting("datanucleus.connectionPool.maxPoolSize", 10, "database connections per gateway")
    pool_acquire_timeout_s: float = _setting("metastore.gateway.pool.acquire.timeout", 10.0,
                                             "longest wait for a free database connection", "duration")
    db_idle_in_txn_timeout_s: float = _setting(
        "metastore.gateway.db.idle.in.transaction.timeout", 5.0,
        "PostgreSQL ends a gateway transaction idle this long (a stopped or wedged gateway), releasing the row "
        "locks every writer needs; a write of 1,000 objects or more may idle 1 ms longer per object; 0: never",
        "duration")
    hmshandler_retry_attempts: int = _setting(
        "hive.hmshandler.retry.attempts", 10,
        "how often a call that met the database unreachable (a restart, a failover) is tried again before it "
        "answers UNAVAILABLE (MetaException); a write whose commit was sent when its connection was lost is not "
        "(it may have been committed); 0: never")
    hmshandler_retry_interval_s: float = _setting(
        "hive.hmshandler.retry.interval", 2.0,
        "longest wait between two such tries (the waits double from 50 ms up to it): 10 tries wait about 11 s in "
        "all", "duration", unit="ms")
    max_message_bytes: int = _setting("hive.metastore.server.max.message.size", 104857600,
                                      "largest request or response message, bytes; also sizes the notification "
                                      "log's events: a read answers fewer events than asked rather than more bytes, "
                                      "and a write whose event could not be answered alone is logged as several or "
                                      "refused")
    max_batch_size: int = _setting("metastore.gateway.max.batch.size", 10000,
                                   "most partitions or names one request may carry")
    max_lock_components: int = _setting("metastore.gateway.max.lock.components", 100000,
                                        "most components one lock request may carry (Hive 2.3 and 3 lock each "
                                        "partition a query reads or writes), and most partitions one "
                                        "add_dynamic_partitions may name")
    partition_request_limit: int = _setting("hive.metastore.limit.partition.request", -1,
                                            "most partitions a filter read may match (-1: no limit)")
    disallow_incompatible_col_type_changes: bool = _setting(
        "hive.metastore.disallow.incompatible.col.type.changes", True,
        "refuse an alter that changes a column to a type its existing data cannot be read as (hive/column_types.py)")
    partition_name_whitelist_pattern: str = _setting(
        "hive.metastore.partition.name.whitelist.pattern", "",
        "a regular expression each partition value must match whole when a partition is added or renamed "
        "(empty: any value)")
    notification_api_auth: bool = _setting(
        "hive.metastore.event.db.notification.api.auth", True,
        "with authentication on, only admins (hive.users.in.admin.role) read the notification log (its current id, "
        "its events, their count), as Hive 3 and 4 let only proxy users; false: every authenticated user")
    max_event_response: int = _setting("metastore.max.event.response", 2147483647,
                                       "most events one GetNextNotification answers")
    default_event_batch: int = _setting("metastore.gateway.event.batch.default", 1000,
                                        "events answered when a request asks for max_events 0")
    event_message_factory: str = _setting(
        "hive.metastore.event.message.factory", "org.apache.hadoop.hive.metastore.messaging.json.JSONMessageFactory",
        "the messages Thrift's get_next_notification answers: Hive's JSONMessageFactory or JSONMessageEncoder "
        f"(org.apache.hadoop.hive.metastore.messaging.json.*) answer Hive's JSON (json-0.2), {GATEWAY_EVENTS} the "
        "gateway's own (gRPC's GetNextNotification answers the gateway's own either way)")
    so_reuseport: bool = _setting("metastore.gateway.so.reuseport", False,
                                  "let several gateway processes bind the same port (each with its own cache)")
    max_concurrent_rpcs: int = _setting("metastore.gateway.max.concurrent.rpcs", 1000,
                                        "calls in flight before new ones get RESOURCE_EXHAUSTED")
    shutdown_grace_s: float = _setting("metastore.gateway.shutdown.grace", 10.0,
                                       "time in-flight calls get to finish on shutdown", "duration")
    txn_max_open_batch: int = _setting("hive.txn.max.open.batch", 1000, "most txns one OpenTxns call may open")
    max_open_txns: int = _setting("hive.max.open.txns", 100000, "open txns before OpenTxns is refused")
    txn_group_commit_max: int = _setting("metastore.gateway.txn.group.commit.max", 64,
                                         "most concurrent OpenTxns / AllocateTableWriteIds / CommitTxn / Lock calls "
                                         "(or txns) that share one transaction and WAL flush (1: each call alone)")
    count_open_txns_interval_s: float = _setting("hive.count.open.txns.interval", 1.0,
                                                 "how often the open-txn count is refreshed", "duration")
    txn_timeout_s: float = _setting("hive.txn.timeout", 300.0,
                                    "txns and standalone locks without a heartbeat this long are aborted", "duration")
    reaper_start_s: float = _setting("hive.timedout.txn.reaper.start", 100.0,
                                     "delay before the first time-out reaper run", "duration")
    reaper_interval_s: float = _setting("hive.timedout.txn.reaper.interval", 180.0,
                                        "time between time-out reaper runs", "duration")
    lock_num_retries: int = _setting("hive.lock.numretries", 100,
                                     "lock clients (pipeline/locking.py): CheckLock retries before giving up")
    lock_sleep_between_retries_s: float = _setting("hive.lock.sleep.between.retries", 60.0,
                                                   "lock clients: cap of the back-off between retries (from 100ms, "
                                                   "doubling)", "duration")
    txn_strict_locking_mode: bool = _setting("hive.txn.strict.locking.mode", True,
                                             "lock clients: inserts into non-transactional tables take EXCLUSIVE "
                                             "(false: SHARED_READ)")
    txn_xlock_write: bool = _setting("hive.txn.xlock.write", True,
                                     "lock clients: transactional INSERT takes SHARED_READ, UPDATE/DELETE EXCL_WRITE "
                                     "(false: SHARED_WRITE for all three)")
    txn_xlock_iow: bool = _setting("hive.txn.xlock.iow", True,
                                   "lock clients: INSERT OVERWRITE of a transactional table takes EXCLUSIVE "
                                   "(false: EXCL_WRITE)")
    housekeeper_interval_s: float = _setting("hive.metastore.acid.housekeeper.interval", 60.0,
                                             "time between TXN_TO_WRITE_ID cleaning and version GC runs", "duration")
    event_ttl_s: float = _setting("hive.metastore.event.db.listener.timetolive", 86400.0,
                                  "how long notification events are kept", "duration")
    event_clean_interval_s: float = _setting("hive.metastore.event.db.listener.clean.interval", 7200.0,
                                             "time between notification log clean-ups", "duration")
    partition_event_expiry_s: float = _setting("hive.metastore.event.expiry.duration", 0.0,
                                               "how long a partition's mark (markPartitionForEvent) counts; 0: "
                                               "always", "duration")
    cache_enabled: bool = _setting("metastore.gateway.cache.enabled", True,
                                   "serve reads from the write-id-checked cache (false: every read goes to PostgreSQL)")
    cache_shards: int = _setting("metastore.gateway.cache.shards", 16, "cache shards (by table id)")
    cache_max_partitions: int = _setting("metastore.gateway.cache.max.partitions", 5000000,
                                         "partitions the cache holds before evicting least recently used tables")
    cache_prewarm: str = _setting("metastore.gateway.cache.prewarm", "lazy",
                                  "lazy: load a table on its first miss; eager: load everything at start")
    poller_interval_s: float = _setting("metastore.cached.rawstore.cache.update.frequency", 60.0,
                                        "poll the notification log at least this often (LISTEN/NOTIFY wakes it sooner)",
                                        "duration")
    poller_batch_size: int = _setting("metastore.gateway.poller.batch.size", 1000, "events applied per batch")
    metrics_port: int = _setting("metastore.gateway.metrics.port", -1,
                                 "Prometheus HTTP port on the gateway's host (-1: off, 0: any free port)")
    thrift_enabled: bool = _setting("metastore.gateway.thrift.enabled", True,
                                    "serve Hive's metastore Thrift API (Spark, Trino, Hive clients) beside gRPC")
    thrift_port: int = _setting("hive.metastore.port", 9083,
                                "Hive metastore Thrift port, on the gRPC host (0: any free one)")
    thrift_framed: bool = _setting("hive.metastore.thrift.framed.transport.enabled", False,
                                   "Thrift clients send framed messages (a length before each)")
    thrift_max_connections: int = _setting("hive.metastore.server.max.threads", 1000,
                                           "Thrift connections served at once; more are closed at once")
    thrift_read_timeout_s: float = _setting("metastore.gateway.thrift.read.timeout", 60.0,
                                            "a Thrift connection whose message is not whole this long after it "
                                            "began to arrive, or that left a reply unread as long, is closed",
                                            "duration")
    thrift_tls_handshake_timeout_s: float = _setting(
        "metastore.gateway.thrift.tls.handshake.timeout", 10.0,
        "a Thrift connection whose TLS handshake has not finished this long after it connected is closed "
        "(it counts against hive.metastore.server.max.threads meanwhile)", "duration")
    # -- the compactor (poller/compactor.py; Hive's names and defaults) --
    compactor_initiator_on: bool = _setting("hive.compactor.initiator.on", False,
                                            "run the compaction Initiator (and history reaper) on this gateway")
    compactor_cleaner_on: bool = _setting("hive.compactor.cleaner.on", True, "run the compaction Cleaner")
    compactor_check_interval_s: float = _setting("hive.compactor.check.interval", 300.0,
                                                 "time between Initiator rounds", "duration")
    compactor_cleaner_interval_s: float = _setting("hive.compactor.cleaner.run.interval", 5.0,
                                                   "time between Cleaner rounds (a bare number: milliseconds)",
                                                   "duration", unit="ms")
    compactor_worker_timeout_s: float = _setting("hive.compactor.worker.timeout", 86400.0,
                                                 "a working compaction without a worker heartbeat this long is "
                                                 "queued again", "duration")
    compactor_delta_num_threshold: int = _setting("hive.compactor.delta.num.threshold", 10,
                                                  "more deltas than this in a partition: minor compaction")
    compactor_delta_pct_threshold: float = _setting("hive.compactor.delta.pct.threshold", 0.1,
                                                    "delta bytes / base bytes above this: major compaction")
    compactor_aborted_threshold: int = _setting("hive.compactor.abortedtxn.threshold", 1000,
                                                "more aborted write ids with files than this: major compaction")
    compactor_aborted_time_s: float = _setting("hive.compactor.aborted.txn.time.threshold", 43200.0,
                                               "an aborted write id with files older than this: compaction (a "
                                               "bare number: hours)", "duration", unit="h")
    compactor_failed_threshold: int = _setting("hive.compactor.initiator.failed.compacts.threshold", 2,
                                               "consecutive failed compactions after which the Initiator stops "
                                               "queueing a partition until a manual one succeeds")
    compactor_retention_succeeded: int = _setting("hive.compactor.history.retention.succeeded", 3,
                                                  "succeeded compactions kept in history per partition")
    compactor_retention_failed: int = _setting("hive.compactor.history.retention.failed", 3,
                                               "failed compactions kept in history per partition")
    compactor_retention_attempted: int = _setting("hive.compactor.history.retention.attempted", 2,
                                                  "did-not-initiate entries kept in history per partition")
    compactor_history_interval_s: float = _setting("hive.compactor.history.reaper.interval", 120.0,
                                                   "time between compaction history purges (a bare number: "
                                                   "minutes)", "duration", unit="m")
    tls_cert_file: str = _setting("metastore.gateway.tls.cert.file", "",
                                  "PEM server certificate (chain): TLS on gRPC and on the Thrift port when set, with "
                                  "metastore.gateway.tls.key.file", secret=True)
    tls_key_file: str = _setting("metastore.gateway.tls.key.file", "", "PEM private key of the server certificate",
                                 secret=True)
    tls_client_ca_file: str = _setting("metastore.gateway.tls.client.ca.file", "",
                                       "PEM CA bundle: when set, clients must present a certificate it signed (mutual "
                                       "TLS), and its common name is the client's user", secret=True)
    auth_token_file: str = _setting("metastore.gateway.auth.token.file", "",
                                    "bearer tokens for gRPC, one 'token,user' per line (kept 0600): when set, every "
                                    "gRPC call must carry 'authorization: Bearer <token>' or a client certificate",
                                    secret=True)
    admin_users: str = _setting("hive.users.in.admin.role", "",
                                "comma-separated users who hold Hive's admin role (granted at start) and may commit, "
                                "abort, heartbeat or unlock other users' txns and locks, and see their user and host",
                                secret=True)
    access_log: bool = _setting("metastore.gateway.access.log", False,
                                "log one line per call (protocol, method, status, duration, peer, user) on the "
                                "metastore.access logger")
    db_check_interval_s: float = _setting("metastore.gateway.db.check.interval", 2.0,
                                          "how often the gateway checks that its database answers (health goes "
                                          "NOT_SERVING while it does not)", "duration")
    embedded_unsafe_fast: bool = _setting("metastore.gateway.embedded.unsafe.fast", False,
                                          "run the embedded PostgreSQL without fsync (tests, demos only)")
    embedded_restart: bool = _setting("metastore.gateway.embedded.restart", True,
                                      "start the embedded PostgreSQL again when its server dies (killed, out of "
                                      "memory, crashed) while this gateway uses it; one stopped on purpose stays "
                                      "stopped")

    @property
    def warehouse_root(self) -> str:
        """hive.metastore.warehouse.dir as Hive's Warehouse roots default locations at it (getWhRoot: a
        bare path qualified by fs.defaultFS), so a default location is stored as Hive stores one."""
        return qualified_location(self.warehouse_dir, self.default_fs)

    @property
    def data_root_list(self) -> list[str]:
        """metastore.gateway.data.roots as a list; the warehouse's root when it names none."""
        roots = [r.strip() for r in self.data_roots.split(",") if r.strip()]
        return roots or [self.warehouse_root]

    @property
    def admin_user_names(self) -> list[str]:
        """hive.users.in.admin.role as a list (blanks around each name and empty entries dropped)."""
        return [u.strip() for u in self.admin_users.split(",") if u.strip()]

    def __post_init__(self) -> None:
        if not 0 <= self.port <= 65535:
            raise ConfigError(f"metastore.gateway.port: {self.port} is not a TCP port")
        if not 0 <= self.thrift_port <= 65535:
            raise ConfigError(f"hive.metastore.port: {self.thrift_port} is not a TCP port")
        if self.thrift_max_connections < 1 or self.thrift_read_timeout_s <= 0:
            raise ConfigError("hive.metastore.server.max.threads must be at least 1 and "
                              "metastore.gateway.thrift.read.timeout a positive duration")
        if self.thrift_tls_handshake_timeout_s <= 0:
            raise ConfigError("metastore.gateway.thrift.tls.handshake.timeout must be a positive duration, got "
                              f"{self.thrift_tls_handshake_timeout_s}")
        for name in ("pool_max_size", "max_batch_size", "max_lock_components", "max_event_response",
                     "default_event_batch", "max_concurrent_rpcs", "max_message_bytes", "txn_max_open_batch",
                     "max_open_txns", "txn_group_commit_max"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{key_of(name)}: must be at least 1, got {getattr(self, name)}")
        if self.max_message_bytes < MIN_MESSAGE_BYTES:
            raise ConfigError(f"hive.metastore.server.max.message.size: must be at least {MIN_MESSAGE_BYTES} bytes "
                              "(a notification read must answer one event with its envelope), got "
                              f"{self.max_message_bytes}")
        # An interval of 0 would make its loop spin, a time-out of 0 fail every call it bounds.
        for name in ("txn_timeout_s", "reaper_interval_s", "housekeeper_interval_s", "event_clean_interval_s",
                     "count_open_txns_interval_s", "event_ttl_s", "db_check_interval_s", "pool_acquire_timeout_s",
                     "poller_interval_s", "compactor_check_interval_s", "compactor_cleaner_interval_s",
                     "compactor_worker_timeout_s", "compactor_aborted_time_s", "compactor_history_interval_s"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"{key_of(name)}: must be a positive duration, got {getattr(self, name):g}s")
        for name in ("shutdown_grace_s", "reaper_start_s", "hmshandler_retry_interval_s"):  # 0: at once
            if getattr(self, name) < 0:
                raise ConfigError(f"{key_of(name)}: must not be negative, got {getattr(self, name):g}s")
        if not -1 <= self.metrics_port <= 65535:
            raise ConfigError(f"metastore.gateway.metrics.port: {self.metrics_port} is not a TCP port (-1: off, 0: any "
                              "free one)")
        # The compactor's own checks (poller/compactor.py, store/compaction_policy.py), here so that a bad
        # value is a bad setting at start rather than an error once the database is connected.
        if self.compactor_delta_num_threshold < 1:
            raise ConfigError("hive.compactor.delta.num.threshold: must be at least 1, got "
                              f"{self.compactor_delta_num_threshold}")
        if self.compactor_delta_pct_threshold <= 0:
            raise ConfigError(f"hive.compactor.delta.pct.threshold: must be above 0, got "
                              f"{self.compactor_delta_pct_threshold}")
        for name in ("hmshandler_retry_attempts", "compactor_aborted_threshold", "compactor_failed_threshold",
                     "compactor_retention_succeeded", "compactor_retention_failed", "compactor_retention_attempted"):
            if getattr(self, name) < 0:
                raise ConfigError(f"{key_of(name)}: must not be negative, got {getattr(self, name)}")
        if self.db_idle_in_txn_timeout_s < 0:
            raise ConfigError("metastore.gateway.db.idle.in.transaction.timeout: must be a duration (0: never)")
        try:
            check_default_fs(self.default_fs)
        except ValueError as e:
            raise ConfigError(f"fs.defaultFS: {e}") from None
        try:
            whitelist_pattern(self.partition_name_whitelist_pattern)
        except ValueError as e:
            raise ConfigError(f"hive.metastore.partition.name.whitelist.pattern: {e}") from None
        if self.event_message_factory not in HIVE_EVENT_FACTORIES | {GATEWAY_EVENTS}:
            raise ConfigError(f"hive.metastore.event.message.factory: {self.event_message_factory!r} is not a message "
                              f"format this gateway writes: expected one of {', '.join(sorted(HIVE_EVENT_FACTORIES))} "
                              f"(Hive's JSON messages) or {GATEWAY_EVENTS} (the gateway's own)")
        if self.cache_prewarm not in ("lazy", "eager"):
            raise ConfigError(f"metastore.gateway.cache.prewarm: expected lazy or eager, got {self.cache_prewarm!r}")
        for name in ("cache_shards", "cache_max_partitions", "poller_batch_size"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{key_of(name)}: must be at least 1, got {getattr(self, name)}")
        if self.lock_num_retries < 0 or self.lock_sleep_between_retries_s <= 0:
            raise ConfigError("hive.lock.numretries must not be negative and hive.lock.sleep.between.retries must be "
                              "a positive duration")
        if self.dsn and not self.dsn.startswith(("postgresql://", "postgres://")):
            raise ConfigError("metastore.gateway.dsn: expected a postgresql://... URL")
        if bool(self.tls_cert_file) != bool(self.tls_key_file):
            raise ConfigError("metastore.gateway.tls.cert.file and metastore.gateway.tls.key.file go together: set "
                              "both for TLS, or neither")
        if self.tls_client_ca_file and not self.tls_cert_file:
            raise ConfigError("metastore.gateway.tls.client.ca.file needs TLS: set metastore.gateway.tls.cert.file and "
                              "metastore.gateway.tls.key.file too")
        if self.auth_token_file and not self.tls_cert_file:
            raise ConfigError("metastore.gateway.auth.token.file needs TLS (tokens would cross the network in clear): "
                              "set metastore.gateway.tls.cert.file and metastore.gateway.tls.key.file")
        if self.auth_token_file and self.thrift_enabled and not self.tls_client_ca_file:
            raise ConfigError("metastore.gateway.auth.token.file turns authentication on, but the Thrift endpoint can "
                              "authenticate clients only by certificate: set metastore.gateway.tls.client.ca.file, or "
                              "metastore.gateway.thrift.enabled=false")


def as_hive_writes_it(field_name: str, value: Any) -> str:
    """A setting's value as Hive writes it in a configuration: booleans lower-case, and durations with
    their unit (`300s`, `5000ms`), which any reader takes the same way whatever unit it gives bare numbers."""
    if isinstance(value, bool):
        return str(value).lower()
    if next(f for f in fields(Settings) if f.name == field_name).metadata.get("kind") == "duration":
        ms = round(value * 1000)
        return f"{ms // 1000}s" if ms % 1000 == 0 else f"{ms}ms"
    return str(value)


def key_of(field_name: str) -> str:
    return next(f.metadata["key"] for f in fields(Settings) if f.name == field_name)


def settings_keys() -> dict[str, str]:
    """Hive-style key -> field name."""
    return {f.metadata["key"]: f.name for f in fields(Settings)}


def secret_keys() -> frozenset[str]:
    """The keys of settings never shown to a client (`_setting`'s `secret`)."""
    return frozenset(f.metadata["key"] for f in fields(Settings) if f.metadata["secret"])


def redact_dsn(dsn: str) -> str:
    """`dsn` as it may be shown (a log line, an error, `settings`): the password of its user part and
    of any `password` query parameter replaced by `***`, everything else as it is. Never the DSN
    itself when it cannot be read as a URL: a description instead, as it may hold a password."""
    try:
        parts = urlsplit(dsn)
    except ValueError:
        return "(a DSN that is not a valid URL)"
    if not parts.scheme or not dsn.startswith(f"{parts.scheme}://"):
        return "(a DSN that is not a postgresql:// URL)"
    user_info, at, host_info = parts.netloc.rpartition("@")
    if ":" in user_info:
        user_info = user_info.split(":", 1)[0] + ":***"
    shown = f"{parts.scheme}://{user_info}{at}{host_info}{parts.path}"
    if parts.query:
        shown += "?" + "&".join("password=***" if unquote(item.partition("=")[0]).strip().lower() == "password"
                                else item for item in parts.query.split("&"))
    return shown + (f"#{parts.fragment}" if parts.fragment else "")


def _coerce(field_name: str, key: str, raw: Any) -> Any:
    f = next(f for f in fields(Settings) if f.name == field_name)
    if f.metadata.get("kind") == "duration":
        return parse_duration(raw, key, f.metadata["unit"])
    target: type = type(f.default)
    if target is bool:
        if isinstance(raw, bool):
            return raw
        if str(raw).lower() in ("true", "1", "yes", "on"):
            return True
        if str(raw).lower() in ("false", "0", "no", "off"):
            return False
        raise ConfigError(f"{key}: {raw!r} is not a boolean")
    try:
        return target(raw)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{key}: {raw!r} is not a valid {target.__name__}") from exc


def _flatten(prefix: str, table: Mapping[str, Any]) -> dict[str, Any]:
    """TOML's `hive.txn.timeout = "300s"` is nested tables; flatten back to dotted keys."""
    out: dict[str, Any] = {}
    for k, v in table.items():
        key = f"{prefix}.{k}" if prefix else k
        if isinstance(v, dict):
            out.update(_flatten(key, v))
        else:
            out[key] = v
    return out


def default_data_dir() -> Path:
    """Where the embedded PostgreSQL lives when metastore.gateway.data.dir is not set: never relative
    to the current directory, so `migrate` and `serve` run from anywhere find the same cluster."""
    if os.geteuid() == 0:
        return Path("/var/lib/metastore-gateway/data")
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "metastore-gateway"


def data_dir_of(settings: Settings) -> Path:
    """The absolute data directory these settings name."""
    return Path(settings.data_dir).expanduser().resolve() if settings.data_dir else default_data_dir()


def unknown_variables(environ: Mapping[str, str]) -> list[str]:
    """`MSGW_` variables that are neither a setting nor a tool's own variable, sorted."""
    known = {ENV_PREFIX + key.upper().replace(".", "_") for key in settings_keys()} | TOOL_VARIABLES
    return sorted(name for name in environ if name.startswith(ENV_PREFIX) and name not in known)


def load_settings(
    config_file: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    *,
    warn: Callable[[str], None] | None = None,
) -> Settings:
    """Defaults < file < environment < overrides (flags). Unknown keys in the file or the
    overrides are errors, so a typo does not silently fall back to a default; unknown `MSGW_`
    variables go to `warn` (the environment is shared with other programs, so not an error)."""
    values = {name: value for name, (value, _source) in _resolve(config_file, environ, overrides, warn).items()}
    return Settings(**values)


def effective_settings(
    config_file: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    *,
    warn: Callable[[str], None] | None = None,
) -> list[tuple[str, Any, str]]:
    """(key, value, source) for every setting, validated as `load_settings` does; the source is
    "default", the config file's path, the environment variable's name, or "command line" (--conf
    and the named flags). An empty data directory shows the one in force (`default_data_dir`)."""
    resolved = _resolve(config_file, environ, overrides, warn)
    settings = Settings(**{name: value for name, (value, _source) in resolved.items()})
    out = []
    for f in fields(Settings):
        value = getattr(settings, f.name)
        source = resolved[f.name][1] if f.name in resolved else "default"
        if f.name == "data_dir":
            value = str(data_dir_of(settings))
        out.append((f.metadata["key"], value, source))
    return out


def _resolve(
    config_file: str | Path | None,
    environ: Mapping[str, str] | None,
    overrides: Mapping[str, Any] | None,
    warn: Callable[[str], None] | None,
) -> dict[str, tuple[Any, str]]:
    """Field name -> (value, source) for every setting given anywhere; the strongest source wins."""
    keys = settings_keys()
    values: dict[str, tuple[Any, str]] = {}
    if config_file:
        path = Path(config_file)
        try:
            data = _flatten("", tomllib.loads(path.read_text()))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:  # TOML is UTF-8
            raise ConfigError(f"cannot read config file {path}: {exc}") from exc
        for key, raw in data.items():
            if key not in keys:
                raise ConfigError(f"{path}: unknown setting {key!r}")
            values[keys[key]] = (_coerce(keys[key], key, raw), str(path))
    env = os.environ if environ is None else environ
    for key, name in keys.items():
        env_name = ENV_PREFIX + key.upper().replace(".", "_")
        if env_name in env:
            values[name] = (_coerce(name, env_name, env[env_name]), env_name)
    if warn is not None:
        for env_name in unknown_variables(env):
            warn(f"ignoring {env_name}: no setting has that name (settings are MSGW_ plus the key in upper case with "
                 "dots as underscores, e.g. MSGW_HIVE_TXN_TIMEOUT; `metastore-gateway settings` lists the keys)")
    for key, raw in (overrides or {}).items():
        if key not in keys:
            raise ConfigError(f"unknown setting {key!r} (known: {', '.join(sorted(keys))})")
        values[keys[key]] = (_coerce(keys[key], key, raw), "command line")
    return values
