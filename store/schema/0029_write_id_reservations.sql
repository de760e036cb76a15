-- 0029: write ids allocated for a table name no table has yet. Hive keeps write ids by name, and Hive 3's
-- and 4's CTAS into a transactional table allocates its txn's write id before it creates the table (its
-- files are written under that id). Here write ids are a table's own, so they wait under the name until a
-- table of that name is created, which takes them over with the numbers given (store/catalog.py
-- create_table): an aborted CTAS's id stays aborted there, so its files are never read.
CREATE TABLE write_id_reservations (
    db_name   text   NOT NULL,
    tbl_name  text   NOT NULL,
    txn_id    bigint NOT NULL,
    write_id  bigint NOT NULL,
    PRIMARY KEY (db_name, tbl_name, write_id),
    UNIQUE (db_name, tbl_name, txn_id)
);
-- Housekeeping keeps an aborted txn that holds a reservation (store/sql/housekeeping.py).
CREATE INDEX write_id_reservations_txn ON write_id_reservations (txn_id);
