-- 0038: the commit's write-set check costs in proportion to the txn's updates and deletes, not to their
-- number times the write-set's rows. Its join matched a partition with `IS NOT DISTINCT FROM` (NULL: a
-- whole table), which no index answers: a txn that updated 10,000 partitions took 12.6 s to commit
-- after another's commit of 10,000 (1,000: 0.18 s). Now write_set_conflict joins partitions by equality
-- and whole tables by IS NULL, each by write_set_by_target, with enable_seqscan off: its generic plan,
-- made once per session while write_set is small, would otherwise scan it once per component (0037's
-- finding for the locks). Its answer, the first conflict in (commit id, database, table, partition)
-- order, is the one before. commit_txn is 0026's but for that call.

CREATE FUNCTION write_set_conflict(txn bigint) RETURNS jsonb
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
DECLARE
    conflict jsonb;
BEGIN
    SELECT jsonb_build_object('txn_id', x.txn_id, 'commit_id', x.commit_id, 'db_name', x.db_name,
                              'table_name', x.tbl_name, 'part_name', x.part_name, 'operation', x.operation,
                              'committed_operation', x.committed_operation)
    INTO conflict
    FROM (
        SELECT w.txn_id, w.commit_id, w.db_name, w.tbl_name, w.part_name, c.operation, w.operation AS committed_operation
        FROM txn_components c
        JOIN write_set w ON w.db_name = c.db_name AND w.tbl_name = c.tbl_name AND w.part_name = c.part_name
        WHERE c.txn_id = txn AND c.part_name IS NOT NULL AND w.commit_id >= txn AND w.txn_id <> txn
        UNION ALL
        SELECT w.txn_id, w.commit_id, w.db_name, w.tbl_name, w.part_name, c.operation, w.operation
        FROM txn_components c
        JOIN write_set w ON w.db_name = c.db_name AND w.tbl_name = c.tbl_name AND w.part_name IS NULL
        WHERE c.txn_id = txn AND c.part_name IS NULL AND w.commit_id >= txn AND w.txn_id <> txn
    ) AS x
    ORDER BY x.commit_id, x.db_name, x.tbl_name, x.part_name
    LIMIT 1;
    RETURN conflict;
END
$$;

CREATE OR REPLACE FUNCTION commit_txn(txn bigint, OUT prior_state char(1), OUT cleaned_below bigint,
                                      OUT message jsonb, OUT write_conflict jsonb)
LANGUAGE plpgsql AS $$
DECLARE
    wrote jsonb;
    new_commit_id bigint;
BEGIN
    SELECT state INTO prior_state FROM txns WHERE txn_id = txn FOR UPDATE;
    IF prior_state IS NULL THEN
        SELECT t2w_cleaned_below INTO cleaned_below FROM txn_housekeeping WHERE id = 1;
    END IF;
    IF prior_state IS DISTINCT FROM 'o' THEN
        RETURN;
    END IF;
    wrote := txn_write_ids(txn);
    IF EXISTS (SELECT 1 FROM txn_components WHERE txn_id = txn) THEN
        PERFORM pg_advisory_xact_lock(120342424519425);  -- 0x6D736777_0301: "msgw" write set
        SELECT next - 1 INTO new_commit_id FROM next_txn_id WHERE id = 1 FOR SHARE;
        write_conflict := write_set_conflict(txn);
        IF write_conflict IS NOT NULL THEN
            RETURN;
        END IF;
        INSERT INTO write_set (db_name, tbl_name, part_name, txn_id, commit_id, operation)
        SELECT DISTINCT db_name, tbl_name, part_name, txn, new_commit_id, operation
        FROM txn_components WHERE txn_id = txn;
        DELETE FROM txn_components WHERE txn_id = txn;
    ELSIF wrote <> '[]'::jsonb THEN
        SELECT next - 1 INTO new_commit_id FROM next_txn_id WHERE id = 1 FOR SHARE;
    END IF;
    UPDATE txns SET state = 'c', commit_id = new_commit_id, finished_at = clock_timestamp() WHERE txn_id = txn;
    DELETE FROM min_history_level WHERE txn_id = txn;
    PERFORM release_txn_locks(ARRAY[txn]);
    -- One statement finds whether there is anything to do; a txn that marked and wrote no statistics or
    -- grants (nearly every one) runs none of the four below.
    IF wrote <> '[]'::jsonb AND EXISTS (SELECT 1 FROM column_stats WHERE deleted_by_txn = txn
                                        UNION ALL SELECT 1 FROM privileges WHERE deleted_by_txn = txn
                                        UNION ALL SELECT 1 FROM column_stats_by_txn WHERE deleted_by_txn = txn
                                        UNION ALL SELECT 1 FROM column_stats_by_txn WHERE txn_id = txn) THEN
        DELETE FROM column_stats WHERE deleted_by_txn = txn;
        DELETE FROM column_stats_by_txn WHERE deleted_by_txn = txn;  -- other txns' statistics of what it dropped
        DELETE FROM privileges WHERE deleted_by_txn = txn;
        -- After the deletions: statistics the txn wrote for a column it retyped replace the old ones. A
        -- row marked by another txn's drop describes a partition that exists until that txn commits.
        WITH written AS (DELETE FROM column_stats_by_txn WHERE txn_id = txn RETURNING *)
        INSERT INTO column_stats (table_id, part_name, column_name, column_type, kind, data, last_analyzed,
                                  deleted_by_txn)
        SELECT s.table_id, s.part_name, s.column_name, s.column_type, s.kind, s.data, s.last_analyzed,
               s.deleted_by_txn
        FROM written s
        WHERE EXISTS (SELECT 1 FROM tbls t WHERE t.table_id = s.table_id AND t.dropped_wid IS NULL)
          AND (s.part_name = '' OR s.deleted_by_txn IS NOT NULL
               OR EXISTS (SELECT 1 FROM partitions p WHERE p.table_id = s.table_id
                          AND p.part_name = s.part_name AND p.dropped_wid IS NULL))
        ON CONFLICT (table_id, part_name, column_name) DO UPDATE
        SET column_type = EXCLUDED.column_type, kind = EXCLUDED.kind, data = EXCLUDED.data,
            last_analyzed = EXCLUDED.last_analyzed,
            deleted_by_txn = coalesce(EXCLUDED.deleted_by_txn, column_stats.deleted_by_txn);
    END IF;
    message := jsonb_build_object('txn_id', txn, 'write_ids', wrote);
END
$$;

ALTER FUNCTION commit_txn SET plan_cache_mode = force_generic_plan;
