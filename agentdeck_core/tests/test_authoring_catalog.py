"""The catalog under both front doors: explicit composition and project discovery."""

import json
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentdeck.authoring.agents import Agent
from agentdeck.authoring.catalog import Catalog, CatalogSources, discover_project
from agentdeck.authoring.context import ToolCtx, WorkflowCtx
from agentdeck.authoring.context_check import Requirement
from agentdeck.authoring.skills import Skills
from agentdeck.authoring.workflows import workflow
from agentdeck.errors import ConfigError, ContextTypeError, NotFoundError


class Calendar:
    pass


class Warehouse:
    pass


def write(root: Path, relative: str, text: str) -> Path:
    file = root / relative
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(textwrap.dedent(text), encoding="utf-8")
    return file


@pytest.fixture
def loaded() -> Iterator[list[CatalogSources]]:
    """Discovered projects, unloaded afterwards so no test leaves modules behind."""
    sources: list[CatalogSources] = []
    yield sources
    for source in sources:
        source.unload()


def discover(loaded: list[CatalogSources], path: Path) -> CatalogSources:
    sources = discover_project(path)
    loaded.append(sources)
    return sources


def bot_project(root: Path, greeting: str) -> Path:
    """A project whose bundle imports a sibling module that holds what differs."""
    write(root, ".agentdeck/agents/bot/prompts.py", f"GREETING = {greeting!r}\n")
    write(
        root,
        ".agentdeck/agents/bot/agent.py",
        """
        from agentdeck.authoring.agents import Agent

        from .prompts import GREETING

        bot = Agent(name="Bot", instructions=GREETING)
        """,
    )
    return root / ".agentdeck"


# --------------------------------------------------------------------------- discovery


def test_two_projects_with_the_same_bundle_names_stay_separate(
    tmp_path: Path, loaded: list[CatalogSources]
) -> None:
    alpha = discover(loaded, bot_project(tmp_path / "alpha", "I am alpha"))
    beta = discover(loaded, bot_project(tmp_path / "beta", "I am beta"))

    assert [a.instructions for a in alpha.agents] == ["I am alpha"]
    assert [a.instructions for a in beta.agents] == ["I am beta"]
    assert alpha.module_namespace != beta.module_namespace
    assert sys.modules[f"{alpha.module_namespace}.agents.bot.prompts"].GREETING == "I am alpha"
    assert sys.modules[f"{beta.module_namespace}.agents.bot.prompts"].GREETING == "I am beta"


def test_the_same_project_discovered_twice_is_two_independent_loads(
    tmp_path: Path, loaded: list[CatalogSources]
) -> None:
    project = bot_project(tmp_path, "hello")

    first = discover(loaded, project)
    second = discover(loaded, project)

    assert first.agents[0] is not second.agents[0]
    assert first.module_namespace != second.module_namespace


def test_unloading_forgets_the_project_modules(tmp_path: Path) -> None:
    sources = discover_project(bot_project(tmp_path, "hello"))

    sources.unload()

    namespace = sources.module_namespace
    assert not [n for n in sys.modules if n == namespace or n.startswith(f"{namespace}.")]
    assert sources.agents[0].instructions == "hello"  # built objects keep working


def test_discovery_collects_workflows_skills_and_mcp(
    tmp_path: Path, loaded: list[CatalogSources]
) -> None:
    write(
        tmp_path,
        ".agentdeck/workflows/refund/workflow.py",
        """
        from agentdeck.authoring.workflows import workflow

        @workflow(name="RefundApproval")
        async def refund(order_id: str) -> str:
            return order_id

        class GraphWorkflow:
            __agentdeck_workflow__ = "graph"
            name = "Graph"

        graph = GraphWorkflow()
        _private = GraphWorkflow()
        """,
    )
    write(tmp_path, ".agentdeck/skills/pdf/SKILL.md", "---\ndescription: PDFs.\n---\nBody\n")
    write(tmp_path, ".mcp.json", json.dumps({"mcpServers": {"files": {"command": "ls"}}}))

    sources = discover(loaded, tmp_path / ".agentdeck")

    assert [getattr(w, "name", None) for w in sources.workflows] == ["RefundApproval", "Graph"]
    assert list(sources.skills) == ["pdf"]
    assert list(sources.mcp) == ["files"]


