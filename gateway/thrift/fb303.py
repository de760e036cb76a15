"""fb303, the service every Hive metastore extends: status, counters and options, as Hive 2.3 answers.

Monitoring written for Hive's metastore polls these: `getStatus` (ALIVE), `aliveSince`, and
`getCounters`, where Hive counts each API call by its function's name since the process started. Here
the counters are this gateway's Thrift calls by method name, from the same table the Prometheus
metrics read (gateway/metrics.py `CallStats`), so they cost the calls nothing more. Hive counts
under its handler's function names, which are the methods' own for the calls probed; the gateway
counts every call under the method's name.

Options are what fb303 keeps them as in Hive: a map in the server process, shared by every
connection, that nothing reads (`setOption` then `getOption` answers the value; nothing changes).
Unlike Hive's it is bounded, so no client can grow the process without end. fb303 declares no
exceptions, so a refusal is TApplicationException INTERNAL_ERROR with the reason.
"""

from __future__ import annotations

import time

from gateway.metrics import CallStats
from gateway.thrift.convert import required
from hive import limits
from store.errors import ResourceExhausted

ALIVE = 2  # fb303's fb_status.ALIVE
VERSION = "2.3.10-metastore-gateway"
MAX_OPTIONS = 1000
MAX_OPTION_CHARS = limits.MAX_MESSAGE_CHARS


class Fb303:
    """The process-wide state behind fb303: when the gateway started, its call counts, its options."""

    def __init__(self, calls: CallStats | None = None) -> None:
        self.started = int(time.time())
        self.calls = calls or CallStats()
        self.options: dict[str, str] = {}


class Fb303Methods:
    """Mixed into the Thrift handler; needs `_fb303`."""

    _fb303: Fb303

    async def getName(self) -> str:  # noqa: N802 - Thrift's method names
        return "metastore-gateway"

    async def getVersion(self) -> str:  # noqa: N802
        return VERSION

    async def getStatus(self) -> int:  # noqa: N802
        return ALIVE

    async def getStatusDetails(self) -> str:  # noqa: N802
        return ""  # as Hive's: ALIVE needs no details

    async def aliveSince(self) -> int:  # noqa: N802
        return self._fb303.started

    async def getCounters(self) -> dict[str, int]:  # noqa: N802
        """The Thrift calls this gateway has answered since it started, by method."""
        return self._fb303.calls.by_method("thrift")

    async def getCounter(self, key: str | None) -> int:  # noqa: N802
        """One method's count; 0 for a name never called, as Hive answers."""
        return self._fb303.calls.by_method("thrift").get(key or "", 0)

    async def setOption(self, key: str | None, value: str | None) -> None:  # noqa: N802
        key, value = required(key, "key"), value or ""
        options = self._fb303.options
        if len(key) > MAX_OPTION_CHARS or len(value) > MAX_OPTION_CHARS:
            raise ResourceExhausted(f"an fb303 option's key and value are at most {MAX_OPTION_CHARS} characters")
        if key not in options and len(options) >= MAX_OPTIONS:
            raise ResourceExhausted(f"this gateway keeps at most {MAX_OPTIONS} fb303 options; {key!r} is not kept")
        options[key] = value

    async def getOption(self, key: str | None) -> str:  # noqa: N802
        return self._fb303.options.get(key or "", "")

    async def getOptions(self) -> dict[str, str]:  # noqa: N802
        return dict(self._fb303.options)

    async def getCpuProfile(self, profileDurationInSec: int | None) -> str:  # noqa: N802, N803
        return ""  # Hive's answer: no profiler behind it

    async def reinitialize(self) -> None:
        """fb303's reinitialize (oneway): Hive's does nothing, and neither does this."""

    async def shutdown(self) -> None:
        """fb303's shutdown (oneway): clients send it when they close a connection; it stops nothing here."""
