"""A worker process for the multi-process tests: one store, driven by JSON lines on stdin.

Run as ``python sql_worker.py <store-url>``. It builds the store through the installed plugins
(the ``sqlite``/``postgresql`` schemes), opens it, prints ``{"ready": true}`` and then answers
one JSON line per command:

``{"op": "race", "session": s, "tries": k}``
    ``k`` concurrent ``open_run`` calls on session ``s``; answers the ids that opened and the
    holder each refused one was told about.
``{"op": "append", "run_id": r, "count": n, "complete": bool}``
    ``n`` appends one after another (then ``run.completed`` when asked); answers the seqs.
``{"op": "append_forever", "run_id": r}``
    appends until killed, printing ``{"seq": n}`` as soon as each append has returned.
``{"op": "exit"}``
    closes the store and exits.
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from typing import Any

from agentdeck.model.content import TextBlock
from agentdeck.model.payloads import RunCompleted, RunStarted, TextDelta
from agentdeck.plugins.host import PluginHost
from agentdeck.ports import BackendRequest, EventStore, NewRun


def _say(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _new_run(session: str) -> NewRun:
    # Not agentdeck.testing.new_run: importing the kits (pytest, hypothesis) would double the
    # worker's start-up time.
    started = RunStarted(name="worker", invocable_kind="agent", input=[TextBlock(text="hi")])
    return NewRun(run_id=f"run-{uuid.uuid4().hex}", started=started, session_id=session)


async def _race(store: EventStore, session: str, tries: int) -> dict[str, Any]:
    news = [_new_run(session) for _ in range(tries)]
    outcomes = await asyncio.gather(*(store.open_run(new) for new in news))
    return {
        "won": [new.run_id for new, outcome in zip(news, outcomes, strict=True) if outcome.opened],
        "busy": [outcome.busy.run_id for outcome in outcomes if outcome.busy is not None],
    }


async def _append(store: EventStore, run_id: str, count: int, complete: bool) -> dict[str, Any]:
    seqs: list[int] = []
    for n in range(count):
        (event,) = await store.append(run_id, [TextDelta(message_id="m", text=f"w{n}")])
        seqs.append(event.seq)
    if complete:
        (event,) = await store.append(run_id, [RunCompleted()])
        seqs.append(event.seq)
    return {"seqs": seqs}


async def _append_forever(store: EventStore, run_id: str) -> None:
    n = 0
    while True:
        (event,) = await store.append(run_id, [TextDelta(message_id="m", text=f"k{n}")])
        _say({"seq": event.seq})  # only now: the append returned, so it must survive a kill
        n += 1


async def main(url: str) -> None:
    store = PluginHost.discover().event_store(BackendRequest(url=url))
    await store.open()
    _say({"ready": True})
    loop = asyncio.get_running_loop()
    try:
        while True:
            line = await loop.run_in_executor(None, sys.stdin.readline)
            if not line:
                return
            command = json.loads(line)
            op = command["op"]
            if op == "race":
                _say(await _race(store, command["session"], int(command["tries"])))
            elif op == "append":
                _say(
                    await _append(
                        store, command["run_id"], int(command["count"]), command["complete"]
                    )
                )
            elif op == "append_forever":
                await _append_forever(store, command["run_id"])
            elif op == "exit":
                return
            else:
                _say({"error": f"unknown op {op!r}"})
    finally:
        await store.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
