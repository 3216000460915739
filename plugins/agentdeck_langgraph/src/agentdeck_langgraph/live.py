"""What nodes write while they run, recorded while they run, without LangGraph's concurrent runner.

LangGraph streams custom writes (stream mode ``custom``) and chat-model tokens (``messages``)
only by switching its runner from running a step's single task inline to scheduling every
task with a waiter task beside it and ``asyncio.wait`` between them. On a small graph that
costs a fifth to a quarter of the run (``benchmarks/bench_langgraph.py``), paid by every run
whether or not any node writes or calls a model. So the engine streams only ``updates`` and
``checkpoints`` and takes the other two through a channel of its own, one per play:

* **Custom writes.** :func:`live_config` puts a LangGraph ``Runtime`` carrying the engine's
  writer into the run's config, next to an (empty) parent stream. LangGraph hands a node the
  writer of the runtime in its config when the config carries a parent stream (the way it wires
  a subgraph's writes to its parent), so ``get_stream_writer()``, ``runtime.stream_writer`` and
  an injected ``writer`` all reach :class:`LiveChannel`. Those two config keys are LangGraph
  internals (``langgraph._internal._constants``); ``tests/test_events.py`` and
  ``tests/test_live.py`` pin the behaviour, so a LangGraph release that moves them fails there.
* **Model tokens.** :class:`TokenTap` is a callback handler in the run's config. A LangChain chat
  model streams when a handler *looks like* a streaming handler (it has ``tap_output_aiter``
  and ``tap_output_iter``); LangGraph switches nodes to ``astream`` only for handlers that
  *inherit* the streaming base. The tap looks like one and does not inherit it, so models
  stream their tokens and nodes run as they would bare. A run played without deltas
  (``Invocation.deltas`` false: ``Deck.run()``, which returns only the result) gets no tap.
* **Liveness.** The engine iterates the graph in a task of its own and the play drains
  :class:`LiveChannel`, so a token a model streams while its node is still running is recorded
  then, not when the node returns.

What reaches the run is what LangGraph's own modes gave a stream with ``subgraphs=False``:
writes and tokens of the graph's own tasks (``@task`` calls included), not of a subgraph's
nodes. A write from a worker thread (a sync node) is handed to the event loop in call order,
ahead of the node's own update.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler, BaseCallbackManager, Callbacks
from langchain_core.outputs import ChatGenerationChunk, GenerationChunk
from langchain_core.runnables import RunnableConfig
from langgraph._internal._constants import CONFIG_KEY_RUNTIME, CONFIG_KEY_STREAM
from langgraph.config import get_config
from langgraph.constants import TAG_NOSTREAM
from langgraph.pregel._messages import graph_namespace
from langgraph.pregel.protocol import StreamProtocol
from langgraph.runtime import Runtime

from agentdeck_langgraph.streaming import custom_payload, message_payloads

__all__ = ["EMPTY", "END", "LiveChannel", "Pump", "TokenTap", "live_config", "pump_in_task"]

_NAMESPACE_KEY = "langgraph_checkpoint_ns"
"""Run metadata LangGraph gives every task: where in the graph (and its subgraphs) it runs."""

END = object()
"""Put by the engine when its graph task is over: nothing follows."""
EMPTY = object()
"""What :meth:`LiveChannel.take` returns when nothing is queued."""


class LiveChannel:
    """One play's mailbox: payloads in the order they happened, from any thread.

    The graph task and the callbacks it triggers put; the play takes. A put from the event
    loop's own thread is appended at once (so a node's writes precede the update LangGraph
    streams when the node returns); one from a worker thread is handed to the loop.
    """

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        self._items: deque[Any] = deque()
        self._waiter: asyncio.Future[None] | None = None

    def put(self, item: Any) -> None:
        """Queue a payload (or :data:`END`); safe from any thread."""
        if threading.get_ident() == self._thread:
            self._append(item)
        else:
            self._loop.call_soon_threadsafe(self._append, item)

    def queue(self, item: Any) -> None:
        """Queue a payload without waking the play, from the event loop's thread: for one the
        pump knows something else wakes it for before anything of the graph runs (a barrier
        at the node boundary, :data:`END`, the next :meth:`put`). Saves the play a wake-up
        that would only find part of what it is about to be woken for."""
        self._items.append(item)

    def _append(self, item: Any) -> None:
        self._items.append(item)
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    def take(self) -> Any:
        """The next payload, :data:`END`, or :data:`EMPTY` when nothing is queued (then await
        :meth:`arrival`).

        Taking an item releases the barriers queued ahead of it: the play asks for the next
        item only once the run has recorded the last one it yielded (see :meth:`flushed`).
        """
        items = self._items
        while items:
            item = items.popleft()
            if not isinstance(item, asyncio.Future):  # a payload, or END
                return item
            if not item.done():
                item.set_result(None)
        return EMPTY

    def arrival(self) -> asyncio.Future[None]:
        """A future done when the next item is put; for a consumer that found none queued."""
        waiter = self._waiter = self._loop.create_future()
        return waiter

    async def flushed(self) -> None:
        """Return once every payload put so far has been yielded by the play *and* the run has
        asked for the next one (so the runtime recorded them all): what a safe point needs.

        Free when the play is already waiting on an empty channel; otherwise a barrier is
        queued behind the payloads and the play releases it on reaching it.
        """
        if not self._items and self._waiter is not None and not self._waiter.done():
            return
        barrier: asyncio.Future[None] = self._loop.create_future()
        self._append(barrier)
        await barrier

    # ---------------------------------------------------------------------- what nodes call

    def write(self, value: Any) -> None:
        """The run's stream writer: a custom write of one of the graph's own tasks."""
        if _in_the_graph_itself():
            self.put(custom_payload(value))


def _in_the_graph_itself() -> bool:
    """Whether the task writing now belongs to the played graph rather than to a subgraph
    (LangGraph's ``custom`` mode without ``subgraphs`` never saw a subgraph's writes)."""
    try:
        metadata = get_config().get("metadata") or {}
    except RuntimeError:  # called outside any task (a thread the node started): keep it
        return True
    return _NAMESPACE_KEY not in metadata or not graph_namespace(metadata)


class TokenTap(BaseCallbackHandler):
    """Turns the tokens of chat models called by the graph's own tasks into ``text.delta``.

    Only model events are wanted: chains, tools, retrievers and agents are ignored, so the
    callback manager skips this handler for every node run.
    """

    run_inline = True
    """Called on the thread that fires the event, never in an executor: order is kept."""
    ignore_chain = True
    ignore_agent = True
    ignore_retriever = True
    ignore_retry = True
    ignore_custom_event = True

    def __init__(self, channel: LiveChannel) -> None:
        self._channel = channel
        self._streaming: set[UUID] = set()

    # Duck-typed streaming handler (see the module doc): these two make chat models stream.
    def tap_output_aiter(self, run_id: UUID, output: Any) -> Any:
        return output

    def tap_output_iter(self, run_id: UUID, output: Any) -> Any:
        return output

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[Any]],
        *,
        run_id: UUID,
        tags: list[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if not metadata or _NAMESPACE_KEY not in metadata:
            return  # a model called outside any task of the graph
        if tags and TAG_NOSTREAM in tags:
            return
        if not graph_namespace(metadata):
            self._streaming.add(run_id)

    def on_llm_new_token(
        self,
        token: str | list[str | dict[str, Any]],
        *,
        chunk: GenerationChunk | ChatGenerationChunk | None = None,
        run_id: UUID,
        **kwargs: Any,
    ) -> None:
        if run_id in self._streaming and isinstance(chunk, ChatGenerationChunk):
            message = chunk.message
            if message.id is None:
                message.id = f"run-{run_id}"  # one id for every piece of one reply
            for payload in message_payloads(message):
                self._channel.put(payload)

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._streaming.discard(run_id)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._streaming.discard(run_id)


def _nowhere(chunk: Any) -> None:
    """The parent stream :func:`live_config` declares: it asks for no mode, so gets nothing."""


def live_config(
    config: RunnableConfig, channel: LiveChannel, *, tokens: bool = True
) -> RunnableConfig:
    """``config`` with the channel wired in: its writer as the run's stream writer and, when
    ``tokens``, its :class:`TokenTap` among the callbacks (see the module doc).

    ``tokens=False`` is for a run whose caller asked for no deltas (``Deck.run()``): a
    callback handler makes LangChain dispatch every node's start and end to it, which costs a
    small graph's run about a twentieth of its time, and chat models then return whole replies
    (recorded in the node's update) instead of streaming tokens nobody reads.
    """
    configurable = dict(config.get("configurable") or {})
    configurable[CONFIG_KEY_STREAM] = StreamProtocol(_nowhere, set())
    configurable[CONFIG_KEY_RUNTIME] = Runtime(stream_writer=channel.write)
    if not tokens:
        return {**config, "configurable": configurable}
    tap = TokenTap(channel)
    given = config.get("callbacks")
    callbacks: Callbacks
    if isinstance(given, BaseCallbackManager):
        callbacks = given.copy()
        callbacks.add_handler(tap, inherit=True)
    else:
        callbacks = [*(given or ()), tap]
    return {**config, "configurable": configurable, "callbacks": callbacks}


Pump = Callable[[LiveChannel], Awaitable[None]]
"""The engine's graph task: streams the graph, putting payloads on the channel it is given."""


def pump_in_task(pump: Pump) -> tuple[LiveChannel, asyncio.Task[None]]:
    """Run ``pump`` in a task of its own, putting on a new channel; :data:`END` follows its
    last payload, whether it returned or raised (awaiting the task then re-raises).

    The play consumes the channel itself (:meth:`LiveChannel.take`, awaiting
    :meth:`~LiveChannel.arrival` when it is empty) rather than through an async generator
    wrapped around it: every payload, and every time the play wakes, would pass through that
    generator's frame too. Whoever starts the task cancels and awaits it if the play ends
    early (the run was cancelled, the play abandoned), so the graph never outlives its play.
    """
    channel = LiveChannel()
    task = asyncio.get_running_loop().create_task(_pumped(pump, channel))
    return channel, task


async def _pumped(pump: Pump, channel: LiveChannel) -> None:
    try:
        await pump(channel)
    finally:
        channel.put(END)
