"""What the loopback model server answers: scripted turns, and the rules that pick one per request.

A :class:`Script` is an ordered list of :class:`Turn` objects. Each request the server receives
takes one turn: the first pending turn whose ``when`` rule accepts the request, otherwise the
first pending turn without a rule. A request no turn answers gets an HTTP 500 saying the script is
exhausted, so a test that under-scripts fails with that message instead of hanging.

Turns are built with the small functions below (:func:`reply`, :func:`tool_call`,
:func:`tool_calls`, :func:`handoff`, :func:`structured`, :func:`rate_limited`,
:func:`server_error`, :func:`http_error`); each describes the *model's* answer once and the
server renders it in whichever API the request used (Chat Completions or Responses, streamed or
not), so one script drives both.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from agentdeck.errors import ConfigError

__all__ = [
    "DEFAULT_USAGE",
    "HTTPError",
    "ModelRequest",
    "Rule",
    "Script",
    "ToolCall",
    "Turn",
    "Usage",
    "call",
    "handoff",
    "handoff_tool_name",
    "http_error",
    "rate_limited",
    "reply",
    "server_error",
    "structured",
    "tool_call",
    "tool_calls",
]


# =========================================================================== the request


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One HTTP request the server received, as a test asserts on it and a ``when`` rule sees it.

    ``body`` is the parsed JSON body exactly as sent (``None`` when there was none, the raw
    text when it was not JSON); the properties read the common facts out of it the same way for
    both APIs, so a rule or an assertion does not care whether the client spoke Chat
    Completions or Responses.
    """

    index: int
    """0-based position among every request this server received."""
    method: str
    path: str
    headers: Mapping[str, str]
    """Header names lower-cased."""
    body: Any

    @property
    def api(self) -> Literal["chat", "responses", "other"]:
        if self.path.rstrip("/").endswith("/chat/completions"):
            return "chat"
        if self.path.rstrip("/").endswith("/responses"):
            return "responses"
        return "other"

    @property
    def stream(self) -> bool:
        return isinstance(self.body, dict) and self.body.get("stream") is True

    @property
    def model(self) -> str | None:
        model = self.body.get("model") if isinstance(self.body, dict) else None
        return model if isinstance(model, str) else None

    @property
    def items(self) -> list[dict[str, Any]]:
        """The conversation sent: Chat ``messages``, or Responses ``input`` (a bare string input
        reads as one user message)."""
        if not isinstance(self.body, dict):
            return []
        raw = self.body.get("messages") if self.api == "chat" else self.body.get("input")
        if isinstance(raw, str):
            return [{"role": "user", "content": raw}]
        if isinstance(raw, list):
            return [item for item in raw if isinstance(item, dict)]
        return []

    @property
    def user_texts(self) -> list[str]:
        """Text of every user message, oldest first."""
        return [
            _content_text(item.get("content"))
            for item in self.items
            if item.get("role") == "user" and item.get("type", "message") == "message"
        ]

    @property
    def last_user_text(self) -> str | None:
        texts = self.user_texts
        return texts[-1] if texts else None

    @property
    def instructions(self) -> str | None:
        """Responses ``instructions``, or the Chat system/developer message text."""
        if self.api == "responses" and isinstance(self.body, dict):
            value = self.body.get("instructions")
            return value if isinstance(value, str) else None
        texts = [
            _content_text(item.get("content"))
            for item in self.items
            if item.get("role") in ("system", "developer")
        ]
        return "\n".join(texts) if texts else None

    @property
    def tool_names(self) -> list[str]:
        """Names of the function tools offered to the model (handoffs included)."""
        tools = self.body.get("tools") if isinstance(self.body, dict) else None
        names: list[str] = []
        for tool in tools if isinstance(tools, list) else []:
            if not isinstance(tool, dict):
                continue
            spec = tool.get("function") if self.api == "chat" else tool
            name = spec.get("name") if isinstance(spec, dict) else None
            if isinstance(name, str):
                names.append(name)
        return names

    @property
    def tool_calls(self) -> dict[str, tuple[str, str]]:
        """Tool calls the model made earlier in the conversation: ``call_id -> (name, args)``."""
        calls: dict[str, tuple[str, str]] = {}
        for item in self.items:
            if item.get("type") == "function_call":
                calls[str(item.get("call_id"))] = (
                    str(item.get("name")),
                    str(item.get("arguments")),
                )
            for chat_call in item.get("tool_calls") or ():
                function = chat_call.get("function") or {}
                calls[str(chat_call.get("id"))] = (
                    str(function.get("name")),
                    str(function.get("arguments")),
                )
        return calls

    @property
    def tool_outputs(self) -> dict[str, str]:
        """Tool results sent back to the model: ``call_id -> output text``."""
        outputs: dict[str, str] = {}
        for item in self.items:
            if item.get("type") == "function_call_output":
                outputs[str(item.get("call_id"))] = _content_text(item.get("output"))
            elif item.get("role") == "tool":
                outputs[str(item.get("tool_call_id"))] = _content_text(item.get("content"))
        return outputs


