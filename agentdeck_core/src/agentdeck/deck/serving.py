"""Serving a deck through bindings: what ``deck.expose/asgi/serve/serve_async`` are built on.

An :class:`Exposure` is one deck served over a set of bindings (see
:class:`~agentdeck.ports.Binding`). It owns the lifecycle they share:

* **startup** opens the deck — unless the caller already opened it, in which case the deck is
  theirs and is left open — then starts every *running* binding (``serve(deck)``, the terminal
  chat) as a task;
* the **listener** bindings (HTTP) each contribute an ASGI app; the exposure composes them into
  one app that dispatches requests by path prefix and answers the ``lifespan`` scope itself, so
  one listener serves them all and the same runs are reachable over each at once;
* **drain** (on SIGTERM, or :meth:`Exposure.request_shutdown`) stops admitting runs, asks the live
  runs of a deck it opened to park at their next safe point (or finish) within a grace period,
  then tells open event streams to end, so a rolling restart loses nothing: a parked run
  continues in whichever worker is asked to resume it;
* **shutdown** cancels the running bindings and closes the deck it opened.

The core imports no web framework: the server itself is run by the listener binding
(:meth:`~agentdeck.ports.ListenerBinding.listen`).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import logging
import math
import signal
import threading
from collections.abc import (
    AsyncIterator,
    Iterable,
    Iterator,
    Mapping,
    MutableMapping,
    Sequence,
)
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from agentdeck.deck.service import RunService
from agentdeck.errors import ConfigError
from agentdeck.ports import (
    ASGIApp,
    Binding,
    Invocable,
    ListenerBinding,
    RunPage,
    RunQuery,
    RunRecord,
)
from agentdeck.vocabulary import RunStatus

if TYPE_CHECKING:
    from agentdeck.deck.deck import Deck
    from agentdeck.deck.runs import Run

__all__ = ["DEFAULT_GRACE", "Exposure", "ExposureState"]

log = logging.getLogger("agentdeck.serving")

DEFAULT_GRACE = 10.0
"""Seconds a drain waits for live runs to park or finish before cutting them."""

_Scope = MutableMapping[str, Any]


class ExposureState(StrEnum):
    """Where an exposure is in its life; bindings answer requests according to it."""

    STARTING = "starting"
    """Not started yet: the deck may not be open. Requests are refused (HTTP 503)."""
    READY = "ready"
    """Serving: runs may be started and read."""
    DRAINING = "draining"
    """Shutting down: no new runs or continuations; reads and pause/cancel still work."""
    STOPPED = "stopped"
    """Shut down; the deck it opened is closed."""


class Exposure:
    """One deck served over a set of bindings (``deck.expose(*bindings)``).

    :param deck: the deck to serve.
    :param bindings: :class:`~agentdeck.ports.Binding` instances, or names of registered
        bindings (``"http"``). None given serves ``Native.http()`` from agentdeck-http.
    :param grace: seconds a drain gives live runs to park or finish (default
        :data:`DEFAULT_GRACE`).
    """

    def __init__(
        self,
        deck: Deck,
        bindings: Iterable[Binding | str] = (),
        *,
        grace: float = DEFAULT_GRACE,
    ) -> None:
        self.deck = deck
        self.grace = _seconds(grace)
        resolved = tuple(self._resolve(binding) for binding in bindings)
        self.bindings: tuple[Binding, ...] = resolved or (_default_binding(),)
        _refuse_repeats(self.bindings)
        listeners = [b for b in self.bindings if isinstance(b, ListenerBinding)]
        _check_mount_paths(listeners)
        self.listeners: tuple[ListenerBinding, ...] = tuple(listeners)
        """The listener bindings, in the order given (the first one runs the server)."""
        self.runners: tuple[Binding, ...] = tuple(
            b for b in self.bindings if not isinstance(b, ListenerBinding)
        )
        """The running bindings, started as tasks once the deck is open."""
        self._routes = sorted(listeners, key=lambda b: len(b.mount_path), reverse=True)
        self._state = ExposureState.STARTING
        self._owns_deck = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._runner_errors: list[BaseException] = []
        self._drain_task: asyncio.Task[None] | None = None
        self._streams_closing = asyncio.Event()
        self._shutdown = asyncio.Event()
        self._shutdown_requested = False
        self._listening = asyncio.Event()
        self._addresses: tuple[tuple[str, int], ...] = ()
        self._app: _ComposedApp | None = None
        self._served = False
        self.startup_error: BaseException | None = None
        """Why the last startup failed, for a server that reports it in its own way."""

    def __repr__(self) -> str:
        names = ", ".join(type(b).__name__ for b in self.bindings)
        return f"Exposure({names}; {self._state.value})"

    # ------------------------------------------------------------------------------- state

    @property
    def state(self) -> ExposureState:
        return self._state

    @property
    def accepting(self) -> bool:
        """Whether new runs (and continuations of parked ones) are admitted."""
        return self._state is ExposureState.READY

    @property
    def owns_deck(self) -> bool:
        """Whether this exposure opened the deck (and so pauses its runs and closes it)."""
        return self._owns_deck

    @property
    def shutdown_requested(self) -> bool:
        return self._shutdown_requested

    @property
    def addresses(self) -> tuple[tuple[str, int], ...]:
        """``(host, port)`` pairs the listener is bound to, once it is (port 0 resolved)."""
        return self._addresses

    # ------------------------------------------------------------------------------- ASGI

    def asgi(self) -> ASGIApp:
        """The ASGI application serving every binding of this exposure.

        Its lifespan opens the deck on startup (a deck already open is left alone) and drains
        and closes on shutdown. Requests go to the listener binding with the longest matching
        mount path. When the host application does not forward the lifespan (an app mounted
        inside another), pass :meth:`lifespan` as the host's lifespan instead.
        """
        if self._app is None:
            apps = {id(binding): binding.asgi_app(self) for binding in self.listeners}
            self._app = _ComposedApp(self, [(b.mount_path, apps[id(b)]) for b in self._routes])
        return self._app

    @contextlib.asynccontextmanager
    async def lifespan(self, _app: object = None) -> AsyncIterator[None]:
        """Start on entry, drain and stop on exit: ``FastAPI(lifespan=exposure.lifespan)``."""
        await self.start()
        try:
            yield
        finally:
            await self.stop()

    # ------------------------------------------------------------------------------- lifecycle

    async def start(self) -> None:
        """Open the deck (unless it is open already) and start the running bindings."""
        if self._state is not ExposureState.STARTING:
            if self._state is ExposureState.READY:
                return
            raise ConfigError(f"this exposure is {self._state.value}; expose the deck again")
        self._loop = asyncio.get_running_loop()
        try:
            if not self.deck.is_open:
                await self.deck.open()  # raises for a closed deck, naming what to do
                self._owns_deck = True
        except BaseException as failure:
            self.startup_error = failure
            raise
        for binding in self.runners:
            task = asyncio.create_task(self._run(binding), name=f"binding:{type(binding).__name__}")
            self._tasks.append(task)
        self._state = ExposureState.READY
        log.info("serving %s", self)

    async def drain(self, grace: float | None = None) -> None:
        """Stop admitting runs, let live runs park or finish, then end the open event streams.

        Only the runs of a deck this exposure opened are asked to park (the runtime pauses them
        at their next safe point, and cuts what has not stopped within ``grace`` seconds); a
        deck the caller opened keeps running. Idempotent: a second call waits for the first.
        """
        if self._drain_task is None:
            self._drain_task = asyncio.create_task(self._drain(grace), name="exposure-drain")
        await asyncio.shield(self._drain_task)

    async def _drain(self, grace: float | None) -> None:
        if self._state is ExposureState.READY:
            self._state = ExposureState.DRAINING
        log.info("draining: new runs are refused")
        try:
            if self._owns_deck and self.deck.is_open:
                runtime = self.service.runtime
                await runtime.close(grace=self.grace if grace is None else grace)
        finally:
            self._streams_closing.set()

    async def stop(self) -> None:
        """Drain, cancel the running bindings and close the deck this exposure opened."""
        if self._state is ExposureState.STOPPED:
            return
        try:
            await self.drain()
            for task in self._tasks:
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            if self._owns_deck:
                await self.deck.aclose()
        finally:
            self._state = ExposureState.STOPPED
            self._shutdown_requested = True
            self._shutdown.set()
            self._streams_closing.set()

    def request_shutdown(self) -> None:
        """Ask a serving exposure to drain and stop (what SIGTERM does). Safe to call from a
        signal handler or another thread; returns at once."""
        self._shutdown_requested = True
        loop = self._loop
        if loop is not None and not loop.is_closed():
            # Never set the event in place: a signal handler may have interrupted the loop
            # mid-step. The loop sets it on its next turn.
            loop.call_soon_threadsafe(self._shutdown.set)

    async def wait_shutdown_requested(self) -> None:
        """Return once :meth:`request_shutdown` was called (or the exposure stopped)."""
        if self._shutdown_requested:
            return
        await self._shutdown.wait()

    async def wait_streams_closing(self) -> None:
        """Return once open event streams should end (the drain reached them)."""
        await self._streams_closing.wait()

    @property
    def streams_closing(self) -> bool:
        return self._streams_closing.is_set()

    def notify_listening(self, addresses: Sequence[tuple[str, int]]) -> None:
        """Record where the listener is bound; called by the listener binding."""
        self._addresses = tuple((str(host), int(port)) for host, port in addresses)
        self._listening.set()

    async def wait_listening(self) -> tuple[tuple[str, int], ...]:
        """Wait until the listener is bound and return its addresses."""
        await self._listening.wait()
        return self._addresses

    # ------------------------------------------------------------------------------- serving

    def serve(
        self,
        host: str = "127.0.0.1",
        port: int = 8000,
        *,
        grace: float | None = None,
        **options: Any,
    ) -> None:
        """Serve until stopped (SIGTERM/SIGINT drain first), owning the event loop."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            raise ConfigError(
                "deck.serve() owns the event loop and cannot run inside one; "
                "use `await deck.serve_async(...)` there"
            )
        asyncio.run(self.serve_async(host, port, grace=grace, **options))

    async def serve_async(
        self,
        host: str = "127.0.0.1",
        port: int = 8000,
        *,
        grace: float | None = None,
        **options: Any,
    ) -> None:
        """:meth:`serve` inside a running event loop.

        With a listener binding, the first one runs the server on ``host:port`` (``port=0``
        picks a free port; see :attr:`addresses`), and ``options`` go to it. With only running
        bindings, the deck is served until they all return or a shutdown is requested (SIGTERM
        in the main thread requests one). ``grace`` replaces the exposure's drain grace period.
        """
        if self._served:
            raise ConfigError("an exposure serves once; call deck.serve_async() again instead")
        self._served = True
        if grace is not None:
            self.grace = _seconds(grace)
        if self.listeners:
            server = self.listeners[0]
            try:
                await server.listen(self.asgi(), self, host=host, port=port, **options)
            finally:
                if self._state is not ExposureState.STARTING:
                    await self.stop()
            return
        if options:
            raise ConfigError(
                "serve options apply to a listener binding, and none is being served: "
                + ", ".join(sorted(options)),
                setting=sorted(options)[0],
            )
        async with self.lifespan():
            with self._sigterm_requests_shutdown():
                shutdown = asyncio.ensure_future(self.wait_shutdown_requested())
                running: set[asyncio.Future[None]] = set(self._tasks)
                try:
                    while running and not shutdown.done():
                        done, _ = await asyncio.wait(
                            {shutdown, *running}, return_when=asyncio.FIRST_COMPLETED
                        )
                        running -= done
                finally:
                    shutdown.cancel()
        if self._runner_errors:
            raise self._runner_errors[0]

    @contextlib.contextmanager
    def _sigterm_requests_shutdown(self) -> Iterator[None]:
        loop = asyncio.get_running_loop()
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        try:
            loop.add_signal_handler(signal.SIGTERM, self.request_shutdown)
        except (NotImplementedError, RuntimeError):  # pragma: no cover - platforms without it
            yield
            return
        try:
            yield
        finally:
            loop.remove_signal_handler(signal.SIGTERM)

    async def _run(self, binding: Binding) -> None:
        try:
            await binding.serve(self.deck)
        except asyncio.CancelledError:
            raise
        except Exception as failure:
            log.exception("binding %s failed", type(binding).__name__)
            self._runner_errors.append(failure)

    # ------------------------------------------------------------------------------- reading

    @property
    def service(self) -> RunService:
        """The served deck's run service (what every route acts on runs through)."""
        return self.deck.service

    def catalog(self) -> Mapping[str, list[str]]:
        """The served names: ``{"agents": [...], "workflows": [...], "skills": [...]}``."""
        catalog = self.deck._catalog
        return {
            "agents": sorted(catalog.agents),
            "workflows": sorted(catalog.workflows),
            "skills": sorted(catalog.skills),
        }

    def resolve(self, name: str) -> Invocable:
        """The compiled agent or workflow ``name`` addresses; :class:`NotFoundError` lists the
        catalog otherwise."""
        return self.deck._resolve(name)

    async def record(self, run_id: str, *, namespace: str | None) -> RunRecord:
        """The indexed record of a run in ``namespace``.

        A run of another namespace is reported exactly like one that does not exist, so a
        caller cannot tell the two apart.
        """
        return await self.service.find(run_id, namespace=namespace)

    async def run(self, run_id: str, *, namespace: str | None, context: Any = None) -> Run:
        """A handle on a run in ``namespace`` that continues it with ``context``.

        The context this process already holds for the run (the one it was started with) wins
        over ``context``; a handle from ``deck.runs.get()`` would carry none.
        """
        from agentdeck.deck.runs import Run

        record = await self.record(run_id, namespace=namespace)
        held = self.service.context_of(run_id)
        return Run(self.service, record, context=held if held is not None else context)

    async def list_runs(
        self,
        *,
        namespace: str | None,
        status: RunStatus | None = None,
        session_id: str | None = None,
        key: str | None = None,
        limit: int = 100,
        cursor: str | None = None,
    ) -> RunPage:
        """One page of a namespace's runs, oldest first, with the cursor of the next page."""
        return await self.service.list_runs(
            RunQuery(
                namespace=namespace,
                status=status,
                session_id=session_id,
                key=key,
                limit=limit,
                cursor=cursor,
            )
        )

    # ------------------------------------------------------------------------------- internals

    def _resolve(self, binding: object) -> Binding:
        if isinstance(binding, Binding):
            return binding
        if isinstance(binding, str):
            return self.deck.plugins.binding(binding)
        if isinstance(binding, type) and issubclass(binding, Binding):
            raise ConfigError(
                f"got the binding class {binding.__name__}; pass an instance built by one of its "
                f"constructors (e.g. Native.http(), Terminal.stdio())",
                setting="bindings",
            )
        raise ConfigError(
            "deck.serve()/asgi()/expose() take bindings (e.g. Native.http(), Terminal.stdio()) "
            f"or the name of a registered binding, not {type(binding).__name__}",
            setting="bindings",
        )


