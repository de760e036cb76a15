"""Hive's value types and rules, pure: no I/O, no gateway, no database.

Write-id and txn lists in Hive's string forms (`writeids`), names, partition names and their
escaping (`names`), the partition filter language (`partition_filter`), the lock rules
(`lock_rules`), the bounds on free text (`limits`), and the column type they share (`schema`).
The store, the PySpark pipeline and the load tests import them from here; nothing here imports
them back.
"""
