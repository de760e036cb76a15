"""The transaction read side over Hive's Thrift API, against what Hive 3 and 4 metastores answer:
the calls Trino, Hive and Spark's ACID readers build their snapshot from (get_open_txns,
get_open_txns_info, get_valid_write_ids).

Every expectation is derived by hand from Hive's source, not from the gateway:
- server: Hive 3 `standalone-metastore/.../txn/TxnHandler.java` (getOpenTxns, getOpenTxnsInfo,
  getValidWriteIds, getValidWriteIdsForTable, allocateTableWriteIds); Hive 4
  `metastore-server/.../txn/functions/GetValidWriteIdsFunction.java`,
  `GetValidWriteIdsForTableFunction.java`, `txn/queries/GetOpenTxnsListHandler.java`,
  `txn/entities/OpenTxnList.java`;
- client: `metastore-common/.../txn/TxnCommonUtils.java` (createValidReadTxnList,
  createValidReaderWriteIdList), storage-api `ValidReadTxnList` / `ValidReaderWriteIdList`
  (writeToString), which Trino's `TxnUtils` copies.
The strings below are what those clients write from the gateway's answers (`hive_*` helpers follow
Hive's rules), so a Trino or Hive reader gets byte for byte the snapshot a Hive metastore gives.
"""

from __future__ import annotations

from typing import Any, AsyncIterator

import asyncpg
import pytest

from gateway.app import Gateway
from gateway.thrift.idl import hms
from tests.conftest import gateway_settings
from tests.thrift_client import ThriftClient, thrift_table

LONG_MAX = 9223372036854775807
OPEN, ABORTED = 3, 2  # Hive's TxnState
READ_ONLY, COMPACTION = 2, 3  # Hive's TxnType


def _bits(flags: bytes) -> int:
    return int.from_bytes(flags, "little")  # java.util.BitSet.valueOf(byte[]): bit i in byte i // 8


def hive_txn_list(response: Any, current_txn: int = 0) -> str:
    """TxnCommonUtils.createValidReadTxnList(response, currentTxn).writeToString() (Trino: TxnUtils),
    for a current txn that is in the open list or 0."""
    hwm = min(current_txn, response.txn_high_water_mark) if current_txn > 0 else response.txn_high_water_mark
    bits = _bits(response.abortedBits)
    listed = [(t, bool(bits >> i & 1)) for i, t in enumerate(response.open_txns)
              if current_txn <= 0 or t < current_txn]
    min_open = next((t for t, aborted in listed if not aborted), LONG_MAX)
    return (f"{hwm}:{min_open if listed else LONG_MAX}:{','.join(str(t) for t, a in listed if not a)}:"
            f"{','.join(str(t) for t, a in listed if a)}")


def hive_write_id_list(ids: Any) -> str:
    """TxnCommonUtils.createValidReaderWriteIdList(ids).writeToString() (Trino: createValidWriteIdList)."""
    bits = _bits(ids.abortedBits)
    flagged = [(w, bool(bits >> i & 1)) for i, w in enumerate(ids.invalidWriteIds)]
    min_open = ids.minOpenWriteId if flagged and ids.minOpenWriteId is not None else LONG_MAX
    return (f"{ids.fullTableName}:{ids.writeIdHighWaterMark}:{min_open}:"
            f"{','.join(str(w) for w, a in flagged if not a)}:{','.join(str(w) for w, a in flagged if a)}")


class Env:
    def __init__(self, client: ThriftClient, dsn: str, gw: Gateway) -> None:
        self.call, self.dsn, self.gw = client, dsn, gw

    async def open(self, n: int) -> list[int]:
        return list((await self.call("open_txns", hms.OpenTxnRequest(num_txns=n, user="u", hostname="h"))).txn_ids)

    async def allocate(self, table: str, *txns: int) -> list[tuple[int, int]]:
        got = await self.call("allocate_table_write_ids", hms.AllocateTableWriteIdsRequest(
            dbName="db", tableName=table, txnIds=list(txns)))
        return [(x.txnId, x.writeId) for x in got.txnToWriteIds]

    async def commit(self, *txns: int) -> None:
        for txn in txns:
            await self.call("commit_txn", hms.CommitTxnRequest(txnid=txn))

    async def abort(self, *txns: int) -> None:
        for txn in txns:
            await self.call("abort_txn", hms.AbortTxnRequest(txnid=txn))

    async def write_ids(self, names: list[str], txn_list: str | None = None, **kw: Any) -> list[str]:
        got = await self.call("get_valid_write_ids", hms.GetValidWriteIdsRequest(
            fullTableNames=names, validTxnList=txn_list, **kw))
        return [hive_write_id_list(t) for t in got.tblValidWriteIds]


