// The subset of Apache Hive's metastore Thrift API that the gateway serves (hive.metastore.port).
//
// Written from Hive's wire facts: every struct, field id, type, default and `required` marker is the one
// Hive 2.3 uses (the version Spark's built-in client speaks), so 2.3 clients interoperate, except a default
// Hive's server does not apply (it tells the field left unset from one set): left out so that the gateway
// tells them apart too, the field says so; fields Hive 4
// added for the synchronized cache (Table.writeId/id/ownerType, Partition.writeId,
// GetTableRequest.validWriteIdList/id, GetPartitionsByNamesRequest and its method), truncate_table
// (Hive 3) and truncate_table_req (Hive 4) carry Hive's own field ids. Clients skip fields they do not
// know, so one IDL serves both generations; Hive 4's request-shaped partition reads (get_partition_req, get_partitions_req, ...) carry
// a snapshot too. Enum-typed fields are declared i32, as they are on the wire. The txn calls have Hive 3's
// shapes (GetOpenTxnsResponse with a list and abortedBits; get_valid_write_ids, allocate_table_write_ids
// and add_dynamic_partitions): Spark's 2.3 client never calls them, Trino's and Hive's newer ones do.
// Hive 4's request-shaped forms that its client sends instead of the older ones (get_database_req,
// create_table_req, drop_database_req, rename_partition_req, get_fields_req, get_schema_req) and its txn
// additions (OpenTxnRequest.txn_type, add_write_ids_to_min_history, update_transaction_statistics,
// ShowCompactRequest's filters) are declared
// as Hive 4's hive_metastore.thrift declares them, with its field ids; so are the newest client's request forms
// (create_database_req, drop_table_req, ... after HIVE-26537), the calls a Hive 4 HiveServer2 makes for its own
// services (get_active_resource_plan, scheduled_query_poll) and those its planner makes (translate_table_dryrun,
// get_materialized_views_for_rewriting, get_partition_names_req). fire_listener_event has Hive 3's and 4's
// shapes; a Hive 2.3 client's request is read in 2.3's (hive23_layouts.thrift, gateway/thrift/layouts.py);
// the write notification log's calls (add_write_notification_log, get_all_write_event_info), the data
// connectors', the catalogs' (Hive 3), get_latest_committed_compaction_info and the seeding calls Hive 4's
// MSCK REPAIR makes (get_max_allocated_table_write_id, seed_write_id, seed_txn_id) are Hive 4's, as are
// NotificationEventRequest's filters. markPartitionForEvent and isPartitionMarkedForEvent are Hive 2.3's.
// Column statistics have Hive 2.3's shapes with Hive 4's added fields (histograms, timestamp statistics).
//
// A method a client calls that is not declared here is answered with TApplicationException
// UNKNOWN_METHOD, on which clients fall back to an older method.


enum PrincipalType {
  USER = 1,
  ROLE = 2,
  GROUP = 3,
}

enum TxnState {
  COMMITTED = 1,
  ABORTED = 2,
  OPEN = 3,
}

enum LockLevel {
  DB = 1,
  TABLE = 2,
  PARTITION = 3,
}

enum LockState {
  ACQUIRED = 1,
  WAITING = 2,
  ABORT = 3,
  NOT_ACQUIRED = 4,
}

enum LockType {
  SHARED_READ = 1,
  SHARED_WRITE = 2,
  EXCLUSIVE = 3,
  EXCL_WRITE = 4,
}

enum DataOperationType {
  SELECT = 1,
  INSERT = 2,
  UPDATE = 3,
  DELETE = 4,
  UNSET = 5,
  NO_TXN = 6,
}

enum ClientCapability {
  TEST_CAPABILITY = 1,
}

struct Version {
  1: string version,
  2: string comments,
}

struct FieldSchema {
  1: string name,
  2: string type,
  3: string comment,
}

struct PrincipalPrivilegeSet {
  1: map<string,list<PrivilegeGrantInfo>> userPrivileges,
  2: map<string,list<PrivilegeGrantInfo>> groupPrivileges,
  3: map<string,list<PrivilegeGrantInfo>> rolePrivileges,
}

struct PrivilegeGrantInfo {
  1: string privilege,
  2: i32 createTime,
  3: string grantor,
  4: i32 grantorType,
  5: bool grantOption,
}

// Roles and privileges (SQL-standard authorization): Hive 2.3's shapes, with Hive 3's catName and
// authorizer, which 2.3 clients leave unset.
enum HiveObjectType {
  GLOBAL = 1,
  DATABASE = 2,
  TABLE = 3,
  PARTITION = 4,
  COLUMN = 5,
}

enum GrantRevokeType {
  GRANT = 1,
  REVOKE = 2,
}

struct HiveObjectRef {
  1: HiveObjectType objectType,
  2: string dbName,
  3: string objectName,
  4: list<string> partValues,
  5: string columnName,
  6: optional string catName,
}

struct HiveObjectPrivilege {
  1: HiveObjectRef hiveObject,
  2: string principalName,
  3: PrincipalType principalType,
  4: PrivilegeGrantInfo grantInfo,
  5: optional string authorizer,
}

struct PrivilegeBag {
  1: list<HiveObjectPrivilege> privileges,
}

struct Role {
  1: string roleName,
  2: i32 createTime,
  3: string ownerName,
}

struct RolePrincipalGrant {
  1: string roleName,
  2: string principalName,
  3: PrincipalType principalType,
  4: bool grantOption,
  5: i32 grantTime,
  6: string grantorName,
  7: PrincipalType grantorPrincipalType,
}

struct GetRoleGrantsForPrincipalRequest {
  1: required string principal_name,
  2: required PrincipalType principal_type,
}

struct GetRoleGrantsForPrincipalResponse {
  1: required list<RolePrincipalGrant> principalGrants,
}

struct GetPrincipalsInRoleRequest {
  1: required string roleName,
}

struct GetPrincipalsInRoleResponse {
  1: required list<RolePrincipalGrant> principalGrants,
}

struct GrantRevokeRoleRequest {
  1: GrantRevokeType requestType,
  2: string roleName,
  3: string principalName,
  4: PrincipalType principalType,
  5: optional string grantor,
  6: optional PrincipalType grantorType,
  7: optional bool grantOption,
}

struct GrantRevokeRoleResponse {
  1: optional bool success,
}

struct GrantRevokePrivilegeRequest {
  1: GrantRevokeType requestType,
  2: PrivilegeBag privileges,
  3: optional bool revokeGrantOption,
}

struct GrantRevokePrivilegeResponse {
  1: optional bool success,
}

struct Database {
  1: string name,
  2: string description,
  3: string locationUri,
  4: map<string,string> parameters,
  5: PrincipalPrivilegeSet privileges,
  6: string ownerName,
  7: i32 ownerType,
}

struct SerDeInfo {
  1: string name,
  2: string serializationLib,
  3: map<string,string> parameters,
}

struct Order {
  1: string col,
  2: i32 order,
}

struct SkewedInfo {
  1: list<string> skewedColNames,
  2: list<list<string>> skewedColValues,
  3: map<list<string>,string> skewedColValueLocationMaps,
}

struct StorageDescriptor {
  1: list<FieldSchema> cols,
  2: string location,
  3: string inputFormat,
  4: string outputFormat,
  5: bool compressed,
  6: i32 numBuckets,
  7: SerDeInfo serdeInfo,
  8: list<string> bucketCols,
  9: list<Order> sortCols,
  10: map<string,string> parameters,
  11: SkewedInfo skewedInfo,
  12: bool storedAsSubDirectories,
}

struct Table {
  1: string tableName,
  2: string dbName,
  3: string owner,
  4: i32 createTime,
  5: i32 lastAccessTime,
  6: i32 retention,
  7: StorageDescriptor sd,
  8: list<FieldSchema> partitionKeys,
  9: map<string,string> parameters,
  10: string viewOriginalText,
  11: string viewExpandedText,
  12: string tableType,
  13: PrincipalPrivilegeSet privileges,
  // No default (Hive's is false): its metastore leaves it unset, and Hive 2.3's DESCRIBE EXTENDED prints it when set.
  14: bool temporary,
  15: bool rewriteEnabled,
  // Hive 3's and 4's: read (and answered back by translate_table_dryrun), never stored.
  17: string catName,
  18: PrincipalType ownerType = 1,
  19: i64 writeId = -1,
  // Hive 4: set in get_table_req's answer when getColumnStats asks for it.
  21: ColumnStatistics colStats,
  25: i64 id = -1,
  28: i64 txnId,
}

struct Partition {
  1: list<string> values,
  2: string dbName,
  3: string tableName,
  4: i32 createTime,
  5: i32 lastAccessTime,
  6: StorageDescriptor sd,
  7: map<string,string> parameters,
  8: PrincipalPrivilegeSet privileges,
  10: i64 writeId = -1,
  // Hive 4: set in get_partitions_by_names_req's answer when get_col_stats asks for it.
  12: ColumnStatistics colStats,
}

struct EnvironmentContext {
  1: map<string,string> properties,
}

struct AddPartitionsResult {
  1: list<Partition> partitions,
}

struct AddPartitionsRequest {
  1: required string dbName,
  2: required string tblName,
  3: required list<Partition> parts,
  4: required bool ifNotExists,
  5: bool needResult = true,
}

struct DropPartitionsResult {
  1: list<Partition> partitions,
}

