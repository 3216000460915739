"""Write-behind appends and sparse control reads: what a durable store's runs must still see.

A durable store's append is a commit or a round trip, so the runtime persists a play's payloads
behind the engine, a burst per append, and reads a shared control port at most every
``CONTROL_RECHECK`` seconds between stream items. These tests use the memory backends declared
durable/shared and slowed down, so the pipelining is visible and nothing depends on a server.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Collection, Sequence
from typing import Any, ClassVar

import pytest

import agentdeck
from agentdeck import Deck, RunFailedError, TextBlock
from agentdeck.memory import MemoryControlPort, MemoryEventStore
from agentdeck.memory import plugin as memory_plugin
from agentdeck.model.events import Event
from agentdeck.model.payloads import ControlObserved, Payload, TextDelta
from agentdeck.plugins.hookspecs import RegisterEngine
from agentdeck.plugins.host import PluginHost
from agentdeck.ports import ControlSignal, EngineCapabilities, Invocation
from agentdeck.runtime.write_behind import WriteBehind
from agentdeck.settings import Settings
from agentdeck.testing import Checkpoint, Complete, Script, ScriptedEngine, Yield
from agentdeck.vocabulary import ControlVerb, RunStatus, SafePoint

# =========================================================================== test backends


class SlowDurableStore(MemoryEventStore):
    """The memory store posing as a durable one whose every append takes a millisecond."""

    durable: ClassVar[bool] = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.batches: list[list[str]] = []
        self.fail_on_batch: int | None = None
        self.latency = 0.001

    async def append(
        self,
        run_id: str,
        payloads: Sequence[Payload],
        *,
        expect: Collection[RunStatus] | None = None,
        expect_seq: int | None = None,
    ) -> list[Event]:
        await asyncio.sleep(self.latency)
        if self.fail_on_batch is not None and len(self.batches) == self.fail_on_batch:
            self.fail_on_batch = None
            self.batches.append(["<failed>"])
            raise RuntimeError("the disk is on fire")
        self.batches.append([payload.kind for payload in payloads])
        return await super().append(run_id, payloads, expect=expect, expect_seq=expect_seq)


class SharedControl(MemoryControlPort):
    """The memory control port posing as a shared one; counts reads and what the log held."""

    shared: ClassVar[bool] = True

    def __init__(self, store: MemoryEventStore | None = None) -> None:
        super().__init__()
        self.store = store
        self.reads = 0
        self.logged_at_read: list[int] = []

    async def pending(self, run_id: str) -> tuple[ControlSignal, ...]:
        self.reads += 1
        if self.store is not None:
            self.logged_at_read.append(len(await self.store.read(run_id)))
        return await super().pending(run_id)


class TickingEngine(ScriptedEngine):
    """The scripted engine, taking a millisecond before each safe point (a model's pace)."""

    capabilities: ClassVar[EngineCapabilities] = EngineCapabilities(
        safe_points=frozenset({SafePoint.STREAM_ITEM, SafePoint.TOOL_DISPATCH}),
        interrupts=True,
        durable_suspend=True,
    )
    pace: ClassVar[float] = 0.0

    async def play(self, invocation: Invocation) -> AsyncIterator[Payload]:
        async for payload in super().play(invocation):
            yield payload
            if self.pace:
                await asyncio.sleep(self.pace)


class _EnginePlugin:
    @agentdeck.hookimpl
    def agentdeck_register_engines(self, register: RegisterEngine) -> None:
        register(TickingEngine)


def _deck(scripts: list[Script], store: MemoryEventStore, control: MemoryControlPort) -> Deck:
    return Deck(
        workflows=scripts,
        settings=Settings(env={"AGENTDECK_STATE": "memory://"}),
        plugins=PluginHost.from_plugins(("memory", memory_plugin), ("engine", _EnginePlugin())),
        events=store,
        control=control,
        observers=(),
    )


def _texts(n: int, *, checkpoints: SafePoint | None = None) -> list[Any]:
    steps: list[Any] = []
    for i in range(n):
        steps.append(Yield(TextDelta(message_id="m", text=f"{i},")))
        if checkpoints is not None:
            steps.append(Checkpoint(checkpoints))
    return steps


async def _until_delta(run: Any, delta: str) -> None:
    async for event in run.events(follow=True):
        if isinstance(event.payload, TextDelta) and event.payload.text == delta:
            return
    raise AssertionError(f"the run ended before delta {delta!r}")


async def _to_the_end(run: Any) -> list[Event]:
    async for _ in run.events(follow=True):
        pass
    return [event async for event in run.events()]


@pytest.fixture(autouse=True)
def _no_pace() -> Any:
    yield
    TickingEngine.pace = 0.0


# =========================================================================== the writer


async def test_a_fast_engine_is_persisted_in_bursts_in_order() -> None:
    store = SlowDurableStore()
    script = Script("chatty", [*_texts(60), Complete("done")])
    async with _deck([script], store, SharedControl()) as deck:
        assert await deck.run("chatty") == [TextBlock(text="done")]
        run_id = (await deck.runs.list())[0].id
        events = await store.read(run_id)
    deltas = [e.payload.text for e in events if isinstance(e.payload, TextDelta)]
    assert deltas == [f"{i}," for i in range(60)]  # every one, in yield order
    assert [e.seq for e in events] == list(range(len(events)))
    play_batches = store.batches  # open_run is not an append: these are the play's
    assert sum(len(b) for b in play_batches) == 61
    # The engine never waits, so the writer first runs when the play does: one burst.
    assert len(play_batches) <= 2, play_batches


async def test_a_paced_engine_has_its_first_payload_written_alone_and_the_rest_in_bursts() -> None:
    store = SlowDurableStore()
    store.latency = 0.01  # an append takes 10 ms; a token comes every 0.5 ms
    TickingEngine.pace = 0.0005
    script = Script("paced", [*_texts(60), Complete("done")])
    async with _deck([script], store, SharedControl()) as deck:
        await deck.run("paced")
    assert store.batches[0] == ["text.delta"]  # out at once, for a live follower
    assert sum(len(b) for b in store.batches) == 61
    assert any(len(b) > 1 for b in store.batches)  # later ones rode along with each other


async def test_a_safe_point_before_side_effects_finds_the_log_complete() -> None:
    store = SlowDurableStore()
    control = SharedControl(store)
    steps = [*_texts(5), Checkpoint(SafePoint.TOOL_DISPATCH), *_texts(3), Complete("ok")]
    async with _deck([Script("tooling", steps)], store, control) as deck:
        await deck.run("tooling")
    # At the tool's dispatch the run's log held run.started and all five deltas.
    assert control.logged_at_read == [6]


async def test_a_failed_write_ends_the_run_failed_with_what_was_written_kept() -> None:
    store = SlowDurableStore()
    store.fail_on_batch = 1  # the second append of the play
    TickingEngine.pace = 0.002  # bursts separated in time, so several batches happen
    script = Script("doomed", [*_texts(10), Complete("never")])
    async with _deck([script], store, SharedControl()) as deck:
        with pytest.raises(RunFailedError):
            await deck.run("doomed")
        run_id = (await deck.runs.list())[0].id
        events = await store.read(run_id)
    kinds = [e.kind for e in events]
    assert kinds[0] == "run.started" and kinds[1] == "text.delta"
    assert kinds[-1] == "run.failed"
    assert "run.completed" not in kinds


async def test_the_writer_raises_a_failed_write_at_the_next_push_and_flush() -> None:
    calls: list[int] = []

    async def append(batch: Sequence[Payload]) -> list[Event]:
        calls.append(len(batch))
        raise RuntimeError("gone")

    writer = WriteBehind(append, name="t")
    writer.push(TextDelta(message_id="m", text="a"))
    with pytest.raises(RuntimeError, match="gone"):
        await writer.flush()
    with pytest.raises(RuntimeError, match="gone"):
        writer.push(TextDelta(message_id="m", text="b"))
    assert calls == [1]


async def test_a_cancelled_flush_lets_the_write_finish() -> None:
    written: list[int] = []
    release = asyncio.Event()

    async def append(batch: Sequence[Payload]) -> list[Event]:
        await release.wait()
        written.append(len(batch))
        return []

    writer = WriteBehind(append, name="t")
    writer.push(TextDelta(message_id="m", text="a"))
    waiting = asyncio.ensure_future(writer.flush())
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    release.set()
    await writer.flush()
    assert written == [1] and writer.idle


# =========================================================================== control reads


async def test_stream_items_read_a_shared_control_port_sparingly() -> None:
    control = SharedControl()
    script = Script("long", [*_texts(300, checkpoints=SafePoint.STREAM_ITEM), Complete("ok")])
    async with _deck([script], SlowDurableStore(), control) as deck:
        await deck.run("long")
    # 300 safe points; a read at most every CONTROL_RECHECK (and none before the first).
    assert control.reads < 60, control.reads


async def test_a_cancel_made_in_this_process_is_seen_at_the_next_stream_item(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # No time-based re-read at all: only the process's control generation can reveal it.
    monkeypatch.setattr("agentdeck.runtime.play.CONTROL_RECHECK", 3600.0)
    TickingEngine.pace = 0.001
    script = Script("long", [*_texts(2000, checkpoints=SafePoint.STREAM_ITEM), Complete("ok")])
    async with _deck([script], SlowDurableStore(), SharedControl()) as deck:
        run = await deck.runs.start("long")
        await _until_delta(run, "3,")
        await run.cancel("enough")
        events = await _to_the_end(run)
        status = await run.status()
    assert status is RunStatus.CANCELLED
    observed = [e.payload for e in events if isinstance(e.payload, ControlObserved)]
    assert observed and observed[0].verb is ControlVerb.CANCEL
    assert observed[0].safe_point is SafePoint.STREAM_ITEM


async def test_a_cancel_made_through_another_deck_on_the_same_named_port_is_seen_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # No time-based re-read: only the count the named port's state keeps can reveal it.
    monkeypatch.setattr("agentdeck.runtime.play.CONTROL_RECHECK", 3600.0)
    TickingEngine.pace = 0.001
    name = f"two-decks-{uuid.uuid4().hex}"
    script = Script("long", [*_texts(2000, checkpoints=SafePoint.STREAM_ITEM), Complete("ok")])
    playing = _deck([script], MemoryEventStore(name=name), MemoryControlPort(name=name))
    operating = _deck([script], MemoryEventStore(name=name), MemoryControlPort(name=name))
    async with playing, operating:
        run = await playing.runs.start("long")
        await _until_delta(run, "3,")
        await (await operating.runs.get(run.id)).cancel("from the other deck")
        events = await _to_the_end(run)
    observed = [e.payload for e in events if isinstance(e.payload, ControlObserved)]
    assert [o.safe_point for o in observed] == [SafePoint.STREAM_ITEM]
    assert events[-1].kind == "run.cancelled"
    deltas = [e for e in events if isinstance(e.payload, TextDelta)]
    assert len(deltas) < 2000


async def test_a_request_written_elsewhere_is_seen_within_the_recheck_interval() -> None:
    TickingEngine.pace = 0.001
    control = SharedControl()
    script = Script("long", [*_texts(3000, checkpoints=SafePoint.STREAM_ITEM), Complete("ok")])
    async with _deck([script], SlowDurableStore(), control) as deck:
        run = await deck.runs.start("long")
        await _until_delta(run, "3,")
        # Straight to the port, as another process's deck would: no generation bump here.
        await control.request(run.id, ControlVerb.PAUSE, "from elsewhere")
        await _to_the_end(run)
        status = await run.status()
    assert status is RunStatus.PAUSED
