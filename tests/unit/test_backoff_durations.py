"""The one back-off (hive/backoff.py) and the one duration parser (hive/durations.py)."""

from __future__ import annotations

import itertools
import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hive.backoff import Backoff
from hive.durations import DurationError, parse_duration


def test_waits_double_up_to_the_cap() -> None:
    assert list(Backoff(0.1, 1.0).delays(6)) == pytest.approx([0.1, 0.2, 0.4, 0.8, 1.0, 1.0])
    assert Backoff(0.1, 60.0).delay(10_000) == 60.0  # no overflow however many failures


def test_max_doublings_stops_the_growth_below_the_cap() -> None:
    assert [Backoff(0.5, 30.0, max_doublings=5).delay(n) for n in (4, 5, 9)] == [8.0, 16.0, 16.0]


def test_jitter_stays_within_its_band_and_is_injectable() -> None:
    b = Backoff(1.0, 100.0, jitter=0.2)
    waits = list(itertools.islice(b.delays(rng=random.Random(7)), 200))
    assert all(0.8 * min(100.0, 2.0 ** n) <= w <= 1.2 * min(100.0, 2.0 ** n) for n, w in enumerate(waits))
    assert waits == list(itertools.islice(b.delays(rng=random.Random(7)), 200))  # same seed, same waits
    full = [Backoff(0.5, 10.0, jitter=1.0).delay(2, random.Random(s)) for s in range(100)]
    assert all(0 <= w <= 4.0 for w in full) and max(full) > 3 and min(full) < 1


def test_bad_settings_are_refused() -> None:
    for kwargs in ({"initial_s": -1, "max_s": 1}, {"initial_s": 1, "max_s": 1, "jitter": 1.5},
                   {"initial_s": 1, "max_s": 1, "max_doublings": -1}):
        with pytest.raises(ValueError):
            Backoff(**kwargs)


@pytest.mark.parametrize("text, seconds", [
    ("300s", 300), ("100ms", 0.1), ("5m", 300), ("2h", 7200), ("1d", 86400), ("7", 7), (" 1.5 H ", 5400),
    (".5s", 0.5), ("150msec", 0.15), ("2sec", 2), ("3min", 180), (12, 12), (0.25, 0.25),
])
def test_durations_take_hive_suffixes_and_a_bare_number_is_seconds(text: str | float, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "s", "5 weeks", "1.", "-5s", "5ss", "1e3", "five"])
def test_what_is_not_a_duration_is_refused(text: str) -> None:
    with pytest.raises(DurationError, match="not a duration"):
        parse_duration(text)


# The expression the parser used before its runs were made possessive (linear time; tests/unit/test_pattern_time.py).
_BACKTRACKING_DURATION = re.compile(r"\s*(\d*\.?\d+)\s*(ms|msec|s|sec|m|min|h|d)?\s*", re.IGNORECASE)


@settings(max_examples=3000)
@given(st.text(st.sampled_from("1.0 \t\nsmMSecinhdx\u0663"), max_size=12))
def test_durations_read_as_the_backtracking_expression_did(text: str) -> None:
    before = _BACKTRACKING_DURATION.fullmatch(text)
    try:
        seconds = parse_duration(text)
    except DurationError:
        assert before is None, text
    else:
        assert before is not None and seconds == float(before.group(1)) * {
            "ms": 0.001, "msec": 0.001, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0,
        }[(before.group(2) or "s").lower()], text