@pytest.fixture
async def env(pg_dsn: str) -> AsyncIterator[Env]:
    gw = Gateway(gateway_settings(pg_dsn))
    await gw.start()
    client = ThriftClient(gw.thrift_port)
    try:
        await client("create_database", hms.Database(name="db", parameters={}))
        for name in ("t", "u"):
            await client("create_table", thrift_table(name, transactional="true"))
        yield Env(client, pg_dsn, gw)
    finally:
        client.close()
        await gw.stop()


async def test_hive_reference_scenario_s_reads_as_hive_computes_it(env: Env) -> None:
    """hive-reference §1.6/§2.4's scenario S: txns 1..9; 1, 2, 4, 6, 9 committed, 5 aborted, 3, 7, 8
    open; db.t's write ids 1..7 allocated to txns 1, 3, 4, 5, 6, 7, 8 in that order."""
    t = dict(enumerate(await env.open(9), start=1))
    for n in (1, 3, 4, 5, 6, 7, 8):
        await env.allocate("t", t[n])
    await env.commit(t[1], t[2], t[4], t[6], t[9])
    await env.abort(t[5])

    # getOpenTxns: hwm NEXT_TXN_ID - 1 (Hive 4: MAX(TXN_ID)), every open and aborted txn up to it in
    # id order, bit i set for an aborted one, min_open_txn the smallest open one.
    state = await env.call("get_open_txns")
    assert (state.txn_high_water_mark, state.open_txns, state.min_open_txn) == (t[9], [t[3], t[5], t[7], t[8]], t[3])
    assert state.abortedBits == bytes([0b10])
    assert hive_txn_list(state) == f"{t[9]}:{t[3]}:{t[3]},{t[7]},{t[8]}:{t[5]}"
    assert hive_txn_list(state, t[7]) == f"{t[7]}:{t[3]}:{t[3]}:{t[5]}"
    assert hive_txn_list(state, t[3]) == f"{t[3]}:{LONG_MAX}::"
    # getOpenTxnsInfo: the same txns with their state, user and host (Hive's TxnInfo leaves agentInfo
    # at its IDL default and heartbeatCount unset).
    info = await env.call("get_open_txns_info")
    assert info.txn_high_water_mark == t[9]
    assert [(x.id, x.state, x.user, x.hostname, x.agentInfo) for x in info.open_txns] == [
        (t[3], OPEN, "u", "h", "Unknown"), (t[5], ABORTED, "u", "h", "Unknown"),
        (t[7], OPEN, "u", "h", "Unknown"), (t[8], OPEN, "u", "h", "Unknown")]
    assert all(x.startedTime > 0 and x.lastHeartbeatTime >= x.startedTime for x in info.open_txns)

    # getValidWriteIds per snapshot (§2.4); db.u has no write id: hwm 0, nothing invalid. The answer
    # keeps the request's order, a table named twice included.
    outside = hive_txn_list(state)
    assert await env.write_ids(["db.u", "db.t", "db.u"], outside) == [
        f"db.u:0:{LONG_MAX}::", "db.t:7:2:2,6,7:4", f"db.u:0:{LONG_MAX}::"]
    assert await env.write_ids(["db.t"], hive_txn_list(state, t[7])) == ["db.t:6:2:2:4"]  # its own 6 valid
    assert await env.write_ids(["db.t"], hive_txn_list(state, t[3])) == [f"db.t:2:{LONG_MAX}::"]
    assert await env.write_ids(["db.t"]) == ["db.t:7:2:2,6,7:4"]  # no validTxnList: the current snapshot
    ids = (await env.call("get_valid_write_ids", hms.GetValidWriteIdsRequest(
        fullTableNames=["db.t"], validTxnList=outside))).tblValidWriteIds[0]
    assert (ids.invalidWriteIds, ids.minOpenWriteId, ids.abortedBits) == ([2, 4, 6, 7], 2, bytes([0b10]))


