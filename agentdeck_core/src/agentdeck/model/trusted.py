"""Payloads and blocks built from parts that are valid already, without validating them again.

Every run builds a ``run.started``, a ``run.completed`` and (for a workflow) a data block or two
from values that were checked on their way in or that the runtime made itself. Validating those
again costs more than everything else the runtime does for a trivial run, so the builders here
assemble the models directly *when every part is of a plain, exact type* -- a string, ``None``,
a block instance of a known class, a JSON scalar -- and otherwise call the validated constructor,
so anything unusual gets exactly the checks, normalization and errors it always got.

A model built here is indistinguishable from the validated one: `_matches` proves it once at
import on samples covering each shortcut, and if a pydantic release ever breaks that, every
builder falls back to plain validation.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel

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
from agentdeck.model.events import RunCompleted, RunStarted, Usage

__all__ = ["completed", "data_block", "started"]

_KNOWN_BLOCKS = frozenset(
    {TextBlock, ImageBlock, AudioBlock, ResourceBlock, DataBlock, UnknownBlock}
)
_new = object.__new__
_set = object.__setattr__
# Fields sets, one per shape and shared by every model built with it (see `_build`).
_DATA_FIELDS = {"data"}
_NO_FIELDS: set[str] = set()
_OUTPUT_FIELDS = {"output"}
_USAGE_DEFAULTS = {
    "requests": 0,
    "input_tokens": 0,
    "output_tokens": 0,
    "total_tokens": 0,
    "usd": None,
}


def _build(cls: type[BaseModel], values: dict[str, Any], fields_set: set[str]) -> Any:
    """An instance of ``cls`` holding ``values`` (every field, in declaration order).

    ``fields_set`` is shared by every model built with it, not copied: these models are frozen,
    so nothing assigns a field (which is what adds to a fields set), and ``model_copy`` copies
    the set first. A set per model was a fifth of the objects a trivial run allocates.
    """
    model = _new(cls)
    _set(model, "__dict__", values)
    _set(model, "__pydantic_fields_set__", fields_set)
    _set(model, "__pydantic_extra__", None)
    _set(model, "__pydantic_private__", None)
    return model


def _known_blocks(blocks: Sequence[Any]) -> bool:
    for block in blocks:  # noqa: SIM110 - a loop, not all(...): lists hold a block or two
        if type(block) not in _KNOWN_BLOCKS:
            return False
    return True


def _fast_data_block(value: Any) -> DataBlock | None:
    if not is_plain_json_scalar(value):
        return None
    block: DataBlock = _build(DataBlock, {"type": "data", "data": value}, _DATA_FIELDS)
    return block


def _fast_completed(output: Sequence[ContentBlock]) -> RunCompleted | None:
    if type(output) is not list or not _known_blocks(output):
        return None
    usage = _build(Usage, dict(_USAGE_DEFAULTS), _NO_FIELDS)
    payload: RunCompleted = _build(
        RunCompleted,
        {"kind": "run.completed", "output": list(output), "usage": usage, "agent": None},
        _OUTPUT_FIELDS,
    )
    return payload


_STARTED_FIELDS = {"name", "invocable_kind", "input", "key", "code_digest", "deadline"}


def _fast_started(
    name: Any, invocable_kind: Any, input: Any, key: Any, code_digest: Any, deadline: Any
) -> RunStarted | None:
    if (
        type(name) is not str
        or type(invocable_kind) is not str
        or type(input) is not list
        or not _known_blocks(input)
        or (key is not None and type(key) is not str)
        or (code_digest is not None and type(code_digest) is not str)
        or deadline is not None  # a time is normalized to UTC by validation
    ):
        return None
    payload: RunStarted = _build(
        RunStarted,
        {
            "kind": "run.started",
            "name": name,
            "invocable_kind": invocable_kind,
            "input": list(input),
            "key": key,
            "code_digest": code_digest,
            "deadline": None,
        },
        _STARTED_FIELDS,
    )
    return payload


def _same(fast: BaseModel | None, slow: BaseModel) -> bool:
    """Equal, and equal in every way a caller or a store can observe."""
    return (
        fast is not None
        and type(fast) is type(slow)
        and fast == slow
        and repr(fast) == repr(slow)
        and fast.model_dump_json() == slow.model_dump_json()
        and fast.model_fields_set == slow.model_fields_set
        and fast.model_dump() == slow.model_dump()
    )


def _matches() -> bool:
    """Whether every shortcut builds what validation builds (checked once, at import)."""
    text, data = TextBlock(text="hi"), DataBlock(data={"a": [1, 2.5, None]})
    try:
        checks = [
            _same(_fast_data_block(value), DataBlock(data=value))
            for value in (None, True, 0, -7, 2**70, 1.5, "", "ascii text")
        ]
        checks.append(_same(_fast_completed([]), RunCompleted(output=[])))
        checks.append(_same(_fast_completed([text, data]), RunCompleted(output=[text, data])))
        for key, digest in ((None, None), ("k", "d" * 64)):
            arguments = ("wf", "workflow", [data, text], key, digest, None)
            fast = _fast_started(*arguments)
            slow = RunStarted(
                name="wf",
                invocable_kind="workflow",
                input=[data, text],
                key=key,
                code_digest=digest,
                deadline=None,
            )
            checks.append(_same(fast, slow))
        return all(checks)
    except Exception:  # a pydantic release that changed its internals: validate everything
        return False


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
) -> RunStarted:
    """``RunStarted(...)``: built directly when every part is already of its exact type and
    there is no deadline (a time gets normalized by validation); validated otherwise."""
    if _ENABLED:
        payload = _fast_started(name, invocable_kind, input, key, code_digest, deadline)
        if payload is not None:
            return payload
    return RunStarted(
        name=name,
        invocable_kind=invocable_kind,
        input=input,
        key=key,
        code_digest=code_digest,
        deadline=deadline,
    )