def _content_text(content: object) -> str:
    """The text of a message content: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return "" if content is None else json.dumps(content)


Rule = Callable[[ModelRequest], bool]
"""A turn's ``when``: given the incoming request, whether this turn answers it."""


# =========================================================================== the turn


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts the server reports for one model call, in both APIs' usage shapes."""

    input_tokens: int = 10
    output_tokens: int = 5
    cached_tokens: int = 0
    reasoning_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


DEFAULT_USAGE = Usage()
"""What a turn reports unless told otherwise: 10 input and 5 output tokens."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One function call the model makes. ``arguments`` is the JSON *text* the model sends,
    kept verbatim, so a test can send malformed JSON on purpose."""

    name: str
    arguments: str = "{}"
    call_id: str | None = None
    """``None`` lets the server mint one (``call_<request>_<n>``), unique per server."""

    @property
    def argument_deltas(self) -> list[str]:
        """How the arguments are streamed: split after each ``,`` and ``:``, like tokens."""
        pieces = [piece for piece in re.split(r"(?<=[,:])", self.arguments) if piece]
        return pieces or [""]


@dataclass(frozen=True, slots=True)
class HTTPError:
    """An error answer instead of a model reply."""

    status: int
    message: str
    type: str = "server_error"
    code: str | None = None
    headers: tuple[tuple[str, str], ...] = ()

    def body(self) -> dict[str, Any]:
        """The OpenAI error body, which the ``openai`` client turns into its typed errors."""
        return {
            "error": {"message": self.message, "type": self.type, "param": None, "code": self.code}
        }


@dataclass(frozen=True, slots=True)
class Turn:
    """One scripted model answer. Build it with :func:`reply`, :func:`tool_call`, ... ."""

    text: tuple[str, ...] | None = None
    """The reply's text as streamed, one element per delta; ``None``: no assistant message."""
    calls: tuple[ToolCall, ...] = ()
    reasoning: tuple[str, ...] = ()
    """Reasoning (thought) text, one element per delta, reported before the reply."""
    error: HTTPError | None = None
    usage: Usage | None = DEFAULT_USAGE
    """Reported usage; ``None`` reports none (as some compatible endpoints do)."""
    delay: float = 0.0
    """Seconds per streamed delta: delta ``k`` is sent ``k * delay`` after the answer starts (a
    non-streamed answer waits the total). The server gives up early when the client goes away
    or the server stops."""
    when: Rule | None = None
    times: int | None = 1
    """How many requests this turn answers; ``None``: every request it is offered."""

    def __post_init__(self) -> None:
        if self.delay < 0 or not math.isfinite(self.delay):
            raise ConfigError(
                f"a turn's delay must be a finite number of seconds >= 0, not {self.delay!r}",
                setting="delay",
            )
        if self.times is not None and self.times < 1:
            raise ConfigError(
                f"a turn's times must be a positive count or None (unlimited), not {self.times!r}",
                setting="times",
            )

    @property
    def reply_text(self) -> str | None:
        return None if self.text is None else "".join(self.text)

    @property
    def reasoning_text(self) -> str:
        return "".join(self.reasoning)

    @property
    def delta_count(self) -> int:
        """How many paced deltas a streamed rendering of this turn carries."""
        return (
            len(self.reasoning)
            + len(self.text or ())
            + sum(len(c.argument_deltas) for c in self.calls)
        )

    def describe(self) -> str:
        """A one-line summary for the exhausted-script message."""
        if self.error is not None:
            return f"http_error({self.error.status})"
        parts = []
        if self.text is not None:
            parts.append(f"reply({_short(self.reply_text or '')})")
        parts.extend(f"tool_call({c.name})" for c in self.calls)
        described = " + ".join(parts) or "empty turn"
        return (
            f"{described} when={getattr(self.when, '__name__', 'rule')}" if self.when else described
        )


