"""The event types are one enum whose values are wire strings: stored in the notification log and
sent to clients (and matched by the poller's apply code), so none may ever change."""

from __future__ import annotations

from store.events import EventType

WIRE = {
    "CREATE_DATABASE", "ALTER_DATABASE", "DROP_DATABASE", "CREATE_TABLE", "ALTER_TABLE", "DROP_TABLE",
    "ADD_PARTITION", "ALTER_PARTITION", "DROP_PARTITION", "OPEN_TXN", "COMMIT_TXN", "ABORT_TXN",
    "ALLOC_WRITE_ID_EVENT", "VERSIONS_GC", "ABORTED_WRITES_FORGOTTEN", "CREATE_FUNCTION", "DROP_FUNCTION",
    "INSERT", "WRITE_IDS_SEEDED", "ADD_PRIMARYKEY", "ADD_FOREIGNKEY", "ADD_UNIQUECONSTRAINT", "ADD_NOTNULLCONSTRAINT",
    "ADD_DEFAULTCONSTRAINT", "ADD_CHECKCONSTRAINT", "DROP_CONSTRAINT",
}


def test_every_event_type_keeps_its_wire_string() -> None:
    assert {t.value for t in EventType} == WIRE


def test_a_member_is_its_wire_string_for_comparisons_and_lookups() -> None:
    assert EventType.ALLOC_WRITE_ID == "ALLOC_WRITE_ID_EVENT"
    assert {"COMMIT_TXN": 1}[EventType.COMMIT_TXN] == 1
    assert EventType("DROP_TABLE") is EventType.DROP_TABLE
    assert f"{EventType.ADD_PARTITION}" == "ADD_PARTITION" and str(EventType.ADD_PARTITION) == "ADD_PARTITION"
