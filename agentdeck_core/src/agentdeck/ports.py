"""The ports: abstract interfaces every backend and engine implements.

A store, a control backend, a lease backend, a session factory, a checkpointer factory, an
engine, an observer: each is an abstract class here with async methods, and each method's
docstring is the contract the core's kits (:mod:`agentdeck.testing`) check. Plugins provide
implementations through the registration hooks in :mod:`agentdeck.plugins.hookspecs`; the core's own
in-memory ones (:mod:`agentdeck.memory`) go through the same hooks.

Nothing here knows an engine SDK or a database driver.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Collection,
    Mapping,
    MutableMapping,
    Sequence,
)
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any, ClassVar

from agentdeck.model.clock import Clock, SystemClock
from agentdeck.model.content import ContentBlock, DataBlock, content_blocks
from agentdeck.model.events import Event
from agentdeck.model.payloads import Payload, RunStarted
from agentdeck.vocabulary import TERMINAL, ControlVerb, RunStatus, SafePoint

if TYPE_CHECKING:
    from agentdeck.settings import Settings

__all__ = [
    "ASGIApp",
    "BackendRequest",
    "Binding",
    "CheckpointerFactory",
    "ControlDirective",
    "ControlPort",
    "ControlSignal",
    "Engine",
    "EngineCapabilities",
    "EngineRequest",
    "EngineStateArea",
    "Entry",
    "EventStore",
    "Invocable",
    "Invocation",
    "LeasePort",
    "LeaseState",
    "ListenerBinding",
    "NewRun",
    "Observer",
    "OpenOutcome",
    "PruneQuery",
    "RunPage",
    "RunQuery",
    "RunRecord",
    "SessionFactory",
    "Takeover",
]


# =========================================================================== backend construction


@dataclass(frozen=True, slots=True)
class BackendRequest:
    """What a backend factory receives: the URL that chose it, the deck's settings and clock.

    One object rather than loose arguments, so the request can grow without breaking plugins.
    """

    url: str
    settings: Settings | None = None
    clock: Clock = field(default_factory=SystemClock)


# =========================================================================== event store


@dataclass(frozen=True, slots=True)
class NewRun:
    """A run to open: its minted id, identity, and the ``run.started`` payload to record."""

    run_id: str
    started: RunStarted
    session_id: str | None = None
    namespace: str | None = None
    parent_run_id: str | None = None

    @property
    def key(self) -> str | None:
        return self.started.key

    @property
    def name(self) -> str:
        return self.started.name


@dataclass(frozen=True, slots=True)
class Takeover:
    """When a *running* run holding the session may be stepped over by a new open.

    Suspended holders are never stepped over. A running holder is, if its last event is older
    than ``stale_before`` or its id is in ``dead_run_ids`` (its lease is known to have lapsed).
    """

    stale_before: datetime | None = None
    dead_run_ids: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class RunRecord:
    """A run's identity and its folded status, as the store indexes it for lookup and listing."""

    run_id: str
    name: str
    invocable_kind: str
    status: RunStatus
    created_at: datetime
    updated_at: datetime
    last_seq: int
    namespace: str | None = None
    session_id: str | None = None
    key: str | None = None
    parent_run_id: str | None = None
    wake_at: datetime | None = None

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL


@dataclass(frozen=True, slots=True)
class OpenOutcome:
    """The result of a conditional open. Losing is data here; the runtime raises the errors.

    Exactly one of ``event`` (opened) or ``busy``/``key_holder`` (refused) is set. Busy is
    reported before a key clash. ``stepped_over`` is a stale or dead running run the open
    displaced from the session; the caller closes it with ``run.failed`` in its own name.
    """

    event: Event | None = None
    busy: RunRecord | None = None
    key_holder: RunRecord | None = None
    stepped_over: RunRecord | None = None

    @property
    def opened(self) -> bool:
        return self.event is not None


