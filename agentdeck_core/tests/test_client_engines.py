"""A deck that only admits runs for workers loads each engine's client face, not its SDK.

On an execution that queues (here a small in-test one, as agentdeck-temporal registers its
own), a deck that does not work itself records runs for workers in other processes. The
engines here live in real modules written to a temporary directory, so "the engine's module
was never imported" is read from ``sys.modules``, not assumed.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import count
from pathlib import Path
from typing import Any, ClassVar

import pytest

import agentdeck
from agentdeck import Deck
from agentdeck.errors import ConfigError
from agentdeck.memory import plugin as memory_plugin
from agentdeck.model.content import DataBlock
from agentdeck.model.payloads import RunStarted
from agentdeck.native import plugin as native_plugin
from agentdeck.plugins.hookspecs import RegisterEngine, RegisterScheme
from agentdeck.plugins.host import PluginHost
from agentdeck.ports import Admission, ClientEngine, EngineRef, Execution, RecordedRuns
from agentdeck.settings import Settings
from agentdeck.sqlite import plugin as sqlite_plugin
from agentdeck.vocabulary import RunStatus

FULL_ENGINE = """
from typing import ClassVar
from agentdeck.ports import Engine, EngineCapabilities, ForkPlan, Invocable

class ShoutEngine(Engine):
    name: ClassVar[str] = "shout"
    capabilities: ClassVar[EngineCapabilities] = EngineCapabilities(forks=True)

    def accepts(self, definition):
        return type(definition).__name__ == "Shout"

    def compile(self, definition):
        return Invocable(
            name=definition.name, kind="workflow", engine=self.name, definition=definition,
            compiled="compiled by the full engine", code_digest="digest-of-" + definition.name,
        )

    async def plan_fork(self, invocable, history, *, at):
        return ForkPlan(at=at, seed=[])

    async def play(self, invocation):
        return
        yield
"""

CLIENT_FACE = """
from typing import ClassVar
from agentdeck.model.content import DataBlock
from agentdeck.ports import ClientEngine, EngineCapabilities, Invocable

class ShoutClient(ClientEngine):
    name: ClassVar[str] = "shout"
    capabilities: ClassVar[EngineCapabilities] = EngineCapabilities(forks=True)

    def accepts(self, definition):
        return type(definition).__name__ == "Shout"

    def compile(self, definition):
        return Invocable(
            name=definition.name, kind="workflow", engine=self.name, definition=definition,
            code_digest="digest-of-" + definition.name,
        )

    def prepare_input(self, invocable, value):
        return [DataBlock(data={"checked by": "the client face", "value": value})]

class NotAFace:
    name = "shout"
"""

_MODULES = count()


@dataclass(frozen=True)
class Shout:
    """A workflow kind of the ``shout`` engine, as a plugin defines its own."""

    name: str
    description: str = ""
    __agentdeck_workflow__: ClassVar[bool] = True


class QueueingExecution(Execution):
    """Queues admitted runs; ``work`` records what the deck's runtime plays with."""

    queues: ClassVar[bool] = True

    def __init__(self, url: str) -> None:
        self.url = url
        self.admitted: list[str] = []
        self.worked_with: dict[str, Any] = {}

    async def admit(self, admission: Admission) -> None:
        self.admitted.append(admission.run_id)

    async def work(self, runs: RecordedRuns, *, concurrency: int) -> None:
        self.worked_with = dict(runs.invocables)  # type: ignore[attr-defined]


class Plugin:
    """Registers the queueing execution and the ``shout`` engine as ``reference``."""

    def __init__(self, reference: EngineRef) -> None:
        self.reference = reference
        self.executions: list[QueueingExecution] = []

    @agentdeck.hookimpl
    def agentdeck_register_executions(self, register: RegisterScheme[Execution]) -> None:
        register("queue", self._execution, description="a queue")

    @agentdeck.hookimpl
    def agentdeck_register_engines(self, register: RegisterEngine) -> None:
        register(self.reference, description="shouts")

    def _execution(self, request: Any) -> QueueingExecution:
        execution = QueueingExecution(request.url)
        self.executions.append(execution)
        return execution


