"""Random sequences of Hive 2.3's compaction requests, compact2 and compact (ALTER TABLE ... COMPACT), each made
on the gateway and on the real Hive Metastore 2.3.10 with its transaction tables on PostgreSQL
(test_thrift_lock_stateful_differential.py's servers, imported), their answers compared, and SHOW COMPACTIONS
(show_compact) read back from both after every request.

An example makes two transactional tables of its own on both (ORC, bucketed, 'transactional'='true', as
Hive 2.3's TransactionalValidationListener wants them) and draws requests on them, of both types, with and
without `runas` and properties; beside them, the bad targets: a table that does not exist, a database that does
not exist, a table that is not transactional, and a partition of an unpartitioned table. Answers are compared
with each server's compaction ids numbered in the order the example met them; SHOW COMPACTIONS is compared on
the example's own tables.

Deliberate: a request for a bad target is refused here (TApplicationException: compact2 declares no
exception), where Hive 2.3's metastore queues anything it is sent (its Driver refuses such a statement
before it calls the metastore, so no Hive client sends one; the gateway's compactor would otherwise find
nothing to compact); those entries are left out of Hive's SHOW COMPACTIONS. Left out of the draws: names in
other case (the gateway's names are case-insensitive, so `LDB.A` is ldb.a's request; Hive 2.3 queues it as
another table's, which no table is) and an empty or unset name or type (Hive 2.3 fails outside the method and
closes the connection). Hive 2.3's ShowCompactRequest has no filters (Hive 4's are test_thrift_txns.py's).

Not drawn: add_dynamic_partitions. Hive 2.3's AddDynamicPartitions numbers its fields otherwise than Hive 3's,
which the gateway reads (2: dbname where Hive 3 has writeid, then tablename, partitionnames, operationType one
field earlier each), so the gateway reads a Hive 2.3 request as one without names and refuses it
(NoSuchTxnException, "needs dbname, tablename and partitionnames"), where Hive 2.3 records it; and a Hive 2.3
txn holds no write id, without which the gateway refuses every write of a transactional table anyway.

`make test` runs COMPACTION_DIFFERENTIAL_EXAMPLES (6, derandomized); the `soak` run
COMPACTION_DIFFERENTIAL_SOAK_EXAMPLES (200). Skipped without Java, pyspark's jars or PostgreSQL's JDBC driver.
"""

from __future__ import annotations

import asyncio
import os
import random
from typing import Any

import pytest
from hmsclient.genthrift.hive_metastore import ThriftHiveMetastore
from hmsclient.genthrift.hive_metastore import ttypes as ht
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.e2e.test_thrift_differential import _table
from tests.e2e.test_thrift_lock_stateful_differential import PHASES, Servers, servers

__all__ = ["servers"]  # the module's Hive (with its transaction tables) and gateway

Client = ThriftHiveMetastore.Client
ORC = ("org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat",
       "org.apache.hadoop.hive.ql.io.orc.OrcSerde")
EXAMPLES = int(os.environ.get("COMPACTION_DIFFERENTIAL_EXAMPLES", "6"))
SOAK_EXAMPLES = int(os.environ.get("COMPACTION_DIFFERENTIAL_SOAK_EXAMPLES", "200"))
PROPERTIES: tuple[dict[str, str] | None, ...] = (None, {}, {"compactor.mapreduce.map.memory.mb": "1024"})
BAD = ("a table that does not exist", "a database that does not exist", "a table that is not transactional",
       "a partition of an unpartitioned table")


def _acid(db: str, name: str) -> ht.Table:
    table = _table(db, name, (), params={"transactional": "true"})
    table.sd.inputFormat, table.sd.outputFormat = ORC[:2]
    table.sd.serdeInfo = ht.SerDeInfo(None, ORC[2], {})
    table.sd.numBuckets, table.sd.bucketCols = 2, ["id"]
    return table


def _answer(client: Any, method: str, *args: Any) -> Any:
    try:
        return getattr(Client, method)(client, *args)
    except Exception as exc:  # noqa: BLE001 - a failure is an answer like any other
        return {"raised": type(exc).__name__}


class Ids:
    """One server's compaction ids, numbered in the order an example meets them."""

    def __init__(self) -> None:
        self.seen: dict[int, int] = {}

    def __call__(self, compaction_id: int) -> int:
        return self.seen.setdefault(compaction_id, len(self.seen) + 1)


