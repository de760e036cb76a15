"""Thrift's get_next_notification answers Hive's JSON messages (json-0.2; gateway/thrift/hive_events.py):
each message is read by Hive's own deserializer (MessageFactory.getInstance().getDeserializer(), Hive
2.3.10 from pyspark's jars, in one JVM for the module) into the objects the gateway's reads answer
(compared as Hive's Java Thrift classes see them: the read's answer goes through the same classes).
hive.metastore.event.message.factory metastore-gateway-json-1 keeps the gateway's own messages; an
event whose Hive form cannot fit in a read is answered with its gateway message, never failing a read.
Random partitioned writes (any text in parameters and partition values) run 5 examples here and
HIVE_EVENTS_SOAK_EXAMPLES (300) in the soak (`make test-bench`)."""

from __future__ import annotations

import itertools
import json
import os
from typing import Any, AsyncIterator, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from thriftpy2.utils import serialize

from gateway.app import Gateway
from gateway.config import ConfigError
from gateway.thrift.idl import hms
from tests.conftest import gateway_settings, running_gateway
from tests.thrift_client import ThriftClient, client_with_database, thrift_table
from thriftpy2.thrift import TException

API = "org.apache.hadoop.hive.metastore.api."


@pytest.fixture(scope="module")
def jvm() -> Iterator[Any]:
    """A JVM with pyspark's jars (Hive 2.3.10's metastore classes), without a SparkContext."""
    from pyspark.java_gateway import launch_gateway

    gateway = launch_gateway()
    try:
        yield gateway.jvm
    finally:
        gateway.shutdown()


@pytest.fixture
async def env(pg_dsn: str) -> AsyncIterator[tuple[Gateway, ThriftClient]]:
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as client:
        yield gw, client


def _java(jvm: Any, obj: Any) -> Any:
    """`obj` (a thriftpy2 struct: what a read answered) as Hive's Java class of the same name."""
    java_obj = getattr(jvm, API + type(obj).__name__)()
    jvm.org.apache.thrift.TDeserializer(jvm.org.apache.thrift.protocol.TBinaryProtocol.Factory()).deserialize(
        java_obj, serialize(obj))
    return java_obj


def _same(jvm: Any, got: Any, read: Any) -> None:
    expected = _java(jvm, read)
    assert got.equals(expected), f"{got.toString()}\n!=\n{expected.toString()}"


def _tobj(jvm: Any, text: str, cls: str) -> Any:
    """Hive's JSONMessageFactory.getTObj: a TJSONProtocol text as Hive's Java class `cls`."""
    return jvm.org.apache.hadoop.hive.metastore.messaging.json.JSONMessageFactory.getTObj(
        text, jvm.java.lang.Class.forName(API + cls))


def _list(jvm: Any, iterable: Any) -> list[Any]:
    """A Java Iterable (Hive's getPartitionObjs) as a list."""
    return list(jvm.com.google.common.collect.Lists.newArrayList(iterable))


def _partition(table: str, value: str, **params: str) -> Any:
    sd = thrift_table(table).sd
    sd.location = None
    return hms.Partition(values=[value], dbName="db", tableName=table, sd=sd, parameters=dict(params))


