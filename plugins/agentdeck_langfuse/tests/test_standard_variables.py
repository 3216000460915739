"""The Langfuse SDK's own ``LANGFUSE_*`` variables are the defaults of ``AGENTDECK_LANGFUSE_*``:
an application configured for Langfuse gets AgentDeck's traces with nothing AgentDeck-specific,
and AgentDeck's own settings win wherever they are set."""

from __future__ import annotations

import logging

import pytest
from otlp_trees import exported_spans

from agentdeck import Deck, WorkflowCtx, workflow
from agentdeck.errors import ConfigError
from agentdeck.settings import Settings
from agentdeck.testing.otlp import OTLPReceiver
from agentdeck_langfuse import LangfuseObserver
from agentdeck_langfuse.settings import LangfuseSettings, with_standard_defaults

TRACES_PATH = "/api/public/otel/v1/traces"


@workflow
async def lookup(order_id: str, ctx: WorkflowCtx) -> str:
    await ctx.report("looking up", order=order_id)
    return f"found {order_id}"


def standard_env(receiver: OTLPReceiver, public_key: str) -> dict[str, str]:
    return {
        "LANGFUSE_PUBLIC_KEY": public_key,
        "LANGFUSE_SECRET_KEY": "sk-lf-standard",
        "LANGFUSE_BASE_URL": receiver.url,
        "LANGFUSE_TRACING_ENVIRONMENT": "staging",
    }


async def test_with_only_the_sdks_variables_a_decks_runs_reach_langfuse(
    receiver: OTLPReceiver, public_key: str
) -> None:
    settings = Settings(env=standard_env(receiver, public_key))
    async with Deck(workflows=[lookup], settings=settings) as deck:  # no observers= at all
        assert await deck.run("lookup", {"order_id": "A-1"}) == "found A-1"

    [request] = receiver.requests(TRACES_PATH)
    assert request.headers["authorization"].startswith("Basic ")
    [root] = [s for s in exported_spans(receiver, TRACES_PATH) if s.parent_span_id is None]
    assert root.name == "lookup"
    assert root.attributes["langfuse.environment"] == "staging"


def test_langfuse_host_is_read_when_base_url_is_not(public_key: str) -> None:
    env = {"LANGFUSE_HOST": "https://eu.cloud.langfuse.com"}
    section = with_standard_defaults(Settings(env=env).section(LangfuseSettings), env)
    assert section.base_url == "https://eu.cloud.langfuse.com"
    both = {**env, "LANGFUSE_BASE_URL": "https://us.cloud.langfuse.com"}
    section = with_standard_defaults(Settings(env=both).section(LangfuseSettings), both)
    assert section.base_url == "https://us.cloud.langfuse.com"


def test_agentdecks_own_settings_win_over_the_sdks() -> None:
    env = {
        "LANGFUSE_PUBLIC_KEY": "pk-lf-standard",
        "LANGFUSE_SAMPLE_RATE": "0.5",
        "AGENTDECK_LANGFUSE_PUBLIC_KEY": "pk-lf-ours",
    }
    settings = Settings(env=env, config={"langfuse": {"sample_rate": 0.25}})
    section = with_standard_defaults(settings.section(LangfuseSettings), env)
    assert (section.public_key, section.sample_rate) == ("pk-lf-ours", 0.25)


def test_a_bad_sdk_value_names_the_sdks_variable() -> None:
    env = {"LANGFUSE_SAMPLE_RATE": "2"}
    with pytest.raises(ConfigError) as refused:
        with_standard_defaults(Settings(env=env).section(LangfuseSettings), env)
    assert refused.value.setting == "LANGFUSE_SAMPLE_RATE"


def test_a_public_key_without_a_secret_logs_one_line_naming_both(
    caplog: pytest.LogCaptureFixture,
) -> None:
    env = {"LANGFUSE_PUBLIC_KEY": "pk-lf-lonely"}
    with caplog.at_level(logging.INFO, logger="agentdeck.langfuse"):
        assert LangfuseObserver.from_settings(Settings(env=env)) is None
    [line] = caplog.records
    assert line.levelno == logging.WARNING
    assert line.message == (
        "Langfuse observer not started: LANGFUSE_PUBLIC_KEY is set but "
        "AGENTDECK_LANGFUSE_SECRET_KEY (or LANGFUSE_SECRET_KEY) is not"
    )


def test_nothing_set_starts_nothing_and_says_nothing(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="agentdeck.langfuse"):
        assert LangfuseObserver.from_settings(Settings(env={"LANGFUSE_HOST": "x"})) is None
    assert caplog.records == []


@pytest.mark.parametrize(
    ("variable", "value"), [("LANGFUSE_TRACING_ENABLED", "false"), ("OTEL_SDK_DISABLED", "true")]
)
def test_the_standard_off_switches_keep_the_automatic_observer_off(
    variable: str, value: str, caplog: pytest.LogCaptureFixture
) -> None:
    env = {"LANGFUSE_PUBLIC_KEY": "pk-lf-x", "LANGFUSE_SECRET_KEY": "sk-lf-x", variable: value}
    with caplog.at_level(logging.INFO, logger="agentdeck.langfuse"):
        assert LangfuseObserver.from_settings(Settings(env=env)) is None
    [line] = caplog.records
    assert variable in line.message


async def test_a_named_observer_reads_the_sdks_keys_too(
    receiver: OTLPReceiver, public_key: str
) -> None:
    observer = LangfuseObserver(settings=Settings(env=standard_env(receiver, public_key)))
    await observer.start()  # no "needs both Langfuse keys"
    await observer.close()
