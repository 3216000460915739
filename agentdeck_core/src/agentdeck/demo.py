"""``python -m agentdeck.demo``: the main job, offline, on the embedded default.

A refund-approval ``@workflow`` runs on a ``Deck`` with nothing but the core installed: the
native engine plays the body, the event log lives where the settings say (``AGENTDECK_STATE``,
by default the SQLite file ``.agentdeck/state.db`` of the working directory), and every event is
printed as it is recorded. The run parks on a question
for a person; the demo answers it the way an operator would (through ``deck.runs.get``), and the
run completes.

With ``agentdeck-openai`` installed, an agent turn follows: the demo starts that plugin's
loopback model server as a process of its own (``agentdeck-openai loopback``, the command a user
runs to try ``agentdeck run``/``serve``/``chat`` offline), points a deck at it with the
``OPENAI_*`` variables it prints, and plays one turn of an ``Agent``. Only the process is shared:
the core imports no plugin.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import signal
import subprocess
import sys
import warnings
from typing import Any

from agentdeck import Agent, Deck, Event, RunStatus, WorkflowCtx, workflow
from agentdeck.runtime.config import NonDurableStoreWarning
from agentdeck.settings import Settings


class Shop:
    """The application's own environment: it reaches the body as ``ctx.data``, never the log."""

    def __init__(self) -> None:
        self.orders = {"A-1003": {"amount": 42.0, "customer": "sagi"}}
        self.refunded: list[str] = []

    def refund(self, order_id: str) -> str:
        self.refunded.append(order_id)
        return f"refund-{order_id}"


@workflow
async def refund_approval(order_id: str, ctx: WorkflowCtx[Shop]) -> dict[str, Any]:
    """Look an order up, ask a person to approve the refund, then issue it."""
    order = await ctx.step("look up order", lambda: ctx.data.orders[order_id])
    await ctx.report("order found", amount=order["amount"])
    decision = await ctx.ask(
        {"question": f"Refund {order['amount']:.2f} to {order['customer']}?"},
        options=["approve", "reject"],
    )
    if decision != "approve":
        return {"order_id": order_id, "refunded": False}
    receipt = await ctx.step("issue refund", lambda: ctx.data.refund(order_id))
    return {"order_id": order_id, "refunded": True, "receipt": receipt}


def _line(event: Event) -> str:
    payload = event.payload.model_dump(mode="json", exclude={"kind"}, exclude_none=True)
    return f"{event.seq:>3}  {event.kind:<18} {payload}"


async def main() -> int:
    settings = Settings.load()
    shop = Shop()
    async with Deck(workflows=[refund_approval], context=Shop, settings=settings) as deck:
        print(f"store: {settings.events_url}")
        run_id, last_seq = "", -1
        async for event in deck.stream("refund_approval", {"order_id": "A-1003"}, context=shop):
            run_id, last_seq = event.run_id, event.seq
            print(_line(event))
        run = await deck.runs.get(run_id)
        pending = await run.pending()
        assert pending is not None
        print(f"--- parked: {pending.payload['question']} -> answering 'approve'")
        await run.answer("approve")
        async for event in run.events(from_seq=last_seq + 1, follow=True):
            print(_line(event))
        result = await run
        status = await run.status()
        print(f"status: {status.value}   result: {result}   refunded: {shop.refunded}")
        if status is not RunStatus.COMPLETED:
            return 1
    return await agent_turn()


async def agent_turn() -> int:
    """One agent turn against the loopback model server, when agentdeck-openai is installed."""
    if importlib.util.find_spec("agentdeck_openai") is None:
        print("--- agent turn: install agentdeck-openai to see one, offline, against its loopback")
        return 0
    server = subprocess.Popen(
        [sys.executable, "-m", "agentdeck_openai.loopback", "loopback"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        env: dict[str, str] = {}
        assert server.stdout is not None
        for line in server.stdout:
            if line.startswith("export "):
                name, _, value = line.removeprefix("export ").strip().partition("=")
                env[name] = value
            elif line.startswith("# loopback"):
                break
        print(f"--- agent turn against the loopback model server ({env.get('OPENAI_BASE_URL')})")
        assistant = Agent(name="assistant", instructions="Answer in one short sentence.")
        settings = Settings.load(env={**os.environ, **env})
        async with Deck(agents=[assistant], settings=settings) as deck:
            turn = await deck.run("assistant", "Who is answering me?")
        print(f"assistant: {turn.output}")
        return 0
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=30)


if __name__ == "__main__":
    # Run with AGENTDECK_STATE=memory:// the demo parks in memory on purpose; the warning is
    # for real deployments.
    warnings.simplefilter("ignore", NonDurableStoreWarning)
    sys.exit(asyncio.run(main()))
