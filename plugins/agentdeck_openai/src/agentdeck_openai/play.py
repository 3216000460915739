"""One play of an agent run: the SDK's run, translated, controlled and parked.

A play starts a run (``Entry.FRESH``) or continues one from the engine-state area (after a pause,
or with the answers to an approval), streams it with ``Runner.run_streamed`` (or, for a quiet
play, runs it with ``Runner.run``, see :mod:`agentdeck_openai.quiet`) and yields canonical
payloads as they come. It ends with exactly one final payload:

* ``run.completed``: the artifacts tools produced, then the final text (a ``TextBlock``) or the
  structured output (a ``DataBlock``); ``usage`` is the sum of every ``usage.reported`` in the
  run's log, so the total always agrees with the per-call events;
* ``run.failed``: see :mod:`agentdeck_openai.failures`;
* one ``run.interrupted`` per tool call waiting for approval, all together (see
  :mod:`agentdeck_openai.approvals`);
* ``run.paused(waiting_on="child_runs", waiting_for=[<id>, ...])``: a subagent's child run
  parked (see :mod:`agentdeck_openai.child_runs`);
* a control directive's ``run.paused``/``run.cancelled``.

**Run control.** The stream loop passes the ``stream_item`` safe point after recording the
payloads of each stream event that produced any; tool wrappers pass ``tool_dispatch`` before a
tool body runs, and so does the play before it starts subagents' child runs and again once they
have ended. On a directive the SDK run is cancelled at once and drained, and the directive's
payloads end the play. A quiet play's safe points are described in :mod:`agentdeck_openai.quiet`;
it also passes ``tool_dispatch`` before a settled turn (approvals, child runs) continues.

**Pause and continue.** Before ``run.paused`` the SDK's ``RunState`` (``to_state()`` of the
cancelled run) is saved in the state area. It holds every completed model turn and tool result, so
the continuation neither repeats a tool that ran nor loses one: it re-asks the model call that was
cut (whose partial ``text.delta`` events stay in the log; ``message.completed`` carries each
message's final text), or, when the pause came at a tool's dispatch, re-asks the model turn that
requested the tool, which never ran. The conversation session is left as the SDK keeps it for a
resumed state, so no input is recorded twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from agents import RunConfig, Runner, RunState
from agents.result import RunResult, RunResultStreaming
from agents.run_context import RunContextWrapper

from agentdeck.errors import ReplayError
from agentdeck.model.content import ContentBlock, DataBlock, TextBlock
from agentdeck.model.events import Event
from agentdeck.model.payloads import (
    Payload,
    RunCompleted,
    RunInterrupted,
    RunPaused,
    Usage,
    UsageReported,
)
from agentdeck.ports import Entry, Invocation
from agentdeck.vocabulary import AnswerOrigin, ControlVerb, SafePoint, WaitKind
from agentdeck_openai.approvals import (
    REJECTED,
    STATE_NAME,
    Decision,
    Parked,
    Pending,
    answers_of,
    decided_event,
    interrupt_event,
    load_parked,
    new_interrupt_id,
    pending_of,
    read_decision,
    used_interrupt_ids,
)
from agentdeck_openai.child_runs import ChildCall, settle_children
from agentdeck_openai.compile import CompiledAgent
from agentdeck_openai.failures import failure_of, tool_failure
from agentdeck_openai.hooks import HookFailed
from agentdeck_openai.inputs import to_sdk_input
from agentdeck_openai.native import tripwire_report
from agentdeck_openai.quiet import END, Feed, QuietHooks, SafePointAsk
from agentdeck_openai.scope import RunScope, serialize_scope
from agentdeck_openai.tool_results import json_text, parse_arguments
from agentdeck_openai.translate import Translator

__all__ = ["Play"]

_UNREADABLE_ANSWER = "The approval answer was not understood, so the call was not approved."

_ENDS_PLAY = frozenset(
    {"run.completed", "run.failed", "run.cancelled", "run.paused", "run.interrupted"}
)


@dataclass(frozen=True, slots=True)
class _Verdict:
    """A decision about one pending call, and who made it."""

    decision: Decision
    origin: AnswerOrigin
    interrupt_id: str | None = None


@dataclass(slots=True)
class _Outcome:
    """How one quiet SDK run ended: its result, or what it raised."""

    result: RunResult | None = None
    error: Exception | None = None


class Play:
    """Everything one play needs; :meth:`run` is the async generator of its payloads."""

    def __init__(
        self,
        invocation: Invocation,
        compiled: CompiledAgent,
        *,
        run_config: RunConfig,
        session: Any,
        max_turns: int,
        use_responses: bool,
        quiet: bool = False,
        prepare: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.invocation = invocation
        self.prepare = prepare
        """Awaited before anything else the play does (the engine starting MCP servers)."""
        self.compiled = compiled
        self.run_config = run_config
        self.session = session
        self.max_turns = max_turns
        self.use_responses = use_responses
        self.scope = RunScope(invocation)
        self.scope.quiet = quiet
        self.translator = Translator(self.scope, invocation.history)
        self.decided: list[str] = []
        self.cleared: list[str] = []
        """Child-run calls an approval let through, whose child has not ended yet."""
        self.interrupts: dict[str, str] = {}
        """Open interrupt id -> call id (interrupts announced and not yet answered)."""
        self.saved = invocation.entry is not Entry.FRESH
        """The state area may hold this run's saved state: a fresh run has none until it saves
        (see :meth:`_forget`)."""

    @property
    def agent_name(self) -> str:
        return self.compiled.declaration.name

    async def run(self) -> AsyncIterator[Payload]:
        if self.prepare is not None:
            await self.prepare()
        invocation = self.invocation
        if invocation.entry is Entry.FRESH:
            run_input: Any = to_sdk_input(invocation.input, use_responses=self.use_responses)
        else:
            parked = await load_parked(invocation.state, invocation.run_id)
            if parked is None:
                if invocation.entry is Entry.ANSWERED:
                    raise ReplayError(
                        f"run '{invocation.run_id}' waits for an approval, but its saved state "
                        f"({STATE_NAME}) is missing from the engine-state area",
                        run_id=invocation.run_id,
                        reason="state_missing",
                    )
                # Paused before the SDK kept anything: the turn is played again from its input.
                run_input = to_sdk_input(invocation.input, use_responses=self.use_responses)
            elif parked.completed is not None:
                # A quiet play paused after its final reply: the run completes with it.
                await self._forget()
                yield RunCompleted(
                    output=parked.completed,
                    usage=self._usage(),
                    agent=parked.agent or self.agent_name,
                )
                return
            else:
                state = await self._restore(parked)
                ended = False
                settled = self._settle(state, pending_of(state.get_interruptions()))
                async with contextlib.aclosing(settled):
                    async for payload in settled:
                        ended = ended or payload.kind in _ENDS_PLAY
                        yield payload
                if ended:
                    return
                run_input = state
        while True:
            result: RunResult | RunResultStreaming | None
            error: Exception | None = None
            if self.scope.quiet:
                if isinstance(run_input, RunState) and await self.scope.safepoint(
                    SafePoint.TOOL_DISPATCH
                ):
                    # Continuing a settled turn runs the calls it let through: their safe point.
                    for payload in await self._obey(run_input):
                        yield payload
                    return
                outcome = _Outcome()
                async with contextlib.aclosing(self._run_quiet(run_input, outcome)) as quiet:
                    async for payload in quiet:
                        yield payload
                result, error = outcome.result, outcome.error
                if result is not None and not self.scope.stopping:
                    for payload in self.translator.outputs_kept(result.new_items):
                        yield payload
            else:
                streamed = result = Runner.run_streamed(
                    self.compiled.sdk_agent,
                    run_input,
                    context=self.scope,
                    max_turns=self.max_turns,
                    run_config=self.run_config,
                    session=self.session,
                    hooks=self.compiled.run_hooks,
                )
                stream = streamed.stream_events()
                self.scope.attach(streamed.cancel)
                drained = False
                try:
                    # The stream loop is inline rather than a generator of its own: one async
                    # generator less for every payload of the turn to pass through. (It reads
                    # scope.directive rather than scope.stopping: a call less per payload.)
                    scope, translate = self.scope, self.translator.translate
                    async for event in stream:
                        payloads = translate(event)
                        if not payloads:
                            continue
                        for payload in payloads:
                            if scope.directive is not None:
                                break
                            yield payload
                        if (
                            scope.directive is not None
                            or await scope.safepoint(SafePoint.STREAM_ITEM) is not None
                        ):
                            break
                    else:
                        drained = True
                except Exception as exc:
                    error = exc
                finally:
                    self.scope.attach(None)
                    if not (drained and streamed.is_complete):
                        await _stop(streamed, stream)  # (a finished stream has nothing to stop)

            # A quiet run stopped by nothing but itself: an error it raised is the run's.
            if self.scope.directive is not None and (error is None or not self.scope.quiet):
                for payload in await self._obey(result):
                    yield payload
                return
            if self.scope.failure is not None:
                failure = self.scope.failure
                for payload in self.translator.close_open_call(failure.call_id, failure.error):
                    yield payload
                await self._forget()
                yield tool_failure(failure)
                return
            if error is not None:
                await self._forget()
                tripped = tripwire_report(error, self.agent_name)
                if tripped is not None:
                    yield tripped
                yield failure_of(error, agent=self.agent_name, max_turns=self.max_turns)
                return
            assert result is not None
            if result.interruptions:
                state = result.to_state()
                ended = False
                settled = self._settle(state, pending_of(result.interruptions))
                try:
                    async with contextlib.aclosing(settled):
                        async for payload in settled:
                            ended = ended or payload.kind in _ENDS_PLAY
                            yield payload
                except HookFailed as failed:
                    await self._forget()
                    yield failure_of(failed, agent=self.agent_name, max_turns=self.max_turns)
                    return
                if ended:
                    return
                run_input = state
                continue
            await self._forget()
            yield RunCompleted(
                output=self._output(result.final_output),
                usage=self._usage(),
                agent=_name(result.last_agent) or self.agent_name,
            )
            return

    async def _run_quiet(self, run_input: Any, outcome: _Outcome) -> AsyncIterator[Payload]:
        """One ``Runner.run`` of a quiet play (see :mod:`agentdeck_openai.quiet`).

        The SDK runs in a task of its own; its run hooks put payloads and safe-point requests on
        the feed, which this drains in order: every payload is yielded, and a safe point is
        taken (and its directive handed back to the waiting hook) only once everything before
        it is. ``outcome`` receives the result, or the exception the run raised.
        """
        scope, feed = self.scope, Feed()
        scope.feed = feed
        task = asyncio.ensure_future(
            Runner.run(
                self.compiled.sdk_agent,
                run_input,
                context=scope,
                max_turns=self.max_turns,
                run_config=self.run_config,
                session=self.session,
                hooks=QuietHooks(scope, self.translator, feed, self.compiled.run_hooks),
            )
        )
        task.add_done_callback(lambda _done: feed.end())
        try:
            while (entry := await feed.next()) is not END:
                if isinstance(entry, SafePointAsk):
                    directive = await scope.safepoint(entry.point)
                    if not entry.answer.done():
                        entry.answer.set_result(directive)
                    continue
                if scope.stopping:
                    continue  # the directive's payloads end the play; nothing follows them
                for payload in cast("list[Payload]", entry):
                    yield payload
        finally:
            scope.feed = None
            if not task.done():  # the play was closed early: the SDK run goes with it
                task.cancel()
                await asyncio.wait((task,))
        try:
            outcome.result = task.result()
        except Exception as exc:
            outcome.error = exc

    # ------------------------------------------------------------------ run control

    async def _obey(
        self, stopped: RunResult | RunResultStreaming | RunState[Any, Any] | None
    ) -> tuple[Payload, ...]:
        """Persist what a pause needs (the SDK state of the stopped run, or the state the play
        holds between SDK runs), and hand back the directive's payloads to end the play.

        A quiet run paused after its final reply has finished: its output is what is kept.
        """
        directive = self.scope.directive
        assert directive is not None
        if directive.verb is ControlVerb.PAUSE:
            if isinstance(stopped, RunResult) and not stopped.interruptions:
                await self._save(
                    None,
                    {},
                    completed=self._output(stopped.final_output),
                    agent=_name(stopped.last_agent),
                )
            elif isinstance(stopped, RunResult | RunResultStreaming):
                await self._save(stopped.to_state(), {})
            else:
                await self._save(stopped, {})
        else:
            await self._forget()
        return directive.payloads

    # ------------------------------------------------------------------ pending calls

    async def _restore(self, parked: Parked) -> RunState[Any, Any]:
        try:
            state = await RunState.from_string(
                self.compiled.sdk_agent,
                parked.sdk_state,
                context_override=RunContextWrapper(context=self.scope),
            )
        except Exception as stale:  # the SDK raises several types, some with redacted details
            raise ReplayError(
                f"run '{self.invocation.run_id}': its saved state no longer fits agent "
                f"'{self.agent_name}' (was the agent changed since the run stopped?)",
                run_id=self.invocation.run_id,
                reason="code_changed",
            ) from stale
        self.scope.artifacts.extend(parked.artifacts)
        self.decided = list(parked.decided)
        self.cleared = list(parked.cleared)
        self.interrupts = dict(parked.interrupts)
        self.scope.held = set(parked.held)
        return state

    async def _settle(
        self, state: RunState[Any, Any], pending: Sequence[Pending]
    ) -> AsyncIterator[Payload]:
        """Deal with the calls the SDK stopped on, yielding what that records.

        Calls held back by a pause (:mod:`agentdeck_openai.dispatch_gate`), and calls the SDK
        held only because it could not read their arguments, are let through as they are.
        Then every approval: the answers the log records, else (for a call nobody was asked
        about) the agent's policy; what neither decides parks the run on one question per call. Only
        when every call of the turn is decided do the approved subagents' child runs start. The
        last payload ends the play when it is a suspension or a directive's; otherwise ``state``
        holds every decision and the SDK run continues from it.
        """
        answers = answers_of(self.invocation.history, self.invocation.answers)
        asked = {call_id: iid for iid, call_id in self.interrupts.items()}
        asks: list[Pending] = []
        children: list[ChildCall] = []
        for call in pending:
            if call.call_id in self.decided:
                continue
            if call.call_id in self.scope.held or not self.compiled.declares_approval(
                call.agent, call.tool
            ):
                state.approve(call.item)
                self.scope.held.discard(call.call_id)
                self.decided.append(call.call_id)
                continue
            target = self.compiled.child_target(call.agent, call.tool)
            if target is not None and (call.call_id in self.cleared or not target.needs_person):
                children.append(ChildCall(call.call_id, call.arguments, target))
                continue
            verdict = await self._verdict(call, asked.get(call.call_id), answers)
            if verdict is None:
                asks.append(call)
                continue
            if verdict.interrupt_id is not None:
                self.interrupts.pop(verdict.interrupt_id, None)
            yield decided_event(call, verdict.decision, verdict.origin, verdict.interrupt_id)
            if target is not None and verdict.decision.approved:
                self.cleared.append(call.call_id)
                children.append(ChildCall(call.call_id, call.arguments, target))
            else:
                _apply(state, call, verdict.decision)
                self.decided.append(call.call_id)
        ending: Sequence[Payload] = ()
        if asks:
            ending = await self._park(state, asks)
        elif children:
            ending = await self._run_children(state, pending, children)
        for payload in ending:
            yield payload

    async def _verdict(
        self,
        call: Pending,
        interrupt_id: str | None,
        answers: dict[str, Any],
    ) -> _Verdict | None:
        """A person's answer to the call's open question; for a call nobody was asked about
        yet, the agent's policy."""
        if interrupt_id is not None:
            if interrupt_id not in answers:
                return None
            answered = read_decision(answers[interrupt_id]) or Decision(False, _UNREADABLE_ANSWER)
            return _Verdict(answered, AnswerOrigin.HUMAN, interrupt_id)
        policy = self.compiled.policy_for(call.agent)
        if policy is None:
            return None
        verdict = await policy.call(
            "approve_tool_call",
            self.scope,
            agent=call.agent,
            tool=call.tool,
            args=parse_arguments(call.arguments).value,
            call_id=call.call_id,
        )
        decision = read_decision(verdict)
        return None if decision is None else _Verdict(decision, AnswerOrigin.POLICY)

    async def _park(
        self, state: RunState[Any, Any], asks: Sequence[Pending]
    ) -> list[RunInterrupted]:
        """Save the state and ask about every call still waiting, one question each."""
        asked = {call_id: iid for iid, call_id in self.interrupts.items()}
        used = used_interrupt_ids(self.invocation.history) | set(self.interrupts)
        opened: dict[str, str] = {}
        for call in asks:
            interrupt_id = asked.get(call.call_id) or new_interrupt_id(call.call_id, used)
            used.add(interrupt_id)
            opened[interrupt_id] = call.call_id
        self.interrupts = opened
        await self._save(state, opened)
        by_call = {call_id: iid for iid, call_id in opened.items()}
        return [interrupt_event(call, by_call[call.call_id]) for call in asks]

    async def _run_children(
        self, state: RunState[Any, Any], pending: Sequence[Pending], children: Sequence[ChildCall]
    ) -> tuple[Payload, ...]:
        """Start the turn's child runs and wait for them; payloads that end the play, if any.

        The tool-dispatch safe point comes before the children start and again once they have
        ended or parked (a cancel of this run cascades to its children and is taken here, not
        reported as their failure). Children that parked park this run as a pause that names
        them; otherwise the calls are approved in ``state`` for the SDK to run.
        """
        if await self.scope.safepoint(SafePoint.TOOL_DISPATCH) is not None:
            return await self._obey(state)
        waiting = await settle_children(self.scope, children)
        if await self.scope.safepoint(SafePoint.TOOL_DISPATCH) is not None:
            return await self._obey(state)
        if waiting:
            await self._save(state, {})
            return (
                RunPaused(
                    reason=f"waiting for child run {', '.join(waiting)}",
                    waiting_on=WaitKind.CHILD_RUNS,
                    waiting_for=list(waiting),
                ),
            )
        items = {call.call_id: call for call in pending}
        for child in children:
            state.approve(items[child.call_id].item)
            self.decided.append(child.call_id)
            if child.call_id in self.cleared:
                self.cleared.remove(child.call_id)
        return ()

    # ------------------------------------------------------------------ state area

    async def _save(
        self,
        state: RunState[Any, Any] | None,
        interrupts: dict[str, str],
        *,
        completed: list[ContentBlock] | None = None,
        agent: str | None = None,
    ) -> None:
        area = self.invocation.state
        if area is None:
            return
        parked = Parked(
            sdk_state="" if state is None else state.to_string(context_serializer=serialize_scope),
            interrupts=interrupts,
            decided=list(self.decided),
            cleared=list(self.cleared),
            artifacts=list(self.scope.artifacts),
            held=sorted(self.scope.held),
            completed=completed,
            agent=agent,
        )
        self.saved = True
        await area.put(STATE_NAME, parked.to_bytes())

    async def _forget(self) -> None:
        """Delete the run's saved state: the run has ended, or will save anew.

        A fresh play that saved nothing has nothing to delete (its run id is new, and only its
        plays write its state), so it skips the store's round trip, which most runs would pay.
        """
        if self.saved and self.invocation.state is not None:
            await self.invocation.state.delete(STATE_NAME)

    # ------------------------------------------------------------------ the result

    def _output(self, final: Any) -> list[ContentBlock]:
        output: list[ContentBlock] = list(self.scope.artifacts)
        if self.compiled.structured_output and final is not None:
            output.append(DataBlock(data=json.loads(json_text(final))))
        elif isinstance(final, str):
            output.append(TextBlock(text=final))
        elif final is not None:
            output.append(DataBlock(data=json.loads(json_text(final))))
        return output

    def _usage(self) -> Usage:
        total = Usage()
        for usage in _reported(self.invocation.history):
            total = total + usage
        for usage in self.translator.usage:
            total = total + usage
        return total


def _name(agent: Any) -> str | None:
    name = getattr(agent, "name", None)
    return name if isinstance(name, str) else None


def _reported(history: Sequence[Event]) -> list[Usage]:
    return [e.payload.usage for e in history if isinstance(e.payload, UsageReported)]


def _apply(state: RunState[Any, Any], pending: Pending, decision: Decision) -> None:
    if decision.approved:
        state.approve(pending.item)
    else:
        state.reject(pending.item, rejection_message=decision.message or REJECTED)


async def _stop(result: RunResultStreaming, stream: AsyncIterator[Any]) -> None:
    """End the SDK run now (a no-op if it finished) and let its stream wind down."""
    if not result.is_complete:
        result.cancel()
    with contextlib.suppress(Exception):
        async for _ in stream:
            pass
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        with contextlib.suppress(Exception):
            await aclose()
