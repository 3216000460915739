"""``Agent`` declarations compiled to Agents SDK agents, with no network and no server started.

One :class:`Compiler` per engine compiles agents on demand and remembers them by name, so an
agent reached from several others (a handoff target, a subagent) is one SDK agent, and handoff
cycles close. What each declaration becomes:

* ``instructions``: the string, or an SDK dynamic-instructions function that calls
  :meth:`Agent.render_instructions <agentdeck.authoring.agents.Agent.render_instructions>` with the
  run's ``ToolCtx`` (read from the SDK run context);
* ``tools``: ``@tool``/plain functions become function tools served by
  :mod:`agentdeck_openai.function_tools`; SDK tool objects are kept (a ``FunctionTool`` gains the
  tool-dispatch safe point); ``interrupt_on`` and ``needs_approval`` make calls wait for approval;
  every function tool's approval setting goes behind a
  :class:`~agentdeck_openai.dispatch_gate.DispatchGate` (a quiet play's safe point);
* ``subagents``: agents and workflows of the catalog become tools that start them as **child
  runs** (:mod:`agentdeck_openai.child_runs`); an agent given inline (an object the catalog does
  not hold) is called in-process with the SDK's ``as_tool``, its failures propagating to the run;
* ``handoffs``: agents the conversation may be transferred to (``transfer_to_<name>``);
* ``skills``: a generated ``load_skill`` tool (the agent's skills, or every skill of the catalog
  when ``skills=None``); ``planning=True``: the ``update_plan`` tool;
* ``mcp_servers``: names of catalog servers; the engine starts them at open and attaches them;
* ``model``: ``Agent(model=...)``, else ``OPENAI_MODEL``, else the Agents SDK's
  ``OPENAI_DEFAULT_MODEL``, else a ``ConfigError`` naming the agent;
  ``model_settings``: ``AGENTDECK_RUNNER_TEMPERATURE``/``MAX_TOKENS`` overlaid with the agent's
  own ``model_settings`` (any field of the SDK's ``ModelSettings``);
* ``output_type``: structured output (strict JSON schema where the type allows it);
* ``hooks``: see :mod:`agentdeck_openai.hooks` (an SDK ``AgentHooks`` is the SDK agent's own);
* ``tool_errors``: what a raising tool does (see :mod:`agentdeck_openai.function_tools`);
* ``input_guardrails`` / ``output_guardrails``, ``tool_use_behavior``, ``run_hooks``: the SDK's
  own objects, checked and given the application's context (:mod:`agentdeck_openai.native`);
  ``run_hooks`` are the run's hooks when a run starts at this agent.
"""

from __future__ import annotations

import dataclasses
import re
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import agents.tool as sdk_tool
from agents import Agent as SDKAgent
from agents import RunHooks
from agents.agent_output import AgentOutputSchema, AgentOutputSchemaBase
from agents.exceptions import UserError
from agents.model_settings import ModelSettings
from agents.run_context import RunContextWrapper
from agents.tool import FunctionTool

from agentdeck.authoring.agents import Agent
from agentdeck.authoring.catalog import is_workflow
from agentdeck.authoring.context_check import callable_label
from agentdeck.authoring.skills import Skill
from agentdeck.authoring.tools import Tool
from agentdeck.authoring.workflows import WorkflowDefinition
from agentdeck.errors import ConfigError, NotFoundError
from agentdeck_openai.child_runs import (
    AGENT_INPUT_SCHEMA,
    ChildTarget,
    child_run_tool,
    workflow_input_schema,
)
from agentdeck_openai.config import EngineConfig
from agentdeck_openai.digest import agent_digest
from agentdeck_openai.dispatch_gate import declares_approval, gated
from agentdeck_openai.function_tools import function_tool, wrap_native
from agentdeck_openai.hooks import HookSet, sdk_hooks
from agentdeck_openai.native import guardrails, run_hooks, sdk_agent_hooks, tool_use_behavior
from agentdeck_openai.planning import PLAN_TOOL, plan_tool
from agentdeck_openai.scope import scope_of
from agentdeck_openai.skills_tool import SKILL_TOOL, skill_tool

