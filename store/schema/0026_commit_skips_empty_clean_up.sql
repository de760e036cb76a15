-- 0026: commit_txn as 0025, but a txn that allocated a write id and marked or wrote no column
-- statistics or grants (nearly every one) runs one statement to learn so, where it ran the four that
-- delete and move them (each an index probe that found nothing, each a statement's overhead):
-- 0023 and 0025 had made the gRPC txn manager only row of bench_txns about 6% slower.
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
        SELECT jsonb_build_object('txn_id', w.txn_id, 'commit_id', w.commit_id, 'db_name', w.db_name,
                                  'table_name', w.tbl_name, 'part_name', w.part_name, 'operation', c.operation,
                                  'committed_operation', w.operation)
        INTO write_conflict
        FROM txn_components c
        JOIN write_set w ON w.db_name = c.db_name AND w.tbl_name = c.tbl_name
                        AND w.part_name IS NOT DISTINCT FROM c.part_name
        WHERE c.txn_id = txn AND w.commit_id >= txn AND w.txn_id <> txn
        ORDER BY w.commit_id, w.db_name, w.tbl_name, w.part_name
        LIMIT 1;
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
