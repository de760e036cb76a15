"""The import's pure parts: endpoint addresses, what counts as the same object, the retry's bound, the summary."""

from __future__ import annotations

import io
import itertools
import socket
import threading
import time
from typing import Any

import pytest
import thriftpy2.rpc
from thriftpy2.thrift import TApplicationException

from gateway.hms_import.compare import differences, plain
from gateway.hms_import.endpoint import (ImportUsageError, EndpointAddress, EndpointUnreachable, RetryPolicy,
                                         ThriftEndpoint, parse_thrift_url)
from gateway.hms_import.report import Progress, Summary
from gateway.thrift.idl import SERVICE, hms
from hive.backoff import Backoff


@pytest.mark.parametrize("text, host, port", [("thrift://hms.example:9083", "hms.example", 9083),
                                              ("127.0.0.1:9083", "127.0.0.1", 9083),
                                              ("thrift://[::1]:9083/", "::1", 9083)])
def test_an_endpoint_is_host_and_port(text: str, host: str, port: int) -> None:
    assert parse_thrift_url(text, "--from") == EndpointAddress(host, port)


@pytest.mark.parametrize("text, says", [("http://h:1", "scheme must be thrift"), ("thrift://h", "thrift://host:port"),
                                        ("thrift://h:99999", "port must be a number"),
                                        ("thrift://h:1/db", "no path or query"), ("thrift://:1", "host:port")])
def test_a_bad_endpoint_says_what_is_wrong(text: str, says: str) -> None:
    with pytest.raises(ImportUsageError, match=says):
        parse_thrift_url(text, "--from")


def _table(**params: str) -> Any:
    sd = hms.StorageDescriptor(cols=[hms.FieldSchema(name="id", type="bigint", comment=None)], location="file:/t",
                               skewedInfo=None)
    return hms.Table(tableName="t", dbName="db", owner="alice", createTime=1, sd=sd, parameters=dict(params),
                     tableType="MANAGED_TABLE", id=-1, writeId=-1)


def test_what_differs_by_nature_is_not_a_difference() -> None:
    source = _table(transient_lastDdlTime="1", numFiles="3", totalSize="10", k="v")
    gateway = _table(transient_lastDdlTime="2", k="v")
    gateway.createTime, gateway.id, gateway.writeId, gateway.catName = 99, 7, 3, "hive"
    gateway.sd.cols[0].comment = ""
    gateway.sd.skewedInfo = hms.SkewedInfo(skewedColNames=[], skewedColValues=[], skewedColValueLocationMaps={})
    gateway.ownerType = 1  # the source (Hive 2.3) leaves it unset: not compared
    assert differences(plain(source), plain(gateway)) == []


def test_each_difference_is_named_by_its_path() -> None:
    source, gateway = _table(k="v", gone="x"), _table(k="w", extra="y")
    gateway.sd.location = "file:/elsewhere"
    assert differences(plain(source), plain(gateway)) == [
        "parameters.extra: source has none, gateway 'y'", "parameters.gone: source 'x', gateway has none",
        "parameters.k: source 'v', gateway 'w'", "sd.location: source 'file:/t', gateway 'file:/elsewhere'"]


def test_the_default_databases_location_is_each_metastores_own() -> None:
    source = hms.Database(name="default", locationUri="file:/a", parameters={})
    assert differences(plain(source), plain(hms.Database(name="default", locationUri="file:/b", parameters={}))) == []
    other = hms.Database(name="sales", locationUri="file:/a", parameters={})
    assert differences(plain(other), plain(hms.Database(name="sales", locationUri="file:/b", parameters={})))


def test_a_lost_connection_is_tried_a_bounded_number_of_times_with_back_off() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens once it is closed
    waits: list[float] = []
    policy = RetryPolicy(call_timeout_s=1, retries=3, backoff=Backoff(initial_s=0.5, max_s=1.0))
    endpoint = ThriftEndpoint("source", EndpointAddress("127.0.0.1", port), policy, sleep=waits.append)
    with pytest.raises(EndpointUnreachable, match=rf"source metastore at thrift://127.0.0.1:{port} did not answer "
                                                  r"getVersion \(4 tries, each within 1 s\)"):
        endpoint.call("getVersion")
    assert waits == [0.5, 1.0, 1.0]