@dataclass(frozen=True, slots=True)
class RunQuery:
    """Filters for :meth:`EventStore.list_runs`. Every filter is answered from the index.

    ``namespace`` is always applied (``None`` is the default namespace, not "all") unless
    ``all_namespaces`` is set, which only operator tools use. Results come oldest first.
    """

    namespace: str | None = None
    all_namespaces: bool = False
    status: RunStatus | Collection[RunStatus] | None = None
    session_id: str | None = None
    key: str | None = None
    name: str | None = None
    parent_run_id: str | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    updated_before: datetime | None = None
    wake_before: datetime | None = None
    limit: int = 100
    cursor: str | None = None

    def statuses(self) -> frozenset[RunStatus] | None:
        if self.status is None:
            return None
        if isinstance(self.status, RunStatus):
            return frozenset({self.status})
        return frozenset(self.status)


@dataclass(frozen=True, slots=True)
class RunPage:
    runs: list[RunRecord]
    next_cursor: str | None = None


@dataclass(frozen=True, slots=True)
class PruneQuery:
    """Which finished runs to delete. Only terminal runs are ever pruned."""

    namespace: str | None = None
    all_namespaces: bool = False
    finished_before: datetime | None = None
    statuses: frozenset[RunStatus] = TERMINAL
    limit: int | None = None


class EventStore(ABC):
    """The run log: ordered, append-only, one per run; the store assigns ``seq`` and ``ts``.

    Guarantees every implementation gives (checked by ``agentdeck.testing.StoreContract``):

    * ``seq`` is per run, 0-based, gapless, assigned in the same atomic write as the event.
    * :meth:`append` is a batch: all of its events are recorded or none. When it returns, the
      events are visible to :meth:`read` and :meth:`follow` in every process sharing the store,
      and durable if :attr:`durable` is true (a crash afterwards does not lose them).
    * Lifecycle events follow :data:`agentdeck.model.status.TRANSITIONS`; after a terminal event,
      nothing more is appended.
    * The folded status of every run is indexed, so lookups and listings never read logs.
    """

    durable: ClassVar[bool] = False
    """Whether appended events survive the process (and a restart of it)."""
    shared: ClassVar[bool] = False
    """Whether other processes see the same runs."""

    url: str = ""

    async def open(self) -> None:
        """Connect and create or migrate the schema. Called once before any other method."""

    async def close(self) -> None:
        """Release connections. Followers end. Idempotent."""

    @abstractmethod
    async def open_run(self, new: NewRun, *, takeover: Takeover | None = None) -> OpenOutcome:
        """Append ``run.started`` at seq 0, conditionally and atomically.

        In one atomic step: refuse if ``new.session_id`` is held by a non-terminal run (unless
        ``takeover`` allows stepping over a running holder), refuse if ``(namespace, key)`` is
        already claimed (claimed permanently, whatever the holder's status), otherwise claim both
        and record the event. Of two concurrent opens on one session exactly one wins.
        """

    @abstractmethod
    async def append(
        self,
        run_id: str,
        payloads: Sequence[Payload],
        *,
        expect: Collection[RunStatus] | None = None,
        expect_seq: int | None = None,
    ) -> list[Event]:
        """Append a batch to a run, returning the recorded events.

        With ``expect``, the batch is recorded only if the run's status is one of them at the
        moment of writing (a conditional append: ``run.resumed`` only if suspended). With
        ``expect_seq``, only if the run's last recorded seq is exactly that (optimistic
        concurrency: of two writers that read the same state, one wins). Raises
        ``RunStateError`` when a condition does not hold or a lifecycle event is not a designed
        edge (including anything after a terminal event), and ``NotFoundError`` for an unknown
        run. A refused batch records nothing.
        """

    @abstractmethod
    async def read(
        self, run_id: str, *, from_seq: int = 0, limit: int | None = None
    ) -> list[Event]:
        """Events with ``seq >= from_seq`` in order (an unknown run reads as empty)."""

    @abstractmethod
    def follow(self, run_id: str, *, from_seq: int = 0) -> AsyncIterator[Event]:
        """Events with ``seq >= from_seq``, then new ones as they are appended, in order.

        Ends after a terminal event. Woken by the append itself (or the backend's notification
        across processes) — never by a fixed polling interval in process.
        """

    @abstractmethod
    async def get_run(self, run_id: str) -> RunRecord | None:
        """The indexed record of one run, or ``None``. Reads no log."""

    @abstractmethod
    async def find_key(self, namespace: str | None, key: str) -> RunRecord | None:
        """The run holding ``(namespace, key)``, or ``None``."""

    @abstractmethod
    async def list_runs(self, query: RunQuery) -> RunPage:
        """Runs matching ``query``, oldest first, ``query.limit`` per page with a cursor."""

    @abstractmethod
    async def prune(self, query: PruneQuery) -> int:
        """Delete matching terminal runs, their logs, key claims and engine state; the count."""

    # -- engine-state area: small per-run blobs (serialized approvals, workflow journals) ---------

    @abstractmethod
    async def put_state(self, run_id: str, name: str, value: bytes) -> None:
        """Store ``value`` under ``(run_id, name)``, replacing any earlier value."""

    @abstractmethod
    async def get_state(self, run_id: str, name: str) -> bytes | None:
        """The value under ``(run_id, name)``, or ``None``."""

    @abstractmethod
    async def delete_state(self, run_id: str, name: str) -> None:
        """Remove ``(run_id, name)`` if present."""


