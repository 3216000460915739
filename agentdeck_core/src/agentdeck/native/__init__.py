"""The core's native engine for imperative ``@workflow`` bodies, durable by replay.

:class:`NativeWorkflowEngine` (registered as engine ``workflow``) plays a body as ordinary
``async`` Python and hands it a :class:`NativeWorkflowCtx`. The log is all a parked run needs:
when a run continues -- after an answer, a lifted pause or a timer -- in another process or
after a restart, the engine re-executes the body from its first line against the *journal*, the
run's own log, and every context operation the body already completed returns its recorded
outcome instead of happening again.

In the process that parked it, a run does not replay: the body's task is kept suspended where it
waited, with the ``ctx`` it holds, and the continuation wakes it there
(:mod:`agentdeck.native.suspension`; the log still decides whether it may). Any continuation may
be a replay, so the rules below hold for every body.

What is journaled, and how a replay uses it:

* ``await ctx.step(name, fn, *args, **kwargs)`` runs ``fn`` (sync or async; a sync one runs
  inline on the event loop, like a sync tool) and records ``step.completed(index, name,
  result)``; the body continues only once that event is persisted. On replay the result comes
  from the log and ``fn`` is not called. The result must be JSON data as it stands -- dicts with
  string keys, lists, strings, numbers, booleans, ``None`` -- so the body holds the same value on
  every execution: a tuple, a time or a model fails the run with a message saying how to
  convert it.
* ``await ctx.invoke(name, input)`` starts the catalog's agent or workflow ``name`` as a child
  run and journals its result like a step (the child is started with a key derived from this
  run and the operation's ordinal, so a retried start finds the same child).
* ``await ctx.sleep_until(when)`` journals the wake time (``step.completed`` named
  ``sleep_until``); if it is still ahead, the run parks as ``run.paused(reason="sleep",
  wake_at=when)`` for the deck's sweep to resume. On replay the sleep is over once the journaled
  time has passed or the run was resumed from that pause (an operator may wake it early).
* ``await ctx.ask(question, schema=..., options=...)`` parks the run on ``run.interrupted``
  with the interrupt id ``ask-<n>`` (the body's n-th ask, from 0) and the answer's shape; on
  replay it returns the recorded answer -- validated into the ``schema`` type when one was given.
  An answer that does not fit is refused in the log (``answer.refused``) and the ask parks again.
  Asks started together (``asyncio.gather``) park together, as several open interrupts.
* ``await ctx.report(...)`` / ``await ctx.emit(...)`` record ``report`` / ``custom`` events; on
  replay the ones already in the log are not written again.
* ``await ctx.safepoint()`` lets a pending pause or cancel take effect there. After a pause the
  continuation replays up to it and carries on past it.

The determinism rules a body follows, because a replay must reach the same operations in the
same order as the run it continues:

1. Everything that can differ between two executions -- the wall clock, random numbers and ids,
   reads of files, databases, services or the environment -- happens inside ``ctx.step(...)``,
   so its value is journaled: ``now = await ctx.step("now", lambda: datetime.now(UTC)
   .isoformat())``. Between operations the body is a pure function of its input and of what its
   operations returned.
2. Side effects (a charge, an e-mail, a write) happen only inside steps. A step runs once per
   run, with one caveat: a step cut off before its result was recorded (the process died, or
   the play parked or paused while it ran concurrently) runs again on replay, so give side
   effects an idempotency key, e.g. ``f"{ctx.run_id}/charge"``.
3. A step whose function raises records nothing: on replay it runs again. To make a failure part
   of the journal, catch it inside the function and return a JSON description of it.
4. Operations that take an ordinal (``step``, ``invoke``, ``sleep_until``, ``ask``) are called
   from the body, never from inside a step's function.
5. Concurrent operations are fine when the order in which they are *called* does not depend on
   timing: ``asyncio.gather(ctx.step("a", f), ctx.step("b", g))`` is deterministic; calling the
   next operation from whichever of two racing tasks finishes first (``asyncio.wait`` with
   ``FIRST_COMPLETED``, ``as_completed``) is not.
6. ``ctx.data`` is the caller's live object, never journaled, and ``None`` when a run is
   continued through a handle that did not carry it: read through it inside steps.
7. The body's code is pinned: the runtime records its digest at start, and a run whose body
   changed since is refused with :class:`~agentdeck.errors.ReplayError`
   (``reason="code_changed"``) rather than replayed onto different code. Only the body's own
   source is fingerprinted; keep the helpers it calls stable while runs are parked (or give a
   changed workflow a new name).

A replay that breaks these rules visibly -- the operation at an ordinal has another name, an ask
asks another question -- ends with :class:`~agentdeck.errors.ReplayError`
(``reason="nondeterministic"``) instead of handing a recorded result to the wrong operation.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentdeck.native.ctx import NativeWorkflowCtx
    from agentdeck.native.engine import NativeWorkflowEngine

__all__ = ["NativeWorkflowCtx", "NativeWorkflowEngine"]

# Resolved on first use: the host imports ``agentdeck.native.plugin`` (so this package) at every
# plugin discovery, and a command that only reads a store must not pay for the engine's imports.
_LAZY = {
    "NativeWorkflowCtx": "agentdeck.native.ctx",
    "NativeWorkflowEngine": "agentdeck.native.engine",
}


def __getattr__(name: str) -> object:
    home = _LAZY.get(name)
    if home is None:
        raise AttributeError(f"module 'agentdeck.native' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
