-- 0004: commit ids (Hive's WS_COMMIT_ID). At commit a txn records the highest txn id allocated so
-- far; txn T started before C committed iff T <= C.commit_id. A write over a version that such a
-- C created or ended is a lost update under snapshot isolation: first committer wins.
ALTER TABLE txns ADD COLUMN commit_id bigint;
