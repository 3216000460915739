"""The run scope: the object the Agents SDK carries as its run context during one play.

The SDK hands its run context to every tool, instructions callable and hook it calls, and back to
us when a run is restored from a serialized state. AgentDeck puts one :class:`RunScope` there per
play. It carries what our wrappers need and the SDK must never see or serialize:

* the :class:`~agentdeck.authoring.context.ToolCtx` handle (the application's live context and the
  run's identity) that tools, instructions and hooks receive;
* the run-control gate: every safe point of the play, from the stream loop and from inside tool
  wrappers running in the SDK's own task, goes through :meth:`RunScope.safepoint`, so the
  runtime's checkpoint is never called again once it has answered with a directive;
* what tool wrappers learned while the SDK ran them (a result the model got as an error text, a
  tool that raised, events such as plan updates), for the stream loop to record in order;
* in a quiet play (``Runner.run``, see :mod:`agentdeck_openai.quiet`), the feed through which
  the SDK's task hands payloads and safe points to the play, and the calls a pause held back.

The SDK serializes its run context into a ``RunState``; :func:`serialize_scope` makes that an
empty mapping, so the application's object never reaches the engine-state area.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

from agents.run_context import RunContextWrapper

from agentdeck.authoring.context import ToolCtx
from agentdeck.model.content import ContentBlock
from agentdeck.model.payloads import Payload
from agentdeck.ports import ControlDirective, Invocation
from agentdeck.vocabulary import SafePoint
from agentdeck_openai.tool_results import artifact_event, error_text

if TYPE_CHECKING:
    from agentdeck_openai.quiet import Feed

__all__ = ["SCOPE_ATTRIBUTE", "RunScope", "ToolFailure", "ToolNote", "scope_of", "serialize_scope"]


@dataclass(frozen=True, slots=True)
class ToolFailure:
    """A tool body raised and the tool's error policy fails the run: it ends
    ``run.failed(tool_error)`` naming the tool and the exception's *type* only.

    ``error`` is what the call's ``tool.call.completed.error`` records
    (:func:`~agentdeck_openai.tool_results.error_text`): never part of ``run.failed``.
    """

    call_id: str | None
    tool: str
    error_type: str
    error: str


@dataclass(frozen=True, slots=True)
class ToolNote:
    """What a wrapper knows of one call it served: the exact text the model received, and why
    that text is an error message instead of the tool's result (when it is)."""

    text: str
    error: str | None = None


class _Halted(Exception):
    """Internal: a tool wrapper stopped at a safe point of a play that cannot be cancelled."""