def test_a_bundle_that_fails_to_import_names_its_file(
    tmp_path: Path, loaded: list[CatalogSources]
) -> None:
    write(tmp_path, ".agentdeck/agents/broken/agent.py", "raise RuntimeError('boom')\n")

    with pytest.raises(ConfigError, match=r"broken.agent\.py failed to import: RuntimeError: boom"):
        discover(loaded, tmp_path / ".agentdeck")

    assert not [n for n in sys.modules if n.startswith("agentdeck_project_") and "broken" in n]


def test_a_bundle_defining_nothing_is_refused(tmp_path: Path, loaded: list[CatalogSources]) -> None:
    write(tmp_path, ".agentdeck/agents/empty/agent.py", "NOTHING = 1\n")

    with pytest.raises(ConfigError, match="defines no Agent or workflow"):
        discover(loaded, tmp_path / ".agentdeck")


def test_a_missing_project_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        discover_project(tmp_path / ".agentdeck")


def test_a_bundle_may_reach_a_sibling_directory(
    tmp_path: Path, loaded: list[CatalogSources]
) -> None:
    write(tmp_path, ".agentdeck/agents/common/texts.py", "SHARED = 'shared text'\n")
    write(
        tmp_path,
        ".agentdeck/agents/bot/agent.py",
        """
        from agentdeck.authoring.agents import Agent
        from ..common.texts import SHARED

        bot = Agent(name="Bot", instructions=SHARED)
        """,
    )

    sources = discover(loaded, tmp_path / ".agentdeck")

    assert [a.instructions for a in sources.agents] == ["shared text"]


# --------------------------------------------------------------------------- validation


def test_an_agent_and_a_workflow_sharing_a_name_are_refused_naming_both() -> None:
    @workflow(name="Refund")
    async def refund(order_id: str) -> None: ...

    catalog = Catalog(agents=[Agent(name="Refund")], workflows=[refund])

    with pytest.raises(ConfigError, match=r"agent 'Refund'.*workflow 'Refund'"):
        catalog.validate()


def test_a_name_clash_in_a_project_names_both_files(
    tmp_path: Path, loaded: list[CatalogSources]
) -> None:
    write(
        tmp_path,
        ".agentdeck/agents/refund/agent.py",
        "from agentdeck.authoring.agents import Agent\nrefund = Agent(name='Refund')\n",
    )
    write(
        tmp_path,
        ".agentdeck/workflows/refund/workflow.py",
        """
        from agentdeck.authoring.workflows import workflow

        @workflow(name="Refund")
        async def refund(order_id: str) -> None: ...
        """,
    )
    catalog = Catalog.from_sources(discover(loaded, tmp_path / ".agentdeck"))

    with pytest.raises(ConfigError) as refused:
        catalog.validate()

    assert "agents/refund/agent.py" in str(refused.value)
    assert "workflows/refund/workflow.py" in str(refused.value)


def test_two_agents_of_one_name_are_refused() -> None:
    catalog = Catalog(agents=[Agent(name="Bot"), Agent(name="Bot")])

    with pytest.raises(ConfigError, match="two agents are named 'Bot'"):
        catalog.validate()


def test_an_unknown_skill_reference_lists_the_skills_there_are(tmp_path: Path) -> None:
    write(tmp_path, "skills/pdf/SKILL.md", "---\ndescription: PDFs.\n---\n")
    catalog = Catalog(
        agents=[Agent(name="Bot", skills=["spreadsheets"])], skills=tmp_path / "skills"
    )

    with pytest.raises(ConfigError, match=r"skill 'spreadsheets'.*it has: pdf") as refused:
        catalog.validate()

    assert refused.value.accepted == ("pdf",)


def test_an_unknown_mcp_server_reference_is_refused() -> None:
    catalog = Catalog(agents=[Agent(name="Bot", mcp_servers=["files"])])

    with pytest.raises(ConfigError, match="MCP server 'files'"):
        catalog.validate()


def test_handoffs_and_subagents_must_name_what_exists() -> None:
    @workflow(name="Lookup")
    async def lookup(query: str) -> None: ...

    helper = Agent(name="Helper")
    fine = Agent(name="Lead", handoffs=["Helper"], subagents=["Helper", "Lookup"])
    Catalog(agents=[fine, helper], workflows=[lookup]).validate()

    with pytest.raises(ConfigError, match="agent 'Ghost'"):
        Catalog(agents=[Agent(name="Lead", handoffs=["Ghost"]), helper]).validate()
    with pytest.raises(ConfigError, match="is a workflow"):
        Catalog(agents=[Agent(name="Lead", handoffs=["Lookup"])], workflows=[lookup]).validate()
    with pytest.raises(ConfigError, match="agent or workflow 'Ghost'"):
        Catalog(agents=[Agent(name="Lead", subagents=["Ghost"])]).validate()


