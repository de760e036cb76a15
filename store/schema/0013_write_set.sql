-- 0013: Hive's write-set check (hive-reference §5.2): of two txns that update or delete the same
-- partition (or unpartitioned table) and overlap in time, the second to commit is aborted. Hive 4's
-- lock matrix lets two SHARED_WRITE updaters of a partition run side by side (hive/lock_rules.py);
-- this is what keeps the second from overwriting the first's changes with rows its snapshot read
-- before the first committed (a lost update).
--
-- Tables are named by database and table name, as Hive's TXN_COMPONENTS and WRITE_SET do: a row
-- outliving its table can only cause a spurious conflict (an abort the client retries), never hide
-- a real one, and housekeeping removes it soon.

-- The update and delete components of open txns (Hive's TXN_COMPONENTS with operation 'u' or 'd'):
-- added by Lock (store/sql/locks.py) and add_dynamic_partitions (store/write_set.py), consumed by
-- commit, deleted by commit and abort. Insert components are not kept: in Hive they feed the
-- compactor's candidate list (COMPLETED_TXN_COMPONENTS), which here comes from the write-id
-- counters (store/sql/compaction.py), and the write-set ignores them.
CREATE TABLE txn_components (
    txn_id      bigint NOT NULL,
    db_name     text NOT NULL,
    tbl_name    text NOT NULL,
    part_name   text COLLATE "C",                              -- NULL: the whole table
    operation   char(1) NOT NULL CHECK (operation IN ('u', 'd'))
);
CREATE INDEX txn_components_by_txn ON txn_components (txn_id);

-- What committed txns updated or deleted, with their commit ids (Hive's WRITE_SET): kept until no
-- open txn started before the commit (store/housekeeping.py, Hive's performWriteSetGC).
CREATE TABLE write_set (
    db_name     text NOT NULL,
    tbl_name    text NOT NULL,
    part_name   text COLLATE "C",
    txn_id      bigint NOT NULL,
    commit_id   bigint NOT NULL,
    operation   char(1) NOT NULL CHECK (operation IN ('u', 'd'))
);
CREATE INDEX write_set_by_target ON write_set (db_name, tbl_name, part_name);
CREATE INDEX write_set_by_commit_id ON write_set (commit_id);

-- commit_txn of 0007, with the write-set check. A txn with update or delete components takes the
-- write-set lock (an advisory lock held until its transaction ends), so write-set commits run one
-- at a time and each check's fresh snapshot sees every earlier one's rows. It conflicts when
-- another txn that committed after it started (commit_id >= its id) updated or deleted one of the
-- same targets: any pair of updates and deletes, Hive 3.1's and 4's rule (a delete and an insert of
-- the same row in two txns is an update; Hive 2.3 let two deletes through). A conflicting txn is
-- left open with nothing changed and the conflict in write_conflict; the caller aborts it
-- (store/txns.py), as the abort discards what the txn wrote.
DROP FUNCTION commit_txn(bigint);
CREATE FUNCTION commit_txn(txn bigint, OUT prior_state char(1), OUT cleaned_below bigint, OUT message jsonb,
                           OUT write_conflict jsonb)
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
    message := jsonb_build_object('txn_id', txn, 'write_ids', wrote);
END
$$;
