"""Tools: plain Python functions an agent's model may call, declared without any engine SDK.

``@tool`` (or simply listing a function in ``Agent(tools=[...])`` — "the tools are undecorated"
is a supported style) compiles a function into a :class:`Tool`: a name, a description, the JSON
schema of its arguments, and an :meth:`Tool.invoke` any engine can call with the model's
arguments. The schema is generated from the signature by pydantic and leaves out the context
parameter: the model is offered only the arguments it can actually supply, and the engine injects
the run's :class:`~agentdeck.authoring.context.ToolCtx` itself.

Anything else in ``tools=`` (an engine's own tool object, already built) is kept as it is for the
engine that understands it; there is nothing in it to introspect, so its context check defers.

Two policies travel with a tool for the engine to apply, in the shapes the OpenAI Agents SDK
gives them, so a function tool ported from it keeps its meaning: ``needs_approval`` (``True``, or
a function asked per call) and ``failure_error_function`` (what the model is told when the body
raises, or ``None`` to fail the run; unset, the agent's ``tool_errors`` decides).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from functools import partial
from typing import Annotated, Any, Final, get_args, get_origin, overload

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic.errors import PydanticSchemaGenerationError, PydanticUserError

from agentdeck.authoring.context import ToolCtx
from agentdeck.authoring.context_check import (
    Requirement,
    callable_label,
    context_requirement,
    is_unresolved,
    missing_context_error,
    parameter_annotations,
)
from agentdeck.authoring.docstrings import first_paragraph, parameter_docs
from agentdeck.errors import ConfigError, InvalidInputError

__all__ = [
    "ApprovalPolicy",
    "Tool",
    "ToolErrorFunction",
    "as_tool",
    "first_paragraph",
    "tool",
]

_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""The name shape every mainstream model API accepts for a function tool."""

ApprovalPolicy = Callable[[ToolCtx[Any], dict[str, Any], str], bool | Awaitable[bool]]
"""``needs_approval`` as a function deciding per call: ``(ctx, args, call_id) -> bool`` (sync
or async), the shape the OpenAI Agents SDK calls its own with. ``ctx`` is the call's
:class:`ToolCtx` (its ``data`` the run's context), ``args`` the model's parsed arguments."""

ToolErrorFunction = Callable[[ToolCtx[Any], Exception], str | Awaitable[str]]
"""``failure_error_function``: ``(ctx, error) -> str`` (sync or async), the text the model
receives instead of the result when the tool raised ``error`` (the SDK's shape too)."""


class _Default(Enum):
    """The type of :data:`DEFAULT_ERRORS`."""

    DEFAULT = "default"


DEFAULT_ERRORS: Final = _Default.DEFAULT
"""``failure_error_function`` left unset: the agent's ``tool_errors`` policy applies."""


