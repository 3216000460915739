"""Child process of the cross-process tests: answer a parked run in a process of its own.

``python answer_child.py <checkpointer url> <log.json> <answer.json> <out.json>``: reads the
run's log (one JSON event per line, as a store hands it back), builds the ``asking`` workflow
and a fresh engine on the checkpointer, answers the open question, and writes the log after the
continuation the same way. Nothing but the checkpointer and the log crosses the boundary.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lg_graphs import START_STATE, asking

from agentdeck.model.events import Event
from agentdeck.model.status import fold
from agentdeck.testing.engine_kit import drive, make_invocation
from agentdeck_langgraph import LangGraphEngine, Workflow


async def main(url: str, log: Path, answer: Path, out: Path) -> None:
    history = [Event.from_json(line) for line in log.read_text().splitlines() if line]
    [open_question] = fold(history).interrupts
    engine = LangGraphEngine(checkpointer=url)
    await engine.open()
    try:
        result = await drive(
            engine,
            make_invocation(engine, Workflow("approval", asking()), START_STATE),
            history=history,
            answers={open_question.interrupt_id: json.loads(answer.read_text())},
        )
    finally:
        await engine.close()
    result.assert_clean()
    out.write_text("\n".join(event.to_json() for event in result.events))


if __name__ == "__main__":
    url, log, answer, out = sys.argv[1:5]
    asyncio.run(main(url, Path(log), Path(answer), Path(out)))
