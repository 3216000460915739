"""The catalog: every agent, workflow, skill and MCP server one deck knows, and its checks.

There is one catalog mechanism under both front doors. ``Deck(agents=..., workflows=...,
skills=..., mcp=...)`` builds a :class:`Catalog` from its arguments; ``Deck.from_project()``
first runs :func:`discover_project` over a ``.agentdeck/`` directory and hands the same four
things to the same constructor.

Project modules are imported under a namespace unique to each discovery
(``agentdeck_project_<path hash>_<n>``), never under one shared alias and never via ``sys.path``,
so two projects loaded side by side in one process each read their own bundles, even when their
bundles and helper modules have the same names.

:meth:`Catalog.validate` is what ``build()`` runs: names unique across agents and workflows,
every name an agent references present, and, when the deck declares a context type, that type
checked against every context parameter (agents' tools, instructions and hooks, and workflow
bodies too).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import itertools
import os
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import MappingProxyType, ModuleType
from typing import Any

from agentdeck.authoring.agents import Agent
from agentdeck.authoring.context_check import (
    Requirement,
    Verdict,
    callable_label,
    refuse_incompatible,
    validate_context_declaration,
)
from agentdeck.authoring.mcp import MCP
from agentdeck.authoring.skills import Skills
from agentdeck.authoring.workflows import WorkflowDefinition
from agentdeck.errors import ConfigError, NotFoundError, did_you_mean

__all__ = [
    "Catalog",
    "CatalogSources",
    "discover_project",
    "is_workflow",
    "unload_project",
    "validate_context_declaration",
]

WORKFLOW_MARKER = "__agentdeck_workflow__"
"""Attribute that marks an object as a workflow for discovery (plugin-defined kinds set it)."""


def is_workflow(value: object) -> bool:
    """Whether ``value`` is a workflow definition: ``@workflow`` or a plugin kind carrying the
    :data:`WORKFLOW_MARKER` attribute. Classes and modules never count, only instances."""
    if isinstance(value, WorkflowDefinition):
        return True
    if isinstance(value, type | ModuleType):
        return False
    try:
        return bool(getattr(value, WORKFLOW_MARKER, False))
    except Exception:  # a proxy or lazy object may raise on any attribute
        return False


# =========================================================================== the catalog


class Catalog:
    """Agents, workflows, skills and MCP servers of one deck, with the checks ``build()`` runs.

    Construction only normalizes and type-checks its arguments (an entry of the wrong kind is
    refused where it entered); :meth:`validate` checks names and references, reading nothing but
    the declarations: no network, no server started.
    """

    def __init__(
        self,
        agents: Iterable[Agent] = (),
        workflows: Iterable[object] = (),
        skills: Any = None,
        mcp: Any = None,
        *,
        origins: Mapping[int, Path] | None = None,
    ) -> None:
        self._agent_list = tuple(_entries(agents, "agents"))
        self._workflow_list = tuple(_entries(workflows, "workflows"))
        for agent in self._agent_list:
            if not isinstance(agent, Agent):
                raise ConfigError(
                    f"agents= takes Agent declarations; got {type(agent).__name__}"
                    + (" (a workflow belongs in workflows=)" if is_workflow(agent) else ""),
                    setting="agents",
                )
        for definition in self._workflow_list:
            if not is_workflow(definition):
                raise ConfigError(
                    f"workflows= takes @workflow definitions; got {type(definition).__name__}"
                    + (" (an Agent belongs in agents=)" if isinstance(definition, Agent) else ""),
                    setting="workflows",
                )
            _workflow_name(definition)
        self.skills = Skills.coerce(skills)
        self.mcp = MCP.coerce(mcp)
        self._origins = dict(origins or {})

    def record_origins(self, origins: Mapping[int, Path]) -> None:
        """Remember which file declared each entry (by ``id``), so build errors name it."""
        self._origins.update(origins)

    @classmethod
    def from_sources(cls, sources: CatalogSources) -> Catalog:
        return cls(
            sources.agents,
            sources.workflows,
            sources.skills,
            sources.mcp,
            origins=sources.origins,
        )

    # ------------------------------------------------------------------ reading

    @property
    def agents(self) -> Mapping[str, Agent]:
        """The agents by name, read-only. Raises :class:`ConfigError` on a duplicate name."""
        return MappingProxyType(self._index(self._agent_list, "agent"))

    @property
    def workflows(self) -> Mapping[str, Any]:
        """The workflows by name, read-only. Raises :class:`ConfigError` on a duplicate name."""
        return MappingProxyType(self._index(self._workflow_list, "workflow"))

    @property
    def names(self) -> tuple[str, ...]:
        """Every addressable name, agents first, in declaration order."""
        return (
            *(agent.name for agent in self._agent_list),
            *(_workflow_name(d) for d in self._workflow_list),
        )

    def resolve(self, name: str) -> Any:
        """The agent or workflow a caller addresses as ``name``.

        An exact match wins; otherwise a name that differs only in case resolves when exactly one
        entry matches it that way. Anything else is a :class:`NotFoundError` listing the names.
        """
        agents, workflows = self.agents, self.workflows
        if name in agents:
            return agents[name]
        if name in workflows:
            return workflows[name]
        folded = [n for n in (*agents, *workflows) if n.casefold() == name.casefold()]
        if len(folded) == 1:
            only = folded[0]
            return agents[only] if only in agents else workflows[only]
        available = list(self.names)
        raise NotFoundError(
            f"no agent or workflow named '{name}'; the catalog has: "
            f"{', '.join(available) or 'nothing'}",
            what="agent or workflow",
            name=name,
            available=available,
        )

    def reachable_agents(self) -> tuple[Agent, ...]:
        """The catalog's agents plus every agent object reached through handoffs or subagents.

        An agent given inline (``handoffs=[other_agent]``) compiles with its owner, so it is
        validated and context-checked like a catalog agent.
        """
        seen: dict[int, Agent] = {}
        pending = list(self._agent_list)
        while pending:
            agent = pending.pop(0)
            if id(agent) in seen:
                continue
            seen[id(agent)] = agent
            pending.extend(r for r in (*agent.handoffs, *agent.subagents) if isinstance(r, Agent))
        return tuple(seen.values())

    def reachable_workflows(self) -> tuple[Any, ...]:
        """The catalog's workflows plus every workflow object an agent lists in ``subagents=``."""
        seen: dict[int, Any] = {id(d): d for d in self._workflow_list}
        for agent in self.reachable_agents():
            for reference in agent.subagents:
                if isinstance(reference, WorkflowDefinition):
                    seen.setdefault(id(reference), reference)
        return tuple(seen.values())

    # ------------------------------------------------------------------ validating

    def validate(self, *, context: Any = None) -> None:
        """Everything ``build()`` checks before compiling, without touching the network.

        Names are unique across agents and workflows; every skill, MCP server, handoff and
        subagent name an agent references exists; and, when ``context`` declares a type, every
        context parameter in the catalog accepts it (:meth:`check_context_types`).
        """
        agents = self.agents
        workflows = self.workflows
        for name, agent in agents.items():
            if name in workflows:
                raise ConfigError(
                    f"agent '{name}'{self._where(agent)} and workflow '{name}'"
                    f"{self._where(workflows[name])} share a name; a name addresses exactly one "
                    "runnable, so rename one of them",
                    setting="name",
                )
        for agent in self.reachable_agents():
            self._check_inline(agent, agents)
            self._check_references(agent, agents, workflows)
        if context is not None:
            self.check_context_types(context)

    def check_context_types(self, declared: Any) -> None:
        """Refuse the build when a context parameter cannot accept the declared type.

        Walks every agent's injection sites (tools, the instructions callable, hook methods) and
        every workflow body's context parameter, inline ones included; a plugin workflow kind
        joins by offering ``context_sites()`` like an :class:`Agent`. Deferred verdicts are
        accepted. Raises
        :class:`~agentdeck.errors.ContextTypeError` naming the callable, what it requires and what
        the deck provides. ``None`` (nothing declared) checks nothing.
        """
        declared = validate_context_declaration(declared)
        if declared is None:
            return
        for agent in self.reachable_agents():
            for site, requirement in agent.context_sites():
                if requirement.check(declared) is Verdict.INCOMPATIBLE:
                    raise refuse_incompatible(
                        f"{site} of agent '{agent.name}'", requirement, declared
                    )
        for definition in self.reachable_workflows():
            for site, requirement in _workflow_sites(definition):
                if requirement.check(declared) is Verdict.INCOMPATIBLE:
                    raise refuse_incompatible(site, requirement, declared)

    def _index(self, entries: tuple[Any, ...], kind: str) -> dict[str, Any]:
        index: dict[str, Any] = {}
        for entry in entries:
            name = entry.name if kind == "agent" else _workflow_name(entry)
            if name in index and index[name] is not entry:
                first = self._origin(index[name]) or "one declaration"
                second = self._origin(entry) or "another declaration"
                raise ConfigError(
                    f"two {kind}s are named '{name}': {first} and {second}; names must be unique",
                    setting=f"{kind}s",
                )
            index[name] = entry
        return index

    def _check_inline(self, agent: Agent, agents: Mapping[str, Agent]) -> None:
        registered = agents.get(agent.name)
        if registered is not None and registered is not agent:
            raise ConfigError(
                f"an agent reached through handoffs= or subagents= is named '{agent.name}', like "
                f"the catalog's agent '{agent.name}'{self._where(registered)}, but is a different "
                "declaration; hand off by name, or give it its own name",
                setting="handoffs",
            )

    def _check_references(
        self, agent: Agent, agents: Mapping[str, Agent], workflows: Mapping[str, Any]
    ) -> None:
        owner = f"agent '{agent.name}'{self._where(agent)}"
        if agent.skills is not None:
            _require_known(owner, "skills", agent.skills, list(self.skills), "skill")
        _require_known(owner, "mcp_servers", agent.mcp_servers, list(self.mcp), "MCP server")
        for reference in agent.handoffs:
            if isinstance(reference, str) and reference in workflows and reference not in agents:
                raise ConfigError(
                    f"{owner} hands off to '{reference}', which is a workflow; a handoff moves the "
                    "conversation to another agent. List it in subagents= to call it as a tool",
                    setting="handoffs",
                    accepted=list(agents),
                )
        named = [r for r in agent.handoffs if isinstance(r, str)]
        _require_known(owner, "handoffs", named, list(agents), "agent")
        named = [r for r in agent.subagents if isinstance(r, str)]
        _require_known(owner, "subagents", named, [*agents, *workflows], "agent or workflow")

    def _origin(self, entry: object) -> str:
        origin = self._origins.get(id(entry))
        return str(origin) if origin is not None else ""

    def _where(self, entry: object) -> str:
        origin = self._origins.get(id(entry))
        return f" (in {origin})" if origin is not None else ""


