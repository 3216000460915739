"""``@workflow``: an imperative ``async def`` body, declared without any engine.

A body is ordinary Python that receives its input as its own parameters and, if it declares one,
a :class:`~agentdeck.authoring.context.WorkflowCtx` through which it asks questions, journals steps
and reports progress. The decorator only records what the body is; an engine (the core's native one)
plays it. Its input binds the way calling it would (:func:`bind_input`), and :func:`code_digest`
fingerprints its code so a durable engine can refuse to replay a run onto changed code.
"""

from __future__ import annotations

import hashlib
import inspect
import marshal
import textwrap
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, overload

from agentdeck.authoring.context import ToolCtx
from agentdeck.authoring.context_check import (
    Requirement,
    callable_label,
    context_requirement,
    missing_context_error,
)
from agentdeck.authoring.input_types import InputTypes, input_types
from agentdeck.authoring.tools import first_paragraph
from agentdeck.errors import ConfigError, InvalidInputError

__all__ = ["WorkflowDefinition", "bind_input", "code_digest", "workflow"]

WorkflowBody = Callable[..., Coroutine[Any, Any, Any]]


@dataclass(frozen=True, slots=True, eq=False)
class WorkflowDefinition:
    """What ``@workflow`` records about a body: its name, the body itself, what it takes.

    ``params`` are the body's input parameters in order, the context parameter excluded;
    ``accepts_extra`` is true when the body also takes ``**kwargs``. Calling the definition calls
    the body unchanged, so a body stays testable with a hand-made context.
    """

    name: str
    fn: WorkflowBody
    description: str = ""
    context_requirement: Requirement | None = None
    params: tuple[str, ...] = ()
    required_params: tuple[str, ...] = ()
    accepts_extra: bool = False
    positional_only: tuple[str, ...] = ()
    input_types: InputTypes | None = None
    """How each annotated parameter's value is checked (and converted) before a run starts."""

    __agentdeck_workflow__ = "native"
    """Marks a workflow definition for project discovery; plugin-defined kinds set their own."""

    def __call__(self, *args: Any, **kwargs: Any) -> Coroutine[Any, Any, Any]:
        return self.fn(*args, **kwargs)

    async def call(self, bound: Mapping[str, Any], ctx: ToolCtx[Any] | None) -> Any:
        """Run the body with ``bound`` (from :func:`bind_input`) and ``ctx`` injected.

        A body that declares a context refuses to run without one, naming itself, rather than
        failing short an argument.
        """
        values = dict(bound)
        requirement = self.context_requirement
        if requirement is not None and requirement.parameter is not None:
            if not isinstance(ctx, ToolCtx):
                raise missing_context_error(f"workflow '{self.name}'", requirement, ctx)
            values[requirement.parameter] = ctx
        positional = [values.pop(name) for name in self.positional_only if name in values]
        return await self.fn(*positional, **values)


@overload
def workflow(fn: WorkflowBody, /) -> WorkflowDefinition: ...


@overload
def workflow(
    *, name: str | None = None, description: str | None = None
) -> Callable[[WorkflowBody], WorkflowDefinition]: ...


def workflow(
    fn: WorkflowBody | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
) -> WorkflowDefinition | Callable[[WorkflowBody], WorkflowDefinition]:
    """Declare an ``async def`` body as a workflow; usable bare or as ``@workflow(name=...)``.

    The name defaults to the function's name and the description to its docstring's first
    paragraph. A plain ``def`` is refused: a body awaits its context's operations, and a sync one
    would block the event loop every run shares.
    """

    def decorate(body: WorkflowBody) -> WorkflowDefinition:
        return _define(body, name=name, description=description)

    return decorate if fn is None else decorate(fn)


def _define(body: WorkflowBody, *, name: str | None, description: str | None) -> WorkflowDefinition:
    label = callable_label(body)
    if not inspect.iscoroutinefunction(body):
        raise ConfigError(
            f"@workflow needs an 'async def' body; {label} is "
            + ("an async generator" if inspect.isasyncgenfunction(body) else "not a coroutine")
            + " function",
            setting="workflows",
        )
    workflow_name = name if name is not None else body.__name__
    if not isinstance(workflow_name, str):
        raise ConfigError(
            f"workflow name must be a string, not {type(workflow_name).__name__}", setting="name"
        )
    if not workflow_name.strip() or workflow_name != workflow_name.strip():
        raise ConfigError(
            f"workflow name {workflow_name!r} must be non-empty, without surrounding spaces",
            setting="name",
        )
    requirement = context_requirement(body)
    context_parameter = requirement.parameter if requirement is not None else None
    params: list[str] = []
    required: list[str] = []
    positional_only: list[str] = []
    accepts_extra = False
    for parameter in inspect.signature(body).parameters.values():
        if parameter.name == context_parameter:
            continue
        if parameter.kind is parameter.VAR_POSITIONAL:
            raise ConfigError(
                f"workflow '{workflow_name}' ({label}) takes *{parameter.name}; input binds by "
                "name, so declare each parameter",
                setting="workflows",
            )
        if parameter.kind is parameter.VAR_KEYWORD:
            accepts_extra = True
            continue
        params.append(parameter.name)
        if parameter.default is parameter.empty:
            required.append(parameter.name)
        if parameter.kind is parameter.POSITIONAL_ONLY:
            positional_only.append(parameter.name)
    return WorkflowDefinition(
        name=workflow_name,
        fn=body,
        description=description
        if description is not None
        else first_paragraph(inspect.getdoc(body) or ""),
        context_requirement=requirement,
        params=tuple(params),
        required_params=tuple(required),
        accepts_extra=accepts_extra,
        positional_only=tuple(positional_only),
        input_types=input_types(body, workflow_name, params, exclude=context_parameter),
    )


