"""Tools: plain Python functions an agent's model may call, declared without any engine SDK.

``@tool`` (or simply listing a function in ``Agent(tools=[...])`` — "the tools are undecorated"
is a supported style) compiles a function into a :class:`Tool`: a name, a description, the JSON
schema of its arguments, and an :meth:`Tool.invoke` any engine can call with the model's
arguments. The schema is generated from the signature by pydantic and leaves out the context
parameter: the model is offered only the arguments it can actually supply, and the engine injects
the run's :class:`~agentdeck.authoring.context.ToolCtx` itself.

Anything else in ``tools=`` (an engine's own tool object, already built) is kept as it is for the
engine that understands it; there is nothing in it to introspect, so its context check defers.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, overload

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
from agentdeck.errors import ConfigError, InvalidInputError

__all__ = ["Tool", "as_tool", "first_paragraph", "tool"]

_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""The name shape every mainstream model API accepts for a function tool."""


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
    needs_approval: bool = False
    """Whether every call waits for a person's approval (``Agent(interrupt_on=[...])`` says the
    same per agent)."""
    _arguments: type[BaseModel] = field(default=BaseModel, repr=False)
    _positional_only: tuple[str, ...] = field(default=(), repr=False)

    @classmethod
    def from_function(
        cls,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        needs_approval: bool = False,
    ) -> Tool:
        """Compile ``fn``: name from ``__name__``, description from the docstring's first
        paragraph, argument schema from the signature."""
        if not callable(fn):
            raise ConfigError(f"a tool wraps a function; got {type(fn).__name__}")
        tool_name = name if name is not None else _function_name(fn)
        if not _TOOL_NAME.match(tool_name):
            raise ConfigError(
                f"tool name {tool_name!r} is not accepted by model APIs: use 1 to 64 letters, "
                "digits, '_' or '-'",
                setting="name",
            )
        docstring = inspect.getdoc(fn.func if isinstance(fn, partial) else fn) or ""
        requirement = context_requirement(fn)
        arguments, positional_only = _arguments_model(
            fn, tool_name, requirement, _parameter_docs(docstring)
        )
        return cls(
            name=tool_name,
            description=description if description is not None else first_paragraph(docstring),
            params_json_schema=_strict_schema(arguments, tool_name),
            fn=fn,
            context_requirement=requirement,
            needs_approval=needs_approval,
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
        needs_approval: bool | None = None,
    ) -> Tool:
        """A copy with another name, description or approval policy; the schema is unchanged."""
        if name is not None and not _TOOL_NAME.match(name):
            raise ConfigError(f"tool name {name!r} is not accepted by model APIs", setting="name")
        return replace(
            self,
            name=self.name if name is None else name,
            description=self.description if description is None else description,
            needs_approval=self.needs_approval if needs_approval is None else needs_approval,
        )


@overload
def tool(fn: Callable[..., Any], /) -> Tool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    needs_approval: bool = False,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    needs_approval: bool = False,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Declare a function (sync or async) as a tool; usable bare or as ``@tool(name=...)``."""

    def decorate(target: Callable[..., Any]) -> Tool:
        if isinstance(target, Tool):
            return target.with_options(
                name=name, description=description, needs_approval=needs_approval or None
            )
        return Tool.from_function(
            target, name=name, description=description, needs_approval=needs_approval
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


def first_paragraph(docstring: str) -> str:
    """The docstring's summary: its first paragraph, joined into one line."""
    paragraph: list[str] = []
    for line in inspect.cleandoc(docstring).splitlines():
        if not line.strip():
            if paragraph:
                break
            continue
        if _SECTION.match(line):
            break
        paragraph.append(line.strip())
    return " ".join(paragraph)


# --------------------------------------------------------------------------- schema building

_SECTION = re.compile(r"^\s*(Args|Arguments|Parameters|Params|Returns|Raises)\s*:\s*$")
_ARGS_SECTION = re.compile(r"^(\s*)(Args|Arguments|Parameters|Params)\s*:\s*$")
_GOOGLE_ARG = re.compile(r"^(\s+)\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_SPHINX_PARAM = re.compile(r"^\s*:param\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)$")


def _parameter_docs(docstring: str) -> dict[str, str]:
    """Per-parameter descriptions from a Google-style ``Args:`` section or ``:param x:`` lines."""
    docs: dict[str, str] = {}
    lines = inspect.cleandoc(docstring).splitlines()
    current: str | None = None
    arg_indent: int | None = None
    in_args = False
    for line in lines:
        if sphinx := _SPHINX_PARAM.match(line):
            current, docs[sphinx[1]] = sphinx[1], sphinx[2].strip()
            continue
        if _ARGS_SECTION.match(line):
            in_args, current, arg_indent = True, None, None
            continue
        if not in_args:
            continue
        if line.strip() and not line.startswith((" ", "\t")):
            in_args = False  # the next section began
            continue
        google = _GOOGLE_ARG.match(line)
        indent = len(line) - len(line.lstrip())
        if google and (arg_indent is None or indent <= arg_indent):
            arg_indent = indent
            current, docs[google[2]] = google[2], google[3].strip()
        elif current is not None and line.strip():
            docs[current] = f"{docs[current]} {line.strip()}".strip()
    return docs


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
        # Only a docstring description is passed: ``description=None`` would erase one given
        # through ``Annotated[..., Field(description=...)]``.
        described = name in descriptions
        fields[f"p{index}"] = (
            annotation,
            Field(default, alias=name, description=descriptions[name])
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
