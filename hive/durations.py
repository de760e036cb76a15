"""Durations as Hive writes them, the one parser for every setting that is a time: the gateway's
(gateway/config.py) and the PySpark client's (pipeline/client/config.py).

Hive's suffixes: `ms`, `s`, `m`, `h`, `d` (and the spellings `msec`, `sec`, `min`), any case, with
optional spaces. `300s`, `5m`, `150ms`, `1.5h`, `.5s`, `7`. A bare number is in the unit Hive reads that
key's bare numbers in (HiveConf's TimeValidator, MetastoreConf's TimeUnit): `bare_unit`, seconds unless
the caller says otherwise (`hive.compactor.cleaner.run.interval=5000` is 5 s, `hive.txn.timeout=300` 300 s).

Pure: no I/O, no imports beyond the standard library (the PySpark client ships this package).
"""

from __future__ import annotations

import re

# Possessive (`*+`, `++`): no run of digits or spaces is ever given back, which a match never needs (what
# follows a run cannot start with its character). A client's setMetaConf value is matched here on the event
# loop, and the backtracking of `\d*\.?\d+` took 6 s over 5,000 digits and a letter; now linear.
_DURATION = re.compile(r"\s*+(\d++(?:\.\d++)?+|\.\d++)\s*+(?:(ms|msec|s|sec|m|min|h|d)\s*+)?", re.IGNORECASE)
_UNIT_S = {"ms": 0.001, "msec": 0.001, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0}
UNITS = frozenset(_UNIT_S)
EXAMPLES = "300s, 5m, 150ms, 1d"


class DurationError(ValueError):
    """Not a duration; each caller re-raises it as its own configuration error, naming the key."""


def parse_duration(value: str | int | float, bare_unit: str = "s") -> float:
    """Seconds in `value`, a string in Hive's form (see the module) or a number; a number, or a string
    without a unit, is in `bare_unit` (one of UNITS)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value) * _UNIT_S[bare_unit]
    m = _DURATION.fullmatch(str(value))
    if not m:
        raise DurationError(f"{value!r} is not a duration ({EXAMPLES}; a bare number is {_NAMES[bare_unit]})")
    return float(m.group(1)) * _UNIT_S[(m.group(2) or bare_unit).lower()]


_NAMES = {"ms": "milliseconds", "msec": "milliseconds", "s": "seconds", "sec": "seconds", "m": "minutes",
          "min": "minutes", "h": "hours", "d": "days"}
