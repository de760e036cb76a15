"""What a Hive 4 HiveServer2 asks for its own services (gateway/thrift/hs2_service_methods.py): the active
resource plan, which its start with Tez sessions reads and fails on an error; the scheduled queries due,
which its ScheduledQueryExecutionService polls every minute; and the statements that would make either,
refused saying so. Over a real gateway's Thrift port, in Hive 4's IDL shapes."""

from __future__ import annotations

import pytest

from gateway.thrift.idl import hms
from tests.conftest import running_gateway
from tests.thrift_client import client_with_database


async def test_hiveserver2_finds_no_active_resource_plan_and_no_scheduled_query_due(pg_dsn: str) -> None:
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as call:
        plan = await call("get_active_resource_plan", hms.WMGetActiveResourcePlanRequest(ns="default"))
        assert plan == hms.WMGetActiveResourcePlanResponse()  # resourcePlan unset: none is active
        assert await call("get_active_resource_plan", hms.WMGetActiveResourcePlanRequest()) == plan
        due = await call("scheduled_query_poll", hms.ScheduledQueryPollRequest(clusterNamespace="hive"))
        assert due == hms.ScheduledQueryPollResponse()  # no executionId: nothing due
        with pytest.raises(hms.MetaException, match="clusterNamespace is required"):
            await call("scheduled_query_poll", hms.ScheduledQueryPollRequest())


async def test_scheduled_query_statements_are_refused_saying_why(pg_dsn: str) -> None:
    """CREATE SCHEDULED QUERY (maintenance, type CREATE) is refused with MetaException, not an unknown
    method; ALTER and DROP first read the query, which does not exist."""
    async with running_gateway(pg_dsn) as gw, client_with_database(gw.thrift_port) as call:
        key = hms.ScheduledQueryKey(scheduleName="nightly", clusterNamespace="hive")
        request = hms.ScheduledQueryMaintenanceRequest(type=1, scheduledQuery=hms.ScheduledQuery(
            scheduleKey=key, enabled=True, schedule="0 0 2 * * ? *", user="etl", query="insert into t select 1"))
        with pytest.raises(hms.MetaException, match="keeps no scheduled queries: scheduled query 'nightly'"):
            await call("scheduled_query_maintenance", request)
        with pytest.raises(hms.NoSuchObjectException, match="scheduled query 'nightly' does not exist"):
            await call("get_scheduled_query", key)
        assert await call("scheduled_query_poll", hms.ScheduledQueryPollRequest(clusterNamespace="hive")) == \
            hms.ScheduledQueryPollResponse()
