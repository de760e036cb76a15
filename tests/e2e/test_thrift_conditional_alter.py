"""Hive's conditional alter (HIVE-26882: the alter's EnvironmentContext names expected_parameter_key and
expected_parameter_value, and Hive 4's AlterTableRequest the same as fields): Iceberg's HiveCatalog commits
without a lock by altering its table's metadata_location only if it still holds the one its writer read.
Of concurrent commits from one base, exactly one wins, through any gateway; the others fail with Hive's
MetaException, whose message Iceberg reads as a failed commit, and change nothing. Hive's own answers to
each case are compared in tests/e2e/test_thrift_differential.py (CONDITIONAL_STEPS); here, what needs two
clients at once, and alter_table_req's forms.

Also alter_table_req's CASCADE (its context's, as Hive 4's HiveMetaStoreClient sends every alter): the
partitions take the table's new columns, under the request's txn too."""

from __future__ import annotations

import asyncio

import pytest

from gateway.thrift.idl import hms
from tests.conftest import running_gateway, wait_applied
from tests.thrift_client import ThriftClient, client_with_database, thrift_table

BASE = "s3://w/ice/v1.json"


def _commit_of(table: hms.Table, new: str) -> hms.Table:
    table.parameters = {**table.parameters, "metadata_location": new, "previous_metadata_location": BASE}
    return table


def _expecting(value: str) -> hms.EnvironmentContext:
    return hms.EnvironmentContext(properties={"expected_parameter_key": "metadata_location",
                                              "expected_parameter_value": value})


async def test_of_concurrent_commits_from_one_base_through_two_gateways_exactly_one_wins(pg_dsn: str) -> None:
    async with running_gateway(pg_dsn) as a, running_gateway(pg_dsn) as b, \
            client_with_database(a.thrift_port) as call:
        await call("create_table", thrift_table("ice", table_type="EXTERNAL_TABLE", EXTERNAL="TRUE",
                                                metadata_location=BASE))
        writers = [ThriftClient(port) for port in (a.thrift_port, b.thrift_port) for _ in range(3)]
        try:
            read = [await w("get_table", "db", "ice") for w in writers]  # every writer read the base

            async def commit(i: int) -> str:
                new = f"s3://w/ice/v2-{i}.json"
                try:
                    await writers[i]("alter_table_with_environment_context", "db", "ice", _commit_of(read[i], new),
                                     _expecting(BASE))
                except hms.MetaException as failed:
                    assert failed.message.startswith(
                        "The table has been modified. The parameter value for key 'metadata_location' is "
                        "'s3://w/ice/v2-"), failed.message
                    assert failed.message.endswith(f"'. The expected was value was '{BASE}'")
                    return ""
                return new

            won = [new for new in await asyncio.gather(*(commit(i) for i in range(len(writers)))) if new]
            assert len(won) == 1
            for gw in (a, b):  # each gateway's cache has applied the winner's alter (through either)
                await wait_applied(gw)
            for w in writers[:1] + writers[3:4]:  # as each gateway now answers
                assert (await w("get_table", "db", "ice")).parameters["metadata_location"] == won[0]
        finally:
            for w in writers:
                w.close()


async def test_hive4_alter_table_req_carries_the_condition_in_its_fields_or_its_context(pg_dsn: str) -> None:
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as call:
        await call("create_table", thrift_table("ice", metadata_location=BASE))

        def request(new: str, expected: str, *, in_fields: bool) -> hms.AlterTableRequest:
            return hms.AlterTableRequest(
                dbName="db", tableName="ice", table=_commit_of(thrift_table("ice"), new),
                **({"expectedParameterKey": "metadata_location", "expectedParameterValue": expected} if in_fields
                   else {"environmentContext": _expecting(expected)}))

        await call("alter_table_req", request("v2", BASE, in_fields=True))
        with pytest.raises(hms.MetaException, match="The table has been modified. The parameter value for key "
                                                    "'metadata_location' is 'v2'. The expected was value was"):
            await call("alter_table_req", request("v2b", BASE, in_fields=True))
        with pytest.raises(hms.MetaException, match="is 'v2'"):
            await call("alter_table_req", request("v2c", BASE, in_fields=False))
        await call("alter_table_req", request("v3", "v2", in_fields=False))
        assert (await call("get_table", "db", "ice")).parameters["metadata_location"] == "v3"


async def test_alter_table_req_cascades_as_its_context_says_also_under_a_txn(pg_dsn: str) -> None:
    """Hive 4's ALTER TABLE ... ADD COLUMNS ... CASCADE: alter_table_req with CASCADE=true in its context
    (and, for a transactional table, the txn's write id): a partition with columns of its own takes the
    table's new ones; without CASCADE it keeps its own."""
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as call:
        cascade = hms.EnvironmentContext(properties={"CASCADE": "true"})
        for name, acid in (("plain", {}), ("acid", {"transactional": "true"})):
            await call("create_table", thrift_table(name, keys=("p",), **acid))
            write_id, txn = 0, 0
            if acid:
                (txn,) = (await call("open_txns", hms.OpenTxnRequest(num_txns=1, user="u", hostname="h"))).txn_ids
                (alloc,) = (await call("allocate_table_write_ids", hms.AllocateTableWriteIdsRequest(
                    dbName="db", tableName=name, txnIds=[txn]))).txnToWriteIds
                write_id = alloc.writeId
            table = await call("get_table", "db", name)
            for value in ("a", "b"):
                part = hms.Partition(values=[value], dbName="db", tableName=name, sd=table.sd, parameters={},
                                     writeId=write_id or None)
                await call("add_partitions", [part])
            table.sd.cols = [*table.sd.cols, hms.FieldSchema(name="added", type="string", comment="")]
            await call("alter_table_req", hms.AlterTableRequest(dbName="db", tableName=name, table=table,
                                                                environmentContext=cascade, writeId=write_id or None))
            table.sd.cols = [*table.sd.cols, hms.FieldSchema(name="only_table", type="string", comment="")]
            await call("alter_table_req", hms.AlterTableRequest(dbName="db", tableName=name, table=table,
                                                                writeId=write_id or None))
            if txn:
                await call("commit_txn", hms.CommitTxnRequest(txnid=txn))
            for value in ("a", "b"):
                cols = [c.name for c in (await call("get_partition", "db", name, [value])).sd.cols]
                assert cols == ["id", "added"], (name, value, cols)
            assert [c.name for c in (await call("get_table", "db", name)).sd.cols] == ["id", "added", "only_table"]
