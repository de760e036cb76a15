// The argument layouts of Hive 2.3.10 (pyspark's jars) for the calls whose Hive 3 and 4 layouts, which
// hive_metastore.thrift declares, moved a field: gateway/thrift/layouts.py reads a 2.3 client's call in its
// own layout when the message is in it.

struct InsertEventRequestData {
  1: required list<string> filesAdded,
  2: optional list<string> filesAddedChecksum,
}

union FireEventRequestData {
  1: InsertEventRequestData insertData,
}

struct FireEventRequest {
  1: required bool successful,
  2: required FireEventRequestData data,
  3: optional string dbName,
  4: optional string tableName,
  5: optional list<string> partitionVals,
}

struct FireEventResponse {
}

service ThriftHiveMetastore {
  FireEventResponse fire_listener_event(1: FireEventRequest rqst),
}