// Hive 2.3's get_partitions_by_expr: expr is a Kryo-serialized ExprNodeGenericFuncDesc (hive/kryo_expr.py).
struct PartitionsByExprRequest {
  1: required string dbName,
  2: required string tblName,
  3: required binary expr,
  4: optional string defaultPartitionName,
  5: optional i16 maxParts = -1,
  // Hive 3's and 4's (get_partition_names_req reads order and the snapshot).
  6: optional string catName,
  7: optional string order,
  8: optional string validWriteIdList,
  9: optional i64 id = -1,
}

struct PartitionsByExprResult {
  1: required list<Partition> partitions,
  2: required bool hasUnknownPartitions,
}

struct DropPartitionsExpr {
  1: required binary expr,
  2: i32 partArchiveLevel,
}

struct RequestPartsSpec {
  1: list<string> names,
  2: list<DropPartitionsExpr> exprs,
}

struct DropPartitionsRequest {
  1: required string dbName,
  2: required string tblName,
  3: required RequestPartsSpec parts,
  4: bool deleteData,
  5: bool ifExists,                 // Hive's IDL says `= true`, but its server reads an unset one as false (no default here)
  6: bool ignoreProtection,
  7: EnvironmentContext environmentContext,
  8: bool needResult = true,
}

struct ResourceUri {
  1: i32 resourceType,
  2: string uri,
}

struct Function {
  1: string functionName,
  2: string dbName,
  3: string className,
  4: string ownerName,
  5: i32 ownerType,
  6: i32 createTime,
  7: i32 functionType,
  8: list<ResourceUri> resourceUris,
}

struct GetAllFunctionsResponse {
  1: list<Function> functions,
}

struct ClientCapabilities {
  1: required list<i32> values,
}

struct GetTableRequest {
  1: required string dbName,
  2: required string tblName,
  3: ClientCapabilities capabilities,
  4: string catName,
  6: string validWriteIdList,
  7: bool getColumnStats,
  8: list<string> processorCapabilities,
  9: string processorIdentifier,
  10: string engine = "hive",
  11: i64 id = -1,
}

struct GetTableResult {
  1: required Table table,
  2: bool isStatsCompliant,
}

// Hive 4's projection of the fields a listing asks for (HiveMetaStoreClient.getTables sends one).
struct GetProjectionsSpec {
  1: list<string> fieldList,
  2: string includeParamKeyPattern,
  3: string excludeParamKeyPattern,
}

// Hive 4's get_partitions_with_specs (its MSCK REPAIR reads partitions so): the answer holds each partition
// whole in a PartitionListComposingSpec; Hive's other form, PartitionSpecWithSharedSD, is never answered here,
// only taken by add_partitions_pspec (HCatalog's HCatClient.addPartitionSpec sends it).
enum PartitionFilterMode {
  BY_NAMES,
  BY_VALUES,
  BY_EXPR,
}

struct GetPartitionsFilterSpec {
  7: optional PartitionFilterMode filterMode,
  8: optional list<string> filters,
}

struct GetPartitionsRequest {
  1: optional string catName,
  2: string dbName,
  3: string tblName,
  4: optional bool withAuth,
  5: optional string user,
  6: optional list<string> groupNames,
  7: GetProjectionsSpec projectionSpec,
  8: GetPartitionsFilterSpec filterSpec,
  9: optional list<string> processorCapabilities,
  10: optional string processorIdentifier,
  11: optional string validWriteIdList,
}

struct PartitionListComposingSpec {
  1: list<Partition> partitions,
}

// Hive 3's catalogs: this metastore has one, hive (gateway/thrift/catalog_names.py).
struct Catalog {
  1: string name,
  2: optional string description,
  3: string locationUri,
  4: optional i32 createTime,
}

struct GetCatalogRequest {
  1: string name,
}

struct GetCatalogResponse {
  1: Catalog catalog,
}

struct GetCatalogsResponse {
  1: list<string> names,
}

struct CreateCatalogRequest {
  1: Catalog catalog,
}

struct DropCatalogRequest {
  1: string name,
}

// A partition of a PartitionSpecWithSharedSD: its storage descriptor is the shared one, at that one's
// location followed by relativePath.
struct PartitionWithoutSD {
  1: list<string> values,
  2: i32 createTime,
  3: i32 lastAccessTime,
  4: string relativePath,
  5: map<string, string> parameters,
  6: optional PrincipalPrivilegeSet privileges,
}

struct PartitionSpecWithSharedSD {
  1: list<PartitionWithoutSD> partitions,
  2: StorageDescriptor sd,
}

struct PartitionSpec {
  1: string dbName,
  2: string tableName,
  3: string rootPath,
  4: optional PartitionSpecWithSharedSD sharedSDPartitionSpec,
  5: optional PartitionListComposingSpec partitionList,
  6: optional string catName,
  7: optional i64 writeId = -1,
  8: optional bool isStatsCompliant,
}

struct GetPartitionsResponse {
  1: list<PartitionSpec> partitionSpec,
}

// Fields 4-8 are Hive 4's: its SHOW TABLES sends tablesPattern and no tblNames.
struct GetTablesRequest {
  1: required string dbName,
  2: list<string> tblNames,
  3: ClientCapabilities capabilities,
  4: string catName,
  5: list<string> processorCapabilities,
  6: string processorIdentifier,
  7: GetProjectionsSpec projectionSpec,
  8: string tablesPattern,
}

struct GetTablesResult {
  1: required list<Table> tables,
}

// Hive 4's: HiveMetaStoreClient.createTable (with or without constraints) sends only create_table_req.
struct CreateTableRequest {
  1: required Table table,
  2: optional EnvironmentContext envContext,
  3: optional list<SQLPrimaryKey> primaryKeys,
  4: optional list<SQLForeignKey> foreignKeys,
  5: optional list<SQLUniqueConstraint> uniqueConstraints,
  6: optional list<SQLNotNullConstraint> notNullConstraints,
  7: optional list<SQLDefaultConstraint> defaultConstraints,
  8: optional list<SQLCheckConstraint> checkConstraints,
  9: optional list<string> processorCapabilities,
  10: optional string processorIdentifier,
}

// Hive 4's: HiveMetaStoreClient.dropDatabase sends drop_database_req for DROP DATABASE ... CASCADE.
struct DropDatabaseRequest {
  1: required string name,
  2: optional string catalogName,
  3: required bool ignoreUnknownDb,
  4: required bool deleteData,
  5: required bool cascade,
  6: optional bool softDelete = false,
  7: optional i64 txnId = 0,
  8: optional bool deleteManagedDir = true,
  9: optional string id,
  10: optional bool asyncDrop,
  11: optional bool cancel,
}

// The newest Hive's (HIVE-20189's client) answer to drop_database_req and drop_table_req, which may run
// asynchronously there: an older client, which declares them void, skips it.
struct AsyncOperationResp {
  1: required string id,
  2: optional string message,
  3: optional bool finished,
}

// The request forms the newest Hive client (ThriftHiveMetaStoreClient, after HIVE-26537) sends instead of
// create_database, alter_database, drop_table, drop_partition and append_partition, with Hive's field ids.
struct CreateDatabaseRequest {
  1: required string databaseName,
  2: optional string description,
  3: optional string locationUri,
  4: optional map<string,string> parameters,
  5: optional PrincipalPrivilegeSet privileges,
  6: optional string ownerName,
  7: optional i32 ownerType,
  8: optional string catalogName,
  9: optional i32 createTime,
  10: optional string managedLocationUri,
  11: optional i32 type,
  12: optional string dataConnectorName,
  13: optional string remote_dbname,
}

struct AlterDatabaseRequest {
  1: required string oldDbName,
  2: required Database newDb,
}

struct DropTableRequest {
  1: optional string catalogName,
  2: required string dbName,
  3: required string tableName,
  4: optional bool deleteData,
  5: optional EnvironmentContext envContext,
  6: optional bool dropPartitions,
  7: optional string id,
  8: optional bool asyncDrop,
  9: optional bool cancel,
}

struct DropPartitionRequest {
  1: optional string catName,
  2: required string dbName,
  3: required string tblName,
  4: optional string partName,
  5: optional list<string> partVals,
  6: optional bool deleteData,
  7: optional EnvironmentContext environmentContext,
}

struct AppendPartitionsRequest {
  1: optional string catalogName,
  2: required string dbName,
  3: required string tableName,
  4: optional string name,
  5: optional list<string> partVals,
  6: optional EnvironmentContext environmentContext,
}

// A Hive 4 HiveServer2's own services (gateway/thrift/hs2_service_methods.py): workload management's active
// resource plan and the scheduled queries due. Neither is kept here, so the answers' optional fields are never
// set and are left out (Hive's: WMGetActiveResourcePlanResponse.resourcePlan, a WMFullResourcePlan;
// ScheduledQueryPollResponse's scheduleKey, executionId, query and user); ScheduledQuery is read for its key.
struct WMGetActiveResourcePlanRequest {
  1: optional string ns,
}

struct WMGetActiveResourcePlanResponse {
}

// Hive 4's data connectors (remote databases): none are kept here (gateway/thrift/data_connector_methods.py).
// Hive 4.0's drop_dataconnector(name, ifNotExists, checkReferences) is not declared: its last two arguments
// carry no field ids in Hive's IDL, so their ids on the wire are the Thrift compiler's; its newer client sends
// drop_dataconnector_req.
struct DataConnector {
  1: string name,
  2: string type,
  3: string url,
  4: optional string description,
  5: optional map<string, string> parameters,
  6: optional string ownerName,
  7: optional i32 ownerType,
  8: optional i32 createTime,
}

