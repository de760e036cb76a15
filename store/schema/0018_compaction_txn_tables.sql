-- 0018: the table each compaction txn compacts (store/compaction.py start), kept while the txn is
-- open or aborted. A compaction's output directories are named by its txn id (base_N_vT,
-- delta_..._vT), not by a write id, so an aborted compaction txn must stay listed as aborted while
-- such a directory may exist; this tells the Cleaner where to look before forgetting it
-- (store/aborted_writes.py). The queue entry's cq_txn_id is no such link: a requeue clears it.
CREATE TABLE compaction_txns (
    txn_id    bigint PRIMARY KEY,
    table_id  bigint NOT NULL
);

-- Aborted compaction txns from before: their history rows still name their tables.
INSERT INTO compaction_txns (txn_id, table_id)
SELECT DISTINCT ON (cc.cc_txn_id) cc.cc_txn_id, cc.cc_table_id
FROM completed_compactions cc JOIN txns x ON x.txn_id = cc.cc_txn_id AND x.state = 'a'
ORDER BY cc.cc_txn_id;