def _entries(value: Any, setting: str) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, str | bytes | Agent) or is_workflow(value):
        raise ConfigError(f"{setting}= takes a list; wrap the single entry: {setting}=[...]")
    if not isinstance(value, Iterable):
        raise ConfigError(f"{setting}= takes a list; got {type(value).__name__}", setting=setting)
    return list(value)


def _workflow_name(definition: object) -> str:
    name = getattr(definition, "name", None)
    if not isinstance(name, str) or not name:
        raise ConfigError(
            f"workflow object of type {type(definition).__name__} has no usable 'name'",
            setting="workflows",
        )
    return name


def _workflow_sites(definition: object) -> Iterator[tuple[str, Requirement]]:
    name = _workflow_name(definition)
    if isinstance(definition, WorkflowDefinition):
        if definition.context_requirement is not None:
            site = f"the body of workflow '{name}' ({callable_label(definition.fn)})"
            yield site, definition.context_requirement
        return
    sites = getattr(definition, "context_sites", None)
    if callable(sites):
        for site, requirement in sites():
            yield f"{site} of workflow '{name}'", requirement


def _require_known(
    owner: str, setting: str, names: Iterable[str], known: list[str], what: str
) -> None:
    for name in names:
        if name not in known:
            raise ConfigError(
                f"{owner} references {what} '{name}' in {setting}=, which the catalog does not "
                f"have; it has: {', '.join(known) or 'none'}{did_you_mean(name, known)}",
                setting=setting,
                accepted=known,
            )


