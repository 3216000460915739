"""`python -m benchmarks --compare SAVED.json` marks rows that got worse than a saved run.

Run as a user runs it, from the checkout, on the harness self-check rows (they measure no
AgentDeck code, so a smoke round takes milliseconds). The saved file is a real results file the
first run wrote, with one row's value rewritten so the second run is certainly worse (or better)
than it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROW = "harness self-check: pydantic model_validate_json vs json.loads"


def _bench(results: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks",
            "--smoke",
            "-k",
            ROW,
            "--results-dir",
            str(results),
            *extra,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _comparison_lines(stdout: str) -> list[str]:
    return [x for x in stdout.splitlines() if x.strip().startswith(ROW + ":") and " -> " in x]


def _saved_with(results: Path, value: float, *, extra_row: str | None = None) -> Path:
    first = _bench(results)
    assert first.returncode == 0, first.stderr
    (written,) = results.glob("*.json")
    document = json.loads(written.read_text(encoding="utf-8"))
    (row,) = [r for r in document["rows"] if r["name"] == ROW]
    row["value"] = value
    if extra_row is not None:
        document["rows"].append({**row, "name": extra_row})
    saved = results.parent / f"saved-{value}.json"
    saved.write_text(json.dumps(document), encoding="utf-8")
    return saved


def test_a_row_much_worse_than_its_saved_value_is_marked(tmp_path: Path) -> None:
    # A ratio can never be 0.001x: whatever this run measures is far more than 20% above it.
    saved = _saved_with(tmp_path / "a", 0.001, extra_row="a row that no longer exists")
    second = _bench(tmp_path / "b", "--compare", str(saved))
    assert second.returncode == 0, second.stderr
    (line,) = [
        x for x in second.stdout.splitlines() if x.strip().startswith(ROW + ":") and " -> " in x
    ]
    assert line.endswith("WORSE"), second.stdout
    assert "a row that no longer exists: saved but not measured now" in second.stdout


def test_a_row_better_than_its_saved_value_is_not_marked(tmp_path: Path) -> None:
    saved = _saved_with(tmp_path / "a", 1000.0)
    second = _bench(tmp_path / "b", "--compare", str(saved))
    assert second.returncode == 0, second.stderr
    (line,) = [
        x for x in second.stdout.splitlines() if x.strip().startswith(ROW + ":") and " -> " in x
    ]
    assert "better" in line and not line.endswith("WORSE"), second.stdout


def test_a_file_that_is_not_a_results_file_is_refused_before_measuring(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.json"
    bogus.write_text('{"hello": 1}', encoding="utf-8")
    run = _bench(tmp_path / "r", "--compare", str(bogus))
    assert run.returncode == 2
    assert "no 'rows' list" in run.stderr
    assert not (tmp_path / "r").exists()  # nothing was measured or written
