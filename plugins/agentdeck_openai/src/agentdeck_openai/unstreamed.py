"""Model calls answered whole, for plays nobody reads token by token.

``Deck.run()`` returns only the result, so its invocation asks for no deltas
(:attr:`agentdeck.ports.Invocation.deltas` is false). Streaming a model call costs the ``openai``
client a typed validation of every SSE event, which over a fast endpoint makes a streamed call
about twice a non-streamed one; for deltas nobody wants that is pure loss.

The play does not change for it: it still runs ``Runner.run_streamed`` with the same
translation, safe points, approvals, pause (``to_state()``) and child runs. Only the model the SDK
is given changes, through the SDK's own extension point: :class:`WholeResponseProvider` wraps the
deck's :class:`~agents.models.interface.ModelProvider`, and each model it hands out
(:class:`WholeResponseModel`) answers ``stream_response`` with one non-streamed
``get_response`` call of the wrapped model, given to the runner as the one event it builds a
turn from: ``response.completed``, carrying a ``Response`` with the call's output items, usage,
response id and request id. The runner takes the turn's items, usage and response id from it
exactly as from a streamed call, and the translator its ``usage.reported``. (No
``response.created`` comes first: each event costs the runner and the play ~30 µs, and the
translator counts a call begun at its completion when nothing began it.)

So the log holds the same ``message.completed``, tool, handoff and usage events as a streamed
play, less the ``text.delta``/``thought.delta`` events. Errors surface where they did: an HTTP
error (after the ``openai`` client's retries) is raised by the request, before any event, so the
runner's retry policy sees it as a streamed call's; a ``failed``/``incomplete`` response is
refused by the wrapped model's ``get_response`` as the streamed runner refuses its terminal event.

Two things differ from a streamed play. A pause or cancel is acted on when a model call ends (and
before a tool body runs), not between two tokens of a long reply. And ``usage.reported.model``
is the model name the call asked for (``get_response`` does not return the name the endpoint
answered with, which the Responses API may give in a dated form, e.g. ``gpt-4o-2024-08-06``).
``AGENTDECK_RUNNER_DELTAS=always`` streams every play instead.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from agents.items import ModelResponse, TResponseInputItem, TResponseStreamEvent
from agents.models.fake_id import FAKE_RESPONSES_ID
from agents.models.interface import Model, ModelProvider, ModelTracing
from agents.usage import Usage as SDKUsage
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseUsage,
)
from pydantic import ValidationError

if TYPE_CHECKING:
    from agents.agent_output import AgentOutputSchemaBase
    from agents.handoffs import Handoff
    from agents.model_settings import ModelSettings
    from agents.retry import ModelRetryAdvice, ModelRetryAdviceRequest
    from agents.tool import Tool
    from openai.types.responses.response_prompt_param import ResponsePromptParam

__all__ = ["WholeResponseModel", "WholeResponseProvider"]


class WholeResponseProvider(ModelProvider):
    """Hands out the wrapped provider's models, each answering a streamed call whole.

    The wrapped provider stays its owner's to close (the engine closes its own client; a provider
    given to the engine is the caller's), so :meth:`aclose` does nothing.
    """

    def __init__(self, provider: ModelProvider) -> None:
        self.provider = provider

    def get_model(self, model_name: str | None) -> Model:
        model = self.provider.get_model(model_name)
        if isinstance(model, WholeResponseModel):
            return model
        return WholeResponseModel(model, model_name)


class WholeResponseModel(Model):
    """A model whose ``stream_response`` is its wrapped model's ``get_response``, as events.

    Everything else is the wrapped model's: ``get_response`` passes straight through, as do retry
    advice, cleanup at the end of a run, ``close`` and any attribute the SDK looks up by name on a
    model (its ``model`` name, whether it takes a default prompt cache key), so the request sent
    is the one a streamed call would send, less ``stream``.
    """

    def __init__(self, model: Model, name: str | None = None) -> None:
        self.wrapped = model
        """The wrapped model."""
        asked = getattr(model, "model", None)
        self.model_name = asked if isinstance(asked, str) and asked else name
        """The model name ``usage.reported`` carries: the wrapped model's, else the one asked."""

    def __getattr__(self, attribute: str) -> Any:
        # Only reached for attributes this class does not have: the SDK reads some from models
        # by name (`model`, the model's name; `_supports_default_prompt_cache_key`, ...).
        if attribute in ("wrapped", "model_name"):  # not set yet (a copy being built)
            raise AttributeError(attribute)
        return getattr(self.wrapped, attribute)

    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        model_settings: ModelSettings,
        tools: list[Tool],
        output_schema: AgentOutputSchemaBase | None,
        handoffs: list[Handoff],
        tracing: ModelTracing,
        *,
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: ResponsePromptParam | None,
    ) -> ModelResponse:
        return await self.wrapped.get_response(
            system_instructions,
            input,
            model_settings,
            tools,
            output_schema,
            handoffs,
            tracing,
            previous_response_id=previous_response_id,
            conversation_id=conversation_id,
            prompt=prompt,
        )

    async def stream_response(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        model_settings: ModelSettings,
        tools: list[Tool],
        output_schema: AgentOutputSchemaBase | None,
        handoffs: list[Handoff],
        tracing: ModelTracing,
        *,
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: ResponsePromptParam | None,
    ) -> AsyncIterator[TResponseStreamEvent]:
        answer = await self.wrapped.get_response(
            system_instructions,
            input,
            model_settings,
            tools,
            output_schema,
            handoffs,
            tracing,
            previous_response_id=previous_response_id,
            conversation_id=conversation_id,
            prompt=prompt,
        )
        yield _completed(answer, self.model_name)

    def get_retry_advice(self, request: ModelRetryAdviceRequest) -> ModelRetryAdvice | None:
        return self.wrapped.get_retry_advice(request)

    async def _cleanup_on_run_end(self, owner: object) -> None:
        # The SDK calls this on every model a run used; the wrapped model may hold run-scoped
        # resources (a websocket) that only it knows how to release.
        await self.wrapped._cleanup_on_run_end(owner)

    async def close(self) -> None:
        await self.wrapped.close()


