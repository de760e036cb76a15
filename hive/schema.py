"""A column as Hive describes one (name, type, comment): shared by tables, partitions and filters."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class FieldSchema:
    name: str
    type: str
    comment: str = ""
