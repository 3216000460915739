"""``python -m agentdeck.demo``: the main job, offline, on the embedded default store.

It goes through exactly what a deployment uses: settings choose the event store by URL
(``AGENTDECK_EVENTS``, default ``memory://``), the plugin host builds it from whichever installed
plugin offers that scheme, and a follower reads the run back while it is written — woken by each
append, not by polling. The run parks on a question, is answered, and completes; every event is
printed as it arrives and the folded status is printed at the end.
"""

from __future__ import annotations

import asyncio
import sys
import uuid

from agentdeck.content import DataBlock, TextBlock
from agentdeck.events import (
    AnswerRecorded,
    Event,
    MessageCompleted,
    Report,
    RunCompleted,
    RunInterrupted,
    RunResumed,
    RunStarted,
    TextDelta,
    Usage,
)
from agentdeck.plugins import default_host
from agentdeck.ports import BackendRequest, NewRun
from agentdeck.settings import Settings
from agentdeck.status import RunStatus, fold


def _line(event: Event) -> str:
    payload = event.payload.model_dump(mode="json", exclude={"kind"}, exclude_none=True)
    return f"{event.seq:>3}  {event.kind:<18} {payload}"


async def main() -> int:
    settings = Settings.load()
    store = default_host().event_store(BackendRequest(settings.events_url, settings=settings))
    await store.open()
    try:
        run_id = uuid.uuid4().hex
        opened = await store.open_run(
            NewRun(
                run_id=run_id,
                started=RunStarted(
                    name="refund_approval",
                    invocable_kind="workflow",
                    input=[DataBlock(data={"order_id": "A-1003"})],
                    key="order-A-1003",
                ),
                session_id="demo",
            )
        )
        assert opened.opened
        print(f"store: {settings.events_url}   run: {run_id}")

        async def follow() -> None:
            async for event in store.follow(run_id):
                print(_line(event))

        follower = asyncio.create_task(follow())
        await store.append(run_id, [Report(message="checking the order", fields={"amount": 42})])
        await store.append(
            run_id,
            [
                RunInterrupted(
                    interrupt_id="q0", payload={"question": "Refund 42.00 for order A-1003?"}
                )
            ],
        )
        parked = fold(await store.read(run_id))
        assert parked.status is RunStatus.WAITING_ANSWER and parked.pending is not None
        await store.append(
            run_id,
            [
                AnswerRecorded(interrupt_id="q0", value="yes"),
                RunResumed(reason="answered", interrupt_id="q0"),
            ],
            expect=(RunStatus.WAITING_ANSWER,),
        )
        for token in ("Refund ", "approved ", "and issued."):
            await store.append(run_id, [TextDelta(message_id="m1", text=token)])
        await store.append(
            run_id,
            [
                MessageCompleted(message_id="m1", text="Refund approved and issued."),
                RunCompleted(output=[TextBlock(text="Refund approved and issued.")], usage=Usage()),
            ],
        )
        await follower
        record = await store.get_run(run_id)
        assert record is not None
        print(f"status: {record.status.value} (folded from {record.last_seq + 1} events)")
        return 0 if record.status is RunStatus.COMPLETED else 1
    finally:
        await store.close()


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
