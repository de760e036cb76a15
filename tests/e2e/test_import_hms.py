"""`metastore-gateway import-hms` run as a user runs it (the CLI in a subprocess) from a real Hive Metastore
2.3.10 (pyspark's jars, Derby, Hive's txns on) into a real gateway, both over Thrift.

The source holds a varied catalog (tests/e2e/hms_catalog.py). Checked: a dry run writes nothing and lists
what it would copy; one database, then all (the copy killed in the middle of the big table's partitions)
complete on the next run; every object then reads the same from both, compared with the Thrift
differential's own normalisation and client; a further run copies nothing and exits 0; the transactional
table's write ids are seeded with the source's txn high-water mark and the gateway's txn ids raised past
it; a table an open txn writes is refused until the txn ends; --verify reports a planted difference and
--replace-differing mends it. Then roles (nested, held by users, groups and roles), role grants and
privileges on every kind of object (tests/e2e/hms_authz.py): a dry run writes none, the copy makes every read
call answer as Hive's does, a second run copies nothing; the source's primary and foreign keys are copied
(keys first) and read back as the source answers them. An unreachable source is one clear line and exit
status 1.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, AsyncIterator, Callable

import pytest
import thriftpy2.rpc
from hmsclient import hmsclient
from hmsclient.genthrift.hive_metastore import ttypes as ht

from gateway.app import Gateway
from gateway.hms_import.constraints import HIVE3_NOTE
from gateway.thrift.idl import SERVICE, hms
from loadtest.hms import hms_server, hms_unavailable_reason
from tests.conftest import gateway_settings
from tests.thrift_client import ThriftClient, thrift_table
from tests.e2e.hms_authz import FACTS, fill_authz, read_constraints, read_grants
from tests.e2e.hms_catalog import Catalog, fill, fill_big_table
from tests.e2e.test_thrift_differential import _normal

_REASON = hms_unavailable_reason()
_NEEDS_HMS = pytest.mark.skipif(_REASON is not None, reason=f"Hive Metastore reference: {_REASON}")

# Hive 2.3's txns on Derby (hive.in.test makes its TxnHandler create its tables), no compactor threads;
# DBCP, since pyspark's jars lack BoneCP, Hive 2.3's default pool.
HMS_ARGS = ["-Dhive.in.test=true", "-Dhive.support.concurrency=true",
            "-Dhive.txn.manager=org.apache.hadoop.hive.ql.lockmgr.DbTxnManager",
            "-Dhive.compactor.initiator.on=false", "-Dhive.compactor.worker.threads=0",
            "-Ddatanucleus.connectionPoolingType=dbcp"]
CATALOG = "sales|web|odd*"  # all but `busy`, whose table an open txn writes, and `refused`
BATCH = "100"


def _command() -> list[str]:
    script = Path(sys.executable).with_name("metastore-gateway")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from gateway.cli import main; sys.exit(main())"]


@dataclass
class Run:
    code: int
    out: str
    err: str

    def __str__(self) -> str:  # whole, for an assertion's message
        return f"exit status {self.code}\nstdout:\n{self.out}\nstderr:\n{self.err}"

    def summary(self) -> dict[str, Any]:
        return json.loads(self.out[self.out.index("{"):])

    def copied(self) -> dict[str, int]:
        return {kind: n["copied"] for kind, n in self.summary()["counts"].items() if n["copied"]}


async def import_hms(source: str, gateway: str, *args: str,
                     kill_when: Callable[[str], bool] | None = None) -> Run:
    """The CLI in a subprocess, from `source` to `gateway` (host:port; the test's event loop keeps serving the
    gateway meanwhile); `kill_when` a progress line on stderr: SIGKILL then, as a crash."""
    return await _cli("import-hms", "--from", f"thrift://{source}", "--to", f"thrift://{gateway}", *args,
                      kill_when=kill_when)


async def _cli(*args: str, kill_when: Callable[[str], bool] | None = None) -> Run:
    proc = await asyncio.create_subprocess_exec(
        *_command(), *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.stdout is not None and proc.stderr is not None
    err_lines = []
    while line := (await asyncio.wait_for(proc.stderr.readline(), 60)).decode():
        err_lines.append(line)
        if kill_when is not None and kill_when(line):
            proc.send_signal(signal.SIGKILL)
            break
    out = await asyncio.wait_for(proc.stdout.read(), 60)
    code = await asyncio.wait_for(proc.wait(), 60)
    return Run(code, out.decode(), "".join(err_lines))


def _thrift(address: str) -> Any:
    host, _, port = address.rpartition(":")
    return thriftpy2.rpc.make_client(SERVICE, host, int(port), timeout=60_000)


def _read_all(address: str, databases: list[str]) -> dict[str, Any]:
    """Every object of `databases` as Hive 2.3's client reads it (the differential's hmsclient), made plain
    by the differential's `_normal`: databases, tables, partitions, functions, column statistics."""
    host, _, port = address.rpartition(":")
    client = hmsclient.HMSClient(host=host, port=int(port))
    client.open()
    seen: dict[str, Any] = {}
    try:
        for db in databases:
            seen[db] = _normal(client.get_database(db), "/nowhere")
            for fn in sorted(client.get_functions(db, "*")):
                seen[f"{db} function {fn}"] = _normal(client.get_function(db, fn), "/nowhere")
            for name in sorted(client.get_all_tables(db)):
                table = client.get_table(db, name)
                seen[f"{db}.{name}"] = _normal(table, "/nowhere")
                columns = [c.name for c in table.sd.cols]
                seen[f"{db}.{name} stats"] = sorted(_normal(client.get_table_statistics_req(
                    ht.TableStatsRequest(db, name, columns)).tableStats, "/nowhere"), key=lambda s: s["colName"])
                parts = client.get_partitions(db, name, -1)
                for p in parts:
                    seen[f"{db}.{name} {p.values}"] = _normal(p, "/nowhere")
                names = client.get_partition_names(db, name, -1)
                if names and table.tableType != "VIRTUAL_VIEW":
                    stats = client.get_partitions_statistics_req(ht.PartitionsStatsRequest(db, name, columns, names))
                    for part_name, objs in stats.partStats.items():
                        seen[f"{db}.{name} {part_name} stats"] = sorted(_normal(objs, "/nowhere"),
                                                                        key=lambda s: s["colName"])
    finally:
        client.close()
    return seen


