"""The renderer's attribute vocabulary is the GenAI semantic conventions' own: every ``gen_ai.*``
key the core spells is the ``opentelemetry-semantic-conventions`` constant of the same name, and
every key that leaves the process is either one of the conventions' or AgentDeck's own."""

from __future__ import annotations

import warnings
from collections.abc import Callable

import pytest
from opentelemetry.semconv._incubating.attributes import gen_ai_attributes
from opentelemetry.semconv.attributes import error_attributes
from otlp_trees import exported_spans

from agentdeck.observing.tracing import attributes as vocabulary
from agentdeck.testing.otlp import OTLPReceiver
from agentdeck.testing.trace_scenarios import (
    Scenario,
    agent_turn_with_tool,
    failed_run,
    nested_workflow,
    tool_call_with_secrets,
    workflow_with_interrupt,
)
from agentdeck_otel import OTelObserver

OURS = {
    name: getattr(vocabulary, name)
    for name in vocabulary.__all__
    if name.isupper() and isinstance(getattr(vocabulary, name), str)
}
KEYS = {name: value for name, value in OURS.items() if "." in value}
CONVENTIONS = {
    value: name
    for name, value in vars(gen_ai_attributes).items()
    if name.startswith("GEN_AI_") and isinstance(value, str)
}


def test_every_gen_ai_key_is_the_conventions_constant_of_the_same_name() -> None:
    gen_ai_keys = {name: value for name, value in KEYS.items() if value.startswith("gen_ai.")}
    assert len(gen_ai_keys) >= 10
    for name, value in gen_ai_keys.items():
        assert getattr(gen_ai_attributes, name, None) == value, name


def test_no_agentdeck_key_spells_a_conventions_name_under_another_name() -> None:
    for name, value in KEYS.items():
        if value in CONVENTIONS:
            assert CONVENTIONS[value] == name


def test_operation_and_provider_values_are_the_conventions_values() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # the enums are marked as moving
        operations = {m.value for m in gen_ai_attributes.GenAiOperationNameValues}
        providers = {m.value for m in gen_ai_attributes.GenAiProviderNameValues}
    ours = {
        vocabulary.OPERATION_CHAT,
        vocabulary.OPERATION_EXECUTE_TOOL,
        vocabulary.OPERATION_INVOKE_AGENT,
        vocabulary.OPERATION_INVOKE_WORKFLOW,
    }
    assert ours <= operations
    assert vocabulary.PROVIDER_OPENAI in providers


SCENARIOS: list[Callable[[], Scenario]] = [
    agent_turn_with_tool,
    workflow_with_interrupt,
    failed_run,
    nested_workflow,
    tool_call_with_secrets,
]


@pytest.mark.parametrize("capture", ["off", "metadata", "full"])
async def test_every_exported_key_is_the_conventions_or_agentdecks(
    receiver: OTLPReceiver, capture: str
) -> None:
    observer = OTelObserver(receiver.url, signals=("traces",), capture=capture)
    await observer.start()
    for make in SCENARIOS:
        for event in make().events:
            await observer.emit(event)
    await observer.close()

    keys = {key for span in exported_spans(receiver) for key in span.attributes}
    allowed = set(CONVENTIONS) | {error_attributes.ERROR_TYPE, "session.id"}
    foreign = sorted(
        key
        for key in keys
        if key not in allowed and not key.startswith(("agentdeck.", "langfuse."))
    )
    assert foreign == []
    assert "gen_ai.operation.name" in keys
