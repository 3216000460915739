"""An in-process Agents SDK ``Model`` answering from a :class:`Script`, with no HTTP at all.

The loopback server tests the whole client stack (HTTP, the ``openai`` client's SSE parsing and
typed events). Some measurements want none of that: what AgentDeck adds over the SDK's own
runner is a few hundred microseconds, while one HTTP model call through the ``openai`` client
costs milliseconds and varies by more than that. :class:`ScriptedModel` renders the same
scripted :class:`Turn` objects straight into the typed Responses objects the SDK's runner reads
(``get_response`` for ``Runner.run``, the typed stream events for ``Runner.run_streamed``), so a
benchmark or test can put the *same* model under both AgentDeck and a bare SDK run::

    model = ScriptedModel(Script([reply("It is sunny", deltas=20, times=None)]))
    provider = ScriptedModelProvider(model)
    Runner.run_streamed(sdk_agent, "hi", run_config=RunConfig(model_provider=provider))
    Deck(..., plugins=plugins_with_model(provider))  # the openai engine asks `provider`

Each model call takes a turn from the script exactly as the server would (``when`` rules see a
:class:`ModelRequest` shaped like a Responses API request: ``input``, ``instructions``,
``tools``, ``stream``). Scripted HTTP errors need a real HTTP exchange, so they are refused with
a ``ConfigError``; a turn's ``delay`` paces streamed deltas as the server paces them. Only a count
of calls is kept (no request log), so a long benchmark holds no memory per call.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator, Iterator
from importlib.metadata import entry_points
from typing import Any

from agents import ModelProvider
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage as SDKUsage
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseContentPartAddedEvent,
    ResponseContentPartDoneEvent,
    ResponseCreatedEvent,
    ResponseFunctionCallArgumentsDeltaEvent,
    ResponseFunctionCallArgumentsDoneEvent,
    ResponseFunctionToolCall,
    ResponseOutputItem,
    ResponseOutputItemAddedEvent,
    ResponseOutputItemDoneEvent,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseStreamEvent,
    ResponseTextDeltaEvent,
    ResponseTextDoneEvent,
    ResponseUsage,
)
from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails

import agentdeck
from agentdeck.errors import ConfigError
from agentdeck.plugins.hookspecs import RegisterEngine, RegisterScheme, RegisterSettings
from agentdeck.plugins.host import PluginHost, PluginSource
from agentdeck.ports import EngineRequest, SessionFactory
from agentdeck_openai.testing.script import ModelRequest, Script, Turn, Usage

__all__ = ["ScriptedModel", "ScriptedModelProvider", "plugins_with_model"]

_Output = ResponseOutputMessage | ResponseFunctionToolCall


class ScriptedModel(Model):
    """An SDK model whose every call takes the next matching turn of ``script``.

    Reasoning deltas are not rendered (use the loopback server for thought streams).
    """

    def __init__(self, script: Script | None = None, *, name: str = "scripted-model") -> None:
        self.script = script if script is not None else Script()
        self.name = name
        self._numbers = itertools.count(1)
        self.calls = 0
        """Model calls answered so far."""
        self.first_delta_at: float | None = None
        """``time.perf_counter()`` when the latest streamed call yielded its first text delta
        (what a latency measurement compares with the moment a consumer sees it)."""

    # ------------------------------------------------------------------ the Model interface

    async def get_response(
        self,
        system_instructions: str | None,
        input: Any,
        model_settings: Any,
        tools: list[Any],
        output_schema: Any,
        handoffs: list[Any],
        tracing: Any,
        *,
        previous_response_id: str | None = None,
        conversation_id: str | None = None,
        prompt: Any = None,
    ) -> ModelResponse:
        turn, number = self._take(system_instructions, input, tools, handoffs, stream=False)
        if turn.delay > 0:
            await asyncio.sleep(turn.delay * turn.delta_count)
        return ModelResponse(
            output=list(_output(turn, number)),
            usage=_sdk_usage(turn.usage),
            response_id=f"resp_{number}",
        )

    async def stream_response(
        self,
        system_instructions: str | None,
        input: Any,
        model_settings: Any,
        tools: list[Any],
        output_schema: Any,
        handoffs: list[Any],
        tracing: Any,
        *,
        previous_response_id: str | None = None,
        conversation_id: str | None = None,
        prompt: Any = None,
    ) -> AsyncIterator[ResponseStreamEvent]:
        turn, number = self._take(system_instructions, input, tools, handoffs, stream=True)
        self.first_delta_at = None
        loop = asyncio.get_running_loop()
        started, paced = loop.time(), 0
        for event in _stream(turn, number, self.name):
            if isinstance(event, ResponseTextDeltaEvent | ResponseFunctionCallArgumentsDeltaEvent):
                if turn.delay > 0:  # on a schedule, as the loopback server paces its deltas
                    paced += 1
                    await asyncio.sleep(started + paced * turn.delay - loop.time())
                if self.first_delta_at is None and isinstance(event, ResponseTextDeltaEvent):
                    self.first_delta_at = time.perf_counter()
            yield event

    # ------------------------------------------------------------------ the script

    def _take(
        self,
        instructions: str | None,
        input: Any,
        tools: list[Any],
        handoffs: list[Any],
        *,
        stream: bool,
    ) -> tuple[Turn, int]:
        number = next(self._numbers)
        offered = [
            {"type": "function", "name": name}
            for name in [getattr(t, "name", None) for t in tools]
            + [getattr(h, "tool_name", None) for h in handoffs]
            if isinstance(name, str)
        ]
        body = {
            "model": self.name,
            "instructions": instructions,
            "input": input,
            "tools": offered,
            "stream": stream,
        }
        request = ModelRequest(
            index=number - 1, method="POST", path="/v1/responses", headers={}, body=body
        )
        turn = self.script.take(request)
        if turn is None:
            raise ConfigError(
                f"the scripted model's script is exhausted: call #{number} matched no turn "
                f"(last user text {request.last_user_text!r}); add turns with script.add(...)"
            )
        if turn.error is not None:
            raise ConfigError(
                "a scripted HTTP error needs an HTTP exchange: use LoopbackModelServer for "
                f"{turn.describe()}",
                setting="turns",
            )
        self.calls += 1
        return turn, number


class ScriptedModelProvider(ModelProvider):
    """Hands out one :class:`ScriptedModel` whatever model name an agent asks for."""

    def __init__(self, model: ScriptedModel) -> None:
        self.model = model

    def get_model(self, model_name: str | None) -> Model:
        return self.model


# ====================================================================== a deck on this model


class _EnginePlugin:
    """The ``openai`` plugin with its engine built on a given model provider."""

    def __init__(self, provider: ModelProvider) -> None:
        self.provider = provider

    @agentdeck.hookimpl
    def agentdeck_register_settings(self, register: RegisterSettings) -> None:
        from agentdeck_openai import plugin

        plugin.agentdeck_register_settings(register)

    @agentdeck.hookimpl
    def agentdeck_register_engines(self, register: RegisterEngine) -> None:
        from agentdeck_openai.engine import OpenAIEngine

        provider = self.provider

        class OpenAIEngineOnModel(OpenAIEngine):
            """The ``openai`` engine with every model call sent to one provider."""

            def __init__(self, request: EngineRequest | None = None) -> None:
                super().__init__(request, model_provider=provider)

        register(OpenAIEngineOnModel, description="Agents on the OpenAI Agents SDK, scripted model")

    @agentdeck.hookimpl
    def agentdeck_register_session_factories(
        self, register: RegisterScheme[SessionFactory]
    ) -> None:
        from agentdeck_openai import plugin

        plugin.agentdeck_register_session_factories(register)


def plugins_with_model(provider: ModelProvider) -> PluginHost:
    """The installed plugins, except that the ``openai`` engine sends every model call to
    ``provider``: pass it as ``Deck(plugins=...)``. No SDK code is patched; the engine is
    built with ``OpenAIEngine(request, model_provider=provider)``."""
    sources = [
        PluginSource(
            name=ep.name,
            load=ep.load,
            distribution=ep.dist.name if ep.dist is not None else None,
            version=ep.dist.version if ep.dist is not None else None,
            value=ep.value,
        )
        for ep in entry_points(group="agentdeck")
        if ep.name != "openai"
    ]
    plugin = _EnginePlugin(provider)
    sources.append(
        PluginSource(
            name="openai",
            load=lambda: plugin,
            distribution="agentdeck-openai",
            value="agentdeck_openai.testing.model",
        )
    )
    return PluginHost(sources, env={})


# ====================================================================== rendering


def _sdk_usage(usage: Usage | None) -> SDKUsage:
    if usage is None:
        return SDKUsage()
    return SDKUsage(
        requests=1,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        total_tokens=usage.total_tokens,
    )


def _response_usage(usage: Usage | None) -> ResponseUsage | None:
    if usage is None:
        return None
    return ResponseUsage(
        input_tokens=usage.input_tokens,
        input_tokens_details=InputTokensDetails(
            cached_tokens=usage.cached_tokens, cache_write_tokens=0
        ),
        output_tokens=usage.output_tokens,
        output_tokens_details=OutputTokensDetails(reasoning_tokens=usage.reasoning_tokens),
        total_tokens=usage.total_tokens,
    )


def _message(number: int, index: int, text: str | None) -> ResponseOutputMessage:
    return ResponseOutputMessage(
        id=f"msg_{number}_{index}",
        type="message",
        role="assistant",
        status="in_progress" if text is None else "completed",
        content=[] if text is None else [_text(text)],
    )


def _text(text: str) -> ResponseOutputText:
    return ResponseOutputText(type="output_text", text=text, annotations=[], logprobs=[])


def _call(number: int, index: int, position: int, turn: Turn) -> ResponseFunctionToolCall:
    c = turn.calls[position]
    return ResponseFunctionToolCall(
        id=f"fc_{number}_{index}",
        type="function_call",
        call_id=c.call_id or f"call_{number}_{position}",
        name=c.name,
        arguments=c.arguments,
        status="completed",
    )


def _output(turn: Turn, number: int) -> Iterator[_Output]:
    """The output items, in the loopback server's order and ids (message first, then calls)."""
    index = 0
    if turn.text is not None or not turn.calls:
        yield _message(number, index, turn.reply_text or "")
        index += 1
    for position in range(len(turn.calls)):
        yield _call(number, index + position, position, turn)


