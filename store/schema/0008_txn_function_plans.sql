-- 0008: the transaction functions of 0007 at a cost that does not grow with history. Measured with
-- auto_explain after 15,000 small txns (python -m loadtest.profile_statements shows the per-call
-- cost): three of their statements scanned rows that only housekeeping ever removes.
--
-- * open_txns' smallest open txn: min() over the open txns ran as a bitmap scan of the heartbeat
--   index, whose entries of txns committed since the last vacuum it visited every time (0.7 ms).
--   An ordered scan of an index of exactly the open txns stops at the first live entry, and
--   marks the dead ones it passes so later scans skip them.
-- * allocate_write_ids' "which wanted txns have no write id on this table yet": the cached generic
--   plan hashed every txn_to_write_id row of the table (1.9 ms at 15,000). A LATERAL probe with
--   LIMIT 1 is one index lookup per wanted txn, whatever the plan.
-- * txn_write_ids and release_txn_locks were SQL functions, planned on every call from PL/pgSQL
--   (0.2 ms each per commit); as PL/pgSQL their plans are cached per session.

CREATE INDEX txns_open ON txns (txn_id) WHERE state = 'o';

CREATE OR REPLACE FUNCTION open_txns(n integer, kind smallint, who text, from_host text, agent text,
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
    SELECT txn_id INTO min_open FROM txns WHERE state = 'o' ORDER BY txn_id LIMIT 1;
    INSERT INTO min_history_level (txn_id, min_open_txn_id)
    SELECT g, min_open FROM generate_series(first_txn_id, last_txn_id) AS g;
    message := jsonb_build_object('txn_ids', to_jsonb(ARRAY(SELECT generate_series(first_txn_id, last_txn_id))),
                                  'from_txn_id', first_txn_id, 'to_txn_id', last_txn_id);
END
$$;

CREATE OR REPLACE FUNCTION txn_write_ids(txn bigint) RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN (SELECT coalesce(jsonb_agg(jsonb_build_object('table_id', tw.table_id, 'db_name', coalesce(t.db_name, ''),
                                                         'table_name', coalesce(t.tbl_name, ''), 'write_id', tw.write_id)
                                      ORDER BY tw.table_id), '[]'::jsonb)
            FROM txn_to_write_id tw
            LEFT JOIN tbls t ON t.table_id = tw.table_id AND t.dropped_wid IS NULL
            WHERE tw.txn_id = txn);
END
$$;

CREATE OR REPLACE FUNCTION release_txn_locks(txns bigint[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM hive_locks WHERE (ext_id, int_id) IN (
        SELECT ext_id, int_id FROM hive_locks WHERE txn_id = ANY(txns) ORDER BY ext_id, int_id FOR UPDATE);
END
$$;

CREATE OR REPLACE FUNCTION allocate_write_ids(tbl_id bigint, wanted bigint[],
                                              OUT refused_txn bigint, OUT refused_state char(1),
                                              OUT cleaned_below bigint, OUT txn_ids bigint[], OUT write_ids bigint[],
                                              OUT message jsonb)
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