# =========================================================================== control signals


@dataclass(frozen=True, slots=True)
class ControlSignal:
    run_id: str
    verb: ControlVerb
    reason: str | None
    requested_at: datetime


class ControlPort(ABC):
    """Pending control requests (pause, cancel) per run, reachable from other processes.

    A request is not a status change: it waits here until the run's engine reaches a safe point
    (or, for a suspended run, until the runtime acts on it at once). At most one request per verb
    is pending; a repeated request keeps the first reason.
    """

    shared: ClassVar[bool] = False

    url: str = ""

    async def open(self) -> None:
        """Connect and create the schema. Called once before any other method."""

    async def close(self) -> None:
        """Release connections. Idempotent."""

    @abstractmethod
    async def request(self, run_id: str, verb: ControlVerb, reason: str | None = None) -> bool:
        """Record a request; ``False`` if one with this verb was already pending."""

    @abstractmethod
    async def pending(self, run_id: str) -> tuple[ControlSignal, ...]:
        """Pending requests for a run, cancel first; cheap enough for every safe point."""

    @abstractmethod
    async def take(self, run_id: str, verb: ControlVerb) -> ControlSignal | None:
        """Atomically remove and return the pending request with ``verb`` (one taker wins)."""

    async def withdraw(self, run_id: str, verb: ControlVerb) -> bool:
        """Drop a pending request without acting on it (``resume()`` lifting a pause)."""
        return await self.take(run_id, verb) is not None

    @abstractmethod
    async def forget(self, run_ids: Collection[str]) -> None:
        """Drop everything pending for these runs (they finished or were pruned)."""


# =========================================================================== leases


class LeaseState(StrEnum):
    ALIVE = "alive"
    LAPSED = "lapsed"
    """It was held and not renewed in time: the holder is presumed dead."""
    NONE = "none"
    """Never held here, or released: nothing can be said from leases."""