class RunScope:
    """Per-play state shared by the stream loop and the wrappers the SDK calls.

    Single event loop, so no locking beyond the safe-point gate, which serializes checkpoints
    reached concurrently (the stream loop and parallel tool calls).
    """

    def __init__(self, invocation: Invocation) -> None:
        self.invocation = invocation
        self.tool_ctx: ToolCtx[Any] = ToolCtx(
            invocation.context,
            run_id=invocation.run_id,
            session_id=invocation.session_id,
            namespace=invocation.namespace,
        )
        self.directive: ControlDirective | None = None
        self.failure: ToolFailure | None = None
        self.notes: dict[str, ToolNote] = {}
        """call id -> what the wrapper served for it."""
        self.artifacts: list[ContentBlock] = []
        """Blocks tools produced for the user (images), in order: they open ``run.completed``."""
        self.feed: Feed | None = None
        """Set while a quiet play's SDK run is in progress: tool dispatch is then gated by
        :meth:`hold` (see :mod:`agentdeck_openai.dispatch_gate`), not by :meth:`before_dispatch`."""
        self.quiet = False
        """The play runs ``Runner.run``: its tool-dispatch safe points are taken before a call
        is let through (the dispatch gate, or the play continuing a settled turn)."""
        self.held: set[str] = set()
        """Calls a directive held back at the dispatch gate: they never ran."""
        self._turn_dispatch: asyncio.Future[ControlDirective | None] | None = None
        """The answer of the current model turn's dispatch safe point, once asked."""
        self._emitted: dict[str | None, list[Payload]] = {}
        self._gate = asyncio.Lock()
        self._halt: Callable[[], None] | None = None

    # ------------------------------------------------------------------ run control

    def attach(self, halt: Callable[[], None] | None) -> None:
        """Name how to stop the SDK run now playing (its ``cancel``), or ``None`` between runs."""
        self._halt = halt

    @property
    def stopping(self) -> bool:
        return self.directive is not None

    async def safepoint(self, point: SafePoint) -> ControlDirective | None:
        """Reach a safe point: the runtime's directive, if it has one, stops the SDK run.

        Once a directive has been given, every later safe point returns it without asking the
        runtime again (asking after a directive breaks the engine contract).
        """
        if self.directive is not None:
            return self.directive
        # Passed once per stream item: the gate is taken without `async with` and the runtime's
        # checkpoint called directly, which halves what an uncontended safe point costs.
        checkpoint = self.invocation.checkpoint
        if checkpoint is None:
            return None
        gate = self._gate
        await gate.acquire()
        try:
            if self.directive is not None:
                return self.directive
            directive = await checkpoint(point)
            if directive is not None:
                self.directive = directive
                if self._halt is not None:
                    self._halt()
            return directive
        finally:
            gate.release()

    async def before_dispatch(self) -> None:
        """The tool-dispatch safe point: returns when the tool may run, never when it may not.

        A directive cancels the SDK run, whose cancellation ends the wait below; the tool body
        is never called. The play then records the directive and stops. In a quiet play the
        call's safe point was taken before the SDK let it through, so this returns at once.
        """
        if self.quiet:
            return
        if await self.safepoint(SafePoint.TOOL_DISPATCH) is None:
            return
        if self._halt is None:
            raise _Halted  # no SDK run to cancel: fail the call rather than wait forever
        await _wait_for_cancellation()

    def new_turn(self) -> None:
        """A model reply arrived: its calls get a dispatch safe point of their own."""
        self._turn_dispatch = None

    async def hold(self, call_id: str) -> bool:
        """The dispatch gate of a quiet play: whether a call must be held back (not run).

        One tool-dispatch safe point per model turn, taken by its first call once everything
        the SDK reported before is recorded, answers for every call of the turn: the SDK checks
        them all before it runs any. With a directive every call is held, and the SDK stops the
        run on them as on calls awaiting approval, so its state can be saved and the calls run
        on resume, once.
        """
        feed = self.feed
        if feed is None:
            return False
        answer = self._turn_dispatch
        if answer is None:
            answer = self._turn_dispatch = asyncio.get_running_loop().create_future()
            try:
                answer.set_result(await feed.safepoint(SafePoint.TOOL_DISPATCH))
            except BaseException:
                answer.cancel()
                raise
        elif not answer.done():
            await answer
        if self.directive is None:
            return False
        self.held.add(call_id)
        return True

    # ------------------------------------------------------------------ what tools report

    def emit(self, payload: Payload, call_id: str | None) -> None:
        """Queue an event a tool produced while serving ``call_id``; the stream loop records it
        just before that call's ``tool.call.completed``."""
        self._emitted.setdefault(call_id, []).append(payload)

    def collect_artifacts(self, call_id: str | None, blocks: Sequence[ContentBlock]) -> None:
        """Keep blocks a call's result carried for the user (images): they open
        ``run.completed``, in order, and each is recorded as ``artifact.created`` just before
        the call's ``tool.call.completed``."""
        for index, block in enumerate(blocks):
            self.artifacts.append(block)
            self.emit(artifact_event(call_id, index, block), call_id)

    def take_emitted(self, call_id: str | None) -> list[Payload]:
        return self._emitted.pop(call_id, [])

    def note(self, call_id: str | None, text: str, error: str | None = None) -> None:
        if call_id:
            self.notes[call_id] = ToolNote(text=text, error=error)

    def record_failure(self, call_id: str | None, tool: str, exc: BaseException) -> None:
        if self.failure is None:
            self.failure = ToolFailure(
                call_id=call_id, tool=tool, error_type=type(exc).__name__, error=error_text(exc)
            )


async def _wait_for_cancellation() -> NoReturn:
    await asyncio.Event().wait()
    raise _Halted  # unreachable: the wait ends only by cancellation


SCOPE_ATTRIBUTE = "_agentdeck_scope"
"""Where a copy of an SDK run context made for application code
(:func:`~agentdeck_openai.native.app_view`) keeps the run scope its ``context`` no longer is."""


def scope_of(context: object) -> RunScope | None:
    """The :class:`RunScope` of an SDK run context (or of a copy made for application code), or
    ``None`` for a run AgentDeck did not start (``Agent.run()``-style headless use of the
    compiled agent)."""
    value = context.context if isinstance(context, RunContextWrapper) else context
    if isinstance(value, RunScope):
        return value
    kept = getattr(context, SCOPE_ATTRIBUTE, None)
    return kept if isinstance(kept, RunScope) else None


def serialize_scope(_context: Any) -> Mapping[str, Any]:
    """What a ``RunState`` stores of our run context: nothing. The live context stays in memory;
    a restored run gets the new play's scope instead."""
    return {}
