from pathlib import Path

import pytest

from gateway.config import ConfigError, load_settings, parse_duration, redact_dsn


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