async def test_every_catalog_event_is_read_by_hives_deserializer_as_the_reads_answer(
        env: tuple[Gateway, ThriftClient], jvm: Any) -> None:
    """CREATE/ALTER/DROP_DATABASE, CREATE/ALTER/DROP_TABLE, ADD/ALTER/DROP_PARTITION, CREATE/DROP_FUNCTION:
    each message, read by Hive's deserializer, gives the objects get_database, get_table, get_partitions
    and get_function answered right after the write (a partition event's table: as it is when read).
    ALTER_DATABASE is Hive 3's (Hive 2.3's deserializer has no reader for it): its objects are read with
    Hive's getTObj. An alter_partitions of two partitions is one event of Hive 4's ALTER_PARTITIONS (Hive
    2.3's deserializer has none either: read with getTObj), and the ids are consecutive, as Hive 3's and 4's
    HiveMetaStoreClient.getNextNotification requires (it throws on an id seen twice, or a gap)."""
    _, client = env
    start = (await client("get_current_notificationEventId")).eventId
    db0 = await client("get_database", "db")
    await client("alter_database", "db", hms.Database(name="db", description="d", parameters={"k": "v"},
                                                      locationUri=db0.locationUri, ownerName=db0.ownerName))
    db1 = await client("get_database", "db")
    await client("create_table", thrift_table("t", keys=["ds"], a="1"))
    t0 = await client("get_table", "db", "t")
    t0_altered = thrift_table("t", keys=["ds"], a="2")
    t0_altered.sd.location = t0.sd.location
    await client("alter_table", "db", "t", t0_altered)
    t1 = await client("get_table", "db", "t")
    await client("add_partitions", [_partition("t", "1"), _partition("t", "2"), _partition("t", "3")])
    added = await client("get_partitions", "db", "t", -1)
    one = await client("get_partition", "db", "t", ["1"])
    one.parameters["x"] = "1"
    await client("alter_partition", "db", "t", one)
    altered_one = await client("get_partition", "db", "t", ["1"])
    two = [await client("get_partition", "db", "t", [v]) for v in ("2", "3")]
    for p in two:
        p.parameters["y"] = "2"
    await client("alter_partitions", "db", "t", two)
    altered_two = [await client("get_partition", "db", "t", [v]) for v in ("2", "3")]
    await client("drop_partition", "db", "t", ["3"], True)
    await client("create_function", hms.Function(
        functionName="upper", dbName="db", className="com.example.Upper", ownerName="alice", ownerType=1,
        createTime=0, functionType=1, resourceUris=[hms.ResourceUri(resourceType=1, uri="file:///u.jar")]))
    function = await client("get_function", "db", "upper")
    await client("drop_function", "db", "upper")
    await client("create_table", thrift_table("gone"))
    gone = await client("get_table", "db", "gone")
    await client("drop_table", "db", "gone", True)
    await client("create_database", hms.Database(name="d2", description="", parameters={}))
    d2 = await client("get_database", "d2")
    await client("drop_database", "d2", True, True)

    got = (await client("get_next_notification", hms.NotificationEventRequest(lastEvent=start, maxEvents=100))).events
    assert [e.eventType for e in got] == [
        "ALTER_DATABASE", "CREATE_TABLE", "ALTER_TABLE", "ADD_PARTITION", "ALTER_PARTITION", "ALTER_PARTITIONS",
        "DROP_PARTITION", "CREATE_FUNCTION", "DROP_FUNCTION", "CREATE_TABLE", "DROP_TABLE",
        "CREATE_DATABASE", "DROP_DATABASE"]
    assert {e.messageFormat for e in got} == {"json-0.2"}
    assert [e.eventId for e in got] == list(range(start + 1, start + 1 + len(got)))
    t_now = t1
    reader = jvm.org.apache.hadoop.hive.metastore.messaging.MessageFactory.getInstance().getDeserializer()
    messages = iter(got)

    alter_db = json.loads(next(messages).message)
    assert alter_db["db"] == "db" and alter_db["timestamp"] > 1_600_000_000  # seconds
    _same(jvm, _tobj(jvm, alter_db["dbObjBeforeJson"], "Database"), db0)
    _same(jvm, _tobj(jvm, alter_db["dbObjAfterJson"], "Database"), db1)

    e = next(messages)
    create = reader.getCreateTableMessage(e.message)
    assert (create.getDB(), create.getTable(), create.getTimestamp()) == ("db", "t", e.eventTime)
    _same(jvm, create.getTableObj(), t0)

    alter = reader.getAlterTableMessage(next(messages).message)
    _same(jvm, alter.getTableObjBefore(), t0)
    _same(jvm, alter.getTableObjAfter(), t1)

    add = reader.getAddPartitionMessage(next(messages).message)
    assert [dict(m) for m in add.getPartitions()] == [{"ds": "1"}, {"ds": "2"}, {"ds": "3"}]
    for java_p, read_p in zip(_list(jvm, add.getPartitionObjs()), added, strict=True):
        _same(jvm, java_p, read_p)
    _same(jvm, add.getTableObj(), t_now)

    alter_p = reader.getAlterPartitionMessage(next(messages).message)
    assert dict(alter_p.getKeyValues()) == {"ds": "1"}
    _same(jvm, alter_p.getPtnObjAfter(), altered_one)
    _same(jvm, alter_p.getPtnObjBefore(), altered_one)  # the event holds no before: the after (module docstring)
    _same(jvm, alter_p.getTableObj(), t_now)

    alter_ps = json.loads(next(messages).message)  # Hive 4's JSONAlterPartitionsMessage
    assert (alter_ps["db"], alter_ps["table"], alter_ps["isTruncateOp"]) == ("db", "t", "false")
    assert alter_ps["partitions"] == [{"ds": "2"}, {"ds": "3"}]
    for text, read_p in zip(alter_ps["partitionListJson"], altered_two, strict=True):
        _same(jvm, _tobj(jvm, text, "Partition"), read_p)
    _same(jvm, _tobj(jvm, alter_ps["tableObjJson"], "Table"), t_now)

    drop_p = reader.getDropPartitionMessage(next(messages).message)
    assert [dict(m) for m in drop_p.getPartitions()] == [{"ds": "3"}]
    _same(jvm, drop_p.getTableObj(), t_now)

    create_f = reader.getCreateFunctionMessage(next(messages).message)
    assert create_f.getDB() == "db"
    _same(jvm, create_f.getFunctionObj(), function)
    drop_f = reader.getDropFunctionMessage(next(messages).message)
    assert (drop_f.getDB(), drop_f.getFunctionName()) == ("db", "upper")

    _same(jvm, reader.getCreateTableMessage(next(messages).message).getTableObj(), gone)
    drop_t = reader.getDropTableMessage(next(messages).message)
    assert (drop_t.getDB(), drop_t.getTable()) == ("db", "gone")
    _same(jvm, _tobj(jvm, json.loads(got[10].message)["tableObjJson"], "Table"), gone)  # Hive 3's field

    for e, kind in zip(got[11:], ("Create", "Drop"), strict=True):
        message = getattr(reader, f"get{kind}DatabaseMessage")(e.message)
        assert message.getDB() == "d2"
        _same(jvm, _tobj(jvm, json.loads(e.message)["dbJson"], "Database"), d2)  # Hive 3's field


