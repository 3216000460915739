"""AGENTDECK_LANGFUSE_CAPTURE holds in the bytes the Langfuse SDK actually sends."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from otlp_trees import exported_spans

from agentdeck.settings import Settings
from agentdeck.testing.otlp import OTLPReceiver
from agentdeck.testing.trace_scenarios import (
    SECRETS,
    Scenario,
    agent_turn_with_tool,
    failed_run,
    tool_call_with_secrets,
    workflow_with_interrupt,
)
from agentdeck_langfuse import LangfuseObserver, LangfuseSettings

SCENARIOS: dict[str, Callable[[], Scenario]] = {
    "agent turn": agent_turn_with_tool,
    "workflow with interrupt": workflow_with_interrupt,
    "failed run": failed_run,
    "secrets": tool_call_with_secrets,
}


async def sent(receiver: OTLPReceiver, env: dict[str, str], scenario: Scenario) -> bytes:
    observer = LangfuseObserver(settings=Settings(env=env))
    await observer.start()
    for event in scenario.events:
        await observer.emit(event)
    await observer.close()
    assert receiver.requests(), "nothing was exported"
    return b"".join(r.body for r in receiver.requests())


def test_full_is_the_default_for_a_langfuse_project() -> None:
    assert Settings(env={}).section(LangfuseSettings).capture == "full"


@pytest.mark.parametrize("make", SCENARIOS.values(), ids=SCENARIOS.keys())
async def test_off_sends_no_prompt_completion_or_name(
    receiver: OTLPReceiver, langfuse_env: dict[str, str], make: Callable[[], Scenario]
) -> None:
    scenario = make()
    payload = await sent(receiver, {**langfuse_env, "AGENTDECK_LANGFUSE_CAPTURE": "off"}, scenario)

    for text in (*scenario.content, *scenario.names, *SECRETS):
        assert text.encode() not in payload, f"{text!r} left the process under capture=off"


async def test_metadata_sends_names_but_no_text(
    receiver: OTLPReceiver, langfuse_env: dict[str, str]
) -> None:
    scenario = agent_turn_with_tool()
    payload = await sent(
        receiver, {**langfuse_env, "AGENTDECK_LANGFUSE_CAPTURE": "metadata"}, scenario
    )

    for name in scenario.names:
        assert name.encode() in payload
    for text in scenario.content:
        assert text.encode() not in payload
    assert b"sess-alice" not in payload  # the session is grouped by its hash


async def test_full_masks_credentials_inside_a_tool_argument(
    receiver: OTLPReceiver, langfuse_env: dict[str, str]
) -> None:
    payload = await sent(receiver, langfuse_env, tool_call_with_secrets())

    for secret in SECRETS:
        assert secret.encode() not in payload
    [tool] = [s for s in exported_spans(receiver) if s.name == "deploy"]
    arguments = tool.attributes["langfuse.observation.input"]
    assert "sk-[REDACTED]" in arguments
    assert "Bearer [REDACTED]" in arguments
    assert "[REDACTED PRIVATE KEY]" in arguments
    assert "staging" in arguments
