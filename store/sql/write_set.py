"""Query text of Hive's write-set (TXN_COMPONENTS' update and delete rows, WRITE_SET;
store/schema/0013_write_set.sql). The check itself runs in the commit function, and the Lock call's
statement adds its components (store/sql/locks.py); these are the rest."""

# add_dynamic_partitions: the table's entry the txn's dynamic-partition lock made ($1 txn, $2
# database, $3 table) gives way to the partitions named ($4, one row each, operation $5 'u'/'d').
REPLACE_TABLE_ENTRY_WITH_PARTITIONS = """
WITH gone AS (
    DELETE FROM txn_components WHERE txn_id = $1 AND db_name = $2 AND tbl_name = $3 AND part_name IS NULL
)
INSERT INTO txn_components (txn_id, db_name, tbl_name, part_name, operation)
SELECT $1, $2, $3, p.name, $5 FROM unnest($4::text[]) AS p(name)
"""

# Abort (store/txns.py): an aborted txn's components check nothing any more (its writes are invisible).
DELETE_TXN_COMPONENTS = "DELETE FROM txn_components WHERE txn_id = ANY($1::bigint[])"

# Hive's performWriteSetGC: a row can conflict only with a txn that started before its commit
# (txn id <= commit_id) and is still open; none is once the smallest open txn is above it (index:
# write_set_by_commit_id, txns_open).
GC_WRITE_SET = """
DELETE FROM write_set
WHERE commit_id < coalesce((SELECT min(txn_id) FROM txns WHERE state = 'o'),
                           (SELECT next FROM next_txn_id WHERE id = 1))
"""
