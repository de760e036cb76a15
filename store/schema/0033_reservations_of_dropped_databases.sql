-- 0033: a database's drop takes the write ids reserved under its table names (store/txns.py
-- drop_reservations_of_database, as Hive's drop deletes the database's TXN_TO_WRITE_ID rows). Drops before
-- left them: those of databases that no longer exist go now, so housekeeping can forget the aborted txns
-- that held them (each such txn is listed in every snapshot while it holds one).
DELETE FROM write_id_reservations r WHERE NOT EXISTS (SELECT 1 FROM dbs d WHERE d.name = r.db_name);
