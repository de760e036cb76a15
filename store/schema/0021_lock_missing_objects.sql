-- 0021: a lock names its database, table and partition, and need not find them: Hive's TxnHandler.lock
-- checks no object, and clients lock names before they exist (Hive 4's CTAS of an ACID table locks its
-- target, HIVE-26244; Hive 2.3's static insert into a new partition locks the partition's name, a
-- DummyPartition). Locks were always kept and compared by name, as in Hive's HIVE_LOCKS, so only the
-- existence checks of 0009 go: enqueue_locks loses its database and table arguments and the refusals
-- that named them. A missing partition was refused by the gateway (store/locks.py), which now locks its
-- name too. As 0009 otherwise:
-- 1. the txns (p_txns, sorted) locked FOR SHARE, each checked open (refused_txn / refused_state);
-- 2. p_n consecutive ext ids from the next_lock_id row, held until commit;
-- 3. the requests inserted, each checked against every earlier one (lock_blocks).
DROP FUNCTION enqueue_locks(integer, bigint[], text[], text[], text[], integer[], integer[], text[], text[],
                            text[], text[], text[], bigint[], text[], text[], text[], text[], text[]);

CREATE FUNCTION enqueue_locks(p_n integer, p_txns bigint[], p_request integer[], p_int_id integer[], p_db text[],
                              p_tbl text[], p_part text[], p_type text[], p_operation text[], p_txn bigint[], p_level text[], p_keys text[],
                              p_user text[], p_host text[], p_agent text[])
RETURNS TABLE (refused_txn bigint, refused_state char(1), cleaned_below bigint, lock_ext_id bigint,
               lock_int_id integer, lock_state char(1), blocked_ext_id bigint, blocked_int_id integer)
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
    )
    INSERT INTO hive_locks AS h (ext_id, int_id, txn_id, db_name, tbl_name, part_name, state, lock_type, operation,
                                 last_heartbeat, acquired_at, user_name, host, agent_info, blocked_by_ext_id,
                                 blocked_by_int_id)
    SELECT r.ext_id, r.int_id, r.txn_id, r.db_name, r.tbl_name, r.part_name,
           CASE WHEN b.b_ext IS NULL THEN 'a' ELSE 'w' END, r.lock_type, r.operation,
           CASE WHEN r.txn_id = 0 THEN statement_timestamp() END,
           CASE WHEN b.b_ext IS NULL THEN statement_timestamp() END,
           r.user_name, r.host, r.agent_info,
           CASE WHEN b.int_id = r.int_id THEN b.b_ext END, CASE WHEN b.int_id = r.int_id THEN b.b_int END
    FROM r LEFT JOIN blocker b ON b.ext_id = r.ext_id
    ORDER BY r.ext_id, r.int_id
    RETURNING NULL::bigint, NULL::char(1), NULL::bigint, h.ext_id, h.int_id, h.state, h.blocked_by_ext_id, h.blocked_by_int_id;
END
$$;