def test_a_server_that_comes_back_within_the_retries_is_answered_on_a_new_connection() -> None:
    """Nothing listens for the first two tries; a real Thrift server is started during the second wait."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    class Handler:
        def getVersion(self) -> str:  # noqa: N802 - Thrift's name
            return "2.3.10"

    server = thriftpy2.rpc.make_server(SERVICE, Handler(), "127.0.0.1", port)
    waits: list[float] = []

    def wait(seconds: float) -> None:
        waits.append(seconds)
        if len(waits) == 2:
            threading.Thread(target=server.serve, daemon=True).start()  # it listens first
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    return
                except OSError:
                    time.sleep(0.01)

    policy = RetryPolicy(call_timeout_s=5, retries=5, backoff=Backoff(initial_s=0.1, max_s=1.0))
    endpoint = ThriftEndpoint("source", EndpointAddress("127.0.0.1", port), policy, sleep=wait)
    try:
        assert endpoint.call("getVersion") == "2.3.10"
        assert waits == [0.1, 0.2] and endpoint.calls == 1  # the two tries before found no one to call
    finally:
        endpoint.close()
        server.close()


def test_the_summary_is_complete_only_without_problems() -> None:
    summary = Summary()
    summary.add("tables", "copied", 3)
    summary.add("partitions", "identical", 10)
    assert summary.ok and "import: complete" in summary.text()
    summary.add("tables", "differing", name="db.t", reason="parameters.k: source 'v', gateway 'w'")
    assert not summary.ok
    assert "differing: table db.t: parameters.k: source 'v', gateway 'w'" in summary.text()


def test_progress_is_shown_at_most_once_an_interval_and_at_the_end() -> None:
    out, ticks = io.StringIO(), itertools.count()
    progress = Progress(out, interval_s=5, clock=lambda: float(next(ticks)))
    progress.start("partitions", 10)
    for _ in range(10):
        progress.advance()
    progress.finish()
    lines = out.getvalue().splitlines()
    assert lines[0] == "import: partitions: 10 to go through"
    assert lines[1].startswith("import: partitions: 5/10 (50%), 1/s")
    assert lines[-1].startswith("import: partitions: 10/10 (100%)") and lines[-1].endswith("done")


class _Fake:
    """An endpoint answering from `answers` (method -> function of its arguments), recording every call; a
    method it lacks answers UNKNOWN_METHOD, as an older Hive does."""

    has_method = ThriftEndpoint.has_method

    def __init__(self, **answers: Any) -> None:
        self.answers = answers
        self.calls: list[tuple[str, tuple[Any, ...]]] = []

    def call(self, method: str, *args: Any) -> Any:
        self.calls.append((method, args))
        if method not in self.answers:
            raise TApplicationException(TApplicationException.UNKNOWN_METHOD, f"Invalid method name: '{method}'")
        return self.answers[method](*args)

    def written(self) -> list[str]:
        return [m for m, _ in self.calls if not m.startswith(("get_", "list_"))]


_U, _R = hms.PrincipalType.USER, hms.PrincipalType.ROLE
_GLOBAL = hms.HiveObjectType.GLOBAL


def _member(role: str, principal: str, kind: int, grantor: str, grantor_type: int) -> Any:
    return hms.RolePrincipalGrant(roleName=role, principalName=principal, principalType=kind, grantOption=False,
                                  grantTime=1, grantorName=grantor, grantorPrincipalType=grantor_type)


def _privilege(principal: str, kind: int, privilege: str, grantor: str, grantor_type: int) -> Any:
    return hms.HiveObjectPrivilege(hiveObject=hms.HiveObjectRef(objectType=_GLOBAL), principalName=principal,
                                   principalType=kind, grantInfo=hms.PrivilegeGrantInfo(
                                       privilege=privilege, createTime=1, grantor=grantor, grantorType=grantor_type,
                                       grantOption=False))


def _source_with_roles() -> _Fake:
    members = {"admin": [_member("admin", "hive", _U, "admin", _R), _member("admin", "ops", _U, "bob", _U)],
               "analysts": [_member("analysts", "alice", _U, "bob", _U)]}
    owned = [hms.Role(roleName="analysts", ownerName="bob")]
    return _Fake(get_role_names=lambda: ["admin", "public", "analysts"],
                 get_principals_in_role=lambda req: hms.GetPrincipalsInRoleResponse(
                     principalGrants=members[req.roleName]),
                 list_roles=lambda name, kind: owned if name == "alice" else [],
                 list_privileges=lambda name, kind, ref: [_privilege("admin", _R, "All", "admin", _R),
                                                          _privilege("alice", _U, "SELECT", "bob", _U)])


def _empty_gateway(**writes: Any) -> _Fake:
    return _Fake(get_role_names=lambda: ["admin", "public"], list_roles=lambda name, kind: [],
                 get_principals_in_role=lambda req: hms.GetPrincipalsInRoleResponse(principalGrants=[]),
                 list_privileges=lambda name, kind, ref: [_privilege("admin", _R, "All", "admin", _R)],
                 **{m: writes.get(m, lambda *a: True) for m in ("create_role", "grant_role", "grant_privileges")})


def test_the_built_in_roles_and_their_implicit_grants_are_not_copied() -> None:
    """`admin` and `public` exist everywhere; each metastore grants `admin` to its hive.users.in.admin.role users
    and ALL on GLOBAL to `admin` itself at its start. An explicit grant of `admin` is copied."""
    from gateway.hms_import.grants import GrantCopier

    source, gateway, summary = _source_with_roles(), _empty_gateway(), Summary()
    GrantCopier(source, gateway, summary, Progress(io.StringIO()), io.StringIO()).run([], [])  # type: ignore[arg-type]
    assert gateway.written() == ["create_role", "grant_role", "grant_role", "grant_privileges"]
    assert gateway.calls[[m for m, _ in gateway.calls].index("create_role")][1] == (
        hms.Role(roleName="analysts", createTime=0, ownerName="bob"),)
    assert [(m, a[:2]) for m, a in gateway.calls if m == "grant_role"] == [("grant_role", ("admin", "ops")),
                                                                          ("grant_role", ("analysts", "alice"))]
    (bag,) = [a[0] for m, a in gateway.calls if m == "grant_privileges"]
    assert [(p.principalName, p.grantInfo.privilege, p.grantInfo.grantor) for p in bag.privileges] == [
        ("alice", "SELECT", "bob")]
    assert summary.ok and summary.counts["roles", "copied"] == 1 and summary.counts["role grants", "copied"] == 2


def test_a_connection_that_is_no_admin_is_told_once_and_nothing_more_is_tried() -> None:
    from gateway.hms_import.grants import GrantCopier

    from gateway.auth import Identity, thrift_identity
    from gateway.thrift.privilege_methods import _check_role_admin
    from store.errors import PermissionDenied

    def refuse(*args: Any) -> None:  # the gateway's own refusal of an authenticated non-admin, as Thrift carries it
        token = thrift_identity.set(Identity("bob", authenticated=True, admin=False))
        try:
            _check_role_admin("create_role")
        except PermissionDenied as exc:
            raise hms.MetaException(message=str(exc)) from None
        finally:
            thrift_identity.reset(token)
        raise AssertionError("a non-admin managed a role")

    source, gateway, summary = _source_with_roles(), _empty_gateway(create_role=refuse), Summary()
    GrantCopier(source, gateway, summary, Progress(io.StringIO()), io.StringIO()).run([], [])  # type: ignore[arg-type]
    assert gateway.written() == ["create_role"]
    assert [(p.kind, p.outcome) for p in summary.problems] == [
        ("roles", "failed"), ("role grants", "skipped"), ("role grants", "skipped"), ("privileges", "skipped")]
    assert "run the import as an admin (hive.users.in.admin.role)" in summary.problems[1].reason
    assert len(summary.notes) == 1 and "need an admin of the gateway" in summary.notes[0]


def test_foreign_keys_are_added_after_every_key_they_may_refer_to() -> None:
    """`a` (listed first) refers to `b`'s primary key: b's key goes first. A Hive 2.3 source answers Hive 3's
    constraint reads UNKNOWN_METHOD: a note, and only primary and foreign keys."""
    from gateway.hms_import.constraints import HIVE3_NOTE, ConstraintCopier
    from gateway.hms_import.grants import SourceTable

    pk = hms.SQLPrimaryKey(table_db="d", table_name="b", column_name="id", key_seq=1, pk_name="pk_b")
    fk = hms.SQLForeignKey(pktable_db="d", pktable_name="b", pkcolumn_name="id", fktable_db="d", fktable_name="a",
                           fkcolumn_name="b_id", key_seq=1, fk_name="fk_a_b", pk_name="pk_b")
    source = _Fake(get_primary_keys=lambda req: hms.PrimaryKeysResponse(
                       primaryKeys=[pk] if req.tbl_name == "b" else []),
                   get_foreign_keys=lambda req: hms.ForeignKeysResponse(
                       foreignKeys=[fk] if req.foreign_tbl_name == "a" else []))
    gateway = _Fake(get_primary_keys=lambda req: hms.PrimaryKeysResponse(primaryKeys=[]),
                    get_foreign_keys=lambda req: hms.ForeignKeysResponse(foreignKeys=[]),
                    add_primary_key=lambda req: None, add_foreign_key=lambda req: None)
    tables = [SourceTable("d", name, hms.Table(tableName=name, dbName="d", tableType="MANAGED_TABLE"))
              for name in ("a", "b")]
    summary = Summary()
    ConstraintCopier(source, gateway, summary, Progress(io.StringIO()), io.StringIO()).run(tables)  # type: ignore[arg-type]
    assert gateway.written() == ["add_primary_key", "add_foreign_key"]
    assert summary.ok and summary.counts["constraints", "copied"] == 2 and summary.notes == [HIVE3_NOTE]
    assert [m for m, _ in source.calls].count("get_unique_constraints") == 1  # asked once
