"""``NativeWorkflowEngine``: the core's engine for imperative ``@workflow`` bodies.

One play runs the body as a task beside the ``play`` generator and relays what the body's
context produces (see :mod:`agentdeck.native.channel`): each payload is yielded, and the body
resumes only when the runtime asks for the next one, after persisting it. A play ends

* ``run.completed`` when the body returns (its value becomes the output, below);
* ``run.failed`` (``engine_error``) when the body raises -- the message is the exception's type
  name only, ``where`` the workflow (``workflow/step`` when the exception came out of a step's
  function unchanged) -- or when the body misused its context (an engine-written message);
* with a control directive's payloads when ``ctx.safepoint()`` received one;
* parked, when every branch of the body waits on something only a later play can give: one
  ``run.interrupted`` per open ask, in the order the body asked; otherwise one ``run.paused``
  (``wake_at`` the earliest sleep, if any). Before parking, the loop lets the body settle: steps
  and child runs in flight finish and are journaled, and it gives the event loop a few turns to
  let concurrent branches reach their own asks (``asyncio.gather(ctx.ask(a), ctx.ask(b))``
  parks on both). If every branch of the body is waiting (nothing running, nothing posted and
  undelivered), the body's task is kept suspended for a later play in this process and handed to
  the runtime (:class:`~agentdeck.native.suspension.SuspendedBody`); otherwise it is cancelled,
  and its state lives in the log alone.

A continuation (``Entry.AFTER_PAUSE`` / ``Entry.ANSWERED``) handed the body this process kept
(``invocation.suspended``) wakes it where it waited, with a journal of the log since its
parking, once :meth:`SuspendedBody.tail` has shown that nothing but this continuation moved the
run. Any other continuation re-executes the body from the start
against the journal read from ``invocation.history`` (:mod:`agentdeck.native.journal`), after
refusing with :class:`~agentdeck.errors.ReplayError` (``reason="code_changed"``) a run whose
``run.started.code_digest`` is not the compiled body's. Input that does not bind to the body's
parameters raises :class:`~agentdeck.errors.InvalidInputError` before the body runs.

Output: content blocks the body returns (one block, or a non-empty list of blocks) go out as they
are; ``None`` is no output; any other value is JSON data in one ``DataBlock`` (an empty list too:
it is data, not "no blocks"). A value that is not JSON fails the run, naming its type.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any, ClassVar

from pydantic import ValidationError

from agentdeck.authoring.workflows import WorkflowDefinition, bind_input, code_digest
from agentdeck.errors import ConfigError, InvalidInputError, ReplayError
from agentdeck.model.content import (
    AudioBlock,
    ContentBlock,
    DataBlock,
    ImageBlock,
    ResourceBlock,
    TextBlock,
    UnknownBlock,
    is_plain_json_scalar,
)
from agentdeck.model.events import Event
from agentdeck.model.payloads import Payload, RunCompleted, RunFailed, RunPaused, RunStarted
from agentdeck.model.trusted import completed, data_block
from agentdeck.native.channel import (
    Channel,
    Crashed,
    Diverge,
    Emit,
    Fail,
    Finished,
    Message,
    Park,
)
from agentdeck.native.ctx import NativeWorkflowCtx, PlayState
from agentdeck.native.forking import plan_fork
from agentdeck.native.journal import SLEEP_REASON, Journal
from agentdeck.native.suspension import SuspendedBody
from agentdeck.ports import Engine, EngineCapabilities, Entry, ForkPlan, Invocable, Invocation
from agentdeck.vocabulary import ControlVerb, ErrorCode, SafePoint, WaitKind

__all__ = ["NativeWorkflowEngine", "input_value", "output_blocks"]

logger = logging.getLogger("agentdeck.native")

_BLOCK_TYPES = (TextBlock, ImageBlock, AudioBlock, ResourceBlock, DataBlock, UnknownBlock)


class NativeWorkflowEngine(Engine):
    """Plays ``@workflow`` definitions, durably: any instance continues any run from its log."""

    name: ClassVar[str] = "workflow"
    capabilities: ClassVar[EngineCapabilities] = EngineCapabilities(
        safe_points=frozenset({SafePoint.WORKFLOW_SAFEPOINT}),
        interrupts=True,
        durable_suspend=True,
        forks=True,
    )

    SETTLE_ROUNDS: ClassVar[int] = 10
    """Event-loop turns with nothing new from the body before a play parks on what it has."""
    CANCEL_GRACE: ClassVar[float] = 1.0
    """Seconds a parked or stopped body gets to unwind after it is cancelled."""

    def accepts(self, definition: object) -> bool:
        return isinstance(definition, WorkflowDefinition)

    def compile(self, definition: object) -> Invocable:
        if not isinstance(definition, WorkflowDefinition):
            raise ConfigError(
                f"the native workflow engine runs @workflow definitions, not "
                f"{type(definition).__name__}",
                setting="workflows",
            )
        requirement = definition.context_requirement
        return Invocable(
            name=definition.name,
            kind="workflow",
            engine=self.name,
            definition=definition,
            description=definition.description,
            code_digest=code_digest(definition),
            context_type=requirement.required if requirement is not None else None,
        )

    def prepare_input(self, invocable: Invocable, value: Any) -> list[ContentBlock]:
        """Check ``value`` binds to the body's parameters; record it as one ``DataBlock``."""
        definition = _definition_of(invocable)
        try:
            block = data_block(value)
        except ValidationError:
            raise InvalidInputError(
                f"workflow '{definition.name}' takes JSON data as input, not "
                f"{type(value).__name__}",
                name=definition.name,
            ) from None
        bind_input(definition, block.data)
        return [block]

    async def plan_fork(
        self, invocable: Invocable, history: Sequence[Event], *, at: int | None
    ) -> ForkPlan:
        """Reuse the origin's journal up to ``at`` (see :mod:`agentdeck.native.forking`)."""
        return plan_fork(history, at)

    async def play(self, invocation: Invocation) -> AsyncIterator[Payload]:
        definition = _definition_of(invocation.invocable)
        continued = await self._continued(invocation)
        if continued is not None:
            body, state = continued
            channel = state.channel
        else:
            journal = _journal_for(invocation)
            bound = bind_input(definition, input_value(definition, invocation.input))
            channel = Channel()
            state = PlayState(
                invocation=invocation, journal=journal, channel=channel, workflow=definition.name
            )
            ctx: NativeWorkflowCtx[Any] = NativeWorkflowCtx(state, invocation.context)
            body = asyncio.get_running_loop().create_task(
                _run_body(definition, bound, ctx, state),
                name=f"workflow {definition.name} run {invocation.run_id}",
            )
        mailbox = channel.queue
        parks: list[Park] = []
        yielded = 0  # payloads handed to the runtime: where this play leaves the log
        kept: SuspendedBody | None = None
        handed_over = False
        try:
            while True:
                directive = channel.directive
                if directive is not None:
                    payloads = directive.payloads
                    if directive.verb is ControlVerb.PAUSE:
                        kept = self._keep(invocation, body, state, yielded + len(payloads), 1)
                    for number, payload in enumerate(payloads, 1):
                        handed_over = number == len(payloads)
                        yielded += 1
                        yield payload
                    return
                if parks and not channel.in_flight:
                    message = await self._settled(channel)
                else:
                    message = await mailbox.get()
                if channel.directive is not None:
                    continue  # the directive outranks whatever else the body had posted
                if message is None:
                    parking = _parking(parks)
                    kept = self._keep(invocation, body, state, yielded + len(parking), len(parking))
                    for number, payload in enumerate(parking, 1):
                        handed_over = number == len(parking)
                        yielded += 1
                        yield payload
                    return
                if isinstance(message, Emit):
                    yielded += 1
                    yield message.payload
                    message.acknowledge()
                elif isinstance(message, Park):
                    parks.append(message)
                elif isinstance(message, Finished):
                    yield _completed(definition, message.result)
                    return
                elif isinstance(message, Crashed):
                    yield _crashed(definition, invocation, message)
                    return
                elif isinstance(message, Fail):
                    yield message.failure
                    return
                elif isinstance(message, Diverge):
                    raise message.error
        except GeneratorExit:
            raise  # the runtime stopped reading: after the last parking payload, as it should
        except BaseException:
            handed_over = False
            raise
        finally:
            if kept is not None and not (handed_over and kept.still_parked()):
                kept.discard()
                kept = None
            if kept is not None:
                channel.detach()
                kept.settle()
            else:
                await self._stop(body, channel)

    def _keep(
        self,
        invocation: Invocation,
        body: asyncio.Task[None],
        state: PlayState,
        more: int,
        parking: int,
    ) -> SuspendedBody | None:
        """Hand the runtime the body, parked as it stands, if it can wait for a later play here.

        ``more`` is how many payloads this play still yields, the last ``parking`` of which park
        the run. Nothing is kept when the runtime keeps nothing, or when a branch of the body is
        running or was cut off mid-payload (it could not go on where it stood: replay instead).
        """
        keep = invocation.keep_suspended
        if keep is None or body.done() or not state.channel.retainable:
            return None
        suspended = SuspendedBody(
            task=body,
            state=state,
            channel=state.channel,
            # (A fresh play's log holds its run.started even where its history leaves it out.)
            parked_at=(len(invocation.history) or 1) + more,
            parking=parking,
            grace=self.CANCEL_GRACE,
        )
        keep(suspended)
        return suspended

    async def _continued(
        self, invocation: Invocation
    ) -> tuple[asyncio.Task[None], PlayState] | None:
        """The body this process kept suspended, woken for ``invocation``, if the log still
        belongs to it; otherwise ``None`` (whatever was kept is dropped: the run replays)."""
        kept = invocation.suspended
        if kept is None:
            return None
        if not isinstance(kept, SuspendedBody) or invocation.entry is Entry.FRESH:
            kept.discard()
            return None
        tail = kept.tail(invocation.history) if await kept.settled(self.CANCEL_GRACE) else None
        if tail is None:
            kept.discard()  # another process continued the run since: it is not ours to go on
            return None
        kept.claim()
        state = kept.state
        parked_on = kept.channel
        state.invocation = invocation
        state.journal = Journal.from_history(tail)
        state.channel = Channel()
        parked_on.wake()
        return kept.task, state

    async def _settled(self, channel: Channel) -> Message | None:
        """With a branch of the body parked: its next message, or ``None`` once it has settled
        (nothing new for ``SETTLE_ROUNDS`` turns of the event loop, nothing in flight)."""
        for _ in range(self.SETTLE_ROUNDS):
            message = channel.poll()
            if message is not None:
                return message
            if channel.in_flight:
                return await channel.queue.get()
            await asyncio.sleep(0)
        return channel.poll()

    async def _stop(self, body: asyncio.Task[None], channel: Channel) -> None:
        channel.close()
        if not body.done():
            body.cancel()
            await asyncio.wait({body}, timeout=self.CANCEL_GRACE)
        if not body.done():
            logger.warning(
                "%s did not stop within %.1fs of its play ending (it swallows cancellation); "
                "it is left running, detached from the run",
                body.get_name(),
                self.CANCEL_GRACE,
            )
        elif not body.cancelled():
            body.exception()  # retrieved: _run_body reports failures through the channel


