-- 0035: Hive's TXN_WRITE_NOTIFICATION_LOG: the files each txn's load wrote into a transactional table or
-- partition (add_write_notification_log, sent by Hive when hive.metastore.dml.events is on), read back by
-- get_all_write_event_info (Hive's REPL DUMP, Impala's event processor at each COMMIT_TXN). One row per
-- txn, table and partition ('' for a table's own); trimmed with the notification log, by age.
CREATE TABLE txn_write_notifications (
    txn_id         bigint NOT NULL,
    write_id       bigint NOT NULL,
    db_name        text NOT NULL,
    tbl_name       text NOT NULL,
    part_name      text NOT NULL COLLATE "C",
    table_obj      jsonb NOT NULL,   -- the table as the write found it (store/codec.py table_to_json)
    partition_obj  jsonb,            -- its partition likewise (partition_to_json), NULL for a table's own
    files          text[] NOT NULL,  -- each as Hive encodes a file (hive/repl_files.py)
    event_time     timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (txn_id, db_name, tbl_name, part_name)
);
CREATE INDEX txn_write_notifications_by_time ON txn_write_notifications (event_time);
