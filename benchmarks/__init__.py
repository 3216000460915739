"""A tiny benchmark harness where every number is relative to a baseline from the same run.

Absolute timings on a shared two-core machine drift from run to run by more than most of the
effects worth measuring. So a row never reports a bare "X takes 41 µs": it pairs the code under
test (the *subject*) with a *baseline* that does comparable work without it (the raw engine or
driver), times the two in alternating batches within one process, and reports one of

* ``unit="x"``      -- the ratio subject / baseline (how many times slower the subject is);
* ``unit="us"``     -- the difference subject - baseline per call, in microseconds (the overhead);
* ``unit="per_s"``  -- operations per second of the subject (a floor: higher is better), with
  the baseline's rate beside it, for budgets stated as throughput;
* ``unit="us_op"``  -- microseconds per operation of the subject (``Pair.ops_per_call``
  operations per call), with the baseline's beside it, for budgets stated per item;
* ``unit="MB"``     -- megabytes, for `Probe` rows that measure memory rather than time;
* ``unit="ms"``     -- milliseconds of wall clock, for `Probe` rows timing a whole process (a
  command's start-up), whose baseline is the bare interpreter starting.

Each round times one batch of each side, alternating which goes first; the row's value is the
median over rounds and its p95 is the 95th percentile on the *bad* side (the slow tail for
ceilings, the low tail for floors), so drift and a noisy neighbour hit both sides alike. A row
declares a *budget* in its unit; a full run (``python -m benchmarks``) fails when a row's median
misses it, while ``--smoke`` runs a few iterations only to prove every row still works.

Rows live in ``benchmarks/bench_*.py`` modules::

    @bench("store append vs list append", budget=50.0, unit="x")
    def store_append() -> Pair:
        # The docstring's first line is printed with the results. Setup here is not timed.
        return Pair(subject=lambda: ..., baseline=lambda: ...)

A measurement that is not "time N calls" (a latency seen by another task, memory growth) returns
a `Probe` instead: a callable doing one round and returning a `Sample` with the row's value for
that round and both sides' readings.
"""

from __future__ import annotations

import gc
import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "REGISTRY",
    "Measurement",
    "Pair",
    "Probe",
    "Row",
    "Sample",
    "Unit",
    "bench",
    "measure",
]

Unit = Literal["x", "us", "per_s", "us_op", "MB", "ms"]
UNITS: tuple[str, ...] = ("x", "us", "per_s", "us_op", "MB", "ms")
# Units whose budget is a floor (more is better); every other unit's budget is a ceiling.
FLOOR_UNITS = frozenset({"per_s"})


@dataclass(frozen=True)
class Pair:
    """The two zero-argument callables a row compares; each call is one call of the row.

    `ops_per_call` says how many operations one call performs (100 appends, 10,000 events
    read), so `per_s` and `us_op` rows report per operation rather than per call.

    Batches are timed with the cyclic garbage collector paused, as `timeit` does, unless
    `collector` is set: then it runs as it does in a real process. Throughput rows whose calls
    leave objects alive (runs kept in a store) set it, since the collections those objects
    cause are part of what an operation costs there.
    """

    subject: Callable[[], object]
    baseline: Callable[[], object]
    ops_per_call: int = 1
    collector: bool = False
    close: Callable[[], object] | None = None
    """Called once the row is measured (or failed): stops what the setup started -- servers,
    worker processes, open decks -- while the interpreter can still run their clean-up."""


@dataclass(frozen=True)
class Sample:
    """One round of a `Probe`: the row's value for this round, and what each side read.

    `subject` and `baseline` are in `side_unit` (e.g. "µs", "MB") and are only shown; `value`
    is what the budget judges.
    """

    value: float
    subject: float
    baseline: float


@dataclass(frozen=True)
class Probe:
    """A row measured by its own procedure: each `round()` call measures one interleaved round."""

    round: Callable[[], Sample]
    side_unit: str = "µs"
    close: Callable[[], object] | None = None
    """As `Pair.close`."""


@dataclass(frozen=True)
class Row:
    name: str
    budget: float
    unit: Unit
    setup: Callable[[], Pair | Probe]
    description: str

    @property
    def floor(self) -> bool:
        return self.unit in FLOOR_UNITS


@dataclass(frozen=True)
class Measurement:
    name: str
    description: str
    unit: Unit
    budget: float
    value: float
    p95: float
    subject: float
    baseline: float
    side_unit: str
    rounds: int
    calls_per_batch: int
    values: list[float] = field(default_factory=list)

    @property
    def floor(self) -> bool:
        return self.unit in FLOOR_UNITS

    @property
    def within_budget(self) -> bool:
        return self.value >= self.budget if self.floor else self.value <= self.budget


REGISTRY: dict[str, Row] = {}


