-- 0030: a lock's grant answers the notification log's head in the snapshot that decided it. Hive reads
-- every object fresh, so a client that takes a lock and then reads sees every commit the lock waited
-- for: Iceberg's HiveCatalog commits so (lock the table, read its metadata_location, alter it, unlock).
-- A gateway whose poller had not yet applied the previous holder's alter answered the old table, and the
-- commit silently replaced the other; with the head, the gateway sends the locked tables' reads to
-- PostgreSQL until its cache has applied it (store/cache/facade.py lock_granted). As 0021 otherwise; each
-- row carries the head (a refusal's row none).
DROP FUNCTION enqueue_locks(integer, bigint[], integer[], integer[], text[], text[], text[], text[], text[], bigint[],
                            text[], text[], text[], text[], text[]);

CREATE FUNCTION enqueue_locks(p_n integer, p_txns bigint[], p_request integer[], p_int_id integer[], p_db text[],
                              p_tbl text[], p_part text[], p_type text[], p_operation text[], p_txn bigint[], p_level text[], p_keys text[],
                              p_user text[], p_host text[], p_agent text[])
RETURNS TABLE (refused_txn bigint, refused_state char(1), cleaned_below bigint, lock_ext_id bigint,
               lock_int_id integer, lock_state char(1), blocked_ext_id bigint, blocked_int_id integer,
               log_head bigint)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    states jsonb;
    t bigint;
    first_id bigint;
BEGIN
    SELECT coalesce(jsonb_object_agg(x.txn_id::text, x.state), '{}'::jsonb) INTO states FROM (
        SELECT tx.txn_id, tx.state FROM txns tx WHERE tx.txn_id = ANY(p_txns) ORDER BY tx.txn_id FOR SHARE) AS x;
    FOREACH t IN ARRAY p_txns LOOP
        IF states ->> t::text IS DISTINCT FROM 'o' THEN
            refused_txn := t;
            refused_state := states ->> t::text;
            SELECT h.t2w_cleaned_below INTO cleaned_below FROM txn_housekeeping h WHERE h.id = 1;
            RETURN NEXT;
            RETURN;
        END IF;
    END LOOP;
    UPDATE next_lock_id n SET next = n.next + p_n WHERE n.id = 1 RETURNING n.next - p_n INTO first_id;
    RETURN QUERY
    WITH r AS (
        SELECT first_id + x.request AS ext_id, x.int_id, x.db_name, x.tbl_name, x.part_name COLLATE "C" AS part_name,
               x.lock_type, x.operation, x.txn_id, x.lock_level, x.user_name, x.host, x.agent_info
        FROM unnest(p_request, p_int_id, p_db, p_tbl, p_part, p_type, p_operation, p_txn, p_level, p_user, p_host,
                    p_agent)
            AS x(request, int_id, db_name, tbl_name, part_name, lock_type, operation, txn_id, lock_level, user_name,
                 host, agent_info)
    ), blocker AS (
        -- Per request, its first conflicting earlier component: in hive_locks (index order), else in this call.
        SELECT DISTINCT ON (r.ext_id) r.ext_id, r.int_id, ex.ext_id AS b_ext, ex.int_id AS b_int
        FROM r CROSS JOIN LATERAL (
            (SELECT ex.ext_id, ex.int_id FROM hive_locks ex
             WHERE ex.db_name = r.db_name AND ex.ext_id < r.ext_id AND (r.txn_id = 0 OR ex.txn_id <> r.txn_id)
               AND lock_blocks(r.tbl_name, r.part_name, r.lock_type, r.lock_level,
                               ex.tbl_name, ex.part_name, ex.lock_type, ex.lock_level, p_keys)
             ORDER BY ex.ext_id, ex.int_id LIMIT 1)
            UNION ALL
            (SELECT ex.ext_id, ex.int_id FROM r AS ex
             WHERE ex.db_name = r.db_name AND ex.ext_id < r.ext_id AND (r.txn_id = 0 OR ex.txn_id <> r.txn_id)
               AND lock_blocks(r.tbl_name, r.part_name, r.lock_type, r.lock_level,
                               ex.tbl_name, ex.part_name, ex.lock_type, ex.lock_level, p_keys)
             ORDER BY ex.ext_id, ex.int_id LIMIT 1)
        ) ex
        ORDER BY r.ext_id, ex.ext_id, ex.int_id
    ), granted AS (
        INSERT INTO hive_locks AS h (ext_id, int_id, txn_id, db_name, tbl_name, part_name, state, lock_type,
                                     operation, last_heartbeat, acquired_at, user_name, host, agent_info,
                                     blocked_by_ext_id, blocked_by_int_id)
        SELECT r.ext_id, r.int_id, r.txn_id, r.db_name, r.tbl_name, r.part_name,
               CASE WHEN b.b_ext IS NULL THEN 'a' ELSE 'w' END, r.lock_type, r.operation,
               CASE WHEN r.txn_id = 0 THEN statement_timestamp() END,
               CASE WHEN b.b_ext IS NULL THEN statement_timestamp() END,
               r.user_name, r.host, r.agent_info,
               CASE WHEN b.int_id = r.int_id THEN b.b_ext END, CASE WHEN b.int_id = r.int_id THEN b.b_int END
        FROM r LEFT JOIN blocker b ON b.ext_id = r.ext_id
        ORDER BY r.ext_id, r.int_id
        RETURNING h.ext_id, h.int_id, h.state, h.blocked_by_ext_id, h.blocked_by_int_id
    )
    -- The log's head in the snapshot that decided the grants (this statement's): every commit the
    -- decision saw (the unlock or commit that freed the lock, and so every write before it) is at or
    -- below it.
    SELECT NULL::bigint, NULL::char(1), NULL::bigint, g.ext_id, g.int_id, g.state, g.blocked_by_ext_id,
           g.blocked_by_int_id, (SELECT s.next_event_id - 1 FROM notification_sequence s WHERE s.id = 1)
    FROM granted g
    ORDER BY g.ext_id, g.int_id;
END
$$;