# =========================================================================== project discovery

_project_counter = itertools.count(1)

AGENT_FILE = "agent.py"
WORKFLOW_FILE = "workflow.py"


@dataclass(frozen=True, slots=True)
class CatalogSources:
    """What :func:`discover_project` found: the four catalog arguments and where they came from.

    ``module_namespace`` is the package the project's modules were imported under; it is unique
    to this discovery, so the same project discovered twice is two independent sets of modules.
    """

    agents: tuple[Agent, ...]
    workflows: tuple[object, ...]
    skills: Skills
    mcp: MCP
    project: Path
    module_namespace: str
    origins: Mapping[int, Path] = field(default_factory=dict, repr=False)

    def unload(self) -> None:
        """Forget this project's modules (call once the deck built from them is closed)."""
        unload_project(self.module_namespace)


def discover_project(path: str | os.PathLike[str] = ".agentdeck") -> CatalogSources:
    """Read a project directory into catalog sources.

    The layout: ``agents/<bundle>/agent.py`` and ``workflows/<bundle>/workflow.py`` (their
    module-level :class:`Agent` objects and workflows, skipping ``_private`` names),
    ``skills/*/SKILL.md`` inside the directory, and ``.mcp.json`` next to it. Each is optional
    except the directory itself.

    A bundle is a package: ``agent.py`` may import its siblings relatively (``from . import
    prompts``, ``from .tools import search``), and ``from ..shared import x`` reaches a sibling
    bundle directory. Absolute imports of project files (``import prompts``) are deliberately not
    supported: they would need the project on ``sys.path``, where two projects' same-named
    modules would collide. A bundle that fails to import, or defines nothing, is a
    :class:`ConfigError` naming its file.
    """
    root = Path(path).expanduser().resolve()
    if not root.is_dir():
        raise ConfigError(
            f"project directory {root} does not exist (Deck.from_project() looks for "
            f"'{Path(path)}' relative to {Path.cwd()})",
            setting="path",
        )
    namespace = _namespace_for(root)
    try:
        agents, workflows, origins = _load_definitions(root, namespace)
        skills_dir = root / "skills"
        skills = Skills(skills_dir) if skills_dir.is_dir() else Skills()
        mcp_file = root.parent / ".mcp.json"
        mcp = MCP.from_file(mcp_file) if mcp_file.is_file() else MCP()
    except BaseException:
        unload_project(namespace)
        raise
    return CatalogSources(
        agents=tuple(agents),
        workflows=tuple(workflows),
        skills=skills,
        mcp=mcp,
        project=root,
        module_namespace=namespace,
        origins=MappingProxyType(origins),
    )


