"""The wire models: every body the native protocol reads or writes, as pydantic models.

They are the OpenAPI document's schemas, so what the document says is what the server checks.
Request bodies refuse unknown fields (a misspelt ``sesion_id`` is a 422 naming it, not a run
started without a session); the 4.x chat body keeps its frozen, lenient shape.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentdeck.model.payloads import RunCompleted, RunFailed
from agentdeck.model.status import OpenInterrupt
from agentdeck.ports import RunRecord
from agentdeck.vocabulary import RunStatus

__all__ = [
    "MAX_IDENTIFIER",
    "AnswerRequest",
    "ChatReply",
    "ChatRequest",
    "ControlRequest",
    "ErrorBody",
    "ForkRequest",
    "HealthView",
    "InboxItemView",
    "InboxPageView",
    "InterruptView",
    "PluginView",
    "RunPageView",
    "RunView",
    "StartRunRequest",
    "StatusBody",
    "StoreHealthView",
    "Usage4x",
]

MAX_IDENTIFIER = 256
"""Longest name, namespace, session id, key or interrupt id the wire accepts."""

_Identifier = Field(min_length=1, max_length=MAX_IDENTIFIER)


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StartRunRequest(_Request):
    """``POST /runs``: start an agent or workflow."""

    name: str = Field(
        min_length=1, max_length=MAX_IDENTIFIER, description="the agent or workflow to run"
    )
    input: Any = Field(
        default=None,
        description="an agent's message (a string or a list of content blocks) or a "
        "workflow's input (JSON)",
    )
    session_id: str | None = Field(
        default=None, min_length=1, max_length=MAX_IDENTIFIER, description="one turn at a time"
    )
    namespace: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_IDENTIFIER,
        description="the tenant the run belongs to (default: the API key's first namespace)",
    )
    key: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_IDENTIFIER,
        description="a stable application id for the run, claimed once per namespace",
    )
    if_exists: Literal["raise", "return"] = Field(
        default="raise",
        description="when key is already claimed: 409 (raise) or 200 with that run (return)",
    )


class AnswerRequest(_Request):
    """``POST /runs/{id}/answer``."""

    value: Any = Field(description="the answer; checked against the question's declared shape")
    interrupt_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_IDENTIFIER,
        description="which open question; needed only when several are open",
    )


class ForkRequest(_Request):
    """``POST /runs/{id}/fork``."""

    at: int = Field(
        ge=0,
        description="the recorded point to fork from: a native workflow's operation number "
        "(the journal before it is reused), a LangGraph step (its checkpoint)",
    )


class ControlRequest(_Request):
    """``POST /runs/{id}/pause|resume|cancel`` (the body is optional)."""

    reason: str | None = Field(default=None, max_length=2000)


class ChatRequest(BaseModel):
    """``POST /agents/{name}/chat``: the 4.x body, exactly ``{"session_id", "message"}``."""

    session_id: str = Field(min_length=1, max_length=MAX_IDENTIFIER)
    message: str


class InterruptView(BaseModel):
    """One open question of a run waiting for an answer."""

    interrupt_id: str
    seq: int
    reason: str
    payload: Any = None
    expected: dict[str, Any] | None = Field(
        default=None, description="{json_schema, options}: what the answer must fit"
    )

    @classmethod
    def of(cls, interrupt: OpenInterrupt) -> InterruptView:
        expected = interrupt.expected
        shape = expected.model_dump(mode="json") if isinstance(expected, BaseModel) else None
        return cls(
            interrupt_id=interrupt.interrupt_id,
            seq=interrupt.seq,
            reason=interrupt.reason,
            payload=interrupt.payload,
            expected=shape,
        )


class RunErrorView(BaseModel):
    """A failed run's error code and message, from its ``run.failed`` event."""

    code: str
    message: str