def _short(text: str, limit: int = 40) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


# =========================================================================== building turns


def _split(text: str | Sequence[str], deltas: int | None) -> tuple[str, ...]:
    """A text as streamed: the given pieces, ``deltas`` near-equal pieces, or one per word."""
    if not isinstance(text, str):
        return tuple(str(piece) for piece in text)
    if deltas is None or not text:  # an empty reply is a message with no deltas at all
        return tuple(piece for piece in re.split(r"(?<=\s)(?=\S)", text) if piece)
    if deltas < 1 or deltas > len(text):
        raise ConfigError(
            f"deltas={deltas!r} cannot split a text of {len(text)} characters; "
            f"give a count from 1 to {len(text)}, or the pieces themselves",
            setting="deltas",
        )
    # Near-equal pieces, the longer ones first: exactly `deltas` of them, none empty.
    base, longer = divmod(len(text), deltas)
    pieces: list[str] = []
    start = 0
    for i in range(deltas):
        end = start + base + (1 if i < longer else 0)
        pieces.append(text[start:end])
        start = end
    return tuple(pieces)


def _arguments(arguments: Mapping[str, Any] | str | None) -> str:
    if arguments is None:
        return "{}"
    if isinstance(arguments, str):
        return arguments
    return json.dumps(dict(arguments))


def reply(
    text: str | Sequence[str],
    *,
    deltas: int | None = None,
    reasoning: str | Sequence[str] | None = None,
    usage: Usage | None = DEFAULT_USAGE,
    delay: float = 0.0,
    when: Rule | None = None,
    times: int | None = 1,
) -> Turn:
    """The model answers with text.

    :param text: the reply; a string streams one delta per word, a list of strings streams
        exactly those pieces.
    :param deltas: instead, split the string into this many near-equal deltas.
    :param reasoning: thought text reported before the reply (streamed one delta per word, or
        the pieces given).
    """
    return Turn(
        text=_split(text, deltas),
        reasoning=_split(reasoning, None) if reasoning is not None else (),
        usage=usage,
        delay=delay,
        when=when,
        times=times,
    )


def structured(
    value: object,
    *,
    deltas: int | None = None,
    usage: Usage | None = DEFAULT_USAGE,
    delay: float = 0.0,
    when: Rule | None = None,
    times: int | None = 1,
) -> Turn:
    """The model answers with ``value`` as JSON text: structured output for an ``output_type``.

    ``value`` is anything ``json.dumps`` takes, or a pydantic model.
    """
    dump = getattr(value, "model_dump_json", None)
    text = dump() if callable(dump) else json.dumps(value)
    return reply(str(text), deltas=deltas, usage=usage, delay=delay, when=when, times=times)