def unload_project(module_namespace: str) -> None:
    """Remove every module imported under ``module_namespace`` from ``sys.modules``.

    Objects already built keep working (a function holds its own globals); only a later import
    *by name* of the project's modules would miss.
    """
    prefix = f"{module_namespace}."
    for name in [n for n in sys.modules if n == module_namespace or n.startswith(prefix)]:
        del sys.modules[name]


def _namespace_for(root: Path) -> str:
    digest = hashlib.sha256(str(root).encode("utf-8")).hexdigest()[:12]
    return f"agentdeck_project_{digest}_{next(_project_counter)}"


def _load_definitions(
    root: Path, namespace: str
) -> tuple[list[Agent], list[object], dict[int, Path]]:
    importlib.invalidate_caches()  # files written moments ago must be visible to the finders
    _refuse_misnamed_folders(root)
    _package(namespace, root)
    agents: dict[int, Agent] = {}
    workflows: dict[int, object] = {}
    origins: dict[int, Path] = {}
    for kind, filename in (("agents", AGENT_FILE), ("workflows", WORKFLOW_FILE)):
        kind_dir = root / kind
        if not kind_dir.is_dir():
            continue
        _package(f"{namespace}.{kind}", kind_dir)
        for bundle in sorted(kind_dir.iterdir()):
            file = bundle / filename
            if bundle.name.startswith(("_", ".")) or not file.is_file():
                continue
            package = f"{namespace}.{kind}.{_identifier(bundle.name)}"
            _package(package, bundle)
            module = _module(f"{package}.{file.stem}", file)
            found = 0
            for attribute, value in vars(module).items():
                if attribute.startswith("_"):
                    continue
                if isinstance(value, Agent):
                    agents.setdefault(id(value), value)
                elif is_workflow(value):
                    workflows.setdefault(id(value), value)
                else:
                    continue
                origins.setdefault(id(value), file.relative_to(root.parent))
                found += 1
            if not found:
                raise ConfigError(
                    f"{file} defines no Agent or workflow at module level; a bundle's "
                    f"{filename} is where its definitions live",
                    setting="path",
                )
    return list(agents.values()), list(workflows.values()), origins


