"""Run the exposure's app under uvicorn, draining before it stops.

uvicorn's own shutdown stops accepting and then waits for open connections before it runs the
lifespan shutdown — but an event stream stays open until its run parks, and runs are parked by
the drain. So the first SIGTERM/SIGINT (or ``exposure.request_shutdown()``) starts
``exposure.drain()`` instead: new runs are refused with 503 while the server still answers,
live runs park at a safe point (or finish) within the grace period, open streams end; only then
does uvicorn's shutdown begin. A second SIGINT forces the exit.
"""

from __future__ import annotations

import asyncio
import signal
import socket
from types import FrameType
from typing import Any

import uvicorn

from agentdeck.deck.serving import Exposure
from agentdeck.errors import ConfigError
from agentdeck.ports import ASGIApp

__all__ = ["listen"]

_REFUSED = {
    "app": "the app is the exposure's own",
    "lifespan": "the exposure's lifespan always runs",
    "workers": "several workers need an import string: run `uvicorn module:app --workers N` "
    "with app = deck.asgi(...) in that module",
    "reload": "reloading needs an import string: run `uvicorn module:app --reload` with "
    "app = deck.asgi(...) in that module",
    "fd": "pass host and port",
    "uds": "pass host and port",
}


class _DrainingServer(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, exposure: Exposure) -> None:
        super().__init__(config)
        self.exposure = exposure
        self._drain: asyncio.Task[None] | None = None

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        # Not uvicorn's: an exit begins with a drain, and the signal is not raised again after.
        if self.exposure.shutdown_requested and sig == signal.SIGINT:
            self.force_exit = True
            self.should_exit = True
            return
        self.exposure.request_shutdown()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        bound: list[tuple[str, int]] = []
        for server in self.servers:
            for sock in server.sockets:
                address = sock.getsockname()
                if isinstance(address, tuple):
                    bound.append((str(address[0]), int(address[1])))
        self.exposure.notify_listening(bound)

    async def on_tick(self, counter: int) -> bool:
        if await super().on_tick(counter):
            return True
        if not self.exposure.shutdown_requested:
            return False
        if self._drain is None:
            self._drain = asyncio.create_task(self.exposure.drain())
        return self._drain.done()


async def listen(app: ASGIApp, exposure: Exposure, *, host: str, port: int, **options: Any) -> None:
    """Serve ``app`` on ``host:port`` until a stop signal or ``exposure.request_shutdown()``.

    ``options`` are ``uvicorn.Config`` keywords (``log_level``, ``proxy_headers``,
    ``ssl_certfile``, ...); ``timeout_graceful_shutdown`` defaults to the exposure's grace plus
    five seconds, a bound on how long finished-but-open connections may hold the exit.
    """
    for option, why in _REFUSED.items():
        if option in options:
            raise ConfigError(f"serve option {option!r} is not supported: {why}", setting=option)
    options.setdefault("timeout_graceful_shutdown", int(exposure.grace) + 5)
    options.setdefault("log_level", "info")
    try:
        config = uvicorn.Config(app, host=host, port=port, lifespan="on", **options)
    except TypeError as unknown:
        raise ConfigError(f"unknown serve option: {unknown}") from None
    server = _DrainingServer(config, exposure)
    try:
        await server.serve()
    except SystemExit:
        # uvicorn exits the process when the lifespan startup fails; say why instead.
        failure = exposure.startup_error
        if failure is not None:
            raise failure from None
        raise ConfigError("the server failed to start; see the log above") from None
