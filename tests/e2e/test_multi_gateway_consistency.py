"""Three caching gateway processes on one database, writers committing and aborting through all of
them, readers with snapshots through all of them, over gRPC and over Hive's Thrift API: every read
equals what PostgreSQL answers for that snapshot in the same protocol (a fourth gateway with the cache
disabled is the oracle), a read made over both protocols at once describes the same objects in both,
and no write answers NOT_FOUND for a table that kept its name throughout the call while other tables
are altered, renamed and re-created; those tables are read too, by both names, under snapshots from
before and after their renames and re-creations; and the ACID tables are read without a snapshot, as Hive
2.3 and Trino read them (over Thrift: committed states of the table, never going backwards per gateway;
over gRPC: refused). The driver is loadtest/consistency/ (writer, reader, judge,
thrift_side; loadtest/ddl_race.py judges the writes).

Three lengths, the same checks: the short run here is in `make test` (SHORT_DURATION_S); the 20 s run
(marked `soak`) in `make test-bench`; the long one is `make consistency` (300 s).

The seed is printed; CONSISTENCY_SEED=<seed> replays the same choices (timing still varies).
CONSISTENCY_DURATION overrides the length of the 20 s run (seconds).
"""

from __future__ import annotations

import asyncio
import os

import pytest

from loadtest.consistency import CACHED_GATEWAY_CONF, ORACLE_CONF, ConsistencyConfig, run_consistency, seed_from_env
from tests.conftest import GatewayProcess

DURATION_S = float(os.environ.get("CONSISTENCY_DURATION", "20"))
SHORT_DURATION_S = 6.0


def _conf(items: tuple[str, ...]) -> list[str]:
    return [arg for item in items for arg in ("--conf", item)]


async def test_every_read_through_three_caching_gateways_equals_the_database_short_run(pg_dsn: str) -> None:
    await _check_consistency(pg_dsn, SHORT_DURATION_S)


@pytest.mark.soak
async def test_every_read_through_three_caching_gateways_equals_the_database(pg_dsn: str) -> None:
    await _check_consistency(pg_dsn, DURATION_S)


async def _check_consistency(pg_dsn: str, duration_s: float) -> None:
    seed = seed_from_env()
    print(f"\nconsistency seed: {seed} (rerun with CONSISTENCY_SEED={seed})")
    processes = [GatewayProcess("--dsn", pg_dsn, *_conf(CACHED_GATEWAY_CONF)) for _ in range(3)]
    processes.append(GatewayProcess("--dsn", pg_dsn, *_conf(ORACLE_CONF)))
    try:
        addresses = await asyncio.gather(*(asyncio.to_thread(p.wait_serving) for p in processes))
        thrift = [p.thrift_address for p in processes]  # every gateway serves Hive's Thrift API too
        report = await run_consistency(addresses[:3], addresses[3], ConsistencyConfig(duration_s=duration_s, seed=seed),
                                       thrift_addresses=thrift[:3], thrift_oracle_address=thrift[3])
    finally:
        codes = [p.stop() for p in processes]
    print(report.summary())
    assert codes == [0, 0, 0, 0], [p.output()[-3000:] for p in processes]
    assert not report.errors, report.summary()
    early = [v for v in report.violations if v.scope == "own_writes_early_snapshot"]
    assert not [v for v in report.violations if v not in early], report.summary()
    compared = sum(v for k, v in report.counts.items() if k.startswith("compared."))
    # How much the run did, not what it found: the 6 s run in `make test` committed 10 txns (0 violations) while
    # two soaks shared this 2-core machine, so the floor leaves room for a loaded machine.
    assert compared > 200 and report.counts["txns_committed"] >= 5 and report.counts["txns_aborted"] > 0, \
        report.summary()
    assert report.counts["ext_monotonic_checked"] > 0 and report.counts["compared.ext_token"] > 0, report.summary()
    # A share of the reads went over Hive's Thrift API, with the snapshot (compared with the oracle's Thrift
    # answer, and with the same read over gRPC), and to the external tables without one.
    assert report.counts["thrift_reads"] > 0 and report.counts["compared.cross_protocol"] > 0, report.summary()
    assert sum(v for k, v in report.counts.items() if k.startswith("compared.thrift_")) > 0, report.summary()
    assert report.counts["thrift_ext_monotonic_checked"] > 0, report.summary()
    # The ACID tables without a snapshot: over Thrift their committed states, never going backwards per
    # gateway (and the committer's gateway shows its commit at once); over gRPC refused by all alike.
    assert report.counts["latest_monotonic_checked"] > 0 and report.counts["own_commit_reads"] > 0, report.summary()
    assert report.counts["compared.thrift_final_latest"] > 0, report.summary()
    # Writes were judged while tables were altered, renamed and re-created beside them (no write_not_found
    # violation: the violations assertion above covers it).
    assert report.counts["churn_writes_judged"] > 5 and report.counts["churn_alter"] > 5, report.summary()
    assert report.counts["churn_rename"] + report.counts["churn_recreate"] > 0, report.summary()
    # Snapshot reads of the churn tables, by their names and the names they are renamed to, compared with
    # the oracle like any other (scopes churn_*, thrift_churn_*).
    assert report.counts["churn_reads"] > 0, report.summary()
    assert sum(v for k, v in report.counts.items() if k.startswith("compared.churn_")) > 0, report.summary()
    for share in report.shares:
        # Every read the driver sent was decided exactly once by the cache (a hit or a miss with a reason).
        assert share.lookups == share.reads_sent, report.summary()
        assert share.hits > 0, report.summary()
    for sweep in report.final_sweep:
        # Caught up and quiet: a fresh snapshot is answered from every gateway's cache.
        assert sweep.hits == sweep.reads_sent, report.summary()
    # Read-your-own-writes with the snapshot the txn took before it wrote (plus its txn id), through a
    # gateway other than the one that took the write, before that gateway's poller applied the write.
    assert not early, report.summary()