def call(
    name: str, arguments: Mapping[str, Any] | str | None = None, *, call_id: str | None = None
) -> ToolCall:
    """One function call for :func:`tool_calls`. ``arguments`` as a string is sent verbatim."""
    return ToolCall(name=name, arguments=_arguments(arguments), call_id=call_id)


def tool_calls(
    *calls: ToolCall,
    text: str | Sequence[str] | None = None,
    reasoning: str | Sequence[str] | None = None,
    usage: Usage | None = DEFAULT_USAGE,
    delay: float = 0.0,
    when: Rule | None = None,
    times: int | None = 1,
) -> Turn:
    """The model calls several tools in one turn (parallel tool calls), optionally with text."""
    if not calls:
        raise ConfigError("tool_calls() needs at least one call(...)", setting="calls")
    return Turn(
        text=_split(text, None) if text is not None else None,
        calls=tuple(calls),
        reasoning=_split(reasoning, None) if reasoning is not None else (),
        usage=usage,
        delay=delay,
        when=when,
        times=times,
    )


def tool_call(
    name: str,
    arguments: Mapping[str, Any] | str | None = None,
    *,
    call_id: str | None = None,
    reasoning: str | Sequence[str] | None = None,
    usage: Usage | None = DEFAULT_USAGE,
    delay: float = 0.0,
    when: Rule | None = None,
    times: int | None = 1,
) -> Turn:
    """The model calls one tool. ``arguments`` as a string is sent verbatim, so
    ``tool_call("get_weather", '{"city": ')`` scripts malformed JSON."""
    return tool_calls(
        call(name, arguments, call_id=call_id),
        reasoning=reasoning,
        usage=usage,
        delay=delay,
        when=when,
        times=times,
    )


def handoff_tool_name(agent_name: str) -> str:
    """The tool name the Agents SDK offers for a handoff to ``agent_name``
    (``transfer_to_<name>``, lower-cased, anything but letters, digits and ``_`` replaced)."""
    return re.sub(r"[^a-zA-Z0-9_]", "_", f"transfer_to_{agent_name}").lower()


def handoff(
    agent_name: str,
    arguments: Mapping[str, Any] | str | None = None,
    *,
    call_id: str | None = None,
    usage: Usage | None = DEFAULT_USAGE,
    delay: float = 0.0,
    when: Rule | None = None,
    times: int | None = 1,
) -> Turn:
    """The model hands the conversation to the agent named ``agent_name``."""
    return tool_call(
        handoff_tool_name(agent_name),
        arguments,
        call_id=call_id,
        usage=usage,
        delay=delay,
        when=when,
        times=times,
    )


def http_error(
    status: int,
    message: str,
    *,
    error_type: str | None = None,
    code: str | None = None,
    retryable: bool | None = None,
    retry_after: float | None = None,
    headers: Mapping[str, str] | None = None,
    when: Rule | None = None,
    times: int | None = 1,
) -> Turn:
    """The endpoint answers ``status`` with an OpenAI error body.

    :param retryable: sent as ``x-should-retry`` (the ``openai`` client obeys it); ``None``
        leaves the client's own rule (it retries 408, 409, 429 and 5xx).
    :param retry_after: seconds the client should wait before retrying, sent as ``retry-after``
        (whole seconds) and ``retry-after-ms`` (at least 1 ms). The ``openai`` client honours
        the milliseconds over the seconds, and for a zero wait would otherwise fall back to its
        own half-second backoff.
    """
    if not 400 <= status <= 599:
        raise ConfigError(
            f"http_error status must be an HTTP error code (400-599), not {status!r}",
            setting="status",
        )
    sent = dict(headers or {})
    if retryable is not None:
        sent["x-should-retry"] = "true" if retryable else "false"
    if retry_after is not None:
        if retry_after < 0 or not math.isfinite(retry_after):
            raise ConfigError(
                f"retry_after must be a finite number of seconds >= 0, not {retry_after!r}",
                setting="retry_after",
            )
        sent["retry-after"] = str(int(retry_after))
        sent["retry-after-ms"] = str(max(1, round(retry_after * 1000)))
    return Turn(
        error=HTTPError(
            status=status,
            message=message,
            type=error_type or ("server_error" if status >= 500 else "invalid_request_error"),
            code=code,
            headers=tuple(sent.items()),
        ),
        usage=None,
        when=when,
        times=times,
    )