def _seconds(grace: object) -> float:
    if (
        isinstance(grace, bool)
        or not isinstance(grace, int | float)
        or not math.isfinite(grace)
        or grace < 0
    ):
        raise ConfigError(
            f"grace takes a finite number of seconds >= 0, not {grace!r}", setting="grace"
        )
    return float(grace)


def _default_binding() -> Binding:
    """``Native.http()``: what serving with no bindings means. Resolved lazily, so the error
    names the distribution to install when agentdeck-http is missing."""
    native = importlib.import_module("agentdeck.bindings").Native
    binding = native.http()
    if not isinstance(binding, Binding):  # pragma: no cover - a broken plugin
        raise ConfigError(f"Native.http() returned {type(binding).__name__}, not a Binding")
    return binding


def _refuse_repeats(bindings: Sequence[Binding]) -> None:
    seen: set[int] = set()
    for binding in bindings:
        if id(binding) in seen:
            raise ConfigError(
                f"the binding {binding!r} is given twice; each binding is served once",
                setting="bindings",
            )
        seen.add(id(binding))


def _check_mount_paths(listeners: Sequence[ListenerBinding]) -> None:
    owners: dict[str, ListenerBinding] = {}
    for binding in listeners:
        path = binding.mount_path
        if not isinstance(path, str) or (path and (not path.startswith("/") or path.endswith("/"))):
            raise ConfigError(
                f"{type(binding).__name__} mounts at {path!r}; a mount path is '' (the root) or "
                "starts with '/' and does not end with one, like '/api'",
                setting="path",
            )
        if path in owners:
            raise ConfigError(
                f"{owners[path]!r} and {binding!r} both mount at {path or '/'!r}; give each "
                "listener binding its own path (e.g. Native.http(path='/api'))",
                setting="path",
            )
        owners[path] = binding


