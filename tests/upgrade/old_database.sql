--
-- PostgreSQL database dump
--

\restrict FoISVYaB9h1ilQJz1vSNVdhOUBPpoEZebyhC8CbIbCMqeOvuRijBhlVHPeu370F

-- Dumped from database version 18.6
-- Dumped by pg_dump version 18.6

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET transaction_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: allocate_table_write_ids(text, text, bigint[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.allocate_table_write_ids(db text, tbl text, wanted bigint[], OUT found_table_id bigint, OUT table_type text, OUT transactional boolean, OUT relocks_exhausted boolean, OUT refused_txn bigint, OUT refused_state character, OUT cleaned_below bigint, OUT txn_ids bigint[], OUT write_ids bigint[], OUT message jsonb) RETURNS record
    LANGUAGE plpgsql
    AS $$
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


--
-- Name: allocate_write_ids(bigint, bigint[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.allocate_write_ids(tbl_id bigint, wanted bigint[], OUT refused_txn bigint, OUT refused_state character, OUT cleaned_below bigint, OUT txn_ids bigint[], OUT write_ids bigint[], OUT message jsonb) RETURNS record
    LANGUAGE plpgsql
    AS $$
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
                   LEFT JOIN LATERAL (SELECT 1 AS held FROM txn_to_write_id tw
                                      WHERE tw.txn_id = w AND tw.table_id = tbl_id LIMIT 1) AS h ON true
                   WHERE h.held IS NULL
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
    FROM unnest(wanted) AS w
    JOIN LATERAL (SELECT x.txn_id, x.write_id FROM txn_to_write_id x
                  WHERE x.txn_id = w AND x.table_id = tbl_id LIMIT 1) AS tw ON true;
END
$$;


--
-- Name: append_events(text[], text[], text[], bigint[], bigint[], bigint[], jsonb[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.append_events(event_types text[], db_names text[], tbl_names text[], table_ids bigint[], txn_ids bigint[], write_ids bigint[], messages jsonb[]) RETURNS bigint
    LANGUAGE plpgsql
    AS $$
DECLARE
    n integer := coalesce(cardinality(event_types), 0);
    first_id bigint;
BEGIN
    IF n = 0 THEN
        RETURN NULL;
    END IF;
    UPDATE notification_sequence SET next_event_id = next_event_id + n WHERE id = 1
    RETURNING next_event_id - n INTO first_id;
    INSERT INTO notification_log (event_id, event_type, db_name, tbl_name, table_id, txn_id, write_id, message,
                                  last_of_write)
    SELECT first_id + e.ord - 1, e.event_type, e.db_name, e.tbl_name, e.table_id, e.txn_id, e.write_id, e.message,
           first_id + n - 1
    FROM unnest(event_types, db_names, tbl_names, table_ids, txn_ids, write_ids, messages)
         WITH ORDINALITY AS e(event_type, db_name, tbl_name, table_id, txn_id, write_id, message, ord);
    PERFORM pg_notify('metastore_events', (first_id + n - 1)::text);
    RETURN first_id;
END
$$;


--
-- Name: commit_txn(bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.commit_txn(txn bigint, OUT prior_state character, OUT cleaned_below bigint, OUT message jsonb, OUT write_conflict jsonb) RETURNS record
    LANGUAGE plpgsql
    AS $$
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


--
-- Name: enqueue_locks(integer, bigint[], text[], text[], text[], integer[], integer[], text[], text[], text[], text[], text[], bigint[], text[], text[], text[], text[], text[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.enqueue_locks(p_n integer, p_txns bigint[], p_dbs text[], p_table_dbs text[], p_tables text[], p_request integer[], p_int_id integer[], p_db text[], p_tbl text[], p_part text[], p_type text[], p_operation text[], p_txn bigint[], p_level text[], p_keys text[], p_user text[], p_host text[], p_agent text[]) RETURNS TABLE(refused_txn bigint, refused_state character, cleaned_below bigint, missing_db text, missing_table_db text, missing_table text, lock_ext_id bigint, lock_int_id integer, lock_state character, blocked_ext_id bigint, blocked_int_id integer)
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
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
    SELECT d.name INTO missing_db FROM unnest(p_dbs) AS d(name)
    WHERE NOT EXISTS (SELECT 1 FROM dbs x WHERE x.name = d.name) ORDER BY d.name LIMIT 1;
    IF missing_db IS NOT NULL THEN
        RETURN NEXT;
        RETURN;
    END IF;
    SELECT k.db, k.tbl INTO missing_table_db, missing_table
    FROM unnest(p_table_dbs, p_tables) WITH ORDINALITY AS k(db, tbl, ord)
    WHERE NOT EXISTS (SELECT 1 FROM tbls x WHERE x.db_name = k.db AND x.tbl_name = k.tbl AND x.dropped_wid IS NULL)
    ORDER BY k.ord LIMIT 1;
    IF missing_table IS NOT NULL THEN
        RETURN NEXT;
        RETURN;
    END IF;
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
    RETURNING NULL::bigint, NULL::char(1), NULL::bigint, NULL::text, NULL::text, NULL::text,
              h.ext_id, h.int_id, h.state, h.blocked_by_ext_id, h.blocked_by_int_id;
END
$$;


--
-- Name: lock_blocks(text, text, text, text, text, text, text, text, text[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.lock_blocks(r_tbl text, r_part text, r_type text, r_level text, ex_tbl text, ex_part text, ex_type text, ex_level text, keys text[]) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT (ex_tbl IS NULL OR r_tbl IS NULL OR (ex_tbl = r_tbl AND (
               ex_part IS NULL OR r_part IS NULL OR ex_part = r_part
               OR starts_with(r_part, ex_part || '/') OR starts_with(ex_part, r_part || '/'))))
       AND (r_type || r_level || ex_type || ex_level) = ANY(keys)
$$;


--
-- Name: lock_latest_table(text, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.lock_latest_table(db text, tbl text, OUT found_table_id bigint, OUT table_type text, OUT transactional boolean, OUT relocks_exhausted boolean) RETURNS record
    LANGUAGE plpgsql
    AS $$
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


--
-- Name: open_txns(integer, smallint, text, text, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.open_txns(n integer, kind smallint, who text, from_host text, agent text, OUT first_txn_id bigint, OUT last_txn_id bigint, OUT message jsonb) RETURNS record
    LANGUAGE plpgsql
    AS $$
DECLARE
    min_open bigint;
BEGIN
    UPDATE next_txn_id SET next = next + n WHERE id = 1 RETURNING next - n, next - 1 INTO first_txn_id, last_txn_id;
    INSERT INTO txns (txn_id, state, txn_type, user_name, host, agent_info)
    SELECT g, 'o', kind, who, from_host, agent FROM generate_series(first_txn_id, last_txn_id) AS g;
    -- HIVE-18747: each new txn records the smallest txn open now (its own included); below the
    -- minimum of these, every txn is decided in every open txn's snapshot.
    SELECT txn_id INTO min_open FROM txns WHERE state = 'o' ORDER BY txn_id LIMIT 1;
    INSERT INTO min_history_level (txn_id, min_open_txn_id)
    SELECT g, min_open FROM generate_series(first_txn_id, last_txn_id) AS g;
    message := jsonb_build_object('txn_ids', to_jsonb(ARRAY(SELECT generate_series(first_txn_id, last_txn_id))),
                                  'from_txn_id', first_txn_id, 'to_txn_id', last_txn_id);
END
$$;


--
-- Name: release_txn_locks(bigint[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.release_txn_locks(txns bigint[]) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    DELETE FROM hive_locks WHERE (ext_id, int_id) IN (
        SELECT ext_id, int_id FROM hive_locks WHERE txn_id = ANY(txns) ORDER BY ext_id, int_id FOR UPDATE);
END
$$;


--
-- Name: txn_write_ids(bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.txn_write_ids(txn bigint) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    AS $$
BEGIN
    RETURN (SELECT coalesce(jsonb_agg(jsonb_build_object('table_id', tw.table_id, 'db_name', coalesce(t.db_name, ''),
                                                         'table_name', coalesce(t.tbl_name, ''), 'write_id', tw.write_id)
                                      ORDER BY tw.table_id), '[]'::jsonb)
            FROM txn_to_write_id tw
            LEFT JOIN tbls t ON t.table_id = tw.table_id AND t.dropped_wid IS NULL
            WHERE tw.txn_id = txn);
END
$$;


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: column_stats; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.column_stats (
    table_id bigint NOT NULL,
    part_name text NOT NULL COLLATE pg_catalog."C",
    column_name text NOT NULL COLLATE pg_catalog."C",
    column_type text NOT NULL,
    kind text NOT NULL,
    data jsonb NOT NULL,
    last_analyzed bigint NOT NULL,
    CONSTRAINT column_stats_kind_check CHECK ((kind = ANY (ARRAY['boolean'::text, 'long'::text, 'double'::text, 'string'::text, 'binary'::text, 'decimal'::text, 'date'::text, 'timestamp'::text])))
);


--
-- Name: compaction_checked; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.compaction_checked (
    table_id bigint NOT NULL,
    next_write_id bigint NOT NULL,
    checked_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL
);


--
-- Name: compaction_queue; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.compaction_queue (
    cq_id bigint NOT NULL,
    cq_database text NOT NULL,
    cq_table text NOT NULL,
    cq_partition text,
    cq_table_id bigint NOT NULL,
    cq_state character(1) NOT NULL,
    cq_type character(1) NOT NULL,
    cq_tblproperties jsonb DEFAULT '{}'::jsonb NOT NULL,
    cq_worker_id text,
    cq_enqueue_time timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    cq_start timestamp with time zone,
    cq_last_heartbeat timestamp with time zone,
    cq_run_as text DEFAULT ''::text NOT NULL,
    cq_highest_write_id bigint,
    cq_error_message text,
    cq_next_txn_id bigint,
    cq_txn_id bigint,
    cq_commit_time timestamp with time zone,
    cq_initiator_id text DEFAULT ''::text NOT NULL,
    cq_initiator_version text DEFAULT ''::text NOT NULL,
    cq_worker_version text,
    cq_manual boolean DEFAULT false NOT NULL,
    cq_pool_name text DEFAULT 'default'::text NOT NULL,
    cq_worker_user text,
    CONSTRAINT compaction_queue_cq_state_check CHECK ((cq_state = ANY (ARRAY['i'::bpchar, 'w'::bpchar, 'r'::bpchar]))),
    CONSTRAINT compaction_queue_cq_type_check CHECK ((cq_type = ANY (ARRAY['a'::bpchar, 'i'::bpchar])))
);


--
-- Name: compaction_queue_cq_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.compaction_queue ALTER COLUMN cq_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.compaction_queue_cq_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: compaction_txns; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.compaction_txns (
    txn_id bigint NOT NULL,
    table_id bigint NOT NULL
);


--
-- Name: completed_compactions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.completed_compactions (
    cc_id bigint NOT NULL,
    cc_database text NOT NULL,
    cc_table text NOT NULL,
    cc_partition text,
    cc_table_id bigint NOT NULL,
    cc_state character(1) NOT NULL,
    cc_type character(1) NOT NULL,
    cc_tblproperties jsonb DEFAULT '{}'::jsonb NOT NULL,
    cc_worker_id text,
    cc_enqueue_time timestamp with time zone,
    cc_start timestamp with time zone,
    cc_end timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    cc_run_as text DEFAULT ''::text NOT NULL,
    cc_highest_write_id bigint,
    cc_error_message text,
    cc_next_txn_id bigint,
    cc_txn_id bigint,
    cc_commit_time timestamp with time zone,
    cc_initiator_id text DEFAULT ''::text NOT NULL,
    cc_initiator_version text DEFAULT ''::text NOT NULL,
    cc_worker_version text,
    cc_manual boolean DEFAULT false NOT NULL,
    cc_pool_name text DEFAULT 'default'::text NOT NULL,
    CONSTRAINT completed_compactions_cc_state_check CHECK ((cc_state = ANY (ARRAY['s'::bpchar, 'f'::bpchar, 'a'::bpchar, 'c'::bpchar, 'x'::bpchar]))),
    CONSTRAINT completed_compactions_cc_type_check CHECK ((cc_type = ANY (ARRAY['a'::bpchar, 'i'::bpchar])))
);


--
-- Name: dbs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.dbs (
    db_id bigint NOT NULL,
    name text NOT NULL,
    description text DEFAULT ''::text NOT NULL,
    location text DEFAULT ''::text NOT NULL,
    owner text DEFAULT ''::text NOT NULL,
    parameters jsonb DEFAULT '{}'::jsonb NOT NULL,
    create_time bigint NOT NULL,
    owner_type text DEFAULT 'USER'::text NOT NULL,
    CONSTRAINT dbs_owner_type_check CHECK ((owner_type = ANY (ARRAY['USER'::text, 'ROLE'::text, 'GROUP'::text])))
);


--
-- Name: dbs_db_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.dbs_db_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: dbs_db_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.dbs_db_id_seq OWNED BY public.dbs.db_id;


--
-- Name: funcs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.funcs (
    db_name text NOT NULL,
    func_name text NOT NULL COLLATE pg_catalog."C",
    class_name text NOT NULL,
    owner text DEFAULT ''::text NOT NULL,
    owner_type text NOT NULL,
    function_type text NOT NULL,
    resource_uris jsonb DEFAULT '[]'::jsonb NOT NULL,
    create_time bigint NOT NULL,
    CONSTRAINT funcs_function_type_check CHECK ((function_type = 'JAVA'::text)),
    CONSTRAINT funcs_owner_type_check CHECK ((owner_type = ANY (ARRAY['USER'::text, 'ROLE'::text, 'GROUP'::text])))
);


--
-- Name: hive_locks; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.hive_locks (
    ext_id bigint NOT NULL,
    int_id integer NOT NULL,
    txn_id bigint DEFAULT 0 NOT NULL,
    db_name text NOT NULL,
    tbl_name text,
    part_name text COLLATE pg_catalog."C",
    lock_level character(1) GENERATED ALWAYS AS (
CASE
    WHEN (tbl_name IS NULL) THEN 'd'::text
    WHEN (part_name IS NULL) THEN 't'::text
    ELSE 'p'::text
END) STORED,
    state character(1) NOT NULL,
    lock_type character(1) NOT NULL,
    operation text NOT NULL,
    last_heartbeat timestamp with time zone,
    acquired_at timestamp with time zone,
    user_name text DEFAULT ''::text NOT NULL,
    host text DEFAULT ''::text NOT NULL,
    agent_info text DEFAULT ''::text NOT NULL,
    blocked_by_ext_id bigint,
    blocked_by_int_id integer,
    CONSTRAINT hive_locks_check CHECK (((part_name IS NULL) OR (tbl_name IS NOT NULL))),
    CONSTRAINT hive_locks_check1 CHECK (((txn_id = 0) = (last_heartbeat IS NOT NULL))),
    CONSTRAINT hive_locks_check2 CHECK (((state = 'a'::bpchar) = (acquired_at IS NOT NULL))),
    CONSTRAINT hive_locks_lock_type_check CHECK ((lock_type = ANY (ARRAY['r'::bpchar, 'w'::bpchar, 'x'::bpchar, 'e'::bpchar]))),
    CONSTRAINT hive_locks_state_check CHECK ((state = ANY (ARRAY['a'::bpchar, 'w'::bpchar])))
);


--
-- Name: min_history_level; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.min_history_level (
    txn_id bigint NOT NULL,
    min_open_txn_id bigint NOT NULL
);


--
-- Name: next_lock_id; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.next_lock_id (
    id integer NOT NULL,
    next bigint NOT NULL,
    CONSTRAINT next_lock_id_id_check CHECK ((id = 1))
);


--
-- Name: next_txn_id; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.next_txn_id (
    id integer NOT NULL,
    next bigint NOT NULL,
    CONSTRAINT next_txn_id_id_check CHECK ((id = 1))
);


--
-- Name: next_write_id; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.next_write_id (
    table_id bigint NOT NULL,
    next bigint NOT NULL,
    cleaned_hwm bigint DEFAULT 0 NOT NULL,
    gc_watermark bigint DEFAULT 0 NOT NULL
);


--
-- Name: notification_log; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.notification_log (
    event_id bigint NOT NULL,
    event_time timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    event_type text NOT NULL,
    db_name text DEFAULT ''::text NOT NULL,
    tbl_name text DEFAULT ''::text NOT NULL,
    table_id bigint DEFAULT 0 NOT NULL,
    txn_id bigint DEFAULT 0 NOT NULL,
    write_id bigint DEFAULT 0 NOT NULL,
    message jsonb NOT NULL,
    last_of_write bigint
);


--
-- Name: notification_sequence; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.notification_sequence (
    id integer NOT NULL,
    next_event_id bigint NOT NULL,
    CONSTRAINT notification_sequence_id_check CHECK ((id = 1))
);


--
-- Name: partitions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.partitions (
    version_id bigint NOT NULL,
    table_id bigint NOT NULL,
    part_name text NOT NULL COLLATE pg_catalog."C",
    part_values text[] NOT NULL,
    body jsonb NOT NULL,
    create_time bigint NOT NULL,
    created_wid bigint DEFAULT 0 NOT NULL,
    dropped_wid bigint
);


--
-- Name: partitions_version_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.partitions_version_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: partitions_version_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.partitions_version_id_seq OWNED BY public.partitions.version_id;


--
-- Name: privileges; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.privileges (
    object_type text NOT NULL,
    db_name text COLLATE pg_catalog."C",
    table_id bigint DEFAULT 0 NOT NULL,
    part_name text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    column_name text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    principal_name text NOT NULL COLLATE pg_catalog."C",
    principal_type text NOT NULL,
    privilege text NOT NULL COLLATE pg_catalog."C",
    grant_option boolean NOT NULL,
    create_time bigint NOT NULL,
    grantor text,
    grantor_type text,
    CONSTRAINT privileges_check CHECK (((object_type = 'DATABASE'::text) = (db_name IS NOT NULL))),
    CONSTRAINT privileges_check1 CHECK (((object_type = ANY (ARRAY['GLOBAL'::text, 'DATABASE'::text])) = (table_id = 0))),
    CONSTRAINT privileges_grantor_type_check CHECK ((grantor_type = ANY (ARRAY['USER'::text, 'ROLE'::text, 'GROUP'::text]))),
    CONSTRAINT privileges_object_type_check CHECK ((object_type = ANY (ARRAY['GLOBAL'::text, 'DATABASE'::text, 'TABLE'::text, 'PARTITION'::text, 'COLUMN'::text]))),
    CONSTRAINT privileges_principal_type_check CHECK ((principal_type = ANY (ARRAY['USER'::text, 'ROLE'::text, 'GROUP'::text])))
);


--
-- Name: role_grants; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.role_grants (
    role_name text NOT NULL COLLATE pg_catalog."C",
    principal_name text NOT NULL COLLATE pg_catalog."C",
    principal_type text NOT NULL,
    grant_option boolean NOT NULL,
    grant_time bigint NOT NULL,
    grantor text,
    grantor_type text,
    CONSTRAINT role_grants_grantor_type_check CHECK ((grantor_type = ANY (ARRAY['USER'::text, 'ROLE'::text, 'GROUP'::text]))),
    CONSTRAINT role_grants_principal_type_check CHECK ((principal_type = ANY (ARRAY['USER'::text, 'ROLE'::text, 'GROUP'::text])))
);


--
-- Name: roles; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.roles (
    role_name text NOT NULL COLLATE pg_catalog."C",
    owner_name text,
    create_time bigint NOT NULL
);


--
-- Name: schema_version; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.schema_version (
    version integer NOT NULL,
    name text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: table_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.table_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: tbls; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.tbls (
    version_id bigint NOT NULL,
    table_id bigint NOT NULL,
    db_name text NOT NULL,
    tbl_name text NOT NULL,
    table_type text NOT NULL,
    transactional boolean NOT NULL,
    body jsonb NOT NULL,
    create_time bigint NOT NULL,
    created_wid bigint DEFAULT 0 NOT NULL,
    dropped_wid bigint,
    CONSTRAINT tbls_table_type_check CHECK ((table_type = ANY (ARRAY['MANAGED_TABLE'::text, 'EXTERNAL_TABLE'::text, 'VIRTUAL_VIEW'::text])))
);


--
-- Name: tbls_version_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.tbls_version_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: tbls_version_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.tbls_version_id_seq OWNED BY public.tbls.version_id;


--
-- Name: txn_components; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.txn_components (
    txn_id bigint NOT NULL,
    db_name text NOT NULL,
    tbl_name text NOT NULL,
    part_name text COLLATE pg_catalog."C",
    operation character(1) NOT NULL,
    CONSTRAINT txn_components_operation_check CHECK ((operation = ANY (ARRAY['u'::bpchar, 'd'::bpchar])))
);


--
-- Name: txn_housekeeping; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.txn_housekeeping (
    id integer NOT NULL,
    t2w_cleaned_below bigint DEFAULT 0 NOT NULL,
    aborted_forgotten_upto bigint DEFAULT 0 NOT NULL,
    CONSTRAINT txn_housekeeping_id_check CHECK ((id = 1))
);


--
-- Name: txn_to_write_id; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.txn_to_write_id (
    txn_id bigint NOT NULL,
    table_id bigint NOT NULL,
    write_id bigint NOT NULL
);


--
-- Name: txns; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.txns (
    txn_id bigint NOT NULL,
    state character(1) NOT NULL,
    txn_type smallint DEFAULT 0 NOT NULL,
    started_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    last_heartbeat timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    finished_at timestamp with time zone,
    heartbeat_count bigint DEFAULT 0 NOT NULL,
    user_name text DEFAULT ''::text NOT NULL,
    host text DEFAULT ''::text NOT NULL,
    agent_info text DEFAULT ''::text NOT NULL,
    commit_id bigint,
    CONSTRAINT txns_state_check CHECK ((state = ANY (ARRAY['o'::bpchar, 'c'::bpchar, 'a'::bpchar])))
);


--
-- Name: write_set; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.write_set (
    db_name text NOT NULL,
    tbl_name text NOT NULL,
    part_name text COLLATE pg_catalog."C",
    txn_id bigint NOT NULL,
    commit_id bigint NOT NULL,
    operation character(1) NOT NULL,
    CONSTRAINT write_set_operation_check CHECK ((operation = ANY (ARRAY['u'::bpchar, 'd'::bpchar])))
);


--
-- Name: dbs db_id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.dbs ALTER COLUMN db_id SET DEFAULT nextval('public.dbs_db_id_seq'::regclass);


--
-- Name: partitions version_id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.partitions ALTER COLUMN version_id SET DEFAULT nextval('public.partitions_version_id_seq'::regclass);


--
-- Name: tbls version_id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tbls ALTER COLUMN version_id SET DEFAULT nextval('public.tbls_version_id_seq'::regclass);


--
-- Data for Name: column_stats; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.column_stats VALUES
	(5, '', 'id', 'bigint', 'long', '{"numDVs": 99, "lowValue": 1, "numNulls": 1, "highValue": 100}', 1795945853),
	(5, '', 'msg', 'string', 'string', '{"numDVs": 3, "numNulls": 0, "avgColLen": 20.0, "maxColLen": 40}', 1795945853),
	(5, 'day=d1', 'id', 'bigint', 'long', '{"numDVs": 9, "lowValue": 1, "numNulls": 1, "highValue": 10}', 1795945853),
	(5, 'day=d2', 'msg', 'string', 'string', '{"numDVs": 3, "numNulls": 0, "avgColLen": 6.0, "maxColLen": 12}', 1795945853),
	(1, 'ds=2026-01-01/region=eu', 'id', 'bigint', 'long', '{"numDVs": 45, "lowValue": 5, "numNulls": 1, "highValue": 50}', 1795945854),
	(1, 'ds=2026-01-01/region=eu', 'payload', 'string', 'string', '{"numDVs": 3, "numNulls": 0, "avgColLen": 3.5, "maxColLen": 7}', 1795945854);


--
-- Data for Name: compaction_checked; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: compaction_queue; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.compaction_queue OVERRIDING SYSTEM VALUE VALUES
	(1, 'sales', 'orders', 'ds=2026-01-01/region=eu', 1, 'i', 'a', '"{\"compactor.mapreduce.map.memory.mb\": \"2048\"}"', NULL, '2026-11-29 09:50:54.041285+00', NULL, NULL, 'etl', NULL, NULL, NULL, NULL, NULL, 'manual', '', NULL, true, 'default', NULL);


--
-- Data for Name: compaction_txns; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: completed_compactions; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: dbs; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.dbs VALUES
	(1, 'default', 'Default Hive database', '/tmp/msgw-upgrade-fixture/warehouse', 'public', '{}', 1795945853, 'ROLE'),
	(2, 'sales', 'the sales data', '/tmp/msgw-upgrade-fixture/warehouse/sales.db', 'alice', '{"team": "sales"}', 1795945853, 'USER'),
	(3, 'scratch', '', '/tmp/msgw-upgrade-fixture/warehouse/scratch.db', '', '{}', 1795945853, 'USER'),
	(4, 'ext', 'written over Thrift', '/tmp/msgw-upgrade-fixture/warehouse/ext.db', 'bob', '{"k": "v"}', 1795945853, 'USER');


--
-- Data for Name: funcs; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: hive_locks; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.hive_locks VALUES
	(1, 1, 5, 'sales', 'orders', 'ds=2026-01-02/region=eu', DEFAULT, 'a', 'w', 'INSERT', NULL, '2026-11-29 09:50:54.028382+00', 'etl', 'host1', 'upgrade-fixture', NULL, NULL);


--
-- Data for Name: min_history_level; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.min_history_level VALUES
	(5, 5),
	(6, 5);


--
-- Data for Name: next_lock_id; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.next_lock_id VALUES
	(1, 2);


--
-- Data for Name: next_txn_id; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.next_txn_id VALUES
	(1, 7);


--
-- Data for Name: next_write_id; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.next_write_id VALUES
	(1, 6, 0, 0);


--
-- Data for Name: notification_log; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.notification_log VALUES
	(1, '2026-11-29 09:50:53.909489+00', 'CREATE_DATABASE', 'default', '', 0, 0, 0, '{"database": {"name": "default", "owner": "public", "location": "/tmp/msgw-upgrade-fixture/warehouse", "owner_type": "ROLE", "parameters": {}, "create_time": 1795945853, "description": "Default Hive database"}}', 1),
	(2, '2026-11-29 09:50:53.934836+00', 'CREATE_DATABASE', 'sales', '', 0, 0, 0, '{"database": {"name": "sales", "owner": "alice", "location": "/tmp/msgw-upgrade-fixture/warehouse/sales.db", "owner_type": "USER", "parameters": {"team": "sales"}, "create_time": 1795945853, "description": "the sales data"}}', 2),
	(3, '2026-11-29 09:50:53.937279+00', 'CREATE_DATABASE', 'scratch', '', 0, 0, 0, '{"database": {"name": "scratch", "owner": "", "location": "/tmp/msgw-upgrade-fixture/warehouse/scratch.db", "owner_type": "USER", "parameters": {}, "create_time": 1795945853, "description": ""}}', 3),
	(4, '2026-11-29 09:50:53.940847+00', 'CREATE_TABLE', 'sales', 'orders', 1, 0, 0, '{"table": {"sd": {"serde": {"lib": "org.apache.hadoop.hive.ql.io.orc.OrcSerde", "name": "", "parameters": {}}, "location": "/tmp/msgw-upgrade-fixture/warehouse/sales.db/orders", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "output_format": "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"}, "owner": "alice", "columns": [["id", "bigint", ""], ["payload", "string", ""]], "db_name": "sales", "table_id": 1, "tbl_name": "orders", "parameters": {"comment": "orders table", "transactional": "true"}, "table_type": "MANAGED_TABLE", "create_time": 1795945853, "created_wid": 0, "transactional": true, "partition_keys": [["ds", "string", ""], ["region", "string", ""]]}}', 4),
	(5, '2026-11-29 09:50:53.943156+00', 'CREATE_TABLE', 'sales', 'clicks', 2, 0, 0, '{"table": {"sd": {"serde": {"lib": "org.apache.hadoop.hive.ql.io.orc.OrcSerde", "name": "", "parameters": {}}, "location": "file:/tmp/msgw-upgrade-fixture/external/clicks", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "output_format": "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"}, "owner": "alice", "columns": [["id", "bigint", ""], ["payload", "string", ""]], "db_name": "sales", "table_id": 2, "tbl_name": "clicks", "parameters": {"comment": "clicks table"}, "table_type": "EXTERNAL_TABLE", "create_time": 1795945853, "created_wid": 0, "transactional": false, "partition_keys": [["ds", "string", ""]]}}', 5),
	(6, '2026-11-29 09:50:53.945147+00', 'CREATE_TABLE', 'sales', 'staging', 3, 0, 0, '{"table": {"sd": {"serde": {"lib": "org.apache.hadoop.hive.ql.io.orc.OrcSerde", "name": "", "parameters": {}}, "location": "/tmp/msgw-upgrade-fixture/warehouse/sales.db/staging", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "output_format": "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"}, "owner": "alice", "columns": [["id", "bigint", ""], ["payload", "string", ""]], "db_name": "sales", "table_id": 3, "tbl_name": "staging", "parameters": {"comment": "staging table"}, "table_type": "MANAGED_TABLE", "create_time": 1795945853, "created_wid": 0, "transactional": false, "partition_keys": []}}', 6),
	(7, '2026-11-29 09:50:53.94709+00', 'CREATE_TABLE', 'scratch', 'gone', 4, 0, 0, '{"table": {"sd": {"serde": {"lib": "org.apache.hadoop.hive.ql.io.orc.OrcSerde", "name": "", "parameters": {}}, "location": "/tmp/msgw-upgrade-fixture/warehouse/scratch.db/gone", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "output_format": "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"}, "owner": "alice", "columns": [["id", "bigint", ""], ["payload", "string", ""]], "db_name": "scratch", "table_id": 4, "tbl_name": "gone", "parameters": {"comment": "gone table"}, "table_type": "MANAGED_TABLE", "create_time": 1795945853, "created_wid": 0, "transactional": false, "partition_keys": []}}', 7),
	(8, '2026-11-29 09:50:53.950833+00', 'DROP_TABLE', 'scratch', 'gone', 4, 0, 0, '{"table": {"sd": {"serde": {"lib": "org.apache.hadoop.hive.ql.io.orc.OrcSerde", "name": "", "parameters": {}}, "location": "/tmp/msgw-upgrade-fixture/warehouse/scratch.db/gone", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "output_format": "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"}, "owner": "alice", "columns": [["id", "bigint", ""], ["payload", "string", ""]], "db_name": "scratch", "table_id": 4, "tbl_name": "gone", "parameters": {"comment": "gone table"}, "table_type": "MANAGED_TABLE", "create_time": 1795945853, "created_wid": 0, "transactional": false, "partition_keys": []}}', 8),
	(9, '2026-11-29 09:50:53.953165+00', 'ADD_PARTITION', 'sales', 'clicks', 2, 0, 0, '{"partitions": [{"sd": {"serde": {"lib": "org.apache.hadoop.hive.ql.io.orc.OrcSerde", "name": "", "parameters": {}}, "location": "file:/tmp/msgw-upgrade-fixture/external/clicks/ds=2026-01-01", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "output_format": "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"}, "part_name": "ds=2026-01-01", "parameters": {"src": "web"}, "create_time": 1795945853, "created_wid": 0, "part_values": ["2026-01-01"]}, {"sd": {"serde": {"lib": "org.apache.hadoop.hive.ql.io.orc.OrcSerde", "name": "", "parameters": {}}, "location": "file:/tmp/msgw-upgrade-fixture/external/clicks/ds=2026-01-02", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "output_format": "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"}, "part_name": "ds=2026-01-02", "parameters": {"src": "web"}, "create_time": 1795945853, "created_wid": 0, "part_values": ["2026-01-02"]}, {"sd": {"serde": {"lib": "org.apache.hadoop.hive.ql.io.orc.OrcSerde", "name": "", "parameters": {}}, "location": "file:/tmp/msgw-upgrade-fixture/external/clicks/ds=2026-01-03", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "output_format": "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"}, "part_name": "ds=2026-01-03", "parameters": {"src": "web"}, "create_time": 1795945853, "created_wid": 0, "part_values": ["2026-01-03"]}]}', 9),
	(10, '2026-11-29 09:50:53.955526+00', 'ALTER_PARTITION', 'sales', 'clicks', 2, 0, 0, '{"partitions": [{"sd": {"serde": {"lib": "org.apache.hadoop.hive.ql.io.orc.OrcSerde", "name": "", "parameters": {}}, "location": "file:/tmp/msgw-upgrade-fixture/external/clicks/ds=2026-01-02", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "output_format": "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"}, "part_name": "ds=2026-01-02", "parameters": {"src": "app", "fixed": "1"}, "create_time": 1795945853, "created_wid": 0, "part_values": ["2026-01-02"]}]}', 10),
	(11, '2026-11-29 09:50:53.957366+00', 'DROP_PARTITION', 'sales', 'clicks', 2, 0, 0, '{"partition_names": ["ds=2026-01-03"]}', 11),
	(12, '2026-11-29 09:50:53.961445+00', 'CREATE_DATABASE', 'ext', '', 0, 0, 0, '{"database": {"name": "ext", "owner": "bob", "location": "/tmp/msgw-upgrade-fixture/warehouse/ext.db", "owner_type": "USER", "parameters": {"k": "v"}, "create_time": 1795945853, "description": "written over Thrift"}}', 12),
	(13, '2026-11-29 09:50:53.96375+00', 'CREATE_TABLE', 'ext', 'logs', 5, 0, 0, '{"table": {"sd": {"serde": {"lib": "serde", "name": "", "parameters": {}}, "location": "/tmp/msgw-upgrade-fixture/warehouse/ext.db/logs", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "in", "output_format": "out"}, "owner": "bob", "columns": [["id", "bigint", "the id"], ["msg", "string", ""]], "db_name": "ext", "table_id": 5, "tbl_name": "logs", "parameters": {"a": "1", "transient_lastDdlTime": "1795945853"}, "table_type": "MANAGED_TABLE", "create_time": 1795945853, "created_wid": 0, "transactional": false, "partition_keys": [["day", "string", ""]]}}', 13),
	(14, '2026-11-29 09:50:53.966306+00', 'ADD_PARTITION', 'ext', 'logs', 5, 0, 0, '{"partitions": [{"sd": {"serde": {"lib": "serde", "name": "", "parameters": {}}, "location": "/tmp/msgw-upgrade-fixture/warehouse/ext.db/logs/day=d1", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "in", "output_format": "out"}, "part_name": "day=d1", "parameters": {"n": "d1", "transient_lastDdlTime": "1795945853"}, "create_time": 1795945853, "created_wid": 0, "part_values": ["d1"]}, {"sd": {"serde": {"lib": "serde", "name": "", "parameters": {}}, "location": "/tmp/msgw-upgrade-fixture/warehouse/ext.db/logs/day=d2", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "in", "output_format": "out"}, "part_name": "day=d2", "parameters": {"n": "d2", "transient_lastDdlTime": "1795945853"}, "create_time": 1795945853, "created_wid": 0, "part_values": ["d2"]}, {"sd": {"serde": {"lib": "serde", "name": "", "parameters": {}}, "location": "/tmp/msgw-upgrade-fixture/warehouse/ext.db/logs/day=d3", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "in", "output_format": "out"}, "part_name": "day=d3", "parameters": {"n": "d3", "transient_lastDdlTime": "1795945853"}, "create_time": 1795945853, "created_wid": 0, "part_values": ["d3"]}, {"sd": {"serde": {"lib": "serde", "name": "", "parameters": {}}, "location": "/tmp/msgw-upgrade-fixture/warehouse/ext.db/logs/day=d4", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "in", "output_format": "out"}, "part_name": "day=d4", "parameters": {"n": "d4", "transient_lastDdlTime": "1795945853"}, "create_time": 1795945853, "created_wid": 0, "part_values": ["d4"]}]}', 14),
	(15, '2026-11-29 09:50:53.968546+00', 'ALTER_PARTITION', 'ext', 'logs', 5, 0, 0, '{"partitions": [{"sd": {"serde": {"lib": "serde", "name": "", "parameters": {}}, "location": "/tmp/msgw-upgrade-fixture/warehouse/ext.db/logs/day=d2", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "in", "output_format": "out"}, "columns": [["id", "bigint", "the id"], ["msg", "string", ""]], "part_name": "day=d2", "parameters": {"n": "d2", "altered": "yes", "transient_lastDdlTime": "1795945853"}, "create_time": 1795945853, "created_wid": 0, "part_values": ["d2"]}]}', 15),
	(16, '2026-11-29 09:50:53.97382+00', 'DROP_PARTITION', 'ext', 'logs', 5, 0, 0, '{"partition_names": ["day=d3"]}', 17),
	(17, '2026-11-29 09:50:53.973832+00', 'ADD_PARTITION', 'ext', 'logs', 5, 0, 0, '{"partitions": [{"sd": {"serde": {"lib": "serde", "name": "", "parameters": {}}, "location": "/tmp/msgw-upgrade-fixture/warehouse/ext.db/logs/day=d3-renamed", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "in", "output_format": "out"}, "columns": [["id", "bigint", "the id"], ["msg", "string", ""]], "part_name": "day=d3-renamed", "parameters": {"n": "d3", "transient_lastDdlTime": "1795945853"}, "create_time": 1795945853, "created_wid": 0, "part_values": ["d3-renamed"]}]}', 17),
	(18, '2026-11-29 09:50:53.975333+00', 'DROP_PARTITION', 'ext', 'logs', 5, 0, 0, '{"partition_names": ["day=d4"]}', 18),
	(19, '2026-11-29 09:50:53.979031+00', 'ALTER_TABLE', 'ext', 'logs', 5, 0, 0, '{"table": {"sd": {"serde": {"lib": "serde", "name": "", "parameters": {}}, "location": "/tmp/msgw-upgrade-fixture/warehouse/ext.db/logs", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "in", "output_format": "out"}, "owner": "bob", "columns": [["id", "bigint", "the id"], ["msg", "string", ""]], "db_name": "ext", "table_id": 5, "tbl_name": "logs", "parameters": {"a": "1", "COLUMN_STATS_ACCURATE": "{\"COLUMN_STATS\":{\"id\":\"true\",\"msg\":\"true\"}}", "transient_lastDdlTime": "1795945853"}, "table_type": "MANAGED_TABLE", "create_time": 1795945853, "created_wid": 0, "transactional": false, "partition_keys": [["day", "string", ""]]}, "table_before": {"sd": {"serde": {"lib": "serde", "name": "", "parameters": {}}, "location": "/tmp/msgw-upgrade-fixture/warehouse/ext.db/logs", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "in", "output_format": "out"}, "owner": "bob", "columns": [["id", "bigint", "the id"], ["msg", "string", ""]], "db_name": "ext", "table_id": 5, "tbl_name": "logs", "parameters": {"a": "1", "transient_lastDdlTime": "1795945853"}, "table_type": "MANAGED_TABLE", "create_time": 1795945853, "created_wid": 0, "transactional": false, "partition_keys": [["day", "string", ""]]}}', 19),
	(20, '2026-11-29 09:50:53.98105+00', 'ALTER_PARTITION', 'ext', 'logs', 5, 0, 0, '{"partitions": [{"sd": {"serde": {"lib": "serde", "name": "", "parameters": {}}, "location": "/tmp/msgw-upgrade-fixture/warehouse/ext.db/logs/day=d1", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "in", "output_format": "out"}, "part_name": "day=d1", "parameters": {"n": "d1", "COLUMN_STATS_ACCURATE": "{\"COLUMN_STATS\":{\"id\":\"true\"}}", "transient_lastDdlTime": "1795945853"}, "create_time": 1795945853, "created_wid": 0, "part_values": ["d1"]}]}', 20),
	(21, '2026-11-29 09:50:53.983+00', 'ALTER_PARTITION', 'ext', 'logs', 5, 0, 0, '{"partitions": [{"sd": {"serde": {"lib": "serde", "name": "", "parameters": {}}, "location": "/tmp/msgw-upgrade-fixture/warehouse/ext.db/logs/day=d2", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "in", "output_format": "out"}, "columns": [["id", "bigint", "the id"], ["msg", "string", ""]], "part_name": "day=d2", "parameters": {"n": "d2", "altered": "yes", "COLUMN_STATS_ACCURATE": "{\"COLUMN_STATS\":{\"msg\":\"true\"}}", "transient_lastDdlTime": "1795945853"}, "create_time": 1795945853, "created_wid": 0, "part_values": ["d2"]}]}', 21),
	(22, '2026-11-29 09:50:53.986083+00', 'ALTER_TABLE', 'sales', 'staging_v2', 3, 0, 0, '{"table": {"sd": {"serde": {"lib": "org.apache.hadoop.hive.ql.io.orc.OrcSerde", "name": "", "parameters": {}}, "location": "/tmp/msgw-upgrade-fixture/warehouse/sales.db/staging_v2", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "output_format": "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"}, "owner": "alice", "columns": [["id", "bigint", ""], ["payload", "string", ""]], "db_name": "sales", "table_id": 3, "tbl_name": "staging_v2", "parameters": {"comment": "staging table", "transient_lastDdlTime": "1795945853"}, "table_type": "MANAGED_TABLE", "create_time": 1795945853, "created_wid": 0, "transactional": false, "partition_keys": []}, "table_before": {"sd": {"serde": {"lib": "org.apache.hadoop.hive.ql.io.orc.OrcSerde", "name": "", "parameters": {}}, "location": "/tmp/msgw-upgrade-fixture/warehouse/sales.db/staging", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "output_format": "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"}, "owner": "alice", "columns": [["id", "bigint", ""], ["payload", "string", ""]], "db_name": "sales", "table_id": 3, "tbl_name": "staging", "parameters": {"comment": "staging table"}, "table_type": "MANAGED_TABLE", "create_time": 1795945853, "created_wid": 0, "transactional": false, "partition_keys": []}}', 22),
	(23, '2026-11-29 09:50:53.988941+00', 'OPEN_TXN', '', '', 0, 0, 0, '{"txn_ids": [1], "to_txn_id": 1, "from_txn_id": 1}', 23),
	(24, '2026-11-29 09:50:53.991421+00', 'ALLOC_WRITE_ID_EVENT', 'sales', 'orders', 1, 0, 0, '{"txn_ids": [1], "write_ids": [1]}', 24),
	(25, '2026-11-29 09:50:53.994176+00', 'ADD_PARTITION', 'sales', 'orders', 1, 1, 1, '{"partitions": [{"sd": {"serde": {"lib": "org.apache.hadoop.hive.ql.io.orc.OrcSerde", "name": "", "parameters": {}}, "location": "/tmp/msgw-upgrade-fixture/warehouse/sales.db/orders/ds=2026-01-01/region=eu", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "output_format": "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"}, "part_name": "ds=2026-01-01/region=eu", "parameters": {"v": "1"}, "create_time": 1795945853, "created_wid": 1, "part_values": ["2026-01-01", "eu"]}, {"sd": {"serde": {"lib": "org.apache.hadoop.hive.ql.io.orc.OrcSerde", "name": "", "parameters": {}}, "location": "/tmp/msgw-upgrade-fixture/warehouse/sales.db/orders/ds=2026-01-01/region=us", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "output_format": "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"}, "part_name": "ds=2026-01-01/region=us", "parameters": {"v": "1"}, "create_time": 1795945853, "created_wid": 1, "part_values": ["2026-01-01", "us"]}, {"sd": {"serde": {"lib": "org.apache.hadoop.hive.ql.io.orc.OrcSerde", "name": "", "parameters": {}}, "location": "/tmp/msgw-upgrade-fixture/warehouse/sales.db/orders/ds=2026-01-02/region=eu", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "output_format": "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"}, "part_name": "ds=2026-01-02/region=eu", "parameters": {"v": "1"}, "create_time": 1795945853, "created_wid": 1, "part_values": ["2026-01-02", "eu"]}]}', 25),
	(26, '2026-11-29 09:50:53.99682+00', 'COMMIT_TXN', '', '', 0, 1, 0, '{"txn_id": 1, "write_ids": [{"db_name": "sales", "table_id": 1, "write_id": 1, "table_name": "orders"}]}', 26),
	(27, '2026-11-29 09:50:53.998108+00', 'OPEN_TXN', '', '', 0, 0, 0, '{"txn_ids": [2], "to_txn_id": 2, "from_txn_id": 2}', 27),
	(28, '2026-11-29 09:50:53.999425+00', 'ALLOC_WRITE_ID_EVENT', 'sales', 'orders', 1, 0, 0, '{"txn_ids": [2], "write_ids": [2]}', 28),
	(29, '2026-11-29 09:50:54.002648+00', 'ALTER_PARTITION', 'sales', 'orders', 1, 2, 2, '{"partitions": [{"sd": {"serde": {"lib": "org.apache.hadoop.hive.ql.io.orc.OrcSerde", "name": "", "parameters": {}}, "location": "/tmp/msgw-upgrade-fixture/warehouse/sales.db/orders/ds=2026-01-02/region=eu", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "output_format": "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"}, "part_name": "ds=2026-01-02/region=eu", "parameters": {"v": "2"}, "create_time": 1795945853, "created_wid": 2, "part_values": ["2026-01-02", "eu"]}]}', 29),
	(30, '2026-11-29 09:50:54.004335+00', 'COMMIT_TXN', '', '', 0, 2, 0, '{"txn_id": 2, "write_ids": [{"db_name": "sales", "table_id": 1, "write_id": 2, "table_name": "orders"}]}', 30),
	(31, '2026-11-29 09:50:54.005821+00', 'OPEN_TXN', '', '', 0, 0, 0, '{"txn_ids": [3], "to_txn_id": 3, "from_txn_id": 3}', 31),
	(32, '2026-11-29 09:50:54.007132+00', 'ALLOC_WRITE_ID_EVENT', 'sales', 'orders', 1, 0, 0, '{"txn_ids": [3], "write_ids": [3]}', 32),
	(33, '2026-11-29 09:50:54.009482+00', 'ADD_PARTITION', 'sales', 'orders', 1, 3, 3, '{"partitions": [{"sd": {"serde": {"lib": "org.apache.hadoop.hive.ql.io.orc.OrcSerde", "name": "", "parameters": {}}, "location": "/tmp/msgw-upgrade-fixture/warehouse/sales.db/orders/ds=2026-01-09/region=eu", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "output_format": "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"}, "part_name": "ds=2026-01-09/region=eu", "parameters": {"v": "aborted"}, "create_time": 1795945854, "created_wid": 3, "part_values": ["2026-01-09", "eu"]}]}', 33),
	(34, '2026-11-29 09:50:54.01456+00', 'ABORT_TXN', '', '', 0, 3, 0, '{"reason": "aborted by the client", "txn_id": 3, "write_ids": [{"db_name": "sales", "table_id": 1, "write_id": 3, "table_name": "orders"}]}', 34),
	(35, '2026-11-29 09:50:54.016068+00', 'OPEN_TXN', '', '', 0, 0, 0, '{"txn_ids": [4], "to_txn_id": 4, "from_txn_id": 4}', 35),
	(36, '2026-11-29 09:50:54.017282+00', 'ALLOC_WRITE_ID_EVENT', 'sales', 'orders', 1, 0, 0, '{"txn_ids": [4], "write_ids": [4]}', 36),
	(37, '2026-11-29 09:50:54.020094+00', 'DROP_PARTITION', 'sales', 'orders', 1, 4, 4, '{"partition_names": ["ds=2026-01-01/region=us"]}', 37),
	(38, '2026-11-29 09:50:54.021413+00', 'COMMIT_TXN', '', '', 0, 4, 0, '{"txn_id": 4, "write_ids": [{"db_name": "sales", "table_id": 1, "write_id": 4, "table_name": "orders"}]}', 38),
	(39, '2026-11-29 09:50:54.022493+00', 'OPEN_TXN', '', '', 0, 0, 0, '{"txn_ids": [5], "to_txn_id": 5, "from_txn_id": 5}', 39),
	(40, '2026-11-29 09:50:54.023508+00', 'ALLOC_WRITE_ID_EVENT', 'sales', 'orders', 1, 0, 0, '{"txn_ids": [5], "write_ids": [5]}', 40),
	(41, '2026-11-29 09:50:54.032347+00', 'ADD_PARTITION', 'sales', 'orders', 1, 5, 5, '{"partitions": [{"sd": {"serde": {"lib": "org.apache.hadoop.hive.ql.io.orc.OrcSerde", "name": "", "parameters": {}}, "location": "/tmp/msgw-upgrade-fixture/warehouse/sales.db/orders/ds=2026-01-03/region=eu", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "output_format": "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"}, "part_name": "ds=2026-01-03/region=eu", "parameters": {"v": "open"}, "create_time": 1795945854, "created_wid": 5, "part_values": ["2026-01-03", "eu"]}]}', 41),
	(42, '2026-11-29 09:50:54.039085+00', 'OPEN_TXN', '', '', 0, 0, 0, '{"txn_ids": [6], "to_txn_id": 6, "from_txn_id": 6}', 42);


--
-- Data for Name: notification_sequence; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.notification_sequence VALUES
	(1, 43);


--
-- Data for Name: partitions; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.partitions VALUES
	(1, 2, 'ds=2026-01-01', '{2026-01-01}', '{"sd": {"serde": {"lib": "org.apache.hadoop.hive.ql.io.orc.OrcSerde", "name": "", "parameters": {}}, "location": "file:/tmp/msgw-upgrade-fixture/external/clicks/ds=2026-01-01", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "output_format": "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"}, "parameters": {"src": "web"}}', 1795945853, 0, NULL),
	(2, 2, 'ds=2026-01-02', '{2026-01-02}', '{"sd": {"serde": {"lib": "org.apache.hadoop.hive.ql.io.orc.OrcSerde", "name": "", "parameters": {}}, "location": "file:/tmp/msgw-upgrade-fixture/external/clicks/ds=2026-01-02", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "output_format": "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"}, "parameters": {"src": "app", "fixed": "1"}}', 1795945853, 0, NULL),
	(11, 1, 'ds=2026-01-02/region=eu', '{2026-01-02,eu}', '{"sd": {"serde": {"lib": "org.apache.hadoop.hive.ql.io.orc.OrcSerde", "name": "", "parameters": {}}, "location": "/tmp/msgw-upgrade-fixture/warehouse/sales.db/orders/ds=2026-01-02/region=eu", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "output_format": "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"}, "parameters": {"v": "1"}}', 1795945853, 1, 2),
	(8, 5, 'day=d3-renamed', '{d3-renamed}', '{"sd": {"serde": {"lib": "serde", "name": "", "parameters": {}}, "location": "/tmp/msgw-upgrade-fixture/warehouse/ext.db/logs/day=d3-renamed", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "in", "output_format": "out"}, "columns": [["id", "bigint", "the id"], ["msg", "string", ""]], "parameters": {"n": "d3", "transient_lastDdlTime": "1795945853"}}', 1795945853, 0, NULL),
	(4, 5, 'day=d1', '{d1}', '{"sd": {"serde": {"lib": "serde", "name": "", "parameters": {}}, "location": "/tmp/msgw-upgrade-fixture/warehouse/ext.db/logs/day=d1", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "in", "output_format": "out"}, "parameters": {"n": "d1", "COLUMN_STATS_ACCURATE": "{\"COLUMN_STATS\":{\"id\":\"true\"}}", "transient_lastDdlTime": "1795945853"}}', 1795945853, 0, NULL),
	(5, 5, 'day=d2', '{d2}', '{"sd": {"serde": {"lib": "serde", "name": "", "parameters": {}}, "location": "/tmp/msgw-upgrade-fixture/warehouse/ext.db/logs/day=d2", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "in", "output_format": "out"}, "columns": [["id", "bigint", "the id"], ["msg", "string", ""]], "parameters": {"n": "d2", "altered": "yes", "COLUMN_STATS_ACCURATE": "{\"COLUMN_STATS\":{\"msg\":\"true\"}}", "transient_lastDdlTime": "1795945853"}}', 1795945853, 0, NULL),
	(9, 1, 'ds=2026-01-01/region=eu', '{2026-01-01,eu}', '{"sd": {"serde": {"lib": "org.apache.hadoop.hive.ql.io.orc.OrcSerde", "name": "", "parameters": {}}, "location": "/tmp/msgw-upgrade-fixture/warehouse/sales.db/orders/ds=2026-01-01/region=eu", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "output_format": "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"}, "parameters": {"v": "1"}}', 1795945853, 1, NULL),
	(12, 1, 'ds=2026-01-02/region=eu', '{2026-01-02,eu}', '{"sd": {"serde": {"lib": "org.apache.hadoop.hive.ql.io.orc.OrcSerde", "name": "", "parameters": {}}, "location": "/tmp/msgw-upgrade-fixture/warehouse/sales.db/orders/ds=2026-01-02/region=eu", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "output_format": "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"}, "parameters": {"v": "2"}}', 1795945853, 2, NULL),
	(10, 1, 'ds=2026-01-01/region=us', '{2026-01-01,us}', '{"sd": {"serde": {"lib": "org.apache.hadoop.hive.ql.io.orc.OrcSerde", "name": "", "parameters": {}}, "location": "/tmp/msgw-upgrade-fixture/warehouse/sales.db/orders/ds=2026-01-01/region=us", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "output_format": "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"}, "parameters": {"v": "1"}}', 1795945853, 1, 4),
	(14, 1, 'ds=2026-01-03/region=eu', '{2026-01-03,eu}', '{"sd": {"serde": {"lib": "org.apache.hadoop.hive.ql.io.orc.OrcSerde", "name": "", "parameters": {}}, "location": "/tmp/msgw-upgrade-fixture/warehouse/sales.db/orders/ds=2026-01-03/region=eu", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "output_format": "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"}, "parameters": {"v": "open"}}', 1795945854, 5, NULL);


--
-- Data for Name: privileges; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.privileges VALUES
	('GLOBAL', NULL, 0, '', '', 'admin', 'ROLE', 'All', true, 1795945854, 'admin', 'ROLE');


--
-- Data for Name: role_grants; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: roles; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.roles VALUES
	('admin', 'admin', 1795945854),
	('public', 'public', 0);


--
-- Data for Name: schema_version; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.schema_version VALUES
	(1, 'catalog', '2026-11-29 09:50:53.851553+00'),
	(2, 'transactions', '2026-11-29 09:50:53.858042+00'),
	(3, 'locks', '2026-11-29 09:50:53.862376+00'),
	(4, 'commit_ids', '2026-11-29 09:50:53.864523+00'),
	(5, 'views', '2026-11-29 09:50:53.86477+00'),
	(6, 'compaction', '2026-11-29 09:50:53.865212+00'),
	(7, 'txn_functions', '2026-11-29 09:50:53.868553+00'),
	(8, 'txn_function_plans', '2026-11-29 09:50:53.870225+00'),
	(9, 'lock_enqueue', '2026-11-29 09:50:53.871052+00'),
	(10, 'database_owner_type', '2026-11-29 09:50:53.871793+00'),
	(11, 'column_statistics', '2026-11-29 09:50:53.872472+00'),
	(12, 'functions', '2026-11-29 09:50:53.87346+00'),
	(13, 'write_set', '2026-11-29 09:50:53.874665+00'),
	(14, 'roles_privileges', '2026-11-29 09:50:53.876523+00'),
	(15, 'event_groups', '2026-11-29 09:50:53.880236+00'),
	(16, 'forgotten_aborted_txns', '2026-11-29 09:50:53.880698+00'),
	(17, 'compaction_worker_user', '2026-11-29 09:50:53.880956+00'),
	(18, 'compaction_txn_tables', '2026-11-29 09:50:53.881137+00');


--
-- Data for Name: tbls; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.tbls VALUES
	(1, 1, 'sales', 'orders', 'MANAGED_TABLE', true, '{"sd": {"serde": {"lib": "org.apache.hadoop.hive.ql.io.orc.OrcSerde", "name": "", "parameters": {}}, "location": "/tmp/msgw-upgrade-fixture/warehouse/sales.db/orders", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "output_format": "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"}, "owner": "alice", "columns": [["id", "bigint", ""], ["payload", "string", ""]], "parameters": {"comment": "orders table", "transactional": "true"}, "partition_keys": [["ds", "string", ""], ["region", "string", ""]]}', 1795945853, 0, NULL),
	(2, 2, 'sales', 'clicks', 'EXTERNAL_TABLE', false, '{"sd": {"serde": {"lib": "org.apache.hadoop.hive.ql.io.orc.OrcSerde", "name": "", "parameters": {}}, "location": "file:/tmp/msgw-upgrade-fixture/external/clicks", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "output_format": "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"}, "owner": "alice", "columns": [["id", "bigint", ""], ["payload", "string", ""]], "parameters": {"comment": "clicks table"}, "partition_keys": [["ds", "string", ""]]}', 1795945853, 0, NULL),
	(5, 5, 'ext', 'logs', 'MANAGED_TABLE', false, '{"sd": {"serde": {"lib": "serde", "name": "", "parameters": {}}, "location": "/tmp/msgw-upgrade-fixture/warehouse/ext.db/logs", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "in", "output_format": "out"}, "owner": "bob", "columns": [["id", "bigint", "the id"], ["msg", "string", ""]], "parameters": {"a": "1", "COLUMN_STATS_ACCURATE": "{\"COLUMN_STATS\":{\"id\":\"true\",\"msg\":\"true\"}}", "transient_lastDdlTime": "1795945853"}, "partition_keys": [["day", "string", ""]]}', 1795945853, 0, NULL),
	(3, 3, 'sales', 'staging_v2', 'MANAGED_TABLE', false, '{"sd": {"serde": {"lib": "org.apache.hadoop.hive.ql.io.orc.OrcSerde", "name": "", "parameters": {}}, "location": "/tmp/msgw-upgrade-fixture/warehouse/sales.db/staging_v2", "compressed": false, "bucket_cols": [], "num_buckets": -1, "input_format": "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "output_format": "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"}, "owner": "alice", "columns": [["id", "bigint", ""], ["payload", "string", ""]], "parameters": {"comment": "staging table", "transient_lastDdlTime": "1795945853"}, "partition_keys": []}', 1795945853, 0, NULL);


--
-- Data for Name: txn_components; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: txn_housekeeping; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.txn_housekeeping VALUES
	(1, 0, 0);


--
-- Data for Name: txn_to_write_id; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.txn_to_write_id VALUES
	(1, 1, 1),
	(2, 1, 2),
	(3, 1, 3),
	(4, 1, 4),
	(5, 1, 5);


--
-- Data for Name: txns; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.txns VALUES
	(1, 'c', 0, '2026-11-29 09:50:53.988332+00', '2026-11-29 09:50:53.988332+00', '2026-11-29 09:50:53.996444+00', 0, 'etl', 'host1', 'upgrade-fixture', 1),
	(2, 'c', 0, '2026-11-29 09:50:53.997994+00', '2026-11-29 09:50:53.997994+00', '2026-11-29 09:50:54.004101+00', 0, 'etl', 'host1', 'upgrade-fixture', 2),
	(3, 'a', 0, '2026-11-29 09:50:54.005608+00', '2026-11-29 09:50:54.005608+00', '2026-11-29 09:50:54.013547+00', 0, 'etl', 'host1', 'upgrade-fixture', NULL),
	(4, 'c', 0, '2026-11-29 09:50:54.015967+00', '2026-11-29 09:50:54.015967+00', '2026-11-29 09:50:54.021233+00', 0, 'etl', 'host1', 'upgrade-fixture', 4),
	(5, 'o', 0, '2026-11-29 09:50:54.02241+00', '2026-11-29 09:50:54.02241+00', NULL, 0, 'etl', 'host1', 'upgrade-fixture', NULL),
	(6, 'o', 0, '2026-11-29 09:50:54.038987+00', '2026-11-29 09:50:54.038987+00', NULL, 0, 'etl', 'host1', 'upgrade-fixture', NULL);


--
-- Data for Name: write_set; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Name: compaction_queue_cq_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.compaction_queue_cq_id_seq', 1, true);


--
-- Name: dbs_db_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.dbs_db_id_seq', 4, true);


--
-- Name: partitions_version_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.partitions_version_id_seq', 14, true);


--
-- Name: table_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.table_id_seq', 5, true);


--
-- Name: tbls_version_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.tbls_version_id_seq', 5, true);


--
-- Name: column_stats column_stats_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.column_stats
    ADD CONSTRAINT column_stats_pkey PRIMARY KEY (table_id, part_name, column_name);


--
-- Name: compaction_checked compaction_checked_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.compaction_checked
    ADD CONSTRAINT compaction_checked_pkey PRIMARY KEY (table_id);


--
-- Name: compaction_queue compaction_queue_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.compaction_queue
    ADD CONSTRAINT compaction_queue_pkey PRIMARY KEY (cq_id);


--
-- Name: compaction_txns compaction_txns_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.compaction_txns
    ADD CONSTRAINT compaction_txns_pkey PRIMARY KEY (txn_id);


--
-- Name: completed_compactions completed_compactions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.completed_compactions
    ADD CONSTRAINT completed_compactions_pkey PRIMARY KEY (cc_id);


--
-- Name: dbs dbs_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.dbs
    ADD CONSTRAINT dbs_name_key UNIQUE (name);


--
-- Name: dbs dbs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.dbs
    ADD CONSTRAINT dbs_pkey PRIMARY KEY (db_id);


--
-- Name: funcs funcs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.funcs
    ADD CONSTRAINT funcs_pkey PRIMARY KEY (db_name, func_name);


--
-- Name: hive_locks hive_locks_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.hive_locks
    ADD CONSTRAINT hive_locks_pkey PRIMARY KEY (ext_id, int_id);


--
-- Name: min_history_level min_history_level_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.min_history_level
    ADD CONSTRAINT min_history_level_pkey PRIMARY KEY (txn_id);


--
-- Name: next_lock_id next_lock_id_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.next_lock_id
    ADD CONSTRAINT next_lock_id_pkey PRIMARY KEY (id);


--
-- Name: next_txn_id next_txn_id_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.next_txn_id
    ADD CONSTRAINT next_txn_id_pkey PRIMARY KEY (id);


--
-- Name: next_write_id next_write_id_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.next_write_id
    ADD CONSTRAINT next_write_id_pkey PRIMARY KEY (table_id);


--
-- Name: notification_log notification_log_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notification_log
    ADD CONSTRAINT notification_log_pkey PRIMARY KEY (event_id);


--
-- Name: notification_sequence notification_sequence_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notification_sequence
    ADD CONSTRAINT notification_sequence_pkey PRIMARY KEY (id);


--
-- Name: partitions partitions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.partitions
    ADD CONSTRAINT partitions_pkey PRIMARY KEY (version_id);


--
-- Name: role_grants role_grants_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.role_grants
    ADD CONSTRAINT role_grants_pkey PRIMARY KEY (role_name, principal_name, principal_type);


--
-- Name: roles roles_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.roles
    ADD CONSTRAINT roles_pkey PRIMARY KEY (role_name);


--
-- Name: schema_version schema_version_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schema_version
    ADD CONSTRAINT schema_version_pkey PRIMARY KEY (version);


--
-- Name: tbls tbls_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tbls
    ADD CONSTRAINT tbls_pkey PRIMARY KEY (version_id);


--
-- Name: txn_housekeeping txn_housekeeping_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.txn_housekeeping
    ADD CONSTRAINT txn_housekeeping_pkey PRIMARY KEY (id);


--
-- Name: txn_to_write_id txn_to_write_id_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.txn_to_write_id
    ADD CONSTRAINT txn_to_write_id_pkey PRIMARY KEY (table_id, write_id);


--
-- Name: txn_to_write_id txn_to_write_id_txn_id_table_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.txn_to_write_id
    ADD CONSTRAINT txn_to_write_id_txn_id_table_id_key UNIQUE (txn_id, table_id);


--
-- Name: txns txns_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.txns
    ADD CONSTRAINT txns_pkey PRIMARY KEY (txn_id);


--
-- Name: compaction_queue_one_active; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX compaction_queue_one_active ON public.compaction_queue USING btree (cq_table_id, COALESCE(cq_partition, ''::text)) WHERE (cq_state = ANY (ARRAY['i'::bpchar, 'w'::bpchar]));


--
-- Name: compaction_queue_state; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX compaction_queue_state ON public.compaction_queue USING btree (cq_state, cq_id);


--
-- Name: completed_compactions_entity; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX completed_compactions_entity ON public.completed_compactions USING btree (cc_table_id, COALESCE(cc_partition, ''::text), cc_id);


--
-- Name: hive_locks_by_db; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX hive_locks_by_db ON public.hive_locks USING btree (db_name, ext_id);


--
-- Name: hive_locks_by_txn; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX hive_locks_by_txn ON public.hive_locks USING btree (txn_id) WHERE (txn_id <> 0);


--
-- Name: hive_locks_standalone_heartbeat; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX hive_locks_standalone_heartbeat ON public.hive_locks USING btree (last_heartbeat) WHERE (txn_id = 0);


--
-- Name: notification_log_by_table; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX notification_log_by_table ON public.notification_log USING btree (db_name, tbl_name, event_id);


--
-- Name: notification_log_time; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX notification_log_time ON public.notification_log USING btree (event_time);


--
-- Name: partitions_created_wid; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX partitions_created_wid ON public.partitions USING btree (table_id, created_wid) WHERE (created_wid <> 0);


--
-- Name: partitions_dropped_wid; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX partitions_dropped_wid ON public.partitions USING btree (table_id, dropped_wid) WHERE (dropped_wid IS NOT NULL);


--
-- Name: partitions_latest; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX partitions_latest ON public.partitions USING btree (table_id, part_name) WHERE (dropped_wid IS NULL);


--
-- Name: partitions_versions; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX partitions_versions ON public.partitions USING btree (table_id, part_name, created_wid);


--
-- Name: privileges_by_principal; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX privileges_by_principal ON public.privileges USING btree (principal_name, principal_type);


--
-- Name: privileges_by_table; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX privileges_by_table ON public.privileges USING btree (table_id) WHERE (table_id <> 0);


--
-- Name: privileges_key; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX privileges_key ON public.privileges USING btree (object_type, COALESCE(db_name, ''::text), table_id, part_name, column_name, principal_name, principal_type, privilege);


--
-- Name: role_grants_by_principal; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX role_grants_by_principal ON public.role_grants USING btree (principal_name, principal_type);


--
-- Name: tbls_by_name; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX tbls_by_name ON public.tbls USING btree (db_name, tbl_name);


--
-- Name: tbls_dropped_wid; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX tbls_dropped_wid ON public.tbls USING btree (table_id, dropped_wid) WHERE (dropped_wid IS NOT NULL);


--
-- Name: tbls_latest_id; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX tbls_latest_id ON public.tbls USING btree (table_id) WHERE (dropped_wid IS NULL);


--
-- Name: tbls_latest_name; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX tbls_latest_name ON public.tbls USING btree (db_name, tbl_name) WHERE (dropped_wid IS NULL);


--
-- Name: tbls_versions; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX tbls_versions ON public.tbls USING btree (table_id, created_wid);


--
-- Name: txn_components_by_txn; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX txn_components_by_txn ON public.txn_components USING btree (txn_id);


--
-- Name: txns_not_committed; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX txns_not_committed ON public.txns USING btree (txn_id) WHERE (state <> 'c'::bpchar);


--
-- Name: txns_open; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX txns_open ON public.txns USING btree (txn_id) WHERE (state = 'o'::bpchar);


--
-- Name: txns_open_heartbeat; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX txns_open_heartbeat ON public.txns USING btree (last_heartbeat) WHERE (state = 'o'::bpchar);


--
-- Name: write_set_by_commit_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX write_set_by_commit_id ON public.write_set USING btree (commit_id);


--
-- Name: write_set_by_target; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX write_set_by_target ON public.write_set USING btree (db_name, tbl_name, part_name);


--
-- Name: funcs funcs_db_name_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.funcs
    ADD CONSTRAINT funcs_db_name_fkey FOREIGN KEY (db_name) REFERENCES public.dbs(name);


--
-- Name: privileges privileges_db_name_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.privileges
    ADD CONSTRAINT privileges_db_name_fkey FOREIGN KEY (db_name) REFERENCES public.dbs(name) ON DELETE CASCADE;


--
-- Name: role_grants role_grants_role_name_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.role_grants
    ADD CONSTRAINT role_grants_role_name_fkey FOREIGN KEY (role_name) REFERENCES public.roles(role_name) ON DELETE CASCADE;


--
-- Name: tbls tbls_db_name_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tbls
    ADD CONSTRAINT tbls_db_name_fkey FOREIGN KEY (db_name) REFERENCES public.dbs(name);


--
-- PostgreSQL database dump complete
--

\unrestrict FoISVYaB9h1ilQJz1vSNVdhOUBPpoEZebyhC8CbIbCMqeOvuRijBhlVHPeu370F

