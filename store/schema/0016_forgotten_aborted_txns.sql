-- 0016: housekeeping forgets (deletes) aborted txns that wrote nothing: no write id, and not a
-- compaction txn, whose output directories carry its txn id instead (store/housekeeping.py
-- forget_empty_aborted_txns). A txn without a row below t2w_cleaned_below was then either
-- committed or such an aborted txn; aborted_forgotten_upto, the highest id forgotten so, tells
-- which ids can be answered as committed (those above it) and which can no longer be answered.
ALTER TABLE txn_housekeeping ADD COLUMN aborted_forgotten_upto bigint NOT NULL DEFAULT 0;