async def test_a_partition_event_of_a_dropped_table_is_read_without_its_table(
        env: tuple[Gateway, ThriftClient], jvm: Any) -> None:
    """The table of a partition event is read when the event is answered: once dropped, the message has
    no tableObjJson, and its key-value maps come from the partition names."""
    _, client = env
    start = (await client("get_current_notificationEventId")).eventId
    await client("create_table", thrift_table("t", keys=["ds", "hr"]))
    sd = thrift_table("t").sd
    sd.location = None
    await client("add_partitions", [hms.Partition(values=["a/b", "7"], dbName="db", tableName="t", sd=sd,
                                                  parameters={})])
    added = await client("get_partitions", "db", "t", -1)
    await client("drop_partition", "db", "t", ["a/b", "7"], True)
    await client("drop_table", "db", "t", True)
    got = (await client("get_next_notification", hms.NotificationEventRequest(lastEvent=start, maxEvents=100))).events
    reader = jvm.org.apache.hadoop.hive.metastore.messaging.MessageFactory.getInstance().getDeserializer()
    add = reader.getAddPartitionMessage(got[1].message)
    assert [dict(m) for m in add.getPartitions()] == [{"ds": "a/b", "hr": "7"}]
    _same(jvm, list(jvm.com.google.common.collect.Lists.newArrayList(add.getPartitionObjs()))[0], added[0])
    assert json.loads(got[1].message)["tableObjJson"] is None
    drop = reader.getDropPartitionMessage(got[2].message)
    assert [dict(m) for m in drop.getPartitions()] == [{"ds": "a/b", "hr": "7"}]


