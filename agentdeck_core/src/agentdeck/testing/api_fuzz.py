"""A property test that throws arbitrary values at a deck's public calls.

Every public call must answer bad input with an :class:`~agentdeck.errors.AgentDeckError`
subclass (an :class:`~agentdeck.errors.InvalidInputError` naming the field, mostly) -- never a
pydantic ``ValidationError``, a ``TypeError`` from a driver or a store's
:class:`~agentdeck.errors.StoreError` for a value the caller got wrong. The store behind the
deck matters: a value one backend swallows and another refuses is exactly what this is for, so
it runs against every store (``memory://`` in the core's tests, SQLite, PostgreSQL and Redis in
the stores plugin's)::

    from agentdeck.testing.api_fuzz import fuzz_public_api

    def test_no_untyped_error_on_my_store(my_url):
        fuzz_public_api({"settings": Settings(env={"AGENTDECK_STATE": my_url})}, examples=60)

Each example draws one call (``Deck.run``/``stream``, ``runs.start``/``get``/``list``, a
``Run``'s ``answer``/``pause``/``cancel``/``resume``/``events``) and, for each of its
parameters, either a value that fits or a hostile one: NaN, infinities, integers too long to
write, bytes, bare objects, NUL characters, lone surrogates, the wrong type altogether (drawn
with ``st.from_type``). A call may succeed or raise an ``AgentDeckError``; anything else fails
the property, shrunk by Hypothesis to the smallest call that shows it -- and so does a
:class:`~agentdeck.errors.StoreError`: the store is healthy, so one means it choked on a value
the API let through, which is the API's to refuse as the caller's mistake.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import PurePosixPath
from typing import Any
from uuid import UUID

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentdeck.authoring.context import WorkflowCtx
from agentdeck.authoring.workflows import workflow
from agentdeck.deck.deck import Deck
from agentdeck.deck.runs import Run
from agentdeck.errors import AgentDeckError, StoreError
from agentdeck.model.results import InterruptResult
from agentdeck.runtime.config import Budget
from agentdeck.vocabulary import RunStatus

__all__ = ["FUZZ_WORKFLOWS", "fuzz_public_api", "hostile_values"]


@workflow
async def fuzz_echo(value: Any = None) -> Any:
    """Returns its input: every value that is accepted must also be stored and read back."""
    return value


@workflow
async def fuzz_asks(ctx: WorkflowCtx[Any]) -> Any:
    """Parks on a question, for the answer calls to aim at."""
    return await ctx.ask("go on?")


@workflow
async def fuzz_refund(order_id: int, amount: float, note: str | None = None) -> Any:
    """Typed parameters: input of the wrong type must be refused before the run starts."""
    return {"order_id": order_id, "amount": amount, "note": note}


FUZZ_WORKFLOWS = (fuzz_echo, fuzz_asks, fuzz_refund)
"""The catalog the fuzzed deck is built with."""


class _LongInt(int):
    """An integer too long to write as text, that still shows itself in a failure report."""

    def __repr__(self) -> str:
        return f"<int of {len(format(abs(self), 'x'))} hex digits>"


_NAMED_HOSTILE: list[Any] = [
    math.nan,
    math.inf,
    -math.inf,
    _LongInt(10**5000),
    _LongInt(-(10**4300)),
    2**64,
    -(2**63) - 1,
    b"",
    b"\xff\xfe",
    bytearray(b"x"),
    object(),
    type,
    print,
    Ellipsis,
    NotImplemented,
    "",
    "\x00",
    "a\x00b",
    "\ud800",
    "x\udfff",
    "\U0010ffff",
    " " * 3,
    "x" * 10_000,
    complex(1, 2),
    Decimal("NaN"),
    Decimal("1e999999"),
    datetime(2000, 1, 1),  # naive
    {1, 2},
    frozenset(),
    (1, "a"),
    {"\x00": 1},
    {(1, 2): "tuple key"},
    [math.nan],
    {"a": {"b": ["\ud800"]}},
    RunStatus.RUNNING,
]


def _raw_text() -> st.SearchStrategy[str]:
    """Text with NULs and lone surrogates among ordinary characters (``st.text`` draws neither
    surrogates nor, often, NUL)."""
    odd = st.one_of(st.just("\x00"), st.integers(0xD800, 0xDFFF).map(chr))
    return st.lists(st.one_of(st.characters(), odd), max_size=6).map("".join)


def hostile_values() -> st.SearchStrategy[Any]:
    """Values a careless or hostile caller passes: wrong types, and right types that no store
    can hold."""
    scalars = st.one_of(
        st.sampled_from(_NAMED_HOSTILE),
        st.text(),
        _raw_text(),
        st.binary(max_size=16),
        st.integers(),
        st.floats(),
        st.booleans(),
        st.none(),
        st.sampled_from(
            [int, str, float, bytes, complex, Decimal, UUID, PurePosixPath, datetime, timedelta]
        ).flatmap(st.from_type),
        st.builds(object),
    )
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.dictionaries(st.one_of(st.text(max_size=4), st.integers()), inner, max_size=3),
            st.tuples(inner, inner),
        ),
        max_leaves=6,
    )


def _either(valid: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(valid, hostile_values())


_TEXT = st.one_of(st.text(max_size=12), _raw_text())
"""Text for a text parameter: ordinary, or with the NULs and lone surrogates no store holds."""
_OPTIONAL_TEXT = st.one_of(st.none(), _TEXT)
_NAMES = st.sampled_from(["fuzz_echo", "fuzz_asks", "fuzz_refund", "nope"])
_INPUT = st.one_of(
    st.fixed_dictionaries({"order_id": st.integers(0, 99), "amount": st.floats(0, 9)}),
    st.fixed_dictionaries({"order_id": hostile_values(), "amount": hostile_values()}),
    hostile_values(),
)
_DEADLINE = st.one_of(st.none(), st.just(datetime.now(UTC) + timedelta(days=1)))
_BUDGET = st.one_of(st.none(), st.builds(Budget, max_requests=st.integers(1, 9)))


_VALID_TEXT = st.one_of(st.none(), st.text(max_size=12))


def _start_kwargs(*, start: bool) -> st.SearchStrategy[dict[str, Any]]:
    """A start's keyword arguments: all of them fitting but one, the target, which is hostile
    (a call with several bad values stops at the first, hiding what the others would do)."""
    valid: dict[str, st.SearchStrategy[Any]] = {
        "session_id": _VALID_TEXT,
        "namespace": _VALID_TEXT,
        "key": _VALID_TEXT,
        "deadline": _DEADLINE,
        "budget": _BUDGET,
        "context": st.none(),
    }
    hostile: dict[str, st.SearchStrategy[Any]] = {
        "session_id": _either(_OPTIONAL_TEXT),
        "namespace": _either(_OPTIONAL_TEXT),
        "key": _either(_OPTIONAL_TEXT),
        "deadline": _either(_DEADLINE),
        "budget": _either(_BUDGET),
        "context": hostile_values(),
    }
    if start:
        valid |= {"if_exists": st.sampled_from(["raise", "return"]), "trace_context": st.none()}
        hostile |= {"if_exists": hostile_values(), "trace_context": hostile_values()}

    def with_target(target: str) -> st.SearchStrategy[dict[str, Any]]:
        fields = {name: hostile[name] if name == target else valid[name] for name in valid}
        return st.fixed_dictionaries(fields)

    return st.sampled_from(sorted(valid)).flatmap(with_target)


Call = Callable[[Deck, st.DataObject], Awaitable[Any]]


async def _run(deck: Deck, data: st.DataObject) -> Any:
    name = data.draw(_either(_NAMES), label="name")
    kwargs = data.draw(_start_kwargs(start=False), label="options")
    result = await deck.run(name, data.draw(_INPUT, label="input"), **kwargs)
    if isinstance(result, InterruptResult):
        await (await deck.runs.get(result.run_id)).cancel()
    return result


async def _stream(deck: Deck, data: st.DataObject) -> Any:
    name = data.draw(_either(_NAMES), label="name")
    kwargs = data.draw(_start_kwargs(start=False), label="options")
    async for _event in deck.stream(name, data.draw(_INPUT, label="input"), **kwargs):
        pass


async def _start(deck: Deck, data: st.DataObject) -> Any:
    name = data.draw(_either(_NAMES), label="name")
    kwargs = data.draw(_start_kwargs(start=True), label="options")
    run = await deck.runs.start(name, data.draw(_INPUT, label="input"), **kwargs)
    await run.cancel()


async def _get(deck: Deck, data: st.DataObject) -> Any:
    by = data.draw(st.sampled_from(["id", "key", "both", "neither"]), label="by")
    kwargs: dict[str, Any] = {"namespace": data.draw(_either(_OPTIONAL_TEXT), label="namespace")}
    if by in ("key", "both"):
        kwargs["key"] = data.draw(_either(_TEXT), label="key")
    run_id = data.draw(_either(_TEXT), label="id") if by in ("id", "both") else None
    return await deck.runs.get(run_id, **kwargs)


async def _list(deck: Deck, data: st.DataObject) -> Any:
    kwargs = data.draw(
        st.fixed_dictionaries(
            {},
            optional={
                "namespace": _either(_OPTIONAL_TEXT),
                "status": _either(st.one_of(st.none(), st.sampled_from(list(RunStatus)))),
                "session_id": _either(_OPTIONAL_TEXT),
                "limit": _either(st.one_of(st.none(), st.integers(1, 5))),
            },
        ),
        label="list",
    )
    return await deck.runs.list(**kwargs)


async def _parked(deck: Deck) -> Run:
    result = await deck.run("fuzz_asks")
    assert isinstance(result, InterruptResult), result
    return await deck.runs.get(result.run_id)


async def _answer(deck: Deck, data: st.DataObject) -> Any:
    run = await _parked(deck)
    try:
        await run.answer(
            data.draw(hostile_values(), label="value"),
            interrupt_id=data.draw(_either(st.none()), label="interrupt_id"),
        )
    finally:
        await run.cancel()


async def _control(deck: Deck, data: st.DataObject) -> Any:
    run = await _parked(deck)
    verb = data.draw(st.sampled_from(["pause", "cancel", "resume", "events"]), label="verb")
    try:
        if verb == "resume":
            await run.resume()
        elif verb == "events":
            from_seq = data.draw(_either(st.integers(0, 3)), label="from_seq")
            follow = data.draw(st.booleans(), label="follow") if verb == "events" else False
            if follow:
                await run.cancel()
            async for _event in run.events(from_seq=from_seq, follow=follow):
                pass
        else:
            await getattr(run, verb)(data.draw(_either(_OPTIONAL_TEXT), label="reason"))
    finally:
        await run.cancel()


class _Named:
    """A drawn call that shows its name in a failure report."""

    def __init__(self, call: Call) -> None:
        self.call = call

    def __repr__(self) -> str:
        return self.call.__name__.strip("_")


CALLS: tuple[Call, ...] = (_run, _stream, _start, _get, _list, _answer, _control)
"""One drawer per public call on a deck and its runs."""


def fuzz_public_api(deck_options: dict[str, Any], *, examples: int = 100) -> None:
    """Open a deck of :data:`FUZZ_WORKFLOWS` with ``deck_options`` (its ``settings=``,
    ``events=``, ``plugins=``...) and fail on the first public call that raises anything but an
    :class:`AgentDeckError`, after ``examples`` calls."""
    loop = asyncio.new_event_loop()
    deck = Deck(workflows=FUZZ_WORKFLOWS, observers=(), **deck_options)
    loop.run_until_complete(deck.open())

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(data=st.data())
    def every_call_fails_typed(data: st.DataObject) -> None:
        call = data.draw(st.sampled_from(CALLS).map(_Named), label="call")
        try:
            loop.run_until_complete(asyncio.wait_for(call.call(deck, data), timeout=30))
        except StoreError:
            raise  # the store is healthy: it choked on a value the API should have refused
        except AgentDeckError:
            pass

    try:
        every_call_fails_typed()
    finally:
        loop.run_until_complete(deck.aclose())
        loop.close()
