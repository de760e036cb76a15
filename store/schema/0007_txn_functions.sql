-- 0007: the event append and the transaction manager's hot operations (open, allocate write ids,
-- commit) as server-side functions, so that each of those RPCs is one statement: one round trip,
-- committed by itself, its row locks (next_txn_id, a txn's row, notification_sequence) held only
-- while PostgreSQL executes and flushes it, never across a round trip to a busy gateway. Each
-- statement inside a (volatile) function sees a fresh snapshot, as the statements of a READ
-- COMMITTED transaction do, so these functions keep the rules of the statement sequences they
-- replace (store/txns.py calls them, inside a caller's transaction or alone).
--
-- The state functions return their event's message and append nothing: a caller's transaction
-- appends events last (store/events.py), or one statement appends them right after the function
-- (store/sql/txns.py, the *_LOGGED queries), which is the same thing for a one-statement write.

-- Append events in order and return the first id; NULL for none. Taking ids locks the sequence row
-- until the transaction ends, so ids are dense and become visible in id order (store/sql/events.py).
-- The NOTIFY is delivered at commit and wakes every poller.
CREATE FUNCTION append_events(event_types text[], db_names text[], tbl_names text[], table_ids bigint[],
                              txn_ids bigint[], write_ids bigint[], messages jsonb[]) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    n integer := coalesce(cardinality(event_types), 0);
    first_id bigint;
BEGIN
    IF n = 0 THEN
        RETURN NULL;
    END IF;
    UPDATE notification_sequence SET next_event_id = next_event_id + n WHERE id = 1
    RETURNING next_event_id - n INTO first_id;
    INSERT INTO notification_log (event_id, event_type, db_name, tbl_name, table_id, txn_id, write_id, message)
    SELECT first_id + e.ord - 1, e.event_type, e.db_name, e.tbl_name, e.table_id, e.txn_id, e.write_id, e.message
    FROM unnest(event_types, db_names, tbl_names, table_ids, txn_ids, write_ids, messages)
         WITH ORDINALITY AS e(event_type, db_name, tbl_name, table_id, txn_id, write_id, message, ord);
    PERFORM pg_notify('metastore_events', (first_id + n - 1)::text);
    RETURN first_id;
END
$$;

-- Open n txns with consecutive ids (the counter row stays locked until commit, so ids are handed
-- out in order and the snapshot high-water mark is next - 1).
CREATE FUNCTION open_txns(n integer, kind smallint, who text, from_host text, agent text,
                          OUT first_txn_id bigint, OUT last_txn_id bigint, OUT message jsonb)
LANGUAGE plpgsql AS $$
DECLARE
    min_open bigint;
BEGIN
    UPDATE next_txn_id SET next = next + n WHERE id = 1 RETURNING next - n, next - 1 INTO first_txn_id, last_txn_id;
    INSERT INTO txns (txn_id, state, txn_type, user_name, host, agent_info)
    SELECT g, 'o', kind, who, from_host, agent FROM generate_series(first_txn_id, last_txn_id) AS g;
    -- HIVE-18747: each new txn records the smallest txn open now (its own included); below the
    -- minimum of these, every txn is decided in every open txn's snapshot.
    SELECT min(txn_id) INTO min_open FROM txns WHERE state = 'o';
    INSERT INTO min_history_level (txn_id, min_open_txn_id)
    SELECT g, min_open FROM generate_series(first_txn_id, last_txn_id) AS g;
    message := jsonb_build_object('txn_ids', to_jsonb(ARRAY(SELECT generate_series(first_txn_id, last_txn_id))),
                                  'from_txn_id', first_txn_id, 'to_txn_id', last_txn_id);
END
$$;

-- The write ids a txn holds, each as {table_id, db_name, table_name, write_id} (the
-- table's current name; '' once dropped), by txn and table: what COMMIT_TXN and ABORT_TXN list.
CREATE FUNCTION txn_write_ids(txn bigint) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT coalesce(jsonb_agg(jsonb_build_object('table_id', tw.table_id, 'db_name', coalesce(t.db_name, ''),
                                                 'table_name', coalesce(t.tbl_name, ''), 'write_id', tw.write_id)
                              ORDER BY tw.table_id), '[]'::jsonb)
    FROM txn_to_write_id tw
    LEFT JOIN tbls t ON t.table_id = tw.table_id AND t.dropped_wid IS NULL
    WHERE tw.txn_id = txn
$$;

-- Locks taken under a txn end with it (store/locks.py); rows locked in key order, as every releaser
-- of several does, so two releases cannot deadlock.
CREATE FUNCTION release_txn_locks(txns bigint[]) RETURNS void
LANGUAGE sql AS $$
    DELETE FROM hive_locks WHERE (ext_id, int_id) IN (
        SELECT ext_id, int_id FROM hive_locks WHERE txn_id = ANY(txns) ORDER BY ext_id, int_id FOR UPDATE)
$$;

-- Commit an open txn. prior_state: 'o' (committed now; message is COMMIT_TXN's), 'c' (committed
-- before: commit is idempotent), 'a' (aborted: nothing changes), NULL (no row: cleaned_below tells
-- whether housekeeping removed it as committed). Only a txn that wrote takes a commit id, under a
-- share lock on the counter row: opens (which update it) wait for this commit, so a txn whose id
-- is above the commit id takes its snapshot after this one is visible (first committer wins).
CREATE FUNCTION commit_txn(txn bigint, OUT prior_state char(1), OUT cleaned_below bigint, OUT message jsonb)
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
    IF wrote <> '[]'::jsonb THEN
        SELECT next - 1 INTO new_commit_id FROM next_txn_id WHERE id = 1 FOR SHARE;
    END IF;
    UPDATE txns SET state = 'c', commit_id = new_commit_id, finished_at = clock_timestamp() WHERE txn_id = txn;
    DELETE FROM min_history_level WHERE txn_id = txn;
    PERFORM release_txn_locks(ARRAY[txn]);
    message := jsonb_build_object('txn_id', txn, 'write_ids', wrote);
END
$$;

-- Write ids of one table for each of `wanted` (sorted, distinct): reused when the txn has one
-- (idempotent), else allocated contiguously in txn-id order under the table's counter row lock.
-- Every txn must be open: they are locked FOR SHARE (no commit or abort until this transaction
-- ends) and the first that is not is answered in refused_txn / refused_state (NULL: no row, see
-- cleaned_below), with nothing written. message is ALLOC_WRITE_ID's, NULL when none was allocated.
CREATE FUNCTION allocate_write_ids(tbl_id bigint, wanted bigint[],
                                   OUT refused_txn bigint, OUT refused_state char(1), OUT cleaned_below bigint,
                                   OUT txn_ids bigint[], OUT write_ids bigint[], OUT message jsonb)
LANGUAGE plpgsql AS $$
DECLARE
    states jsonb;
    t bigint;
    fresh bigint[];
    first_id bigint;
BEGIN
    SELECT coalesce(jsonb_object_agg(x.txn_id::text, x.state), '{}'::jsonb) INTO states FROM (
        SELECT txn_id, state FROM txns WHERE txn_id = ANY(wanted) ORDER BY txn_id FOR SHARE) AS x;
    FOREACH t IN ARRAY wanted LOOP
        IF states ->> t::text IS DISTINCT FROM 'o' THEN
            refused_txn := t;
            refused_state := states ->> t::text;
            SELECT t2w_cleaned_below INTO cleaned_below FROM txn_housekeeping WHERE id = 1;
            RETURN;
        END IF;
    END LOOP;
    fresh := ARRAY(SELECT w FROM unnest(wanted) AS w
                   WHERE NOT EXISTS (SELECT 1 FROM txn_to_write_id tw WHERE tw.table_id = tbl_id AND tw.txn_id = w)
                   ORDER BY w);
    IF cardinality(fresh) > 0 THEN
        INSERT INTO next_write_id (table_id, next) VALUES (tbl_id, 1 + cardinality(fresh))
        ON CONFLICT (table_id) DO UPDATE SET next = next_write_id.next + cardinality(fresh)
        RETURNING next - cardinality(fresh) INTO first_id;
        INSERT INTO txn_to_write_id (txn_id, table_id, write_id)
        SELECT f.txn_id, tbl_id, first_id + f.ord - 1 FROM unnest(fresh) WITH ORDINALITY AS f(txn_id, ord);
        message := jsonb_build_object('txn_ids', to_jsonb(fresh),
                                      'write_ids', to_jsonb(ARRAY(SELECT first_id + i FROM generate_series(0, cardinality(fresh) - 1) AS i)));
    END IF;
    SELECT array_agg(tw.txn_id ORDER BY tw.txn_id), array_agg(tw.write_id ORDER BY tw.txn_id) INTO txn_ids, write_ids
    FROM txn_to_write_id tw WHERE tw.table_id = tbl_id AND tw.txn_id = ANY(wanted);
END
$$;

-- The latest version of a table by name, locked FOR SHARE until the transaction ends (no drop,
-- rename or alter of it meanwhile): found_table_id NULL when there is none. A version that changed
-- while this waited for its lock is looked up again (as store/catalog.py's _lock_latest does),
-- up to 20 times (then relocks_exhausted).
CREATE FUNCTION lock_latest_table(db text, tbl text, OUT found_table_id bigint, OUT table_type text,
                                  OUT transactional boolean, OUT relocks_exhausted boolean)
LANGUAGE plpgsql AS $$
BEGIN
    relocks_exhausted := false;
    FOR attempt IN 1..20 LOOP
        SELECT t.table_id, t.table_type, t.transactional INTO found_table_id, table_type, transactional
        FROM tbls t WHERE t.db_name = db AND t.tbl_name = tbl AND t.dropped_wid IS NULL FOR SHARE;
        IF FOUND THEN
            RETURN;
        END IF;
        -- Nothing locked: either there is no latest version, or the one this statement's snapshot
        -- saw was replaced while it waited; a fresh look tells which.
        PERFORM 1 FROM tbls t WHERE t.db_name = db AND t.tbl_name = tbl AND t.dropped_wid IS NULL;
        IF NOT FOUND THEN
            RETURN;
        END IF;
    END LOOP;
    relocks_exhausted := true;
END
$$;

-- AllocateTableWriteIds by name: the table's latest version locked FOR SHARE, then its write ids
-- when it is transactional (a managed table with 'transactional'='true'); else only what was found.
CREATE FUNCTION allocate_table_write_ids(db text, tbl text, wanted bigint[],
                                         OUT found_table_id bigint, OUT table_type text, OUT transactional boolean,
                                         OUT relocks_exhausted boolean, OUT refused_txn bigint,
                                         OUT refused_state char(1), OUT cleaned_below bigint, OUT txn_ids bigint[],
                                         OUT write_ids bigint[], OUT message jsonb)
LANGUAGE plpgsql AS $$
BEGIN
    SELECT l.found_table_id, l.table_type, l.transactional, l.relocks_exhausted
    INTO found_table_id, table_type, transactional, relocks_exhausted
    FROM lock_latest_table(db, tbl) AS l;
    IF found_table_id IS NOT NULL AND transactional AND table_type = 'MANAGED_TABLE' THEN
        SELECT a.refused_txn, a.refused_state, a.cleaned_below, a.txn_ids, a.write_ids, a.message
        INTO refused_txn, refused_state, cleaned_below, txn_ids, write_ids, message
        FROM allocate_write_ids(found_table_id, wanted) AS a;
    END IF;
END
$$;