async def test_the_setting_keeps_the_gateways_own_messages(pg_dsn: str) -> None:
    """hive.metastore.event.message.factory metastore-gateway-json-1: today's messages, as gRPC answers."""
    async with running_gateway(pg_dsn, **{"hive.metastore.event.message.factory": "metastore-gateway-json-1"}) as gw, \
            client_with_database(gw.thrift_port) as client:
        got = (await client("get_next_notification", hms.NotificationEventRequest(lastEvent=0, maxEvents=10))).events
        assert {e.messageFormat for e in got} == {"metastore-gateway-json-1"}
        assert (got[-1].eventType, json.loads(got[-1].message)["database"]["name"]) == ("CREATE_DATABASE", "db")


def test_an_unknown_message_factory_is_refused_at_start() -> None:
    with pytest.raises(ConfigError, match="hive.metastore.event.message.factory.*GzipJSONMessageEncoder"):
        gateway_settings("postgresql://x/y", **{
            "hive.metastore.event.message.factory":
                "org.apache.hadoop.hive.metastore.messaging.json.gzip.GzipJSONMessageEncoder"})
    for name in ("JSONMessageFactory", "JSONMessageEncoder"):
        settings = gateway_settings("postgresql://x/y", **{
            "hive.metastore.event.message.factory": f"org.apache.hadoop.hive.metastore.messaging.json.{name}"})
        assert settings.event_message_factory.endswith(name)


async def test_txn_events_are_hive_3s_messages(env: tuple[Gateway, ThriftClient]) -> None:
    """OPEN_TXN, ALLOC_WRITE_ID_EVENT, COMMIT_TXN, ABORT_TXN with Hive 3's fields (JSONOpenTxnMessage,
    JSONAllocWriteIdMessage, JSONCommitTxnMessage, JSONAbortTxnMessage): Hive 2.3 has no such messages."""
    _, client = env
    await client("create_table", thrift_table("acid", transactional="true"))
    start = (await client("get_current_notificationEventId")).eventId
    txns = (await client("open_txns", hms.OpenTxnRequest(num_txns=2, user="u", hostname="h"))).txn_ids
    await client("allocate_table_write_ids", hms.AllocateTableWriteIdsRequest(
        txnIds=[txns[0]], dbName="db", tableName="acid"))
    await client("commit_txn", hms.CommitTxnRequest(txnid=txns[0]))
    await client("abort_txn", hms.AbortTxnRequest(txnid=txns[1]))
    got = (await client("get_next_notification", hms.NotificationEventRequest(lastEvent=start, maxEvents=10))).events
    assert [(e.eventType, e.messageFormat) for e in got] == [
        ("OPEN_TXN", "json-0.2"), ("ALLOC_WRITE_ID_EVENT", "json-0.2"), ("COMMIT_TXN", "json-0.2"),
        ("ABORT_TXN", "json-0.2")]
    opened, allocated, committed, aborted = (json.loads(e.message) for e in got)
    seconds = got[0].eventTime
    assert opened == {"txnIds": None, "timestamp": seconds, "fromTxnId": txns[0], "toTxnId": txns[1],
                      "server": "", "servicePrincipal": ""}
    assert allocated == {"server": "", "servicePrincipal": "", "dbName": "db", "tableName": "acid",
                         "txnIdList": [txns[0]], "writeIdList": [1], "timestamp": got[1].eventTime}
    assert committed == {"txnid": txns[0], "timestamp": got[2].eventTime, "server": "", "servicePrincipal": "",
                         "writeIds": None, "databases": None, "tables": None, "partitions": None, "tableObjs": None,
                         "partitionObjs": None, "files": None}
    assert aborted == {"txnid": txns[1], "timestamp": got[3].eventTime, "server": "", "servicePrincipal": ""}


