"""A deck in a worker process of the chaos suite, driven by JSON lines on stdin.

Run as ``python deck_worker.py <state-url> [--gate-leases]`` with the runtime settings in the
environment (``AGENTDECK_RUNTIME_LEASE_TTL_SECONDS``, ...). The deck's events, control and
leases all live at the URL. It prints ``{"ready": true}``, then one reply per command:

``{"op": "start", "name": n, "input": i, "session": s}``
    ``deck.runs.start(...)``: ``{"run_id": ...}`` once ``run.started`` is recorded.
``{"op": "turn", "name": n, "input": i, "session": s}``
    ``deck.run(...)`` to its end: what it returned, or the error it raised.
``{"op": "answer", "run_id": r, "value": v}``, ``{"op": "cancel", "run_id": r}``,
``{"op": "resume", "run_id": r}``, ``{"op": "pause", "run_id": r}``
    the public handle's verb; ``{"returned": ...}`` or ``{"raised": <class>, "refusal": ...}``.
``{"op": "many", "name": n, "turns": [{"session": s, "input": i, "delay": d}, ...]}``
    starts every turn ``d`` seconds from now (``deck.run`` each, concurrently) and replies
    ``{"started": N}`` at once; each turn that ends then prints ``{"finished": s,
    "returned": ...}`` (or ``"raised"``), so a test that kills the worker knows which turns
    it saw finish.
``{"op": "exit"}``
    closes the deck and exits.

``--gate-leases`` is the fault-injection seam of the "killed before its lease" window: the
deck's lease port is the real one for the URL, except that taking a lease never finishes (it
says ``{"lease_gate": run_id}`` and waits forever). A run started here is recorded as
``running`` and never gets a lease row; killing the worker then leaves exactly what a worker
killed between ``run.started`` and its lease write leaves.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any, ClassVar

from agentdeck import AgentDeckError, Deck, RunStateError, WorkflowCtx, workflow
from agentdeck.plugins.host import PluginHost
from agentdeck.ports import BackendRequest, LeasePort, LeaseState
from agentdeck.settings import CoreSettings, Settings


def _say(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


@workflow
async def hold(ctx: WorkflowCtx) -> str:
    """Plays until its worker is killed (or the run is cancelled)."""
    await ctx.report("holding")
    await asyncio.sleep(3600)
    return "held"


@workflow
async def approval(ctx: WorkflowCtx) -> str:
    """Parks on one question; ends with the answer."""
    answer = await ctx.ask("ship it?", options=["a", "b", "yes"])
    return str(answer)


@workflow
async def ticking(count: int, ctx: WorkflowCtx) -> int:
    """``count`` progress events, a little apart, each a safe point (where a pause or a cancel
    is acted on): a run long enough to be killed, paused or cancelled at any point."""
    for tick in range(count):
        await ctx.report(f"tick {tick}")
        await ctx.safepoint()
        await asyncio.sleep(0.002)
    return count


class GatedLeases(LeasePort):
    """The real lease port of the URL, except that a lease is never taken (see the module)."""

    shared: ClassVar[bool] = True

    def __init__(self, inner: LeasePort) -> None:
        self.inner = inner
        self.url = inner.url

    async def open(self) -> None:
        await self.inner.open()

    async def close(self) -> None:
        await self.inner.close()

    async def acquire(self, run_id: str, owner: str, ttl: float) -> bool:
        _say({"lease_gate": run_id})
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def renew(self, run_id: str, owner: str, ttl: float) -> bool:
        return await self.inner.renew(run_id, owner, ttl)

    async def release(self, run_id: str, owner: str) -> None:
        await self.inner.release(run_id, owner)

    async def state(self, run_id: str) -> LeaseState:
        return await self.inner.state(run_id)

    async def lapsed(self, limit: int = 100) -> list[str]:
        return await self.inner.lapsed(limit)

    async def forget(self, run_ids: list[str]) -> None:
        await self.inner.forget(run_ids)


def _refusal(error: AgentDeckError) -> dict[str, Any]:
    facts: dict[str, Any] = {"raised": type(error).__name__, "message": str(error)}
    if isinstance(error, RunStateError):
        facts["refusal"] = error.refusal
        facts["origin"] = getattr(error, "origin", None)
        facts["status"] = error.status.value if error.status is not None else None
    return facts


async def _act(deck: Deck, command: dict[str, Any]) -> dict[str, Any]:
    op = command["op"]
    try:
        if op == "start":
            run = await deck.runs.start(
                command["name"], command.get("input"), session_id=command.get("session")
            )
            return {"run_id": run.id}
        if op == "turn":
            returned = await deck.run(
                command["name"], command.get("input"), session_id=command.get("session")
            )
            return {"returned": repr(returned)}
        handle = await deck.runs.get(command["run_id"])
        if op == "answer":
            return {"returned": await handle.answer(command["value"])}
        if op == "cancel":
            return {"returned": await handle.cancel("chaos")}
        if op == "pause":
            return {"returned": await handle.pause("chaos")}
        if op == "resume":
            await handle.resume()
            return {"returned": None}
    except AgentDeckError as error:
        return _refusal(error)
    return {"error": f"unknown op {op!r}"}


_turns: set[asyncio.Task[None]] = set()
"""Turns started by ``many``, held so the loop does not drop them mid-play."""


async def _finish(deck: Deck, name: str, session: str, payload: Any, delay: float) -> None:
    await asyncio.sleep(delay)
    try:
        returned = await deck.run(name, payload, session_id=session)
    except AgentDeckError as error:
        _say({"finished": session, **_refusal(error)})
    else:
        _say({"finished": session, "returned": repr(returned)})


def _start_many(deck: Deck, command: dict[str, Any]) -> dict[str, Any]:
    for turn in command["turns"]:
        task = asyncio.create_task(
            _finish(deck, command["name"], turn["session"], turn["input"], turn.get("delay", 0))
        )
        _turns.add(task)
        task.add_done_callback(_turns.discard)
    return {"started": len(command["turns"])}


async def main(url: str, gate_leases: bool) -> None:
    settings = Settings.load(overrides={CoreSettings.section: {"events": url, "control": url}})
    leases: LeasePort | None = None
    if gate_leases:
        real = PluginHost.discover().lease_port(BackendRequest(url=url, settings=settings))
        leases = GatedLeases(real)
        await leases.open()
    try:
        async with Deck(
            workflows=[hold, approval, ticking], settings=settings, observers=(), leases=leases
        ) as deck:
            _say({"ready": True})
            loop = asyncio.get_running_loop()
            while True:
                line = await loop.run_in_executor(None, sys.stdin.readline)
                if not line:
                    return
                command = json.loads(line)
                if command["op"] == "exit":
                    return
                if command["op"] == "many":
                    _say(_start_many(deck, command))
                    continue
                _say(await _act(deck, command))
    finally:
        if leases is not None:
            await leases.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], "--gate-leases" in sys.argv[2:]))