struct CreateDataConnectorRequest {
  1: required DataConnector connector,
}

struct GetDataConnectorRequest {
  1: required string connectorName,
}

struct AlterDataConnectorRequest {
  1: required string connectorName,
  2: required DataConnector newConnector,
}

struct DropDataConnectorRequest {
  1: required string connectorName,
  2: optional bool ifNotExists,
  3: optional bool checkReferences,
}

struct ScheduledQueryPollRequest {
  1: required string clusterNamespace,
}

struct ScheduledQueryPollResponse {
}

struct ScheduledQueryKey {
  1: required string scheduleName,
  2: required string clusterNamespace,
}

struct ScheduledQuery {
  1: required ScheduledQueryKey scheduleKey,
  2: optional bool enabled,
  4: optional string schedule,
  5: optional string user,
  6: optional string query,
  7: optional i32 nextExecution,
}

struct ScheduledQueryMaintenanceRequest {
  1: required i32 type,
  2: required ScheduledQuery scheduledQuery,
}

// Hive 4's: HiveMetaStoreClient.getDatabase sends only get_database_req.
struct GetDatabaseRequest {
  1: optional string name,
  2: optional string catalogName,
  3: optional list<string> processorCapabilities,
  4: optional string processorIdentifier,
}

struct TableMeta {
  1: required string dbName,
  2: required string tableName,
  3: required string tableType,
  4: string comments,
}

struct TxnInfo {
  1: required i64 id,
  2: required i32 state,
  3: required string user,
  4: required string hostname,
  5: string agentInfo = "Unknown",
  6: i32 heartbeatCount = 0,
  7: string metaInfo,
  8: i64 startedTime,
  9: i64 lastHeartbeatTime,
}

struct GetOpenTxnsInfoResponse {
  1: required i64 txn_high_water_mark,
  2: required list<TxnInfo> open_txns,
}

struct GetOpenTxnsResponse {
  1: required i64 txn_high_water_mark,
  2: required list<i64> open_txns,
  3: i64 min_open_txn,
  4: required binary abortedBits,
}

// Hive 4's (HIVE-21114): get_open_txns_req leaves out the txns of these types (TxnType values).
struct GetOpenTxnsRequest {
  1: optional list<i32> excludeTxnTypes,
}

struct OpenTxnRequest {
  1: required i32 num_txns,
  2: required string user,
  3: required string hostname,
  4: string agentInfo = "Unknown",
  5: optional string replPolicy,             // Hive 3's and 4's replication: refused (not supported)
  6: optional list<i64> replSrcTxnIds,
  7: optional i32 txn_type = 0,              // Hive 4's TxnType: DEFAULT 0, READ_ONLY 2, ...
}

struct OpenTxnsResponse {
  1: required list<i64> txn_ids,
}

struct AbortTxnRequest {
  1: required i64 txnid,
}

struct AbortTxnsRequest {
  1: required list<i64> txn_ids,
}

// Hive 4's: a table parameter (its key starting with _meta) Hive stores in the commit's own database
// transaction (HiveStreamingConnection.commitTransaction(partitions, key, value): a source's offsets).
struct CommitTxnKeyValue {
  1: required i64 tableId,
  2: required string key,
  3: required string value,
}

struct CommitTxnRequest {
  1: required i64 txnid,
  5: optional CommitTxnKeyValue keyValue,    // store/catalog.py commit_with_table_parameter
}

struct LockComponent {
  1: required i32 type,
  2: required i32 level,
  3: required string dbname,
  4: string tablename,
  5: string partitionname,
  6: i32 operationType = 5,
  7: bool isAcid,                   // Hive 3's isTransactional; not set counts as true (no default here)
  8: bool isDynamicPartitionWrite = false,
}

struct LockRequest {
  1: required list<LockComponent> component,
  2: i64 txnid,
  3: required string user,
  4: required string hostname,
  5: string agentInfo = "Unknown",
}

struct LockResponse {
  1: required i64 lockid,
  2: required i32 state,
}

struct CheckLockRequest {
  1: required i64 lockid,
  2: i64 txnid,
  3: i64 elapsed_ms,
}

struct UnlockRequest {
  1: required i64 lockid,
}

struct ShowLocksRequest {
  1: string dbname,
  2: string tablename,
  3: string partname,
  4: bool isExtended = false,
}

struct ShowLocksResponseElement {
  1: required i64 lockid,
  2: required string dbname,
  3: string tablename,
  4: string partname,
  5: required i32 state,
  6: required i32 type,
  7: i64 txnid,
  8: required i64 lastheartbeat,
  9: i64 acquiredat,
  10: required string user,
  11: required string hostname,
  12: i32 heartbeatCount = 0,
  13: string agentInfo,
  14: i64 blockedByExtId,
  15: i64 blockedByIntId,
  16: i64 lockIdInternal,
}

struct ShowLocksResponse {
  1: list<ShowLocksResponseElement> locks,
}

struct HeartbeatRequest {
  1: i64 lockid,
  2: i64 txnid,
}

struct HeartbeatTxnRangeRequest {
  1: required i64 min,
  2: required i64 max,
}

struct HeartbeatTxnRangeResponse {
  1: required set<i64> aborted,
  2: required set<i64> nosuch,
}

// Fields 3 to 7 are Hive 4's filters (Impala sends a skip list).
struct NotificationEventRequest {
  1: required i64 lastEvent,
  2: i32 maxEvents,
  3: optional list<string> eventTypeSkipList,
  4: optional string catName,
  5: optional string dbName,
  6: optional list<string> tableNames,
  7: optional list<string> eventTypeList,
}

struct NotificationEvent {
  1: required i64 eventId,
  2: required i32 eventTime,
  3: required string eventType,
  4: string dbName,
  5: string tableName,
  6: required string message,
  7: string messageFormat,
}

struct NotificationEventResponse {
  1: required list<NotificationEvent> events,
}

struct CurrentNotificationEventId {
  1: required i64 eventId,
}

struct GetPartitionsByNamesRequest {
  1: required string db_name,
  2: required string tbl_name,
  3: list<string> names,
  4: bool get_col_stats,
  5: list<string> processorCapabilities,
  6: string processorIdentifier,
  7: string engine = "hive",
  8: string validWriteIdList,
  9: bool getFileMetadata,
  10: i64 id = -1,
}

struct GetPartitionsByNamesResult {
  1: required list<Partition> partitions,
}

struct GetValidWriteIdsRequest {
  1: required list<string> fullTableNames,
  2: string validTxnList,
  3: i64 writeId,
}

struct TableValidWriteIds {
  1: required string fullTableName,
  2: required i64 writeIdHighWaterMark,
  3: required list<i64> invalidWriteIds,
  4: i64 minOpenWriteId,
  5: required binary abortedBits,
}

struct GetValidWriteIdsResponse {
  1: required list<TableValidWriteIds> tblValidWriteIds,
}

struct TxnToWriteId {
  1: required i64 txnId,
  2: required i64 writeId,
}

struct AllocateTableWriteIdsRequest {
  1: required string dbName,
  2: required string tableName,
  3: list<i64> txnIds,
  4: string replPolicy,
  5: list<TxnToWriteId> srcTxnToWriteIdList,
}

struct AllocateTableWriteIdsResponse {
  1: required list<TxnToWriteId> txnToWriteIds,
}

struct MaxAllocatedTableWriteIdRequest {
  1: required string dbName,
  2: required string tableName,
}

struct MaxAllocatedTableWriteIdResponse {
  1: required i64 maxWriteId,
}

struct SeedTableWriteIdsRequest {
  1: required string dbName,
  2: required string tableName,
  3: required i64 seedWriteId,
}

struct SeedTxnIdRequest {
  1: required i64 seedTxnId,
}

// Hive 3's (with writeid; Hive 2.3's has no field 2, and its names sit one id lower).
struct AddDynamicPartitions {
  1: required i64 txnid,
  2: required i64 writeid,
  3: required string dbname,
  4: required string tablename,
  5: required list<string> partitionnames,
  6: i32 operationType = 5,
}

// fire_listener_event (hive.metastore.dml.events): Hive 3's and 4's shapes. Hive 2.3's InsertEventRequestData
// has no `replace` (its filesAdded is field 1, its checksums field 2) and its FireEventRequestData only
// insertData: gateway/thrift/layouts.py reads a 2.3 client's request in that layout.
struct InsertEventRequestData {
  1: optional bool replace,
  2: required list<string> filesAdded,
  3: optional list<string> filesAddedChecksum,
  4: optional list<string> subDirectoryList,
  5: optional list<string> partitionVal,
}

union FireEventRequestData {
  1: optional InsertEventRequestData insertData,
  2: optional list<InsertEventRequestData> insertDatas,
  3: optional bool refreshEvent,
}

struct FireEventRequest {
  1: required bool successful,
  2: required FireEventRequestData data,
  3: optional string dbName,
  4: optional string tableName,
  5: optional list<string> partitionVals,
  6: optional string catName,
  7: optional map<string, string> tblParams,
}

struct FireEventResponse {
  1: list<i64> eventIds,
}

