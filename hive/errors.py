"""The exceptions of Hive's rules: one root, and the one way a value can fail them."""

from __future__ import annotations


class HiveError(Exception):
    """Root of every error this package raises on purpose."""


class InvalidArgument(HiveError, ValueError):
    """A value that Hive's rules refuse: a bad name, partition value, filter or write-id list. The
    store raises it too for malformed requests; both protocols answer it as a client's mistake."""


class BadPartitionName(InvalidArgument):
    """A partition name that does not name the table's keys in order (hive/names.py parse_partition_name)."""


class ValueNotWhitelisted(InvalidArgument):
    """A partition value hive.metastore.partition.name.whitelist.pattern does not match (Hive's
    metastore answers it with a MetaException on every call, where other bad values differ)."""
