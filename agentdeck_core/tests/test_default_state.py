"""Where a deck's state lives when nothing is configured, and when that file is made.

Every deck here is built with no state setting: a project's state is ``state.db`` of its own
directory, a deck built in code keeps it in ``.agentdeck/state.db`` of the working directory
(this test's own, see ``isolated_state``); ``build()`` makes neither, opening the deck does.
"""

from __future__ import annotations

from pathlib import Path

from agentdeck import Deck, RunStatus, WorkflowCtx, workflow
from agentdeck.ports import RunQuery
from agentdeck.settings import Settings
from agentdeck.sqlite.store import SqliteEventStore

WORKFLOW = """
from agentdeck import WorkflowCtx, workflow


@workflow
async def greet(name: str, ctx: WorkflowCtx) -> str:
    return f"hello {name}"
"""


@workflow
async def ask(ctx: WorkflowCtx) -> str:
    return str(await ctx.ask("go on?"))


def _project(root: Path) -> Path:
    bundle = root / ".agentdeck" / "workflows" / "greet"
    bundle.mkdir(parents=True)
    (bundle / "workflow.py").write_text(WORKFLOW, encoding="utf-8")
    return root / ".agentdeck"


async def test_a_project_keeps_its_state_in_its_own_directory_made_when_it_opens(
    isolated_state: Path, tmp_path: Path
) -> None:
    project = _project(tmp_path / "shop")
    deck = Deck.from_project(project, settings=Settings.load(env={}), observers=())

    deck.build()
    assert not (project / "state.db").exists()  # build() reads local files only

    async with deck:
        assert await deck.run("greet", {"name": "ada"}) == "hello ada"
    assert (project / "state.db").is_file()
    assert not (isolated_state / ".agentdeck").exists()  # not the working directory's
    store = SqliteEventStore(f"sqlite:///{project / 'state.db'}")
    await store.open()
    try:
        [record] = (await store.list_runs(RunQuery())).runs
    finally:
        await store.close()
    assert record.name == "greet" and record.status is RunStatus.COMPLETED


def test_the_state_file_and_its_wal_and_shm_are_not_declarations(tmp_path: Path) -> None:
    project = _project(tmp_path / "shop")
    for name in ("state.db", "state.db-wal", "state.db-shm", "state-checkpoints.db"):
        (project / name).write_bytes(b"not python")

    deck = Deck.from_project(project, settings=Settings.load(env={})).build()

    assert list(deck.workflows) == ["greet"]


async def test_a_deck_built_in_code_keeps_its_state_in_the_working_directory(
    isolated_state: Path,
) -> None:
    deck = Deck(workflows=[ask], observers=())
    deck.build()
    assert not (isolated_state / ".agentdeck").exists()

    async with deck:
        run = await deck.runs.start("ask")
        async for _ in run.events(follow=True):
            pass  # until it parks
    async with Deck(workflows=[ask], observers=()) as restarted:
        [waiting] = await restarted.runs.list(status=RunStatus.WAITING_ANSWER)
        assert waiting.id == run.id
        await waiting.answer("yes")
        assert await waiting == "yes"
    assert (isolated_state / ".agentdeck" / "state.db").is_file()