@pytest.fixture
async def gateway(pg_dsn: str, tmp_path: Path) -> AsyncIterator[Gateway]:
    gw = Gateway(gateway_settings(pg_dsn, **{"hive.metastore.warehouse.dir": str(tmp_path / "gateway-warehouse")}))
    await gw.start()
    try:
        yield gw
    finally:
        await gw.stop()


@_NEEDS_HMS
async def test_an_import_copies_the_catalog_resumes_after_a_crash_and_verifies(gateway: Gateway,
                                                                              tmp_path: Path) -> None:
    started = time.monotonic()
    to = f"127.0.0.1:{gateway.thrift_port}"
    ours = ThriftClient(gateway.thrift_port)  # each call in a thread: the gateway serves on this loop
    async with hms_server(workdir=tmp_path / "hms", jvm_args=HMS_ARGS, quick_start=True) as source:
        theirs = _thrift(source)
        catalog: Catalog = await asyncio.to_thread(fill, lambda m, *a: getattr(theirs, m)(*a), tmp_path / "lake")
        await asyncio.to_thread(fill_authz, lambda m, *a: getattr(theirs, m)(*a), str(tmp_path / "lake"))
        big_db, big_table = catalog.big_table
        filled = time.monotonic()

        # A dry run lists what it would copy and writes nothing: not one event in the gateway's log, no role
        # and no grant.
        events_before = (await ours("get_current_notificationEventId")).eventId
        dry = await import_hms(source, to, "--databases", f"{CATALOG}|authz|keys", "--dry-run")
        assert dry.code == 0, str(dry)
        assert f"would add {catalog.big_partitions} partitions to {big_db}.{big_table}" in dry.out, dry.out
        assert f"would seed the write ids of sales.acid_parts with {catalog.txn_high_water_mark}" in dry.out
        assert "would copy function web.to_upper" in dry.out
        await _nothing_granted_by_a_dry_run(dry, ours)
        assert await ours("get_all_databases") == ["default"]
        assert (await ours("get_current_notificationEventId")).eventId == events_before

        # One database first, then all of them, the second run killed amid the big table's partitions.
        one = await import_hms(source, to, "--databases", "web", "--json")
        assert one.code == 0, str(one)
        # (roles, their grants and GLOBAL privileges are the metastore's: copied by a run of any databases)
        assert one.copied() == {"databases": 1, "tables": 1, "partitions": 10, "functions": 1,
                                "partition statistics": 10, "roles": 3, "role grants": 5, "privileges": 1}
        assert sorted(await ours("get_all_databases")) == ["default", "web"]

        def deep_into_the_big_table(line: str) -> bool:
            return line.startswith("import: partitions: ") and big_table in line and int(
                line.split()[2].split("/")[0]) >= 300

        crashed = await import_hms(source, to, "--databases", CATALOG, "--batch-size", BATCH,
                                   "--progress-interval", "0", kill_when=deep_into_the_big_table)
        assert crashed.code == -signal.SIGKILL, str(crashed)
        on_gateway = 0
        for db in ("odd_names_1", "sales", "web"):
            for table in await ours("get_all_tables", db):
                on_gateway += len(await ours("get_partition_names", db, table, -1))
        copied_before = len(await ours("get_partition_names", big_db, big_table, -1))
        assert 0 < copied_before < catalog.big_partitions, copied_before

        resumed = await import_hms(source, to, "--databases", CATALOG, "--batch-size", BATCH, "--json")
        assert resumed.code == 0, str(resumed)
        partitions = resumed.summary()["counts"]["partitions"]
        assert partitions["copied"] == catalog.partitions - on_gateway, (partitions, on_gateway)
        assert partitions["identical"] == on_gateway, (partitions, on_gateway)

        # Every object reads the same through the gateway as from the Hive Metastore.
        databases = ["odd_names_1", "sales", "web"]
        seen_there, seen_here = await asyncio.gather(asyncio.to_thread(_read_all, source, databases),
                                                     asyncio.to_thread(_read_all, to, databases))
        assert seen_there.keys() == seen_here.keys()
        differing = {k: (seen_there[k], seen_here[k]) for k in seen_there if seen_there[k] != seen_here[k]}
        assert not differing, json.dumps(differing, indent=1, default=str)[:6000]
        assert len(seen_here) > catalog.partitions + 200

        # Run again: nothing to copy, every object identical, and --verify agrees.
        again = await import_hms(source, to, "--databases", CATALOG, "--verify", "--json")
        assert again.code == 0, str(again)
        assert again.copied() == {}, again.copied()

        # The transactional table's write ids: its files carry Hive 2.3 txn ids up to the high-water mark.
        hwm = catalog.txn_high_water_mark
        allocated = (await ours("get_max_allocated_table_write_id", hms.MaxAllocatedTableWriteIdRequest(
            dbName="sales", tableName="acid_parts"))).maxWriteId
        assert allocated >= hwm
        txn_list = f"{(await ours('get_open_txns')).txn_high_water_mark}:{2**63 - 1}::"
        (valid,) = (await ours("get_valid_write_ids", hms.GetValidWriteIdsRequest(
            fullTableNames=["sales.acid_parts"], validTxnList=txn_list))).tblValidWriteIds
        assert valid.writeIdHighWaterMark >= hwm and all(w > hwm for w in valid.invalidWriteIds), valid
        (next_txn,) = (await ours("open_txns", hms.OpenTxnRequest(num_txns=1, user="test", hostname="h"))).txn_ids
        assert next_txn > hwm
        await ours("abort_txn", hms.AbortTxnRequest(txnid=next_txn))

        # A table an open txn of the source writes is refused, named, until that txn ends.
        busy = await import_hms(source, to, "--databases", "busy")
        assert busy.code == 1, str(busy)
        assert "busy.locked" in busy.out and "open txns of the source write it" in busy.out, busy.out
        assert await ours("get_all_tables", "busy") == ["calm"]
        theirs.commit_txn(hms.CommitTxnRequest(txnid=catalog.busy_txn))
        calm = await import_hms(source, to, "--databases", "busy", "--json")
        assert calm.code == 0, str(calm)
        assert calm.copied() == {"tables": 1, "write ids": 1}, calm.copied()
        assert (await ours("get_max_allocated_table_write_id", hms.MaxAllocatedTableWriteIdRequest(
            dbName="busy", tableName="locked"))).maxWriteId >= hwm

        # What the gateway refuses is named with its reason; its partitions are left alone, and said so.
        refused = await import_hms(source, to, "--databases", "refused")
        assert refused.code == 1, str(refused)
        assert "failed: table refused.empty_key: InvalidObjectException: " in refused.out, refused.out
        assert "a parameter key must not be empty" in refused.out, refused.out
        assert ("skipped: partition refused.empty_key (every partition): neither copied nor compared: the gateway "
                "refused the table (above)") in refused.out, refused.out

        # A difference planted on the gateway: --verify names it, a copy leaves it and says so,
        # --replace-differing writes the source's over it.
        events = await ours("get_table", "web", "events")
        events.parameters["quote"] = "planted"
        await ours("alter_table", "web", "events", events)
        (part,) = await ours("get_partitions_by_names", "web", "events", ["country=a%2Fb/ds=2024-01-01/hr=0"])
        part.parameters["source"] = "planted too"
        await ours("alter_partitions", "web", "events", [part])
        verify = await import_hms(source, to, "--databases", CATALOG, "--verify-only")
        assert verify.code == 1, str(verify)
        assert "differing: table web.events: parameters.quote: source 'it\\'s \"quoted\"', gateway 'planted'" in (
            verify.out), verify.out
        # (the plain alter_partitions also took COLUMN_STATS_ACCURATE off, as Hive's does: another difference)
        assert "differing: partition web.events country=a%2Fb/ds=2024-01-01/hr=0: " in verify.out, verify.out
        assert "parameters.source: source 'a/b', gateway 'planted too'" in verify.out, verify.out
        kept = await import_hms(source, to, "--databases", "web")
        assert kept.code == 1 and "--replace-differing" in kept.out, str(kept)
        assert (await ours("get_table", "web", "events")).parameters["quote"] == "planted"
        mended = await import_hms(source, to, "--databases", "web", "--replace-differing", "--verify", "--json")
        assert mended.code == 0, str(mended)
        assert mended.summary()["counts"]["tables"]["replaced"] == 1
        assert (await ours("get_table", "web", "events")).parameters["quote"] == 'it\'s "quoted"'

        await _grants_and_constraints(source, to, ours)
        theirs.close()
    ours.close()
    print(f"fill {filled - started:.1f} s, imports and checks {time.monotonic() - filled:.1f} s")


