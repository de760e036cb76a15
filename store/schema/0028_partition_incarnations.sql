-- 0028: which add began a partition's incarnation. An alter under a txn ends the latest version and
-- writes a new one, and so do a drop and an add of the name under one txn: the rows alone could not
-- tell the two apart. born_wid is the write id of the add (0 without a txn); an alter's version copies
-- the one it ends. NULL: written before this migration (not known; read as an alter).
-- store/column_stats.py: a write without a txn to a partition an open txn dropped and added again
-- describes that txn's new partition, whether or not the old one had statistics to mark.
ALTER TABLE partitions ADD COLUMN born_wid bigint;
