"""What a Hive 4 HiveServer2 asks its metastore for its own services, outside any statement: the active
workload-management resource plan (HiveServer2.start with Tez sessions reads it, and fails to start on an
error) and the scheduled queries due (ScheduledQueryExecutionService polls every
hive.scheduled.queries.executor.idle.sleep.time, 60s, logging each error). This metastore keeps neither
resource plans nor scheduled queries: it answers what Hive's metastore answers when it has none, and
refuses, saying so, the statements that would make one.
"""

from __future__ import annotations

from typing import Any

from gateway.thrift.convert import required
from gateway.thrift.idl import hms
from hive.limits import preview
from store.errors import NeverAllowed, NotFound

_NO_SCHEDULED_QUERIES = "this metastore keeps no scheduled queries"


def _schedule_name(key: Any) -> str:
    return preview(str(required(key.scheduleName if key else None, "scheduleKey.scheduleName")), 80)


class HiveServiceMethods:
    """Mixed into the Thrift handler; needs nothing of it."""

    async def get_active_resource_plan(self, request: Any) -> Any:
        """No plan is active (none can be made here): the response's resourcePlan unset, on which HiveServer2
        starts its Tez sessions without workload management, as with Hive's metastore holding none."""
        return hms.WMGetActiveResourcePlanResponse()

    async def scheduled_query_poll(self, request: Any) -> Any:
        """No query is due, in any namespace: none can be scheduled (scheduled_query_maintenance). An
        empty response (no executionId) is what Hive's metastore answers when none is due."""
        required(required(request, "request").clusterNamespace, "clusterNamespace")
        return hms.ScheduledQueryPollResponse()

    async def get_scheduled_query(self, scheduleKey: Any) -> Any:  # noqa: N803 - Hive's name
        """ALTER and DROP SCHEDULED QUERY read the query first: none exists here."""
        raise NotFound(f"scheduled query {_schedule_name(scheduleKey)} does not exist ({_NO_SCHEDULED_QUERIES})")

    async def scheduled_query_maintenance(self, request: Any) -> None:
        """CREATE, ALTER and DROP SCHEDULED QUERY: refused, saying so (MetaException), not UNKNOWN_METHOD."""
        query = required(required(request, "request").scheduledQuery, "scheduledQuery")
        raise NeverAllowed(f"{_NO_SCHEDULED_QUERIES}: scheduled query {_schedule_name(query.scheduleKey)} was "
                           "not changed; schedule it outside the metastore")