def _mounted(path: str, prefix: str) -> bool:
    return not prefix or path == prefix or path.startswith(prefix + "/")


class _ComposedApp:
    """The exposure's ASGI app: answers ``lifespan`` itself and routes everything else to the
    listener binding with the longest matching mount path."""

    def __init__(self, exposure: Exposure, routes: list[tuple[str, ASGIApp]]) -> None:
        self.exposure = exposure
        self._routes = routes

    async def __call__(self, scope: _Scope, receive: Any, send: Any) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await self._lifespan(receive, send)
            return
        path = scope.get("path", "")
        for prefix, app in self._routes:
            if _mounted(path, prefix):
                await app(scope, receive, send)
                return
        await _not_served(kind, [prefix or "/" for prefix, _ in self._routes], send)

    async def _lifespan(self, receive: Any, send: Any) -> None:
        exposure = self.exposure
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await exposure.start()
                except BaseException as failure:
                    log.exception("starting the deck failed")
                    await send({"type": "lifespan.startup.failed", "message": _describe(failure)})
                    if not isinstance(failure, Exception):
                        raise
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                try:
                    await exposure.stop()
                except Exception as failure:
                    log.exception("stopping the deck failed")
                    await send({"type": "lifespan.shutdown.failed", "message": _describe(failure)})
                    return
                await send({"type": "lifespan.shutdown.complete"})
                return


def _describe(failure: BaseException) -> str:
    return f"{type(failure).__name__}: {failure}"


async def _not_served(kind: str, prefixes: list[str], send: Any) -> None:
    if kind == "websocket":
        await send({"type": "websocket.close", "code": 1008})
        return
    detail = "no binding serves this path; served prefixes: " + ", ".join(prefixes)
    body = json.dumps({"detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 404,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