// Hive 3's and 4's write notification log (add_write_notification_log, get_all_write_event_info).
struct WriteNotificationLogRequest {
  1: required i64 txnId,
  2: required i64 writeId,
  3: required string db,
  4: required string table,
  5: required InsertEventRequestData fileInfo,
  6: optional list<string> partitionVals,
}

struct WriteNotificationLogResponse {
}

struct WriteNotificationLogBatchRequest {
  1: required string catalog,
  2: required string db,
  3: required string table,
  4: required list<WriteNotificationLogRequest> requestList,
}

struct WriteNotificationLogBatchResponse {
}

struct GetAllWriteEventInfoRequest {
  1: required i64 txnId,
  2: optional string dbName,
  3: optional string tableName,
}

struct WriteEventInfo {
  1: required i64 writeId,
  2: required string database,
  3: required string table,
  4: required string files,
  5: optional string partition,
  6: optional string tableObj,
  7: optional string partitionObj,
}

struct NotificationEventsCountRequest {
  1: required i64 fromEventId,
  2: required string dbName,
  3: string catName,
  4: i64 toEventId,
  5: i64 limit,
}

struct NotificationEventsCountResponse {
  1: required i64 eventsCount,
}

struct AlterTableRequest {
  1: string catName,
  2: required string dbName,
  3: required string tableName,
  4: required Table table,
  5: EnvironmentContext environmentContext,
  6: i64 writeId = -1,
  7: string validWriteIdList,
  8: list<string> processorCapabilities,
  9: string processorIdentifier,
  10: string expectedParameterKey,          // Hive 4's conditional alter, as the context's expected_parameter_key
  11: string expectedParameterValue,
}

struct AlterTableResponse {
}

struct TruncateTableRequest {
  1: required string dbName,
  2: required string tableName,
  3: optional list<string> partNames,
  4: optional i64 writeId = -1,
  5: optional string validWriteIdList,
  6: optional EnvironmentContext environmentContext,
}

struct TruncateTableResponse {
}

struct AlterPartitionsRequest {
  1: string catName,
  2: required string dbName,
  3: required string tableName,
  4: required list<Partition> partitions,
  5: EnvironmentContext environmentContext,
  6: i64 writeId = -1,
  7: string validWriteIdList,
}

struct AlterPartitionsResponse {
}

// Hive 4's: HiveMetaStoreClient.renamePartition sends only rename_partition_req.
struct RenamePartitionRequest {
  1: optional string catName,
  2: required string dbName,
  3: required string tableName,
  4: required list<string> partVals,
  5: required Partition newPart,
  6: optional string validWriteIdList,
  7: optional i64 txnId,
  8: optional bool clonePart,
}

struct RenamePartitionResponse {
}

// Hive 4's: its BasicStatsTask sends the rows a write to a transactional table inserted, updated and
// deleted (counted for the materialized views that use the table).
struct UpdateTransactionalStatsRequest {
  1: required i64 tableId,
  2: required i64 insertCount,
  3: required i64 updatedCount,
  4: required i64 deletedCount,
}

struct GetPartitionRequest {
  1: string catName,
  2: required string dbName,
  3: required string tblName,
  4: required list<string> partVals,
  5: string validWriteIdList,
  6: i64 id = -1,
}

struct GetPartitionResponse {
  1: required Partition partition,
}

struct PartitionsRequest {
  1: string catName,
  2: required string dbName,
  3: required string tblName,
  4: i16 maxParts = -1,
  5: string validWriteIdList,
  6: i64 id = -1,
}

struct PartitionsResponse {
  1: required list<Partition> partitions,
}

struct GetPartitionsByFilterRequest {
  1: string catName,
  2: string dbName,
  3: string tblName,
  4: string filter,
  5: i16 maxParts = -1,
}

struct GetPartitionNamesPsRequest {
  1: string catName,
  2: required string dbName,
  3: required string tblName,
  4: list<string> partValues,
  5: i16 maxParts = -1,
  6: string validWriteIdList,
  7: i64 id = -1,
}

struct GetPartitionNamesPsResponse {
  1: required list<string> names,
}

struct GetPartitionsPsWithAuthRequest {
  1: string catName,
  2: required string dbName,
  3: required string tblName,
  4: list<string> partVals,
  5: i16 maxParts = -1,
  6: string userName,
  7: list<string> groupNames,
  8: string validWriteIdList,
  9: i64 id = -1,
  13: list<string> partNames,              // Hive 4's (HIVE-27804): these partitions, by name
}

struct GetPartitionsPsWithAuthResponse {
  1: required list<Partition> partitions,
}

// get_partition_values (Hive 2.3's; catName and validWriteIdList are Hive 3's and 4's): the values of
// `partitionKeys` of each partition, or with a filter every key's (gateway/thrift/partition_values.py).
// The defaults are Hive's, and its server applies them: an unset field is its default.
struct PartitionValuesRequest {
  1: required string dbName,
  2: required string tblName,
  3: required list<FieldSchema> partitionKeys,
  4: bool applyDistinct = true,
  5: string filter,
  6: list<FieldSchema> partitionOrder,    // not read, as Hive reads it nowhere
  7: bool ascending = true,
  8: i64 maxParts = -1,
  9: string catName,
  10: string validWriteIdList,          // not read, as Hive 4 reads it nowhere here (and no table id comes with it)
}

struct PartitionValuesRow {
  1: required list<string> row,
}

struct PartitionValuesResponse {
  1: required list<PartitionValuesRow> partitionValues,
}

// Column statistics (Hive 2.3's; `histogram`, Timestamp and timestampStats are Hive 4's, and so are the
// requests' engine and validWriteIdList fields, which the gateway accepts and ignores: its statistics
// are not versioned, as Hive 2.3's). Binary fields are `string` in Hive 2.3: the same bytes on the wire.
struct BooleanColumnStatsData {
  1: required i64 numTrues,
  2: required i64 numFalses,
  3: required i64 numNulls,
  4: optional binary bitVectors,
}

struct DoubleColumnStatsData {
  1: optional double lowValue,
  2: optional double highValue,
  3: required i64 numNulls,
  4: required i64 numDVs,
  5: optional binary bitVectors,
  6: optional binary histogram,
}

struct LongColumnStatsData {
  1: optional i64 lowValue,
  2: optional i64 highValue,
  3: required i64 numNulls,
  4: required i64 numDVs,
  5: optional binary bitVectors,
  6: optional binary histogram,
}

struct StringColumnStatsData {
  1: required i64 maxColLen,
  2: required double avgColLen,
  3: required i64 numNulls,
  4: required i64 numDVs,
  5: optional binary bitVectors,
}

struct BinaryColumnStatsData {
  1: required i64 maxColLen,
  2: required double avgColLen,
  3: required i64 numNulls,
  4: optional binary bitVectors,
}

struct Decimal {
  3: required i16 scale,
  1: required binary unscaled,
}

struct DecimalColumnStatsData {
  1: optional Decimal lowValue,
  2: optional Decimal highValue,
  3: required i64 numNulls,
  4: required i64 numDVs,
  5: optional binary bitVectors,
  6: optional binary histogram,
}

struct Date {
  1: required i64 daysSinceEpoch,
}

struct DateColumnStatsData {
  1: optional Date lowValue,
  2: optional Date highValue,
  3: required i64 numNulls,
  4: required i64 numDVs,
  5: optional binary bitVectors,
  6: optional binary histogram,
}

struct Timestamp {
  1: required i64 secondsSinceEpoch,
}

struct TimestampColumnStatsData {
  1: optional Timestamp lowValue,
  2: optional Timestamp highValue,
  3: required i64 numNulls,
  4: required i64 numDVs,
  5: optional binary bitVectors,
  6: optional binary histogram,
}

union ColumnStatisticsData {
  1: BooleanColumnStatsData booleanStats,
  2: LongColumnStatsData longStats,
  3: DoubleColumnStatsData doubleStats,
  4: StringColumnStatsData stringStats,
  5: BinaryColumnStatsData binaryStats,
  6: DecimalColumnStatsData decimalStats,
  7: DateColumnStatsData dateStats,
  8: TimestampColumnStatsData timestampStats,
}

struct ColumnStatisticsObj {
  1: required string colName,
  2: required string colType,
  3: required ColumnStatisticsData statsData,
}

struct ColumnStatisticsDesc {
  1: required bool isTblLevel,
  2: required string dbName,
  3: required string tableName,
  4: optional string partName,
  5: optional i64 lastAnalyzed,
  6: optional string catName,
}

struct ColumnStatistics {
  1: required ColumnStatisticsDesc statsDesc,
  2: required list<ColumnStatisticsObj> statsObj,
  3: optional bool isStatsCompliant,
  4: optional string engine,
}

struct TableStatsRequest {
  1: required string dbName,
  2: required string tblName,
  3: required list<string> colNames,
  4: optional string catName,
  5: optional string validWriteIdList,
  6: optional string engine,
  7: optional i64 id = -1,
}

struct TableStatsResult {
  1: required list<ColumnStatisticsObj> tableStats,
  2: optional bool isStatsCompliant,
}

struct PartitionsStatsRequest {
  1: required string dbName,
  2: required string tblName,
  3: required list<string> colNames,
  4: required list<string> partNames,
  5: optional string catName,
  6: optional string validWriteIdList,
  7: optional string engine,
}

struct AggrStats {
  1: required list<ColumnStatisticsObj> colStats,
  2: required i64 partsFound,
  3: optional bool isStatsCompliant,
}

