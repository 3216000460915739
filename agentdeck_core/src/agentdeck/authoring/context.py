"""The per-run context handle: what a callable that asks for the run's context receives.

A tool, a dynamic-instructions callable, an agent hook or a ``@workflow`` body asks for the
application's live object by declaring one parameter annotated ``ToolCtx[T]`` (``WorkflowCtx[T]``
for a workflow body, ``Context[T]`` in the 4.x spelling). The engine injects a handle whose
``.data`` is that object, by reference, with the run's identity beside it. The model never sees
the parameter, and the object never enters the event log.

Which parameter asks, and whether the deck's declared context type satisfies it, is decided at
build time by :mod:`agentdeck.authoring.context_check`. Users import the handles from the
package root (``from agentdeck import ToolCtx, WorkflowCtx, Context``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, Generic, ParamSpec, TypeVar, overload

__all__ = ["Context", "ToolCtx", "WorkflowCtx"]

T = TypeVar("T")
R = TypeVar("R")
P = ParamSpec("P")


class ToolCtx(Generic[T]):
    """What a callable that declares ``ToolCtx[T]`` receives: the run's context and identity.

    ``data`` is the object the caller passed as ``run(..., context=...)``, by reference: mutate it
    and the caller sees the change. It is ``None`` for a run that was started without one (every
    run served over HTTP, and every continuation through a recovered handle), which is why a
    requirement can only ever be checked against the *declared* type, never guaranteed.

    Everything is read-only: a callable that wants to hand something back returns it.
    """

    __slots__ = ("_data", "_namespace", "_run_id", "_session_id", "_tool_call_id", "_tool_name")

    def __init__(
        self,
        data: T,
        *,
        run_id: str | None = None,
        session_id: str | None = None,
        namespace: str | None = None,
        tool_call_id: str | None = None,
        tool_name: str | None = None,
    ) -> None:
        self._data = data
        self._run_id = run_id
        self._session_id = session_id
        self._namespace = namespace
        self._tool_call_id = tool_call_id
        self._tool_name = tool_name

    @property
    def data(self) -> T:
        """The application's live object for this run (``None`` if the run carries none)."""
        return self._data

    @property
    def run_id(self) -> str | None:
        """The run this callable is executing in; ``None`` outside a recorded run."""
        return self._run_id

    @property
    def session_id(self) -> str | None:
        return self._session_id

    @property
    def namespace(self) -> str | None:
        return self._namespace

    @property
    def tool_call_id(self) -> str | None:
        """The model's id for the call being served, when the callable is a tool and it is known."""
        return self._tool_call_id

    @property
    def tool_name(self) -> str | None:
        return self._tool_name

    def for_tool_call(self, *, tool_call_id: str | None, tool_name: str) -> ToolCtx[T]:
        """The same run's handle, narrowed to one tool call (what an engine passes a tool)."""
        return ToolCtx(
            self._data,
            run_id=self._run_id,
            session_id=self._session_id,
            namespace=self._namespace,
            tool_call_id=tool_call_id,
            tool_name=tool_name,
        )

    def __repr__(self) -> str:
        # The data's type, never its repr: a context may hold credentials, and handles end up in
        # tracebacks and logs.
        return (
            f"{type(self).__name__}(data=<{type(self._data).__name__}>, run_id={self._run_id!r}, "
            f"session_id={self._session_id!r}, tool_name={self._tool_name!r})"
        )


Context = ToolCtx
"""Deprecated: the 4.x spelling of :class:`ToolCtx`, kept so 4.x code keeps working.

The same class object, not a wrapper: ``Context[Calendar]`` *is* ``ToolCtx[Calendar]``, so every
check and injection treats the two identically. Write ``ToolCtx`` in new code.
"""


class WorkflowCtx(ToolCtx[T], ABC):
    """What a ``@workflow`` body receives: the run's context plus the operations of a workflow.

    An interface: the engine that runs bodies (the core's native one, or a plugin) subclasses it
    and implements every method. Each operation is a point the engine records, so a body written
    against this class runs unchanged whichever engine plays it, and a durable engine can replay
    it from the log. A body never does I/O behind the engine's back for work that must not repeat
    on replay: it wraps that work in :meth:`step`.
    """

    __slots__ = ()

    @abstractmethod
    async def ask(
        self,
        question: Any,
        *,
        schema: type[Any] | Mapping[str, Any] | None = None,
        options: Sequence[str] | None = None,
    ) -> Any:
        """Park the run until someone answers ``question``, and return the accepted answer.

        ``question`` is JSON data (a prompt string, or a mapping a UI renders) recorded as the
        interrupt's payload. ``schema`` (a type or a JSON schema) or ``options`` (the only answers
        accepted) constrain the answer; one that does not fit is refused and the run stays parked.
        """

    @abstractmethod
    async def safepoint(self) -> None:
        """Let a pending pause or cancel take effect here.

        Returns when no control request is pending. When one is, it does not return: the engine
        unwinds the body from this point, so code after it runs only if the run continues.
        """

    @overload
    async def step(
        self, name: str, fn: Callable[P, Awaitable[R]], /, *args: P.args, **kwargs: P.kwargs
    ) -> R: ...

    @overload
    async def step(
        self, name: str, fn: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs
    ) -> R: ...

    @abstractmethod
    async def step(self, name: str, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        """Run ``fn(*args, **kwargs)`` once and journal its result under ``name``.

        On a replay the journaled result is returned without calling ``fn`` again, which is what
        makes side effects (a charge, an email) safe in a body that may be continued elsewhere.
        The result must be JSON data. ``fn`` may be sync or async.
        """

    @abstractmethod
    async def invoke(self, name: str, input: Any) -> Any:
        """Run the catalog's agent or workflow ``name`` as a child run and return its result."""

    @abstractmethod
    async def sleep_until(self, when: datetime) -> None:
        """Suspend the body until ``when`` (timezone-aware), by the engine's clock."""

    @abstractmethod
    async def report(self, message: str, *, level: str = "info", **fields: Any) -> None:
        """Record progress from inside the work as a ``report`` event.

        ``level`` is ``info``, ``warning``, ``error`` or ``record``; ``fields`` are JSON data.
        """

    @abstractmethod
    async def emit(self, name: str, data: Any = None) -> None:
        """Record application data as a ``custom`` event under a namespaced ``name`` (``app.x``)."""
