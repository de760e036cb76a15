"""Random sequences of the other forms of the Thrift calls the differential tests draw (the second round of
test_thrift_methods_differential.py: the Hive 2.3.10 methods that no differential test called), each made on
the gateway and on the real Hive Metastore 2.3.10 from pyspark's jars, their answers compared step by step and
the state read back after every step.

The forms: create_table_with_environment_context, drop_table_with_environment_context,
append_partition_with_environment_context and append_partition_by_name_with_environment_context,
drop_partition_with_environment_context and drop_partition_by_name_with_environment_context,
alter_partition_with_environment_context and alter_partitions_with_environment_context (contexts empty, unset,
or holding what Hive's clients put there: `ifPurge`, `DO_NOT_UPDATE_STATS`, `CASCADE`); the reads
get_table_req and get_table_objects_by_name_req (with and without client capabilities; names missing, in
other case, twice, empty, an unset list, a database that does not exist); and set_ugi and fb303's getName.
Among them the plain writes of test_thrift_stateful_differential.py that make what they read (tables,
partitions, column statistics). After each step the reads of test_thrift_methods_differential.py and of
test_thrift_stateful_differential.py (partitions whole, by names and values, statistics) of what it touched
are compared, with the two request forms above.

The machinery is test_thrift_methods_differential.py's (imported: servers, steps, comparison, its
METHOD_DELIBERATE and the stateful test's DELIBERATE, which apply to a `_with_environment_context` form as to
its plain one); METHOD_DELIBERATE holds what these answer otherwise on purpose (getName: this server's name).
set_ugi is the first call of a connection, as clients send it: each server's connection is opened again
before it.

Left out, with the reason: a second set_ugi on one connection, and one of an empty or unset user or an unset
list of groups (Hive 2.3's TUGIBasedProcessor fails outside the method and closes the connection; the gateway
answers the groups); Hive 2.3's compact, compact2, show_compact and add_dynamic_partitions need
Hive's transaction tables, which this module's Hive (Derby, no DbTxnManager) does not have
(test_thrift_lock_stateful_differential.py's Hive has them); get_current_notificationEventId and
get_next_notification compare nothing against a Hive 2.3 without DbNotificationListener, which pyspark's jars
do not hold (hive-hcatalog-server-extensions); fb303's aliveSince, getCounters, getVersion, reinitialize and
shutdown answer what differs by nature (start times, call counts, versions) or nothing.

`make test` runs a short version (CALL_FORMS_DIFFERENTIAL_EXAMPLES, 3 derandomized examples of up to
CALL_FORMS_DIFFERENTIAL_STEPS, 12, steps); the `soak` run takes CALL_FORMS_DIFFERENTIAL_SOAK_EXAMPLES (200).
Skipped when Java or pyspark's jars are missing.
"""

from __future__ import annotations

import os
from typing import Any, Callable

import pytest
from hmsclient.genthrift.hive_metastore import ttypes as ht
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.e2e import test_thrift_methods_differential as methods
from tests.e2e import test_thrift_stateful_differential as stateful
from tests.e2e.test_thrift_methods_differential import Made, MethodsExample, Touched, _tables
from tests.e2e.test_thrift_stateful_differential import PHASES, TABLES, Run, servers

__all__ = ["servers"]  # the module's Hive and gateways (a fixture of the stateful test, one per module)

_CTX = "_with_environment_context"
CONTEXTS: tuple[dict[str, str] | None, ...] = (
    None, {}, {"ifPurge": "TRUE"}, {"DO_NOT_UPDATE_STATS": "true"}, {"CASCADE": "true"}, {"k": "v"})


def _context(ex: MethodsExample) -> ht.EnvironmentContext | None:
    properties = ex.rng.choice(CONTEXTS)
    return None if properties is None else ht.EnvironmentContext(dict(properties))


def _with_context(step: Callable[[MethodsExample], Made]) -> Callable[[MethodsExample], Made]:
    """A step of the other tests in its `_with_environment_context` form: the same arguments, then a context."""
    def made(ex: MethodsExample) -> Made:
        method, args, touched = step(ex)
        return f"{method}{_CTX}", (*args, _context(ex)), touched
    return made


def _table_request(ex: MethodsExample, db: str, table: str) -> tuple[str, tuple[Any, ...]]:
    capabilities = ex.rng.choice([None, ht.ClientCapabilities([ht.ClientCapability.TEST_CAPABILITY])])
    if ex.rng.random() < 0.5:
        return "get_table_req", (ht.GetTableRequest(db, table, capabilities),)
    names = ex.rng.choice([[table], [table, table.upper()], [table, "nope"], list(TABLES), [], None, [""], [table, ""]])
    if ex.rng.random() < 0.3:
        return "get_table_objects_by_name", (db, names if names is not None else [])
    return "get_table_objects_by_name_req", (ht.GetTablesRequest(db, names, capabilities),)


