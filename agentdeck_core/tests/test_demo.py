"""The README's main-job command (`./dev demo`) runs `python -m agentdeck.demo`: a real
`@workflow` on a `Deck`, offline, printing its events as they are recorded."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_the_demo_runs_a_workflow_end_to_end_offline_and_prints_its_events(
    isolated_state: Path,
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "agentdeck.demo"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin"},
        check=False,
    )

    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    # The embedded default: the SQLite file of the working directory, created by the demo.
    assert lines[0] == f"store: sqlite:///{isolated_state / '.agentdeck' / 'state.db'}"
    assert (isolated_state / ".agentdeck" / "state.db").is_file()
    [ended] = [index for index, line in enumerate(lines) if line.startswith("status: ")]
    assert lines[ended].startswith("status: completed")
    assert "refunded: ['A-1003']" in lines[ended]
    events = [line.split() for line in lines[1:ended] if not line.startswith("---")]
    assert [int(fields[0]) for fields in events] == list(range(len(events)))
    kinds = [fields[1] for fields in events]
    assert kinds == [
        "run.started",
        "step.completed",
        "report",
        "run.interrupted",
        "answer.recorded",
        "run.resumed",
        "step.completed",
        "run.completed",
    ]
