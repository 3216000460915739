"""A tiny benchmark harness where every number is relative to a baseline from the same run.

Absolute timings on a shared two-core machine drift from run to run by more than most of the
effects worth measuring. So a row never reports "X takes 41 µs": it pairs the code under test
(the *subject*) with a *baseline* that does comparable work without it, times the two in
alternating batches within one process, and reports either

* ``unit="x"``  -- the ratio subject / baseline (how many times slower the subject is), or
* ``unit="us"`` -- the difference subject - baseline per call, in microseconds (the overhead).

Each round times one batch of each, alternating which goes first, and the row's value is the
median over rounds, so drift and a noisy neighbour hit both sides alike. A row declares a
*budget* in its unit; a full run (``python -m benchmarks``) fails when a row exceeds it, while
``--smoke`` runs a few iterations only to prove every row still works.

Rows live in ``benchmarks/bench_*.py`` modules::

    @bench("store append vs list append", budget=50.0, unit="x")
    def store_append() -> Pair:
        # The docstring's first line is printed with the results. Setup here is not timed.
        return Pair(subject=lambda: ..., baseline=lambda: ...)
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

__all__ = ["REGISTRY", "Measurement", "Pair", "Row", "Unit", "bench", "measure"]

Unit = Literal["x", "us"]


@dataclass(frozen=True)
class Pair:
    """The two zero-argument callables a row compares; each call is one operation."""

    subject: Callable[[], object]
    baseline: Callable[[], object]


@dataclass(frozen=True)
class Row:
    name: str
    budget: float
    unit: Unit
    setup: Callable[[], Pair]
    description: str


@dataclass(frozen=True)
class Measurement:
    name: str
    description: str
    unit: Unit
    budget: float
    value: float
    subject_ns_per_call: float
    baseline_ns_per_call: float
    rounds: int
    calls_per_batch: int

    @property
    def within_budget(self) -> bool:
        return self.value <= self.budget


REGISTRY: dict[str, Row] = {}


def bench(
    name: str, *, budget: float, unit: Unit = "x"
) -> Callable[[Callable[[], Pair]], Callable[[], Pair]]:
    """Register a row. The decorated function does the setup and returns the `Pair` to time."""
    if unit not in ("x", "us"):
        raise ValueError(
            f"benchmark {name!r}: unit must be 'x' (ratio) or 'us' (difference), got {unit!r}"
        )

    def register(setup: Callable[[], Pair]) -> Callable[[], Pair]:
        if name in REGISTRY:
            first, second = REGISTRY[name].setup, setup
            raise ValueError(
                f"benchmark {name!r} is registered twice: by"
                f" {first.__module__}.{first.__qualname__} and by"
                f" {second.__module__}.{second.__qualname__}"
            )
        doc = (setup.__doc__ or "").strip().splitlines()
        REGISTRY[name] = Row(name, budget, unit, setup, doc[0] if doc else "")
        return setup

    return register


def _time_batch(fn: Callable[[], object], calls: int) -> int:
    """Nanoseconds for `calls` calls, with the collector paused as `timeit` does."""
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter_ns()
        for _ in range(calls):
            fn()
        return time.perf_counter_ns() - start
    finally:
        if gc_was_enabled:
            gc.enable()


def _calls_per_batch(pair: Pair, batch_seconds: float) -> int:
    """Enough calls that the slower side's batch lasts about `batch_seconds`."""
    for fn in (pair.subject, pair.baseline):  # warm up: first calls pay for imports and caches
        _time_batch(fn, 10)
    calls = 1
    while True:
        slowest = max(_time_batch(pair.subject, calls), _time_batch(pair.baseline, calls))
        if slowest >= batch_seconds * 1e9 / 10 or calls >= 10_000_000:
            return max(1, int(calls * batch_seconds * 1e9 / max(slowest, 1)))
        calls *= 10


def measure(row: Row, *, rounds: int, batch_seconds: float) -> Measurement:
    """Time `row` for `rounds` interleaved rounds and reduce them to one value in its unit."""
    pair = row.setup()
    calls = _calls_per_batch(pair, batch_seconds)
    subject_ns: list[float] = []
    baseline_ns: list[float] = []
    values: list[float] = []
    for i in range(rounds):
        if i % 2:
            s = _time_batch(pair.subject, calls)
            b = _time_batch(pair.baseline, calls)
        else:
            b = _time_batch(pair.baseline, calls)
            s = _time_batch(pair.subject, calls)
        subject_ns.append(s / calls)
        baseline_ns.append(b / calls)
        values.append(s / max(b, 1) if row.unit == "x" else (s - b) / calls / 1000)
    return Measurement(
        name=row.name,
        description=row.description,
        unit=row.unit,
        budget=row.budget,
        value=statistics.median(values),
        subject_ns_per_call=statistics.median(subject_ns),
        baseline_ns_per_call=statistics.median(baseline_ns),
        rounds=rounds,
        calls_per_batch=calls,
    )