def test_an_agent_with_skills_none_reads_every_skill_and_validates() -> None:
    Catalog(agents=[Agent(name="Bot")], skills=Skills()).validate()


def test_entries_of_the_wrong_kind_are_refused_where_they_enter() -> None:
    @workflow
    async def body() -> None: ...

    with pytest.raises(ConfigError, match="workflows="):
        Catalog(agents=[body])  # type: ignore[list-item]
    with pytest.raises(ConfigError, match="agents="):
        Catalog(workflows=[Agent(name="Bot")])
    with pytest.raises(ConfigError, match="takes a list"):
        Catalog(agents=Agent(name="Bot"))  # type: ignore[arg-type]


def test_resolve_finds_agents_and_workflows_and_lists_names_when_missing() -> None:
    @workflow(name="Refund")
    async def refund(order_id: str) -> None: ...

    booking = Agent(name="Booking")
    catalog = Catalog(agents=[booking], workflows=[refund])

    assert catalog.resolve("Booking") is booking
    assert catalog.resolve("booking") is booking  # a unique case-insensitive match
    assert catalog.resolve("Refund") is refund
    with pytest.raises(NotFoundError) as missing:
        catalog.resolve("Nobody")
    assert missing.value.available == ("Booking", "Refund")


def test_the_catalog_mappings_are_read_only() -> None:
    catalog = Catalog(agents=[Agent(name="Bot")])

    with pytest.raises(TypeError):
        catalog.agents["Other"] = Agent(name="Other")  # type: ignore[index]


# --------------------------------------------------------------------------- context checks


def test_a_workflow_body_context_is_checked_against_the_declared_type() -> None:
    @workflow(name="Schedule")
    async def schedule(day: str, ctx: WorkflowCtx[Calendar]) -> None: ...

    catalog = Catalog(workflows=[schedule])
    catalog.validate(context=Calendar)

    with pytest.raises(ContextTypeError) as refused:
        catalog.validate(context=Warehouse)

    message = str(refused.value)
    assert "workflow 'Schedule'" in message
    assert "WorkflowCtx[Calendar]" in message
    assert "Warehouse" in message


def test_an_inline_handoff_agent_is_checked_too() -> None:
    def find(day: str, ctx: ToolCtx[Calendar]) -> str:
        """Find."""
        return day

    specialist = Agent(name="Specialist", tools=[find])
    lead = Agent(name="Lead", handoffs=[specialist])

    with pytest.raises(ContextTypeError, match=r"tool 'find' of agent 'Specialist'"):
        Catalog(agents=[lead]).validate(context=Warehouse)


def test_a_workflow_given_inline_as_a_subagent_is_checked_too() -> None:
    @workflow(name="Schedule")
    async def schedule(day: str, ctx: WorkflowCtx[Calendar]) -> None: ...

    lead = Agent(name="Lead", subagents=[schedule])

    with pytest.raises(ContextTypeError, match="workflow 'Schedule'"):
        Catalog(agents=[lead]).validate(context=Warehouse)


def test_a_plugin_workflow_kind_joins_the_walk_through_context_sites() -> None:
    class GraphWorkflow:
        __agentdeck_workflow__ = "graph"
        name = "Graph"

        def context_sites(self) -> Iterator[tuple[str, Requirement]]:
            yield "node 'review'", Requirement(parameter="ctx", required=Calendar)

    with pytest.raises(ContextTypeError, match=r"node 'review' of workflow 'Graph'"):
        Catalog(workflows=[GraphWorkflow()]).validate(context=Warehouse)


def test_an_instance_declared_as_the_context_is_refused() -> None:
    with pytest.raises(ContextTypeError, match="instance of Calendar"):
        Catalog().validate(context=Calendar())