class LeasePort(ABC):
    """Liveness leases: a playing run's worker renews its lease; a lapsed one frees the session.

    Time comes from the clock handed to the factory (``BackendRequest.clock``), so expiry is
    tested by advancing a ``ManualClock``.
    """

    shared: ClassVar[bool] = False

    url: str = ""

    async def open(self) -> None:
        """Connect and create the schema. Called once before any other method."""

    async def close(self) -> None:
        """Release connections. Idempotent."""

    @abstractmethod
    async def acquire(self, run_id: str, owner: str, ttl: float) -> bool:
        """Take the lease for ``ttl`` seconds; ``False`` if another owner holds it alive."""

    @abstractmethod
    async def renew(self, run_id: str, owner: str, ttl: float) -> bool:
        """Extend a lease this owner holds; ``False`` if it lapsed or another owner took it."""

    @abstractmethod
    async def release(self, run_id: str, owner: str) -> None:
        """Give the lease up (the run stopped playing here). No-op if not held by ``owner``."""

    @abstractmethod
    async def state(self, run_id: str) -> LeaseState:
        """Whether the run's lease is alive, lapsed, or unknown here."""

    @abstractmethod
    async def lapsed(self, limit: int = 100) -> list[str]:
        """Runs whose leases lapsed and were not released, oldest expiry first."""


# =========================================================================== sessions, checkpoints


class SessionFactory(ABC):
    """Conversation memory for engines: one engine-native session object per session id.

    The object's type belongs to the engine plugin (an Agents SDK session, for instance); the
    core only hands it through. Not the event log: the session is private to the engine.
    """

    @abstractmethod
    def session_for(self, session_id: str) -> Any:
        """The session object for ``session_id`` (created on first use)."""

    async def close(self) -> None:
        """Release clients and in-process sessions. Idempotent."""


class CheckpointerFactory(ABC):
    """Opens an engine-native checkpointer (a LangGraph saver, for instance) for a deck's life."""

    @abstractmethod
    def open(self) -> AbstractAsyncContextManager[Any]:
        """An async context manager yielding the checkpointer; exiting closes it."""


# =========================================================================== engines


class Entry(StrEnum):
    """How a run is being entered, as its own log tells."""

    FRESH = "fresh"
    AFTER_PAUSE = "after_pause"
    ANSWERED = "answered"


@dataclass(frozen=True, slots=True)
class EngineCapabilities:
    """Declared, not inferred: what the engine kit tests and the runtime relies on."""

    safe_points: frozenset[SafePoint] = frozenset()
    """Where the engine checks for control requests."""
    interrupts: bool = False
    """Can park a run waiting for an answer."""
    durable_suspend: bool = False
    """Can continue a suspended run in a fresh process from the store's durable state."""


@dataclass(frozen=True, slots=True)
class Invocable:
    """A definition compiled by its engine: what ``Deck.build()`` produces for each name."""

    name: str
    kind: str
    """``agent``, ``workflow``, ... — recorded as ``run.started.invocable_kind``."""
    engine: str
    definition: Any
    compiled: Any = None
    description: str = ""
    code_digest: str | None = None
    context_type: Any = None
    """The context type the invocable requires, if any (checked at build)."""


@dataclass(frozen=True, slots=True)
class ControlDirective:
    """A control request an engine must now act on: yield ``payloads`` and stop.

    ``payloads`` are composed by the runtime (``control.requested``, ``control.observed`` and the
    ``run.paused``/``run.cancelled`` that ends the play) so every engine records control the same
    way. Before yielding them an engine persists whatever it needs to continue after a pause.
    """

    verb: ControlVerb
    payloads: tuple[Payload, ...]


@dataclass(slots=True)
class Invocation:
    """Everything an engine receives to play one run (or one continuation of it)."""

    run_id: str
    invocable: Invocable
    input: list[ContentBlock]
    entry: Entry = Entry.FRESH
    context: Any = None
    """The application's live context object: passed by reference, never logged."""
    session_id: str | None = None
    namespace: str | None = None
    parent_run_id: str | None = None
    answers: Mapping[str, Any] = field(default_factory=dict)
    """For :attr:`Entry.ANSWERED`: interrupt id -> accepted answer value."""
    history: Sequence[Event] = ()
    """The run's own log so far (empty for a fresh run), for engines that replay from it."""
    checkpoint: Callable[[SafePoint], Awaitable[ControlDirective | None]] | None = None
    """Call at each safe point; a directive means stop there."""
    state: EngineStateArea | None = None
    clock: Clock = field(default_factory=SystemClock)
    invoke_child: Callable[..., Awaitable[Any]] | None = None
    """Start a nested run (an agent or workflow used by this one) and await its result."""
    deltas: bool = True
    """Whether the caller wants per-token ``text.delta``/``thought.delta`` events in the log.

    ``Deck.run()`` returns only the result, so it asks for none; streams, run handles and the
    HTTP binding do. An engine may record deltas regardless (the log stays valid either way: the
    full text is in ``message.completed``), or skip the cost of streaming them when not asked.
    """

    async def safepoint(self, point: SafePoint) -> ControlDirective | None:
        if self.checkpoint is None:
            return None
        return await self.checkpoint(point)


