"""The engine ports: what an engine implements, what it receives to play a run, and how it is
registered without importing its SDK.

An :class:`Engine` executes one kind of definition (an ``Agent``, a ``@workflow``, a graph): it
compiles definitions when a deck builds and plays one run at a time as a stream of payloads,
checking for control at its declared safe points. :class:`Invocation` is everything one play
receives; :class:`EngineRequest` what the engine is built with. A :class:`HeadlessEngine` can
also run a definition once without a deck (``Agent.run()``). :class:`EngineRef` names an engine
class by import path, so registering it imports nothing. The :class:`Engine` docstrings are the
contract ``agentdeck.testing.EngineContract`` checks. Import these names from
:mod:`agentdeck.ports`.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from importlib import import_module
from typing import TYPE_CHECKING, Any, ClassVar

from agentdeck.errors import ConfigError, ForkUnsupportedError
from agentdeck.model.clock import Clock, SystemClock
from agentdeck.model.content import ContentBlock, DataBlock, content_blocks
from agentdeck.model.events import Event
from agentdeck.model.payloads import Payload
from agentdeck.ports.backends import SessionFactory
from agentdeck.vocabulary import ControlVerb, SafePoint

if TYPE_CHECKING:
    from agentdeck.settings import Settings

__all__ = [
    "ClientEngine",
    "ControlDirective",
    "Engine",
    "EngineCapabilities",
    "EngineRef",
    "EngineRequest",
    "EngineStateArea",
    "Entry",
    "ForkPlan",
    "HeadlessEngine",
    "Invocable",
    "Invocation",
    "Suspension",
]


# =========================================================================== what a play receives


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
    forks: bool = False
    """Can start a new run from a recorded point of another (:meth:`Engine.plan_fork`): a retry
    that reuses what the failed run did, a fork from a step. An engine without it retries a run
    by starting it again with the same input, and refuses a fork."""


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


class Suspension(ABC):
    """What an engine keeps in memory of a run it parked, so this process can continue the run
    where it stood instead of replaying it.

    An engine that parks a run (``run.paused`` / ``run.interrupted``) may hand one to
    :attr:`Invocation.keep_suspended` before it yields the parking payloads. The runtime holds
    it -- by run id, bounded, in its own tables, never in a global -- and hands it back as
    :attr:`Invocation.suspended` when it continues the run in this process. It is an
    optimisation only: the run's log stays the truth, the engine must check that the log still
    belongs to what it kept (another process may have continued the run meanwhile) and replay
    when it does not. The runtime discards it when the run ends, is cancelled, or its deck
    closes, and whenever it decides not to hand it back.
    """

    @abstractmethod
    def discard(self) -> None:
        """Release what is kept (cancel a suspended body) for good. Idempotent; never raises."""

    async def released(self) -> None:
        """Return once what :meth:`discard` released has finished (its tasks are done)."""


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
    suspended: Suspension | None = None
    """What this process kept of the run's previous play (see :class:`Suspension`), handed
    back to the engine that kept it; ``None`` for a fresh run or one parked elsewhere."""
    keep_suspended: Callable[[Suspension], None] | None = None
    """Hand the runtime a :class:`Suspension` to keep until this process continues the run;
    ``None`` when the runtime playing the run keeps nothing between plays."""
    deltas: bool = True
    """Whether the caller wants per-token ``text.delta``/``thought.delta`` events in the log.

    ``Deck.run()`` returns only the result, so it asks for none; streams, run handles and the
    HTTP binding do. An engine may record deltas regardless (the log stays valid either way: the
    full text is in ``message.completed``), or skip the cost of streaming them when not asked.
    """

    async def safepoint(self, point: SafePoint) -> ControlDirective | None:
        """Pass safe point ``point``: the directive to act on now, or ``None`` to go on.

        What an engine calls at each of its declared ``capabilities.safe_points``; without a
        :attr:`checkpoint` (a run played outside the runtime) it is always ``None``.
        """
        if self.checkpoint is None:
            return None
        return await self.checkpoint(point)


@dataclass(frozen=True, slots=True)
class ForkPlan:
    """How an engine starts a new run from a recorded point of another one.

    ``at`` is the point, in the engine's own terms, recorded as ``run.started.forked_from.at``.
    ``seed`` is what the new run reuses of its origin's log: the runtime records it right after
    the new run's ``run.started`` and hands both to its first play as ``Invocation.history``
    (entry :attr:`Entry.FRESH`), so the fork is continued, read and forked again from its own
    log alone.
    """

    at: int
    seed: tuple[Payload, ...] = ()


class EngineStateArea(ABC):
    """One run's slice of the store's engine-state area."""

    @abstractmethod
    async def get(self, name: str) -> bytes | None:
        """The value stored under ``name`` for this run, or ``None``."""

    @abstractmethod
    async def put(self, name: str, value: bytes) -> None:
        """Store ``value`` under ``name`` for this run, replacing any earlier value. Durable
        when the store is: an engine writes here before it yields a suspending payload."""

    @abstractmethod
    async def delete(self, name: str) -> None:
        """Remove ``name`` for this run if present."""


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


# =========================================================================== the port


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
    """The engine's registered name (``openai``, ``workflow``): declared by the class, so the
    host can register it, and refuse a second engine of the same name, without building one."""
    capabilities: ClassVar[EngineCapabilities] = EngineCapabilities()
    """What the engine kit tests and the runtime relies on (see :class:`EngineCapabilities`)."""

    def __init__(self, request: EngineRequest | None = None) -> None:
        """Build an unopened engine for one deck. The host calls ``EngineClass(request)``
        when a deck builds, so a subclass taking more arguments gives them defaults."""
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

    async def plan_fork(
        self, invocable: Invocable, history: Sequence[Event], *, at: int | None
    ) -> ForkPlan:
        """Plan a new run of ``invocable`` that goes on from a recorded point of another.

        ``history`` is the origin run's whole log (``run.started`` first). ``at`` is the point
        a fork starts from; ``None`` asks for a retry: from where the origin stopped, reusing
        all it completed. A point the log does not hold is refused with
        :class:`~agentdeck.errors.InvalidInputError` (``field="at"``). Only called on an engine
        whose capabilities declare ``forks``; this default refuses with
        :class:`~agentdeck.errors.ForkUnsupportedError`.
        """
        raise ForkUnsupportedError(run_id=history[0].run_id if history else "", engine=self.name)


class HeadlessEngine(Engine):
    """An engine that can also run a definition once without a deck: :meth:`agentdeck.Agent.run`.

    Subclass this instead of :class:`Engine` to offer headless runs; a lazy registration says
    so with ``EngineRef(..., headless=True)``, so ``Agent.run()`` finds the engine without
    importing any other. The host checks the two agree when it resolves the reference.
    """

    @abstractmethod
    async def run_headless(self, definition: object, input: Any, *, session: Any = None) -> Any:
        """Run ``definition`` once and return the engine SDK's own result object.

        Called on an unopened engine built for the caller's settings, and only for a definition
        :meth:`accepts` claims. Nothing of a run is there: no run id, no log, no observers, no
        safe points, no context (a tool that declares a ``ToolCtx`` refuses with
        :class:`~agentdeck.errors.ContextTypeError`). ``input`` is what ``Agent.run()`` was
        given (a string or content blocks); ``session`` is the engine's own conversation memory
        to continue, or ``None``. Typed ``Any`` because the result and the session belong to the
        SDK, which the core never imports.
        """


class ClientEngine(Engine):
    """The part of an engine a deck needs to *admit* runs that workers play, with none of its SDK.

    A deck whose execution queues runs for workers (``AGENTDECK_EXECUTION=temporal://...``)
    and does not work itself -- an embedded caller, ``agentdeck serve``, the CLI -- only records
    runs and follows them through the store. For that it needs of each definition what
    ``run.started`` records (name, kind, :attr:`Invocable.code_digest`) and the engine's input
    check, not a compiled SDK object: an engine registered with ``EngineRef(..., client=...)``
    offers those through a subclass of this class whose module does not import the SDK, so a
    client process never loads it. :meth:`compile` returns an :class:`Invocable` without
    ``compiled``; its ``code_digest`` must equal the full engine's for the same definition (a
    worker refuses a run whose digest is not its own), and :attr:`capabilities` must be the full
    engine's (:class:`agentdeck.testing.EngineContract` checks both when its ``client_factory``
    fixture returns the face).

    Such a deck never plays: :meth:`play` refuses. A fork or retry from it plans on the full
    engine, which :meth:`plan_fork` loads then (the host hands it the loader); a deck that starts
    working (:meth:`agentdeck.Deck.work`) compiles everything on the full engines first.
    """

    def __init__(self, request: EngineRequest | None = None) -> None:
        super().__init__(request)
        self._load_playing: Callable[[], Engine] | None = None
        self._playing: Engine | None = None

    def plays_on(self, load: Callable[[], Engine]) -> None:
        """Where a fork is planned: ``load()`` builds the full engine (the host calls this)."""
        self._load_playing = load

    def play(self, invocation: Invocation) -> AsyncIterator[Payload]:
        """Refused (``ConfigError``): a client face records runs, the workers play them."""
        raise ConfigError(
            f"engine {self.name!r} is loaded as a client here: this deck admits runs for the "
            "workers of its execution and plays none itself",
            setting="AGENTDECK_EXECUTION",
        )

    async def plan_fork(
        self, invocable: Invocable, history: Sequence[Event], *, at: int | None
    ) -> ForkPlan:
        """Plans on the full engine (loaded now, with its SDK): what a fork starts from is that
        engine's knowledge of its own log."""
        engine = self.playing_engine()
        return await engine.plan_fork(engine.compile(invocable.definition), history, at=at)

    def playing_engine(self) -> Engine:
        """The full engine (built on first call, never opened here): for what only it knows.
        ``ConfigError`` on a face the host did not build, which knows no loader."""
        if self._playing is None:
            if self._load_playing is None:
                raise ConfigError(
                    f"the client face of engine {self.name!r} was built outside a plugin host, "
                    "so it cannot load the engine itself"
                )
            self._playing = self._load_playing()
        return self._playing