def test_a_project_tool_with_a_context_is_checked(
    tmp_path: Path, loaded: list[CatalogSources]
) -> None:
    write(
        tmp_path,
        ".agentdeck/agents/booking/agent.py",
        """
        from agentdeck.authoring.agents import Agent
        from agentdeck.authoring.context import ToolCtx


        class Calendar:
            pass


        def find_slots(day: str, environment: ToolCtx[Calendar]) -> str:
            \"\"\"Find free appointment slots on a given day.\"\"\"
            return day


        booking = Agent(name="Booking", tools=[find_slots])
        """,
    )
    catalog = Catalog.from_sources(discover(loaded, tmp_path / ".agentdeck"))

    with pytest.raises(ContextTypeError, match=r"find_slots.*Calendar.*Warehouse"):
        catalog.validate(context=Warehouse)


# =========================================================================== messages (issue 22)

DUP_WORKFLOW = """\
from agentdeck import workflow


@workflow(name="dup")
async def {function}() -> str:
    return "{function}"
"""


async def test_a_duplicate_name_in_a_project_names_both_files(tmp_path: Path) -> None:
    from agentdeck.deck.deck import Deck

    write(tmp_path, ".agentdeck/workflows/a/workflow.py", DUP_WORKFLOW.format(function="first"))
    write(tmp_path, ".agentdeck/workflows/b/workflow.py", DUP_WORKFLOW.format(function="second"))
    deck = Deck.from_project(tmp_path / ".agentdeck")
    try:
        with pytest.raises(ConfigError) as refused:
            deck.build()
    finally:
        await deck.aclose()
    message = str(refused.value)
    assert "two workflows are named 'dup': " in message
    assert ".agentdeck/workflows/a/workflow.py and .agentdeck/workflows/b/workflow.py" in message
    assert "another declaration" not in message


@pytest.mark.parametrize(
    ("folder", "meant"), [("workflow", "workflows/"), ("Agents", "agents/"), ("skill", "skills/")]
)
def test_a_misnamed_project_folder_is_refused_with_the_folder_meant(
    tmp_path: Path, loaded: list[CatalogSources], folder: str, meant: str
) -> None:
    write(tmp_path, f".agentdeck/{folder}/a/workflow.py", DUP_WORKFLOW.format(function="a"))

    with pytest.raises(ConfigError, match=f"did you mean '{meant}'") as refused:
        discover(loaded, tmp_path / ".agentdeck")
    assert refused.value.accepted == ("agents", "workflows", "skills")


def test_a_folder_of_another_name_is_the_projects_own(
    tmp_path: Path, loaded: list[CatalogSources]
) -> None:
    write(tmp_path, ".agentdeck/data/rows.csv", "a,b\n")
    write(tmp_path, ".agentdeck/workflows/a/workflow.py", DUP_WORKFLOW.format(function="a"))

    assert len(discover(loaded, tmp_path / ".agentdeck").workflows) == 1


@pytest.mark.parametrize("where", ["a/helpers.py", "shared/__init__.py"])
def test_an_absolute_import_of_a_project_file_says_to_import_relatively(
    tmp_path: Path, loaded: list[CatalogSources], where: str
) -> None:
    module = where.split("/")[1].removesuffix(".py") if where.startswith("a/") else "shared"
    write(tmp_path, f".agentdeck/workflows/{where}", "VALUE = 1\n")
    write(
        tmp_path,
        ".agentdeck/workflows/a/workflow.py",
        f"import {module}\n" + DUP_WORKFLOW.format(function="a"),
    )

    with pytest.raises(ConfigError) as refused:
        discover(loaded, tmp_path / ".agentdeck")
    message = str(refused.value)
    assert f"imports '{module}' absolutely" in message
    assert f"from . import {module}" in message


def test_a_missing_third_party_module_stays_a_plain_import_failure(
    tmp_path: Path, loaded: list[CatalogSources]
) -> None:
    write(
        tmp_path,
        ".agentdeck/workflows/a/workflow.py",
        "import no_such_package_anywhere\n" + DUP_WORKFLOW.format(function="a"),
    )

    with pytest.raises(ConfigError, match="failed to import: ModuleNotFoundError"):
        discover(loaded, tmp_path / ".agentdeck")


def test_an_unknown_name_suggests_the_closest() -> None:
    @workflow
    async def refund() -> str:
        return "ok"

    catalog = Catalog(agents=[Agent(name="Support")], workflows=[refund])

    with pytest.raises(NotFoundError, match=r"did you mean 'refund'\?") as missing:
        catalog.resolve("refnd")
    assert missing.value.available == ("Support", "refund")
    with pytest.raises(NotFoundError) as far:
        catalog.resolve("zzz")
    assert "did you mean" not in str(far.value)
