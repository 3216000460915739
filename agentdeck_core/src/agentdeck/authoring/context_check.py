"""The build-time check of who asks for which context type, and the errors it raises.

A tool, a dynamic-instructions callable, an agent hook or a ``@workflow`` body asks for the
run's context by declaring one parameter annotated with a handle of
:mod:`agentdeck.authoring.context` (``ToolCtx[T]``, ``WorkflowCtx[T]``, ``Context[T]``).
:func:`context_requirement` finds that parameter by its annotation and says what it requires;
``Deck(context=SomeType)`` declares the type every run will carry
(:func:`validate_context_declaration`), so ``build()`` can compare the two before anything runs.

The comparison answers only what the *runtime* can decide (``issubclass`` on classes, runtime
ABCs and runtime-checkable protocols); where no runtime answer exists it defers rather than
guessing, since refusing on a guess would reject builds a static checker would pass.
:func:`check_context` is that table, row for row. Engines use the same helpers to name a
callable in an error and to refuse a call made without a run context.
"""

from __future__ import annotations

import builtins
import inspect
import re
import types
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import partial
from typing import Any, TypeVar

from agentdeck.authoring.context import ToolCtx
from agentdeck.errors import ConfigError, ContextTypeError

__all__ = [
    "Requirement",
    "Verdict",
    "callable_label",
    "check_context",
    "context_requirement",
    "is_unresolved",
    "missing_context_error",
    "parameter_annotations",
    "refuse_incompatible",
    "type_label",
    "validate_context_declaration",
]


class Verdict(StrEnum):
    """The answer to "does the declared context type satisfy this requirement"."""

    COMPATIBLE = "compatible"
    INCOMPATIBLE = "incompatible"
    DEFERRED = "deferred"
    """No runtime answer exists: accepted now, decided when the callable runs."""

    @property
    def accepted(self) -> bool:
        return self is not Verdict.INCOMPATIBLE


@dataclass(frozen=True, slots=True)
class Requirement:
    """One callable's demand for a context: which parameter, which handle, which type.

    ``required`` is the type inside the brackets (``Any`` for a bare ``ToolCtx``).
    ``deferred_reason`` is set when the demand cannot be judged at build time at all (a signature
    that cannot be read, an annotation naming something not importable then, an engine-native
    object); such a requirement is accepted by every declaration.
    """

    parameter: str | None
    required: Any = Any
    handle: type[ToolCtx[Any]] = ToolCtx
    deferred_reason: str | None = None

    @classmethod
    def deferred(cls, reason: str, *, parameter: str | None = None) -> Requirement:
        return cls(parameter=parameter, deferred_reason=reason)

    @property
    def is_deferred(self) -> bool:
        return self.deferred_reason is not None

    def describe(self) -> str:
        """The requirement as a reader would write it: ``ToolCtx[Calendar]``."""
        if self.deferred_reason is not None and self.required is Any:
            return f"a context it cannot be checked against ({self.deferred_reason})"
        handle = self.handle.__name__
        return handle if self.required is Any else f"{handle}[{type_label(self.required)}]"

    def check(self, provided: Any) -> Verdict:
        """Judge ``provided`` (the deck's declared context type) against this requirement."""
        if self.deferred_reason is not None:
            return Verdict.DEFERRED
        return check_context(self.required, provided)


def context_requirement(fn: Callable[..., Any]) -> Requirement | None:
    """The context ``fn`` asks for, or ``None`` when it declares no context parameter.

    The parameter is found by its annotation (``ToolCtx[X]``, ``Context[X]``, ``WorkflowCtx[X]``,
    bare or ``[Any]``, also inside ``Annotated`` or ``| None``), never by its name, so a parameter
    called ``ctx`` that is annotated ``str`` is an ordinary argument. String annotations are
    resolved against the callable's module; a name that does not resolve yet (a class defined
    later, or only under ``TYPE_CHECKING``) keeps the parameter recognised and defers the check.
    Declaring two context parameters is a :class:`ConfigError`: only one can be injected.
    """
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return Requirement.deferred("its signature cannot be read")
    annotations = parameter_annotations(fn, signature)
    found: list[Requirement] = []
    for name in signature.parameters:
        requirement = _requirement_from_annotation(name, annotations.get(name))
        if requirement is not None:
            found.append(requirement)
    if len(found) > 1:
        names = ", ".join(f"'{r.parameter}'" for r in found)
        raise ConfigError(
            f"{callable_label(fn)} declares {len(found)} context parameters ({names}); "
            "a callable receives one context, so declare exactly one"
        )
    return found[0] if found else None