def _plain(answer: Any) -> Any:
    # Each metastore stamps its own create and grant times (Hive 2.3 stamps a grant's time itself, whatever the
    # request says): those, and only those, are left out (the differential's normalisation).
    return _normal(answer, "/nowhere")


async def _nothing_granted_by_a_dry_run(dry: Run, ours: ThriftClient) -> None:
    """The dry run of the source's roles, role grants, privileges and constraints (tests/e2e/hms_authz.py)."""
    for line in ("would copy role analysts", "would copy role loners", "would copy grant of role readers to role "
                 "analysts", "would copy grant of role admin to user ops", "would copy grant of role analysts to "
                 "group etl", "would copy privilege SELECT on GLOBAL to user alice",
                 "would copy privilege SELECT on partition authz.facts ds=2024-01-01 to user dave",
                 "would copy privilege SELECT on column authz.facts.amount of partition ds=2024-01-02 to user erin",
                 "would copy constraint primary key pk_dim of keys.dim",
                 "would copy constraint foreign key fk_fact_dim of keys.fact"):
        assert line in dry.out, (line, dry.out)
    assert await ours("get_role_names") == ["admin", "public"]
    on_global = await ours("list_privileges", None, None, hms.HiveObjectRef(objectType=hms.HiveObjectType.GLOBAL))
    assert [(p.principalName, p.grantInfo.privilege) for p in on_global] == [("admin", "All")]  # the gateway's own


