"""Views: which part of the event stream an observer receives.

One predicate per concern, composable with ``|`` (either), ``&`` (both) and ``~`` (not)::

    from agentdeck import views
    from agentdeck.observers import ConsoleObserver

    ConsoleObserver(view=views.chat | views.reports)
    ConsoleObserver(view=views.all & ~views.chat)

An observer given no view sees everything. A view is any ``Callable[[Event], bool]``, so a plain
function works as well; composing one with a :class:`View` wraps it.

Kinds a newer release adds (parsed as ``UnknownEvent``) reach ``all``, and ``lifecycle`` when
they are ``run.*``, ``control.*`` or ``answer.*`` kinds, so an audit tap keeps seeing them.
"""

from __future__ import annotations

from collections.abc import Callable

from agentdeck.model.events import Event
from agentdeck.model.payloads import Report, ToolCallCompleted
from agentdeck.vocabulary import ReportLevel

__all__ = [
    "View",
    "all",
    "chat",
    "errors",
    "lifecycle",
    "reports",
    "tools",
    "usage",
]


class View:
    """A named predicate over events. Calling it answers whether an event belongs."""

    __slots__ = ("_accepts", "_label")

    def __init__(self, accepts: Callable[[Event], bool], label: str) -> None:
        self._accepts = accepts
        self._label = label

    def __call__(self, event: Event) -> bool:
        return bool(self._accepts(event))

    def __or__(self, other: Callable[[Event], bool]) -> View:
        right = _as_view(other)
        return View(lambda e: self(e) or right(e), f"{self._label} | {right._label}")

    def __ror__(self, other: Callable[[Event], bool]) -> View:
        return _as_view(other) | self

    def __and__(self, other: Callable[[Event], bool]) -> View:
        right = _as_view(other)
        return View(
            lambda e: self(e) and right(e), f"{_grouped(self._label)} & {_grouped(right._label)}"
        )

    def __rand__(self, other: Callable[[Event], bool]) -> View:
        return _as_view(other) & self

    def __invert__(self) -> View:
        return View(lambda e: not self(e), f"~{_grouped(self._label)}")

    def __repr__(self) -> str:
        return f"<View {self._label}>"


def _as_view(value: Callable[[Event], bool]) -> View:
    if isinstance(value, View):
        return value
    if not callable(value):
        raise TypeError(
            f"a view composes with another view or a function taking an Event, "
            f"not {type(value).__name__}"
        )
    return View(value, getattr(value, "__name__", repr(value)))


def _grouped(label: str) -> str:
    return f"({label})" if " " in label else label


def _kinds(label: str, *kinds: str) -> View:
    wanted = frozenset(kinds)
    return View(lambda e: e.kind in wanted, f"views.{label}")


def _is_lifecycle(event: Event) -> bool:
    return event.kind.startswith(("run.", "control.", "answer."))


def _is_error(event: Event) -> bool:
    match event.payload:
        case ToolCallCompleted(error=error):
            return error is not None
        case Report(level=level):
            return level == ReportLevel.ERROR
    return event.kind in ("run.failed", "answer.refused")


chat = _kinds("chat", "text.delta", "thought.delta", "message.completed", "agent.changed")
"""What the conversation shows: text and thought deltas, completed messages, handoffs."""

tools = _kinds("tools", "tool.call.started", "tool.call.completed", "approval.decided")
"""Tool calls as they start and finish, and approval decisions on them."""

reports = _kinds("reports", "report", "custom", "plan.updated")
"""Progress from inside the work: reports, application events, plan updates."""

lifecycle = View(_is_lifecycle, "views.lifecycle")
"""``run.*`` (started, paused, interrupted, resumed, the terminal ones), ``control.*`` and
``answer.*``."""

errors = View(_is_error, "views.errors")
"""Failed runs, tool calls that raised, refused answers and error-level reports."""

usage = _kinds("usage", "usage.reported", "run.completed")
"""Token usage: per model call, and the run's total on completion."""

all = View(lambda _event: True, "views.all")
"""Everything."""