def _normal(answer: Any, ids: Ids) -> Any:
    if isinstance(answer, ht.CompactionResponse):
        return ("CompactionResponse", ids(answer.id), answer.state, answer.accepted)
    return answer


Target = tuple[str, str, "str | None"]  # database, table, partition


def _listing(answer: Any, ids: Ids, tables: set[str], left_out: set[Target]) -> Any:
    """SHOW COMPACTIONS of the example's tables but `left_out`, ids numbered, in id order."""
    if not isinstance(answer, ht.ShowCompactResponse):
        return answer
    mine = sorted((e for e in answer.compacts or [] if e.dbname == "ldb" and e.tablename in tables
                   and (e.dbname, e.tablename, e.partitionname) not in left_out), key=lambda e: e.id)
    return [(ids(e.id), e.dbname, e.tablename, e.partitionname, e.type, e.state, e.workerid, e.start, e.runAs,
             e.endTime, e.hadoopJobId) for e in mine]


async def run_example(s: Servers, data: Any, n: int) -> None:
    rng = random.Random(data.draw(st.integers(0, 2**64 - 1), label="seed"))
    tables = [f"cx{n}a", f"cx{n}b"]
    for client in (s.hms, s.gw):
        for name in tables:
            await asyncio.to_thread(Client.create_table, client, _acid("ldb", name))
    ids = {"hms": Ids(), "gw": Ids()}
    log: list[str] = []
    refused: set[Target] = set()  # the bad targets, which Hive queues
    for _ in range(rng.randint(3, 10)):
        db, table, partition = "ldb", rng.choice(tables), None
        bad = rng.choice(BAD) if rng.random() < 0.2 else None
        if bad == BAD[0]:
            table = "nt"
        elif bad == BAD[1]:
            db = "nodb"
        elif bad == BAD[2]:
            table = "u"  # the lock test's, not transactional
        elif bad == BAD[3]:
            partition = "ds=1"
        request = ht.CompactionRequest(db, table, partition, rng.choice([ht.CompactionType.MAJOR,
                                                                          ht.CompactionType.MINOR]),
                                       rng.choice([None, "bob"]), rng.choice(PROPERTIES))
        method = "compact" if rng.random() < 0.25 else "compact2"
        log.append(f"{method}({request})")
        theirs = await asyncio.to_thread(_answer, s.hms, method, request)
        ours = await asyncio.to_thread(_answer, s.gw, method, request)
        if bad is not None:
            # Deliberate (the module's docstring): refused here, queued by Hive 2.3's metastore (its id not
            # numbered: the gateway's ids skip nothing).
            assert ours == {"raised": "TApplicationException"}, (bad, ours, log)
            assert theirs is None or isinstance(theirs, ht.CompactionResponse), (bad, theirs, log)
            s.tally[f"deliberate: {bad}"] = s.tally.get(f"deliberate: {bad}", 0) + 1
            refused.add((db, table, partition))
        else:
            ours, theirs = _normal(ours, ids["gw"]), _normal(theirs, ids["hms"])
            assert ours == theirs, (ours, theirs, log)
            s.tally[f"{method} agreed"] = s.tally.get(f"{method} agreed", 0) + 1
        listed = [_listing(await asyncio.to_thread(_answer, c, "show_compact", ht.ShowCompactRequest()), ids[k],
                           set(tables), refused if k == "hms" else set()) for c, k in ((s.gw, "gw"), (s.hms, "hms"))]
        assert listed[0] == listed[1], (listed, log)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
          phases=PHASES, database=None)
@given(data=st.data())
async def test_compaction_requests_are_answered_as_hive_metastore_does(servers: Servers, data: Any) -> None:
    servers.tally["examples"] = servers.tally.get("examples", 0) + 1
    await run_example(servers, data, servers.tally["examples"])


@pytest.mark.soak
@pytest.mark.timeout(0)
@settings(max_examples=SOAK_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), phases=PHASES,
          database=None)
@given(data=st.data())
async def test_compaction_requests_are_answered_as_hive_metastore_does_soak(servers: Servers, data: Any) -> None:
    servers.tally["examples"] = servers.tally.get("examples", 0) + 1
    await run_example(servers, data, servers.tally["examples"])
