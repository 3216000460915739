"""The spec's Deck examples that need no model, run as written (with the scripted engine standing
in where a catalog needs something to run)."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from agentdeck import Agent, ConfigError, Context, ContextTypeError, Deck, ToolCtx, tool
from agentdeck import errors as errors_module
from agentdeck.settings import Settings


def _support() -> Any:
    path = Path(__file__).with_name("deck_support.py")
    spec = importlib.util.spec_from_file_location("deck_support", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("deck_support", module)
    spec.loader.exec_module(module)
    return module


support = _support()


class Calendar:
    def find(self, day: str) -> str:
        return f"{day} 09:00"


class Warehouse:
    """A different application environment entirely."""


def test_context_type_refusal_with_toolctx_and_tool() -> None:
    @tool
    def find_slots(day: str, environment: ToolCtx[Calendar]) -> str:
        """Find free appointment slots on a given day."""
        return environment.data.find(day)

    booking = Agent(name="Booking", instructions="Book things.", tools=[find_slots])

    with pytest.raises(errors_module.ContextTypeError) as refused:
        Deck(agents=[booking], context=Warehouse).build()
    message = str(refused.value)
    assert "find_slots" in message and "Calendar" in message and "Warehouse" in message
    assert isinstance(refused.value, ConfigError)


def test_context_type_refusal_with_the_4x_context_spelling() -> None:
    def find_slots(day: str, environment: Context[Calendar]) -> str:
        """Find free appointment slots on a given day."""
        return environment.data.find(day)

    booking = Agent(name="Booking", instructions="Book things.", tools=[find_slots])

    with pytest.raises(ContextTypeError) as refused:
        Deck(agents=[booking], context=Warehouse).build()
    assert "find_slots" in str(refused.value)


def test_a_subclass_of_the_required_type_is_accepted_and_build_needs_no_engine_for_it() -> None:
    class BusyCalendar(Calendar):
        pass

    @tool
    def find_slots(day: str, environment: ToolCtx[Calendar]) -> str:
        """Find free appointment slots on a given day."""
        return environment.data.find(day)

    booking = Agent(name="Booking", instructions="Book things.", tools=[find_slots])
    deck = Deck(agents=[booking], context=BusyCalendar, plugins=support.host(), settings=Settings())
    # The context check passes; compiling the agent then needs the OpenAI engine plugin.
    with pytest.raises(ConfigError, match="agentdeck-openai"):
        deck.build()


def test_a_context_instance_is_refused_at_construction() -> None:
    with pytest.raises(ContextTypeError):
        Deck(context=Calendar())


def _project(root: Path, label: str) -> Path:
    bundle = root / ".agentdeck" / "workflows" / "greet"
    bundle.mkdir(parents=True)
    (bundle / "workflow.py").write_text(
        textwrap.dedent(
            f"""
            from agentdeck.testing import Complete, Script

            greet = Script("greet", [Complete({label!r})])
            """
        )
    )
    return root / ".agentdeck"


async def test_validate_every_project_one_after_another(tmp_path: Path) -> None:
    alpha = _project(tmp_path / "alpha", "from alpha")
    beta = _project(tmp_path / "beta", "from beta")

    async def validate_every_project() -> list[Any]:
        results = []
        async with Deck.from_project(alpha, plugins=support.host(), settings=Settings()) as deck:
            results.append(await deck.run("greet"))
        async with Deck.from_project(beta, plugins=support.host(), settings=Settings()) as deck:
            results.append(await deck.run("greet"))
        return results

    [a, b] = await validate_every_project()
    assert a[0].text == "from alpha" and b[0].text == "from beta"


async def test_two_decks_from_two_projects_side_by_side_keep_their_own_bundles(
    tmp_path: Path,
) -> None:
    alpha = _project(tmp_path / "alpha", "from alpha")
    beta = _project(tmp_path / "beta", "from beta")
    first = Deck.from_project(alpha, plugins=support.host(), settings=Settings())
    second = Deck.from_project(
        beta,
        plugins=support.host(),
        settings=Settings(env={"AGENTDECK_RUNTIME_LEASE_TTL_SECONDS": "30"}),
    )
    async with first, second:
        assert first.is_open and second.is_open
        assert (await first.run("greet"))[0].text == "from alpha"
        assert (await second.run("greet"))[0].text == "from beta"
        # Each deck has its own store: neither sees the other's runs.
        assert len(await first.runs.list()) == 1 and len(await second.runs.list()) == 1