async def test_write_ids_allocated_out_of_txn_order_read_as_hive_18864_fixed_it(env: Env) -> None:
    """A reader's txn allocates its write id after a younger txn did (HIVE-18864): inside the reader
    the write id hwm comes from rows of txns up to its own, and the younger txn's smaller write id is
    an open exception. Several txns in one allocate_table_write_ids get ids in txn order; an aborted
    txn's write id is an aborted exception, a txn without write ids shows only in the txn list."""
    reader, younger = await env.open(2)
    assert await env.allocate("u", younger) == [(younger, 1)]
    assert await env.allocate("u", reader) == [(reader, 2)]
    state = await env.call("get_open_txns")
    assert await env.write_ids(["db.u"], hive_txn_list(state, reader)) == ["db.u:2:1:1:"]
    assert await env.write_ids(["db.u"], hive_txn_list(state)) == ["db.u:2:1:1,2:"]

    a, b, c, idle = await env.open(4)
    assert await env.allocate("u", c, a, b) == [(a, 3), (b, 4), (c, 5)]
    await env.commit(b)
    await env.abort(c, idle)
    state = await env.call("get_open_txns")
    assert state.open_txns == [reader, younger, a, c, idle] and _bits(state.abortedBits) == 0b11000
    assert await env.write_ids(["db.u"], hive_txn_list(state)) == ["db.u:5:1:1,2,3:5"]


async def test_a_table_no_snapshot_has_answers_no_write_ids_as_in_hive(env: Env) -> None:
    """Hive's getValidWriteIdsForTable reads TXN_TO_WRITE_ID and NEXT_WRITE_ID by name and finds no
    row for a table (or database) that does not exist, or no longer (its drop deleted them):
    writeIdHighWaterMark 0, nothing invalid, and the other tables of the call are answered."""
    (txn,) = await env.open(1)
    await env.allocate("t", txn)
    assert await env.write_ids(["db.t", "db.gone", "nodb.x", "db.u"]) == [
        "db.t:1:1:1:", f"db.gone:0:{LONG_MAX}::", f"nodb.x:0:{LONG_MAX}::", f"db.u:0:{LONG_MAX}::"]
    await env.call("drop_table", "db", "u", True)
    assert await env.write_ids(["db.u"]) == [f"db.u:0:{LONG_MAX}::"]


async def test_txn_lists_are_read_as_hive_reads_them(env: Env) -> None:
    """Hive's ValidReadTxnList.readFromString sorts the ids of each list (their order means nothing)
    and keeps an id of 0 or below as an exception no txn matches: such lists are answered as the list
    Hive writes for the same snapshot. The gateway refused them (MetaException: "not in ascending
    order", "must lie within 1..hwm")."""
    a, b, c = await env.open(3)
    for txn in (a, b, c):
        await env.allocate("t", txn)
    await env.abort(b)
    state = await env.call("get_open_txns")
    assert hive_txn_list(state) == f"{c}:{a}:{a},{c}:{b}"
    expected = await env.write_ids(["db.t"], hive_txn_list(state))
    assert expected == ["db.t:3:1:1,3:2"]
    for text in (f"{c}:{a}:{c},{a}:{b}", f"{c}:{a}:{a},{c},0:{b}", f"{c}:{a}:{a},{c}:{b},0", f"{c}:{a}:{c},-1,{a}:{b}"):
        assert await env.write_ids(["db.t"], text) == expected, text


async def test_no_table_names_answer_no_write_ids_as_in_hive(env: Env) -> None:
    """Hive's getValidWriteIds (3.1 TxnHandler, 4 GetValidWriteIdsFunction) reads the snapshot, then one
    TableValidWriteIds per name in fullTableNames: none for an empty list. A txn list it cannot read is
    refused all the same (Hive: NumberFormatException, an internal error; here MetaException), and so is
    a writeId without the table it is of (Hive 4 reads fullTableNames.get(0): an internal error)."""
    (txn,) = await env.open(1)
    await env.allocate("t", txn)
    state = await env.call("get_open_txns")
    assert await env.write_ids([]) == []
    assert await env.write_ids([], hive_txn_list(state)) == []
    with pytest.raises(hms.MetaException, match="not a long"):
        await env.write_ids([], "abc:1::")
    with pytest.raises(hms.MetaException, match="writeId 1 needs the table it is of"):
        await env.write_ids([], writeId=1)


