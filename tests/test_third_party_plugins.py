"""Third-party plugins, through real installed entry points.

The nox ``e2e`` session installs two fixture distributions from ``tests/fixture_plugins/``:
``adk-thirdparty-fixture`` (entry point ``thirdparty``: an event store for ``thirdparty://``, a
settings section, and an engine registered by reference) and ``adk-broken-fixture`` (entry
point ``broken``, whose module raises at import). Nothing here registers a plugin by hand: the
host finds both by scanning installed distributions, as it would for any package a user
installs.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import warnings

import pytest

if importlib.util.find_spec("adk_thirdparty") is None:
    # In CI the e2e session installs the fixtures; their absence there is a broken setup.
    if os.environ.get("CI") == "true":
        raise RuntimeError("tests/fixture_plugins/* are not installed in the e2e environment")
    pytest.skip(
        "install tests/fixture_plugins/* (the nox e2e session does)", allow_module_level=True
    )

from adk_thirdparty import ThirdPartyEventStore, ThirdPartySettings

from agentdeck import Deck, TextBlock
from agentdeck.cli import main
from agentdeck.errors import ConfigError
from agentdeck.model.payloads import Report, RunStarted
from agentdeck.plugins.host import DENY_ENV, PluginHost, PluginWarning
from agentdeck.ports import BackendRequest, NewRun
from agentdeck.settings import Settings


@pytest.fixture
def host() -> PluginHost:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginWarning)  # the broken fixture; tested below
        return PluginHost.discover(env={})


def test_the_third_party_plugin_is_discovered_and_attributed_to_its_distribution(
    host: PluginHost,
) -> None:
    plugins = {info.name: info for info in host.plugins()}

    thirdparty = plugins["thirdparty"]
    assert thirdparty.distribution == "adk-thirdparty-fixture"
    assert thirdparty.version == "0.1.0"
    assert thirdparty.module == "adk_thirdparty.plugin"
    assert thirdparty.provides == {
        "event_stores": ["thirdparty"],
        "engines": ["thirdparty-echo"],
        "settings": ["thirdparty"],
    }
    [registration] = [r for r in host.registrations("event_stores") if r.name == "thirdparty"]
    assert registration.distribution == "adk-thirdparty-fixture"


async def test_settings_naming_the_third_party_scheme_get_its_store(host: PluginHost) -> None:
    settings = Settings(env={"AGENTDECK_EVENTS": "thirdparty://e2e"})

    store = host.event_store(BackendRequest(settings.events_url, settings=settings))

    assert isinstance(store, ThirdPartyEventStore)
    assert store.url == "thirdparty://e2e"
    await store.open()
    try:
        outcome = await store.open_run(
            NewRun(run_id="run-1", started=RunStarted(name="demo", invocable_kind="workflow"))
        )
        assert outcome.opened
        [appended] = await store.append("run-1", [Report(message="written through the plugin")])
        assert appended.seq == 1
        events = await store.read("run-1")
        assert [event.seq for event in events] == [0, 1]
        assert events[1].payload == Report(message="written through the plugin")
    finally:
        await store.close()


def test_the_state_root_selects_the_third_party_store_and_names_itself_when_lacking(
    host: PluginHost,
) -> None:
    settings = Settings(env={"AGENTDECK_STATE": "thirdparty://all"})

    store = host.event_store(BackendRequest(settings.events_url, settings=settings))
    assert isinstance(store, ThirdPartyEventStore)

    # The fixture offers no control backend: the error names the variable the URL came from and
    # the schemes that are on offer.
    with pytest.raises(ConfigError, match="AGENTDECK_STATE='thirdparty://all'") as caught:
        host.control_port(BackendRequest(settings.control_url, settings=settings))
    assert caught.value.setting == "AGENTDECK_STATE"
    assert caught.value.accepted is not None and "memory" in caught.value.accepted


async def test_a_deck_runs_a_definition_on_the_third_party_engine(host: PluginHost) -> None:
    from adk_thirdparty.engine import Echo

    settings = Settings(env={"AGENTDECK_STATE": "memory://thirdparty-engine"})
    async with Deck(workflows=[Echo("echo")], plugins=host, settings=settings) as deck:
        assert await deck.run("echo", "hello") == [TextBlock(text="hello")]


_LOAD_THEN_BUILD = """
import json, sys, warnings
from agentdeck.plugins.host import PluginHost
warnings.simplefilter("ignore")
host = PluginHost.discover({})
at_load = "adk_thirdparty.engine" in sys.modules
host.engine("thirdparty-echo")
print(json.dumps([at_load, "adk_thirdparty.engine" in sys.modules]))
"""


def test_the_third_party_engine_module_is_imported_only_when_a_deck_needs_it() -> None:
    # A fresh interpreter: this process may have imported the engine module already.
    done = subprocess.run(
        [sys.executable, "-c", _LOAD_THEN_BUILD], capture_output=True, text=True, check=True
    )

    assert json.loads(done.stdout) == [False, True]


def test_the_plugins_settings_section_reads_the_decks_environment(host: PluginHost) -> None:
    settings = Settings(env={"ADK_THIRDPARTY_LABEL": "from-env"}, sections=host.settings_sections())

    assert ThirdPartySettings in settings.sections()
    assert settings.section(ThirdPartySettings).label == "from-env"


def test_the_broken_plugin_is_named_in_a_warning_and_the_others_still_load() -> None:
    with pytest.warns(
        PluginWarning, match=r"'broken' \(distribution adk-broken-fixture 0\.1\.0\).*RuntimeError"
    ):
        host = PluginHost.discover(env={})

    [broken] = [b for b in host.broken() if b.name == "broken"]
    assert broken.distribution == "adk-broken-fixture"
    assert "adk-broken-fixture fails at import on purpose" in broken.reason
    loaded = {info.name for info in host.plugins()}
    assert {"memory", "thirdparty"} <= loaded
    assert "broken" not in loaded


def test_the_denylist_keeps_the_third_party_plugin_out() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginWarning)
        host = PluginHost.discover(env={DENY_ENV: "thirdparty,broken"})

    assert "thirdparty" not in {info.name for info in host.plugins()}
    assert host.broken() == []
    with pytest.raises(ConfigError, match=r"not loaded because of .*thirdparty"):
        host.event_store(BackendRequest("thirdparty://x"))


def test_agentdeck_plugins_lists_both_fixtures(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AGENTDECK_PLUGINS", raising=False)
    monkeypatch.delenv(DENY_ENV, raising=False)

    assert main(["plugins", "--json"]) == 0

    listing = json.loads(capsys.readouterr().out)
    [thirdparty] = [p for p in listing["plugins"] if p["name"] == "thirdparty"]
    assert thirdparty["distribution"] == "adk-thirdparty-fixture"
    assert [b["name"] for b in listing["broken"] if b["distribution"] == "adk-broken-fixture"] == [
        "broken"
    ]