async def _grants_and_constraints(source: str, to: str, ours: ThriftClient) -> None:
    """The source's roles, role grants and privileges (tests/e2e/hms_authz.py; the roles, their grants and the
    GLOBAL privilege came with the first run): the copy makes every read call answer as the source's does; a
    second run copies nothing and replaces only what was planted. Its constraints are copied, primary keys
    before the foreign key that refers to them, and read back as the source's."""
    started = time.monotonic()
    run = await import_hms(source, to, "--databases", "authz|keys", "--json")
    assert run.code == 0, str(run)
    assert run.copied() == {"databases": 2, "tables": 4, "partitions": 2, "privileges": 10, "constraints": 3}, (
        run.copied())
    assert run.summary()["problems"] == [], run.summary()["problems"]
    assert run.summary()["notes"] == [HIVE3_NOTE]
    there, here = await asyncio.gather(asyncio.to_thread(_read, source, read_grants),
                                       asyncio.to_thread(_read, to, read_grants))
    differing = {k: (there[k], here[k]) for k in there if there[k] != here[k]}
    assert not differing, json.dumps(differing, indent=1, default=str)[:6000]
    assert sum(len(v) for v in there.values() if isinstance(v, list)) > 50  # answers, not empty lists alike
    keys_there, keys_here = await asyncio.gather(asyncio.to_thread(_read, source, read_constraints, _no_catalog),
                                                 asyncio.to_thread(_read, to, read_constraints, _no_catalog))
    assert sum(map(len, keys_there.values())) == 2 + 1 + 2, keys_there  # the rows: one per key column
    assert keys_here == keys_there, json.dumps({"source": keys_there, "gateway": keys_here}, indent=1)[:6000]

    # Two differences planted on the gateway: a privilege and a role grant without their grant options. Run
    # again with --replace-differing and --verify: nothing is copied, the two are written over (revoked and
    # granted as the source has them), and every other role, grant and privilege is identical, in the copy and
    # in the verification, the constraints among them.
    carols = await ours("list_privileges", "carol", hms.PrincipalType.USER, FACTS)
    carol_select = hms.PrivilegeBag(privileges=[p for p in carols if p.grantInfo.privilege == "SELECT"])
    await ours("grant_revoke_privileges", hms.GrantRevokePrivilegeRequest(
        requestType=hms.GrantRevokeType.REVOKE, privileges=carol_select, revokeGrantOption=True))
    await ours("grant_revoke_role", hms.GrantRevokeRoleRequest(
        requestType=hms.GrantRevokeType.REVOKE, roleName="analysts", principalName="alice",
        principalType=hms.PrincipalType.USER, grantOption=True))
    again = await import_hms(source, to, "--databases", "authz|keys", "--replace-differing", "--verify", "--json")
    assert again.code == 0, str(again)
    assert again.copied() == {}, again.copied()
    counts = again.summary()["counts"]
    assert {kind: (counts[kind]["identical"], counts[kind]["replaced"]) for kind in ("roles", "role grants",
                                                                                    "privileges", "constraints")} == {
        "roles": (2 * 3, 0), "role grants": (2 * 5 - 1, 1), "privileges": (2 * 11 - 1, 1), "constraints": (2 * 3, 0)
    }, counts
    assert again.summary()["problems"] == [], again.summary()["problems"]
    mended = await asyncio.to_thread(_read, to, read_grants)
    assert {k: mended[k] for k in there if mended[k] != there[k]} == {}
    print(f"roles, grants and constraints {time.monotonic() - started:.1f} s")


