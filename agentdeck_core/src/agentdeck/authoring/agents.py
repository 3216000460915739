"""``Agent``: a model-driven agent, declared as data with no engine SDK imported.

An ``Agent`` says what the agent is (instructions, tools, model, who it may hand off to or call
as a tool, which skills and MCP servers it reads, which tool calls wait for a person) and
nothing about how it runs: an engine plugin compiles it when the deck builds. Everything the
declaration can check without an engine it checks when constructed, so a mistake surfaces at the
line that made it: an empty name, a tool list with two tools of one name, an ``interrupt_on``
naming a tool the agent does not have.

:meth:`Agent.run` is the one way to execute a declaration without a deck: the installed agent
engine runs it headless, with no event log, no observers and no context.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Literal

from agentdeck.authoring.context import ToolCtx
from agentdeck.authoring.context_check import (
    Requirement,
    callable_label,
    context_requirement,
    missing_context_error,
)
from agentdeck.authoring.tools import ApprovalPolicy, Tool, as_tool
from agentdeck.authoring.workflows import WorkflowDefinition
from agentdeck.errors import ConfigError, PluginNotInstalledError
from agentdeck.model.content import ContentBlock
from agentdeck.plugins.host import PluginHost, default_host
from agentdeck.ports import EngineRequest
from agentdeck.settings import Settings

__all__ = ["Agent", "Instructions", "ToolErrors"]

Instructions = str | Callable[..., str | Awaitable[str]]
"""Static text, or a callable (sync or async) returning it per run.

