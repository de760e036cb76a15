-- 0024: a txn opened READ_ONLY (Hive 4's OpenTxnRequest.txn_type 2) takes no write id, as Hive 4's
-- AllocateTableWriteIdsFunction refuses one ("not all input txns in open state or read-only"): the
-- allocation answers it as refused, with refused_state 'r' (store/txns.py check_not_refused says so).
-- Before 0024 no txn could be opened READ_ONLY (the Thrift IDL did not carry the type). As 0008 otherwise.

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
    -- An open txn opened READ_ONLY (txn_type 2) reads as 'r': refused as an ended one is.
    SELECT coalesce(jsonb_object_agg(x.txn_id::text, x.state), '{}'::jsonb) INTO states FROM (
        SELECT txn_id, CASE WHEN state = 'o' AND txn_type = 2 THEN 'r' ELSE state END AS state
        FROM txns WHERE txn_id = ANY(wanted) ORDER BY txn_id FOR SHARE) AS x;
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