async def test_a_name_in_other_case_is_echoed_as_sent_with_the_tables_write_ids(env: Env) -> None:
    """Hive's getValidWriteIds (3.1 TxnHandler.getValidWriteIdsForTable, 4 GetValidWriteIdsForTableFunction;
    HMSHandler passes the request on as it came) answers each name as sent in fullTableName and looks its
    TXN_TO_WRITE_ID and NEXT_WRITE_ID rows up by it as given, while allocateTableWriteIds stores names
    lower-cased: for "DB.T" it finds no rows and answers high-water mark 0, nothing invalid. The name is
    echoed as sent here too (a client looks its answer up by the name it asked by). DELIBERATE: the write
    ids are the table's, found by its name in lower case as every call finds names; Hive's answer would
    have a reader skip every committed write of the table. Hive's, Trino's and Impala's clients send the
    names in lower case, where both answer alike."""
    a, b = await env.open(2)
    await env.allocate("t", a, b)
    await env.commit(a)
    assert await env.write_ids(["DB.T", "db.t", "Db.U", "db.T"]) == [
        "DB.T:2:2:2:", "db.t:2:2:2:", f"Db.U:0:{LONG_MAX}::", "db.T:2:2:2:"]


async def test_a_write_id_instead_of_a_txn_list_reads_as_its_txn_does(env: Env) -> None:
    """Hive 4's GetValidWriteIdsFunction: a request with writeId and no validTxnList (what Hive 4's
    TRUNCATE of a transactional table sends before truncate_table_req, HiveMetaStoreClient
    getValidWriteIds(fullTableName, writeId)) is answered in the snapshot of the txn that holds that
    write id of the first table: createValidReadTxnList(getOpenTxns(), thatTxn). A write id no txn
    holds is a MetaException ("invalid write id")."""
    t = dict(enumerate(await env.open(9), start=1))
    for n in (1, 3, 4, 5, 6, 7, 8):
        await env.allocate("t", t[n])
    await env.commit(t[1], t[2], t[4], t[6], t[9])
    await env.abort(t[5])
    # Write id 6 is txn 7's: its snapshot is 7:3:3:5, as in the scenario S test.
    assert await env.write_ids(["db.t", "db.u"], writeId=6) == ["db.t:6:2:2:4", f"db.u:0:{LONG_MAX}::"]
    assert await env.write_ids(["db.t"], writeId=3) == ["db.t:3:2:2:"]  # txn 4's: 3 and 2 open
    state = await env.call("get_open_txns")
    assert await env.write_ids(["db.t"], hive_txn_list(state), writeId=6) == ["db.t:7:2:2,6,7:4"]  # the list wins
    with pytest.raises(hms.MetaException, match="invalid write id 99 for table db.t"):
        await env.write_ids(["db.t"], writeId=99)


async def test_hive4_clients_take_their_snapshot_with_get_open_txns_req(env: Env) -> None:
    """Hive 4's HiveMetaStoreClient.getValidTxns and getOpenTxns call get_open_txns_req, never
    get_open_txns, with excludeTxnTypes [READ_ONLY] (TransactionHandler.get_open_txns_req ->
    TxnHandler.getOpenTxns(excludeTxnTypes), OpenTxnList.toOpenTxnsResponse): the answer of
    get_open_txns without the txns of the types named (this gateway opens no READ_ONLY txn)."""
    done, aborted, live, compacting = await env.open(4)
    await env.commit(done)
    await env.abort(aborted)
    conn = await asyncpg.connect(env.dsn)
    try:  # the compactor's Worker opens its txn as Hive 4 does, TxnType COMPACTION
        await conn.execute("UPDATE txns SET txn_type = $1 WHERE txn_id = $2", COMPACTION, compacting)
    finally:
        await conn.close()
    plain = await env.call("get_open_txns")
    assert (plain.open_txns, plain.min_open_txn, plain.abortedBits) == ([aborted, live, compacting], live, b"\x01")
    for exclude in ([READ_ONLY], [], None):
        assert await env.call("get_open_txns_req", hms.GetOpenTxnsRequest(excludeTxnTypes=exclude)) == plain
    without = await env.call("get_open_txns_req", hms.GetOpenTxnsRequest(excludeTxnTypes=[READ_ONLY, COMPACTION]))
    assert (without.txn_high_water_mark, without.open_txns, without.min_open_txn, without.abortedBits) == (
        compacting, [aborted, live], live, b"\x01")
    assert hive_txn_list(without) == f"{compacting}:{live}:{live}:{aborted}"