def _no_catalog(answer: Any) -> Any:
    """`_plain`, without the catalog name the gateway answers (Hive 3's and 4's field; Hive 2.3 has none)."""
    return [{k: v for k, v in row.items() if k != "catName"} for row in _plain(answer)]


def _read(address: str, read: Callable[..., dict[str, Any]],
          normal: Callable[[Any], Any] = _plain) -> dict[str, Any]:
    """`read` (hms_authz's read_grants or read_constraints) of one side, over one connection."""
    client = _thrift(address)
    try:
        return read(lambda m, *a: getattr(client, m)(*a), normal)
    finally:
        client.close()


async def test_a_source_with_write_ids_seeds_each_table_with_its_own(pg_dsn: str, pg_cluster: Any,
                                                                    tmp_path: Path) -> None:
    """A Hive 4 source (here another gateway, which serves Hive 4's get_max_allocated_table_write_id): the
    copy's write ids are seeded with the table's own largest, not the txn high-water mark."""
    source_gw = Gateway(gateway_settings(await pg_cluster.fresh_database(),
                                         **{"hive.metastore.warehouse.dir": str(tmp_path / "source-warehouse")}))
    target_gw = Gateway(gateway_settings(pg_dsn, **{"hive.metastore.warehouse.dir": str(tmp_path / "warehouse")}))
    await source_gw.start()
    await target_gw.start()
    try:
        theirs, ours = ThriftClient(source_gw.thrift_port), ThriftClient(target_gw.thrift_port)
        await theirs("create_database", hms.Database(name="lake", description="", parameters={},
                                                     locationUri=f"file:{tmp_path}/lake"))
        acid = thrift_table("acid", "lake", keys=["ds"], transactional="true")
        await theirs("create_table", acid)
        (txn,) = (await theirs("open_txns", hms.OpenTxnRequest(num_txns=1, user="u", hostname="h"))).txn_ids
        await theirs("allocate_table_write_ids", hms.AllocateTableWriteIdsRequest(
            dbName="lake", tableName="acid", txnIds=[txn]))
        await theirs("commit_txn", hms.CommitTxnRequest(txnid=txn))
        acid = await theirs("get_table", "lake", "acid")
        for day in ("2024-01-01", "2024-01-02"):  # each in a txn of its own: write ids 2 and 3
            await theirs("add_partition", hms.Partition(values=[day], dbName="lake", tableName="acid",
                                                         sd=acid.sd, parameters={}))
        others = (await theirs("open_txns", hms.OpenTxnRequest(num_txns=20, user="u", hostname="h"))).txn_ids
        await theirs("abort_txns", hms.AbortTxnsRequest(txn_ids=others))
        source_hwm = (await theirs("get_open_txns")).txn_high_water_mark
        assert source_hwm >= 23

        run = await import_hms(f"127.0.0.1:{source_gw.thrift_port}", f"127.0.0.1:{target_gw.thrift_port}",
                               "--databases", "lake", "--verify", "--json")
        assert run.code == 0, str(run)
        assert run.copied() == {"databases": 1, "tables": 1, "partitions": 2, "write ids": 1}, run.copied()
        # Seeded with the table's 3 (the partitions then added under the gateway's own txn: 4), the txn ids
        # raised past the source's.
        assert (await ours("get_max_allocated_table_write_id", hms.MaxAllocatedTableWriteIdRequest(
            dbName="lake", tableName="acid"))).maxWriteId == 4
        assert (await ours("get_open_txns")).txn_high_water_mark > source_hwm
        theirs.close()
        ours.close()
    finally:
        await target_gw.stop()
        await source_gw.stop()


