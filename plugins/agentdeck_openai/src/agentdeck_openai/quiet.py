"""Quiet plays: a run nobody reads token by token, played on the SDK's ``Runner.run``.

``Deck.run()`` returns only the result, so its invocation asks for no deltas
(:attr:`agentdeck.ports.Invocation.deltas` is false). ``Runner.run_streamed`` costs the SDK a
background task, an event queue and a stream event per item on top of ``Runner.run`` (about
0.8 ms of CPU for a turn with one tool call), and over HTTP the ``openai`` client validates
every SSE event into a typed object; for deltas nobody wants that is pure loss. Unless
``AGENTDECK_RUNNER_DELTAS=always``, such a play runs ``Runner.run`` instead, and the log gets the
same events from the SDK's run hooks (:class:`QuietHooks`):

=========================  ===========================================================
run hook                   payloads
=========================  ===========================================================
``on_llm_end``             ``usage.reported``, then each ``message.completed`` and
                           ``tool.call.started`` of the reply, in order
``on_tool_end``            ``tool.call.completed`` (events the tool emitted first)
``on_llm_start``           ``tool.call.completed`` of calls no tool served (a rejection)
``on_handoff``             ``agent.changed``
=========================  ===========================================================

The hooks run in the SDK's task; they hand payloads to the play through a :class:`Feed`, which
the play drains in order, yielding each payload to the runtime. A hook needing a safe point
waits on the feed until the play has yielded everything before it and asked the runtime.

**Safe points.** Before a tool runs, through the SDK's approval check
(:mod:`agentdeck_openai.dispatch_gate`): a directive holds the call, the SDK stops on it with a
state the play saves, and a resumed run lets it through. After a model reply that calls no tool,
the stream-item safe point: a pause there keeps the run's output, which the resumed run
completes with. Between those a pause or cancel waits: a model call, a handoff and a tool that
needs no gate (MCP) are not interrupted. Nothing else differs from a streamed play: approvals,
child runs and failures go through the same code.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from agents import RunHooks
from agents.items import ModelResponse

from agentdeck.model.payloads import AgentChanged, Payload
from agentdeck.ports import ControlDirective
from agentdeck.vocabulary import SafePoint
from agentdeck_openai.scope import RunScope
from agentdeck_openai.translate import Translator

__all__ = ["END", "Feed", "QuietHooks", "SafePointAsk"]


@dataclass(frozen=True, slots=True)
class SafePointAsk:
    """A hook's request: take this safe point once what came before is recorded."""

    point: SafePoint
    answer: asyncio.Future[ControlDirective | None]


END = object()
"""Put on the feed when the SDK run has ended (returned or raised)."""


class Feed:
    """Payload batches and safe-point requests from the SDK's task, in the order they came."""

    __slots__ = ("_queue",)

    def __init__(self) -> None:
        self._queue: asyncio.Queue[object] = asyncio.Queue()

    def put(self, payloads: list[Payload]) -> None:
        if payloads:
            self._queue.put_nowait(payloads)

    def end(self) -> None:
        self._queue.put_nowait(END)

    async def safepoint(self, point: SafePoint) -> ControlDirective | None:
        answer: asyncio.Future[ControlDirective | None] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait(SafePointAsk(point, answer))
        return await answer

    async def next(self) -> object:
        """A payload list, a :class:`SafePointAsk`, or :data:`END`."""
        return await self._queue.get()


class QuietHooks(RunHooks[Any]):
    """The SDK's run hooks of one quiet play, translated into payloads on the feed.

    The SDK takes one ``RunHooks`` per run, so the application's own (``Agent(run_hooks=...)``)
    are ``inner``: each of them is called right after this one's work for the same point.
    """

    def __init__(
        self,
        scope: RunScope,
        translator: Translator,
        feed: Feed,
        inner: RunHooks[Any] | None = None,
    ) -> None:
        self._scope = scope
        self._translator = translator
        self._feed = feed
        self._inner = inner

    async def on_llm_start(
        self, context: Any, agent: Any, system_prompt: Any, input_items: Iterable[Any]
    ) -> None:
        items = list(input_items)
        self._feed.put(self._translator.outputs_sent(items))
        if self._inner is not None:
            await self._inner.on_llm_start(context, agent, system_prompt, items)

    async def on_llm_end(self, context: Any, agent: Any, response: ModelResponse) -> None:
        self._scope.new_turn()
        self._feed.put(self._translator.model_response(agent, response))
        if self._inner is not None:
            await self._inner.on_llm_end(context, agent, response)
        if not _calls_anything(response):
            # The reply ends the run (or hands nothing on): the stream-item safe point. A
            # directive here is obeyed once the SDK returns (see Play).
            await self._feed.safepoint(SafePoint.STREAM_ITEM)

    async def on_agent_start(self, context: Any, agent: Any) -> None:
        if self._inner is not None:
            await self._inner.on_agent_start(context, agent)

    async def on_agent_end(self, context: Any, agent: Any, output: Any) -> None:
        if self._inner is not None:
            await self._inner.on_agent_end(context, agent, output)

    async def on_tool_start(self, context: Any, agent: Any, tool: Any) -> None:
        if self._inner is not None:
            await self._inner.on_tool_start(context, agent, tool)

    async def on_tool_end(self, context: Any, agent: Any, tool: Any, result: Any) -> None:
        call_id = getattr(context, "tool_call_id", None)
        self._feed.put(
            self._translator.tool_ended(call_id, result, getattr(context, "tool_call", None))
        )
        if self._inner is not None:
            await self._inner.on_tool_end(context, agent, tool, result)

    async def on_handoff(self, context: Any, from_agent: Any, to_agent: Any) -> None:
        self._feed.put([AgentChanged(previous=from_agent.name, next=to_agent.name)])
        if self._inner is not None:
            await self._inner.on_handoff(context, from_agent, to_agent)


def _calls_anything(response: ModelResponse) -> bool:
    """Whether a reply calls a tool or hands off (anything the SDK acts on before it ends)."""
    for item in response.output:
        kind = getattr(item, "type", None)
        if isinstance(kind, str) and kind.endswith("_call"):
            return True
    return False