class EngineStateArea(ABC):
    """One run's slice of the store's engine-state area."""

    @abstractmethod
    async def get(self, name: str) -> bytes | None: ...

    @abstractmethod
    async def put(self, name: str, value: bytes) -> None: ...

    @abstractmethod
    async def delete(self, name: str) -> None: ...


@dataclass(frozen=True, slots=True)
class EngineRequest:
    """What an engine factory receives when a deck builds: the deck's settings, clock and catalog.

    ``catalog`` is the deck's whole catalog (skills and MCP servers an agent refers to by name
    live there). ``session_factory`` is the deck's conversation-memory factory (one injected with
    ``Deck(session_factory=...)`` or built from ``AGENTDECK_SESSION``), ``None`` when no installed
    plugin provides one. ``state_url`` is the deck's state root (``AGENTDECK_STATE``), from which
    engine-owned durable state (checkpoints) derives its default location.
    """

    settings: Settings | None = None
    clock: Clock = field(default_factory=SystemClock)
    catalog: Any = None
    session_factory: SessionFactory | None = None
    state_url: str = "memory://"


class Engine(ABC):
    """Executes one kind of definition. The engine owns execution; AgentDeck owns the record.

    :meth:`play` yields payloads for one run and ends with exactly one terminal or suspending
    payload (``run.completed``/``run.failed``/``run.cancelled``/``run.paused``/
    ``run.interrupted``), or raises. A run that parks on several questions at once ends with
    consecutive ``run.interrupted`` payloads, one per question, all of which the runtime records.
    It never yields ``run.started`` or ``run.resumed`` (the runtime writes those). The runtime
    persists each payload, fans it out to observers, and only then asks for the next, so an
    engine is never ahead of its own log.
    """

    name: ClassVar[str]
    capabilities: ClassVar[EngineCapabilities] = EngineCapabilities()

    def __init__(self, request: EngineRequest | None = None) -> None:
        self.request = request if request is not None else EngineRequest()

    @abstractmethod
    def accepts(self, definition: object) -> bool:
        """Whether this engine executes ``definition`` (an ``Agent``, a ``@workflow``, a graph)."""

    @abstractmethod
    def compile(self, definition: object) -> Invocable:
        """Validate and compile a definition with no network and no servers (``build()``)."""

    def prepare_input(self, invocable: Invocable, value: Any) -> list[ContentBlock]:
        """Turn a caller's input into the blocks ``run.started`` records, or refuse it.

        Called before the run is opened, so a bad input appends nothing. The default: an agent
        takes a string or a list of content blocks; anything else takes JSON data, recorded as
        one ``DataBlock``. Engines that can check the shape earlier (a workflow's parameters)
        override this and raise :class:`~agentdeck.errors.InvalidInputError`.
        """
        if invocable.kind == "agent":
            return content_blocks(value)
        return [DataBlock(data=value)]

    async def open(self) -> None:
        """Start what execution needs (clients, MCP servers). Called at deck open."""

    async def close(self) -> None:
        """Tear down what :meth:`open` started. Idempotent."""

    @abstractmethod
    def play(self, invocation: Invocation) -> AsyncIterator[Payload]:
        """Run (or continue) one run, yielding its payloads."""


# =========================================================================== observers, bindings


