"""Payloads and blocks built from parts that are valid already, without validating them again.

Every run builds a ``run.started``, a ``run.completed`` and (for a workflow) a data block or two
from values that were checked on their way in or that the runtime made itself. Validating those
again costs more than everything else the runtime does for a trivial run, so the builders here
assemble the models directly *when every part is of a plain, exact type* -- a string, ``None``,
a block instance of a known class, a JSON scalar -- and otherwise call the validated constructor,
so anything unusual gets exactly the checks, normalization and errors it always got.

The models are built by :mod:`agentdeck.model.unvalidated` (which says what that skips and when
it is safe). A model built here is indistinguishable from the validated one: `_matches` proves it
once at import on samples covering each shortcut, and if a pydantic release ever breaks that,
every builder falls back to plain validation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from agentdeck.model.content import (
    AudioBlock,
    ContentBlock,
    DataBlock,
    ImageBlock,
    ResourceBlock,
    TextBlock,
    UnknownBlock,
    is_plain_json_scalar,
)
from agentdeck.model.payloads import Budget, ForkOrigin, RunCompleted, RunStarted, Usage
from agentdeck.model.unvalidated import builder, proven

__all__ = ["completed", "data_block", "started"]

_KNOWN_BLOCKS = frozenset(
    {TextBlock, ImageBlock, AudioBlock, ResourceBlock, DataBlock, UnknownBlock}
)
_USAGE_DEFAULTS = {
    "requests": 0,
    "input_tokens": 0,
    "output_tokens": 0,
    "total_tokens": 0,
    "usd": None,
}
# One builder per shape; each model's fields set is the fields validation marks as given.
_data_block = builder(DataBlock, fields_set={"data"})
_default_usage = builder(Usage, fields_set=set())
_completed = builder(RunCompleted, fields_set={"output"})
_started = builder(
    RunStarted, fields_set={"name", "invocable_kind", "input", "key", "code_digest", "deadline"}
)


def _known_blocks(blocks: Sequence[Any]) -> bool:
    for block in blocks:  # noqa: SIM110 - a loop, not all(...): lists hold a block or two
        if type(block) not in _KNOWN_BLOCKS:
            return False
    return True


def _fast_data_block(value: Any) -> DataBlock | None:
    if not is_plain_json_scalar(value):
        return None
    return _data_block({"type": "data", "data": value})


def _fast_completed(output: Sequence[ContentBlock]) -> RunCompleted | None:
    if type(output) is not list or not _known_blocks(output):
        return None
    usage = _default_usage(dict(_USAGE_DEFAULTS))
    return _completed(
        {"kind": "run.completed", "output": list(output), "usage": usage, "agent": None}
    )


def _fast_started(
    name: Any,
    invocable_kind: Any,
    input: Any,
    key: Any,
    code_digest: Any,
    deadline: Any,
    trace_context: Any = None,
) -> RunStarted | None:
    if (
        type(name) is not str
        or type(invocable_kind) is not str
        or type(input) is not list
        or not _known_blocks(input)
        or (key is not None and type(key) is not str)
        or (code_digest is not None and type(code_digest) is not str)
        or deadline is not None  # a time is normalized to UTC by validation
        or trace_context is not None  # rare: validated
    ):
        return None
    return _started(
        {
            "kind": "run.started",
            "name": name,
            "invocable_kind": invocable_kind,
            "input": list(input),
            "key": key,
            "code_digest": code_digest,
            "deadline": None,
            "trace_context": None,
            "forked_from": None,
            "retry_of": None,
            "budget": None,
        }
    )


def _matches() -> bool:
    """Whether every shortcut builds what validation builds (checked once, at import)."""
    text, data = TextBlock(text="hi"), DataBlock(data={"a": [1, 2.5, None]})
    pairs: list[tuple[Callable[[], object], Callable[[], object]]] = [
        (lambda v=value: _fast_data_block(v), lambda v=value: DataBlock(data=v))  # type: ignore[misc]
        for value in (None, True, 0, -7, 2**70, 1.5, "", "ascii text")
    ]
    pairs.append((lambda: _fast_completed([]), lambda: RunCompleted(output=[])))
    pairs.append((lambda: _fast_completed([text, data]), lambda: RunCompleted(output=[text, data])))
    for key, digest in ((None, None), ("k", "d" * 64)):
        pairs.append(
            (
                lambda k=key, d=digest: _fast_started(  # type: ignore[misc]
                    "wf", "workflow", [data, text], k, d, None
                ),
                lambda k=key, d=digest: RunStarted(  # type: ignore[misc]
                    name="wf",
                    invocable_kind="workflow",
                    input=[data, text],
                    key=k,
                    code_digest=d,
                    deadline=None,
                ),
            )
        )
    return proven(pairs)


_ENABLED = _matches()


def data_block(value: Any) -> DataBlock:
    """``DataBlock(data=value)``: a JSON scalar is taken as is, anything else is validated (and
    normalized to its JSON form, or refused with pydantic's ``ValidationError``)."""
    if _ENABLED:
        block = _fast_data_block(value)
        if block is not None:
            return block
    return DataBlock(data=value)


def completed(output: Sequence[ContentBlock]) -> RunCompleted:
    """``RunCompleted(output=output)`` with default usage; known block instances are taken as
    they are, as validation takes them."""
    if _ENABLED:
        payload = _fast_completed(output)
        if payload is not None:
            return payload
    return RunCompleted(output=list(output))


def started(
    *,
    name: str,
    invocable_kind: str,
    input: list[ContentBlock],
    key: str | None,
    code_digest: str | None,
    deadline: datetime | None,
    trace_context: dict[str, str] | None = None,
    forked_from: ForkOrigin | None = None,
    retry_of: str | None = None,
    budget: Budget | None = None,
) -> RunStarted:
    """``RunStarted(...)``: built directly when every part is already of its exact type and
    there is no deadline, trace context, origin or budget (validation normalizes those);
    validated otherwise."""
    linked = forked_from is not None or retry_of is not None or budget is not None
    if _ENABLED and not linked:
        payload = _fast_started(
            name, invocable_kind, input, key, code_digest, deadline, trace_context
        )
        if payload is not None:
            return payload
    given: dict[str, Any] = {}
    if trace_context is not None:
        given["trace_context"] = trace_context
    if forked_from is not None:
        given["forked_from"] = forked_from
    if retry_of is not None:
        given["retry_of"] = retry_of
    if budget is not None:
        given["budget"] = budget
    return RunStarted(
        name=name,
        invocable_kind=invocable_kind,
        input=input,
        key=key,
        code_digest=code_digest,
        deadline=deadline,
        **given,
    )