@_NEEDS_HMS
@pytest.mark.soak
async def test_a_table_of_many_partitions_imports_in_bounded_memory(gateway: Gateway, tmp_path: Path) -> None:
    """IMPORT_SOAK_PARTITIONS (20,000) partitions, a tenth with statistics: all copied, at a rate printed for
    docs, and the importer's peak memory far below what holding them all would take."""
    count = int(os.environ.get("IMPORT_SOAK_PARTITIONS", "20000"))
    to = f"127.0.0.1:{gateway.thrift_port}"
    async with hms_server(workdir=tmp_path / "hms", jvm_args=HMS_ARGS, quick_start=True) as source:
        theirs = _thrift(source)
        await asyncio.to_thread(fill_big_table, lambda m, *a: getattr(theirs, m)(*a), tmp_path / "lake", count)
        theirs.close()
        started = time.monotonic()
        run = await import_hms(source, to, "--databases", "big", "--json")
        took = time.monotonic() - started
    assert run.code == 0, str(run)
    assert run.copied() == {"databases": 1, "tables": 1, "partitions": count, "partition statistics": count // 10}
    last = run.err.splitlines()[-1]  # "... peak memory N MiB", the importer's own
    print(f"{count} partitions in {took:.1f} s ({count / took:.0f}/s); {last}")
    assert int(last.rsplit(" ", 2)[1]) < 400, last  # a batch of 500 at a time, not the table


async def test_an_unreachable_source_is_one_clear_line_and_exit_status_1(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    run = await import_hms(f"127.0.0.1:{port}", "127.0.0.1:1", "--retries", "2", "--timeout", "2")
    assert run.code == 1, str(run)
    assert f"the source metastore at thrift://127.0.0.1:{port} did not answer getVersion (3 tries" in run.err, run.err
    assert "Traceback" not in run.err
    bad = await _cli("import-hms", "--from", "http://hms:9083", "--to", "thrift://127.0.0.1:1")
    assert bad.code == 2, str(bad)
    assert bad.err == "metastore-gateway import-hms: --from 'http://hms:9083': the scheme must be thrift:// " \
                      "(thrift://host:port)\n", bad.err