_NOT_MAPPINGS: frozenset[type] = frozenset({type(None), bool, int, float, str, list})


def bind_input(definition: WorkflowDefinition, value: Any) -> dict[str, Any]:
    """Bind a run's input to the body's parameters, the way calling the body would.

    The rules, in order:

    * A body with exactly one input parameter (and no ``**kwargs``) takes the input *whole*,
      whatever it is, a mapping included. The one exception is a mapping whose only key is that
      parameter's name, which binds by name: ``{"order_id": "A-1"}`` gives ``order_id="A-1"``
      either way, which is what a caller addressing the parameter means. (To pass such a mapping
      whole, wrap it: ``{"order_id": {"order_id": ...}}``.) ``None`` leaves a defaulted
      parameter to its default and is otherwise passed as ``None``.
    * A body with no input parameters takes ``None`` or an empty mapping, nothing else.
    * Any other body takes a mapping that names exactly its parameters: every one without a
      default, and no key it does not declare (unless it takes ``**kwargs``). ``None`` reads as
      an empty mapping.

    The context parameter is never bound from input: it is the engine's to inject. Each bound
    value is then checked against its parameter's annotation and converted the way
    ``pydantic.validate_call`` would (``"5"`` for an ``int`` is ``5``, an ISO string for a
    ``datetime`` a ``datetime``, a mapping for a model that model); an unannotated or ``Any``
    parameter gets its value as given. Raises :class:`InvalidInputError` naming the missing or
    unknown parameters and what the body takes, or the parameter whose value does not fit its
    type and the type it expects.
    """
    return _typed(definition, _bound(definition, value))


def _typed(definition: WorkflowDefinition, bound: dict[str, Any]) -> dict[str, Any]:
    types = definition.input_types
    return bound if types is None else types.check(bound)


def _bound(definition: WorkflowDefinition, value: Any) -> dict[str, Any]:
    """:func:`bind_input` before the annotations are applied."""
    params = definition.params
    if len(params) == 1 and not definition.accepts_extra:
        only = params[0]
        if type(value) in _NOT_MAPPINGS:  # the common input, without an ABC check that misses
            if value is None and only not in definition.required_params:
                return {}
            return {only: value}
        if isinstance(value, Mapping) and set(value) == {only}:
            return {only: value[only]}
        if value is None and only not in definition.required_params:
            return {}
        return {only: value}
    if not params and not definition.accepts_extra:
        if value is None or (isinstance(value, Mapping) and not value):
            return {}
        raise InvalidInputError(
            f"workflow '{definition.name}' takes no input, but was given {type(value).__name__}",
            name=definition.name,
        )
    if value is None:
        value = {}
    if not isinstance(value, Mapping):
        raise InvalidInputError(
            f"workflow '{definition.name}' takes {_describe_params(definition)}, so its input "
            f"must be a mapping of parameter names to values, not {type(value).__name__}",
            name=definition.name,
        )
    non_string = [key for key in value if not isinstance(key, str)]
    if non_string:
        raise InvalidInputError(
            f"workflow '{definition.name}' input keys must be parameter names (strings); "
            f"got {non_string[0]!r}",
            name=definition.name,
        )
    unknown = [] if definition.accepts_extra else [key for key in value if key not in params]
    missing = [name for name in definition.required_params if name not in value]
    problems = []
    if missing:
        problems.append(f"missing {_quoted(missing)}")
    if unknown:
        problems.append(f"unknown {_quoted(unknown)}")
    if problems:
        raise InvalidInputError(
            f"workflow '{definition.name}' input does not fit its parameters: "
            f"{' and '.join(problems)}; it takes {_describe_params(definition)}",
            name=definition.name,
            field=(missing or unknown)[0],
        )
    return dict(value)


def code_digest(definition: WorkflowDefinition | Callable[..., Any]) -> str:
    """A sha256 fingerprint of the body's code, to tell a replay its code has changed.

    Computed over the dedented source text, so moving a body within its file or re-indenting it
    keeps the digest while any edit to it changes it. Where there is no source (a body built at
    runtime, a stripped install) it falls back to the compiled bytecode, which is stable for one
    Python version.
    """
    fn = definition.fn if isinstance(definition, WorkflowDefinition) else definition
    fn = inspect.unwrap(fn)
    try:
        material = textwrap.dedent(inspect.getsource(fn)).encode("utf-8")
    except (OSError, TypeError):
        code = getattr(fn, "__code__", None)
        if code is None:
            raise ConfigError(
                f"cannot fingerprint {callable_label(fn)}: it has neither source nor bytecode"
            ) from None
        material = marshal.dumps(code.replace(co_filename="", co_firstlineno=1))
    return hashlib.sha256(material).hexdigest()


def _describe_params(definition: WorkflowDefinition) -> str:
    if not definition.params:
        return "no input"
    described = []
    for name in definition.params:
        described.append(name if name in definition.required_params else f"{name} (optional)")
    extra = " and any other keys" if definition.accepts_extra else ""
    return f"{', '.join(described)}{extra}"


def _quoted(names: list[str]) -> str:
    return ", ".join(f"'{name}'" for name in names)
