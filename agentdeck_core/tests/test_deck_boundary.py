"""The public API's one rule for values a store cannot hold, and its typed refusals (issue 20,
items 4 and 6): each bad value is an ``InvalidInputError`` naming its field, raised before
anything is written."""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

import pytest

from agentdeck import Deck, InvalidInputError, WorkflowCtx, workflow
from agentdeck.deck.boundary import checked_json, checked_text, unstorable_text
from agentdeck.settings import Settings


@workflow
async def echo(value: Any = None) -> Any:
    return value


@workflow
async def asks(ctx: WorkflowCtx[Any]) -> Any:
    return await ctx.ask("go on?")


@pytest.fixture
async def deck() -> Any:
    settings = Settings(env={"AGENTDECK_STATE": "memory://"})
    async with Deck(workflows=[echo, asks], settings=settings, observers=()) as opened:
        yield opened


@pytest.mark.parametrize(
    ("text", "problem"),
    [("a\x00b", "NUL character (at index 1)"), ("x\ud800", "lone surrogate (U+D800 at index 1)")],
)
def test_text_no_store_can_hold_is_named(text: str, problem: str) -> None:
    assert problem in (unstorable_text(text) or "")
    with pytest.raises(InvalidInputError) as refused:
        checked_text(text, "session_id")
    assert refused.value.field == "session_id"


@pytest.mark.parametrize(
    "text", ["", " ", "\x01\x1f\x7f", "\u2028\ufeff\uffff", "\U0001f600\U0010ffff", "é" * 1000]
)
def test_every_other_text_is_accepted(text: str) -> None:
    assert unstorable_text(text) is None
    assert checked_text(text, "key") == text


@pytest.mark.parametrize(
    ("value", "where"),
    [
        ({"a": [1, "\x00"]}, "value.a[1] contains a NUL"),
        ({"\x00": 1}, "value has a key that contains a NUL"),
        ([math.nan], "value[0] is nan"),
        pytest.param(10**4300, "more than 4300 digits", id="long-int"),
        (object(), "value (object) is not JSON data"),
        (b"\xff", "value (bytes) is not JSON data"),
    ],
)
def test_json_data_a_store_cannot_hold_is_refused_with_its_place(value: Any, where: str) -> None:
    with pytest.raises(InvalidInputError) as refused:
        checked_json(value, "value")
    assert where in str(refused.value)


def test_json_data_within_the_limits_is_accepted() -> None:
    value = {"n": 10**4299, "f": -0.0, "t": datetime(2026, 1, 1), "s": {1, 2}, "b": b"ok"}
    assert checked_json(value, "value") is value


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda d: d.run("echo", "a\x00b"), "input"),
        (lambda d: d.run("echo", {"k\x00": 1}), "input"),
        pytest.param(lambda d: d.run("echo", 10**5000), "input", id="long-int-input"),
        (lambda d: d.run("echo", 1, session_id="s\x00"), "session_id"),
        (lambda d: d.run("echo", 1, session_id=5), "session_id"),
        (lambda d: d.runs.start("echo", 1, namespace=5), "namespace"),
        (lambda d: d.runs.start("echo", 1, key="\ud800"), "key"),
        (lambda d: d.run(5), "name"),
        (lambda d: d.run("echo", 1, deadline="tomorrow"), "deadline"),
        (lambda d: d.run("echo", 1, deadline=datetime(2030, 1, 1)), "deadline"),
        (lambda d: d.run("echo", 1, budget="lots"), "budget"),
        (lambda d: d.runs.start("echo", 1, if_exists="maybe"), "if_exists"),
        (lambda d: d.runs.get(123), "id"),
        (lambda d: d.runs.get("r\x00"), "id"),
        (lambda d: d.runs.get(key="k\x00"), "key"),
        (lambda d: d.runs.list(status="bogus"), "status"),
        (lambda d: d.runs.list(limit="10"), "limit"),
        (lambda d: d.runs.list(session_id="\x00"), "session_id"),
    ],
)
async def test_a_bad_value_is_refused_naming_its_field_and_nothing_is_recorded(
    deck: Deck, call: Any, field: str
) -> None:
    with pytest.raises(InvalidInputError) as refused:
        await call(deck)
    assert refused.value.field == field
    assert await deck.runs.list() == []


@pytest.mark.parametrize(
    ("value", "field"),
    [(object(), "value"), (math.nan, "value"), ("a\x00", "value"), ("\udc00", "value")],
)
async def test_an_answer_no_store_can_hold_is_refused_and_the_run_still_waits(
    deck: Deck, value: Any, field: str
) -> None:
    parked = await deck.run("asks")
    handle = await deck.runs.get(parked.run_id)
    with pytest.raises(InvalidInputError) as refused:
        await handle.answer(value)
    assert refused.value.field == field
    assert (await handle.pending()) is not None
    await handle.answer("fine")
    assert await handle == "fine"


async def test_a_bad_reason_or_interrupt_id_is_refused(deck: Deck) -> None:
    parked = await deck.run("asks")
    handle = await deck.runs.get(parked.run_id)
    with pytest.raises(InvalidInputError) as refused:
        await handle.answer("yes", interrupt_id=7)  # type: ignore[arg-type]
    assert refused.value.field == "interrupt_id"
    with pytest.raises(InvalidInputError) as refused:
        await handle.cancel("why\x00")
    assert refused.value.field == "reason"
    with pytest.raises(InvalidInputError) as refused:
        async for _ in handle.events(from_seq=-1):
            pass
    assert refused.value.field == "from_seq"