struct PartitionsStatsResult {
  1: required map<string, list<ColumnStatisticsObj>> partStats,
  2: optional bool isStatsCompliant,
}

struct SetPartitionsStatsRequest {
  1: required list<ColumnStatistics> colStats,
  2: optional bool needMerge,
  3: optional i64 writeId = -1,
  4: optional string validWriteIdList,
  5: optional string engine,
}

// The newest Hive client's only call to delete statistics (HIVE-28655).
struct DeleteColumnStatisticsRequest {
  1: optional string cat_name,
  2: required string db_name,
  3: required string tbl_name,
  4: optional list<string> part_names,
  5: optional list<string> col_names,
  6: optional string engine = "hive",
  7: optional bool tableLevel = false,
}

struct SetPartitionsStatsResponse {
  1: required bool result,
}

exception MetaException {
  1: string message,
}

exception UnknownTableException {
  1: string message,
}

exception UnknownDBException {
  1: string message,
}

exception AlreadyExistsException {
  1: string message,
}

exception InvalidPartitionException {
  1: string message,
}

exception UnknownPartitionException {
  1: string message,
}

exception InvalidObjectException {
  1: string message,
}

exception NoSuchObjectException {
  1: string message,
}

exception InvalidOperationException {
  1: string message,
}

exception ConfigValSecurityException {
  1: string message,
}

exception InvalidInputException {
  1: string message,
}

exception NoSuchTxnException {
  1: string message,
}

exception TxnAbortedException {
  1: string message,
}

exception TxnOpenException {
  1: string message,
}

exception NoSuchLockException {
  1: string message,
}

// -- compaction (Hive 3's CompactionRequest .. ShowCompactResponse, Hive 4's added element fields) --
enum CompactionType {
  MINOR = 1,
  MAJOR = 2,
}

struct CompactionRequest {
  1: required string dbname,
  2: required string tablename,
  3: optional string partitionname,
  4: required CompactionType type,
  5: optional string runas,
  6: optional map<string, string> properties,
}

struct CompactionResponse {
  1: required i64 id,
  2: required string state,
  3: required bool accepted,
}

// Hive 4's filters (its SHOW COMPACTIONS [db.]t PARTITION (...) POOL 'p' TYPE 'major' STATUS 's' LIMIT n,
// and ALTER TABLE ... COMPACT ... AND WAIT, which polls its compaction by id).
struct ShowCompactRequest {
  1: optional i64 id,
  2: optional string poolName,
  3: optional string dbName,
  4: optional string tbName,
  5: optional string partName,
  6: optional CompactionType type,
  7: optional string state,
  8: optional i64 limit,
  9: optional string order,
}

// Hive 4's get_latest_committed_compaction_info (Impala's catalog reads it to reload a compacted table's files).
struct GetLatestCommittedCompactionInfoRequest {
  1: required string dbname,
  2: required string tablename,
  3: optional list<string> partitionnames,
  4: optional i64 lastCompactionId,
}

struct CompactionInfoStruct {
  1: required i64 id,
  2: required string dbname,
  3: required string tablename,
  4: optional string partitionname,
  5: required i32 type,
  6: optional string runas,
  7: optional string properties,
  8: optional bool toomanyaborts,
  9: optional string state,
  10: optional string workerId,
  11: optional i64 start,
  12: optional i64 highestWriteId,
  13: optional string errorMessage,
  14: optional bool hasoldabort,
  15: optional i64 enqueueTime,
  16: optional i64 retryRetention,
  17: optional string poolname,
  18: optional i32 numberOfBuckets,
  19: optional string orderByClause,
}

struct GetLatestCommittedCompactionInfoResponse {
  1: required list<CompactionInfoStruct> compactions,
}

struct ShowCompactResponseElement {
  1: required string dbname,
  2: required string tablename,
  3: optional string partitionname,
  4: required CompactionType type,
  5: required string state,
  6: optional string workerid,
  7: optional i64 start,
  8: optional string runAs,
  9: optional i64 hightestTxnId,
  10: optional string metaInfo,
  11: optional i64 endTime,
  12: optional string hadoopJobId = "None",
  13: optional i64 id,
  14: optional string errorMessage,
  15: optional i64 enqueueTime,
  16: optional string workerVersion,
  17: optional string initiatorId,
  18: optional string initiatorVersion,
  19: optional i64 cleanerStart,
  20: optional string poolName,
  21: optional i64 nextTxnId,
  22: optional i64 txnId,
  23: optional i64 commitTime,
  24: optional i64 hightestWriteId,
}

struct ShowCompactResponse {
  1: required list<ShowCompactResponseElement> compacts,
}

// Table constraints. The gateway stores none: reads answer empty lists, writes that carry one are refused
// (gateway/thrift/constraint_methods.py). Primary and foreign keys have Hive 2.3's field ids (with Hive 3's
// catName after them); the other four kinds, Hive 3's and 4's (catName first), as their requests.
struct SQLPrimaryKey {
  1: string table_db,
  2: string table_name,
  3: string column_name,
  4: i32 key_seq,
  5: string pk_name,
  6: bool enable_cstr,
  7: bool validate_cstr,
  8: bool rely_cstr,
  9: optional string catName,
}

struct SQLForeignKey {
  1: string pktable_db,
  2: string pktable_name,
  3: string pkcolumn_name,
  4: string fktable_db,
  5: string fktable_name,
  6: string fkcolumn_name,
  7: i32 key_seq,
  8: i32 update_rule,
  9: i32 delete_rule,
  10: string fk_name,
  11: string pk_name,
  12: bool enable_cstr,
  13: bool validate_cstr,
  14: bool rely_cstr,
  15: optional string catName,
}

struct SQLUniqueConstraint {
  1: string catName,
  2: string table_db,
  3: string table_name,
  4: string column_name,
  5: i32 key_seq,
  6: string uk_name,
  7: bool enable_cstr,
  8: bool validate_cstr,
  9: bool rely_cstr,
}

struct SQLNotNullConstraint {
  1: string catName,
  2: string table_db,
  3: string table_name,
  4: string column_name,
  5: string nn_name,
  6: bool enable_cstr,
  7: bool validate_cstr,
  8: bool rely_cstr,
}

struct SQLDefaultConstraint {
  1: string catName,
  2: string table_db,
  3: string table_name,
  4: string column_name,
  5: string default_value,
  6: string dc_name,
  7: bool enable_cstr,
  8: bool validate_cstr,
  9: bool rely_cstr,
}

struct SQLCheckConstraint {
  1: string catName,
  2: string table_db,
  3: string table_name,
  4: string column_name,
  5: string check_expression,
  6: string dc_name,
  7: bool enable_cstr,
  8: bool validate_cstr,
  9: bool rely_cstr,
}

struct PrimaryKeysRequest {
  1: required string db_name,
  2: required string tbl_name,
  3: optional string catName,
  4: optional string validWriteIdList,
  5: optional i64 tableId = -1,
}

struct PrimaryKeysResponse {
  1: required list<SQLPrimaryKey> primaryKeys,
}

struct ForeignKeysRequest {
  1: string parent_db_name,
  2: string parent_tbl_name,
  3: string foreign_db_name,
  4: string foreign_tbl_name,
  5: optional string catName,
  6: optional string validWriteIdList,
  7: optional i64 tableId = -1,
}

struct ForeignKeysResponse {
  1: required list<SQLForeignKey> foreignKeys,
}

struct UniqueConstraintsRequest {
  1: required string catName,
  2: required string db_name,
  3: required string tbl_name,
  4: optional string validWriteIdList,
  5: optional i64 tableId = -1,
}

struct UniqueConstraintsResponse {
  1: required list<SQLUniqueConstraint> uniqueConstraints,
}

struct NotNullConstraintsRequest {
  1: required string catName,
  2: required string db_name,
  3: required string tbl_name,
  4: optional string validWriteIdList,
  5: optional i64 tableId = -1,
}

struct NotNullConstraintsResponse {
  1: required list<SQLNotNullConstraint> notNullConstraints,
}

struct DefaultConstraintsRequest {
  1: required string catName,
  2: required string db_name,
  3: required string tbl_name,
  4: optional string validWriteIdList,
  5: optional i64 tableId = -1,
}

struct DefaultConstraintsResponse {
  1: required list<SQLDefaultConstraint> defaultConstraints,
}

struct CheckConstraintsRequest {
  1: required string catName,
  2: required string db_name,
  3: required string tbl_name,
  4: optional string validWriteIdList,
  5: optional i64 tableId = -1,
}

struct CheckConstraintsResponse {
  1: required list<SQLCheckConstraint> checkConstraints,
}

struct AllTableConstraintsRequest {
  1: required string dbName,
  2: required string tblName,
  3: required string catName,
  4: optional string validWriteIdList,
  5: optional i64 tableId = -1,
}

struct SQLAllTableConstraints {
  1: optional list<SQLPrimaryKey> primaryKeys,
  2: optional list<SQLForeignKey> foreignKeys,
  3: optional list<SQLUniqueConstraint> uniqueConstraints,
  4: optional list<SQLNotNullConstraint> notNullConstraints,
  5: optional list<SQLDefaultConstraint> defaultConstraints,
  6: optional list<SQLCheckConstraint> checkConstraints,
}

struct AllTableConstraintsResponse {
  1: required SQLAllTableConstraints allTableConstraints,
}

