"""LangfuseObserver's lifecycle: configured by AGENTDECK_LANGFUSE_*, refused at open without
keys, contacting nothing until it has something to send, and reachable where the docs say."""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest

from agentdeck.errors import ConfigError
from agentdeck.plugins.host import PluginHost, PluginWarning
from agentdeck.settings import Settings
from agentdeck.testing.otlp import OTLPReceiver
from agentdeck.testing.trace_scenarios import failed_run
from agentdeck_langfuse import LangfuseObserver


async def test_with_no_keys_it_is_refused_at_open_naming_the_variables() -> None:
    observer = LangfuseObserver(settings=Settings(env={}))  # constructing it is fine

    with pytest.raises(ConfigError) as refused:
        await observer.start()
    assert refused.value.setting == "AGENTDECK_LANGFUSE_PUBLIC_KEY"
    assert "AGENTDECK_LANGFUSE_SECRET_KEY" in str(refused.value)


async def test_with_one_key_missing_it_names_that_one(langfuse_env: dict[str, str]) -> None:
    env = {k: v for k, v in langfuse_env.items() if k != "AGENTDECK_LANGFUSE_SECRET_KEY"}
    with pytest.raises(ConfigError) as refused:
        await LangfuseObserver(settings=Settings(env=env)).start()
    assert refused.value.setting == "AGENTDECK_LANGFUSE_SECRET_KEY"


async def test_starting_contacts_nothing(receiver: OTLPReceiver, settings: Settings) -> None:
    observer = LangfuseObserver(settings=settings)
    await observer.start()
    assert receiver.requests() == []
    await observer.close()
    assert receiver.requests() == []  # nothing to send, nothing sent


def test_the_deck_starts_one_by_itself_only_when_both_keys_are_set(
    langfuse_env: dict[str, str],
) -> None:
    assert LangfuseObserver.from_settings(Settings(env={})) is None
    only_public = {"AGENTDECK_LANGFUSE_PUBLIC_KEY": langfuse_env["AGENTDECK_LANGFUSE_PUBLIC_KEY"]}
    assert LangfuseObserver.from_settings(Settings(env=only_public)) is None
    assert isinstance(LangfuseObserver.from_settings(Settings(env=langfuse_env)), LangfuseObserver)


async def test_the_decks_settings_are_used_unless_some_were_given(
    receiver: OTLPReceiver, settings: Settings
) -> None:
    observer = LangfuseObserver()
    observer.use_settings(settings)
    await observer.start()
    for event in failed_run().events:
        await observer.emit(event)
    await observer.close()
    assert receiver.requests(), "the deck's settings pointed it at the receiver"

    explicit = LangfuseObserver(settings=Settings(env={}))
    explicit.use_settings(settings)
    with pytest.raises(ConfigError):
        await explicit.start()  # its own (keyless) settings won


async def test_a_deck_reopened_in_the_same_process_keeps_exporting(
    receiver: OTLPReceiver, settings: Settings
) -> None:
    # The Langfuse SDK keeps one client per public key per process; a second observer with the
    # same key must not end up exporting into a closed pipeline.
    for _ in range(2):
        observer = LangfuseObserver(settings=settings)
        await observer.start()
        for event in failed_run().events:
            await observer.emit(event)
        await observer.close()

    assert len(receiver.requests()) == 2


async def test_the_same_key_cannot_export_to_two_servers_in_one_process(
    settings: Settings, langfuse_env: dict[str, str]
) -> None:
    first = LangfuseObserver(settings=settings)
    await first.start()
    elsewhere = Settings(env={**langfuse_env, "AGENTDECK_LANGFUSE_BASE_URL": "http://127.0.0.1:9"})
    with pytest.raises(ConfigError) as refused:
        await LangfuseObserver(settings=elsewhere).start()
    assert refused.value.setting == "AGENTDECK_LANGFUSE_BASE_URL"
    await first.close()


async def test_an_event_before_start_is_refused_clearly() -> None:
    with pytest.raises(ConfigError, match="before start"):
        await LangfuseObserver().emit(failed_run().events[0])


def test_sdk_spans_takes_a_boolean() -> None:
    with pytest.raises(ConfigError) as refused:
        LangfuseObserver(sdk_spans="yes")  # type: ignore[arg-type]
    assert refused.value.setting == "sdk_spans"


def test_it_is_registered_as_the_langfuse_observer() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginWarning)
        host = PluginHost.discover(env={})
    [info] = [p for p in host.plugins() if p.name == "langfuse"]
    assert info.provides["observers"] == ["langfuse"]
    assert isinstance(host.observer("langfuse"), LangfuseObserver)


def test_agentdeck_observers_resolves_it_and_its_4x_name() -> None:
    from agentdeck import observers

    assert observers.LangfuseObserver is LangfuseObserver
    with pytest.warns(DeprecationWarning, match="LangfuseObserver"):
        assert observers.Langfuse is LangfuseObserver


def test_loading_the_plugin_and_constructing_the_observer_import_no_sdk() -> None:
    # A deck with Langfuse configured must still build in CI with nothing installed or
    # reachable beyond this package: the SDK is imported when the observer starts.
    code = (
        "import sys, agentdeck_langfuse.plugin\n"
        "from agentdeck_langfuse import LangfuseObserver\n"
        "LangfuseObserver(sdk_spans=True)\n"
        "loaded = [m for m in sys.modules if m.split('.')[0] in "
        "('langfuse', 'opentelemetry', 'openinference', 'agents')]\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
