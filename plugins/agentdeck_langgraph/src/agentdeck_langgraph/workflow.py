"""``Workflow``: a LangGraph graph declared as an AgentDeck workflow.

Two ways in:

* ``Workflow("approval", builder)`` with a ``StateGraph`` *builder*: the engine compiles it (with
  the deck's checkpointer) when the deck builds, after installing the ``ToolCtx`` bridge on a
  copy of it (:mod:`agentdeck_langgraph.nodes`);
* ``Workflow.from_graph("approval", compiled)`` with an *existing compiled graph*: it runs
  unchanged (the engine only gives a copy of it the deck's checkpointer), for a graph written
  without AgentDeck in mind.

A module-level ``Workflow`` in ``.agentdeck/workflows/<bundle>/workflow.py`` is discovered like
any workflow (it carries the catalog's ``__agentdeck_workflow__`` marker), and
:meth:`Workflow.context_sites` lets the deck's build-time context check walk every node.

:meth:`Workflow.run` / :meth:`Workflow.resume` run the graph *headless*: directly, on a
checkpointer of the caller's (default: one in this process's memory), with no event log, no
observers and no run control. They are the convenience path for using the graph without a Deck;
``Deck.run()`` is the path with the contract.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import StateGraph
from langgraph.pregel import Pregel

from agentdeck.authoring.context_check import Requirement
from agentdeck.errors import ConfigError
from agentdeck.model.clock import Clock, SystemClock
from agentdeck_langgraph.headless import resume_headless, run_headless
from agentdeck_langgraph.nodes import bridge_nodes, context_sites, refuse_unbridgeable

__all__ = ["RunRef", "ThreadPolicy", "Workflow"]


@dataclass(frozen=True, slots=True)
class RunRef:
    """The run a LangGraph thread is chosen for (what a ``thread_id=`` callable receives)."""

    run_id: str
    workflow: str
    session_id: str | None = None
    namespace: str | None = None


ThreadPolicy = Callable[[RunRef], str]
"""Chooses a run's LangGraph ``thread_id``; by default the thread is the run's own id."""


class Workflow:
    """A LangGraph graph as an AgentDeck workflow (see the module doc).

    :param name: how the deck addresses it (``deck.run(name, state)``).
    :param graph: the ``StateGraph`` builder; :meth:`from_graph` takes a compiled graph.
    :param description: shown in listings.
    :param durable: checkpoint on the deck's checkpointer (``AGENTDECK_CHECKPOINT``, by default
        beside the deck's state), so a paused, sleeping or waiting run continues in another
        process. ``False`` keeps its checkpoints in this engine's memory: cheaper, and a run
        parked there cannot continue anywhere else (``ReplayError``, reason
        ``parked_in_memory``).
    :param thread_id: chooses the LangGraph thread from the run (:class:`RunRef`). Default: the
        run's own id, so every run has its own thread. A policy that reuses threads (one per
        session, say) makes a new run continue the state the last one left.
    """

    __agentdeck_workflow__: ClassVar[str] = "langgraph"
    """The catalog's discovery marker: instances are workflows of the ``langgraph`` kind."""

    def __init__(
        self,
        name: str,
        graph: StateGraph[Any, Any, Any, Any],
        *,
        description: str = "",
        durable: bool = True,
        thread_id: ThreadPolicy | None = None,
    ) -> None:
        if isinstance(graph, Pregel):
            raise ConfigError(
                f"workflow {name!r} was given a compiled graph; pass the StateGraph builder to "
                "Workflow(...), or wrap the compiled graph unchanged with Workflow.from_graph()",
                setting="workflows",
            )
        if not isinstance(graph, StateGraph):
            raise ConfigError(
                f"workflow {name!r} needs a langgraph StateGraph, not {type(graph).__name__}",
                setting="workflows",
            )
        self._init(name, description, durable, thread_id)
        self._builder: StateGraph[Any, Any, Any, Any] | None = graph
        self._given: Pregel[Any, Any, Any, Any] | None = None

    @classmethod
    def from_graph(
        cls,
        name: str,
        graph: Pregel[Any, Any, Any, Any],
        *,
        description: str = "",
        durable: bool = True,
        thread_id: ThreadPolicy | None = None,
    ) -> Workflow:
        """Wrap an existing compiled graph without changing it.

        The engine runs a copy of it that uses the deck's checkpointer instead of whatever it
        was compiled with. Its nodes reach the run's context through ``runtime: Runtime[T]``;
        a node declaring ``ToolCtx[T]`` is refused here, since nothing can be injected into a
        graph that runs unchanged.
        """
        if isinstance(graph, StateGraph):
            raise ConfigError(
                f"workflow {name!r}: from_graph() wraps a compiled graph; pass a StateGraph "
                "builder to Workflow(...) instead, or call .compile() on it first",
                setting="workflows",
            )
        if not isinstance(graph, Pregel):
            raise ConfigError(
                f"workflow {name!r}: from_graph() needs a compiled LangGraph graph, not "
                f"{type(graph).__name__}",
                setting="workflows",
            )
        workflow = cls.__new__(cls)
        workflow._init(name, description, durable, thread_id)
        refuse_unbridgeable(graph, name)
        workflow._builder = None
        workflow._given = graph
        return workflow

    def _init(
        self, name: str, description: str, durable: bool, thread_id: ThreadPolicy | None
    ) -> None:
        given: object = name
        if not isinstance(given, str) or not name.strip() or name != name.strip():
            raise ConfigError(
                f"workflow name {name!r} must be a non-empty string without surrounding spaces",
                setting="name",
            )
        if thread_id is not None and not callable(thread_id):
            raise ConfigError(
                f"workflow {name!r}: thread_id= takes a callable RunRef -> str, not "
                f"{type(thread_id).__name__}",
                setting="thread_id",
            )
        self.name = name
        self.description = description
        self.durable = bool(durable)
        self.thread_id = thread_id
        self._compiled: Pregel[Any, Any, Any, Any] | None = None
        self._needs_identity = False
        self._headless_saver: BaseCheckpointSaver[Any] | None = None

    # ------------------------------------------------------------------------------- reading

    @property
    def graph(self) -> StateGraph[Any, Any, Any, Any] | Pregel[Any, Any, Any, Any]:
        """The builder or the compiled graph this workflow was declared with, as given."""
        if self._builder is not None:
            return self._builder
        assert self._given is not None
        return self._given

    def context_sites(self) -> Iterator[tuple[str, Requirement]]:
        """Every node (subgraphs included) that asks for the run's context, with what it asks:
        ``ToolCtx[T]`` parameters and ``runtime: Runtime[T]``. The deck's build-time check
        names each as ``node '<name>' (<function>) of workflow '<workflow>'``."""
        return context_sites(self.graph)

    def compile_graph(self) -> Pregel[Any, Any, Any, Any]:
        """The graph the engine runs (before it is given a checkpointer); compiled once.

        Opens nothing and touches no network. An invalid graph (no entry point, an edge to a
        node that does not exist) is a :class:`ConfigError` naming the workflow and LangGraph's
        reason.
        """
        if self._compiled is None:
            if self._given is not None:
                self._compiled = self._given
            else:
                assert self._builder is not None
                bridged = bridge_nodes(self._builder, self.name)
                self._needs_identity = bridged is not self._builder
                try:
                    self._compiled = bridged.compile(name=self.name)
                except ValueError as exc:
                    raise ConfigError(
                        f"workflow {self.name!r} does not compile: {exc}", setting="workflows"
                    ) from exc
        return self._compiled

    @property
    def needs_run_identity(self) -> bool:
        """Whether a node reads the run's identity (a bridged ``ToolCtx`` node): only then does
        the engine put it in the graph's config, whose every key LangGraph copies into each
        task's metadata."""
        self.compile_graph()
        return self._needs_identity

    def digest(self) -> str:
        """A fingerprint of the graph's *shape*: its nodes, what triggers each, its channels.

        Recorded as the run's ``code_digest``. A run is refused continuation when the shape
        changed since it started (a checkpoint pointing at a node that no longer exists cannot
        be continued), while an edit inside a node body keeps the digest: LangGraph re-runs
        the node with the new code, which is what a fix deployed to a parked run wants.
        """
        compiled = self.compile_graph()
        shape = {
            "nodes": {
                name: sorted(map(str, node.triggers)) for name, node in compiled.nodes.items()
            },
            "channels": sorted(compiled.channels),
        }
        return hashlib.sha256(json.dumps(shape, sort_keys=True).encode()).hexdigest()

    def thread_for(self, run: RunRef) -> str:
        """The LangGraph thread ``run`` plays on (its own id unless ``thread_id=`` says else)."""
        if self.thread_id is None:
            return run.run_id
        chosen = self.thread_id(run)
        if not isinstance(chosen, str) or not chosen:
            raise ConfigError(
                f"workflow {self.name!r}: thread_id= returned {chosen!r}; it must return a "
                "non-empty string",
                setting="thread_id",
            )
        return chosen

    # ------------------------------------------------------------------------------- headless

    async def run(
        self,
        input: Any = None,
        *,
        context: Any = None,
        thread_id: str | None = None,
        checkpointer: BaseCheckpointSaver[Any] | None = None,
        clock: Clock | None = None,
    ) -> Any:
        """Run the graph directly, without a Deck: the final state, or a
        :class:`PendingInterrupt` when a node asked a question.

        Bypasses the event log, observers and run control entirely; nothing is recorded.
        ``context`` reaches nodes as with a deck (``Runtime[T]`` and ``ToolCtx[T]``, whose run
        id is ``None`` here). A ``sleep_until`` waits in this process, on ``clock``. The thread
        is new unless ``thread_id`` is given; answer a question with :meth:`resume` on the same
        thread and checkpointer.
        """
        return await run_headless(
            self._headless_graph(checkpointer),
            input,
            context=context,
            thread_id=thread_id,
            clock=clock or SystemClock(),
        )

    async def resume(
        self,
        thread_id: str,
        value: Any = None,
        *,
        interrupt_id: str | None = None,
        context: Any = None,
        checkpointer: BaseCheckpointSaver[Any] | None = None,
        clock: Clock | None = None,
    ) -> Any:
        """Answer the question a headless run is waiting on and run on (headless, like
        :meth:`run`). ``interrupt_id`` is needed only when several questions are open."""
        return await resume_headless(
            self._headless_graph(checkpointer),
            thread_id,
            value,
            interrupt_id=interrupt_id,
            context=context,
            clock=clock or SystemClock(),
        )

    def _headless_graph(
        self, checkpointer: BaseCheckpointSaver[Any] | None
    ) -> Pregel[Any, Any, Any, Any]:
        compiled = self.compile_graph()
        if checkpointer is None:
            own = compiled.checkpointer
            if isinstance(own, BaseCheckpointSaver):
                return compiled  # an existing graph keeps the checkpointer it was built with
            if self._headless_saver is None:
                self._headless_saver = InMemorySaver()
            checkpointer = self._headless_saver
        return compiled.copy(update={"checkpointer": checkpointer})

    def __repr__(self) -> str:
        kind = "from_graph" if self._given is not None else "builder"
        return f"Workflow(name={self.name!r}, {kind}, durable={self.durable})"