def _completed(answer: ModelResponse, model: str | None) -> ResponseCompletedEvent:
    """The ``response.completed`` event of one whole answer.

    Built by validation, which passes the wrapped model's typed output items through as they
    are (~15 µs a call); the ``openai`` types' own ``model_construct`` walks every field's type
    and costs ~10 times that. A call without a response id (Chat Completions) gets the SDK's
    placeholder id, as its streamed calls do.
    """
    fields: dict[str, Any] = {
        "id": answer.response_id or FAKE_RESPONSES_ID,
        "object": "response",
        "created_at": 0,
        "model": model or "",
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "status": "completed",
        "usage": _usage(answer.usage),
    }
    try:
        response = Response(**fields, output=answer.output)
    except ValidationError:  # an item a custom model built loosely: passed on unchecked
        response = Response.model_construct(**fields, output=list(answer.output))
    if answer.request_id is not None:
        response._request_id = answer.request_id
    return ResponseCompletedEvent(type="response.completed", response=response, sequence_number=0)


def _usage(usage: SDKUsage) -> ResponseUsage | None:
    """The Responses ``usage`` of one call; none when the model reported none (no request and no
    tokens), which the runner counts as the streamed call's missing usage."""
    if not usage.requests and not usage.total_tokens and not usage.input_tokens:
        return None
    return ResponseUsage(
        input_tokens=usage.input_tokens,
        input_tokens_details=usage.input_tokens_details,
        output_tokens=usage.output_tokens,
        output_tokens_details=usage.output_tokens_details,
        total_tokens=usage.total_tokens,
    )
