"""Compare a run's rows with a saved results file: ``python -m benchmarks --compare SAVED.json``.

A budget says whether a row is good enough; it does not say whether a change made it worse. A
row that passes at 80% of its budget today and at 99% after a change still passes, and the
regression would go unseen in review. So a run can be held against an earlier one (a results
file under ``benchmarks/results/``), and every row more than :data:`WORSE_BY` worse than its
saved value is marked.

"Worse" follows the row's unit: a lower rate for ``per_s`` floors, a higher value for every
ceiling. The change is measured against the saved value's magnitude, but never against less
than :data:`SCALE_FLOOR` of the row's budget: an overhead row (``us``) whose saved value is
+0.02 µs would otherwise be "50% worse" at +0.03 µs, which is noise, not a regression.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks import Measurement

__all__ = ["SCALE_FLOOR", "WORSE_BY", "Comparison", "compare", "load_saved", "print_comparison"]

WORSE_BY = 0.20
"""How much worse than the saved value a row may get before it is marked (a fraction)."""

SCALE_FLOOR = 0.10
"""The smallest scale a change is measured against, as a fraction of the row's budget."""


class SavedResultsError(ValueError):
    """The file given to ``--compare`` is not a results file this harness wrote."""


@dataclass(frozen=True, slots=True)
class Comparison:
    """One row held against its saved value."""

    name: str
    unit: str
    saved: float | None
    now: float | None
    change: float | None
    """Signed fraction, positive when the row got worse; None when either side is missing."""

    @property
    def worse(self) -> bool:
        return self.change is not None and self.change > WORSE_BY


def load_saved(path: Path) -> dict[str, dict[str, Any]]:
    """The rows of a saved results file, by name."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise SavedResultsError(f"cannot read saved results {path}: {error}") from error
    rows = document.get("rows") if isinstance(document, dict) else None
    if not isinstance(rows, list):
        raise SavedResultsError(f"{path} has no 'rows' list: not a benchmarks results file")
    saved: dict[str, dict[str, Any]] = {}
    for row in rows:
        if isinstance(row, dict) and isinstance(row.get("name"), str):
            saved[row["name"]] = row
    return saved


def _change(m: Measurement, saved: float) -> float:
    scale = max(abs(saved), abs(m.budget) * SCALE_FLOOR)
    if scale == 0:
        return 0.0
    worse_by = (saved - m.value) if m.floor else (m.value - saved)
    return worse_by / scale


def compare(results: list[Measurement], saved: dict[str, dict[str, Any]]) -> list[Comparison]:
    """Each measured row against its saved value; rows only in one of the two are listed too,
    with the missing side None (a row renamed or removed is worth seeing in review)."""
    comparisons: list[Comparison] = []
    for m in results:
        row = saved.get(m.name)
        if row is None or not isinstance(row.get("value"), (int, float)):
            comparisons.append(Comparison(m.name, m.unit, None, m.value, None))
            continue
        before = float(row["value"])
        change = _change(m, before)
        comparisons.append(Comparison(m.name, m.unit, before, m.value, change))
    measured = {m.name for m in results}
    for name, row in sorted(saved.items()):
        if name not in measured:
            value = row.get("value")
            before = float(value) if isinstance(value, (int, float)) else None
            comparisons.append(Comparison(name, str(row.get("unit", "")), before, None, None))
    return comparisons


def print_comparison(comparisons: list[Comparison], *, saved_path: Path) -> None:
    print(f"compared with {saved_path} (a row is marked when more than {WORSE_BY:.0%} worse):")
    for c in comparisons:
        if c.saved is None:
            print(f"  {c.name}: not in the saved run")
        elif c.now is None:
            print(f"  {c.name}: saved but not measured now")
        else:
            change = c.change if c.change is not None else 0.0
            verdict = f"{change:.0%} worse" if change > 0 else f"{-change:.0%} better"
            mark = "  WORSE" if c.worse else ""
            print(f"  {c.name}: {c.saved:.4g} -> {c.now:.4g} {c.unit} ({verdict}){mark}")