# =========================================================================== registration


_TARGET = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


def _article(noun: str) -> str:
    return f"{'an' if noun[:1] in 'AEIOU' else 'a'} {noun}"


@dataclass(frozen=True, slots=True)
class EngineRef:
    """An engine class named by import path, so registering it imports nothing.

    ``register(EngineRef("mypkg.engine:MyEngine", name="mine"), description=...)`` in
    ``agentdeck_register_engines`` costs a string: the module (and the engine SDK it imports) is
    loaded the first time a deck builds. ``name`` and ``headless`` restate what the class
    declares (its :attr:`Engine.name`, whether it is a :class:`HeadlessEngine`), so the host can
    list, deduplicate and pick engines for ``Agent.run()`` before importing any; :meth:`load`
    refuses a class that disagrees.
    """

    target: str
    """``"package.module:ClassName"``."""
    name: str
    """The class's :attr:`Engine.name`."""
    headless: bool = False
    """Whether the class is a :class:`HeadlessEngine`."""
    client: str | None = None
    """``"package.module:ClassName"`` of the engine's :class:`ClientEngine`, if it offers one:
    what a deck that only admits runs for workers loads instead of the class (and its SDK)."""

    def __post_init__(self) -> None:
        for field_name, path in (("target", self.target), ("client", self.client)):
            if field_name == "client" and path is None:
                continue
            if not isinstance(path, str) or not _TARGET.match(path):
                raise ConfigError(
                    f"EngineRef {field_name} {path!r} is not an import path; "
                    "accepted: 'package.module:ClassName'"
                )

    def load(self) -> type[Engine]:
        """Import the class and check it is the engine this reference declares.

        Raises :class:`~agentdeck.errors.ConfigError` when the module does not import, the
        attribute is missing or is not an :class:`Engine` subclass, or its ``name`` or headless
        support differ from the declared ones. Not cached: the host resolves each reference
        once and keeps the class.
        """
        found: type[Engine] = self._import(self.target, Engine)
        if issubclass(found, HeadlessEngine) != self.headless:
            says = "is" if self.headless else "is not"
            actual = "is not" if self.headless else "is"
            raise ConfigError(
                f"engine '{self.name}': the reference says it {says} headless, but "
                f"{self.target} {actual} a HeadlessEngine; fix headless= or the class"
            )
        return found

    def load_client(self) -> type[ClientEngine] | None:
        """Import the :attr:`client` class (``None`` when the engine offers none), checked as
        :meth:`load` checks the engine: a :class:`ClientEngine` of the declared ``name``."""
        if self.client is None:
            return None
        found: type[ClientEngine] = self._import(self.client, ClientEngine)
        return found

    def _import(self, path: str, base: type) -> Any:
        """The class at ``path``, checked to be a subclass of ``base`` named :attr:`name`."""
        module_name, _, qualname = path.partition(":")
        try:
            found: object = import_module(module_name)
            for part in qualname.split("."):
                found = getattr(found, part)
        except (ImportError, AttributeError) as exc:
            raise ConfigError(
                f"engine '{self.name}' ({path}) cannot be loaded: {type(exc).__name__}: {exc}"
            ) from exc
        if not (isinstance(found, type) and issubclass(found, base)):
            raise ConfigError(
                f"engine '{self.name}': {path} is {found!r}, not {_article(base.__name__)} subclass"
            )
        declared = getattr(found, "name", None)
        if declared != self.name:
            raise ConfigError(
                f"engine '{self.name}': {path} declares name = {declared!r}; "
                "the reference and the class must agree"
            )
        return found