async def test_hive4_checks_its_snapshot_with_get_latest_txnid_in_conflict(env: Env) -> None:
    """Hive 4's Driver, once it holds an EXCLUSIVE or EXCL_WRITE lock (every UPDATE, DELETE, MERGE
    and INSERT OVERWRITE by default), asks get_latest_txnid_in_conflict(its txn) whether its snapshot
    is still good (ValidTxnManager.isValidTxnListState): Hive 4's LatestTxnIdInConflictHandler is the
    largest txn id in WRITE_SET that updated or deleted what this txn's TXN_COMPONENTS update or
    delete (the same table and partition, or any partition of a table it writes whole) and committed
    after this txn began (TC_TXNID <= WS_COMMIT_ID); 0 (SQL MAX of nothing) when there is none."""
    await env.call("create_table", thrift_table("p", keys=("ds",), transactional="true"))
    update, delete, insert = 3, 4, 2

    async def lock(txn: int, operation: int, partition: str | None = None) -> None:
        component = hms.LockComponent(type=2, level=3 if partition else 2, dbname="db", tablename="p",
                                      partitionname=partition, operationType=operation, isAcid=True)
        await env.call("lock", hms.LockRequest(component=[component], txnid=txn, user="u", hostname="h"))

    async def latest_in_conflict(txn: int) -> int:
        return int(await env.call("get_latest_txnid_in_conflict", txn))

    (early,) = await env.open(1)
    await lock(early, update, "ds=1")
    await env.commit(early)
    (after_early,) = await env.open(1)
    await lock(after_early, update, "ds=1")
    assert await latest_in_conflict(after_early) == 0  # early committed before it began
    whole, other_part, same_part, inserter = await env.open(4)
    await lock(whole, delete)  # the whole table
    await lock(other_part, update, "ds=2")
    await lock(same_part, update, "ds=1")
    await lock(inserter, insert, "ds=1")
    (writer,) = await env.open(1)
    await lock(writer, update, "ds=1")
    await env.commit(writer)
    assert [await latest_in_conflict(t) for t in (whole, other_part, same_part, inserter, after_early)] == [
        writer, 0, writer, 0, writer]
    for nothing in (writer, writer + 100, 0):  # committed, no such txn: no components, Hive's 0
        assert await latest_in_conflict(nothing) == 0


async def test_txn_lists_hive_would_misread_are_refused_with_a_metaexception(env: Env) -> None:
    """Differences on purpose (hive/writeids.py _check_written_form, store/txns.py
    check_txn_list_not_too_old): where Hive's ValidReadTxnList.readFromString throws (an undeclared
    NumberFormatException: the client sees an internal error), or takes a list no getOpenTxns could
    have given and answers from it (an id above the list's own mark; a mark above every txn, which
    counts txns opened later as committed: a list used again once they write reads their uncommitted
    write ids; a snapshot older than the rows the cleaner kept, which Hive maps to wrong write ids,
    HIVE-25346's hazard), the gateway answers the declared MetaException saying what is wrong. Ids in
    any order, and ids of no txn, are read as Hive reads them (the test below)."""
    (x,) = await env.open(1)
    await env.allocate("t", x)
    old = hive_txn_list(await env.call("get_open_txns"))  # taken outside any txn while x is open
    assert old == f"{x}:{x}:{x}:"
    await env.commit(x)
    for _ in range(2):
        (later,) = await env.open(1)
        await env.allocate("t", later)
        await env.commit(later)
    hwm = (await env.call("get_open_txns")).txn_high_water_mark
    for text, says in (("abc:1::", "not a long"), (f"{hwm}", "expected <hwm>:<minOpen>"),
                       (f"{hwm}:1:1,,2:", "not a long"), (f"1:1:1,{hwm}:", "must lie within 1..1"),
                       (f"{hwm + 1}:{LONG_MAX}::", "beyond the highest txn id allocated")):
        with pytest.raises(hms.MetaException, match=says):
            await env.write_ids(["db.t"], text)
    assert await env.write_ids(["db.t"], old) == ["db.t:1:1:1:"]  # x's rows are still there
    assert env.gw.housekeeper is not None
    await env.gw.housekeeper.clean_once()  # no txn open: every txn-to-write-id row goes
    with pytest.raises(hms.MetaException, match="snapshot too old"):
        await env.write_ids(["db.t"], old)
    assert await env.write_ids(["db.t"]) == [f"db.t:3:{LONG_MAX}::"]
