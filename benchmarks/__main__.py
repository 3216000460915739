"""Run the benchmark rows: ``python -m benchmarks [--smoke] [-k SUBSTRING] [--compare SAVED]``.

Prints a table and writes ``benchmarks/results/<UTC timestamp>-<commit>.json``. A full run exits
1 when a row exceeds its budget; ``--smoke`` runs a few short rounds and enforces no budget.
``--compare SAVED.json`` also holds every row against an earlier results file and marks the ones
more than 20% worse (benchmarks/compare.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import os
import pkgutil
import platform
import subprocess
import sys
import timeit
from datetime import UTC, datetime
from pathlib import Path

from benchmarks import REGISTRY, Measurement, measure
from benchmarks.compare import SavedResultsError, compare, load_saved, print_comparison

HERE = Path(__file__).resolve().parent
FULL = {"rounds": 25, "batch_seconds": 0.02}
SMOKE = {"rounds": 3, "batch_seconds": 0.001}


def load_rows() -> None:
    """Import every ``benchmarks/bench_*.py`` module; their decorators fill the registry."""
    for module in pkgutil.iter_modules([str(HERE)]):
        if module.name.startswith("bench_"):
            importlib.import_module(f"benchmarks.{module.name}")


def commit_id() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=HERE,
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return out.stdout.strip() or "unknown"


def _number(value: float) -> str:
    magnitude = abs(value)
    if magnitude >= 1000:
        return f"{value:,.0f}"
    if magnitude >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def _side(m: Measurement, reading: float) -> str:
    return f"{_number(reading)} {m.side_unit}"


def _in_unit(unit: str, value: float, *, signed: bool = False) -> str:
    if unit == "x":
        return f"{value:.2f}x"
    if unit == "us":
        return f"{value:+.1f} µs" if signed else f"{value:.1f} µs"
    if unit == "per_s":
        return f"{_number(value)}/s"
    if unit == "us_op":
        return f"{value:.2f} µs/op"
    if unit == "ms":
        return f"{value:.0f} ms"
    return f"{value:.2f} MB"


def _budget(m: Measurement) -> str:
    return ("≥ " if m.floor else "≤ ") + _in_unit(m.unit, m.budget)


def _mark(m: Measurement, *, smoke: bool) -> str:
    if smoke:
        return "smoke"
    return "pass" if m.within_budget else "FALLS SHORT"


def reference_loop_us() -> float:
    """Microseconds this interpreter takes for ``sum(range(1000))``, best of five.

    Not a row: a reading of how fast this machine runs plain Python right now, printed and
    stored beside the rows, so that the absolute figures (runs/s, µs added) of runs made on
    different machines or under different load can be told apart.
    """
    timer = timeit.Timer("sum(range(1000))")
    number, _ = timer.autorange()
    return min(timer.repeat(repeat=5, number=number)) / number * 1e6


def print_table(results: list[Measurement], *, smoke: bool) -> None:
    header = ("row", "subject", "baseline", "median", "p95", "budget", "")
    lines = [
        (
            m.name,
            _side(m, m.subject),
            _side(m, m.baseline),
            _in_unit(m.unit, m.value, signed=True),
            _in_unit(m.unit, m.p95, signed=True),
            _budget(m),
            _mark(m, smoke=smoke),
        )
        for m in results
    ]
    widths = [max(len(str(r[i])) for r in [header, *lines]) for i in range(len(header))]
    for line in [header, *lines]:
        print("  ".join(str(cell).ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip())
    for m in results:
        if m.description:
            print(f"  {m.name}: {m.description}")


def write_json(
    results: list[Measurement], *, smoke: bool, out_dir: Path, reference: tuple[float, float]
) -> Path:
    now = datetime.now(UTC)
    commit = commit_id()
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{now.strftime('%Y%m%dT%H%M%SZ')}-{commit}.json"
    document = {
        "schema": 2,
        "timestamp": now.isoformat(),
        "commit": commit,
        "mode": "smoke" if smoke else "full",
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "reference_loop_us": {"before": reference[0], "after": reference[1]},
        "rows": [
            {**dataclasses.asdict(m), "within_budget": m.within_budget, "enforced": not smoke}
            for m in results
        ],
    }
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="few short rounds, no budgets")
    parser.add_argument("-k", dest="pattern", default="", help="only rows whose name contains this")
    parser.add_argument("--results-dir", type=Path, default=HERE / "results")
    parser.add_argument(
        "--compare",
        type=Path,
        metavar="SAVED.json",
        help="mark rows more than 20%% worse than in this earlier results file",
    )
    args = parser.parse_args(argv)
    saved = None
    if args.compare is not None:
        # Read before measuring: a wrong path should not cost a ten-minute run.
        try:
            saved = load_saved(args.compare)
        except SavedResultsError as error:
            print(f"benchmarks: {error}", file=sys.stderr)
            return 2

    load_rows()
    rows = [row for name, row in sorted(REGISTRY.items()) if args.pattern in name]
    if not rows:
        print(f"no benchmark row matches {args.pattern!r}", file=sys.stderr)
        return 2
    params = SMOKE if args.smoke else FULL
    before = reference_loop_us()
    results = [
        measure(row, rounds=int(params["rounds"]), batch_seconds=params["batch_seconds"])
        for row in rows
    ]
    after = reference_loop_us()
    print_table(results, smoke=args.smoke)
    print(
        f"machine: sum(range(1000)) takes {before:.1f} µs before the rows, {after:.1f} µs after"
        " (a reading of this machine's speed and load, for comparing absolute figures)"
    )
    path = write_json(
        results, smoke=args.smoke, out_dir=args.results_dir, reference=(before, after)
    )
    print(f"results: {path}")
    if saved is not None:
        print_comparison(compare(results, saved), saved_path=args.compare)
    short = [m.name for m in results if not m.within_budget]
    if short and not args.smoke:
        print(f"falls short of budget: {', '.join(short)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
