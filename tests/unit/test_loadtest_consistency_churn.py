"""The consistency run's reads of the churn tables (loadtest/consistency/reader.py churn_read, judged by
loadtest/consistency/judge.py): the names they are read by, and which disagreements a drop excuses; and the
churn writers' txns (loadtest/ddl_race.py write_txn) across a drop and re-creation of their table."""

from __future__ import annotations

import collections
import time
from typing import Any, Sequence

import grpc

from loadtest.consistency.judge import Judge
from loadtest.consistency.model import Outcome, Violation
from loadtest.consistency.thrift_side import ThriftOutcome
from loadtest.ddl_race import DdlRace
from protos.metastore.v1 import catalog_pb2 as pb
from protos.metastore.v1 import transactions_pb2 as tpb

C = grpc.StatusCode
NOT_FOUND = Outcome(code=C.NOT_FOUND, details="table cons.c0 does not exist in this snapshot")
GONE = Outcome(code=C.FAILED_PRECONDITION, details="cons.c0: no table has the table id 17 the request expected")
TOO_OLD = Outcome(code=C.FAILED_PRECONDITION, details="snapshot too old: ...")


def _judge() -> Judge:
    return Judge([], None, {}, log=lambda _: None)  # type: ignore[arg-type]  # (_judge asks no endpoint)


def test_a_churn_table_is_read_by_its_name_and_the_name_it_is_renamed_to() -> None:
    ddl = DdlRace(driver=None, tables=2)  # type: ignore[arg-type]  # (names need no driver)
    assert ddl.read_names() == ["c0", "c0_renamed", "c1", "c1_renamed"]
    assert (ddl.other_name("c1"), ddl.other_name("c1_renamed")) == ("c1_renamed", "c1")


def test_a_drop_is_recent_only_for_the_table_id_it_deleted() -> None:
    ddl = DdlRace(driver=None, tables=1)  # type: ignore[arg-type]
    since = time.monotonic()
    ddl.drops[17] = since + 0.5
    assert ddl.dropped_lately(17, since) and not ddl.dropped_lately(18, since)
    assert not ddl.dropped_lately(17, since + 1)  # dropped before the read's window: judged strictly


def test_only_a_racing_drop_excuses_a_disagreement_and_never_a_too_old_in_a_txn() -> None:
    judge = _judge()

    def racy() -> bool:
        return True

    judge._judge("churn_snapshot", "GetTable", "r", ["gw1"], [NOT_FOUND], GONE, in_txn=True, racy=racy)
    assert judge.counts["ddl_race"] == 1 and not judge.violations
    judge._judge("churn_snapshot", "GetTable", "r", ["gw1"], [NOT_FOUND], GONE, in_txn=True, racy=lambda: False)
    judge._judge("snapshot", "GetTable", "r", ["gw1"], [NOT_FOUND], GONE, in_txn=False)
    assert [v.kind for v in judge.violations] == ["mismatch", "mismatch"]
    judge._judge("churn_reader_txn", "GetTable", "r", ["gw1"], [TOO_OLD], TOO_OLD, in_txn=True, racy=racy)
    assert [v.kind for v in judge.violations][-1] == "too_old_in_txn"


def test_a_version_gc_between_the_reads_excuses_an_answer_of_the_snapshot_outside_txns_only() -> None:
    """The gateways are asked first: a GC then can turn what the snapshot had, objects or no table of that name
    (read under the name it was renamed to later), into the oracle's "snapshot too old" (consistency seed 113
    with the abort clean-up settings: all three gateways NOT_FOUND, the oracle too old, for a
    ListPartitionNames of cons.c0_renamed). Any other refusal, or one in a txn, is still a violation."""
    judge = _judge()
    judge._judge("churn_snapshot", "ListPartitionNames", "r", ["gw1", "gw2"], [NOT_FOUND, Outcome(reply=1)], TOO_OLD,
                 in_txn=False)
    assert judge.counts["gc_race"] == 2 and not judge.violations
    judge._judge("churn_snapshot", "GetTable", "r", ["gw1"], [GONE], TOO_OLD, in_txn=False)
    judge._judge("churn_reader_txn", "GetTable", "r", ["gw1"], [NOT_FOUND], TOO_OLD, in_txn=True)
    assert [v.kind for v in judge.violations] == ["mismatch", "mismatch"]


def test_over_thrift_the_snapshots_own_refusal_is_its_no_such_object() -> None:
    """The same allowance over Hive's Thrift API, where the store's NotFound is a NoSuchObjectException (every
    read the run makes declares one)."""
    gone = "table cons.c0_renamed does not exist in this snapshot"
    assert ThriftOutcome(error="NoSuchObjectException", details=gone).of_the_snapshot
    assert ThriftOutcome(reply=[]).of_the_snapshot
    assert not ThriftOutcome(error="MetaException", details="snapshot too old: ...").of_the_snapshot