@dataclass(frozen=True, slots=True, eq=False)
class Tool:
    """A function compiled for a model: what it is called, what it does, what it takes.

    Calling the ``Tool`` itself calls the wrapped function unchanged, so a decorated function
    stays testable as the function it was.
    """

    name: str
    description: str
    params_json_schema: Mapping[str, Any]
    """JSON schema of the arguments object: ``additionalProperties: false``, every property
    required unless it has a default, the context parameter absent."""
    fn: Callable[..., Any]
    context_requirement: Requirement | None = None
    needs_approval: bool | ApprovalPolicy = False
    """``True``: every call waits for a person's approval (``Agent(interrupt_on=[...])`` says the
    same per agent); an :data:`ApprovalPolicy` function: the engine asks it per call, and only a
    call it answers ``True`` for waits."""
    failure_error_function: ToolErrorFunction | _Default | None = DEFAULT_ERRORS
    """What happens when the body raises: a :data:`ToolErrorFunction` gives the text the model
    receives (and the run goes on); ``None`` fails the run (``tool_error``); unset
    (:data:`DEFAULT_ERRORS`), the agent's ``tool_errors`` decides."""
    _arguments: type[BaseModel] = field(default=BaseModel, repr=False)
    _positional_only: tuple[str, ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        _check_approval(self.name, self.needs_approval)
        _check_error_function(self.name, self.failure_error_function)

    @classmethod
    def from_function(
        cls,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        needs_approval: bool | ApprovalPolicy = False,
        failure_error_function: ToolErrorFunction | _Default | None = DEFAULT_ERRORS,
    ) -> Tool:
        """Compile ``fn``: name from ``__name__``, description from the docstring's first
        paragraph, argument schema from the signature, each parameter's description from the
        docstring (Google, NumPy or Sphinx style; see :mod:`agentdeck.authoring.docstrings`)
        or else from a string in its ``Annotated[...]`` annotation."""
        if not callable(fn):
            raise ConfigError(f"a tool wraps a function; got {type(fn).__name__}")
        tool_name = name if name is not None else _function_name(fn)
        if not isinstance(tool_name, str) or not _TOOL_NAME.match(tool_name):
            raise ConfigError(
                f"tool name {tool_name!r} is not accepted by model APIs: use 1 to 64 letters, "
                "digits, '_' or '-'",
                setting="name",
            )
        docstring = inspect.getdoc(fn.func if isinstance(fn, partial) else fn) or ""
        requirement = context_requirement(fn)
        arguments, positional_only = _arguments_model(
            fn, tool_name, requirement, parameter_docs(docstring)
        )
        return cls(
            name=tool_name,
            description=description if description is not None else first_paragraph(docstring),
            params_json_schema=_strict_schema(arguments, tool_name),
            fn=fn,
            context_requirement=requirement,
            needs_approval=needs_approval,
            failure_error_function=failure_error_function,
            _arguments=arguments,
            _positional_only=positional_only,
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    async def invoke(self, args: Mapping[str, Any] | None, ctx: ToolCtx[Any] | None) -> Any:
        """Validate the model's ``args``, inject ``ctx`` where declared, and run the function.

        A sync function runs inline on the event loop rather than on a worker thread: tools are
        expected to be quick, a thread hop per call costs more than most tools take, and a tool
        that does block can be written ``async`` (or hop to a thread itself). This is a
        deliberate choice to revisit if slow sync tools turn out to be common.

        Raises :class:`InvalidInputError` naming the tool and the bad fields when the arguments
        do not fit, and :class:`~agentdeck.errors.ContextTypeError` when the tool declares a
        context and the run carries none (a run started outside a Deck).
        """
        try:
            validated = self._arguments.model_validate(dict(args or {}))
        except ValidationError as invalid:
            raise _invalid_arguments(self.name, invalid) from None
        values = {
            info.alias or attribute: getattr(validated, attribute)
            for attribute, info in type(validated).model_fields.items()
        }
        requirement = self.context_requirement
        if requirement is not None and requirement.parameter is not None:
            if not isinstance(ctx, ToolCtx):
                raise missing_context_error(f"tool '{self.name}'", requirement, ctx)
            values[requirement.parameter] = ctx
        positional = [values.pop(name) for name in self._positional_only]
        result = self.fn(*positional, **values)
        if inspect.isawaitable(result):
            result = await result
        return result

    def with_options(
        self,
        *,
        name: str | None = None,
        description: str | None = None,
        needs_approval: bool | ApprovalPolicy | None = None,
        failure_error_function: ToolErrorFunction | _Default | None = DEFAULT_ERRORS,
    ) -> Tool:
        """A copy with another name, description, approval policy or error handling; the schema
        is unchanged. An argument left out keeps what this tool has."""
        if name is not None and not _TOOL_NAME.match(name):
            raise ConfigError(f"tool name {name!r} is not accepted by model APIs", setting="name")
        return replace(
            self,
            name=self.name if name is None else name,
            description=self.description if description is None else description,
            needs_approval=self.needs_approval if needs_approval is None else needs_approval,
            failure_error_function=(
                self.failure_error_function
                if failure_error_function is DEFAULT_ERRORS
                else failure_error_function
            ),
        )


@overload
def tool(fn: Callable[..., Any], /) -> Tool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    needs_approval: bool | ApprovalPolicy = False,
    failure_error_function: ToolErrorFunction | _Default | None = DEFAULT_ERRORS,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    needs_approval: bool | ApprovalPolicy = False,
    failure_error_function: ToolErrorFunction | _Default | None = DEFAULT_ERRORS,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Declare a function (sync or async) as a tool; usable bare or as ``@tool(name=...)``.

    ``needs_approval``: ``True`` makes every call wait for a person; a function
    ``(ctx, args, call_id) -> bool`` is asked per call. ``failure_error_function``: what the
    model receives when the body raises (a function ``(ctx, error) -> str``), or ``None`` to
    fail the run instead; unset, the agent's ``tool_errors`` decides.
    """

    def decorate(target: Callable[..., Any]) -> Tool:
        if isinstance(target, Tool):
            return target.with_options(
                name=name,
                description=description,
                needs_approval=needs_approval or None,
                failure_error_function=failure_error_function,
            )
        return Tool.from_function(
            target,
            name=name,
            description=description,
            needs_approval=needs_approval,
            failure_error_function=failure_error_function,
        )

    return decorate if fn is None else decorate(fn)


def as_tool(obj: object) -> Tool | object:
    """Normalize one entry of ``Agent(tools=[...])``.

    A :class:`Tool` is kept; a plain function, bound method or ``functools.partial`` is compiled
    exactly as ``@tool`` would; anything else is an engine's own tool object, kept as-is for the
    engine that understands it. A callable *object* is treated as engine-native too (SDK tool
    objects are often callable): wrap it in ``tool(obj)`` to have it compiled instead.
    """
    if isinstance(obj, Tool):
        return obj
    if obj is None or isinstance(obj, str | bytes):
        raise ConfigError(
            f"tools= takes functions, @tool declarations or engine-native tool objects, not "
            f"{obj!r}; name an agent or workflow in subagents= and an MCP server in mcp_servers=",
            setting="tools",
        )
    if inspect.isfunction(obj) or inspect.ismethod(obj) or isinstance(obj, partial):
        return Tool.from_function(obj)
    return obj


# --------------------------------------------------------------------------- checks


def _check_approval(tool_name: str, policy: object) -> None:
    if isinstance(policy, bool):
        return
    if not callable(policy):
        raise ConfigError(
            f"tool '{tool_name}': needs_approval= takes True/False or a function "
            f"(ctx, args, call_id) -> bool; got {type(policy).__name__}",
            setting="needs_approval",
        )
    _check_arity(tool_name, policy, 3, "needs_approval", "(ctx, args, call_id) -> bool")


def _check_error_function(tool_name: str, handler: object) -> None:
    if handler is None or handler is DEFAULT_ERRORS:
        return
    if not callable(handler):
        raise ConfigError(
            f"tool '{tool_name}': failure_error_function= takes a function (ctx, error) -> str, "
            f"or None to fail the run; got {type(handler).__name__}",
            setting="failure_error_function",
        )
    _check_arity(tool_name, handler, 2, "failure_error_function", "(ctx, error) -> str")


def _check_arity(
    tool_name: str, fn: Callable[..., Any], count: int, setting: str, shape: str
) -> None:
    """Refuse, when the tool is declared, a function the engine could not call with ``count``
    positional arguments (rather than at its first call, mid-run)."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return  # unreadable (a builtin, some C callables): it stands or falls when called
    try:
        signature.bind(*([None] * count))
    except TypeError:
        raise ConfigError(
            f"tool '{tool_name}': {setting}= is called as {shape}, but "
            f"{callable_label(fn)} takes {signature}",
            setting=setting,
        ) from None


# --------------------------------------------------------------------------- schema building


def _function_name(fn: Callable[..., Any]) -> str:
    target = fn.func if isinstance(fn, partial) else fn
    return str(getattr(target, "__name__", type(target).__name__))


def _arguments_model(
    fn: Callable[..., Any],
    tool_name: str,
    requirement: Requirement | None,
    descriptions: Mapping[str, str],
) -> tuple[type[BaseModel], tuple[str, ...]]:
    """A pydantic model of the arguments the model supplies (every parameter but the context).

    Fields get neutral internal names and the parameter's name as alias, so a parameter called
    ``json`` or ``model_config`` cannot collide with pydantic's own attributes.
    """
    signature = inspect.signature(fn)
    hints = parameter_annotations(fn, signature)
    context_parameter = requirement.parameter if requirement is not None else None
    fields: dict[str, Any] = {}
    positional_only: list[str] = []
    for index, (name, parameter) in enumerate(signature.parameters.items()):
        if name == context_parameter:
            continue
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise ConfigError(
                f"tool '{tool_name}' ({callable_label(fn)}) takes *{name}; a model fills named "
                "arguments only, so declare each one",
                setting="tools",
            )
        if parameter.kind is parameter.POSITIONAL_ONLY:
            positional_only.append(name)
        annotation = hints.get(name, Any)
        if is_unresolved(annotation):
            raise ConfigError(
                f"tool '{tool_name}' ({callable_label(fn)}): the annotation of parameter "
                f"'{name}' cannot be resolved when the tool is declared; import its type at "
                "module level",
                setting="tools",
            )
        default = ... if parameter.default is parameter.empty else parameter.default
        # The docstring's description first, then a bare string in ``Annotated[...]`` (the
        # order the Agents SDK reads them in). Only a found description is passed:
        # ``description=None`` would erase one given through ``Annotated[..., Field(...)]``.
        described = descriptions.get(name) or _annotated_description(annotation)
        fields[f"p{index}"] = (
            annotation,
            Field(default, alias=name, description=described)
            if described
            else Field(default, alias=name),
        )
    config = ConfigDict(extra="forbid", arbitrary_types_allowed=False, populate_by_name=False)
    try:
        model = create_model(f"{tool_name}_arguments", __config__=config, **fields)
    except (PydanticSchemaGenerationError, PydanticUserError, TypeError, NameError) as bad:
        raise ConfigError(
            f"tool '{tool_name}' ({callable_label(fn)}) has a parameter whose type pydantic "
            f"cannot validate: {bad}",
            setting="tools",
        ) from bad
    return model, tuple(positional_only)


def _annotated_description(annotation: Any) -> str | None:
    """The first string among ``Annotated[T, ...]`` metadata (nested ``Annotated`` included)."""
    while get_origin(annotation) is Annotated:
        base, *metadata = get_args(annotation)
        for item in metadata:
            if isinstance(item, str):
                return item
        annotation = base
    return None


def _strict_schema(arguments: type[BaseModel], tool_name: str) -> dict[str, Any]:
    try:
        schema = arguments.model_json_schema(by_alias=True)
    except Exception as bad:  # pydantic raises several types for types with no JSON form
        raise ConfigError(
            f"tool '{tool_name}' has a parameter with no JSON schema: {bad}", setting="tools"
        ) from bad
    schema.pop("title", None)
    schema.setdefault("properties", {})
    schema.setdefault("required", [])
    _close_objects(schema)
    return schema


def _close_objects(node: Any) -> None:
    """``additionalProperties: false`` on every object with declared properties (strict mode)."""
    if isinstance(node, dict):
        if node.get("type") == "object" and "properties" in node:
            node.setdefault("additionalProperties", False)
        for value in node.values():
            _close_objects(value)
    elif isinstance(node, list):
        for value in node:
            _close_objects(value)


def _invalid_arguments(tool_name: str, invalid: ValidationError) -> InvalidInputError:
    problems = []
    for error in invalid.errors(include_url=False, include_input=False):
        location = ".".join(str(part) for part in error["loc"]) or "(arguments)"
        problems.append(f"{location}: {error['msg']}")
    first = invalid.errors()[0]["loc"] if invalid.errors() else ()
    return InvalidInputError(
        f"arguments for tool '{tool_name}' do not fit its parameters: {'; '.join(problems)}",
        name=tool_name,
        field=str(first[0]) if first else None,
    )