struct DropConstraintRequest {
  1: required string dbname,
  2: required string tablename,
  3: required string constraintname,
  4: optional string catName,
}

struct AddPrimaryKeyRequest {
  1: required list<SQLPrimaryKey> primaryKeyCols,
}

struct AddForeignKeyRequest {
  1: required list<SQLForeignKey> foreignKeyCols,
}

// Hive 3's and 4's ALTER TABLE ... ADD CONSTRAINT of the other kinds.
struct AddUniqueConstraintRequest {
  1: required list<SQLUniqueConstraint> uniqueConstraintCols,
}

struct AddNotNullConstraintRequest {
  1: required list<SQLNotNullConstraint> notNullConstraintCols,
}

struct AddDefaultConstraintRequest {
  1: required list<SQLDefaultConstraint> defaultConstraintCols,
}

struct AddCheckConstraintRequest {
  1: required list<SQLCheckConstraint> checkConstraintCols,
}

// Hive 4's: HiveMetaStoreClient.getFields and getSchema send only these. Hive's server reads neither the
// snapshot nor the table id (the table's latest columns, as get_fields and get_schema answer).
struct GetFieldsRequest {
  1: optional string catName,
  2: required string dbName,
  3: required string tblName,
  4: optional EnvironmentContext envContext,
  5: optional string validWriteIdList,
  6: optional i64 id = -1,
}

struct GetFieldsResponse {
  1: required list<FieldSchema> fields,
}

struct GetSchemaRequest {
  1: optional string catName,
  2: required string dbName,
  3: required string tblName,
  4: optional EnvironmentContext envContext,
  5: optional string validWriteIdList,
  6: optional i64 id = -1,
}

struct GetSchemaResponse {
  1: required list<FieldSchema> fields,
}

service FacebookService {
  string getName(),
  string getVersion(),
  i32 getStatus(),
  string getStatusDetails(),
  map<string, i64> getCounters(),
  i64 getCounter(1: string key),
  void setOption(1: string key, 2: string value),
  string getOption(1: string key),
  map<string, string> getOptions(),
  string getCpuProfile(1: i32 profileDurationInSec),
  i64 aliveSince(),
  oneway void reinitialize(),
  oneway void shutdown(),
}