def input_value(definition: WorkflowDefinition, blocks: Sequence[ContentBlock]) -> Any:
    """The JSON input a run recorded: no blocks is ``None``, one data block its data.

    One text block reads as its text, so a run started with a plain string (a chat surface, an
    agent handing a workflow its input as text) reaches a one-parameter body as that string.
    Anything else is refused: a workflow's input is data, not content.
    """
    if not blocks:
        return None
    if len(blocks) == 1:
        block = blocks[0]
        if isinstance(block, DataBlock):
            return block.data
        if isinstance(block, TextBlock):
            return block.text
    kinds = ", ".join(block.type for block in blocks)
    raise InvalidInputError(
        f"workflow '{definition.name}' takes its input as one data block (JSON data) or one "
        f"text block; this run's input is {len(blocks)} block(s): {kinds}",
        name=definition.name,
    )


def output_blocks(value: Any) -> list[ContentBlock]:
    """A body's return value as ``run.completed.output`` (see the module docstring).

    Raises ``ValueError`` naming the type when the value is neither blocks nor JSON data.
    """
    if value is None:
        return []
    if is_plain_json_scalar(value):
        return [data_block(value)]  # the common return value, without the block checks
    if isinstance(value, _BLOCK_TYPES):
        return [value]
    if (
        isinstance(value, list | tuple)
        and value
        and all(isinstance(b, _BLOCK_TYPES) for b in value)
    ):
        return list(value)
    try:
        return [data_block(value)]
    except ValidationError:
        raise ValueError(f"a {type(value).__name__} is not JSON data") from None