def callable_label(fn: object) -> str:
    """How an error names a callable: its qualified name from the innermost enclosing scope.

    ``Hooks.on_start`` for a method, ``find_slots`` for a function, even when either was
    defined inside another function (no ``outer.<locals>.`` prefix).
    """
    target = fn.func if isinstance(fn, partial) else fn
    name = getattr(target, "__qualname__", None) or getattr(target, "__name__", None)
    if name is None:
        name = type(target).__qualname__
    return str(name).rpartition("<locals>.")[2]


# --------------------------------------------------------------------------- annotation reading


class _UnresolvedMeta(type):
    """Metaclass of stand-ins for names an annotation uses but its module cannot supply yet.

    A stand-in is a class, so ``ToolCtx[Missing]``, ``Missing | None`` and ``Mapping[str,
    Missing]`` all still evaluate; attribute access yields another stand-in, so ``mod.Thing``
    does too. Whatever requirement contains one is deferred.
    """

    def __getattr__(cls, attribute: str) -> Any:
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        return _stand_in(f"{cls.__name__}.{attribute}")


def _stand_in(name: str) -> type:
    return _UnresolvedMeta(name, (), {})


class _LenientNamespace(dict[str, Any]):
    """Evaluation locals that fall back to the module's globals, builtins, then a stand-in."""

    def __init__(self, module_globals: Mapping[str, Any]) -> None:
        super().__init__()
        self._globals = module_globals

    def __missing__(self, key: str) -> Any:
        if key in self._globals:
            return self._globals[key]
        if hasattr(builtins, key):
            return getattr(builtins, key)
        return _stand_in(key)


def _annotation_owner(fn: Callable[..., Any]) -> Any:
    """The object whose annotations and globals describe ``fn``'s parameters."""
    target: Any = fn
    while isinstance(target, partial):
        target = target.func
    if not (inspect.isfunction(target) or inspect.ismethod(target)) and not isinstance(
        target, type
    ):
        call = getattr(type(target), "__call__", None)  # noqa: B004 - we want the method itself
        if call is not None and inspect.isfunction(call):
            return call
    return target


def parameter_annotations(
    fn: Callable[..., Any], signature: inspect.Signature | None = None
) -> dict[str, Any]:
    """``fn``'s parameter annotations, resolved; a name that does not resolve becomes a stand-in.

    Test a resolved annotation with :func:`is_unresolved` before relying on it.
    """
    if signature is None:
        signature = inspect.signature(fn)
    owner = _annotation_owner(fn)
    try:
        return dict(typing.get_type_hints(owner, include_extras=True))
    except Exception:
        # One unresolvable name must not blind us to the others: evaluate parameter by
        # parameter, with stand-ins for what is missing.
        pass
    module_globals: Mapping[str, Any] = getattr(inspect.unwrap(owner), "__globals__", {})
    resolved: dict[str, Any] = {}
    for name, parameter in signature.parameters.items():
        annotation = parameter.annotation
        if annotation is inspect.Parameter.empty:
            continue
        if isinstance(annotation, str):
            try:
                annotation = eval(
                    annotation, dict(module_globals), _LenientNamespace(module_globals)
                )
            except Exception:
                annotation = _stand_in(annotation)
        resolved[name] = annotation
    return resolved


def is_unresolved(annotation: Any) -> bool:
    """Whether ``annotation`` is (or contains) a name its module could not resolve."""
    return any(isinstance(t, _UnresolvedMeta) for t in _walk_types(annotation))


def _strip_annotated(annotation: Any) -> Any:
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    return annotation


def _is_union(annotation: Any) -> bool:
    return typing.get_origin(annotation) in (typing.Union, types.UnionType)


def _handle_of(annotation: Any) -> tuple[type[ToolCtx[Any]], Any] | None:
    """``(handle class, required type)`` if ``annotation`` is a context handle, else ``None``."""
    annotation = _strip_annotated(annotation)
    if _is_union(annotation):
        # ``ToolCtx[X] | None``: an optional context parameter is still the context parameter.
        handles = [h for arm in typing.get_args(annotation) if (h := _handle_of(arm)) is not None]
        return handles[0] if len(handles) == 1 else None
    origin = typing.get_origin(annotation)
    if isinstance(origin, type) and issubclass(origin, ToolCtx):
        args = typing.get_args(annotation)
        return origin, (args[0] if args else Any)
    if isinstance(annotation, type) and issubclass(annotation, ToolCtx):
        return annotation, _parameter_of_subclass(annotation)
    return None


