-- The Hive Metastore 2.3 transaction tables on PostgreSQL, for the benchmark peer (loadtest/hms.py).
--
-- DataNucleus creates the metastore's object tables (DBS, TBLS, PARTITIONS, NOTIFICATION_LOG, ...) itself,
-- but not the tables TxnHandler reads and writes with plain JDBC; Hive ships those as
-- hive-txn-schema-2.3.0.postgres.sql, which pyspark's jars do not contain, and its hive.in.test set-up creates
-- them on Derby only. This file is written for the benchmark from the table and column names TxnHandler 2.3
-- uses. The names are NOT quoted: TxnHandler 2.3's statements are unquoted too ("select ntxn_next from
-- NEXT_TXN_ID for update"), so both sides fold to lower case on PostgreSQL.
--
-- Not part of the gateway: the gateway's own schema lives in store/schema/.

CREATE TABLE TXNS (
  TXN_ID bigint PRIMARY KEY,
  TXN_STATE char(1) NOT NULL,            -- 'o' open, 'a' aborted (committed txns are deleted)
  TXN_STARTED bigint NOT NULL,
  TXN_LAST_HEARTBEAT bigint NOT NULL,
  TXN_USER varchar(128) NOT NULL,
  TXN_HOST varchar(128) NOT NULL,
  TXN_AGENT_INFO varchar(128),
  TXN_META_INFO varchar(128),
  TXN_HEARTBEAT_COUNT integer
);

-- What an open txn wrote (one row per locked table/partition of a write), moved at commit.
CREATE TABLE TXN_COMPONENTS (
  TC_TXNID bigint REFERENCES TXNS (TXN_ID),
  TC_DATABASE varchar(128) NOT NULL,
  TC_TABLE varchar(128),
  TC_PARTITION varchar(767) DEFAULT NULL,
  TC_OPERATION_TYPE char(1) NOT NULL
);
CREATE INDEX TC_TXNID_INDEX ON TXN_COMPONENTS USING hash (TC_TXNID);

-- Committed writes the compactor has not yet looked at.
CREATE TABLE COMPLETED_TXN_COMPONENTS (
  CTC_TXNID bigint,
  CTC_DATABASE varchar(128) NOT NULL,
  CTC_TABLE varchar(256),
  CTC_PARTITION varchar(767)
);

-- One-row counters, read and bumped under SELECT ... FOR UPDATE.
CREATE TABLE NEXT_TXN_ID (NTXN_NEXT bigint NOT NULL);
INSERT INTO NEXT_TXN_ID VALUES (1);

CREATE TABLE HIVE_LOCKS (
  HL_LOCK_EXT_ID bigint NOT NULL,        -- the lock request
  HL_LOCK_INT_ID bigint NOT NULL,        -- one component of it
  HL_TXNID bigint,
  HL_DB varchar(128) NOT NULL,
  HL_TABLE varchar(128),
  HL_PARTITION varchar(767) DEFAULT NULL,
  HL_LOCK_STATE char(1) NOT NULL,        -- 'w' waiting, 'a' acquired
  HL_LOCK_TYPE char(1) NOT NULL,         -- 'e' exclusive, 'w' shared write, 'r' shared read
  HL_LAST_HEARTBEAT bigint NOT NULL,
  HL_ACQUIRED_AT bigint,
  HL_USER varchar(128) NOT NULL,
  HL_HOST varchar(128) NOT NULL,
  HL_HEARTBEAT_COUNT integer,
  HL_AGENT_INFO varchar(128),
  HL_BLOCKEDBY_EXT_ID bigint,
  HL_BLOCKEDBY_INT_ID bigint,
  PRIMARY KEY (HL_LOCK_EXT_ID, HL_LOCK_INT_ID)
);
CREATE INDEX HL_TXNID_INDEX ON HIVE_LOCKS USING hash (HL_TXNID);

CREATE TABLE NEXT_LOCK_ID (NL_NEXT bigint NOT NULL);
INSERT INTO NEXT_LOCK_ID VALUES (1);

CREATE TABLE COMPACTION_QUEUE (
  CQ_ID bigint PRIMARY KEY,
  CQ_DATABASE varchar(128) NOT NULL,
  CQ_TABLE varchar(128) NOT NULL,
  CQ_PARTITION varchar(767),
  CQ_STATE char(1) NOT NULL,
  CQ_TYPE char(1) NOT NULL,
  CQ_TBLPROPERTIES varchar(2048),
  CQ_WORKER_ID varchar(128),
  CQ_START bigint,
  CQ_RUN_AS varchar(128),
  CQ_HIGHEST_TXN_ID bigint,
  CQ_META_INFO bytea,
  CQ_HADOOP_JOB_ID varchar(32)
);

CREATE TABLE NEXT_COMPACTION_QUEUE_ID (NCQ_NEXT bigint NOT NULL);
INSERT INTO NEXT_COMPACTION_QUEUE_ID VALUES (1);

CREATE TABLE COMPLETED_COMPACTIONS (
  CC_ID bigint PRIMARY KEY,
  CC_DATABASE varchar(128) NOT NULL,
  CC_TABLE varchar(128) NOT NULL,
  CC_PARTITION varchar(767),
  CC_STATE char(1) NOT NULL,
  CC_TYPE char(1) NOT NULL,
  CC_TBLPROPERTIES varchar(2048),
  CC_WORKER_ID varchar(128),
  CC_START bigint,
  CC_END bigint,
  CC_RUN_AS varchar(128),
  CC_HIGHEST_TXN_ID bigint,
  CC_META_INFO bytea,
  CC_HADOOP_JOB_ID varchar(32)
);

-- The rows TxnHandler's MutexAPI locks (SELECT ... FOR UPDATE) to serialize housekeeping across metastores.
CREATE TABLE AUX_TABLE (
  MT_KEY1 varchar(128) NOT NULL,
  MT_KEY2 bigint NOT NULL,
  MT_COMMENT varchar(255),
  PRIMARY KEY (MT_KEY1, MT_KEY2)
);

-- Committed update/delete components, for the write-write conflict check at commit.
CREATE TABLE WRITE_SET (
  WS_DATABASE varchar(128) NOT NULL,
  WS_TABLE varchar(128) NOT NULL,
  WS_PARTITION varchar(767),
  WS_TXNID bigint NOT NULL,
  WS_COMMIT_ID bigint NOT NULL,
  WS_OPERATION_TYPE char(1) NOT NULL
);
