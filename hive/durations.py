"""Durations as Hive writes them, the one parser for every setting that is a time: the gateway's
(gateway/config.py) and the PySpark client's (pipeline/client/config.py).

Hive's suffixes: `ms`, `s`, `m`, `h`, `d` (and the spellings `msec`, `sec`, `min`), any case, with
optional spaces; a bare number means seconds. `300s`, `5m`, `150ms`, `1.5h`, `.5s`, `7`.

Pure: no I/O, no imports beyond the standard library (the PySpark client ships this package).
"""

from __future__ import annotations

import re

_DURATION = re.compile(r"\s*(\d*\.?\d+)\s*(ms|msec|s|sec|m|min|h|d)?\s*", re.IGNORECASE)
_UNIT_S = {"ms": 0.001, "msec": 0.001, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0}
EXAMPLES = "300s, 5m, 150ms, 1d; a bare number is seconds"


class DurationError(ValueError):
    """Not a duration; each caller re-raises it as its own configuration error, naming the key."""


def parse_duration(value: str | int | float) -> float:
    """Seconds in `value`: a number as it is, a string in Hive's form (see the module)."""
    if isinstance(value, (int, float)):
        return float(value)
    m = _DURATION.fullmatch(str(value))
    if not m:
        raise DurationError(f"{value!r} is not a duration ({EXAMPLES})")
    return float(m.group(1)) * _UNIT_S[(m.group(2) or "s").lower()]