def _definition_of(invocable: Invocable) -> WorkflowDefinition:
    definition = invocable.definition
    if not isinstance(definition, WorkflowDefinition):
        raise ConfigError(
            f"invocable '{invocable.name}' is not a @workflow (it holds "
            f"{type(definition).__name__}); compile it with the engine that accepts it"
        )
    return definition


_FRESH = Journal.empty()
"""The journal of every fresh play: nothing to replay. Shared, because a play only reads its
journal (claiming an echo changes nothing when there is none to claim)."""


def _journal_for(invocation: Invocation) -> Journal:
    """The replay journal of a continuation (empty for a fresh run), after the digest check."""
    if invocation.entry is Entry.FRESH and len(invocation.history) <= 1:
        return _FRESH  # a fork's first play is fresh too, but replays the journal it reuses
    name = invocation.invocable.name
    if not invocation.history:
        raise ReplayError(
            f"run '{invocation.run_id}' of workflow '{name}' is being continued without its "
            "log; the native engine replays the body from the run's history, so the runtime "
            "must pass it (Invocation.history)",
            run_id=invocation.run_id,
            reason="state_missing",
        )
    started = invocation.history[0].payload
    recorded = started.code_digest if isinstance(started, RunStarted) else None
    compiled = invocation.invocable.code_digest
    if recorded is not None and recorded != compiled:
        raise ReplayError(
            f"run '{invocation.run_id}' started on another version of workflow '{name}' "
            f"(code digest {recorded[:12]}, now {(compiled or 'none')[:12]}); a durable "
            "workflow replays its body from the start, so it can only continue on the code it "
            "started with: deploy that version to finish it, or cancel the run",
            run_id=invocation.run_id,
            reason="code_changed",
        )
    return Journal.from_history(invocation.history, invocation.answers)