def _parameter_of_subclass(cls: type[ToolCtx[Any]]) -> Any:
    """``class MyCtx(ToolCtx[Calendar])`` requires ``Calendar``; a bare handle requires ``Any``."""
    for klass in cls.__mro__:
        for base in getattr(klass, "__orig_bases__", ()):
            origin = typing.get_origin(base)
            if isinstance(origin, type) and issubclass(origin, ToolCtx):
                args = typing.get_args(base)
                if args and not isinstance(args[0], TypeVar):
                    return args[0]
    return Any


def _requirement_from_annotation(parameter: str, annotation: Any) -> Requirement | None:
    if annotation is None:
        return None
    found = _handle_of(annotation)
    if found is None:
        if isinstance(annotation, _UnresolvedMeta) and _names_a_handle(annotation.__name__):
            return Requirement.deferred(
                f"annotation '{annotation.__name__}' cannot be resolved", parameter=parameter
            )
        return None
    handle, required = found
    unresolved = sorted(
        {t.__name__ for t in _walk_types(required) if isinstance(t, _UnresolvedMeta)}
    )
    if unresolved:
        return Requirement(
            parameter=parameter,
            required=required,
            handle=handle,
            deferred_reason=f"{', '.join(unresolved)} cannot be resolved when the catalog is built",
        )
    return Requirement(parameter=parameter, required=required, handle=handle)


_HANDLE_IN_TEXT = re.compile(r"(?<![\w.])(?:agentdeck\.)?(?:ToolCtx|Context|WorkflowCtx)\b")


def _names_a_handle(text: str) -> bool:
    return _HANDLE_IN_TEXT.search(text) is not None


def _walk_types(annotation: Any) -> Iterator[Any]:
    yield annotation
    for arg in typing.get_args(annotation):
        yield from _walk_types(arg)


# ========================================================================= the compatibility table


def check_context(required: Any, provided: Any) -> Verdict:
    """Whether a deck declaring ``context=provided`` satisfies a ``ToolCtx[required]`` parameter.

    Row for row, the documented table:

    * the exact declared type, or a supertype of it (the deck declares a subclass): compatible;
    * ``Any`` (a bare ``ToolCtx``): compatible with anything;
    * a runtime ABC such as ``Mapping[str, Any]``: checked against the ABC, parameters ignored;
    * a ``@runtime_checkable`` protocol with only methods: checked structurally;
    * a union, ``X | None`` included: compatible if any arm is;
    * a protocol ``issubclass`` refuses to rule on, a ``TypeVar``, a forward reference: deferred.

    A declared union (``context=A | B``) promises any of its arms, so every arm has to satisfy
    the requirement. A declared ``Any`` or ``TypeVar`` promises nothing checkable: deferred.
    """
    required = _strip_annotated(required)
    provided = _strip_annotated(provided)
    if required is Any or required is object:
        return Verdict.COMPATIBLE
    if provided is Any:  # a class since 3.11, but it promises nothing issubclass can test
        return Verdict.DEFERRED
    if _is_union(provided):
        return _all_arms(required, typing.get_args(provided))
    if _is_union(required):
        return _any_arm(typing.get_args(required), provided)
    if isinstance(required, TypeVar | str | typing.ForwardRef):
        return Verdict.DEFERRED
    provided_class = _runtime_class(provided)
    required_class = _runtime_class(required)
    if provided_class is None or required_class is None:
        return Verdict.DEFERRED
    if isinstance(required_class, _UnresolvedMeta) or isinstance(provided_class, _UnresolvedMeta):
        return Verdict.DEFERRED
    try:
        satisfied = issubclass(provided_class, required_class)
    except TypeError:
        # A protocol with data members, or one not marked @runtime_checkable: issubclass will
        # not rule, and neither do we.
        return Verdict.DEFERRED
    return Verdict.COMPATIBLE if satisfied else Verdict.INCOMPATIBLE


def _any_arm(arms: Sequence[Any], provided: Any) -> Verdict:
    verdicts = [check_context(arm, provided) for arm in arms]
    if Verdict.COMPATIBLE in verdicts:
        return Verdict.COMPATIBLE
    return Verdict.DEFERRED if Verdict.DEFERRED in verdicts else Verdict.INCOMPATIBLE