__all__ = ["CompiledAgent", "Compiler", "subagent_tool_name"]

SDK_TOOL_TYPES: tuple[type, ...] = tuple(
    typing.get_origin(member) or member for member in typing.get_args(sdk_tool.Tool)
)
"""The Agents SDK's own tool classes: kept as they are when listed in ``tools=``."""

_MODEL_SETTINGS_FIELDS = tuple(f.name for f in dataclasses.fields(ModelSettings))
_AGENT_FIELDS = frozenset(f.name for f in dataclasses.fields(Agent))


@dataclass(eq=False)
class CompiledAgent:
    """One agent as the engine runs it: the SDK agent and what the engine needs beside it."""

    declaration: Agent
    sdk_agent: SDKAgent[Any]
    hooks: HookSet
    structured_output: bool
    mcp_servers: tuple[str, ...]
    code_digest: str
    graph: dict[str, CompiledAgent] = field(default_factory=dict, repr=False)
    """Every agent reachable from this one (itself included), by name; subagents run as child
    runs are not part of it (they are runs of their own)."""
    child_tools: dict[str, ChildTarget] = field(default_factory=dict)
    """Tool name -> the subagent it starts as a child run."""
    run_hooks: RunHooks[Any] | None = None
    """The SDK ``RunHooks`` of a run that starts at this agent (``Agent(run_hooks=...)``)."""

    def policy_for(self, agent_name: str | None) -> HookSet | None:
        """The hooks of the agent named ``agent_name`` in this graph, if it has an approval
        policy."""
        compiled = self.graph.get(agent_name or "")
        if compiled is None or not compiled.hooks.has("approve_tool_call"):
            return None
        return compiled.hooks

    def child_target(self, agent_name: str | None, tool: str) -> ChildTarget | None:
        """The subagent a call of ``tool`` by the agent named ``agent_name`` starts as a child
        run, or ``None`` when that tool is something else."""
        compiled = self.graph.get(agent_name or "")
        return None if compiled is None else compiled.child_tools.get(tool)

    def declares_approval(self, agent_name: str | None, tool: str) -> bool:
        """Whether a call of ``tool`` by the agent named ``agent_name`` may wait for a person
        (``False`` only for a gated tool of this graph that declares no approval: the SDK held
        such a call only because it could not read its arguments)."""
        compiled = self.graph.get(agent_name or "")
        if compiled is None:
            return True
        for offered in compiled.sdk_agent.tools:
            if getattr(offered, "name", None) == tool:
                return declares_approval(offered)
        return True