class Observer:
    """A read-only tap on the event stream: telemetry, cost accounting, audit.

    Fire-and-forget by contract: the runtime feeds each observer through its own bounded queue,
    so a slow or raising observer costs its own backlog and never a run. :meth:`emit` does
    in-memory work only. ``view`` narrows what the observer receives (see
    ``agentdeck.observing.views``).
    """

    view: Callable[[Event], bool] | None = None

    async def start(self) -> None:
        """Open a client or a file; called once at deck open, before any run. Raising refuses
        the open."""

    @abstractmethod
    async def emit(self, event: Event) -> None:
        """Receive one event (after it was persisted)."""

    async def close(self) -> None:
        """The stream has ended: write out whatever is buffered."""


ASGIApp = Callable[
    [
        MutableMapping[str, Any],
        Callable[[], Awaitable[MutableMapping[str, Any]]],
        Callable[[MutableMapping[str, Any]], Awaitable[None]],
    ],
    Awaitable[None],
]
"""An ASGI 3 application: ``await app(scope, receive, send)``. Spelled out here so the core
needs no web framework to compose listener bindings."""


class Binding(ABC):
    """One external protocol over one transport (terminal, native HTTP/SSE, ...).

    Bindings read the canonical events with no translation layer of their own. The serving
    surface (``deck.serve``/``serve_async``/``asgi``/``expose``, built on
    :class:`agentdeck.deck.serving.Exposure`) drives them. A binding comes in one of two shapes:

    * a **running** binding (the terminal chat) implements only :meth:`serve`: once the deck is
      open, the exposure runs ``serve(deck)`` as a task beside everything else and cancels it at
      shutdown (after the drain has parked the deck's live runs);
    * a **listener** binding (HTTP) subclasses :class:`ListenerBinding`: it contributes an ASGI
      app for its routes, and can run the server that listens for the composed app.
    """

    name: ClassVar[str]

    @abstractmethod
    async def serve(self, deck: Any) -> None:
        """Serve ``deck`` (already open) until done or cancelled.

        Returning ends this binding only. An exception is logged by the exposure and, when no
        listener is being served (``deck.serve(Terminal.stdio())``), re-raised to the caller.
        """


class ListenerBinding(Binding):
    """A binding reached through a network listener: it answers requests under
    :attr:`mount_path` with an ASGI app, and knows how to run a server.

    Several listener bindings share one listener: the exposure sends each ``http``/``websocket``
    request to the binding with the longest matching :attr:`mount_path`, with the scope untouched
    (the app sees the full path). The exposure owns the ``lifespan`` scope — it opens the deck,
    runs the running bindings and drains at shutdown — so a binding's app never receives it and
    asks the exposure whether it is ready (:attr:`~agentdeck.deck.serving.Exposure.state`).
    """

    mount_path: str = ""
    """The path prefix this binding owns (``""`` for the root, else ``"/api"``-shaped)."""

    @abstractmethod
    def asgi_app(self, exposure: Any) -> ASGIApp:
        """The ASGI app answering this binding's requests for ``exposure``
        (an :class:`~agentdeck.deck.serving.Exposure`); built once per exposure."""

    @abstractmethod
    async def listen(
        self, app: ASGIApp, exposure: Any, *, host: str, port: int, **options: Any
    ) -> None:
        """Serve ``app`` (the exposure's composed app, lifespan included) on ``host:port``.

        The contract with the exposure: call ``exposure.notify_listening(addresses)`` once bound;
        when a stop signal arrives (SIGTERM, SIGINT) or ``exposure.shutdown_requested`` becomes
        true, first ``await exposure.drain()`` — new runs are refused while live ones park —
        then stop accepting, let open responses finish and run the lifespan shutdown. Return
        when the server has stopped. ``options`` are server-specific; refuse unknown ones.
        """

    async def serve(self, deck: Any) -> None:
        """Serve ``deck`` over this binding alone, with default options."""
        await deck.serve_async(self)