async def _run_body(
    definition: WorkflowDefinition,
    bound: dict[str, Any],
    ctx: NativeWorkflowCtx[Any],
    state: PlayState,
) -> None:
    """Run the body and post how it ended; cancellation by the engine passes through.

    The ending goes to the channel of the play the body is in *now*: a body kept suspended
    between plays ends in a later play than the one that started it.
    """
    try:
        result = await definition.call(bound, ctx)
    except asyncio.CancelledError as cancelled:
        task = asyncio.current_task()
        if state.channel.closed or (task is not None and task.cancelling()):
            raise
        state.channel.crashed(cancelled, definition.name)  # the body cancelled itself
        return
    except Exception as error:
        step = state.failed_step(error)
        state.channel.crashed(error, f"{definition.name}/{step}" if step else definition.name)
        return
    except BaseException as error:
        state.channel.crashed(error, definition.name)
        raise
    state.channel.finished(result)


def _completed(definition: WorkflowDefinition, result: Any) -> RunCompleted | RunFailed:
    try:
        return completed(output_blocks(result))
    except ValueError:
        return RunFailed(
            error_code=ErrorCode.ENGINE_ERROR,
            message=(
                f"workflow '{definition.name}' returned a {type(result).__name__}, which is "
                "neither content blocks nor JSON data; return blocks, JSON data (a dict, list, "
                "str, int, float, bool) or None"
            ),
            where=definition.name,
        )


def _crashed(definition: WorkflowDefinition, invocation: Invocation, crash: Crashed) -> RunFailed:
    kind = type(crash.error).__name__
    logger.warning(
        "workflow '%s' (run %s) raised %s in %s",
        definition.name,
        invocation.run_id,
        kind,
        crash.where,
        exc_info=crash.error,
    )
    return RunFailed(error_code=ErrorCode.ENGINE_ERROR, message=kind, where=crash.where)


def _parking(parks: Sequence[Park]) -> list[Payload]:
    """What ends a parked play: the open asks, else one pause (timer and/or child runs)."""
    asks = sorted((park for park in parks if park.interrupt is not None), key=lambda p: p.order)
    if asks:
        return [park.interrupt for park in asks if park.interrupt is not None]
    wakes = [park.wake_at for park in parks if park.wake_at is not None]
    children = [park.child_run_id for park in parks if park.child_run_id is not None]
    waiting_on: WaitKind | None = WaitKind.TIMER if wakes else None
    reason = SLEEP_REASON
    if children:
        reason, waiting_on = f"waiting for child run {', '.join(children)}", WaitKind.CHILD_RUNS
    return [
        RunPaused(
            reason=reason,
            wake_at=min(wakes) if wakes else None,
            waiting_on=waiting_on,
            waiting_for=children,
        )
    ]
