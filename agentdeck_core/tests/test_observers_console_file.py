"""The core's plain observers -- one readable line, or one JSON line, per event -- and the
plugin observers ``agentdeck.observers`` resolves lazily."""

from __future__ import annotations

import io
import sys
import types
from pathlib import Path

import pytest

import agentdeck.observers as observers
from agentdeck.errors import ConfigError, EventSchemaError, PluginNotInstalledError
from agentdeck.model.content import TextBlock
from agentdeck.model.events import Event
from agentdeck.model.payloads import MessageCompleted, RunStarted
from agentdeck.observers import ConsoleObserver, FileObserver
from agentdeck.observing.views import chat
from agentdeck.ports import Observer
from agentdeck.testing.trace_scenarios import (
    EPOCH,
    agent_turn_with_tool,
    workflow_with_interrupt,
)

# ----------------------------------------------------------------------------- ConsoleObserver


async def test_console_prints_one_line_per_event() -> None:
    stream = io.StringIO()
    observer = ConsoleObserver(stream=stream)
    events = agent_turn_with_tool().events
    for event in events:
        await observer.emit(event)

    lines = stream.getvalue().splitlines(keepends=True)
    assert len(lines) == len(events)
    assert all(line.endswith("\n") and line.count("\n") == 1 for line in lines)
    for line, event in zip(lines, events, strict=True):
        assert event.kind in line
        assert f"#{event.seq}" in line
        assert event.run_id[:8] in line


async def test_console_lines_show_the_gist_of_each_payload() -> None:
    stream = io.StringIO()
    observer = ConsoleObserver(stream=stream)
    for event in agent_turn_with_tool().events:
        await observer.emit(event)

    out = stream.getvalue()
    assert "09:00:00.000 run-agen #0   run.started  booking (agent) Book a table" in out
    assert 'find_slots({"restaurant": "Luigi\'s", "party": 2, "day": "tomorrow"})' in out
    assert "gpt-5-mini 412 in / 31 out" in out
    assert "[945 tokens]" in out


async def test_console_keeps_multiline_text_on_one_line_and_short() -> None:
    stream = io.StringIO()
    text = "first line\nsecond line " + "x" * 500
    await ConsoleObserver(stream=stream).emit(
        Event.record(MessageCompleted(message_id="m", text=text), seq=0, run_id="r", ts=EPOCH)
    )

    [line] = stream.getvalue().splitlines()
    assert "first line\\nsecond line" in line
    assert len(line) < 250


async def test_console_writes_to_stdout_as_it_is_when_printing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    observer = ConsoleObserver()
    await observer.emit(agent_turn_with_tool().events[0])

    assert "run.started" in capsys.readouterr().out


def test_console_takes_a_view_and_is_an_observer() -> None:
    observer = ConsoleObserver(view=chat)
    assert isinstance(observer, Observer)
    assert observer.view is chat


# ----------------------------------------------------------------------------- FileObserver


async def write(path: Path, events: list[Event]) -> None:
    observer = FileObserver(path)
    await observer.start()
    for event in events:
        await observer.emit(event)
    await observer.close()


async def test_file_holds_exactly_one_json_line_per_event(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    events = agent_turn_with_tool().events

    await write(path, events)

    assert path.read_text(encoding="utf-8").splitlines() == [e.to_json() for e in events]


async def test_file_reads_back_into_equal_events(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    events = workflow_with_interrupt().events

    await write(path, events)

    assert list(FileObserver.read(path)) == events


async def test_file_appends_across_decks(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    first, second = agent_turn_with_tool().events, workflow_with_interrupt().events

    await write(path, first)
    await write(path, second)

    assert list(FileObserver.read(path)) == first + second


async def test_file_keeps_unicode_and_newlines_inside_one_line(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    started = Event.record(
        RunStarted(name="n", invocable_kind="agent", input=[TextBlock(text="¡hola!\nzweite")]),
        seq=0,
        run_id="r",
        ts=EPOCH,
    )

    await write(path, [started])

    assert len(path.read_text(encoding="utf-8").splitlines()) == 1
    assert list(FileObserver.read(path)) == [started]


async def test_file_in_a_missing_directory_refuses_the_open(tmp_path: Path) -> None:
    observer = FileObserver(tmp_path / "nowhere" / "events.jsonl")
    with pytest.raises(ConfigError) as refused:
        await observer.start()
    assert refused.value.setting == "path"
    assert "nowhere" in str(refused.value)


async def test_file_refuses_an_event_before_start(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="before start"):
        await FileObserver(tmp_path / "e.jsonl").emit(agent_turn_with_tool().events[0])


async def test_file_close_is_idempotent(tmp_path: Path) -> None:
    observer = FileObserver(tmp_path / "e.jsonl")
    await observer.start()
    await observer.close()
    await observer.close()


def test_reading_a_malformed_line_names_its_number(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    good = agent_turn_with_tool().events[0].to_json()
    path.write_text(f'{good}\n{{"kind": "run.started"}}\n', encoding="utf-8")

    with pytest.raises(EventSchemaError, match="line 2"):
        list(FileObserver.read(path))


def test_reading_skips_a_last_line_cut_short_by_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    events = agent_turn_with_tool().events[:2]
    cut = events[1].to_json()[:40]
    path.write_text(f"{events[0].to_json()}\n{cut}", encoding="utf-8")

    assert list(FileObserver.read(path)) == events[:1]


# ----------------------------------------------------------------------------- plugin observers


def test_a_plugin_observer_that_is_not_installed_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "agentdeck_otel", None)  # as if not installed

    with pytest.raises(PluginNotInstalledError) as missing:
        _ = observers.OTelObserver
    assert isinstance(missing.value, ImportError)
    assert isinstance(missing.value, ConfigError)
    assert missing.value.distribution == "agentdeck-otel"
    assert "pip install agentdeck-otel" in str(missing.value)


def test_the_optional_dependency_idiom_works(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "agentdeck_langfuse", None)

    try:
        from agentdeck.observers import LangfuseObserver  # noqa: F401
    except ImportError as missing:
        assert "agentdeck-langfuse" in str(missing)
    else:  # pragma: no cover - the point of the test
        pytest.fail("a missing plugin must raise ImportError")


def test_a_plugin_observer_resolves_from_the_installed_package(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plugin = types.ModuleType("agentdeck_langfuse")

    class StandIn(Observer):
        async def emit(self, event: Event) -> None: ...

    plugin.LangfuseObserver = StandIn  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "agentdeck_langfuse", plugin)

    assert observers.LangfuseObserver is StandIn
    with pytest.warns(DeprecationWarning, match="4.x name of LangfuseObserver"):
        assert observers.Langfuse is StandIn


def test_other_names_are_plain_attribute_errors() -> None:
    with pytest.raises(AttributeError):
        _ = observers.NoSuchObserver  # type: ignore[attr-defined]
    assert not hasattr(observers, "NoSuchObserver")
