-- 0022: what a txn's write deletes besides its versions, the column statistics and grants of a column
-- it drops or retypes and of a partition it drops, goes when the txn commits, as its new versions
-- become visible then. Until then the row carries the txn in deleted_by_txn and every reader still
-- sees it (they see the committed columns and partitions it describes); commit_txn deletes the rows
-- of the txn it commits, and an abort (store/txns.py abort_txns) clears the mark, so the aborted
-- write leaves them as they were. Before 0022 they were deleted at once and an abort, which brings
-- the old versions back, did not bring them back. A write without a txn deletes at once, as before.
ALTER TABLE column_stats ADD COLUMN deleted_by_txn bigint;
CREATE INDEX column_stats_deleted_by_txn ON column_stats (deleted_by_txn) WHERE deleted_by_txn IS NOT NULL;
ALTER TABLE privileges ADD COLUMN deleted_by_txn bigint;
CREATE INDEX privileges_deleted_by_txn ON privileges (deleted_by_txn) WHERE deleted_by_txn IS NOT NULL;

-- As 0013, and at the end the rows the txn marked deleted go (only a txn that wrote can have marked
-- any: two index probes of empty partial indexes otherwise skipped).
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
    IF wrote <> '[]'::jsonb THEN
        DELETE FROM column_stats WHERE deleted_by_txn = txn;
        DELETE FROM privileges WHERE deleted_by_txn = txn;
    END IF;
    message := jsonb_build_object('txn_id', txn, 'write_ids', wrote);
END
$$;
