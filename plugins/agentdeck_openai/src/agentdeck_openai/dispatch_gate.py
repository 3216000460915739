"""The tool-dispatch safe point of a quiet play, taken through the SDK's own approval check.

A quiet play runs ``Runner.run`` (see :mod:`agentdeck_openai.quiet`): there is no stream to
cancel and restart, so a pause before a tool runs must stop the SDK run in a state it can resume
from without running anything twice. The SDK has exactly one such stop: a call awaiting approval.
Every function tool an agent offers therefore carries a :class:`DispatchGate` as its
``needs_approval``:

* in a streamed play it answers what the tool declares (the wrapper takes the safe point);
* in a quiet play a call the tool declares no approval for asks :meth:`RunScope.hold
  <agentdeck_openai.scope.RunScope.hold>`: the play takes the tool-dispatch safe point once
  everything reported before is recorded, and on a directive the call is *held*, which the SDK
  treats as a call awaiting approval. The play saves the SDK state and ends with the directive;
  a resumed run approves its held calls before anything else, so they run then, once.

The SDK does not consult a ``needs_approval`` callable for a call whose arguments are not a JSON
object (it holds the call for approval at once); :func:`declares_approval` tells the play such a
call needs no person, and the play lets it through itself.

A tool whose approval is a per-call function is asked here, once per call, as the SDK asks it.
A call it lets through without a person is recorded as ``approval.decided(approved=True,
origin="policy")`` (just before the call's ``tool.call.completed``), so an audit sees who let it
run; a call it says needs approval waits like any other (the agent's ``approve_tool_call``
policy, else a person).
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import Any

from agents.tool import FunctionTool

from agentdeck.model.payloads import ApprovalDecided
from agentdeck.vocabulary import AnswerOrigin
from agentdeck_openai.scope import scope_of

__all__ = ["DispatchGate", "declares_approval", "gated"]


class DispatchGate:
    """A function tool's ``needs_approval``: what the tool declares, plus the quiet play's hold."""

    __slots__ = ("declared", "tool")

    def __init__(self, declared: bool | Callable[..., Any], tool: str = "") -> None:
        self.declared = declared
        """The tool's own setting: ``False``, or the application's approval callable."""
        self.tool = tool

    async def __call__(self, context: Any, params: dict[str, Any], call_id: str) -> bool:
        declared = self.declared
        scope = scope_of(context)
        if not isinstance(declared, bool):
            verdict = declared(context, params, call_id)
            if inspect.isawaitable(verdict):
                verdict = await verdict
            if verdict:
                return True
        if scope is None:
            return False
        if await scope.hold(call_id):
            return True
        if not isinstance(declared, bool):
            scope.emit(
                ApprovalDecided(
                    call_id=call_id, tool=self.tool, approved=True, origin=AnswerOrigin.POLICY
                ),
                call_id,
            )
        return False


def gated(tool: FunctionTool) -> FunctionTool:
    """``tool`` with its approval setting behind a :class:`DispatchGate` (a tool that always
    needs approval is left as it is: the SDK stops on every call of it anyway)."""
    if tool.needs_approval is True or isinstance(tool.needs_approval, DispatchGate):
        return tool
    return dataclasses.replace(tool, needs_approval=DispatchGate(tool.needs_approval, tool.name))


def declares_approval(tool: object) -> bool:
    """Whether calls of ``tool`` may need a person's approval (not a gated tool declaring none)."""
    setting = getattr(tool, "needs_approval", True)
    return not (isinstance(setting, DispatchGate) and setting.declared is False)