def test_a_version_gc_between_the_reads_moves_the_watermark_a_too_old_refusal_names() -> None:
    """Consistency seed 115 with the abort clean-up settings: the three gateways refused a snapshot of
    cons.a1 as too old with "versions up to write id 43", the oracle, asked after them, with 45. The same
    refusal; a gateway naming a later watermark than the oracle's would have seen GC go backwards."""
    def too_old(mark: int) -> Outcome:
        return Outcome(code=C.FAILED_PRECONDITION, details=f"snapshot too old for cons.a1: versions up to write id "
                                                            f"{mark} were garbage-collected after this snapshot")

    judge = _judge()
    judge._judge("old_snapshot", "GetPartitionsByFilter", "r", ["gw1", "gw2"], [too_old(43), too_old(45)],
                 too_old(45), in_txn=False)
    assert judge.counts["too_old_both"] == 2 and not judge.violations
    thrift_too_old = ThriftOutcome(error="MetaException", details=too_old(43).details)
    judge._judge("thrift_old_snapshot", "get_partitions_req", "r", ["gw1"], [thrift_too_old],
                 ThriftOutcome(error="MetaException", details=too_old(45).details), in_txn=False)
    assert judge.counts["too_old_both"] == 3 and not judge.violations
    judge._judge("old_snapshot", "GetPartitionsByFilter", "r", ["gw1"], [too_old(46)], too_old(45), in_txn=False)
    assert [v.kind for v in judge.violations] == ["mismatch"]


class _Rng:
    """A churn writer's choices: three steps, add, add, alter (each add of the partitions of the next `adds`
    slice of the universe), then commit."""

    def __init__(self, adds: Sequence[slice]) -> None:
        self.adds = list(adds)

    def choice(self, seq: Sequence[Any]) -> Any:
        if "add" not in seq:
            return seq[0]
        return "add" if self.adds else "alter"

    def randint(self, a: int, b: int) -> int:
        return 3

    def sample(self, population: Any, k: int, *, counts: Any = None) -> list[Any]:
        return list(population[self.adds.pop(0)])

    def random(self) -> float:
        return 0.99


def _rpc_error(code: grpc.StatusCode, details: str) -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(), details)


class _Gateway:
    """One gateway over a churn table that the churner drops and re-creates right after the txn's first
    add returned (the partitions of the table that has the name now; an alter refuses a partition named
    twice, as the gateway does, and one the table does not have)."""

    name = "gw1"

    def __init__(self, ddl: DdlRace) -> None:
        self.ddl = ddl
        self.parts: set[tuple[str, ...]] = set()
        self.adds = 0
        self.catalog, self.txns = self, self

    async def OpenTxns(self, request: tpb.OpenTxnsRequest, timeout: float) -> tpb.OpenTxnsResponse:
        return tpb.OpenTxnsResponse(txn_ids=[5])

    async def AddPartitions(self, request: pb.AddPartitionsRequest, timeout: float) -> pb.AddPartitionsResponse:
        new = [p for p in request.partitions if tuple(p.values) not in self.parts]
        self.parts |= {tuple(p.values) for p in new}
        self.adds += 1
        if self.adds == 1:  # the churner: drop and create again (a new table, without this add's partitions)
            table = self.ddl.tables[request.table_name]
            table.disrupt()
            self.parts = set()
            table.restore()
        return pb.AddPartitionsResponse(partitions=new)

    async def AlterPartitions(self, request: pb.AlterPartitionsRequest, timeout: float) -> pb.AlterPartitionsResponse:
        values = [tuple(p.values) for p in request.partitions]
        if len(set(values)) < len(values):
            raise _rpc_error(grpc.StatusCode.INVALID_ARGUMENT, "a partition appears twice in one alter request")
        if set(values) - self.parts:
            raise _rpc_error(grpc.StatusCode.NOT_FOUND, "partition not found")
        return pb.AlterPartitionsResponse(partitions=request.partitions)

    async def CommitTxn(self, request: tpb.CommitTxnRequest, timeout: float) -> tpb.CommitTxnResponse:
        return tpb.CommitTxnResponse()

    async def AbortTxns(self, request: tpb.AbortTxnsRequest, timeout: float) -> tpb.AbortTxnsResponse:
        return tpb.AbortTxnsResponse()


class _Driver:
    def __init__(self) -> None:
        self.counts: collections.Counter[str] = collections.Counter()
        self.errors: list[str] = []
        self.violations: list[Violation] = []
        self.gateway: _Gateway | None = None

    def any_gateway(self, rng: object) -> _Gateway:
        assert self.gateway is not None
        return self.gateway

    def error(self, message: str) -> None:
        self.errors.append(message)

    def violate(self, violation: Violation) -> None:
        self.violations.append(violation)


async def _write_txn_across_a_recreate(*adds: slice) -> _Driver:
    driver = _Driver()
    ddl = DdlRace(driver, tables=1)  # type: ignore[arg-type]  # (write_txn asks only these of its driver)
    driver.gateway = _Gateway(ddl)
    await ddl.write_txn(_Rng(adds))  # type: ignore[arg-type]  # (the choices write_txn makes)
    return driver


async def test_a_churn_writer_alters_a_partition_it_added_again_in_the_re_created_table_once() -> None:
    """Consistency seed 120: 'driver error: churn writer alter on c0: INVALID_ARGUMENT: partition
    ds=a%3Ab%2Fc/hr=3 appears twice in one alter request'. Two adds of one txn answer a name twice (and
    no drop of the txn's own came between) when the churner dropped and re-created c0 between them: the
    second add made the partition in the new table. The alter named it twice."""
    driver = await _write_txn_across_a_recreate(slice(0, 2), slice(0, 2))
    assert not driver.errors and not driver.violations
    assert driver.counts["churn_write_alter"] == 1


async def test_a_churn_writers_alter_is_judged_from_the_earliest_add_it_alters() -> None:
    """The partitions of an add from before the re-creation are gone from the table the alter finds: its
    NOT_FOUND is one of a disrupted window (it was judged from the later add's, as a violation)."""
    driver = await _write_txn_across_a_recreate(slice(0, 2), slice(2, 4))
    assert not driver.errors and not driver.violations
    assert driver.counts["churn_write_not_found_disrupted"] == 1