async def test_an_event_whose_hive_message_cannot_fit_a_read_is_answered_in_the_gateways(
        pg_dsn: str, jvm: Any) -> None:
    """Hive's form is larger than the gateway's (TJSON objects, the table of a partition event): a read
    stops before an event whose Hive message no longer fits (the next read answers it), and one that
    cannot fit even alone is answered with its gateway message, which always fits; no read fails."""
    async with running_gateway(pg_dsn, **{"hive.metastore.server.max.message.size": "8192"}) as gw, \
            client_with_database(gw.thrift_port) as client:
        await client("create_table", thrift_table("t", keys=["ds"]))
        start = (await client("get_current_notificationEventId")).eventId
        for value, params in (("s1", {}), ("s2", {}), ("big", {"big": "v" * 4000}), ("after", {})):
            await client("add_partitions", [_partition("t", value, **params)])
        reads: list[list[Any]] = []
        last = start
        while events := (await client("get_next_notification", hms.NotificationEventRequest(
                lastEvent=last, maxEvents=100))).events:
            reads.append(events)
            last = events[-1].eventId
        got = [e for read in reads for e in read]
        assert [e.messageFormat for e in got] == ["json-0.2", "json-0.2", "metastore-gateway-json-1", "json-0.2"]
        assert len(reads[0]) == 1  # the store's budget took two; their Hive forms do not fit together
        assert json.loads(got[2].message)["partitions"][0]["parameters"]["big"] == "v" * 4000
        reader = jvm.org.apache.hadoop.hive.metastore.messaging.MessageFactory.getInstance().getDeserializer()
        assert [[dict(m) for m in reader.getAddPartitionMessage(e.message).getPartitions()]
                for e in (got[0], got[1], got[3])] == [[{"ds": "s1"}], [{"ds": "s2"}], [{"ds": "after"}]]


def test_the_tjson_encoder_writes_what_javas_tjsonprotocol_writes(jvm: Any) -> None:
    """gateway/thrift/tjson.py against libthrift's TSerializer(TJSONProtocol) on the same Table, byte for
    byte: escapes, non-ASCII text, bools, empty containers, a map keyed by lists (skewed locations, which
    Java writes as an array inside an object, not JSON, and its TJSONProtocol reads back). Fields Hive
    2.3's class does not have (ownerType, writeId, id) are left unset on both sides."""
    from gateway.thrift.tjson import tjson

    table = thrift_table("t", keys=["ds"], a="1", b='q"\\é\n\t/x\x01')
    table.createTime, table.lastAccessTime, table.retention, table.temporary = 5, 0, 0, False
    table.ownerType = table.writeId = table.id = None
    table.sd.skewedInfo = hms.SkewedInfo(skewedColNames=["id"], skewedColValues=[["1"]],
                                         skewedColValueLocationMaps={("1",): "loc"})
    java = jvm.org.apache.thrift.TSerializer(jvm.org.apache.thrift.protocol.TJSONProtocol.Factory()).toString(
        _java(jvm, table))
    assert tjson(table) == java


# Text as Hive clients send it: any character but surrogates and NUL (which PostgreSQL's text refuses).
TEXT = st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), max_size=12)
VALUES = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=6)
_names = itertools.count()