service ThriftHiveMetastore extends FacebookService {
  string getMetaConf(1: string key) throws (1: MetaException o1),
  void setMetaConf(1: string key, 2: string value) throws (1: MetaException o1),
  list<string> set_ugi(1: string user_name, 2: list<string> group_names) throws (1: MetaException o1),
  string get_config_value(1: string name, 2: string defaultValue) throws (1: ConfigValSecurityException o1),
  void flushCache(),
  Partition exchange_partition(1: map<string, string> partitionSpecs, 2: string source_db, 3: string source_table_name, 4: string dest_db, 5: string dest_table_name) throws (1: MetaException o1, 2: NoSuchObjectException o2, 3: InvalidObjectException o3, 4: InvalidInputException o4),
  list<Partition> exchange_partitions(1: map<string, string> partitionSpecs, 2: string source_db, 3: string source_table_name, 4: string dest_db, 5: string dest_table_name) throws (1: MetaException o1, 2: NoSuchObjectException o2, 3: InvalidObjectException o3, 4: InvalidInputException o4),
  bool partition_name_has_valid_characters(1: list<string> part_vals, 2: bool throw_exception) throws (1: MetaException o1),
  list<string> partition_name_to_vals(1: string part_name) throws (1: MetaException o1),
  map<string, string> partition_name_to_spec(1: string part_name) throws (1: MetaException o1),
  void markPartitionForEvent(1: string db_name, 2: string tbl_name, 3: map<string, string> part_vals, 4: i32 eventType) throws (1: MetaException o1, 2: NoSuchObjectException o2, 3: UnknownDBException o3, 4: UnknownTableException o4, 5: UnknownPartitionException o5, 6: InvalidPartitionException o6),
  bool isPartitionMarkedForEvent(1: string db_name, 2: string tbl_name, 3: map<string, string> part_vals, 4: i32 eventType) throws (1: MetaException o1, 2: NoSuchObjectException o2, 3: UnknownDBException o3, 4: UnknownTableException o4, 5: UnknownPartitionException o5, 6: InvalidPartitionException o6),
  Database get_database(1: string name) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  Database get_database_req(1: GetDatabaseRequest request) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  list<string> get_databases(1: string pattern) throws (1: MetaException o1),
  list<string> get_all_databases() throws (1: MetaException o1),
  void create_database(1: Database database) throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3),
  void alter_database(1: string dbname, 2: Database db) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  void create_database_req(1: CreateDatabaseRequest req) throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3),
  void alter_database_req(1: AlterDatabaseRequest req) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  void drop_database(1: string name, 2: bool deleteData, 3: bool cascade) throws (1: NoSuchObjectException o1, 2: InvalidOperationException o2, 3: MetaException o3),
  AsyncOperationResp drop_database_req(1: DropDatabaseRequest req) throws (1: NoSuchObjectException o1, 2: InvalidOperationException o2, 3: MetaException o3),
  Table get_table(1: string dbname, 2: string tbl_name) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  list<FieldSchema> get_fields(1: string db_name, 2: string table_name) throws (1: MetaException o1, 2: UnknownTableException o2, 3: UnknownDBException o3),
  list<FieldSchema> get_fields_with_environment_context(1: string db_name, 2: string table_name, 3: EnvironmentContext environment_context) throws (1: MetaException o1, 2: UnknownTableException o2, 3: UnknownDBException o3),
  list<FieldSchema> get_schema(1: string db_name, 2: string table_name) throws (1: MetaException o1, 2: UnknownTableException o2, 3: UnknownDBException o3),
  list<FieldSchema> get_schema_with_environment_context(1: string db_name, 2: string table_name, 3: EnvironmentContext environment_context) throws (1: MetaException o1, 2: UnknownTableException o2, 3: UnknownDBException o3),
  GetFieldsResponse get_fields_req(1: GetFieldsRequest req) throws (1: MetaException o1, 2: UnknownTableException o2, 3: UnknownDBException o3),
  GetSchemaResponse get_schema_req(1: GetSchemaRequest req) throws (1: MetaException o1, 2: UnknownTableException o2, 3: UnknownDBException o3),
  GetTableResult get_table_req(1: GetTableRequest req) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  list<Table> get_table_objects_by_name(1: string dbname, 2: list<string> tbl_names),
  GetTablesResult get_table_objects_by_name_req(1: GetTablesRequest req) throws (1: MetaException o1, 2: InvalidOperationException o2, 3: UnknownDBException o3),
  list<string> get_tables(1: string db_name, 2: string pattern) throws (1: MetaException o1),
  list<string> get_tables_by_type(1: string db_name, 2: string pattern, 3: string tableType) throws (1: MetaException o1),
  list<string> get_materialized_views_for_rewriting(1: string db_name) throws (1: MetaException o1),
  WMGetActiveResourcePlanResponse get_active_resource_plan(1: WMGetActiveResourcePlanRequest request) throws (1: MetaException o2),
  ScheduledQueryPollResponse scheduled_query_poll(1: ScheduledQueryPollRequest request) throws (1: MetaException o1),
  GetCatalogResponse get_catalog(1: GetCatalogRequest catName) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  GetCatalogsResponse get_catalogs() throws (1: MetaException o1),
  void create_catalog(1: CreateCatalogRequest catalog) throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3),
  void drop_catalog(1: DropCatalogRequest catName) throws (1: NoSuchObjectException o1, 2: InvalidOperationException o2, 3: MetaException o3),
  list<string> get_dataconnectors() throws (1: MetaException o1),
  DataConnector get_dataconnector_req(1: GetDataConnectorRequest request) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  void create_dataconnector(1: DataConnector connector) throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3),
  void create_dataconnector_req(1: CreateDataConnectorRequest connectorReq) throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3),
  void alter_dataconnector(1: string name, 2: DataConnector connector) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  void alter_dataconnector_req(1: AlterDataConnectorRequest alterReq) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  void drop_dataconnector_req(1: DropDataConnectorRequest dropDcReq) throws (1: NoSuchObjectException o1, 2: InvalidOperationException o2, 3: MetaException o3),
  ScheduledQuery get_scheduled_query(1: ScheduledQueryKey scheduleKey) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  void scheduled_query_maintenance(1: ScheduledQueryMaintenanceRequest request) throws (1: MetaException o1, 2: NoSuchObjectException o2, 3: AlreadyExistsException o3, 4: InvalidInputException o4),
  list<Table> get_all_materialized_view_objects_for_rewriting() throws (1: MetaException o1),
  list<string> get_table_names_by_filter(1: string dbname, 2: string filter, 3: i16 max_tables = -1) throws (1: MetaException o1, 2: InvalidOperationException o2, 3: UnknownDBException o3),
  list<string> get_all_tables(1: string db_name) throws (1: MetaException o1),
  list<TableMeta> get_table_meta(1: string db_patterns, 2: string tbl_patterns, 3: list<string> tbl_types) throws (1: MetaException o1),
  void create_table(1: Table tbl) throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3, 4: NoSuchObjectException o4),
  void create_table_with_environment_context(1: Table tbl, 2: EnvironmentContext environment_context) throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3, 4: NoSuchObjectException o4),
  void alter_table(1: string dbname, 2: string tbl_name, 3: Table new_tbl) throws (1: InvalidOperationException o1, 2: MetaException o2),
  void alter_table_with_environment_context(1: string dbname, 2: string tbl_name, 3: Table new_tbl, 4: EnvironmentContext environment_context) throws (1: InvalidOperationException o1, 2: MetaException o2),
  AlterTableResponse alter_table_req(1: AlterTableRequest req) throws (1: InvalidOperationException o1, 2: MetaException o2),
  void alter_table_with_cascade(1: string dbname, 2: string tbl_name, 3: Table new_tbl, 4: bool cascade) throws (1: InvalidOperationException o1, 2: MetaException o2),
  void truncate_table(1: string dbName, 2: string tableName, 3: list<string> partNames) throws (1: MetaException o1),
  TruncateTableResponse truncate_table_req(1: TruncateTableRequest req) throws (1: MetaException o1),
  void drop_table(1: string dbname, 2: string name, 3: bool deleteData) throws (1: NoSuchObjectException o1, 2: MetaException o3),
  void drop_table_with_environment_context(1: string dbname, 2: string name, 3: bool deleteData, 4: EnvironmentContext environment_context) throws (1: NoSuchObjectException o1, 2: MetaException o3),
  AsyncOperationResp drop_table_req(1: DropTableRequest req) throws (1: NoSuchObjectException o1, 2: MetaException o3),
  Partition add_partition(1: Partition new_part) throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3),
  Partition add_partition_with_environment_context(1: Partition new_part, 2: EnvironmentContext environment_context) throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3),
  i32 add_partitions(1: list<Partition> new_parts) throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3),
  AddPartitionsResult add_partitions_req(1: AddPartitionsRequest request) throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3),
  Partition append_partition(1: string db_name, 2: string tbl_name, 3: list<string> part_vals) throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3),
  Partition append_partition_with_environment_context(1: string db_name, 2: string tbl_name, 3: list<string> part_vals, 4: EnvironmentContext environment_context) throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3),
  Partition append_partition_req(1: AppendPartitionsRequest req) throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3),
  Partition append_partition_by_name(1: string db_name, 2: string tbl_name, 3: string part_name) throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3),
  Partition append_partition_by_name_with_environment_context(1: string db_name, 2: string tbl_name, 3: string part_name, 4: EnvironmentContext environment_context) throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3),
  Partition get_partition(1: string db_name, 2: string tbl_name, 3: list<string> part_vals) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  Partition get_partition_by_name(1: string db_name, 2: string tbl_name, 3: string part_name) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  Partition get_partition_with_auth(1: string db_name, 2: string tbl_name, 3: list<string> part_vals, 4: string user_name, 5: list<string> group_names) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  list<Partition> get_partitions(1: string db_name, 2: string tbl_name, 3: i16 max_parts = -1) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  list<Partition> get_partitions_with_auth(1: string db_name, 2: string tbl_name, 3: i16 max_parts = -1, 4: string user_name, 5: list<string> group_names) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  list<Partition> get_partitions_ps(1: string db_name, 2: string tbl_name, 3: list<string> part_vals, 4: i16 max_parts = -1) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  list<Partition> get_partitions_ps_with_auth(1: string db_name, 2: string tbl_name, 3: list<string> part_vals, 4: i16 max_parts = -1, 5: string user_name, 6: list<string> group_names) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  list<string> get_partition_names(1: string db_name, 2: string tbl_name, 3: i16 max_parts = -1) throws (1: MetaException o2),
  // Hive 4's form of get_partition_names, which HiveMetaStoreClient.listPartitionNames sends after 4.0 (HIVE-26537).
  list<string> fetch_partition_names_req(1: PartitionsRequest partitionReq) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  list<string> get_partition_names_ps(1: string db_name, 2: string tbl_name, 3: list<string> part_vals, 4: i16 max_parts = -1) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  PartitionValuesResponse get_partition_values(1: PartitionValuesRequest request) throws (1: MetaException o1, 2: NoSuchObjectException o2),

  // column statistics (gateway/thrift/stats_methods.py)
  bool update_table_column_statistics(1: ColumnStatistics stats_obj) throws (1: NoSuchObjectException o1, 2: InvalidObjectException o2, 3: MetaException o3, 4: InvalidInputException o4),
  bool update_partition_column_statistics(1: ColumnStatistics stats_obj) throws (1: NoSuchObjectException o1, 2: InvalidObjectException o2, 3: MetaException o3, 4: InvalidInputException o4),
  bool delete_column_statistics_req(1: DeleteColumnStatisticsRequest req) throws (1: NoSuchObjectException o1, 2: MetaException o2, 3: InvalidObjectException o3, 4: InvalidInputException o4),
  SetPartitionsStatsResponse update_table_column_statistics_req(1: SetPartitionsStatsRequest req) throws (1: NoSuchObjectException o1, 2: InvalidObjectException o2, 3: MetaException o3, 4: InvalidInputException o4),
  SetPartitionsStatsResponse update_partition_column_statistics_req(1: SetPartitionsStatsRequest req) throws (1: NoSuchObjectException o1, 2: InvalidObjectException o2, 3: MetaException o3, 4: InvalidInputException o4),
  ColumnStatistics get_table_column_statistics(1: string db_name, 2: string tbl_name, 3: string col_name) throws (1: NoSuchObjectException o1, 2: MetaException o2, 3: InvalidInputException o3, 4: InvalidObjectException o4),
  ColumnStatistics get_partition_column_statistics(1: string db_name, 2: string tbl_name, 3: string part_name, 4: string col_name) throws (1: NoSuchObjectException o1, 2: MetaException o2, 3: InvalidInputException o3, 4: InvalidObjectException o4),
  TableStatsResult get_table_statistics_req(1: TableStatsRequest request) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  PartitionsStatsResult get_partitions_statistics_req(1: PartitionsStatsRequest request) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  AggrStats get_aggr_stats_for(1: PartitionsStatsRequest request) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  bool set_aggr_stats_for(1: SetPartitionsStatsRequest request) throws (1: NoSuchObjectException o1, 2: InvalidObjectException o2, 3: MetaException o3, 4: InvalidInputException o4),
  bool delete_partition_column_statistics(1: string db_name, 2: string tbl_name, 3: string part_name, 4: string col_name) throws (1: NoSuchObjectException o1, 2: MetaException o2, 3: InvalidObjectException o3, 4: InvalidInputException o4),
  bool delete_table_column_statistics(1: string db_name, 2: string tbl_name, 3: string col_name) throws (1: NoSuchObjectException o1, 2: MetaException o2, 3: InvalidObjectException o3, 4: InvalidInputException o4),
  GetPartitionsByNamesResult get_partitions_by_names_req(1: GetPartitionsByNamesRequest req) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  list<Partition> get_partitions_by_names(1: string db_name, 2: string tbl_name, 3: list<string> names) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  GetPartitionResponse get_partition_req(1: GetPartitionRequest req) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  PartitionsResponse get_partitions_req(1: PartitionsRequest req) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  GetPartitionsPsWithAuthResponse get_partitions_ps_with_auth_req(1: GetPartitionsPsWithAuthRequest req) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  GetPartitionNamesPsResponse get_partition_names_ps_req(1: GetPartitionNamesPsRequest req) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  list<Partition> get_partitions_by_filter_req(1: GetPartitionsByFilterRequest req) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  list<Partition> get_partitions_by_filter(1: string db_name, 2: string tbl_name, 3: string filter, 4: i16 max_parts = -1) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  list<PartitionSpec> get_part_specs_by_filter(1: string db_name, 2: string tbl_name, 3: string filter, 4: i32 max_parts = -1) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  list<PartitionSpec> get_partitions_pspec(1: string db_name, 2: string tbl_name, 3: i32 max_parts = -1) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  i32 add_partitions_pspec(1: list<PartitionSpec> new_parts) throws (1: InvalidObjectException o1, 2: AlreadyExistsException o2, 3: MetaException o3),
  PartitionsByExprResult get_partitions_by_expr(1: PartitionsByExprRequest req) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  list<string> get_partition_names_req(1: PartitionsByExprRequest req) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  GetPartitionsResponse get_partitions_with_specs(1: GetPartitionsRequest request) throws (1: MetaException o1),
  i32 get_num_partitions_by_filter(1: string db_name, 2: string tbl_name, 3: string filter) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  void alter_partition(1: string db_name, 2: string tbl_name, 3: Partition new_part) throws (1: InvalidOperationException o1, 2: MetaException o2),
  void alter_partition_with_environment_context(1: string db_name, 2: string tbl_name, 3: Partition new_part, 4: EnvironmentContext environment_context) throws (1: InvalidOperationException o1, 2: MetaException o2),
  void alter_partitions(1: string db_name, 2: string tbl_name, 3: list<Partition> new_parts) throws (1: InvalidOperationException o1, 2: MetaException o2),
  void alter_partitions_with_environment_context(1: string db_name, 2: string tbl_name, 3: list<Partition> new_parts, 4: EnvironmentContext environment_context) throws (1: InvalidOperationException o1, 2: MetaException o2),
  AlterPartitionsResponse alter_partitions_req(1: AlterPartitionsRequest req) throws (1: InvalidOperationException o1, 2: MetaException o2),
  RenamePartitionResponse rename_partition_req(1: RenamePartitionRequest req) throws (1: InvalidOperationException o1, 2: MetaException o2),
  void rename_partition(1: string db_name, 2: string tbl_name, 3: list<string> part_vals, 4: Partition new_part) throws (1: InvalidOperationException o1, 2: MetaException o2),
  bool drop_partition(1: string db_name, 2: string tbl_name, 3: list<string> part_vals, 4: bool deleteData) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  bool drop_partition_by_name(1: string db_name, 2: string tbl_name, 3: string part_name, 4: bool deleteData) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  bool drop_partition_with_environment_context(1: string db_name, 2: string tbl_name, 3: list<string> part_vals, 4: bool deleteData, 5: EnvironmentContext environment_context) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  bool drop_partition_req(1: DropPartitionRequest req) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  bool drop_partition_by_name_with_environment_context(1: string db_name, 2: string tbl_name, 3: string part_name, 4: bool deleteData, 5: EnvironmentContext environment_context) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  DropPartitionsResult drop_partitions_req(1: DropPartitionsRequest req) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  Function get_function(1: string dbName, 2: string funcName) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  list<string> get_functions(1: string dbName, 2: string pattern) throws (1: MetaException o1),
  void create_function(1: Function func) throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3, 4: NoSuchObjectException o4),
  void drop_function(1: string dbName, 2: string funcName) throws (1: NoSuchObjectException o1, 2: MetaException o3),
  void alter_function(1: string dbName, 2: string funcName, 3: Function newFunc) throws (1: InvalidOperationException o1, 2: MetaException o2),

  // table constraints (gateway/thrift/constraint_methods.py: none are stored)
  PrimaryKeysResponse get_primary_keys(1: PrimaryKeysRequest request) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  ForeignKeysResponse get_foreign_keys(1: ForeignKeysRequest request) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  UniqueConstraintsResponse get_unique_constraints(1: UniqueConstraintsRequest request) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  NotNullConstraintsResponse get_not_null_constraints(1: NotNullConstraintsRequest request) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  DefaultConstraintsResponse get_default_constraints(1: DefaultConstraintsRequest request) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  CheckConstraintsResponse get_check_constraints(1: CheckConstraintsRequest request) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  AllTableConstraintsResponse get_all_table_constraints(1: AllTableConstraintsRequest request) throws (1: MetaException o1, 2: NoSuchObjectException o2),
  void create_table_req(1: CreateTableRequest request) throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3, 4: NoSuchObjectException o4),
  Table translate_table_dryrun(1: CreateTableRequest request) throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3, 4: NoSuchObjectException o4),
  void create_table_with_constraints(1: Table tbl, 2: list<SQLPrimaryKey> primaryKeys, 3: list<SQLForeignKey> foreignKeys, 4: list<SQLUniqueConstraint> uniqueConstraints, 5: list<SQLNotNullConstraint> notNullConstraints, 6: list<SQLDefaultConstraint> defaultConstraints, 7: list<SQLCheckConstraint> checkConstraints) throws (1: AlreadyExistsException o1, 2: InvalidObjectException o2, 3: MetaException o3, 4: NoSuchObjectException o4),
  void add_primary_key(1: AddPrimaryKeyRequest req) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  void add_foreign_key(1: AddForeignKeyRequest req) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  void add_unique_constraint(1: AddUniqueConstraintRequest req) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  void add_not_null_constraint(1: AddNotNullConstraintRequest req) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  void add_default_constraint(1: AddDefaultConstraintRequest req) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  void add_check_constraint(1: AddCheckConstraintRequest req) throws (1: NoSuchObjectException o1, 2: MetaException o2),
  void drop_constraint(1: DropConstraintRequest req) throws (1: NoSuchObjectException o1, 2: MetaException o3),
  GetAllFunctionsResponse get_all_functions() throws (1: MetaException o1),
  OpenTxnsResponse open_txns(1: OpenTxnRequest rqst),
  void commit_txn(1: CommitTxnRequest rqst) throws (1: NoSuchTxnException o1, 2: TxnAbortedException o2),
  void abort_txn(1: AbortTxnRequest rqst) throws (1: NoSuchTxnException o1),
  void abort_txns(1: AbortTxnsRequest rqst) throws (1: NoSuchTxnException o1),
  GetOpenTxnsResponse get_open_txns(),
  GetOpenTxnsResponse get_open_txns_req(1: GetOpenTxnsRequest getOpenTxnsRequest),
  GetOpenTxnsInfoResponse get_open_txns_info(),
  // Hive 4's: the latest txn that updated or deleted what this txn does and committed after it began.
  i64 get_latest_txnid_in_conflict(1: i64 txnId) throws (1: MetaException o1),
  void update_transaction_statistics(1: UpdateTransactionalStatsRequest req) throws (1: MetaException o1),
  void add_write_ids_to_min_history(1: i64 txnId, 2: map<string, i64> writeIds) throws (1: MetaException o2),
  GetValidWriteIdsResponse get_valid_write_ids(1: GetValidWriteIdsRequest rqst) throws (1: NoSuchTxnException o1, 2: MetaException o2),
  AllocateTableWriteIdsResponse allocate_table_write_ids(1: AllocateTableWriteIdsRequest rqst) throws (1: NoSuchTxnException o1, 2: TxnAbortedException o2, 3: MetaException o3),
  MaxAllocatedTableWriteIdResponse get_max_allocated_table_write_id(1: MaxAllocatedTableWriteIdRequest rqst) throws (1: MetaException o1),
  void seed_write_id(1: SeedTableWriteIdsRequest rqst) throws (1: MetaException o1),
  void seed_txn_id(1: SeedTxnIdRequest rqst) throws (1: MetaException o1),
  void heartbeat(1: HeartbeatRequest ids) throws (1: NoSuchLockException o1, 2: NoSuchTxnException o2, 3: TxnAbortedException o3),
  HeartbeatTxnRangeResponse heartbeat_txn_range(1: HeartbeatTxnRangeRequest txns),
  LockResponse lock(1: LockRequest rqst) throws (1: NoSuchTxnException o1, 2: TxnAbortedException o2),
  void add_dynamic_partitions(1: AddDynamicPartitions rqst) throws (1: NoSuchTxnException o1, 2: TxnAbortedException o2),
  LockResponse check_lock(1: CheckLockRequest rqst) throws (1: NoSuchTxnException o1, 2: TxnAbortedException o2, 3: NoSuchLockException o3),
  void unlock(1: UnlockRequest rqst) throws (1: NoSuchLockException o1, 2: TxnOpenException o2),
  ShowLocksResponse show_locks(1: ShowLocksRequest rqst),
  CompactionResponse compact2(1: CompactionRequest rqst),
  void compact(1: CompactionRequest rqst),
  ShowCompactResponse show_compact(1: ShowCompactRequest rqst),
  GetLatestCommittedCompactionInfoResponse get_latest_committed_compaction_info(1: GetLatestCommittedCompactionInfoRequest rqst),
  CurrentNotificationEventId get_current_notificationEventId(),
  NotificationEventResponse get_next_notification(1: NotificationEventRequest rqst),
  NotificationEventsCountResponse get_notification_events_count(1: NotificationEventsCountRequest rqst),
  FireEventResponse fire_listener_event(1: FireEventRequest rqst),
  WriteNotificationLogResponse add_write_notification_log(1: WriteNotificationLogRequest rqst),
  WriteNotificationLogBatchResponse add_write_notification_log_in_batch(1: WriteNotificationLogBatchRequest rqst),
  list<WriteEventInfo> get_all_write_event_info(1: GetAllWriteEventInfoRequest request) throws (1: MetaException o1),
  bool create_role(1: Role role) throws (1: MetaException o1),
  bool drop_role(1: string role_name) throws (1: MetaException o1),
  list<string> get_role_names() throws (1: MetaException o1),
  bool grant_role(1: string role_name, 2: string principal_name, 3: PrincipalType principal_type, 4: string grantor, 5: PrincipalType grantorType, 6: bool grant_option) throws (1: MetaException o1),
  bool revoke_role(1: string role_name, 2: string principal_name, 3: PrincipalType principal_type) throws (1: MetaException o1),
  list<Role> list_roles(1: string principal_name, 2: PrincipalType principal_type) throws (1: MetaException o1),
  GrantRevokeRoleResponse grant_revoke_role(1: GrantRevokeRoleRequest request) throws (1: MetaException o1),
  GetPrincipalsInRoleResponse get_principals_in_role(1: GetPrincipalsInRoleRequest request) throws (1: MetaException o1),
  GetRoleGrantsForPrincipalResponse get_role_grants_for_principal(1: GetRoleGrantsForPrincipalRequest request) throws (1: MetaException o1),
  PrincipalPrivilegeSet get_privilege_set(1: HiveObjectRef hiveObject, 2: string user_name, 3: list<string> group_names) throws (1: MetaException o1),
  list<HiveObjectPrivilege> list_privileges(1: string principal_name, 2: PrincipalType principal_type, 3: HiveObjectRef hiveObject) throws (1: MetaException o1),
  bool grant_privileges(1: PrivilegeBag privileges) throws (1: MetaException o1),
  bool revoke_privileges(1: PrivilegeBag privileges) throws (1: MetaException o1),
  GrantRevokePrivilegeResponse grant_revoke_privileges(1: GrantRevokePrivilegeRequest request) throws (1: MetaException o1),
}