class RunView(BaseModel):
    """A run as the server reports it: identity and folded status."""

    id: str
    name: str
    kind: str = Field(description="agent, workflow, ...")
    status: RunStatus
    namespace: str | None
    session_id: str | None
    key: str | None
    parent_run_id: str | None
    created_at: datetime
    updated_at: datetime
    last_seq: int = Field(description="seq of the run's latest event")
    wake_at: datetime | None = Field(description="when a sleeping (paused) run wakes")
    pending: list[InterruptView] = Field(
        default_factory=list, description="open questions (only on a single run's view)"
    )
    output: list[dict[str, Any]] | None = Field(
        default=None,
        description=(
            "a completed run's output: the content blocks of its run.completed event "
            "(only on a single run's view; null until the run completes)"
        ),
    )
    error: RunErrorView | None = Field(
        default=None, description="why a failed run failed (only on a single run's view)"
    )

    @classmethod
    def of(
        cls,
        record: RunRecord,
        pending: list[InterruptView] | None = None,
        *,
        ending: object | None = None,
    ) -> RunView:
        """The view of ``record``; ``ending`` (its ``run.completed`` / ``run.failed`` payload,
        for a single run's view) fills ``output`` or ``error``."""
        output = None
        error = None
        if isinstance(ending, RunCompleted):
            output = [block.model_dump(mode="json") for block in ending.output]
        elif isinstance(ending, RunFailed):
            error = RunErrorView(code=str(ending.error_code), message=ending.message)
        return cls(
            id=record.run_id,
            name=record.name,
            kind=record.invocable_kind,
            status=record.status,
            namespace=record.namespace,
            session_id=record.session_id,
            key=record.key,
            parent_run_id=record.parent_run_id,
            created_at=record.created_at,
            updated_at=record.updated_at,
            last_seq=record.last_seq,
            wake_at=record.wake_at,
            pending=pending or [],
            output=output,
            error=error,
        )


class RunPageView(BaseModel):
    """``GET /runs``: one page, oldest first; pass ``next_cursor`` back as ``cursor``."""

    runs: list[RunView]
    next_cursor: str | None


class InboxItemView(BaseModel):
    """One open question (or tool approval) and the run waiting on it."""

    run: RunView
    interrupt: InterruptView


class InboxPageView(BaseModel):
    """``GET /inbox``: open questions, oldest run first; pass ``next_cursor`` back as
    ``cursor``."""

    items: list[InboxItemView]
    next_cursor: str | None


class PluginView(BaseModel):
    """A loaded plugin, in ``GET /health``."""

    name: str
    distribution: str | None
    version: str | None
    provides: dict[str, list[str]] = Field(
        description="per registry (``event_stores``, ``engines``, ...), the names it registers"
    )


class StoreHealthView(BaseModel):
    """The event store's answer to a one-run listing, in ``GET /health``."""

    status: Literal["ok", "failing"]
    backend: str = Field(description="the store's class")
    latency_ms: float = Field(description="how long the listing took")
    error: str | None = Field(default=None, description="what the store raised, when failing")


class HealthView(BaseModel):
    """``GET /health``: the catalog, plugins and store check only for a key holder (or a signed-in
    console)."""

    status: Literal["ok"]
    agents: list[str] = Field(default_factory=list)
    workflows: list[str] = Field(default_factory=list)
    skills: list[str] = Field(default_factory=list)
    plugins: list[PluginView] = Field(default_factory=list)
    store: StoreHealthView | None = None


class StatusBody(BaseModel):
    """503: ``{"status": "starting"}`` before the deck is open, ``"draining"`` while the
    server shuts down (retry elsewhere), ``"stopped"`` after."""

    status: Literal["starting", "draining", "stopped"]
    run_id: str | None = Field(
        default=None, description="a run the drain parked before it finished (resume it later)"
    )


class ErrorBody(BaseModel):
    """Every 4xx and 500 body. ``detail`` is for a person; the other fields for code."""

    model_config = ConfigDict(extra="allow")

    detail: str
    error: str | None = Field(
        default=None,
        description="machine-readable cause: not_found, session_busy, duplicate_key, "
        "invalid_input, answer_refused, run_state, replay, too_large, unauthorized, forbidden, "
        "origin_refused, internal",
    )
    field: str | None = Field(default=None, description="the request field that was wrong")


class Usage4x(BaseModel):
    """Token usage as the 4.x chat stream's ``done`` frame reports it."""

    requests: int
    input_tokens: int
    output_tokens: int
    total_tokens: int


class ChatReply(BaseModel):
    """The 4.x reply: ``{"output": ...}`` — the agent's output (or the workflow's result); for a
    run parked on a question, the interrupt ``{"type": "interrupt", "payload", "id", ...}``."""

    output: Any = None