@st.composite
def writes(draw: st.DrawFn) -> tuple[list[str], dict[str, str], list[list[str]], dict[str, str]]:
    """A table's partition keys and parameters, the values of partitions to add, parameters to alter them with."""
    keys = draw(st.lists(st.sampled_from(["ds", "hr", "region"]), min_size=1, max_size=3, unique=True))
    params = draw(st.dictionaries(TEXT.filter(bool), TEXT, max_size=3))
    values = draw(st.lists(st.lists(VALUES, min_size=len(keys), max_size=len(keys)), min_size=1, max_size=4,
                           unique_by=tuple))
    return keys, params, values, draw(st.dictionaries(TEXT.filter(bool), TEXT, max_size=2))


async def _check_random_writes(client: ThriftClient, jvm: Any,
                               drawn: tuple[list[str], dict[str, str], list[list[str]], dict[str, str]]) -> None:
    keys, params, values, altered_params = drawn
    name = f"r{next(_names)}"
    start = (await client("get_current_notificationEventId")).eventId
    try:
        await client("create_table", thrift_table(name, keys=keys, **params))
        sd = thrift_table(name).sd
        sd.location = None
        await client("add_partitions", [hms.Partition(values=v, dbName="db", tableName=name, sd=sd, parameters={})
                                        for v in values])
    except TException:
        return  # a write the gateway refuses (a value Hive's rules refuse) logs nothing to check
    table = await client("get_table", "db", name)
    parts = await client("get_partitions", "db", name, -1)
    for p in parts:
        p.parameters.update(altered_params)
    await client("alter_partitions", "db", name, parts)
    parts = await client("get_partitions", "db", name, -1)
    got = (await client("get_next_notification", hms.NotificationEventRequest(lastEvent=start, maxEvents=100))).events
    reader = jvm.org.apache.hadoop.hive.metastore.messaging.MessageFactory.getInstance().getDeserializer()
    assert [e.eventType for e in got] == ["CREATE_TABLE", "ADD_PARTITION",
                                          "ALTER_PARTITION" if len(parts) == 1 else "ALTER_PARTITIONS"]
    assert [e.eventId for e in got] == [start + 1, start + 2, start + 3]
    created = reader.getCreateTableMessage(got[0].message).getTableObj()
    assert dict(created.getParameters()) == table.parameters
    added = reader.getAddPartitionMessage(got[1].message)
    assert {tuple(dict(m).items()) for m in added.getPartitions()} == {
        tuple(zip(keys, p.values, strict=True)) for p in parts}
    _same(jvm, added.getTableObj(), table)
    by_values = {tuple(p.values): p for p in parts}
    if len(parts) == 1:
        afters = [reader.getAlterPartitionMessage(got[2].message).getPtnObjAfter()]
    else:
        afters = [_tobj(jvm, text, "Partition") for text in json.loads(got[2].message)["partitionListJson"]]
    assert len(afters) == len(parts)
    for after in afters:
        _same(jvm, after, by_values[tuple(after.getValues())])


@settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(drawn=writes())
async def test_random_partitioned_writes_are_read_by_hives_deserializer_as_the_reads_answer(
        env: tuple[Gateway, ThriftClient], jvm: Any,
        drawn: tuple[list[str], dict[str, str], list[list[str]], dict[str, str]]) -> None:
    """Tables, partitions and their alters with any text in parameters and partition values (non-ASCII,
    quotes, backslashes, slashes, control characters in parameters): Hive's deserializer reads each
    message into what the reads answer (the key-value maps in the table's key order)."""
    await _check_random_writes(env[1], jvm, drawn)


@pytest.mark.soak
@settings(max_examples=int(os.environ.get("HIVE_EVENTS_SOAK_EXAMPLES", "300")), deadline=None,
          suppress_health_check=list(HealthCheck))
@given(drawn=writes())
async def test_random_partitioned_writes_are_read_by_hives_deserializer_soak(
        env: tuple[Gateway, ThriftClient], jvm: Any,
        drawn: tuple[list[str], dict[str, str], list[list[str]], dict[str, str]]) -> None:
    await _check_random_writes(env[1], jvm, drawn)
