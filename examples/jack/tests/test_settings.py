"""JACK_* settings, read through the deck's Settings like any AgentDeck section."""

from __future__ import annotations

import pytest
from agentdeck import Settings
from agentdeck.errors import ConfigError

from jack.agent import DEFAULT_MODEL, model_for
from jack.settings import JackSettings


def test_limits_come_from_the_environment_and_become_the_core_budget() -> None:
    env = {"JACK_TOKENS_PER_TURN": "1234", "JACK_MODEL_CALLS_PER_TURN": "3"}
    budget = Settings(env=env).section(JackSettings).budget()
    assert (budget.max_total_tokens, budget.max_requests) == (1234, 3)


def test_origins_are_comma_separated() -> None:
    env = {"JACK_ORIGINS": "https://docs.example, https://example.com,"}
    origins = Settings(env=env).section(JackSettings).origins
    assert origins == ["https://docs.example", "https://example.com"]


def test_a_limit_that_would_switch_itself_off_is_refused_naming_the_variable() -> None:
    with pytest.raises(ConfigError) as refused:
        Settings(env={"JACK_REQUESTS_PER_WINDOW": "0"}).section(JackSettings)
    assert "JACK_REQUESTS_PER_WINDOW" in str(refused.value)


@pytest.mark.parametrize(
    ("env", "model"),
    [
        ({"JACK_MODEL": "jack-model", "OPENAI_MODEL": "openai-model"}, "jack-model"),
        ({"OPENAI_MODEL": "openai-model"}, "openai-model"),
        ({}, DEFAULT_MODEL),
    ],
)
def test_the_model_is_jacks_own_else_openais_else_the_default(
    env: dict[str, str], model: str
) -> None:
    assert model_for(Settings(env=env)) == model
