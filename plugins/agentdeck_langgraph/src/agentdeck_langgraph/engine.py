"""``LangGraphEngine``: plays a :class:`~agentdeck_langgraph.Workflow` run on LangGraph.

One play streams the graph once (more when a timer that is already due is continued at once)::

    graph.astream(input, {"configurable": {"thread_id": <the run's thread>}, ...},
                  context=<the run's context>, durability="exit",
                  stream_mode=["updates", "checkpoints"])

in a task of its own (the config also carries what :func:`~agentdeck_langgraph.with_config` gave
the run: ``recursion_limit``, ``configurable`` values, tags, metadata), and turns what happens
into the run's payloads:

* ``updates``: one ``node.updated(node, update, step)`` per completed node (the update as JSON);
* ``checkpoints``: where a superstep ends. That is the run's **node boundary** safe point: every
  node of the step has completed and no node of the next step has started. The engine asks the
  runtime for a control directive there and, given one, stops the stream on the spot; a paused
  run continues later from exactly that checkpoint (``astream(None, same thread)``), in this
  process or another;
* custom stream writes: ``report`` or ``custom`` (shapes in :mod:`agentdeck_langgraph.streaming`),
  and tokens of a LangChain chat model called inside a node: ``text.delta``. Both come through
  the engine's own channel (:mod:`agentdeck_langgraph.live`), recorded while the node runs,
  rather than through LangGraph's ``custom``/``messages`` modes, whose concurrent runner costs
  a small graph's run a fifth to a quarter of its time, writes or not.

**Checkpoints are written when the graph stops** (``durability="exit"``): when it finishes,
fails, asks a question, sleeps, reaches a breakpoint, or is stopped at a node boundary by a
directive -- every time before the engine yields the payload that parks or ends the run, so the
log never says "parked" over a checkpoint that is not there. AgentDeck continues a run only
from where it parked (a run whose process died mid-step fails when its lease lapses), so the
checkpoints of the steps in between would never be read; not writing them saves a checkpointer
round trip per step (one SQLite or PostgreSQL write each on a durable checkpointer).

A play ends with one of: ``run.completed`` carrying the graph's output as one ``DataBlock``
(what ``ainvoke`` returns: the final state, limited to the keys of a ``StateGraph``'s
``output_schema``; an ``@entrypoint``'s return value);
``run.failed(engine_error, where=<node>, message=<exception type>)`` when a node raised (the
exception's text is logged here, never recorded); ``run.interrupted(reason="human")`` for each
question the graph asked with ``interrupt()``, all pending ones in a row (LangGraph ``Interrupt``
ids are the interrupt ids); ``run.paused(reason="sleep", wake_at=...)`` for a ``sleep_until``;
``run.paused(reason="breakpoint")`` for a compiled graph's static breakpoint; or a control
directive's payloads.

Continuations read the checkpointer, never the log, for *state*: ``Entry.ANSWERED`` resumes the
thread with ``Command(resume={interrupt_id: answer, ...})``; ``Entry.AFTER_PAUSE`` wakes any
pending timer (``Command(resume=...)``) or else continues from the last checkpoint. LangGraph
re-runs an interrupted node from its start, so code before its ``interrupt()`` runs again.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field, is_dataclass
from functools import partial
from typing import Any, ClassVar, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph.state import CompiledStateGraph
from langgraph.pregel import Pregel
from langgraph.types import Command, Durability, Interrupt, StateSnapshot, StreamMode
from pydantic import BaseModel, ValidationError

from agentdeck.errors import ConfigError, InvalidInputError, ReplayError
from agentdeck.model.content import ContentBlock, DataBlock
from agentdeck.model.events import Event
from agentdeck.model.payloads import (
    AnswerRecorded,
    AnswerShape,
    NodeUpdated,
    Payload,
    RunFailed,
    RunInterrupted,
    RunPaused,
    RunStarted,
)
from agentdeck.model.trusted import completed, data_block
from agentdeck.plugins.host import default_host, redact_url, scheme_of
from agentdeck.ports import (
    BackendRequest,
    CheckpointerFactory,
    ControlDirective,
    Engine,
    EngineCapabilities,
    EngineRequest,
    Entry,
    ForkPlan,
    Invocable,
    Invocation,
)
from agentdeck.vocabulary import ErrorCode, SafePoint, WaitKind
from agentdeck_langgraph.checkpointers import CHECKPOINT_SETTING, checkpoint_url, is_durable
from agentdeck_langgraph.forking import fork_updates, plan_fork, rebuild_thread
from agentdeck_langgraph.live import EMPTY, END, LiveChannel, live_config, pump_in_task
from agentdeck_langgraph.nodes import NAMESPACE_KEY, RUN_ID_KEY, SESSION_KEY
from agentdeck_langgraph.run_config import GraphInput, config_block, read_config
from agentdeck_langgraph.settings import LangGraphSettings
from agentdeck_langgraph.streaming import json_safe
from agentdeck_langgraph.timers import WOKEN, sleep_of
from agentdeck_langgraph.workflow import RunRef, Workflow

__all__ = ["LangGraphEngine"]

log = logging.getLogger("agentdeck.langgraph")

STREAM_MODES: tuple[StreamMode, ...] = ("updates", "checkpoints")
"""What the engine asks LangGraph to stream; custom writes and tokens take :mod:`.live`."""
DURABILITY: Durability = "exit"
"""When LangGraph writes checkpoints: when the graph stops (see the module doc)."""
_INTERRUPT = "__interrupt__"
_METADATA = "__metadata__"
_TASK_NOTE = re.compile(r"During task with name '([^']+)'")


class LangGraphEngine(Engine):
    """The ``langgraph`` engine (see the module doc for what a play records).

    :param request: what the deck hands an engine factory; its settings choose the checkpointer
        (``AGENTDECK_CHECKPOINT``, else derived from ``request.state_url``).
    :param checkpointer: overrides that choice: a URL (``sqlite:///cp.db``) resolved through the
        installed checkpointer plugins, or a :class:`CheckpointerFactory`.

    Nothing is opened before :meth:`open` (or the first play): compiling needs no database.
    """

    name: ClassVar[str] = "langgraph"
    SAFE_POINTS: ClassVar[frozenset[SafePoint]] = frozenset({SafePoint.NODE_BOUNDARY})

    def __init__(
        self,
        request: EngineRequest | None = None,
        *,
        checkpointer: str | CheckpointerFactory | None = None,
    ) -> None:
        super().__init__(request)
        self._given = checkpointer
        self._factory: CheckpointerFactory | None = (
            checkpointer if isinstance(checkpointer, CheckpointerFactory) else None
        )
        self._saver: BaseCheckpointSaver[Any] | None = None
        self._stack: AsyncExitStack | None = None
        self._lock = asyncio.Lock()
        self._scratch = InMemorySaver()
        """Checkpoints of ``durable=False`` workflows: this engine's memory only."""
        self._graphs: dict[tuple[Workflow, int], Pregel[Any, Any, Any, Any]] = {}
        self._compiled_any = False
        self._warned_memory = False
        settings = self.request.settings
        self._always_deltas = (
            settings is not None and settings.section(LangGraphSettings).deltas == "always"
        )

    # ------------------------------------------------------------------------------- capabilities

    @property
    def capabilities(self) -> EngineCapabilities:
        """Node-boundary safe points and interrupts always; ``durable_suspend`` when the
        checkpointer outlives the process (not with ``memory://``)."""
        return EngineCapabilities(
            safe_points=self.SAFE_POINTS,
            interrupts=True,
            durable_suspend=self.durable,
            forks=True,
        )

    @capabilities.setter
    def capabilities(self, value: EngineCapabilities) -> None:
        raise AttributeError("a LangGraph engine's capabilities follow from its checkpointer")

    @property
    def durable(self) -> bool:
        """Whether this engine's checkpoints outlive the process."""
        if self._factory is not None:
            return is_durable(self._factory)
        try:
            url, _ = self._url()
        except ConfigError:
            return False
        return scheme_of(url) != "memory"

    def _url(self) -> tuple[str, str]:
        if isinstance(self._given, str):
            return self._given, "checkpointer="
        return checkpoint_url(self.request.settings, self.request.state_url)

    # ------------------------------------------------------------------------------- compiling

    def accepts(self, definition: object) -> bool:
        return isinstance(definition, Workflow)

    def compile(self, definition: object) -> Invocable:
        if not isinstance(definition, Workflow):
            raise ConfigError(
                f"the langgraph engine runs agentdeck_langgraph.Workflow definitions, not "
                f"{type(definition).__name__}",
                setting="workflows",
            )
        graph = definition.compile_graph()
        self._compiled_any = True
        return Invocable(
            name=definition.name,
            kind="workflow",
            engine=self.name,
            definition=definition,
            compiled=graph,
            description=definition.description,
            code_digest=definition.digest(),
        )

    def prepare_input(self, invocable: Invocable, value: Any) -> list[ContentBlock]:
        """A workflow's input, recorded as one ``DataBlock``.

        A ``StateGraph``'s input is its initial state: a mapping (or a model, a dataclass);
        ``None`` is an empty state. Any other graph (the functional API's ``@entrypoint``) takes
        whatever JSON value its entrypoint takes. :func:`~agentdeck_langgraph.with_config`
        around the input adds the run's LangGraph config as a second block.
        """
        config: DataBlock | None = None
        if isinstance(value, GraphInput):
            config = config_block(value, invocable.name)
            value = value.input
        blocks: list[ContentBlock] = [self._input_block(invocable, value)]
        return blocks if config is None else [*blocks, config]

    def _input_block(self, invocable: Invocable, value: Any) -> DataBlock:
        if value is None:
            return DataBlock(data={})
        if isinstance(value, Mapping | BaseModel) or (
            is_dataclass(value) and not isinstance(value, type)
        ):
            return DataBlock(data=value)
        if not isinstance(invocable.compiled, CompiledStateGraph):
            try:
                return DataBlock(data=value)
            except ValidationError:
                raise InvalidInputError(
                    f"workflow '{invocable.name}' takes JSON data as its input, not "
                    f"{type(value).__name__}",
                    name=invocable.name,
                ) from None
        raise InvalidInputError(
            f"workflow '{invocable.name}' takes its initial state as a mapping (a JSON object), "
            f"not {type(value).__name__}",
            name=invocable.name,
        )

    # ------------------------------------------------------------------------------- lifecycle

    async def open(self) -> None:
        """Open the checkpointer now if any workflow was compiled (so a bad DSN fails the
        deck's open); otherwise the first play opens it, so a deck with no LangGraph workflow
        never needs one."""
        if self._compiled_any:
            await self._checkpointer()

    async def close(self) -> None:
        stack, self._stack = self._stack, None
        self._saver = None
        self._graphs.clear()
        if stack is not None:
            await stack.aclose()

    async def _checkpointer(self) -> BaseCheckpointSaver[Any]:
        if self._saver is not None:
            return self._saver
        async with self._lock:
            if self._saver is None:
                factory = self._resolve_factory()
                stack = AsyncExitStack()
                saver = await stack.enter_async_context(factory.open())
                if not isinstance(saver, BaseCheckpointSaver):
                    await stack.aclose()
                    raise ConfigError(
                        f"checkpointer factory {type(factory).__name__} yielded "
                        f"{type(saver).__name__}, not a LangGraph BaseCheckpointSaver",
                        setting=CHECKPOINT_SETTING,
                    )
                self._stack, self._saver = stack, saver
        return self._saver

    def _resolve_factory(self) -> CheckpointerFactory:
        if self._factory is None:
            url, setting = self._url()
            settings = self.request.settings
            host = default_host(settings.env if settings is not None else None)
            request = BackendRequest(url=url, settings=settings, clock=self.request.clock)
            self._factory = host.checkpointer(request, setting=setting)
        return self._factory

    async def _graph(self, workflow: Workflow, invocable: Invocable) -> Pregel[Any, Any, Any, Any]:
        saver = await self._checkpointer() if workflow.durable else self._scratch
        key = (workflow, id(saver))
        graph = self._graphs.get(key)
        if graph is None:
            compiled = invocable.compiled
            if not isinstance(compiled, Pregel):
                compiled = workflow.compile_graph()
            graph = compiled.copy(update={"checkpointer": saver})
            self._graphs[key] = graph
        return graph

    # ------------------------------------------------------------------------------- forking

    async def plan_fork(
        self, invocable: Invocable, history: Sequence[Event], *, at: int | None
    ) -> ForkPlan:
        """Reuse the origin's node updates up to step ``at`` (see
        :mod:`agentdeck_langgraph.forking`); a retry asks the origin's thread where it
        stopped."""
        workflow = invocable.definition
        if not isinstance(workflow, Workflow):
            raise ConfigError(
                f"invocable '{invocable.name}' is not a langgraph Workflow", setting="workflows"
            )
        graph = await self._graph(workflow, invocable)
        stopped_at: int | None = None
        if at is None and history:
            first = history[0]
            ref = RunRef(
                run_id=first.run_id,
                workflow=workflow.name,
                session_id=first.session_id,
                namespace=first.namespace,
            )
            origin = await graph.aget_state(
                cast(RunnableConfig, {"configurable": {"thread_id": workflow.thread_for(ref)}})
            )
            step = origin.metadata.get("step") if origin.metadata else None
            stopped_at = step if isinstance(step, int) and step >= 0 else None
        return plan_fork(graph, history, at, stopped_at=stopped_at, engine=self.name)

    # ------------------------------------------------------------------------------- playing

    async def play(self, invocation: Invocation) -> AsyncIterator[Payload]:
        workflow = invocation.invocable.definition
        if not isinstance(workflow, Workflow):
            raise ConfigError(
                f"invocable '{invocation.invocable.name}' is not a langgraph Workflow",
                setting="workflows",
            )
        graph = await self._graph(workflow, invocation.invocable)
        config = _config(workflow, invocation)
        start = await self._start(graph, config, workflow, invocation)
        if start.announce:
            for question in start.announce:
                yield _interrupted(question)
            return
        graph_input: Any = start.input
        turn = _Turn(state=start.state, already_done=start.already_done, step=start.step)
        while True:
            pump = partial(self._pump, graph, graph_input, config, invocation, turn)
            channel, task = pump_in_task(pump)
            try:
                # Drained here rather than through a generator wrapped around the channel,
                # which every payload and every wake-up would pass through (see pump_in_task).
                while (item := channel.take()) is not END:
                    if item is EMPTY:
                        await channel.arrival()
                    else:
                        yield item
                await task  # done: re-raises what the pump raised
            finally:
                if not task.done():  # the play was closed early: stop the graph with it
                    task.cancel()
                    await asyncio.wait({task})
            if turn.directive is not None:
                for payload in turn.directive.payloads:
                    yield payload
                return
            if turn.failure is not None:
                yield await self._failed(graph, config, workflow, invocation, turn.failure)
                return
            questions = [i for i in turn.interrupts if sleep_of(i) is None]
            sleeps = [s for i in turn.interrupts if (s := sleep_of(i)) is not None]
            if questions:
                self._say_parked_in_memory(workflow)
                for question in questions:
                    yield _interrupted(question)
                return
            if sleeps:
                now = invocation.clock.now()
                due = [s for s in sleeps if s.wake_at <= now]
                if due:  # its moment has come already: wake it in this play, record nothing
                    graph_input = Command(resume={s.interrupt_id: WOKEN for s in due})
                    turn = _Turn(state=turn.state, already_done=frozenset(turn.step_nodes))
                    continue
                self._say_parked_in_memory(workflow)
                yield RunPaused(
                    reason="sleep",
                    wake_at=min(s.wake_at for s in sleeps),
                    waiting_on=WaitKind.TIMER,
                )
                return
            if turn.breakpoint:
                self._say_parked_in_memory(workflow)
                yield RunPaused(reason="breakpoint")
                return
            state = (
                turn.state if turn.state is not None else (await graph.aget_state(config)).values
            )
            yield completed([_data_block(_output(graph, state))])
            return

    async def _pump(
        self,
        graph: Pregel[Any, Any, Any, Any],
        graph_input: Any,
        config: RunnableConfig,
        invocation: Invocation,
        turn: _Turn,
        channel: LiveChannel,
    ) -> None:
        """Stream the graph once, putting its payloads on ``channel`` and noting in ``turn``
        how it ended. Runs in a task of its own (:func:`~agentdeck_langgraph.live.pump_in_task`);
        the node boundary's directive is asked for here, before the next step can start."""
        stream = cast(
            AsyncGenerator[tuple[str, Any], None],
            graph.astream(
                graph_input,
                live_config(config, channel, tokens=invocation.deltas or self._always_deltas),
                context=invocation.context,
                stream_mode=list(STREAM_MODES),
                durability=DURABILITY,
            ),
        )
        try:
            while True:
                try:
                    mode, chunk = await anext(stream)
                except StopAsyncIteration:
                    return
                except Exception as exc:  # a node (or the graph) raised
                    turn.failure = exc
                    return
                if mode == "updates":
                    _put_node_updates(chunk, turn, channel)
                elif mode == "checkpoints" and _ends_a_step(chunk, turn):
                    await channel.flushed()  # the step's payloads come before any directive
                    directive = await invocation.safepoint(SafePoint.NODE_BOUNDARY)
                    if directive is not None:
                        turn.directive = directive
                        return
        finally:
            await stream.aclose()  # on a directive: LangGraph writes the checkpoint here

    async def _start(
        self,
        graph: Pregel[Any, Any, Any, Any],
        config: RunnableConfig,
        workflow: Workflow,
        invocation: Invocation,
    ) -> _Start:
        """What this play feeds the graph: the initial state, or how it continues the thread."""
        if invocation.entry is Entry.FRESH:
            reused = fork_updates(invocation.history)
            if reused or _is_fork(invocation):
                step = await rebuild_thread(
                    graph, config, _initial_state(invocation), reused, run_id=invocation.run_id
                )
                return _Start(input=None, step=step)
            return _Start(input=_initial_state(invocation))
        snapshot = await graph.aget_state(config)
        if snapshot.metadata is None:
            raise self._missing_thread(workflow, invocation, config)
        recorded_step = snapshot.metadata.get("step")
        step = recorded_step if isinstance(recorded_step, int) else None
        done = _completed_tasks(snapshot)
        sleeps = [s for i in snapshot.interrupts if (s := sleep_of(i)) is not None]
        if invocation.entry is Entry.ANSWERED:
            answers = _answers(invocation)
            resume: dict[str, Any] = {
                i.id: answers[i.id]
                for i in snapshot.interrupts
                if i.id in answers and sleep_of(i) is None
            }
            if not resume:
                pending = [i.id for i in snapshot.interrupts] or ["none"]
                raise ReplayError(
                    f"run '{invocation.run_id}' was answered about {sorted(answers)}, but its "
                    f"checkpoint waits on {pending}; the log and the checkpointer disagree",
                    run_id=invocation.run_id,
                    reason="checkpoint_mismatch",
                )
            now = invocation.clock.now()
            resume.update({s.interrupt_id: WOKEN for s in sleeps if s.wake_at <= now})
            return _Start(
                input=Command(resume=resume), state=snapshot.values, already_done=done, step=step
            )
        if sleeps:  # resumed (by the sweep, or early by an operator): wake every timer
            wake = {s.interrupt_id: WOKEN for s in sleeps}
            return _Start(
                input=Command(resume=wake), state=snapshot.values, already_done=done, step=step
            )
        questions = [i for i in snapshot.interrupts if sleep_of(i) is None]
        if questions:  # still waiting on a human: ask again rather than run past the question
            return _Start(input=None, announce=questions)
        return _Start(input=None, state=snapshot.values, already_done=done, step=step)

    def _missing_thread(
        self, workflow: Workflow, invocation: Invocation, config: RunnableConfig
    ) -> ReplayError:
        thread = config["configurable"]["thread_id"]
        if not workflow.durable or not self.durable:
            return ReplayError(
                f"run '{invocation.run_id}' of workflow '{workflow.name}' was parked in memory "
                f"(thread '{thread}') by a process that no longer holds it; a durable workflow "
                f"on a durable {CHECKPOINT_SETTING} (sqlite:// or postgresql://) can continue "
                "in another process",
                run_id=invocation.run_id,
                reason="parked_in_memory",
            )
        return ReplayError(
            f"run '{invocation.run_id}' of workflow '{workflow.name}' has no thread '{thread}' "
            f"in the checkpointer; is {CHECKPOINT_SETTING} the one the run started with?",
            run_id=invocation.run_id,
            reason="state_missing",
        )

    async def _failed(
        self,
        graph: Pregel[Any, Any, Any, Any],
        config: RunnableConfig,
        workflow: Workflow,
        invocation: Invocation,
        error: BaseException,
    ) -> RunFailed:
        where = await _failed_node(graph, config, error)
        log.warning(
            "run %s of workflow %r failed in node %s",
            invocation.run_id,
            workflow.name,
            where or "<graph>",
            exc_info=error,
        )
        return RunFailed(
            error_code=ErrorCode.ENGINE_ERROR, message=type(error).__name__, where=where
        )

    def _say_parked_in_memory(self, workflow: Workflow) -> None:
        """Say once, loudly, that a durable workflow parked where a restart loses it.

        Only when the deck's own state is durable: with ``AGENTDECK_STATE`` in memory the
        runtime already says so for the whole deck, and the checkpoints agree with it.
        """
        if self._warned_memory or not workflow.durable or self.durable:
            return
        if scheme_of(self.request.state_url) == "memory":
            return
        self._warned_memory = True
        log.warning(
            "workflow %r is durable but its checkpoints are in memory (%s=memory://) while "
            "the deck's state is at %s: a paused or waiting run will not survive this "
            "process; unset %s, or point it at sqlite:/// or postgresql://",
            workflow.name,
            CHECKPOINT_SETTING,
            redact_url(self.request.state_url),
            CHECKPOINT_SETTING,
        )


# =========================================================================== one play's notes


@dataclass(slots=True)
class _Start:
    input: Any
    state: Any = None
    already_done: frozenset[str] = frozenset()
    """Nodes of the step being continued that completed before it was parked: LangGraph replays
    their (already recorded) updates as cached, and the log must not get them twice."""
    announce: list[Interrupt] = field(default_factory=list)
    step: int | None = None
    """The step of the checkpoint the play goes on from (``None`` for a fresh run, whose
    first checkpoint is streamed)."""


@dataclass(slots=True)
class _Turn:
    """How one stream of the graph went."""

    state: Any = None
    already_done: frozenset[str] = frozenset()
    step: int | None = None
    """The step of the last checkpoint streamed; the nodes running now are in ``step + 1``."""
    step_nodes: set[str] = field(default_factory=set)
    """Nodes recorded since the last checkpoint (in the step running now)."""
    sole: str | None = None
    """The step running now's only task, when the last checkpoint named exactly one."""
    interrupts: list[Interrupt] = field(default_factory=list)
    breakpoint: bool = False
    directive: ControlDirective | None = None
    failure: BaseException | None = None


def _put_node_updates(chunk: Mapping[str, Any], turn: _Turn, channel: LiveChannel) -> None:
    """Put one ``updates`` item's payloads on the channel, noting interrupts and breakpoints.

    (A function that puts rather than a generator the pump iterates: this runs for every node
    of every run, and a generator costs its creation and a resumption per payload.)
    """
    metadata = chunk.get(_METADATA)
    cached = isinstance(metadata, Mapping) and bool(metadata.get("cached"))
    for node, update in chunk.items():
        if node == _METADATA:
            continue
        if node == _INTERRUPT:
            if update:
                turn.interrupts.extend(update)
            else:
                turn.breakpoint = True  # a static interrupt_before/after: no question, a stop
            continue
        if cached and node in turn.already_done:
            continue
        turn.step_nodes.add(node)
        step = turn.step + 1 if turn.step is not None else None
        if node == turn.sole:
            # The step's only task has returned, so LangGraph streams the step's checkpoint
            # next without running anything of the graph's in between: the play is woken
            # then (by the boundary's barrier, or by END after the last step) rather than
            # now and again then. Any other update (one of several tasks of a step, a
            # ``@task`` finishing inside its node) wakes it at once: more may run first.
            channel.queue(_node_updated(node, update, step))
        else:
            channel.put(_node_updated(node, update, step))


# Data fields hold JSON. A graph's values nearly always are JSON already (or convert to it the way
# the event's own validation converts them), so each payload is validated once as it is, and only
# a value validation refuses (NaN, an object JSON has no form for) goes through json_safe, which
# names what it cannot carry rather than failing the run: what is recorded is the same, and the
# common case skips a second JSON round trip per payload.


def _node_updated(node: str, update: Any, step: int | None) -> NodeUpdated:
    try:
        return NodeUpdated(node=node, update=update, step=step)
    except ValidationError:
        return NodeUpdated(node=node, update=json_safe(update), step=step)


def _data_block(value: Any) -> DataBlock:
    try:
        return data_block(value)
    except ValidationError:
        return DataBlock(data=json_safe(value))


def _ends_a_step(chunk: Mapping[str, Any], turn: _Turn) -> bool:
    """Note a ``checkpoints`` item; true when it closes a step this play ran and more follow."""
    turn.state = chunk.get("values", turn.state)
    following = chunk.get("next")
    turn.sole = following[0] if following and len(following) == 1 else None
    metadata = chunk.get("metadata")
    step = metadata.get("step") if metadata else None
    if isinstance(step, int):
        turn.step = step
    if not turn.step_nodes:
        return False  # no node of this play ran since the last checkpoint (a start, a replay)
    turn.already_done = frozenset()  # the continued step is over: no more replayed updates
    turn.step_nodes = set()
    return not turn.interrupts and bool(following)


def _config(workflow: Workflow, invocation: Invocation) -> RunnableConfig:
    """The run's config: its thread (and identity, for bridged nodes) over the LangGraph config
    its input recorded (:func:`~agentdeck_langgraph.with_config`), on every play of the run."""
    ref = RunRef(
        run_id=invocation.run_id,
        workflow=workflow.name,
        session_id=invocation.session_id,
        namespace=invocation.namespace,
    )
    given = _given_config(invocation)
    configurable: dict[str, Any] = {
        **(given.pop("configurable", None) or {}),
        "thread_id": workflow.thread_for(ref),
    }
    if workflow.needs_run_identity:
        configurable[RUN_ID_KEY] = invocation.run_id
        configurable[SESSION_KEY] = invocation.session_id
        configurable[NAMESPACE_KEY] = invocation.namespace
    return cast(RunnableConfig, {**given, "configurable": configurable})


def _given_config(invocation: Invocation) -> dict[str, Any]:
    blocks = invocation.input
    if len(blocks) == 2:
        return read_config(blocks[1]) or {}
    return {}


def _output(graph: Pregel[Any, Any, Any, Any], state: Any) -> Any:
    """What the graph's ``ainvoke`` returns for its final ``state``: the keys of its output
    schema (``StateGraph(..., output_schema=...)``), not the whole state; the value itself for
    a graph whose output is one channel (an ``@entrypoint``'s return value)."""
    channels = graph.output_channels
    if isinstance(channels, str) or not isinstance(state, Mapping):
        return state
    if set(channels) >= set(state):
        return state
    return {key: state[key] for key in channels if key in state}


def _initial_state(invocation: Invocation) -> Any:
    blocks = invocation.input
    if not blocks:
        return {}
    if len(blocks) == 2 and read_config(blocks[1]) is not None:
        blocks = blocks[:1]
    if len(blocks) == 1 and isinstance(blocks[0], DataBlock):
        data = blocks[0].data
        return {} if data is None else data
    kinds = ", ".join(getattr(block, "type", type(block).__name__) for block in blocks)
    raise InvalidInputError(
        f"workflow '{invocation.invocable.name}' takes its initial state as one data block "
        f"(JSON data); the run's input is: {kinds}",
        name=invocation.invocable.name,
    )


def _is_fork(invocation: Invocation) -> bool:
    """Whether a fresh play is a fork's first (from step 0 it reuses no update, but still goes
    on from a rebuilt checkpoint rather than the input)."""
    started = invocation.history[0].payload if invocation.history else None
    return isinstance(started, RunStarted) and started.forked_from is not None


def _answers(invocation: Invocation) -> dict[str, Any]:
    answers = {
        event.payload.interrupt_id: event.payload.value
        for event in invocation.history
        if isinstance(event.payload, AnswerRecorded)
    }
    answers.update(invocation.answers)
    return answers


def _completed_tasks(snapshot: StateSnapshot) -> frozenset[str]:
    return frozenset(
        task.name
        for task in snapshot.tasks
        if task.result is not None and not task.interrupts and task.error is None
    )


def _interrupted(question: Interrupt) -> RunInterrupted:
    schema = question.response_schema
    expected = AnswerShape(json_schema=schema) if isinstance(schema, dict) else None
    return RunInterrupted(
        interrupt_id=question.id,
        reason="human",
        payload=json_safe(question.value),
        expected=expected,
    )


async def _failed_node(
    graph: Pregel[Any, Any, Any, Any], config: RunnableConfig, error: BaseException
) -> str | None:
    """The node that raised: from the checkpoint's failed task, else LangGraph's note on the
    exception, else ``None`` (the graph itself failed: a recursion limit, a state the
    checkpointer cannot store)."""
    try:
        snapshot = await graph.aget_state(config)
    except Exception:
        snapshot = None
    if snapshot is not None:
        failed = [task.name for task in snapshot.tasks if task.error is not None]
        if failed:
            return failed[0]
    for note in getattr(error, "__notes__", ()):
        found = _TASK_NOTE.search(str(note))
        if found:
            return found.group(1)
    return None