def _response(number: int, model: str, output: list[_Output] | None, turn: Turn) -> Response:
    return Response(
        id=f"resp_{number}",
        object="response",
        created_at=0,
        model=model,
        status="in_progress" if output is None else "completed",
        output=list[ResponseOutputItem](output or ()),
        usage=_response_usage(turn.usage) if output is not None else None,
        parallel_tool_calls=True,
        tool_choice="auto",
        tools=[],
    )


def _stream(turn: Turn, number: int, model: str) -> Iterator[ResponseStreamEvent]:
    """The typed event sequence the ``openai`` client yields for a streamed response."""
    sequence = itertools.count()
    output = list(_output(turn, number))
    yield ResponseCreatedEvent(
        type="response.created",
        sequence_number=next(sequence),
        response=_response(number, model, None, turn),
    )
    first_call = len(output) - len(turn.calls)
    for index, item in enumerate(output):
        if isinstance(item, ResponseOutputMessage):
            yield from _message_events(turn, number, index, item, sequence)
        else:
            deltas = turn.calls[index - first_call].argument_deltas
            yield from _call_events(index, item, deltas, sequence)
    yield ResponseCompletedEvent(
        type="response.completed",
        sequence_number=next(sequence),
        response=_response(number, model, output, turn),
    )


def _message_events(
    turn: Turn,
    number: int,
    index: int,
    item: ResponseOutputMessage,
    sequence: Iterator[int],
) -> Iterator[ResponseStreamEvent]:
    item_id = item.id
    yield ResponseOutputItemAddedEvent(
        type="response.output_item.added",
        sequence_number=next(sequence),
        output_index=index,
        item=_message(number, index, None),
    )
    where: dict[str, Any] = {"item_id": item_id, "output_index": index, "content_index": 0}
    yield ResponseContentPartAddedEvent(
        type="response.content_part.added",
        sequence_number=next(sequence),
        part=_text(""),
        **where,
    )
    for piece in turn.text or ():
        yield ResponseTextDeltaEvent(
            type="response.output_text.delta",
            sequence_number=next(sequence),
            delta=piece,
            logprobs=[],
            **where,
        )
    text = turn.reply_text or ""
    yield ResponseTextDoneEvent(
        type="response.output_text.done",
        sequence_number=next(sequence),
        text=text,
        logprobs=[],
        **where,
    )
    yield ResponseContentPartDoneEvent(
        type="response.content_part.done",
        sequence_number=next(sequence),
        part=_text(text),
        **where,
    )
    yield ResponseOutputItemDoneEvent(
        type="response.output_item.done",
        sequence_number=next(sequence),
        output_index=index,
        item=item,
    )


def _call_events(
    index: int, item: ResponseFunctionToolCall, deltas: list[str], sequence: Iterator[int]
) -> Iterator[ResponseStreamEvent]:
    opened = item.model_copy(update={"arguments": "", "status": "in_progress"})
    yield ResponseOutputItemAddedEvent(
        type="response.output_item.added",
        sequence_number=next(sequence),
        output_index=index,
        item=opened,
    )
    item_id = item.id or ""
    for piece in deltas:
        yield ResponseFunctionCallArgumentsDeltaEvent(
            type="response.function_call_arguments.delta",
            sequence_number=next(sequence),
            item_id=item_id,
            output_index=index,
            delta=piece,
        )
    yield ResponseFunctionCallArgumentsDoneEvent(
        type="response.function_call_arguments.done",
        sequence_number=next(sequence),
        item_id=item_id,
        output_index=index,
        arguments=item.arguments,
    )
    yield ResponseOutputItemDoneEvent(
        type="response.output_item.done",
        sequence_number=next(sequence),
        output_index=index,
        item=item,
    )