PROJECT_FOLDERS = ("agents", "workflows", "skills")
"""The folders of a project directory that AgentDeck reads."""


def _refuse_misnamed_folders(root: Path) -> None:
    """A folder whose name is close to one AgentDeck reads (``workflow/``, ``Agents/``) is a
    typo that would otherwise build as "nothing": refuse it, naming the intended folder.
    Folders of other names (data, shared code) are the project's own and left alone."""
    for entry in sorted(root.iterdir()):
        if not entry.is_dir() or entry.name in PROJECT_FOLDERS or entry.name.startswith((".", "_")):
            continue
        hint = did_you_mean(entry.name, [f"{folder}/" for folder in PROJECT_FOLDERS])
        if hint:
            raise ConfigError(
                f"{entry} is not a folder a project reads (it reads "
                f"{', '.join(f + '/' for f in PROJECT_FOLDERS)}){hint}",
                setting="path",
                accepted=list(PROJECT_FOLDERS),
            )


def _identifier(name: str) -> str:
    """A bundle directory name as a module name segment (dots would split the package path)."""
    cleaned = re.sub(r"\W", "_", name)
    return cleaned if cleaned and not cleaned[0].isdigit() else f"_{cleaned}"


def _package(name: str, directory: Path) -> ModuleType:
    """Register ``directory`` as package ``name`` (running its ``__init__.py`` if it has one)."""
    existing = sys.modules.get(name)
    if existing is not None:
        return existing
    init = directory / "__init__.py"
    if init.is_file():
        spec = importlib.util.spec_from_file_location(
            name, init, submodule_search_locations=[str(directory)]
        )
    else:
        spec = ModuleSpec(name, None, is_package=True)
        spec.submodule_search_locations = [str(directory)]
    if spec is None:  # pragma: no cover - spec_from_file_location returns one for a .py file
        raise ConfigError(f"cannot import {directory} as a package")
    return _execute(spec, init if init.is_file() else directory)


def _project_module(file: Path, missing: str | None) -> Path | None:
    """The project file an absolute ``import missing`` in ``file`` meant, if there is one: a
    module or package of that name beside ``file`` or one folder up (a sibling bundle)."""
    if not missing:
        return None
    first = missing.split(".")[0]
    for folder in (file.parent, file.parent.parent):
        for candidate in (folder / f"{first}.py", folder / first / "__init__.py", folder / first):
            if candidate.exists() and candidate != file.parent:
                return candidate
    return None


def _module(name: str, file: Path) -> ModuleType:
    existing = sys.modules.get(name)
    if existing is not None:  # a sibling bundle imported it already: one module, one identity
        return existing
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None:  # pragma: no cover
        raise ConfigError(f"cannot import {file}")
    return _execute(spec, file)


def _execute(spec: ModuleSpec, file: Path) -> ModuleType:
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        if spec.loader is not None:
            spec.loader.exec_module(module)
    except ModuleNotFoundError as failed:
        sys.modules.pop(spec.name, None)
        sibling = _project_module(file, failed.name)
        if sibling is None:
            raise ConfigError(
                f"{file} failed to import: {type(failed).__name__}: {failed}", setting="path"
            ) from failed
        raise ConfigError(
            f"{file} imports '{failed.name}' absolutely, but {sibling} is a file of the project: "
            f"a bundle is a package, so import it relatively (from . import {failed.name}, or "
            f"from .{failed.name} import ...); absolute imports of project files are not "
            "supported",
            setting="path",
        ) from failed
    except Exception as failed:
        sys.modules.pop(spec.name, None)
        raise ConfigError(
            f"{file} failed to import: {type(failed).__name__}: {failed}", setting="path"
        ) from failed
    parent, _, child = spec.name.rpartition(".")
    if parent in sys.modules:
        setattr(sys.modules[parent], child, module)
    return module
