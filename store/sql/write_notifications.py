"""SQL of store/write_notifications.py (table: store/schema/0035)."""

# A txn's second load into the same table or partition (Hive's retry, or a second statement) adds its files
# before the ones logged, unless they are logged already (Hive's DbNotificationListener: the joined list of
# the new ones found in the joined list of the old is a retry, and changes nothing).
UPSERT = """
INSERT INTO txn_write_notifications AS w (txn_id, write_id, db_name, tbl_name, part_name, table_obj, partition_obj,
                                          files)
VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8::text[])
ON CONFLICT (txn_id, db_name, tbl_name, part_name) DO UPDATE
SET table_obj = EXCLUDED.table_obj, partition_obj = EXCLUDED.partition_obj, files = EXCLUDED.files || w.files,
    event_time = EXCLUDED.event_time
WHERE strpos(array_to_string(w.files, $9), array_to_string(EXCLUDED.files, $9)) = 0
"""

# Index: the primary key (txn_id first).
SELECT_OF_TXN = """
SELECT write_id, db_name, tbl_name, part_name, table_obj, partition_obj, files FROM txn_write_notifications
WHERE txn_id = $1 AND ($2::text IS NULL OR db_name = $2) AND ($3::text IS NULL OR tbl_name = $3)
ORDER BY db_name, tbl_name, part_name
"""

# Index: txn_write_notifications_by_time.
DELETE_OLD = """
DELETE FROM txn_write_notifications WHERE event_time < clock_timestamp() - make_interval(secs => $1)
"""