def subagent_tool_name(name: str) -> str:
    """The tool name a subagent is offered under (what model APIs accept in a tool name)."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)[:64] or "subagent"


class Compiler:
    """Compiles agents of one deck (its settings and catalog), remembering them by name."""

    def __init__(self, config: EngineConfig, catalog: Any = None) -> None:
        self._config = config
        self._catalog = catalog
        self._compiled: dict[str, CompiledAgent] = {}
        self._declarations: dict[str, Agent] = {}

    def compile(self, agent: Agent) -> CompiledAgent:
        compiled = self._compile(agent)
        graph: dict[str, CompiledAgent] = {}
        self._collect(compiled, graph)
        compiled.graph = graph
        return compiled

    def _collect(self, compiled: CompiledAgent, graph: dict[str, CompiledAgent]) -> None:
        if compiled.declaration.name in graph:
            return
        graph[compiled.declaration.name] = compiled
        declaration = compiled.declaration
        for handoff in declaration.handoffs:
            target = self._reference(declaration, handoff, "handoffs")
            if isinstance(target, Agent):
                self._collect(self._compiled[target.name], graph)
        for subagent in declaration.subagents:
            target = self._reference(declaration, subagent, "subagents")
            # A catalog subagent is a child run of its own, not part of this agent's graph.
            if isinstance(target, Agent) and self._catalog_name(target) is None:
                self._collect(self._compiled[target.name], graph)

    # ------------------------------------------------------------------ one agent

    def _compile(self, agent: Agent) -> CompiledAgent:
        known = self._compiled.get(agent.name)
        if known is not None:
            if self._declarations[agent.name] is not agent:
                raise ConfigError(
                    f"two different agents are named '{agent.name}'; agents reached from one "
                    "another (handoffs, subagents) need distinct names",
                    setting="agents",
                )
            return known
        hooks = HookSet(agent)
        sdk_agent: SDKAgent[Any] = SDKAgent(
            name=agent.name,
            handoff_description=agent.description or None,
            instructions=self._instructions(agent),
            model=self._model_name(agent),
            model_settings=self._model_settings(agent),
            output_type=self._output_type(agent),
            hooks=sdk_agent_hooks(agent) or sdk_hooks(hooks),
            input_guardrails=guardrails(agent, "input_guardrails"),
            output_guardrails=guardrails(agent, "output_guardrails"),
        )
        compiled = CompiledAgent(
            declaration=agent,
            sdk_agent=sdk_agent,
            hooks=hooks,
            structured_output=_is_structured(agent.output_type),
            mcp_servers=self._mcp_names(agent),
            code_digest=agent_digest(agent),
            run_hooks=run_hooks(agent),
        )
        # Registered before its tools and handoffs compile, so a cycle finds it.
        self._compiled[agent.name] = compiled
        self._declarations[agent.name] = agent
        try:
            sdk_agent.tools = self._tools(agent, compiled.child_tools)
            sdk_agent.tool_use_behavior = tool_use_behavior(
                agent,
                [name for tool in sdk_agent.tools if isinstance(name := _tool_name(tool), str)],
            )
            sdk_agent.handoffs = [
                self._compile(self._agent_reference(agent, ref, "handoffs")).sdk_agent
                for ref in agent.handoffs
            ]
        except BaseException:
            del self._compiled[agent.name]
            del self._declarations[agent.name]
            raise
        return compiled

    def _instructions(self, agent: Agent) -> Any:
        if agent.instructions is None or isinstance(agent.instructions, str):
            return agent.instructions

        async def instructions(context: RunContextWrapper[Any], _sdk_agent: Any) -> str:
            scope = scope_of(context)
            text = await agent.render_instructions(scope.tool_ctx if scope else None)
            return text or ""

        instructions.__qualname__ = callable_label(agent.instructions)
        return instructions

    def _model_name(self, agent: Agent) -> str:
        name = agent.model or self._config.default_model
        if not name:
            raise ConfigError(
                f"agent '{agent.name}' has no model: give it Agent(model=...) or set OPENAI_MODEL "
                "(or the Agents SDK's OPENAI_DEFAULT_MODEL)",
                setting="OPENAI_MODEL",
            )
        return name

    def _model_settings(self, agent: Agent) -> ModelSettings:
        runner = self._config.runner
        base = ModelSettings(
            temperature=runner.temperature,
            max_tokens=runner.max_tokens,
            # Chat Completions reports usage only when asked; every model call's usage is an event.
            include_usage=None if self._config.use_responses else True,
        )
        given = agent.model_settings
        if isinstance(given, ModelSettings):
            return base.resolve(given)
        if not isinstance(given, Mapping):
            raise ConfigError(
                f"agent '{agent.name}': model_settings= takes a mapping of ModelSettings fields "
                f"or the Agents SDK's ModelSettings; got {type(given).__name__}",
                setting="model_settings",
            )
        if not given:
            return base
        unknown = sorted(set(given) - set(_MODEL_SETTINGS_FIELDS))
        if unknown:
            elsewhere = [name for name in unknown if name in _AGENT_FIELDS]
            hint = (
                f" ({', '.join(elsewhere)} {'is' if len(elsewhere) == 1 else 'are'} a field of "
                "Agent itself: write Agent(" + ", ".join(f"{name}=..." for name in elsewhere) + "))"
                if elsewhere
                else ""
            )
            raise ConfigError(
                f"agent '{agent.name}': model_settings has {', '.join(map(repr, unknown))}, "
                f"which the Agents SDK's ModelSettings does not know{hint}; it takes "
                f"{', '.join(_MODEL_SETTINGS_FIELDS)}",
                setting="model_settings",
                accepted=list(_MODEL_SETTINGS_FIELDS),
            )
        try:
            return base.resolve(dict(given))
        except (TypeError, ValueError, UserError) as bad:
            raise ConfigError(
                f"agent '{agent.name}': model_settings cannot be used: {bad}",
                setting="model_settings",
            ) from bad

    def _output_type(self, agent: Agent) -> AgentOutputSchemaBase | None:
        if not _is_structured(agent.output_type):
            return None
        try:
            return AgentOutputSchema(agent.output_type, strict_json_schema=True)
        except UserError:
            pass
        try:
            return AgentOutputSchema(agent.output_type, strict_json_schema=False)
        except (UserError, TypeError, ValueError) as bad:
            raise ConfigError(
                f"agent '{agent.name}': output_type {agent.output_type!r} has no JSON schema "
                f"the model can answer in: {bad}",
                setting="output_type",
            ) from bad

    # ------------------------------------------------------------------ tools

    def _tools(self, agent: Agent, child_tools: dict[str, ChildTarget]) -> list[Any]:
        tools: list[Any] = []
        for entry in agent.tools:
            if isinstance(entry, Tool):
                tools.append(
                    function_tool(
                        entry,
                        needs_approval=agent.approval_policy(entry.name),
                        tool_errors=agent.tool_errors,
                    )
                )
            elif isinstance(entry, FunctionTool):
                tools.append(
                    wrap_native(
                        entry,
                        needs_approval=entry.name in agent.interrupt_on,
                        tool_errors=agent.tool_errors,
                    )
                )
            elif isinstance(entry, SDK_TOOL_TYPES):
                tools.append(entry)
            else:
                raise ConfigError(
                    f"agent '{agent.name}': tools= holds a {type(entry).__name__}, which the "
                    "openai engine cannot offer a model; give functions, @tool declarations or "
                    "Agents SDK tool objects",
                    setting="tools",
                )
        for reference in agent.subagents:
            target = self._reference(agent, reference, "subagents")
            name = self._catalog_name(target)
            if name is not None:
                tool = self._child_tool(agent, target, name)
                child_tools[tool.name] = self._child_target(agent, target, name)
                tools.append(tool)
                continue
            sub = self._inline_subagent(agent, target)
            compiled = self._compile(sub)
            as_tool = compiled.sdk_agent.as_tool(
                tool_name=subagent_tool_name(sub.name),
                tool_description=sub.description or f"Ask the agent '{sub.name}'.",
            )
            tools.append(
                wrap_native(
                    as_tool,
                    needs_approval=agent.needs_approval(sub.name),
                    tool_errors=agent.tool_errors,
                    app_context=False,
                )
            )
        skills = self._skills(agent)
        if skills:
            tools.append(skill_tool(skills))
        if agent.planning:
            tools.append(plan_tool())
        _refuse_duplicates(agent, tools)
        return [gated(tool) if isinstance(tool, FunctionTool) else tool for tool in tools]

    def _skills(self, agent: Agent) -> list[Skill]:
        catalog_skills: Mapping[str, Skill] = getattr(self._catalog, "skills", None) or {}
        if agent.skills is None:
            return list(catalog_skills.values())
        found = []
        for name in agent.skills:
            if name not in catalog_skills:
                raise ConfigError(
                    f"agent '{agent.name}' names skill '{name}', which the catalog does not "
                    f"have; its skills are: {', '.join(catalog_skills) or 'none'}",
                    setting="skills",
                    accepted=list(catalog_skills),
                )
            found.append(catalog_skills[name])
        return found

    def _mcp_names(self, agent: Agent) -> tuple[str, ...]:
        declared: Mapping[str, Any] = getattr(self._catalog, "mcp", None) or {}
        for name in agent.mcp_servers:
            if name not in declared:
                raise ConfigError(
                    f"agent '{agent.name}' names MCP server '{name}', which the catalog does not "
                    f"declare; its servers are: {', '.join(declared) or 'none'}",
                    setting="mcp_servers",
                    accepted=list(declared),
                )
        return tuple(agent.mcp_servers)

    # ------------------------------------------------------------------ references

    def _reference(self, owner: Agent, reference: object, setting: str) -> object:
        if not isinstance(reference, str):
            return reference
        catalog = self._catalog
        if catalog is None:
            raise ConfigError(
                f"agent '{owner.name}' names '{reference}' in {setting}=, but the engine has no "
                "catalog to look it up in; pass the Agent object itself",
                setting=setting,
            )
        try:
            return catalog.resolve(reference)
        except NotFoundError as missing:
            raise ConfigError(
                f"agent '{owner.name}': {missing.message}", setting=setting
            ) from missing

    def _agent_reference(self, owner: Agent, reference: object, setting: str) -> Agent:
        target = self._reference(owner, reference, setting)
        if not isinstance(target, Agent):
            raise ConfigError(
                f"agent '{owner.name}' hands off to '{_name_of(target)}', which is not an agent; "
                "a conversation can only be handed to an agent",
                setting=setting,
            )
        return target

    # ------------------------------------------------------------------ subagents

    def _catalog_name(self, target: object) -> str | None:
        """The catalog name ``target`` is started under as a child run, or ``None`` when the
        catalog does not hold this very object (an inline agent)."""
        catalog = self._catalog
        if catalog is None:
            return None
        name = getattr(target, "name", None)
        if not isinstance(name, str):
            return None
        held: Mapping[str, Any] = catalog.agents if isinstance(target, Agent) else catalog.workflows
        return name if held.get(name) is target else None

    def _child_target(self, owner: Agent, target: object, name: str) -> ChildTarget:
        tool = subagent_tool_name(name)
        needs_person = owner.needs_approval(name) or owner.needs_approval(tool)
        if isinstance(target, Agent):
            return ChildTarget(tool=tool, name=name, kind="agent", needs_person=needs_person)
        if isinstance(target, WorkflowDefinition):
            return ChildTarget(
                tool=tool,
                name=name,
                kind="workflow",
                needs_person=needs_person,
                params=target.params,
                required=target.required_params,
                open_params=target.accepts_extra,
            )
        return ChildTarget(tool=tool, name=name, kind="workflow", needs_person=needs_person)

    def _child_tool(self, owner: Agent, target: object, name: str) -> FunctionTool:
        child = self._child_target(owner, target, name)
        described = str(getattr(target, "description", "") or "")
        if isinstance(target, Agent):
            description = described or f"Ask the agent '{name}'."
            schema = dict(AGENT_INPUT_SCHEMA)
        else:
            description = described or f"Run the workflow '{name}'."
            schema = workflow_input_schema(target, child.tool)
        return child_run_tool(child, description=description, schema=schema)

    def _inline_subagent(self, owner: Agent, target: object) -> Agent:
        if isinstance(target, Agent):
            return target
        kind = "workflow" if is_workflow(target) else type(target).__name__
        raise ConfigError(
            f"agent '{owner.name}' lists the {kind} '{_name_of(target)}' in subagents=, which the "
            "deck does not have; a workflow called as a tool runs as a child run of the deck, so "
            "add it to the deck's workflows (Deck(workflows=[...])) and list it here by object "
            "or by name",
            setting="subagents",
        )


def _tool_name(tool: object) -> str | None:
    name = getattr(tool, "name", None)
    return name if isinstance(name, str) else None


def _name_of(target: object) -> str:
    return str(getattr(target, "name", type(target).__name__))


def _is_structured(output_type: Any) -> bool:
    return output_type is not None and output_type is not str


def _refuse_duplicates(agent: Agent, tools: list[Any]) -> None:
    seen: set[str] = set()
    for tool in tools:
        name = getattr(tool, "name", None)
        if not isinstance(name, str):
            continue
        if name in seen:
            generated = {SKILL_TOOL: "skills", PLAN_TOOL: "planning=True"}
            hint = (
                f" (the engine generates '{name}' for {generated[name]})"
                if name in generated
                else ""
            )
            raise ConfigError(
                f"agent '{agent.name}' offers two tools named '{name}'{hint}; rename one",
                setting="tools",
            )
        seen.add(name)