def _all_arms(required: Any, provided_arms: Sequence[Any]) -> Verdict:
    verdicts = [check_context(required, arm) for arm in provided_arms]
    if Verdict.INCOMPATIBLE in verdicts:
        return Verdict.INCOMPATIBLE
    return Verdict.DEFERRED if Verdict.DEFERRED in verdicts else Verdict.COMPATIBLE


def _runtime_class(annotation: Any) -> type | None:
    """The class ``issubclass`` can test for ``annotation``, or ``None`` when there is none.

    ``Mapping[str, Any]`` tests as ``Mapping``; ``None`` as ``NoneType``; a ``Literal``, a
    ``NewType`` or anything else without a runtime class has no answer.
    """
    if annotation is None or annotation is types.NoneType:
        return types.NoneType
    if isinstance(annotation, type) and typing.get_origin(annotation) is None:
        return annotation
    origin = typing.get_origin(annotation)
    if isinstance(origin, type):
        return origin
    return None


# =========================================================================== refusals


def type_label(annotation: Any) -> str:
    """A type as a reader would write it: ``Calendar``, ``Mapping[str, Any]``, ``X | None``."""
    annotation = _strip_annotated(annotation)
    if annotation is Any:
        return "Any"
    if annotation is None or annotation is types.NoneType:
        return "None"
    if _is_union(annotation):
        return " | ".join(type_label(arm) for arm in typing.get_args(annotation))
    if isinstance(annotation, TypeVar):
        return annotation.__name__
    origin = typing.get_origin(annotation)
    if origin is not None:
        args = typing.get_args(annotation)
        base = type_label(origin)
        return f"{base}[{', '.join(type_label(a) for a in args)}]" if args else base
    if isinstance(annotation, type):
        return annotation.__name__
    if isinstance(annotation, typing.ForwardRef):
        return annotation.__forward_arg__
    return repr(annotation).removeprefix("typing.")


def refuse_incompatible(site: str, requirement: Requirement, provided: Any) -> ContextTypeError:
    """The error ``build()`` raises: names the site, what it requires and what the deck provides."""
    required = requirement.describe()
    offered = type_label(provided)
    parameter = f" (parameter '{requirement.parameter}')" if requirement.parameter else ""
    return ContextTypeError(
        f"{site} requires {required}{parameter}, but the deck provides context={offered}; "
        f"declare a context type compatible with {type_label(requirement.required)}, or change "
        "the parameter's annotation",
        callable_name=site,
        required=required,
        provided=offered,
    )


def missing_context_error(site: str, requirement: Requirement, carried: object) -> ContextTypeError:
    """The error a callable raises when invoked without an AgentDeck run context.

    Raised rather than calling the callable short an argument: a run started outside a Deck (an
    engine's own headless runner) carries no context, and the callable should say so by name.
    """
    required = requirement.describe()
    got = type(carried).__name__
    return ContextTypeError(
        f"{site} requires {required}, but the run carries {got} rather than an AgentDeck run "
        "context; start it through Deck.run()/Deck.stream()/deck.runs.start() and pass "
        "context=... there",
        callable_name=site,
        required=required,
        provided=got,
    )


def validate_context_declaration(declared: Any) -> Any:
    """Refuse an *instance* where ``Deck(context=...)`` wants a *type*; return the declaration.

    An instance would make every check silently defer, and the parameter would promise something
    it never delivered. ``None`` means "nothing declared" and is returned unchanged. Accepted: a
    class (protocols and ABCs included), a parameterised generic, a union, ``Any``, a
    ``TypeVar``, ``Annotated[...]``.
    """
    if declared is None or _is_type_form(declared):
        return declared
    kind = type(declared).__name__
    raise ContextTypeError(
        f"Deck(context=...) takes the type of the per-run context, but was given an instance of "
        f"{kind}; declare context={kind} and pass the instance per run, as "
        "deck.run(..., context=<instance>)",
        callable_name=None,
        required="a type",
        provided=f"an instance of {kind}",
    )


def _is_type_form(value: Any) -> bool:
    if isinstance(value, type | TypeVar | types.UnionType | types.GenericAlias):
        return True
    if value is Any:
        return True
    # typing's own aliases (typing.Mapping[str, Any], Union[...], Annotated[...]) and NewType.
    return typing.get_origin(value) is not None or isinstance(value, typing.NewType)