def bench(
    name: str, *, budget: float, unit: Unit = "x"
) -> Callable[[Callable[[], Pair | Probe]], Callable[[], Pair | Probe]]:
    """Register a row. The decorated function does the setup and returns what to measure."""
    if unit not in UNITS:
        raise ValueError(f"benchmark {name!r}: unit must be one of {UNITS}, got {unit!r}")

    def register(setup: Callable[[], Pair | Probe]) -> Callable[[], Pair | Probe]:
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


def _time_batch(fn: Callable[[], object], calls: int, *, collector: bool = False) -> int:
    """Nanoseconds for `calls` calls, with the collector paused as `timeit` does (running when
    `collector` is set)."""
    gc_was_enabled = gc.isenabled()
    if collector:
        gc.enable()
    else:
        gc.disable()
    try:
        start = time.perf_counter_ns()
        for _ in range(calls):
            fn()
        return time.perf_counter_ns() - start
    finally:
        if gc_was_enabled:
            gc.enable()
        else:
            gc.disable()


def _calls_per_batch(pair: Pair, batch_seconds: float) -> int:
    """Enough calls that the slower side's batch lasts about `batch_seconds`."""
    collector = pair.collector
    for fn in (pair.subject, pair.baseline):  # warm up: first calls pay for imports and caches
        _time_batch(fn, 10, collector=collector)
    calls = 1
    while True:
        slowest = max(
            _time_batch(pair.subject, calls, collector=collector),
            _time_batch(pair.baseline, calls, collector=collector),
        )
        if slowest >= batch_seconds * 1e9 / 10 or calls >= 10_000_000:
            return max(1, int(calls * batch_seconds * 1e9 / max(slowest, 1)))
        calls *= 10


def _percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile; robust for the few rounds a smoke run has."""
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


def _pair_value(unit: Unit, subject_ns: float, baseline_ns: float, ops: int) -> float:
    """One round's value from both sides' nanoseconds per call."""
    if unit == "x":
        return subject_ns / max(baseline_ns, 1.0)
    if unit == "us":
        return (subject_ns - baseline_ns) / 1000
    if unit == "per_s":
        return ops * 1e9 / max(subject_ns, 1.0)
    if unit == "us_op":
        return subject_ns / ops / 1000
    raise ValueError(f"unit {unit!r} needs a Probe, not a Pair")


def _side(unit: Unit, ns_per_call: float, ops: int) -> float:
    """A side's reading in the row's terms: ops/s for `per_s`, else µs per operation."""
    if unit == "per_s":
        return ops * 1e9 / max(ns_per_call, 1.0)
    return ns_per_call / ops / 1000


def _reduce(
    row: Row,
    values: list[float],
    subjects: list[float],
    baselines: list[float],
    *,
    side_unit: str,
    calls: int,
) -> Measurement:
    bad_tail = _percentile(values, 0.05) if row.floor else _percentile(values, 0.95)
    return Measurement(
        name=row.name,
        description=row.description,
        unit=row.unit,
        budget=row.budget,
        value=statistics.median(values),
        p95=bad_tail,
        subject=statistics.median(subjects),
        baseline=statistics.median(baselines),
        side_unit=side_unit,
        rounds=len(values),
        calls_per_batch=calls,
        values=values,
    )


def measure(row: Row, *, rounds: int, batch_seconds: float) -> Measurement:
    """Measure `row` for `rounds` interleaved rounds and reduce them to one value in its unit."""
    target = row.setup()
    try:
        return _measure(row, target, rounds=rounds, batch_seconds=batch_seconds)
    finally:
        if target.close is not None:
            target.close()


def _measure(row: Row, target: Pair | Probe, *, rounds: int, batch_seconds: float) -> Measurement:
    if isinstance(target, Probe):
        samples = [target.round() for _ in range(rounds)]
        return _reduce(
            row,
            [s.value for s in samples],
            [s.subject for s in samples],
            [s.baseline for s in samples],
            side_unit=target.side_unit,
            calls=1,
        )
    pair = target
    calls = _calls_per_batch(pair, batch_seconds)
    subjects: list[float] = []
    baselines: list[float] = []
    values: list[float] = []
    for i in range(rounds):
        if i % 2:
            s = _time_batch(pair.subject, calls, collector=pair.collector)
            b = _time_batch(pair.baseline, calls, collector=pair.collector)
        else:
            b = _time_batch(pair.baseline, calls, collector=pair.collector)
            s = _time_batch(pair.subject, calls, collector=pair.collector)
        subject_ns, baseline_ns = s / calls, b / calls
        subjects.append(_side(row.unit, subject_ns, pair.ops_per_call))
        baselines.append(_side(row.unit, baseline_ns, pair.ops_per_call))
        values.append(_pair_value(row.unit, subject_ns, baseline_ns, pair.ops_per_call))
    side_unit = "/s" if row.unit == "per_s" else ("µs/op" if pair.ops_per_call > 1 else "µs")
    return _reduce(row, values, subjects, baselines, side_unit=side_unit, calls=calls)
