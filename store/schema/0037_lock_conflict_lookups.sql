-- 0037: a lock's conflict check looks up only the locks its objects can meet, so a request of many
-- components costs in proportion to them, not to their number times the database's locks.
--
-- Before, each component scanned every earlier lock of its database (hive_locks_by_db) and every
-- earlier component of its own call (the call's rows, without an index), testing lock_blocks on each:
-- a Hive 2.3 or 3 query reading 10,000 partitions (one SHARED_READ component per partition, as its
-- DbTxnManager sends) took 16.4 s to lock on an idle gateway, 1,000 partitions 0.3 s.
--
-- Now first_lock_blocker finds the locks a component can overlap by index: a database's component meets
-- every lock of its database; any other meets its database's database-level locks; a table's meets every
-- lock of its table; a partition's (a full name or a prefix of one) meets its table's table-level locks,
-- the locks of its own name and of the prefixes above it (partial specifications), and those of the names below it (a range
-- of the "C" order: '/' is followed by '0'). Of those, lock_blocks (0009, unchanged: the rule) picks the
-- conflicting ones. enqueue_locks inserts the call's requests first and then checks each component against
-- hive_locks, where the call's earlier requests now are too; a request with a blocker is marked waiting,
-- all its components, the blocker on the component it blocks, as before. The answer is as 0030's.
--
-- The functions that check run with enable_seqscan off. Their plans are generic and made once per
-- session, usually while hive_locks holds a few rows; planned so, the lookups became sequential scans of
-- the table (one per component: 2,000 components took 2.2 s), where every lookup has an index.

CREATE INDEX hive_locks_by_object ON hive_locks (db_name, tbl_name, part_name);
CREATE INDEX hive_locks_database_level ON hive_locks (db_name) WHERE tbl_name IS NULL;
CREATE INDEX hive_locks_table_level ON hive_locks (db_name, tbl_name) WHERE part_name IS NULL;

-- Each proper prefix of a partition name: 'a=1/b=2/c=3' -> {'a=1', 'a=1/b=2'} (none for 'a=1').
CREATE FUNCTION lock_name_ancestors(name text) RETURNS text[]
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    found text[] := '{}';
    at integer := strpos(name, '/');
    done integer := 0;
BEGIN
    WHILE at > 0 LOOP
        done := done + at;
        found := found || substr(name, 1, done - 1);
        at := strpos(substr(name, done + 1), '/');
    END LOOP;
    RETURN found;
END
$$;

-- The first lock (in (ext_id, int_id) order) earlier than request r_ext that blocks the component
-- (r_db, r_tbl, r_part, r_type, r_level) of txn r_txn (0: a standalone lock), by the conflict keys;
-- no row when none does. A lock of the component's own txn never blocks it. The candidates are found
-- by the objects alone (OFFSET 0 keeps the ext id out of their scans, which would otherwise be tempted
-- by the primary key's range below r_ext: the whole table).
CREATE FUNCTION first_lock_blocker(r_db text, r_tbl text, r_part text, r_type text, r_level text, r_ext bigint,
                                   r_txn bigint, keys text[])
RETURNS TABLE (b_ext bigint, b_int integer)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT c.ext_id, c.int_id
    FROM (
        SELECT ex.* FROM hive_locks ex WHERE r_tbl IS NULL AND ex.db_name = r_db
        UNION ALL
        SELECT ex.* FROM hive_locks ex WHERE r_tbl IS NOT NULL AND ex.db_name = r_db AND ex.tbl_name IS NULL
        UNION ALL
        SELECT ex.* FROM hive_locks ex
        WHERE r_tbl IS NOT NULL AND r_part IS NULL AND ex.db_name = r_db AND ex.tbl_name = r_tbl
        UNION ALL
        SELECT ex.* FROM hive_locks ex
        WHERE r_part IS NOT NULL AND ex.db_name = r_db AND ex.tbl_name = r_tbl AND ex.part_name IS NULL
        UNION ALL
        SELECT ex.* FROM hive_locks ex
        WHERE r_part IS NOT NULL AND ex.db_name = r_db AND ex.tbl_name = r_tbl AND ex.part_name = r_part
        UNION ALL
        SELECT ex.* FROM hive_locks ex
        WHERE r_part IS NOT NULL AND strpos(r_part, '/') > 0 AND ex.db_name = r_db AND ex.tbl_name = r_tbl
          AND ex.part_name = ANY(lock_name_ancestors(r_part))
        UNION ALL
        SELECT ex.* FROM hive_locks ex
        WHERE r_part IS NOT NULL AND ex.db_name = r_db AND ex.tbl_name = r_tbl
          AND ex.part_name >= (r_part || '/') COLLATE "C" AND ex.part_name < (r_part || '0') COLLATE "C"
        OFFSET 0
    ) AS c
    WHERE c.ext_id < r_ext AND (r_txn = 0 OR c.txn_id <> r_txn)
      AND lock_blocks(r_tbl, r_part, r_type, r_level, c.tbl_name, c.part_name, c.lock_type, c.lock_level, keys)
    ORDER BY c.ext_id, c.int_id
    LIMIT 1
$$;

-- A request's first blocker and the component it blocks (Hive's checkLock of a waiting request).
CREATE FUNCTION first_blocker_of_request(p_ext bigint, p_keys text[])
RETURNS TABLE (int_id integer, b_ext bigint, b_int integer)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
BEGIN
    RETURN QUERY
    SELECT r.int_id, b.b_ext, b.b_int
    FROM hive_locks r CROSS JOIN LATERAL first_lock_blocker(r.db_name, r.tbl_name, r.part_name, r.lock_type,
                                                            r.lock_level, r.ext_id, r.txn_id, p_keys) AS b
    WHERE r.ext_id = p_ext
    ORDER BY b.b_ext, b.b_int
    LIMIT 1;
END
$$;

DROP FUNCTION enqueue_locks(integer, bigint[], integer[], integer[], text[], text[], text[], text[], text[], bigint[],
                            text[], text[], text[], text[], text[]);

CREATE FUNCTION enqueue_locks(p_n integer, p_txns bigint[], p_request integer[], p_int_id integer[], p_db text[],
                              p_tbl text[], p_part text[], p_type text[], p_operation text[], p_txn bigint[], p_level text[], p_keys text[],
                              p_user text[], p_host text[], p_agent text[])
RETURNS TABLE (refused_txn bigint, refused_state char(1), cleaned_below bigint, lock_ext_id bigint,
               lock_int_id integer, lock_state char(1), blocked_ext_id bigint, blocked_int_id integer,
               log_head bigint)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
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
    -- Taken first, then checked: each component's check finds the earlier requests of this call by index.
    INSERT INTO hive_locks (ext_id, int_id, txn_id, db_name, tbl_name, part_name, state, lock_type, operation,
                            last_heartbeat, acquired_at, user_name, host, agent_info)
    SELECT first_id + x.request, x.int_id, x.txn_id, x.db_name, x.tbl_name, x.part_name, 'a', x.lock_type,
           x.operation, CASE WHEN x.txn_id = 0 THEN statement_timestamp() END, statement_timestamp(),
           x.user_name, x.host, x.agent_info
    FROM unnest(p_request, p_int_id, p_db, p_tbl, p_part, p_type, p_operation, p_txn, p_user, p_host, p_agent)
        AS x(request, int_id, db_name, tbl_name, part_name, lock_type, operation, txn_id, user_name, host, agent_info)
    ORDER BY x.request, x.int_id;
    RETURN QUERY
    WITH blocker AS (
        -- Per request, its first conflicting earlier component, and the component it blocks.
        SELECT DISTINCT ON (r.ext_id) r.ext_id, r.int_id, b.b_ext, b.b_int
        FROM hive_locks r CROSS JOIN LATERAL first_lock_blocker(r.db_name, r.tbl_name, r.part_name, r.lock_type,
                                                                r.lock_level, r.ext_id, r.txn_id, p_keys) AS b
        WHERE r.ext_id >= first_id AND r.ext_id < first_id + p_n
        ORDER BY r.ext_id, b.b_ext, b.b_int
    ), waiting AS (
        UPDATE hive_locks AS h SET state = 'w', acquired_at = NULL,
                                   blocked_by_ext_id = CASE WHEN h.int_id = b.int_id THEN b.b_ext END,
                                   blocked_by_int_id = CASE WHEN h.int_id = b.int_id THEN b.b_int END
        FROM blocker b
        WHERE h.ext_id = b.ext_id
        RETURNING h.ext_id, h.int_id, h.blocked_by_ext_id, h.blocked_by_int_id
    )
    -- The log's head in the snapshot that decided the grants (this statement's): every commit the
    -- decision saw (the unlock or commit that freed the lock, and so every write before it) is at or
    -- below it.
    SELECT NULL::bigint, NULL::char(1), NULL::bigint, r.ext_id, r.int_id,
           (CASE WHEN w.ext_id IS NULL THEN 'a' ELSE 'w' END)::char(1), w.blocked_by_ext_id, w.blocked_by_int_id,
           (SELECT s.next_event_id - 1 FROM notification_sequence s WHERE s.id = 1)
    FROM hive_locks r LEFT JOIN waiting w ON w.ext_id = r.ext_id AND w.int_id = r.int_id
    WHERE r.ext_id >= first_id AND r.ext_id < first_id + p_n
    ORDER BY r.ext_id, r.int_id;
END
$$;
