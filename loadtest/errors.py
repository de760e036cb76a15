"""The load generator's exceptions: one root, one class per thing a caller can act on."""

from __future__ import annotations


class LoadTestError(Exception):
    """Root of every error the load generator raises on purpose."""


class ConfigError(LoadTestError, ValueError):
    """A run, target or user class is misconfigured; the message names the field and the fix."""


class RunnerError(LoadTestError):
    """A run could not be carried out (workers did not start, a target failed to come up)."""


class StopUser(Exception):
    """Raised inside a task or `on_start` to end that user for the rest of the run (not a failure)."""
