"""The headless path: a workflow's graph run directly, without a Deck, an event log or observers.

What ``Workflow.run()`` and ``Workflow.resume()`` do. A question a node asks with ``interrupt()``
comes back as a :class:`PendingInterrupt` (the 4.x ``InterruptResult`` shape); a
``sleep_until`` waits in this process on the caller's clock and then continues. Nothing here is
recorded anywhere but in the checkpointer the caller chose.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph
from langgraph.pregel import Pregel
from langgraph.types import Command, Interrupt

from agentdeck.errors import InvalidInputError, NotFoundError
from agentdeck.model.clock import Clock
from agentdeck_langgraph.run_config import GraphInput
from agentdeck_langgraph.timers import WOKEN, sleep_of

__all__ = ["PendingInterrupt", "resume_headless", "run_headless"]


class PendingInterrupt(dict[str, Any]):
    """A headless run parked on a question: ``{"type": "interrupt", "payload", "thread_id",
    "id"}``, where ``id`` is the interrupt's id and ``thread_id`` the LangGraph thread to
    resume. A ``dict`` so the 4.x idiom of indexing keeps working; attributes are the typed way
    in. (A Deck run returns the core's ``InterruptResult``, addressed by its run id instead.)"""

    def __init__(self, *, thread_id: str, interrupt: Interrupt) -> None:
        super().__init__(
            type="interrupt", payload=interrupt.value, thread_id=thread_id, id=interrupt.id
        )

    @property
    def payload(self) -> Any:
        return self["payload"]

    @property
    def thread_id(self) -> str:
        return str(self["thread_id"])

    @property
    def interrupt_id(self) -> str:
        return str(self["id"])


async def run_headless(
    graph: Pregel[Any, Any, Any, Any],
    input: Any,
    *,
    context: Any,
    thread_id: str | None,
    clock: Clock,
) -> Any:
    """Run ``graph`` from ``input`` on a new (or the given) thread until it finishes or asks.

    A ``StateGraph``'s input is its initial state, a mapping (``None``: an empty one); another
    graph (an ``@entrypoint``) is given ``input`` as it is. An input wrapped by
    :func:`~agentdeck_langgraph.with_config` is played with that config."""
    given: dict[str, Any] = {}
    if isinstance(input, GraphInput):
        given, input = dict(input.config), input.input
    if isinstance(graph, CompiledStateGraph):
        if input is not None and not isinstance(input, Mapping):
            raise InvalidInputError(
                f"a workflow's input is its initial state, a mapping; got {type(input).__name__}",
                name=graph.name,
            )
        input = dict(input or {})
    thread = thread_id or f"headless-{uuid.uuid4().hex}"
    config = _config(thread)
    configurable = {**given.pop("configurable", {}), **config["configurable"]}
    config = cast(RunnableConfig, {**given, "configurable": configurable})
    return await _drive(graph, input, config, context=context, clock=clock)


async def resume_headless(
    graph: Pregel[Any, Any, Any, Any],
    thread_id: str,
    value: Any,
    *,
    interrupt_id: str | None,
    context: Any,
    clock: Clock,
) -> Any:
    """Answer the open question on ``thread_id`` with ``value`` and run on."""
    config = _config(thread_id)
    snapshot = await graph.aget_state(config)
    if snapshot.metadata is None:
        raise NotFoundError(
            f"no thread '{thread_id}' in this workflow's checkpointer; resume on the thread and "
            "checkpointer the run used",
            what="thread",
            name=thread_id,
        )
    questions = [i for i in snapshot.interrupts if sleep_of(i) is None]
    open_ids = [i.id for i in questions]
    if interrupt_id is None:
        if len(questions) != 1:
            raise InvalidInputError(
                f"thread '{thread_id}' has {len(questions)} open questions "
                f"({', '.join(open_ids) or 'none'}); say which with interrupt_id=",
                name=thread_id,
                field="interrupt_id",
            )
        interrupt_id = questions[0].id
    elif interrupt_id not in open_ids:
        raise InvalidInputError(
            f"thread '{thread_id}' has no open question '{interrupt_id}'; open: "
            f"{', '.join(open_ids) or 'none'}",
            name=thread_id,
            field="interrupt_id",
        )
    return await _drive(
        graph, Command(resume={interrupt_id: value}), config, context=context, clock=clock
    )


def _config(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id}}


async def _drive(
    graph: Pregel[Any, Any, Any, Any],
    graph_input: Any,
    config: RunnableConfig,
    *,
    context: Any,
    clock: Clock,
) -> Any:
    thread = str(config["configurable"]["thread_id"])
    while True:
        output = await graph.ainvoke(
            graph_input, config, context=context, durability="sync", version="v2"
        )
        if not output.interrupts:
            return output.value
        questions = [i for i in output.interrupts if sleep_of(i) is None]
        if questions:
            return PendingInterrupt(thread_id=thread, interrupt=questions[0])
        sleeps = [s for i in output.interrupts if (s := sleep_of(i)) is not None]
        wake_at = min(s.wake_at for s in sleeps)
        delay = (wake_at - clock.now()).total_seconds()
        if delay > 0:
            await clock.sleep(delay)
        now = clock.now()
        graph_input = Command(resume={s.interrupt_id: WOKEN for s in sleeps if s.wake_at <= now})
