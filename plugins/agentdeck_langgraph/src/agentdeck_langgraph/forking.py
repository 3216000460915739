"""Forking a LangGraph run: going on from the checkpoint of a recorded step, on a new thread.

LangGraph's own time travel reruns a thread from a past ``checkpoint_id``. A deck plays with
``durability="exit"`` (:mod:`agentdeck_langgraph.engine`), so the checkpoints between a run's
start and its stop are never written; what *is* kept for every step is the run's log: one
``node.updated(node, update, step)`` per node that completed. A fork from step ``k`` therefore
rebuilds the checkpoint of step ``k`` on the new run's own thread from that log, with
LangGraph's ``bulk_update_state``: the run's input written as ``__start__`` writes it, then each
recorded step ``1 .. k`` as one superstep of updates applied *as the nodes that wrote them* (so
reducers combine them and the graph's edges choose the next nodes, as when they ran). The graph
then goes on from there (``astream(None, ...)``), executing step ``k + 1`` onwards for real.

The updates reused are copied into the new run's log first (the runtime records the
:class:`~agentdeck.ports.ForkPlan`'s seed right after ``run.started``), so the new thread is
rebuilt from the new run's own log, and a fork of a fork works the same way.

A retry goes on from the checkpoint the origin stopped at: its thread's last checkpoint says
which step that is (every step up to it completed). When the origin's thread is gone (it was
kept in another process's memory), every recorded step but the last is reused, the last being
possibly a step some of whose nodes failed.

What the log cannot carry cannot be forked: only a ``StateGraph``'s runs fork (an
``@entrypoint``'s progress is not a sequence of node updates; a retry of one starts it again);
updates are replayed as the JSON the log holds; and a step whose node routes with
``Command(goto=...)`` is no fork point, since the log records the node's update but not where it
sent the graph (fork at the step before it, which runs the node again; a retry does so itself).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import groupby
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph
from langgraph.pregel import Pregel
from langgraph.types import StateUpdate

from agentdeck.errors import ForkUnsupportedError, InvalidInputError, ReplayError
from agentdeck.model.events import Event
from agentdeck.model.payloads import NodeUpdated
from agentdeck.ports import ForkPlan

__all__ = ["fork_updates", "plan_fork", "rebuild_thread"]

_START = "__start__"


def fork_updates(history: Sequence[Event]) -> list[NodeUpdated]:
    """The node updates a fork's first play replays: those in its log before any play of its
    own (right after ``run.started``, where the runtime recorded its seed)."""
    updates: list[NodeUpdated] = []
    for event in history[1:]:
        if not isinstance(event.payload, NodeUpdated):
            break
        updates.append(event.payload)
    return updates


def plan_fork(
    graph: Pregel[Any, Any, Any, Any],
    history: Sequence[Event],
    at: int | None,
    *,
    stopped_at: int | None,
    engine: str,
) -> ForkPlan:
    """The plan for a fork of the run whose log is ``history`` from step ``at`` (a retry when
    ``None``: from ``stopped_at``, the step of the origin's last checkpoint, if known)."""
    run_id = history[0].run_id if history else ""
    recorded = [
        event.payload
        for event in history
        if isinstance(event.payload, NodeUpdated) and event.payload.step is not None
    ]
    if not isinstance(graph, CompiledStateGraph):
        if at is None:
            return ForkPlan(at=0)  # a retry of an @entrypoint: started again with its input
        raise ForkUnsupportedError(
            run_id=run_id,
            engine=engine,
            why="forks StateGraph runs only: an @entrypoint's progress is not recorded as node "
            "updates; retry it instead, which starts it again",
        )
    last = max((update.step for update in recorded if update.step is not None), default=0)
    routers = _routed_by_command(graph)
    if at is None:
        at = min(stopped_at if stopped_at is not None else max(last - 1, 0), last)
        while at > 0 and _routing_nodes(recorded, at, routers):
            at -= 1  # a retry runs such a step again rather than lose where it went
    elif at < 0 or at > last:
        raise InvalidInputError(
            f"run '{run_id}' cannot be forked at step {at}: its log records steps 1 to {last} "
            f"(0 is its input), so a fork starts at 0 to {last}",
            name=run_id,
            field="at",
        )
    elif routing := _routing_nodes(recorded, at, routers):
        raise InvalidInputError(
            f"run '{run_id}' cannot be forked at step {at}: node {routing[0]!r} routes with "
            "Command(goto=...), which the log does not record, so the step after it is unknown; "
            f"fork at step {at - 1} to run {routing[0]!r} again",
            name=run_id,
            field="at",
        )
    return ForkPlan(at=at, seed=tuple(u for u in recorded if u.step is not None and u.step <= at))


def _routed_by_command(graph: Pregel[Any, Any, Any, Any]) -> frozenset[str]:
    """Nodes that may choose where the graph goes with ``Command(goto=...)`` (declared with
    ``destinations=`` or a ``Command[Literal[...]]`` return type)."""
    builder = getattr(graph, "builder", None)
    nodes = getattr(builder, "nodes", {})
    return frozenset(name for name, spec in nodes.items() if getattr(spec, "ends", None))


def _routing_nodes(
    recorded: Sequence[NodeUpdated], step: int, routers: frozenset[str]
) -> list[str]:
    return [u.node for u in recorded if u.step == step and u.node in routers]


async def rebuild_thread(
    graph: Pregel[Any, Any, Any, Any],
    config: RunnableConfig,
    initial: Any,
    updates: Sequence[NodeUpdated],
    *,
    run_id: str,
) -> int:
    """Write the checkpoint a fork goes on from onto the fork's (empty) thread; its step."""
    existing = await graph.aget_state(config)
    if existing.metadata is not None:
        thread = config["configurable"]["thread_id"]
        raise ReplayError(
            f"run '{run_id}' is a fork, but its thread '{thread}' already holds checkpoints "
            "(a thread_id= policy gives it another run's thread); a fork needs a thread of "
            "its own",
            run_id=run_id,
            reason="thread_taken",
        )
    # The input written as the start node writes it (step 0), as a run's first step does.
    supersteps: list[list[StateUpdate]] = [[StateUpdate(values=initial, as_node=_START)]]
    step = 0
    for step_number, group in groupby(updates, key=lambda update: update.step):
        supersteps.append([StateUpdate(values=u.update, as_node=u.node) for u in group])
        step = step_number or step
    await graph.abulk_update_state(config, supersteps)
    return step