def probe(ex: MethodsExample) -> Made:
    """A read in a form no other test draws, with bad or edge arguments, compared at once."""
    db, table = ex.db_table()
    kind = ex.rng.choice([0, 0, 1, 2, 3])
    if kind == 0:
        db = ex.rng.choice([db, db.upper(), "nope", ""])
        table = ex.rng.choice([table, table.upper(), "nope", ""])
    if kind <= 1:
        method, args = _table_request(ex, db, table)
    elif kind == 2:
        # The first call of a connection (Hive 2.3's TUGIBasedProcessor refuses a second set_ugi by closing the
        # connection): every server's connection is opened again first.
        for side in (ex.run.hms, ex.run.cached, ex.run.uncached):
            side.client.close()
            side.connect()
        method, args = "set_ugi", (ex.rng.choice(ex.users), ex.rng.choice([[ex.group], [], [ex.group, "g2", ex.group]]))
    else:
        method, args = "getName", ()
    return method, args, []


def alter_partitions(ex: MethodsExample) -> Made:
    method, args, touched = _tables(stateful.alter_partition)(ex)
    if method.endswith(_CTX):
        # The stateful step drew a context form itself (with its own contexts): sent as drawn. Wrapped again,
        # it was a call with one argument too many (a TypeError in the client on both sides, nothing compared).
        return method, args, touched
    if method == "alter_partition":
        return f"alter_partition{_CTX}", (*args, _context(ex)), touched
    return f"alter_partitions{_CTX}", (*args, _context(ex)), touched


STEPS: dict[str, tuple[Callable[[MethodsExample], Made], int]] = {  # step -> weight
    "create table": (_tables(stateful.create_table), 1),
    "create table with a context": (_with_context(_tables(stateful.create_table)), 2),
    "drop table with a context": (_with_context(_tables(stateful.drop_table)), 1),
    "add partition": (_tables(stateful.add_partition), 2),
    "add partitions": (_tables(stateful.add_partitions), 1),
    "append partition with a context": (_with_context(_tables(stateful.append_partition)), 3),
    "drop partition with a context": (_with_context(_tables(stateful.drop_partition)), 2),
    "alter partitions with a context": (alter_partitions, 3),
    "update statistics": (_tables(stateful.update_stats), 1),
    "probe": (probe, 4),
}
_WEIGHTED = [name for name, (_, weight) in STEPS.items() for _ in range(weight)]


def draw(ex: MethodsExample) -> Made:
    return STEPS[ex.rng.choice(_WEIGHTED)][0](ex)


def reads(ex: MethodsExample, touched: Touched) -> list[tuple[str, tuple[Any, ...]]]:
    """The reads of both other tests of what a step touched, and the request forms of its tables."""
    tables = sorted({(t[1], t[2]) for t in touched if t[0] == "table"})
    calls = methods.reads(ex, touched) + (stateful.reads(ex, tables) if tables else [])
    for db, table in tables:
        calls += [("get_table_req", (ht.GetTableRequest(db, table, None),)),
                  ("get_table_objects_by_name_req", (ht.GetTablesRequest(db, list(TABLES), None),))]
    return calls


EXAMPLES = int(os.environ.get("CALL_FORMS_DIFFERENTIAL_EXAMPLES", "3"))
SOAK_EXAMPLES = int(os.environ.get("CALL_FORMS_DIFFERENTIAL_SOAK_EXAMPLES", "200"))
STEPS_PER_EXAMPLE = int(os.environ.get("CALL_FORMS_DIFFERENTIAL_STEPS", "12"))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
          phases=PHASES, database=None)
@given(data=st.data())
def test_other_call_forms_answer_as_hive_metastore_does(servers: Run, data: Any) -> None:
    methods.run_example(servers, data, STEPS_PER_EXAMPLE, draw=draw, reads_of=reads, prefix="cf")


@pytest.mark.soak
@pytest.mark.timeout(0)  # one test for every example, past pyproject's 300 s per test
@settings(max_examples=SOAK_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), phases=PHASES,
          database=None)
@given(data=st.data())
def test_other_call_forms_answer_as_hive_metastore_does_soak(servers: Run, data: Any) -> None:
    methods.run_example(servers, data, STEPS_PER_EXAMPLE, draw=draw, reads_of=reads, prefix="cf")
