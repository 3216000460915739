"""``Deck``: the composition root a project talks to.

A deck holds a catalog (agents, workflows, skills, MCP servers), builds it into invocables on the
installed engines, and plays every turn on one :class:`~agentdeck.runtime.runtime.Runtime` that
records it in the event log. Its lifecycle is ``NEW -> build() -> BUILT -> open -> CLOSED``:

* ``build()`` validates names, references and context types and compiles every agent and
  workflow — local files only, no network, no server — and is idempotent, so it doubles as a CI
  check.
* Opening (``async with deck:``) starts what ``build()`` left alone: the event store, control and
  lease backends, observers, engines (and their MCP servers) and the background sweep.
* ``CLOSED`` is terminal: closing tears down what the deck opened (never a store passed in), and
  a closed deck cannot reopen.

Nothing here is process-global: settings, plugins' backends and a project's modules belong to
the deck, so several decks — from several project directories — can be open in one process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from datetime import datetime
from enum import Enum
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from agentdeck.authoring.agents import Agent
from agentdeck.authoring.catalog import Catalog, CatalogSources, discover_project
from agentdeck.authoring.context_check import validate_context_declaration
from agentdeck.deck.boundary import checked_blocks, checked_datetime, checked_text, optional_text
from agentdeck.deck.runs import Run, Runs
from agentdeck.deck.service import RunService
from agentdeck.errors import (
    ConfigError,
    DuplicateKeyError,
    InvalidInputError,
    RunFinishedError,
    RunSuspendedError,
)
from agentdeck.model.clock import Clock, SystemClock
from agentdeck.model.events import Event
from agentdeck.model.results import InterruptResult
from agentdeck.observing.hub import ObserverHub
from agentdeck.observing.metrics import RunMetrics
from agentdeck.observing.tracing.context import trace_context as validated_trace_context
from agentdeck.plugins.host import (
    EVENT_STORES,
    OBSERVERS,
    SESSION_FACTORIES,
    PluginHost,
    default_host,
    redact_url,
    scheme_of,
)
from agentdeck.ports import (
    BackendRequest,
    ControlPort,
    Engine,
    EngineRequest,
    EventStore,
    Execution,
    Invocable,
    LeasePort,
    Observer,
    SessionFactory,
)
from agentdeck.runtime.config import Budget, RuntimeConfig, StartRequest
from agentdeck.runtime.in_process import InProcessExecution
from agentdeck.runtime.recording import closing
from agentdeck.runtime.runtime import Runtime
from agentdeck.runtime.tasks import stop_task
from agentdeck.settings import Settings
from agentdeck.vocabulary import ENDING_KINDS, ControlVerb, RunStatus

__all__ = ["Deck", "DeckState"]

log = logging.getLogger("agentdeck.deck")

# The distribution that provides an engine for each definition type the core declares.
_ENGINE_DISTRIBUTIONS = {Agent: "agentdeck-openai"}


class DeckState(Enum):
    NEW = "new"
    BUILT = "built"
    OPEN = "open"
    CLOSED = "closed"


class Deck:
    """A catalog of agents and workflows, and the runtime every turn of it plays on."""

    def __init__(
        self,
        agents: Iterable[Agent] = (),
        workflows: Iterable[object] = (),
        skills: Any = None,
        mcp: Any = None,
        context: Any = None,
        observers: Sequence[Observer] | None = None,
        *,
        settings: Settings | None = None,
        session_factory: SessionFactory | None = None,
        events: EventStore | None = None,
        control: ControlPort | None = None,
        leases: LeasePort | None = None,
        plugins: PluginHost | None = None,
        clock: Clock | None = None,
    ) -> None:
        """
        :param context: the *type* of the per-run context this catalog's callables receive
            (the value arrives per run). An instance here is refused.
        :param observers: taps on the event stream; ``None`` uses what settings configure,
            ``()`` means none.
        :param settings: this deck's settings; default: the environment and ``config.yaml``,
            read when the deck is built.
        :param session_factory: conversation memory to use instead of the configured one.
        :param events: an event store to use instead of ``AGENTDECK_EVENTS`` (never closed by
            the deck); ``control`` and ``leases`` likewise.
        :param plugins: the plugin host to take backends and engines from (default: the
            installed plugins).
        :param clock: the clock for timestamps, leases and timers (tests pass a ``ManualClock``).
        """
        self._context_type = validate_context_declaration(context)
        self._catalog = Catalog(agents, workflows, skills, mcp)
        self._sources: CatalogSources | None = None
        if observers is not None and not isinstance(observers, Iterable):
            raise ConfigError(
                f"observers= takes a sequence of Observer instances (or None); got "
                f"{type(observers).__name__}",
                setting="observers",
            )
        self._observers = None if observers is None else tuple(observers)
        self._given_settings = settings
        self._given_sessions = session_factory
        self._given_events, self._given_control, self._given_leases = events, control, leases
        self._host = plugins
        self._clock: Clock = clock or SystemClock()
        self._state = DeckState.NEW
        self._settings: Settings | None = None
        self._engines: dict[str, Engine] = {}
        self._engine_request: EngineRequest | None = None
        self._plays_here = True
        """Whether the engines are the full ones (``False``: client faces, see ``build``)."""
        self._full = False
        """Compile on the full engines whatever the execution (``build(full=True)``, ``work()``)."""
        self._invocables: dict[str, Invocable] = {}
        self._resolved: dict[str, Invocable] = {}  # name as addressed -> invocable (see _resolve)
        self._sessions: SessionFactory | None = None
        self._execution: Execution | None = None
        self._runtime: Runtime | None = None
        self._opened: list[Any] = []
        self._hub: ObserverHub | None = None
        self._metrics = RunMetrics()
        self._sweeper: asyncio.Task[None] | None = None
        self._walked_away: set[asyncio.Task[None]] = set()
        self._service = RunService()
        self.runs = Runs(self, self._service)

    @classmethod
    def from_project(cls, path: str | Path = ".agentdeck", **options: Any) -> Deck:
        """A deck whose catalog is discovered from a project directory.

        Reads ``agents/<bundle>/agent.py``, ``workflows/<bundle>/workflow.py``,
        ``skills/*/SKILL.md`` and the ``.mcp.json`` next to the directory. The project's modules
        are imported under a namespace private to this deck, so two projects never read each
        other's bundles. Unless ``AGENTDECK_STATE`` says otherwise, the deck's state is the file
        ``state.db`` in this directory (created when the deck first opens). Other keyword
        arguments are the constructor's.
        """
        sources = discover_project(path)
        deck = cls(
            agents=sources.agents,
            workflows=sources.workflows,
            skills=options.pop("skills", sources.skills),
            mcp=options.pop("mcp", sources.mcp),
            **options,
        )
        deck._sources = sources
        deck._catalog.record_origins(sources.origins)  # errors then name the files
        return deck

    # ------------------------------------------------------------------------------- lifecycle

    @property
    def is_open(self) -> bool:
        return self._state is DeckState.OPEN

    @property
    def state(self) -> DeckState:
        return self._state

    @property
    def service(self) -> RunService:
        """What this deck's run handles act through, for surfaces that operate runs beside
        them (the HTTP binding, the command line): refuses while the deck is not open."""
        return self._service

    @property
    def plugins(self) -> PluginHost:
        """The plugin host this deck takes its backends, engines and bindings from (the
        installed plugins, unless ``plugins=`` gave one)."""
        return self._plugin_host()

    @property
    def metrics(self) -> RunMetrics:
        """Counters of the runs this deck recorded (``metrics.render()`` is the Prometheus
        text the HTTP binding serves at ``/metrics``)."""
        return self._metrics

    @property
    def agents(self) -> Mapping[str, Agent]:
        """The catalog's agents by name (read-only)."""
        return self._catalog.agents

    @property
    def workflows(self) -> Mapping[str, Any]:
        """The catalog's workflows by name (read-only)."""
        return self._catalog.workflows

    @property
    def invocables(self) -> Mapping[str, Invocable]:
        """Every addressable name, compiled (builds the deck if needed)."""
        self.build()
        return MappingProxyType(self._invocables)

    def build(self, *, full: bool = False) -> Deck:
        """Validate and compile the catalog; no network, no servers. Idempotent.

        A deck that only admits runs for workers (its ``AGENTDECK_EXECUTION`` queues them and it
        does not :meth:`work`) compiles each definition on its engine's client face
        (:class:`~agentdeck.ports.ClientEngine`), which checks what recording a run needs and
        imports no engine SDK. ``full=True`` compiles on the full engines, as the workers will:
        the check ``agentdeck build`` runs. It is refused on such a deck once it is open.
        """
        if self._state is DeckState.CLOSED:
            raise ConfigError("this deck is closed; construct a new one")
        if full:
            self._full = True
        if self._state is not DeckState.NEW:
            if full and not self._plays_here:
                if self._state is DeckState.OPEN:
                    raise ConfigError(
                        "build(full=True) on an open deck that admits runs for workers: build it "
                        "in full before opening it (or call work(), which does)",
                        setting="AGENTDECK_EXECUTION",
                    )
                self._compile_in_full()
            return self
        host = self._plugin_host()
        settings = self._given_settings or Settings.load()
        if self._sources is not None:
            # A project's state defaults to its own directory, wherever the process started.
            settings = settings.for_project(self._sources.project)
        settings.register(*host.settings_sections())
        self._catalog.validate(context=self._context_type)
        if self._observers is not None:
            for observer in self._observers:
                if not isinstance(observer, Observer):
                    raise ConfigError(
                        f"observers= takes Observer instances; got {type(observer).__name__}",
                        setting="observers",
                    )
        sessions = self._given_sessions or self._configured_sessions(host, settings)
        request = EngineRequest(
            settings=settings,
            clock=self._clock,
            catalog=self._catalog,
            session_factory=sessions,
            state_url=settings.state_url,
        )
        execution = self._configured_execution(host, settings)
        # A deck that only admits runs for workers elsewhere (an execution that queues, and
        # this deck not working) takes each engine's client face: no engine SDK is imported.
        plays_here = self._full or not execution.queues
        engines: dict[str, Engine] = {}
        # An empty catalog (a deck that only reads or signals a store, as the read-only CLI
        # commands open) needs no engine: skipping them keeps the engine SDKs unimported there.
        if self._catalog.names:
            built = host.engines(request) if plays_here else host.client_engines(request)
            engines = {engine.name: engine for engine in built}
        invocables = self._compiled(engines)
        self._settings, self._sessions, self._execution = settings, sessions, execution
        self._engine_request, self._plays_here = request, plays_here
        self._engines, self._invocables = engines, invocables
        self._state = DeckState.BUILT
        self._service.deck_moved(self._state.value)
        return self

    async def __aenter__(self) -> Deck:
        await self.open()
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.aclose()

    async def open(self) -> None:
        """Start the store, control, leases, observers, engines and the sweep."""
        if self._state is DeckState.CLOSED:
            raise ConfigError("a closed deck cannot be reopened; construct a new one")
        if self._state is DeckState.OPEN:
            return
        self.build()
        assert self._settings is not None
        settings, host = self._settings, self._plugin_host()
        try:
            store = self._given_events or host.event_store(
                self._request(settings.events_url), setting=settings.events_setting
            )
            control = self._given_control or host.control_port(
                self._request(settings.control_url), setting=settings.control_setting
            )
            leases = self._given_leases or host.lease_port(
                self._request(settings.control_url), setting=settings.control_setting
            )
            for backend, given in (
                (store, self._given_events),
                (control, self._given_control),
                (leases, self._given_leases),
            ):
                if given is None:
                    await backend.open()
                    self._opened.append(backend)
            observers = self._resolve_observers(host, settings)
            for observer in observers:
                # Observers configured by settings read this deck's, not the process's.
                use_settings = getattr(observer, "use_settings", None)
                if callable(use_settings):
                    use_settings(settings)
                # Trace observers meeting a run mid-way read its start from this deck's log.
                use_run_log = getattr(observer, "use_run_log", None)
                if callable(use_run_log):
                    use_run_log(_start_reader(store))
            hub = ObserverHub(observers, metrics=self._metrics)
            await hub.start()
            self._hub = hub
            for engine in self._engines.values():
                await engine.open()
                self._opened.append(engine)
            execution = self._execution
            assert execution is not None
            await execution.open()
            self._opened.append(execution)
        except BaseException:
            await self._teardown()
            raise
        runtime_settings = settings.runtime
        self._runtime = Runtime(
            store=store,
            control=control,
            leases=leases,
            invocables=self._invocables,
            engines=self._engines,
            observers=hub,
            clock=self._clock,
            config=RuntimeConfig(
                stale_run_after=runtime_settings.stale_run_after_seconds,
                lease_ttl=runtime_settings.lease_ttl_seconds,
                sweep_interval=runtime_settings.sweep_interval_seconds,
                # Where runs queue for workers, a parked run continues wherever its execution
                # places it: a body kept here would hold memory for a run held nowhere.
                max_suspended=0 if execution.queues else runtime_settings.max_suspended,
            ),
            execution=execution,
        )
        if not execution.queues:
            # An execution that queues runs owns their liveness, timers and waits itself.
            self._sweeper = asyncio.create_task(self._runtime.sweep_forever(), name="deck-sweep")
        self._state = DeckState.OPEN
        self._service.deck_moved(self._state.value, self._runtime)

    async def aclose(self) -> None:
        """Close what this deck opened. Terminal: the deck cannot be reopened."""
        if self._state is DeckState.CLOSED:
            return
        self._state = DeckState.CLOSED
        self._service.deck_moved(self._state.value)
        try:
            if self._walked_away:  # cancels of abandoned streams land before the store closes
                await asyncio.gather(*self._walked_away, return_exceptions=True)
            if self._sweeper is not None:
                await stop_task(self._sweeper)  # a close that is itself cancelled says so
        finally:
            if self._runtime is not None:
                await self._runtime.close()
            await self._teardown()
            if self._sources is not None:
                self._sources.unload()

    async def _teardown(self) -> None:
        if self._hub is not None:
            await self._hub.close()
            self._hub = None
        for thing in reversed(self._opened):
            try:
                await thing.close()
            except Exception:
                log.exception("closing %r failed", thing)
        self._opened.clear()
        if self._sessions is not None and self._given_sessions is None:
            with contextlib.suppress(Exception):
                await self._sessions.close()

    # ------------------------------------------------------------------------------- turns

    async def run(
        self,
        name: str,
        input: Any = None,
        *,
        context: Any = None,
        session_id: str | None = None,
        namespace: str | None = None,
        key: str | None = None,
        deadline: datetime | None = None,
        budget: Budget | None = None,
    ) -> Any:
        """Play one turn and return its result.

        A ``TurnResult`` for an agent; the body's return value for a workflow. A run that parks
        on a question returns an :class:`InterruptResult` (answer it through
        ``deck.runs.get(result.run_id)``); one that is paused raises ``RunSuspendedError``; one
        that fails raises ``RunFailedError``.

        Only the result comes back, so the run is played without per-token deltas where its
        engine can save their cost (the log still has every message, tool call and usage).
        """
        run = await self._start(
            name,
            input,
            context=context,
            session_id=session_id,
            namespace=namespace,
            key=key,
            deadline=deadline,
            budget=budget,
            deltas=False,
        )
        try:
            return await run.result()
        except RunSuspendedError as parked:
            if parked.status is RunStatus.WAITING_ANSWER and isinstance(
                parked.pending, InterruptResult
            ):
                return parked.pending
            raise

    async def stream(
        self,
        name: str,
        input: Any = None,
        *,
        context: Any = None,
        session_id: str | None = None,
        namespace: str | None = None,
        key: str | None = None,
        deadline: datetime | None = None,
        budget: Budget | None = None,
    ) -> AsyncIterator[Event]:
        """Play one turn and yield its canonical events live, ending at a terminal event or a
        suspension. A consumer that walks away early leaves the run cancelled."""
        run = await self._start(
            name,
            input,
            context=context,
            session_id=session_id,
            namespace=namespace,
            key=key,
            deadline=deadline,
            budget=budget,
        )
        service = self._service
        ended = False
        try:
            async with closing(service.store.follow(run.id)) as log:
                async for event in log:
                    yield event
                    if event.kind in ENDING_KINDS:
                        ended = True
                        return
        finally:
            if not ended and self.is_open:
                await self._cancel_walked_away(run.id)

    async def _cancel_walked_away(self, run_id: str) -> None:
        """Cancel the run of a stream whose consumer went away, also when it went away by
        being cancelled.

        A server whose client hangs up cancels the task streaming to it, and Starlette does that
        through an anyio cancel scope, which cancels every later await in that task too: the
        request would be cut off at its first store round trip (on SQLite always), leaving the
        run playing on for nobody. So the request is made shielded from such a scope; one cut
        off all the same (a plain ``task.cancel()`` arriving meanwhile) is made again by a task
        of its own, which closing the deck waits for.
        """
        import anyio  # here, not at the top: the CLI's read-only commands import this module

        with anyio.CancelScope(shield=True):
            try:
                await self._request_walked_away_cancel(run_id)
            except asyncio.CancelledError:
                again = asyncio.get_running_loop().create_task(
                    self._request_walked_away_cancel(run_id), name=f"cancel-walked-away:{run_id}"
                )
                self._walked_away.add(again)
                again.add_done_callback(self._walked_away.discard)
                raise

    async def _request_walked_away_cancel(self, run_id: str) -> None:
        try:
            await self._service.request_control(
                run_id, ControlVerb.CANCEL, "the stream's consumer went away"
            )
        except RunFinishedError:
            pass  # it finished meanwhile: nothing to cancel, nothing to report
        except Exception:
            # Nobody is left to raise this to (the consumer is gone).
            log.exception("cancelling run %s after its stream's consumer went away failed", run_id)

    # ------------------------------------------------------------------------------- working

    async def work(self, *, concurrency: int = 1) -> None:
        """Serve as a worker of this deck's execution until cancelled: take queued runs from
        it and play them here, at most ``concurrency`` at a time (``agentdeck worker``).

        Opens the deck if it is not open yet, and then closes it when the work stops. A deck
        whose runs play in-process (``AGENTDECK_EXECUTION`` unset) has nothing to take and
        raises :class:`ConfigError`, as does a ``concurrency`` below 1.
        """
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
            raise ConfigError(
                f"concurrency must be a whole number >= 1, not {concurrency!r}",
                setting="--concurrency",
            )
        self._full = True
        opened_here = not self.is_open
        if self._state is not DeckState.NEW and not self._plays_here:
            for engine in self._compile_in_full():
                if self._state is DeckState.OPEN:
                    await engine.open()
                    self._opened.append(engine)
        await self.open()
        try:
            runtime = self._service.runtime
            await runtime.execution.work(runtime, concurrency=concurrency)
        finally:
            if opened_here:
                await self.aclose()

    # ------------------------------------------------------------------------------- serving

    def expose(self, *bindings: Any) -> Any:
        """The :class:`~agentdeck.deck.serving.Exposure` of this deck over ``bindings`` (the serving
        surface's lower-level object; ``asgi``/``serve``/``serve_async`` are built on it)."""
        from agentdeck.deck.serving import Exposure

        return Exposure(self, bindings)

    def asgi(self, *bindings: Any) -> Any:
        """An ASGI application serving this deck over ``bindings`` (default: ``Native.http()``).

        Its lifespan opens the deck on startup and closes it on shutdown; a deck you opened
        yourself is left alone.
        """
        return self.expose(*bindings).asgi()

    def serve(self, *bindings: Any, **options: Any) -> None:
        """Serve this deck over ``bindings`` until the server exits, owning the event loop."""
        self.expose(*bindings).serve(**options)

    async def serve_async(self, *bindings: Any, **options: Any) -> None:
        """:meth:`serve` for callers already inside an event loop."""
        await self.expose(*bindings).serve_async(**options)

    def session_for(self, session_id: str) -> Any:
        """The engine's conversation-memory session ``run``/``stream`` use for ``session_id``."""
        self.build()
        if self._sessions is None:
            raise ConfigError(
                "no conversation sessions are available: install agentdeck-openai (or pass "
                "session_factory= to Deck)",
                setting="AGENTDECK_SESSION",
            )
        return self._sessions.session_for(session_id)

    async def _start(
        self,
        name: str,
        input: Any,
        *,
        context: Any,
        session_id: str | None,
        namespace: str | None,
        key: str | None,
        deadline: datetime | None,
        budget: Budget | None = None,
        if_exists: Literal["raise", "return"] = "raise",
        deltas: bool = True,
        trace_context: Mapping[str, str] | None = None,
    ) -> Run:
        service = self._service
        runtime = service.runtime
        # The caller's values, checked before anything is resolved or written (see boundary).
        checked_text(name, "name")
        session_id = optional_text(session_id, "session_id", name=name)
        namespace = optional_text(namespace, "namespace", name=name)
        key = optional_text(key, "key", name=name)
        deadline = checked_datetime(deadline, "deadline")
        if budget is not None and not isinstance(budget, Budget):
            raise InvalidInputError(
                f"budget must be a Budget, not {type(budget).__name__}", name=name, field="budget"
            )
        if if_exists not in ("raise", "return"):
            raise InvalidInputError(
                "if_exists must be 'raise' or 'return'", name=name, field="if_exists"
            )
        recorded_context = validated_trace_context(trace_context)
        invocable = self._resolve(name)
        engine = self._engines[invocable.engine]
        blocks = checked_blocks(engine.prepare_input(invocable, input), name=name)
        try:
            started = await runtime.launch(
                StartRequest(
                    invocable=invocable,
                    input=blocks,
                    context=context,
                    session_id=session_id,
                    namespace=namespace,
                    key=key,
                    deadline=deadline,
                    budget=budget,
                    deltas=deltas,
                    trace_context=recorded_context,
                )
            )
        except DuplicateKeyError as clash:
            if if_exists != "return":
                raise
            holder = await runtime.store.get_run(clash.holder_run_id)
            if holder is None:
                raise
            return Run(service, holder)
        return Run.opened(service, started, context=context)

    # ------------------------------------------------------------------------------- internals

    def _resolve(self, name: str) -> Invocable:
        """The compiled invocable ``name`` addresses. A built catalog never changes, so each name
        is resolved once and remembered (resolving re-indexes the whole catalog)."""
        known = self._resolved.get(name)
        if known is not None:
            return known
        self.build()
        definition = self._catalog.resolve(name)  # raises NotFoundError listing the names
        for invocable in self._invocables.values():
            if invocable.definition is definition:
                self._resolved[name] = invocable
                return invocable
        raise ConfigError(f"'{name}' was not compiled")  # pragma: no cover - build compiles all

    def _compiled(self, engines: Mapping[str, Engine]) -> dict[str, Invocable]:
        """Every catalog name compiled by the engine that runs its definition."""
        invocables: dict[str, Invocable] = {}
        for name in self._catalog.names:
            definition = self._catalog.resolve(name)
            invocables[name] = _engine_for(definition, engines).compile(definition)
        return invocables

    def _compile_in_full(self) -> list[Engine]:
        """Swap a client deck's engine faces for the full engines (returned, unopened): every
        definition compiled anew (the SDKs load now), put in the tables the runtime, if the
        deck is open, already holds."""
        engines = {
            engine.name: engine for engine in self._plugin_host().engines(self._engine_request)
        }
        invocables = self._compiled(engines)
        self._engines.clear()
        self._engines.update(engines)
        self._invocables.clear()
        self._invocables.update(invocables)
        self._resolved.clear()
        self._plays_here = True
        return list(engines.values())

    def _plugin_host(self) -> PluginHost:
        if self._host is None:
            self._host = default_host()
        return self._host

    def _request(self, url: str, settings: Settings | None = None) -> BackendRequest:
        return BackendRequest(url=url, settings=settings or self._settings, clock=self._clock)

    def _configured_sessions(self, host: PluginHost, settings: Settings) -> SessionFactory | None:
        """The session factory ``AGENTDECK_SESSION`` names (``local://``, in-process, when
        unset), or ``None`` when no installed plugin provides conversation sessions at all."""
        url = settings.core.session or "local://"
        if url == "local://" and scheme_of(url) not in host.schemes(SESSION_FACTORIES):
            return None
        return host.session_factory(self._request(url, settings), setting="AGENTDECK_SESSION")

    def _configured_execution(self, host: PluginHost, settings: Settings) -> Execution:
        """The execution ``AGENTDECK_EXECUTION`` names (in-process when unset). One that queues
        runs for workers is refused on an event store other processes cannot read: its workers
        would find nothing to play, and the deck would wait for runs nobody can take."""
        url = settings.core.execution
        if url is None:
            return InProcessExecution()
        execution = host.execution(self._request(url, settings), setting="AGENTDECK_EXECUTION")
        if execution.queues:
            store = self._given_events or host.backend(
                EVENT_STORES,
                self._request(settings.events_url, settings),
                setting=settings.events_setting,
            )
            if not (store.durable and store.shared):
                raise ConfigError(
                    f"AGENTDECK_EXECUTION={redact_url(url)!r} hands runs to workers in other "
                    f"processes, which read them from the state store; {settings.events_setting}"
                    f"={redact_url(store.url or settings.events_url)!r} is "
                    f"{'not durable' if not store.durable else 'not shared'} across "
                    "processes. Use a shared durable store: postgresql://..., redis://..., or "
                    "sqlite:///path on one machine",
                    setting="AGENTDECK_EXECUTION",
                )
        return execution

    def _resolve_observers(self, host: PluginHost, settings: Settings) -> list[Observer]:
        if self._observers is not None:
            return list(self._observers)
        configured: list[Observer] = []
        for registration in host.registrations(OBSERVERS.key):
            from_settings = getattr(registration.factory, "from_settings", None)
            if callable(from_settings):
                observer = from_settings(settings)
                if observer is not None:
                    configured.append(observer)
        return configured


def _start_reader(store: EventStore) -> Callable[[str], Awaitable[Event | None]]:
    """Reads one run's ``run.started`` (its first event) from ``store``."""

    async def read_start(run_id: str) -> Event | None:
        events = await store.read(run_id, limit=1)
        return events[0] if events else None

    return read_start


def _engine_for(definition: object, engines: Mapping[str, Engine]) -> Engine:
    claimed = [engine for engine in engines.values() if engine.accepts(definition)]
    if len(claimed) == 1:
        return claimed[0]
    label = getattr(definition, "name", type(definition).__name__)
    if not claimed:
        hint = next(
            (dist for kind, dist in _ENGINE_DISTRIBUTIONS.items() if isinstance(definition, kind)),
            None,
        )
        raise ConfigError(
            f"no installed engine runs '{label}' ({type(definition).__name__})"
            + (f"; install {hint}" if hint else "")
            + f"; installed engines: {', '.join(sorted(engines)) or 'none'}",
            setting="engines",
            accepted=sorted(engines),
        )
    raise ConfigError(
        f"several engines claim '{label}': {', '.join(e.name for e in claimed)}",
        setting="engines",
    )
