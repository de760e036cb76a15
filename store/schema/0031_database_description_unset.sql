-- 0031: a database's description may be unset (NULL). Hive's metastore keeps one created without a
-- description as null and answers it so (Thrift's Database.description unset), '' only when the client
-- sent ''; Spark, Trino, Hive's CLI and pyiceberg send none. Rows written before keep '': which of them
-- were created without one is not known.
ALTER TABLE dbs ALTER COLUMN description DROP NOT NULL;
