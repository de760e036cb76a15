-- 0027: the transaction functions plan each statement once per session, not on every call.
--
-- PL/pgSQL caches a plan per statement, but under plan_cache_mode = auto it compares the cached
-- generic plan's cost with a plan made for the call's values, and a statement over an array or a
-- range of its arguments (unnest(wanted), txn_id = ANY(txns), generate_series(first, last)) always
-- looks cheaper planned for its one value than generically for the planner's default 10 or 1,000
-- rows. So those statements were planned again on every call. pg_stat_statements
-- (track = all, track_planning = on) under bench_txns' txn manager only workload at 16 clients:
-- over gRPC (open, allocate a write id, commit), 188 µs of planning per txn, in six statements
-- (release_txn_locks' delete 84 µs, allocate_write_ids' "which wanted txns have no write id"
-- 42 µs, its write ids' array_agg 26 µs, open_txns' insert 16 µs ...); over Thrift (open, lock,
-- commit) 29 µs. enqueue_locks (0021) already plans generically; the others do now, as it does.
-- Each generic plan is an index probe per wanted row (checked with EXPLAIN of the generic plans).
--
-- release_txn_locks' generic plan could not use the partial index hive_locks_by_txn (txn_id <> 0),
-- which `txn_id = ANY(txns)` does not imply for an unknown array, so it hashed a sequential scan
-- of hive_locks (1 ms once 35,000 released locks awaited vacuum). The condition now says it, and
-- the rows are locked in key order by one statement (as before: two releases, or a release and
-- a CheckLock, never wait for each other in opposite orders) and then deleted by an index probe,
-- where a self-join did both.

CREATE OR REPLACE FUNCTION release_txn_locks(txns bigint[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM hive_locks WHERE txn_id = ANY(txns) AND txn_id <> 0 ORDER BY ext_id, int_id FOR UPDATE;
    DELETE FROM hive_locks WHERE txn_id = ANY(txns) AND txn_id <> 0;
END
$$;

ALTER FUNCTION release_txn_locks(bigint[]) SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION open_txns SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION allocate_write_ids SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION allocate_table_write_ids SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION lock_latest_table SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION commit_txn SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION txn_write_ids SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION append_events SET plan_cache_mode = force_generic_plan;