@pytest.fixture
def modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, str]]:
    """Fresh, not yet imported names of the full engine's module and its client face's."""
    suffix = next(_MODULES)
    full, client = f"shout_engine_{suffix}", f"shout_client_{suffix}"
    (tmp_path / f"{full}.py").write_text(textwrap.dedent(FULL_ENGINE), encoding="utf-8")
    (tmp_path / f"{client}.py").write_text(textwrap.dedent(CLIENT_FACE), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield full, client
    sys.modules.pop(full, None)
    sys.modules.pop(client, None)


HELLO = Shout("hello")


def a_client_deck(tmp_path: Path, plugin: Plugin, *, queue: bool = True) -> Deck:
    host = PluginHost.from_plugins(
        ("memory", memory_plugin), ("native", native_plugin), ("sqlite", sqlite_plugin),
        ("shout", plugin),
    )  # fmt: skip
    env = {"AGENTDECK_STATE": f"sqlite:///{tmp_path / 'state.db'}"}
    if queue:
        env["AGENTDECK_EXECUTION"] = "queue://workers"
    return Deck(workflows=[HELLO], settings=Settings(env=env), plugins=host)


def reference(modules: tuple[str, str], client: str | None = "ShoutClient") -> EngineRef:
    full, face = modules
    return EngineRef(
        f"{full}:ShoutEngine", name="shout", client=None if client is None else f"{face}:{client}"
    )


def shout_face(deck: Deck) -> ClientEngine:
    [face] = [engine for engine in deck.plugins.client_engines() if engine.name == "shout"]
    assert isinstance(face, ClientEngine)
    return face


async def test_a_client_deck_admits_runs_without_importing_the_engine(
    tmp_path: Path, modules: tuple[str, str]
) -> None:
    plugin = Plugin(reference(modules))
    async with a_client_deck(tmp_path, plugin) as deck:
        run = await deck.runs.start(HELLO.name, "hi")
        [invocable] = deck.invocables.values()
        assert invocable.compiled is None
        assert invocable.code_digest == "digest-of-hello"  # what the full engine records
        status = await run.status()
        [first] = await deck.service.runtime.store.read(run.id, limit=1)

    assert modules[0] not in sys.modules  # the full engine never loaded
    assert plugin.executions[-1].admitted == [run.id]
    assert status is RunStatus.QUEUED
    started = first.payload
    assert isinstance(started, RunStarted)
    assert started.code_digest == "digest-of-hello"
    [block] = started.input
    assert isinstance(block, DataBlock)
    assert block.data == {"checked by": "the client face", "value": "hi"}


async def test_a_deck_that_works_plays_on_the_full_engines(
    tmp_path: Path, modules: tuple[str, str]
) -> None:
    plugin = Plugin(reference(modules))
    deck = a_client_deck(tmp_path, plugin)
    await deck.work(concurrency=1)

    [played] = plugin.executions[-1].worked_with.values()
    assert played.compiled == "compiled by the full engine"
    assert modules[0] in sys.modules


async def test_a_client_deck_that_starts_working_swaps_in_the_full_engines(
    tmp_path: Path, modules: tuple[str, str]
) -> None:
    plugin = Plugin(reference(modules))
    async with a_client_deck(tmp_path, plugin) as deck:
        assert deck.invocables[HELLO.name].compiled is None
        await deck.work(concurrency=1)
        played = plugin.executions[-1].worked_with[HELLO.name]
        assert played.compiled == "compiled by the full engine"
        assert deck.invocables[HELLO.name] is played  # the runtime's tables, swapped in place
        assert deck.is_open  # the deck opened by the caller stays open


async def test_a_fork_from_a_client_deck_is_planned_on_the_full_engine(
    tmp_path: Path, modules: tuple[str, str]
) -> None:
    plugin = Plugin(reference(modules))
    async with a_client_deck(tmp_path, plugin) as deck:
        face = shout_face(deck)
        assert modules[0] not in sys.modules
        invocable = face.compile(HELLO)
        plan = await face.plan_fork(invocable, [], at=3)

    assert plan.at == 3
    assert modules[0] in sys.modules


def test_a_client_face_refuses_to_play(modules: tuple[str, str], tmp_path: Path) -> None:
    face = shout_face(a_client_deck(tmp_path, Plugin(reference(modules))))
    with pytest.raises(ConfigError, match="plays none itself"):
        face.play(None)  # type: ignore[arg-type]


def test_an_engine_without_a_client_face_is_loaded_whole_on_a_client(
    tmp_path: Path, modules: tuple[str, str]
) -> None:
    deck = a_client_deck(tmp_path, Plugin(reference(modules, client=None)))
    deck.build()
    assert deck.invocables[HELLO.name].compiled == "compiled by the full engine"


def test_a_deck_that_plays_in_process_never_loads_a_client_face(
    tmp_path: Path, modules: tuple[str, str]
) -> None:
    deck = a_client_deck(tmp_path, Plugin(reference(modules)), queue=False)
    deck.build()
    assert deck.invocables[HELLO.name].compiled == "compiled by the full engine"
    assert modules[1] not in sys.modules


def test_a_client_path_that_is_no_client_face_is_blamed_on_its_plugin(
    tmp_path: Path, modules: tuple[str, str]
) -> None:
    deck = a_client_deck(tmp_path, Plugin(reference(modules, client="NotAFace")))
    with pytest.raises(ConfigError) as refused:
        deck.build()
    message = str(refused.value)
    assert "registered engine 'shout' with the client" in message
    assert "not a ClientEngine subclass" in message


def test_a_client_path_must_be_an_import_path() -> None:
    with pytest.raises(ConfigError, match=r"EngineRef client 'nowhere' is not an import path"):
        EngineRef("pkg.mod:Engine", name="x", client="nowhere")


def test_build_in_full_compiles_on_the_full_engines_even_on_a_client_deck(
    tmp_path: Path, modules: tuple[str, str]
) -> None:
    fresh = a_client_deck(tmp_path, Plugin(reference(modules))).build(full=True)
    assert fresh.invocables[HELLO.name].compiled == "compiled by the full engine"

    built = a_client_deck(tmp_path, Plugin(reference(modules))).build()
    assert built.invocables[HELLO.name].compiled is None
    built.build(full=True)  # a client deck built already is compiled again, in full
    assert built.invocables[HELLO.name].compiled == "compiled by the full engine"


async def test_build_in_full_is_refused_on_an_open_client_deck(
    tmp_path: Path, modules: tuple[str, str]
) -> None:
    async with a_client_deck(tmp_path, Plugin(reference(modules))) as deck:
        with pytest.raises(ConfigError, match=r"build\(full=True\) on an open deck"):
            deck.build(full=True)
        assert deck.invocables[HELLO.name].compiled is None  # nothing changed
