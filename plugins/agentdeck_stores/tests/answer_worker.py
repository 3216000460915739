"""A worker process for the answer-race tests: one open deck on a shared store, driven by JSON
lines on stdin.

Run as ``python answer_worker.py <store-url>``. It opens a deck whose events and control both
live at the URL (no engines: answers are recorded, never played), prints ``{"ready": true}``
and then answers one JSON line per command:

``{"op": "answer", "run_id": r, "value": v}``
    ``await run.answer(v, play=False)`` through the public handle, no interrupt id given.
``{"op": "cancel", "run_id": r}``
    ``await run.cancel("raced")``.
``{"op": "exit"}``
    closes the deck and exits.

Each reply is ``{"returned": <what the call returned>}`` or ``{"raised": <error class>,
"refusal": ..., "origin": ..., "status": ...}`` -- a loser's error crosses the process boundary
by its facts, so the test can tell a typed refusal from a quiet ``None``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from agentdeck import Deck, RunStateError
from agentdeck.settings import CoreSettings, Settings


def _say(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


async def _act(deck: Deck, command: dict[str, Any]) -> dict[str, Any]:
    run = await deck.runs.get(command["run_id"])
    try:
        if command["op"] == "answer":
            returned = await run.answer(command["value"], play=False)
        else:
            returned = await run.cancel("raced")
    except RunStateError as refused:
        return {
            "raised": type(refused).__name__,
            "refusal": refused.refusal,
            "origin": getattr(refused, "origin", None),
            "status": refused.status.value if refused.status is not None else None,
        }
    return {"returned": returned}


async def main(url: str) -> None:
    settings = Settings.load(overrides={CoreSettings.section: {"events": url, "control": url}})
    async with Deck(settings=settings, observers=()) as deck:
        _say({"ready": True})
        loop = asyncio.get_running_loop()
        while True:
            line = await loop.run_in_executor(None, sys.stdin.readline)
            if not line:
                return
            command = json.loads(line)
            if command["op"] == "exit":
                return
            _say(await _act(deck, command))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
