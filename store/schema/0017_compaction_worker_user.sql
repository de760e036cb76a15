-- 0017: the authenticated user whose worker claimed a queue entry (NULL in the open mode, and for
-- entries claimed before), so that only that user, or an admin, may start, heartbeat, complete or fail
-- it (store/compaction.py _owned). Cleared with the claim when the entry goes back to the queue.
ALTER TABLE compaction_queue ADD COLUMN cq_worker_user text;
