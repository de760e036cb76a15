"""Hive's value types and rules, pure: no I/O, no gateway, no database.

Write-id and txn lists in Hive's string forms (`writeids`), names, partition names and their
escaping (`names`), the partition filter language (`partition_filter`) and the table filter on it
(`table_filter`), the lock rules (`lock_rules`), the bounds on free text (`limits`), the column type
they share (`schema`), and
column statistics: their kinds, checks and merge (`column_stats`), their aggregate over
partitions (`stats_aggregation`) and the COLUMN_STATS_ACCURATE mark (`stats_accuracy`), and which
column type changes an alter may make (`column_types`).
The store, the PySpark pipeline and the load tests import them from here; nothing here imports
them back.
"""
