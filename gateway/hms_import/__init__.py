"""`metastore-gateway import-hms`: a running Hive Metastore's metadata copied into a running gateway.

Both are read and written over Hive's Thrift API only (endpoint.py), so each write passes the gateway's
validation, notification events and caches as any client's would. copier.py runs the phases (databases,
tables and their write ids, partitions in batches with their statistics, functions, the tables' statistics,
then roles, role grants and privileges in grants.py and constraints in constraints.py, both settled by
settle.py); compare.py says when an object already there is the same; write_ids.py keeps a transactional
table's files readable; verify.py compares both sides; report.py is the progress and the summary;
command.py the CLI.
"""
