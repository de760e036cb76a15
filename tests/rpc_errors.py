"""A gRPC failure as a client stub raises it, for fake stubs that stand in for a gateway that is
unreachable, stalls or loses an answer."""

from __future__ import annotations

import grpc


class RpcFailure(grpc.RpcError):
    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(details)
        self._code, self._details = code, details

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return self._details


def unavailable() -> RpcFailure:
    return RpcFailure(grpc.StatusCode.UNAVAILABLE, "connection refused")


def deadline_exceeded() -> RpcFailure:
    return RpcFailure(grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded")
