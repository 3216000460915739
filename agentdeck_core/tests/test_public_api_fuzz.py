"""The public API answers every bad value with an ``AgentDeckError`` (issue 20, item 6): a deck's
calls on the in-memory store (the stores plugin runs the same property on SQLite, PostgreSQL and
Redis), and the declarations a catalog is made of (``Agent``, ``@workflow``, ``@tool``,
``Settings``, ``Deck``)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agentdeck import Agent, Deck, tool, workflow
from agentdeck.errors import AgentDeckError
from agentdeck.settings import Settings
from agentdeck.testing.api_fuzz import fuzz_public_api, hostile_values
from agentdeck.testing.fixtures import in_ci


def test_no_public_deck_call_raises_outside_the_hierarchy() -> None:
    fuzz_public_api(
        {"settings": Settings(env={"AGENTDECK_STATE": "memory://"})},
        examples=400 if in_ci() else 150,
    )


async def _body(x: int) -> int:
    return x


def _function(x: int) -> int:
    return x


DECLARATIONS: dict[str, Callable[[Any], object]] = {
    "Agent(name=)": lambda v: Agent(name=v, instructions="x"),
    "Agent(instructions=)": lambda v: Agent(name="a", instructions=v),
    "Agent(tools=)": lambda v: Agent(name="a", instructions="x", tools=v),
    "Agent(model=)": lambda v: Agent(name="a", instructions="x", model=v),
    "Agent(handoffs=)": lambda v: Agent(name="a", instructions="x", handoffs=v),
    "workflow(fn)": lambda v: workflow(v),
    "workflow(name=)": lambda v: workflow(name=v)(_body),
    "workflow(description=)": lambda v: workflow(description=v)(_body),
    "tool(fn)": lambda v: tool(v),
    "tool(name=)": lambda v: tool(name=v)(_function),
    "tool(needs_approval=)": lambda v: tool(needs_approval=v)(_function),
    "Settings(env=)": lambda v: Settings(env=v),
    "Settings(config=)": lambda v: Settings(config=v),
    "Deck(agents=)": lambda v: Deck(agents=v, settings=Settings()).build(),
    "Deck(workflows=)": lambda v: Deck(workflows=v, settings=Settings()).build(),
    "Deck(context=)": lambda v: Deck(context=v, settings=Settings()),
    "Deck(observers=)": lambda v: Deck(observers=v, settings=Settings()).build(),
}


@settings(max_examples=300 if in_ci() else 120, deadline=None)
@given(which=st.sampled_from(sorted(DECLARATIONS)), value=hostile_values())
def test_no_declaration_raises_outside_the_hierarchy(which: str, value: Any) -> None:
    with contextlib.suppress(AgentDeckError):  # anything else escapes and fails the property
        DECLARATIONS[which](value)
