"""The live progress line: elapsed, recent requests/s, p50/p95/p99, failures.

On a terminal the line is rewritten in place (carriage return) a few times a second; anywhere else
(CI logs, captured stderr) one full line is written every `plain_every_s` seconds, so logs stay short.
"""

from __future__ import annotations

import math
import sys
from typing import TextIO

from loadtest.results import LiveView


def format_ms(seconds: float) -> str:
    """Seconds as a short millisecond string; '-' for NaN (no data yet)."""
    if math.isnan(seconds):
        return "-"
    ms = seconds * 1e3
    if ms < 10:
        return f"{ms:.2f}ms"
    if ms < 1000:
        return f"{ms:.1f}ms"
    return f"{ms / 1e3:.2f}s"


def format_line(label: str, view: LiveView) -> str:
    rate = "-" if math.isnan(view.recent_requests_per_s) else f"{view.recent_requests_per_s:,.0f}"
    share = 100.0 * view.failures / view.requests if view.requests else 0.0
    return (
        f"[{label}] {view.elapsed_s:6.1f}s  {rate:>8} req/s  "
        f"p50 {format_ms(view.p50_s)}  p95 {format_ms(view.p95_s)}  p99 {format_ms(view.p99_s)}  "
        f"requests {view.requests:,}  failures {view.failures:,} ({share:.2f}%)"
    )


class ProgressLine:
    """Writes progress for one run to `stream` (stderr by default). `update` is cheap to call often:
    it decides itself whether to write. `finish` always writes the last state and ends the line."""

    def __init__(
        self,
        label: str,
        stream: TextIO | None = None,
        *,
        is_tty: bool | None = None,
        tty_every_s: float = 0.25,
        plain_every_s: float = 5.0,
    ) -> None:
        self._label = label
        self._stream = stream if stream is not None else sys.stderr
        if is_tty is None:
            isatty = getattr(self._stream, "isatty", None)
            is_tty = bool(isatty and isatty())
        self._tty = is_tty
        self._every = tty_every_s if is_tty else plain_every_s
        # A log gets its first line only after one period: a line of zeros at 0.0s says nothing.
        self._last_written: float | None = None if is_tty else 0.0
        self._width = 0

    def update(self, view: LiveView) -> None:
        if view.elapsed_s < 0:  # workers are still waiting for the start instant
            return
        if self._last_written is not None and view.elapsed_s - self._last_written < self._every:
            return
        self._last_written = view.elapsed_s
        self._write(format_line(self._label, view), final=False)

    def finish(self, view: LiveView) -> None:
        """Write the whole run's summary (`RunAggregator.overall`) and end the line."""
        self._write(format_line(self._label, view) + "  done", final=True)

    def _write(self, line: str, *, final: bool) -> None:
        if self._tty:
            # Pad with spaces so a shorter line fully covers the previous one.
            padded = line.ljust(self._width)
            self._width = len(line)
            self._stream.write("\r" + padded + ("\n" if final else ""))
        else:
            self._stream.write(line + "\n")
        self._stream.flush()


class NullProgress:
    """A progress sink that writes nothing."""

    def update(self, view: LiveView) -> None:
        pass

    def finish(self, view: LiveView) -> None:
        pass
