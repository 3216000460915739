"""The observer hub: what a full, raising or filtering observer gets, misses and has counted.

A tap that takes nothing (full, or disabled after raising) is skipped by publishing and its
misses are counted afterwards, so these tests hold the counts to exactly what was published.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime

from agentdeck.model.events import Event
from agentdeck.model.payloads import Report, TextDelta
from agentdeck.observing.hub import ObserverHub
from agentdeck.observing.metrics import RunMetrics
from agentdeck.ports import Observer

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def events(count: int, start: int = 0) -> list[Event]:
    return [
        Event.record(TextDelta(message_id="m", text=str(seq)), seq=seq, run_id="r", ts=T0)
        for seq in range(start, start + count)
    ]


class Held(Observer):
    """Receives an event, then waits until released (a slow observer, under control)."""

    def __init__(self, view: Callable[[Event], bool] | None = None) -> None:
        self.view = view
        self.got: list[int] = []
        self.release = asyncio.Event()

    async def emit(self, event: Event) -> None:
        self.got.append(event.seq)
        await self.release.wait()


class Raises(Observer):
    def __init__(self) -> None:
        self.calls = 0

    async def emit(self, event: Event) -> None:
        self.calls += 1
        raise RuntimeError("broken observer")


class Records(Observer):
    def __init__(self) -> None:
        self.got: list[int] = []

    async def emit(self, event: Event) -> None:
        self.got.append(event.seq)


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def until(condition: Callable[[], bool]) -> None:
    """Wait for ``condition``, up to ten seconds (the backoff in these tests is a second: long
    enough that a loaded machine cannot run it out between two looks at it)."""
    for _ in range(1000):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the condition never held")


def dropped(hub: ObserverHub, observer: Observer) -> int:
    return next(stats.dropped for each, stats in hub.stats if each is observer)


async def test_a_full_observer_misses_exactly_what_did_not_fit_and_takes_events_again() -> None:
    slow, metrics = Held(), RunMetrics()
    hub = ObserverHub([slow], queue_size=3, metrics=metrics)
    await hub.start()
    hub.publish(events(1))
    await settle()  # the worker took seq 0 and waits in emit; the buffer is empty again
    hub.publish(events(5, start=1))  # 1, 2, 3 fit; 4 and 5 do not
    for seq in range(6, 10):
        hub.publish(events(1, start=seq))  # skipped while full: counted, not offered
    assert dropped(hub, slow) == 2 + 4
    assert metrics.observer_drops["Held"] == 6

    slow.release.set()  # the worker drains 1, 2, 3 and makes room as it goes
    await settle()
    hub.publish(events(2, start=10))
    await settle()
    assert slow.got == [0, 1, 2, 3, 10, 11]
    assert dropped(hub, slow) == 6
    await hub.close()
    assert metrics.observer_drops["Held"] == 6


async def test_a_raising_observer_is_disabled_then_retried_and_misses_are_counted() -> None:
    broken, fine, metrics = Raises(), Records(), RunMetrics()
    hub = ObserverHub([broken, fine], retry_after=1.0, metrics=metrics)
    await hub.start()
    hub.publish(events(1))
    await settle()
    assert broken.calls == 1
    [(_, stats), _] = hub.stats
    assert stats.failures == 1 and stats.disabled_until is not None

    hub.publish(events(3, start=1))  # disabled: counted as missed, never offered
    await settle()
    assert broken.calls == 1
    assert dropped(hub, broken) == 3
    assert metrics.observer_drops == {"Raises": 3}

    await until(lambda: hub.stats[0][1].disabled_until is None)  # the backoff ran out
    hub.publish(events(1, start=4))
    await settle()
    assert broken.calls == 2  # retried, raised again: disabled again, for twice as long
    assert hub.stats[0][1].failures == 2
    assert fine.got == [0, 1, 2, 3, 4]  # the other observer never noticed
    assert dropped(hub, fine) == 0
    await hub.close()


async def test_a_skipped_observer_with_a_view_misses_only_what_its_view_accepts() -> None:
    def odd(event: Event) -> bool:
        return event.seq % 2 == 1

    slow = Held(view=odd)
    hub = ObserverHub([slow], queue_size=1)
    await hub.start()
    hub.publish(events(1, start=1))
    await settle()  # taking 1
    hub.publish(events(4, start=2))  # 3 fits, 5 does not (2 and 4 are not its to see)
    hub.publish(events(4, start=6))  # full: 7 and 9 missed
    assert dropped(hub, slow) == 3
    slow.release.set()
    await hub.close()
    assert slow.got == [1, 3]


async def test_reports_reach_every_taking_observer_in_order() -> None:
    first, second = Records(), Records()
    hub = ObserverHub([first, second])
    await hub.start()
    batch = [Event.record(Report(message=str(seq)), seq=seq, run_id="r", ts=T0) for seq in range(4)]
    hub.publish(batch[:1])
    hub.publish(iter(batch[1:]))  # any iterable
    await hub.close()
    assert first.got == second.got == [0, 1, 2, 3]


async def test_closing_counts_what_a_stuck_observer_never_got() -> None:
    stuck = Held()
    hub = ObserverHub([stuck], drain_timeout=0.01)
    await hub.start()
    hub.publish(events(4))
    await hub.close()  # seq 0 is being emitted for ever; 1, 2 and 3 are left in the buffer
    assert stuck.got == [0]
    assert hub.metrics.observer_drops["Held"] == 3