The callable may declare a ``ToolCtx[...]`` parameter (the run's context) and one more parameter,
which receives the :class:`Agent` being run; nothing else, since nothing else is there to pass.
"""

_OPAQUE_TOOL = "an engine-native tool object has nothing to introspect"

_AGENT_ENGINE_DISTRIBUTION = "agentdeck-openai"

ToolErrors = Literal["model", "fail"]
"""``Agent(tool_errors=...)``: what a tool that raises does to the run."""
_TOOL_ERRORS: tuple[ToolErrors, ...] = ("model", "fail")
_TOOL_USE_BEHAVIORS = ("run_llm_again", "stop_on_first_tool")


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Agent:
    """A declaration of one agent. Frozen: derive variants with :meth:`clone`.

    ``tools`` accepts ``@tool`` declarations, plain functions (compiled the same way) and
    engine-native tool objects (kept as they are). ``handoffs`` are agents the conversation may
    be transferred to, as :class:`Agent` objects or catalog names; ``subagents`` are agents or
    workflows this one calls as tools, by name or object. ``skills=None`` means every skill the
    deck has; ``()`` means none. ``interrupt_on`` names tools whose every call waits for
    approval. ``hooks`` is an object whose public methods the engine calls at lifecycle points;
    like a tool, each may declare a context parameter.

    ``tool_errors`` says what a tool that raises does: ``"model"`` (the default) gives the model
    an error message as the tool's output and the run goes on, as the Agents SDK does;
    ``"fail"`` fails the run (``tool_error``). A tool's own ``failure_error_function`` wins.

    ``model_settings`` is a mapping of the engine's model settings, or the engine's own settings
    object (the Agents SDK's ``ModelSettings``). The engine's own objects are passed through as
    they are, and the engine that compiles the agent checks them when the deck builds (a
    ``ConfigError`` naming the field):
    ``input_guardrails`` / ``output_guardrails`` (the Agents SDK's guardrails),
    ``tool_use_behavior`` (``"run_llm_again"``, ``"stop_on_first_tool"``, a ``StopAtTools``
    mapping or a function), ``run_hooks`` (an SDK ``RunHooks`` for runs that start at this
    agent).
    """

    name: str
    instructions: Instructions | None = None
    tools: Sequence[object] = ()
    model: str | None = None
    handoffs: Sequence[Agent | str] = ()
    subagents: Sequence[Agent | WorkflowDefinition | str] = ()
    skills: Sequence[str] | None = None
    mcp_servers: Sequence[str] = ()
    hooks: object | None = None
    output_type: Any = None
    interrupt_on: Sequence[str] = ()
    planning: bool = False
    description: str = ""
    model_settings: Mapping[str, Any] | object = field(default_factory=dict)
    tool_errors: ToolErrors = "model"
    input_guardrails: Sequence[object] = ()
    output_guardrails: Sequence[object] = ()
    tool_use_behavior: object = "run_llm_again"
    run_hooks: object | None = None

    _instructions_requirement: Requirement | None = field(init=False, default=None, repr=False)
    _instructions_agent_parameter: str | None = field(init=False, default=None, repr=False)

    def __post_init__(self) -> None:
        if (
            not isinstance(self.name, str)
            or not self.name.strip()
            or self.name != self.name.strip()
        ):
            raise ConfigError(
                f"an agent's name must be a non-empty string without surrounding spaces; "
                f"got {self.name!r}",
                setting="name",
            )
        set_ = object.__setattr__
        set_(self, "tools", tuple(as_tool(entry) for entry in _names_list(self, "tools")))
        set_(self, "handoffs", _references(self, "handoffs", (Agent,)))
        set_(self, "subagents", _references(self, "subagents", (Agent, WorkflowDefinition)))
        if self.skills is not None:
            set_(self, "skills", _names(self, "skills"))
        set_(self, "mcp_servers", _names(self, "mcp_servers"))
        set_(self, "interrupt_on", _names(self, "interrupt_on"))
        if isinstance(self.model_settings, Mapping):
            set_(self, "model_settings", MappingProxyType(dict(self.model_settings)))
        set_(self, "input_guardrails", tuple(_names_list(self, "input_guardrails")))
        set_(self, "output_guardrails", tuple(_names_list(self, "output_guardrails")))
        if self.tool_errors not in _TOOL_ERRORS:
            raise ConfigError(
                f"agent '{self.name}': tool_errors= takes 'model' (the model receives an error "
                f"message and the run goes on) or 'fail' (the run fails); got "
                f"{self.tool_errors!r}",
                setting="tool_errors",
                accepted=list(_TOOL_ERRORS),
            )
        self._check_tool_use_behavior()
        if isinstance(self.run_hooks, type):
            raise ConfigError(
                f"agent '{self.name}': run_hooks= takes an instance, not the class "
                f"{self.run_hooks.__name__}; write run_hooks={self.run_hooks.__name__}()",
                setting="run_hooks",
            )
        if isinstance(self.hooks, type):
            raise ConfigError(
                f"agent '{self.name}': hooks= takes an instance, not the class "
                f"{self.hooks.__name__}; write hooks={self.hooks.__name__}()",
                setting="hooks",
            )
        self._check_tool_names()
        self._check_interrupt_on()
        self._read_instructions()

    # ------------------------------------------------------------------ construction checks

    def _check_tool_names(self) -> None:
        seen: dict[str, object] = {}
        for entry in self.tools:
            name = _tool_name(entry)
            if name is None:
                continue
            if name in seen:
                raise ConfigError(
                    f"agent '{self.name}' has two tools named '{name}' "
                    f"({_tool_label(seen[name])} and {_tool_label(entry)}); a model can call "
                    "only one of them, so rename one with @tool(name=...)",
                    setting="tools",
                )
            seen[name] = entry

    def _check_tool_use_behavior(self) -> None:
        behavior = self.tool_use_behavior
        if isinstance(behavior, str):
            if behavior not in _TOOL_USE_BEHAVIORS:
                raise ConfigError(
                    f"agent '{self.name}': tool_use_behavior={behavior!r} is not one of "
                    f"{', '.join(map(repr, _TOOL_USE_BEHAVIORS))} (or a StopAtTools mapping, or "
                    "a function)",
                    setting="tool_use_behavior",
                    accepted=list(_TOOL_USE_BEHAVIORS),
                )
            return
        if isinstance(behavior, Mapping):
            # Read-only here as everywhere else in a declaration; the engine copies it.
            object.__setattr__(self, "tool_use_behavior", MappingProxyType(dict(behavior)))
            return
        if not callable(behavior):
            raise ConfigError(
                f"agent '{self.name}': tool_use_behavior= takes 'run_llm_again', "
                f"'stop_on_first_tool', a StopAtTools mapping or a function; got "
                f"{type(behavior).__name__}",
                setting="tool_use_behavior",
            )

    def _check_interrupt_on(self) -> None:
        # Tools that only exist once an engine runs (MCP servers, engine-native objects without a
        # readable name) make the full set unknowable here; without them, a name that matches no
        # tool is a typo that would silently never ask for approval.
        if self.mcp_servers or any(_tool_name(entry) is None for entry in self.tools):
            return
        known = set(self.tool_names) | set(self.subagent_names)
        unknown = [name for name in self.interrupt_on if name not in known]
        if unknown:
            raise ConfigError(
                f"agent '{self.name}': interrupt_on names {', '.join(map(repr, unknown))}, "
                f"which is not one of its tools ({', '.join(sorted(known)) or 'none'})",
                setting="interrupt_on",
                accepted=sorted(known),
            )

    def _read_instructions(self) -> None:
        instructions = self.instructions
        if instructions is None or isinstance(instructions, str):
            return
        if not callable(instructions):
            raise ConfigError(
                f"agent '{self.name}': instructions= takes a string or a callable returning one; "
                f"got {type(instructions).__name__}",
                setting="instructions",
            )
        requirement = context_requirement(instructions)
        object.__setattr__(self, "_instructions_requirement", requirement)
        context_parameter = requirement.parameter if requirement is not None else None
        try:
            parameters = inspect.signature(instructions).parameters.values()
        except (TypeError, ValueError):
            return  # unreadable: it will be called with the agent alone, and stand or fall then
        others = [
            p
            for p in parameters
            if p.name != context_parameter
            and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
            and p.default is p.empty
        ]
        if len(others) > 1:
            raise ConfigError(
                f"agent '{self.name}': the instructions callable {callable_label(instructions)} "
                f"takes {', '.join(p.name for p in others)}; it may take a ToolCtx[...] "
                "parameter and one parameter for the agent, nothing else",
                setting="instructions",
            )
        if others:
            object.__setattr__(self, "_instructions_agent_parameter", others[0].name)

    # ------------------------------------------------------------------ reading the declaration

    @property
    def tool_names(self) -> tuple[str, ...]:
        """Names of the tools whose name is known before an engine runs."""
        return tuple(name for entry in self.tools if (name := _tool_name(entry)) is not None)

    @property
    def handoff_names(self) -> tuple[str, ...]:
        return tuple(_reference_name(ref) for ref in self.handoffs)

    @property
    def subagent_names(self) -> tuple[str, ...]:
        return tuple(_reference_name(ref) for ref in self.subagents)

    def approval_policy(self, tool_name: str) -> bool | ApprovalPolicy:
        """When a call to ``tool_name`` waits for a person: ``True`` always (``interrupt_on``,
        or the tool's own ``needs_approval=True``), ``False`` never, or the tool's per-call
        function, which the engine asks."""
        if tool_name in self.interrupt_on:
            return True
        for entry in self.tools:
            if isinstance(entry, Tool) and entry.name == tool_name:
                return entry.needs_approval
        return False

    def needs_approval(self, tool_name: str) -> bool:
        """Whether a call to ``tool_name`` may wait for a person (see :meth:`approval_policy`)."""
        return self.approval_policy(tool_name) is not False

    def context_sites(self) -> Iterator[tuple[str, Requirement]]:
        """Every place this agent injects a context, with what each requires.

        Walks the tools, the instructions callable and the hook methods; sites that declare no
        context are skipped, since nothing is injected there. An engine-native tool object is
        yielded as a deferred requirement: there is nothing in it to read.
        """
        for entry in self.tools:
            if isinstance(entry, Tool):
                if entry.context_requirement is not None:
                    yield f"tool '{entry.name}'", entry.context_requirement
            else:
                yield f"tool {_tool_label(entry)}", Requirement.deferred(_OPAQUE_TOOL)
        if self._instructions_requirement is not None:
            label = callable_label(self.instructions)
            yield f"instructions callable '{label}'", self._instructions_requirement
        for label, method in self._hook_methods():
            requirement = context_requirement(method)
            if requirement is not None:
                yield f"hook method '{label}'", requirement

    def _hook_methods(self) -> Iterator[tuple[str, Callable[..., Any]]]:
        hooks = self.hooks
        if hooks is None:
            return
        owner = type(hooks).__name__
        for name, raw in inspect.getmembers_static(type(hooks)):
            if name.startswith("_") or not (callable(raw) or isinstance(raw, staticmethod)):
                continue
            method = getattr(hooks, name, None)
            if callable(method):
                yield f"{owner}.{name}", method

    async def render_instructions(self, ctx: ToolCtx[Any] | None) -> str | None:
        """The instructions for one run: the string, or the callable's result for ``ctx``.

        The callable receives ``ctx`` in its context parameter (refusing by name when it declares
        one and the run carries none) and this agent in its other parameter, if it has one.
        """
        instructions = self.instructions
        if instructions is None or isinstance(instructions, str):
            return instructions
        kwargs: dict[str, Any] = {}
        requirement = self._instructions_requirement
        if requirement is not None and requirement.parameter is not None:
            if not isinstance(ctx, ToolCtx):
                site = f"instructions callable '{callable_label(instructions)}'"
                raise missing_context_error(site, requirement, ctx)
            kwargs[requirement.parameter] = ctx
        if self._instructions_agent_parameter is not None:
            kwargs[self._instructions_agent_parameter] = self
        result = instructions(**kwargs)
        if inspect.isawaitable(result):
            result = await result
        if not isinstance(result, str):
            raise ConfigError(
                f"agent '{self.name}': the instructions callable "
                f"{callable_label(instructions)} returned {type(result).__name__}, not a string",
                setting="instructions",
            )
        return result

    # ------------------------------------------------------------------ running headless

    async def run(
        self,
        input: str | ContentBlock | Sequence[ContentBlock | Mapping[str, Any]],
        *,
        settings: Settings | None = None,
        plugins: PluginHost | None = None,
        session: Any = None,
    ) -> Any:
        """Run this agent once, headless, and return the engine SDK's own result object.

        With the ``agentdeck-openai`` plugin that is the Agents SDK's ``RunResult``, from its own
        ``Runner.run``. Nothing of AgentDeck's contract is in the way: no ``Deck``, no Runtime,
        no run id, no event log, no observers, no run control, and no context, so a tool (or
        instructions callable, or hook) that declares a ``ToolCtx[...]`` refuses with a
        :class:`~agentdeck.errors.ContextTypeError` when it is reached. Nothing is recorded
        anywhere. ``Deck.run()`` is the path with the contract; this is the convenience for a
        script, a notebook or a unit test that wants the SDK's object.

        :param input: a string or content blocks, as ``deck.run`` takes for an agent.
        :param settings: the engine's settings (``OPENAI_*``, ``AGENTDECK_RUNNER_*``); default:
            the environment and ``config.yaml``, as a deck reads them.
        :param plugins: the plugin host to find the engine in (default: the installed plugins).
        :param session: the engine's own conversation memory to continue (an Agents SDK
            ``Session`` for the openai engine); default: a conversation of one turn.

        The engine is found through the plugin host, like a deck finds it: among the registered
        engines that declare headless runs (:class:`~agentdeck.ports.HeadlessEngine`; only those
        are imported), the one that ``accepts()`` this agent is built for ``settings`` and its
        ``run_headless(agent, input, session=...)`` is awaited. Raises
        :class:`~agentdeck.errors.PluginNotInstalledError` (an ``ImportError``) naming the
        distribution to install when no installed engine can.
        """
        host = plugins if plugins is not None else default_host()
        settings = settings if settings is not None else Settings.load()
        settings.register(*host.settings_sections())
        for engine in host.headless_engines(EngineRequest(settings=settings)):
            if engine.accepts(self):
                return await engine.run_headless(self, input, session=session)
        raise PluginNotInstalledError(
            attribute="run", module="agentdeck.Agent", distribution=_AGENT_ENGINE_DISTRIBUTION
        )

    def clone(self, **changes: Any) -> Agent:
        """A copy with ``changes`` applied, validated like a new declaration."""
        return replace(self, **changes)


# --------------------------------------------------------------------------- normalizing helpers


def _names_list(agent: Agent, setting: str) -> Sequence[object]:
    value = getattr(agent, setting)
    if isinstance(value, str | bytes) or not isinstance(value, Sequence | set | frozenset):
        raise ConfigError(
            f"agent '{agent.name}': {setting}= takes a list; got {type(value).__name__} "
            f"{value!r}" + (f" (write {setting}=[{value!r}])" if isinstance(value, str) else ""),
            setting=setting,
        )
    return list(value)


def _names(agent: Agent, setting: str) -> tuple[str, ...]:
    names = _names_list(agent, setting)
    for name in names:
        if not isinstance(name, str) or not name:
            raise ConfigError(
                f"agent '{agent.name}': {setting}= takes names (non-empty strings); got {name!r}",
                setting=setting,
            )
    return tuple(dict.fromkeys(names))  # type: ignore[arg-type]  # checked just above


def _references(agent: Agent, setting: str, kinds: tuple[type, ...]) -> tuple[Any, ...]:
    references = _names_list(agent, setting)
    for reference in references:
        if not (isinstance(reference, str) and reference) and not isinstance(reference, kinds):
            accepted = " or ".join(["names", *(k.__name__ for k in kinds)])
            raise ConfigError(
                f"agent '{agent.name}': {setting}= takes {accepted}; got {reference!r}",
                setting=setting,
            )
    return tuple(references)


def _reference_name(reference: Agent | WorkflowDefinition | str) -> str:
    return reference if isinstance(reference, str) else reference.name


def _tool_name(entry: object) -> str | None:
    name = getattr(entry, "name", None)
    return name if isinstance(name, str) and name else None


def _tool_label(entry: object) -> str:
    if isinstance(entry, Tool):
        return callable_label(entry.fn)
    name = _tool_name(entry)
    kind = type(entry).__name__
    return f"'{name}' ({kind})" if name else f"of type {kind}"
