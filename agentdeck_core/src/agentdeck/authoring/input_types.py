"""A workflow's input checked against its body's annotations before the run starts.

``@workflow async def refund(order_id: int, amount: float)`` says what it takes; a run started
with ``{"order_id": 5, "amount": "lots"}`` used to start, then fail inside the body with a
``ValueError`` -- recorded as the run's failure, after the caller had already been told it
started. Checking here turns that into an :class:`~agentdeck.errors.InvalidInputError` naming
the parameter and the type it expects, raised where the run is started (Python, HTTP, the
command line all start runs the same way), and nothing is written.

The check is pydantic's, in the lax mode ``pydantic.validate_call`` uses, so a JSON value that
stands for the annotated type is accepted and converted (``"5"`` for ``int``, an ISO string for
``datetime``, a mapping for a model or dataclass): input arrives as JSON data, and a body
should receive what its annotations say. A parameter without an annotation, or annotated
``Any``, is passed through as given.

The validators are built once per workflow, the first time its input is checked (not when it
is decorated: an annotation may name a class defined later in its module), and kept.
"""

from __future__ import annotations

import threading
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import ConfigDict, TypeAdapter, ValidationError

from agentdeck.authoring.context_check import is_unresolved, parameter_annotations
from agentdeck.errors import InvalidInputError

__all__ = ["InputTypes", "input_types"]

_CONFIG = ConfigDict(arbitrary_types_allowed=True)


class InputTypes:
    """The annotated parameters of one workflow body, and how to check a value for each."""

    __slots__ = ("_adapters", "_body", "_lock", "_params", "_workflow")

    def __init__(self, body: Callable[..., Any], workflow: str, params: Sequence[str]) -> None:
        self._body = body
        self._workflow = workflow
        self._params = tuple(params)
        self._adapters: dict[str, tuple[TypeAdapter[Any], str]] | None = None
        self._lock = threading.Lock()

    def check(self, bound: Mapping[str, Any]) -> dict[str, Any]:
        """``bound`` with every annotated value checked and converted; the first that does not
        fit is an :class:`InvalidInputError` naming the parameter and the expected type."""
        adapters = self._adapters if self._adapters is not None else self._build()
        checked = dict(bound)
        for name, value in bound.items():
            entry = adapters.get(name)
            if entry is None:
                continue
            adapter, expected = entry
            try:
                checked[name] = adapter.validate_python(value)
            except ValidationError as exc:
                raise _mismatch(self._workflow, name, expected, exc) from None
        return checked

    def _build(self) -> dict[str, tuple[TypeAdapter[Any], str]]:
        with self._lock:
            if self._adapters is None:
                self._adapters = _adapters_for(self._body, self._params)
            return self._adapters


def input_types(
    body: Callable[..., Any], workflow: str, params: Sequence[str], *, exclude: str | None
) -> InputTypes | None:
    """The checker of ``body``'s input parameters (``None`` when it takes none)."""
    checked = [name for name in params if name != exclude]
    return InputTypes(body, workflow, checked) if checked else None


def _adapters_for(
    body: Callable[..., Any], params: Sequence[str]
) -> dict[str, tuple[TypeAdapter[Any], str]]:
    annotations = parameter_annotations(body)
    adapters: dict[str, tuple[TypeAdapter[Any], str]] = {}
    for name in params:
        annotation = annotations.get(name)
        if annotation is None or annotation is Any or is_unresolved(annotation):
            continue  # nothing to check against: the value goes through as given
        try:
            adapter: TypeAdapter[Any] = TypeAdapter(annotation, config=_CONFIG)
        except Exception:  # pydantic cannot check this annotation: do not guess
            continue
        adapters[name] = (adapter, _label(annotation))
    return adapters


def _label(annotation: Any) -> str:
    """How the expected type reads in an error (``float``, ``list[int]``, ``Order``)."""
    if isinstance(annotation, type) and not typing.get_args(annotation):
        return annotation.__qualname__
    return repr(annotation).replace("typing.", "")


def _mismatch(workflow: str, name: str, expected: str, exc: ValidationError) -> InvalidInputError:
    first = exc.errors(include_url=False)[0]
    inner = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first.get("loc", ()))
    return InvalidInputError(
        f"workflow '{workflow}' input '{name}' must be {expected}"
        + (f" ({name}{inner}: {first['msg']})" if inner else f": {first['msg']}"),
        name=workflow,
        field=name,
    )
