"""A real gateway in the test's process, on an event loop of its own thread, for Spark tests that drive
the Initiator and the Cleaner round by round (their own loops are off, so none can race a round)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Coroutine, TypeVar

from gateway.app import Gateway
from poller.compactor import Compactor
from tests.conftest import gateway_settings

T = TypeVar("T")


class ThreadGateway:
    """A Gateway on an event loop of its own thread; `run` awaits a coroutine there."""

    def __init__(self, dsn: str, data_roots: str) -> None:
        """`data_roots`: metastore.gateway.data.roots, the directories holding the test's tables (the
        Cleaner deletes nothing outside them)."""
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="gateway-loop", daemon=True)
        self._thread.start()
        # The loops are driven by the test; the Cleaner's own loop is off so it cannot race a round.
        self.gw = Gateway(gateway_settings(dsn, **{"hive.compactor.initiator.on": "false",
                                                   "hive.compactor.cleaner.on": "false",
                                                   "metastore.gateway.data.roots": data_roots}))
        self.run(self.gw.start())
        self.address = f"127.0.0.1:{self.gw.port}"

    @property
    def compactor(self) -> Compactor:
        assert self.gw.compactor is not None
        return self.gw.compactor

    def run(self, coro: Coroutine[Any, Any, T], timeout_s: float = 120) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout_s)

    def stop(self) -> None:
        try:
            self.run(self.gw.stop())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(30)
            self.loop.close()
