from pathlib import Path

import pytest

from gateway.config import ConfigError, as_hive_writes_it, load_settings, parse_duration, redact_dsn, settings_keys


def test_defaults_are_hives() -> None:
    s = load_settings(environ={})
    assert s.port == 50051 and s.host == "127.0.0.1"
    assert s.warehouse_dir == "/user/hive/warehouse"
    assert s.pool_max_size == 10
    assert s.max_message_bytes == 104857600


def test_flags_win_over_environment_which_wins_over_file(tmp_path: Path) -> None:
    conf = tmp_path / "gateway.toml"
    conf.write_text('metastore.gateway.port = 1111\nhive.metastore.warehouse.dir = "/from/file"\n'
                    'metastore.gateway.shutdown.grace = "500ms"\n')
    s = load_settings(conf, environ={"MSGW_METASTORE_GATEWAY_PORT": "2222"})
    assert (s.port, s.warehouse_dir, s.shutdown_grace_s) == (2222, "/from/file", 0.5)
    s = load_settings(conf, environ={"MSGW_METASTORE_GATEWAY_PORT": "2222"},
                      overrides={"metastore.gateway.port": "3333"})
    assert s.port == 3333


def test_unknown_keys_and_bad_values_are_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown setting 'hive.txn.timeoutt'"):
        load_settings(environ={}, overrides={"hive.txn.timeoutt": "1s"})
    with pytest.raises(ConfigError, match="metastore.gateway.port"):
        load_settings(environ={}, overrides={"metastore.gateway.port": "eighty"})
    with pytest.raises(ConfigError, match="metastore.gateway.max.batch.size"):
        load_settings(environ={}, overrides={"metastore.gateway.max.batch.size": "0"})
    with pytest.raises(ConfigError, match="hive.metastore.server.max.message.size: must be at least 4096"):
        load_settings(environ={}, overrides={"hive.metastore.server.max.message.size": "2000"})
    bad = tmp_path / "bad.toml"
    bad.write_text("nonsense.key = 1\n")
    with pytest.raises(ConfigError, match="unknown setting 'nonsense.key'"):
        load_settings(bad, environ={})


@pytest.mark.parametrize("text, seconds", [("300s", 300), ("100ms", 0.1), ("5m", 300), ("2h", 7200), ("1d", 86400),
                                           ("7", 7)])
def test_durations_take_hive_suffixes(text: str, seconds: float) -> None:
    assert parse_duration(text, "k") == pytest.approx(seconds)


@pytest.mark.parametrize("dsn, shown", [
    ("postgresql://app:s3cret@db:5433/meta", "postgresql://app:***@db:5433/meta"),
    ("postgresql://app:s3cret@?host=/nonexistent", "postgresql://app:***@?host=/nonexistent"),
    ("postgresql://postgres@/db?host=/run/pg&password=XYZ&port=5", "postgresql://postgres@/db?host=/run/pg&password=***&port=5"),
    ("postgresql:///db?host=/run/pg&Pass%77ord=XYZ", "postgresql:///db?host=/run/pg&password=***"),
    ("postgresql://app@db/meta", "postgresql://app@db/meta"),
    ("postgresql://app:s3cret@[::1/meta", "(a DSN that is not a valid URL)"),
    ("host=db password=s3cret", "(a DSN that is not a postgresql:// URL)"),
])
def test_a_dsn_is_shown_without_its_password(dsn: str, shown: str) -> None:
    assert redact_dsn(dsn) == shown


@pytest.mark.parametrize("key", [
    "metastore.gateway.pool.acquire.timeout", "metastore.cached.rawstore.cache.update.frequency",
    "hive.compactor.check.interval", "hive.compactor.cleaner.run.interval", "hive.compactor.worker.timeout",
    "hive.compactor.aborted.txn.time.threshold", "hive.compactor.history.reaper.interval",
])
def test_durations_that_must_be_positive_refuse_zero(key: str) -> None:
    with pytest.raises(ConfigError, match=f"{key}: must be a positive duration, got 0s"):
        load_settings(environ={}, overrides={key: "0s"})


def test_other_values_out_of_range_are_bad_settings(tmp_path: Path) -> None:
    negative = tmp_path / "negative.toml"
    negative.write_text("metastore.gateway.shutdown.grace = -1\n")
    with pytest.raises(ConfigError, match="metastore.gateway.shutdown.grace: must not be negative"):
        load_settings(negative, environ={})
    assert load_settings(environ={}, overrides={"metastore.gateway.shutdown.grace": "0s"}).shutdown_grace_s == 0
    for port in ("70000", "-2"):
        with pytest.raises(ConfigError, match=f"metastore.gateway.metrics.port: {port} is not a TCP port"):
            load_settings(environ={}, overrides={"metastore.gateway.metrics.port": port})
    for key, value in (("hive.compactor.delta.num.threshold", "0"), ("hive.compactor.delta.pct.threshold", "0"),
                       ("hive.compactor.history.retention.failed", "-1")):
        with pytest.raises(ConfigError, match=key):
            load_settings(environ={}, overrides={key: value})


@pytest.mark.parametrize("key, bare, seconds", [
    ("hive.compactor.cleaner.run.interval", "5000", 5.0),  # HiveConf: TimeValidator(MILLISECONDS)
    ("hive.compactor.aborted.txn.time.threshold", "12", 43200.0),  # TimeValidator(HOURS)
    ("hive.compactor.history.reaper.interval", "2", 120.0),  # MetastoreConf: TimeUnit.MINUTES
    ("hive.txn.timeout", "300", 300.0),  # seconds
    ("hive.timedout.txn.reaper.start", "100", 100.0),  # MetastoreConf: TimeUnit.SECONDS
    ("metastore.cached.rawstore.cache.update.frequency", "60", 60.0),
    ("metastore.gateway.pool.acquire.timeout", "10", 10.0),  # the gateway's own keys: seconds
])
def test_a_bare_number_is_in_the_unit_hive_reads_the_key_in(key: str, bare: str, seconds: float) -> None:
    field_name = settings_keys()[key]
    assert getattr(load_settings(environ={}, overrides={key: bare}), field_name) == pytest.approx(seconds)
    # An explicit unit is taken as it is, from the command line as from a TOML number.
    assert getattr(load_settings(environ={}, overrides={key: "300ms"}), field_name) == pytest.approx(0.3)


def test_a_toml_number_is_a_bare_number(tmp_path: Path) -> None:
    conf = tmp_path / "gateway.toml"
    conf.write_text("hive.compactor.cleaner.run.interval = 5000\nhive.txn.timeout = 300\n")
    s = load_settings(conf, environ={})
    assert (s.compactor_cleaner_interval_s, s.txn_timeout_s) == (5.0, 300.0)


def test_durations_are_shown_to_hive_with_their_unit() -> None:
    assert as_hive_writes_it("compactor_cleaner_interval_s", 5.0) == "5s"
    assert as_hive_writes_it("compactor_cleaner_interval_s", 0.25) == "250ms"
    assert as_hive_writes_it("txn_timeout_s", 300.0) == "300s"
    assert as_hive_writes_it("cache_enabled", True) == "true"


def test_the_default_file_system_is_checked_at_start() -> None:
    assert load_settings(environ={}).default_fs == "file:///"
    with pytest.raises(ConfigError, match="fs.defaultFS: 'hdfs:/nn' is not a file system URI"):
        load_settings(environ={}, overrides={"fs.defaultFS": "hdfs:/nn"})