def rate_limited(
    *,
    retry_after: float = 0.0,
    message: str = "Rate limit reached (scripted by the loopback model server).",
    when: Rule | None = None,
    times: int | None = 1,
) -> Turn:
    """HTTP 429 with ``retry-after: 0`` (by default), which the client retries at once."""
    return http_error(
        429,
        message,
        error_type="requests",
        code="rate_limit_exceeded",
        retry_after=retry_after,
        when=when,
        times=times,
    )


def server_error(
    message: str = "The server had an error (scripted by the loopback model server).",
    *,
    status: int = 500,
    retryable: bool = False,
    when: Rule | None = None,
    times: int | None = 1,
) -> Turn:
    """HTTP 500 (or another 5xx). Not retried by default, so one scripted error is one failure;
    ``retryable=True`` lets the client retry it at once into the next turn."""
    return http_error(
        status,
        message,
        retryable=retryable,
        retry_after=0.0 if retryable else None,
        when=when,
        times=times,
    )


# =========================================================================== the script


@dataclass(slots=True, eq=False)  # removed by identity, never compared
class _Pending:
    turn: Turn
    left: int | None


class Script:
    """The turns a server answers with, consumed as requests arrive. Thread-safe.

    ``Script([reply("hi"), tool_call("get_weather", {"city": "Paris"}), reply("It is sunny")])``
    """

    def __init__(self, turns: Iterable[Turn] = ()) -> None:
        self._pending: list[_Pending] = []
        self._served = 0
        self._lock = threading.RLock()  # a rule may read the script (pending, served)
        self.add(*turns)

    def add(self, *turns: Turn) -> Script:
        """Append turns after the ones already scripted; returns the script, for chaining."""
        for turn in turns:
            if not isinstance(turn, Turn):
                raise ConfigError(
                    f"a script holds Turn objects (from reply(), tool_call(), ...), "
                    f"not {type(turn).__name__}",
                    setting="turns",
                )
        with self._lock:
            self._pending.extend(_Pending(turn, turn.times) for turn in turns)
        return self

    def take(self, request: ModelRequest) -> Turn | None:
        """The turn answering ``request`` (consumed), or ``None`` when none is left for it.

        The first pending turn whose rule accepts the request wins; failing that, the first
        pending turn without a rule. A rule that raises propagates (the server reports it).
        """
        with self._lock:
            chosen: _Pending | None = None
            for pending in self._pending:
                if pending.turn.when is not None and pending.turn.when(request):
                    chosen = pending
                    break
            if chosen is None:
                chosen = next((p for p in self._pending if p.turn.when is None), None)
            if chosen is None:
                return None
            if chosen.left is not None:
                chosen.left -= 1
                if chosen.left == 0:
                    self._pending.remove(chosen)
            self._served += 1
            return chosen.turn

    @property
    def pending(self) -> tuple[Turn, ...]:
        """Turns not yet used up, in order (an unlimited turn stays here)."""
        with self._lock:
            return tuple(p.turn for p in self._pending)

    @property
    def served(self) -> int:
        """How many requests a turn has answered."""
        with self._lock:
            return self._served

    def assert_consumed(self) -> None:
        """Fail (``AssertionError``) if a limited turn was never used: the run took fewer model
        calls than the test scripted."""
        left = [turn for turn in self.pending if turn.times is not None]
        if left:
            raise AssertionError(
                f"{len(left)} scripted turn(s) never requested: "
                + ", ".join(turn.describe() for turn in left)
            )

    def __len__(self) -> int:
        return len(self.pending)
