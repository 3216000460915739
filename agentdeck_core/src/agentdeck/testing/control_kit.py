"""``ControlContract`` and ``LeaseContract``: what every control and lease backend must do.

Subclass and override the fixture that supplies the object under test, built with the kit's
``clock`` (a :class:`~agentdeck.model.clock.ManualClock`; lease expiry is tested by advancing it,
never by sleeping)::

    class TestMyLeases(LeaseContract):
        @pytest_asyncio.fixture
        async def leases(self, clock, my_isolated_url):
            port = MyLeasePort.from_request(BackendRequest(url=my_isolated_url, clock=clock))
            await port.open()
            yield port
            await port.close()

Set ``shared = True`` and override ``reopen`` (an async factory for another opened port on the
same data) to run the tests that two processes see the same signals and leases.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import ClassVar

import pytest

from agentdeck.model.clock import ManualClock
from agentdeck.ports import ControlPort, LeasePort, LeaseState
from agentdeck.testing.guard import ContractKit, check_contract
from agentdeck.vocabulary import ControlVerb

__all__ = ["ControlContract", "LeaseContract"]


# =========================================================================== control


class ControlContract(ContractKit):
    """The control-port contract. Subclass it and override :meth:`control`."""

    __contract_kit__ = True

    shared: ClassVar[bool] = False
    """Another port from :meth:`reopen` sees the same pending requests."""

    @pytest.fixture
    def clock(self) -> ManualClock:
        """The clock to build the port with; ``requested_at`` comes from it."""
        return ManualClock()

    @pytest.fixture
    def control(self) -> ControlPort:
        """Override: yield an opened, empty control port built with :meth:`clock`."""
        pytest.fail(f"{type(self).__name__} must override the `control` fixture")

    @pytest.fixture
    def reopen(self) -> Callable[[], Awaitable[ControlPort]]:
        """Override when ``shared``: an async factory for another opened port on the same data."""
        if not self.shared:
            pytest.skip("the port is not declared shared")
        pytest.fail(f"{type(self).__name__} declares shared, so it must override `reopen`")

    async def test_no_kit_test_is_dropped_or_silently_overridden(self) -> None:
        check_contract(type(self))

    async def test_a_request_is_pending_until_taken(
        self, control: ControlPort, clock: ManualClock
    ) -> None:
        assert await control.request("r1", ControlVerb.PAUSE, "lunch") is True
        (signal,) = await control.pending("r1")
        assert (signal.run_id, signal.verb, signal.reason) == ("r1", ControlVerb.PAUSE, "lunch")
        assert signal.requested_at == clock.now()
        taken = await control.take("r1", ControlVerb.PAUSE)
        assert taken == signal
        assert await control.pending("r1") == ()

    async def test_a_repeated_request_keeps_the_first_reason(self, control: ControlPort) -> None:
        assert await control.request("r1", ControlVerb.CANCEL, "first") is True
        assert await control.request("r1", ControlVerb.CANCEL, "second") is False
        (signal,) = await control.pending("r1")
        assert signal.reason == "first"

    async def test_pending_lists_cancel_first(self, control: ControlPort) -> None:
        await control.request("r1", ControlVerb.PAUSE)
        await control.request("r1", ControlVerb.CANCEL)
        verbs = [signal.verb for signal in await control.pending("r1")]
        assert verbs == [ControlVerb.CANCEL, ControlVerb.PAUSE]

    async def test_one_request_per_verb_per_run(self, control: ControlPort) -> None:
        await control.request("r1", ControlVerb.PAUSE)
        await control.request("r1", ControlVerb.CANCEL)
        await control.request("r2", ControlVerb.PAUSE)
        assert len(await control.pending("r1")) == 2
        assert [s.run_id for s in await control.pending("r2")] == ["r2"]

    async def test_nothing_is_pending_for_an_unknown_run(self, control: ControlPort) -> None:
        assert await control.pending("nobody") == ()
        assert await control.take("nobody", ControlVerb.CANCEL) is None

    async def test_take_removes_only_its_verb(self, control: ControlPort) -> None:
        await control.request("r1", ControlVerb.PAUSE)
        await control.request("r1", ControlVerb.CANCEL)
        taken = await control.take("r1", ControlVerb.CANCEL)
        assert taken is not None and taken.verb is ControlVerb.CANCEL
        assert [s.verb for s in await control.pending("r1")] == [ControlVerb.PAUSE]
        assert await control.take("r1", ControlVerb.CANCEL) is None

    async def test_of_concurrent_takers_exactly_one_wins(self, control: ControlPort) -> None:
        await control.request("r1", ControlVerb.CANCEL, "stop")
        taken = await asyncio.gather(*(control.take("r1", ControlVerb.CANCEL) for _ in range(10)))
        winners = [signal for signal in taken if signal is not None]
        assert len(winners) == 1 and winners[0].reason == "stop"

    async def test_a_taken_verb_can_be_requested_again(self, control: ControlPort) -> None:
        await control.request("r1", ControlVerb.PAUSE, "one")
        await control.take("r1", ControlVerb.PAUSE)
        assert await control.request("r1", ControlVerb.PAUSE, "two") is True
        (signal,) = await control.pending("r1")
        assert signal.reason == "two"

    async def test_withdraw_drops_a_pending_request(self, control: ControlPort) -> None:
        await control.request("r1", ControlVerb.PAUSE)
        assert await control.withdraw("r1", ControlVerb.PAUSE) is True
        assert await control.withdraw("r1", ControlVerb.PAUSE) is False
        assert await control.pending("r1") == ()

    async def test_forget_drops_everything_for_those_runs(self, control: ControlPort) -> None:
        for run_id in ("r1", "r2", "r3"):
            await control.request(run_id, ControlVerb.PAUSE)
            await control.request(run_id, ControlVerb.CANCEL)
        await control.forget(["r1", "r2", "never-seen"])
        assert await control.pending("r1") == ()
        assert await control.pending("r2") == ()
        assert len(await control.pending("r3")) == 2
        await control.forget([])

    async def test_requests_are_seen_by_another_port_on_the_same_data(
        self, control: ControlPort, reopen: Callable[[], Awaitable[ControlPort]]
    ) -> None:
        if not self.shared:
            pytest.skip("the control port is not declared shared")
        other = await reopen()
        try:
            await control.request("r1", ControlVerb.CANCEL, "from afar")
            (signal,) = await other.pending("r1")
            assert signal.reason == "from afar"
            takers = await asyncio.gather(
                control.take("r1", ControlVerb.CANCEL), other.take("r1", ControlVerb.CANCEL)
            )
            assert sum(taken is not None for taken in takers) == 1
        finally:
            await other.close()


# =========================================================================== leases


class LeaseContract(ContractKit):
    """The lease-port contract. Subclass it and override :meth:`leases`."""

    __contract_kit__ = True

    shared: ClassVar[bool] = False
    """Another port from :meth:`reopen` sees the same leases."""

    TTL: ClassVar[float] = 10.0

    @pytest.fixture
    def clock(self) -> ManualClock:
        """The clock to build the port with; tests advance it past TTLs."""
        return ManualClock()

    @pytest.fixture
    def leases(self) -> LeasePort:
        """Override: yield an opened, empty lease port built with :meth:`clock`."""
        pytest.fail(f"{type(self).__name__} must override the `leases` fixture")

    @pytest.fixture
    def reopen(self) -> Callable[[], Awaitable[LeasePort]]:
        """Override when ``shared``: an async factory for another opened port on the same data."""
        if not self.shared:
            pytest.skip("the port is not declared shared")
        pytest.fail(f"{type(self).__name__} declares shared, so it must override `reopen`")

    async def test_no_kit_test_is_dropped_or_silently_overridden(self) -> None:
        check_contract(type(self))

    async def test_an_acquired_lease_is_alive(self, leases: LeasePort) -> None:
        assert await leases.acquire("r1", "worker-a", self.TTL) is True
        assert await leases.state("r1") is LeaseState.ALIVE

    async def test_an_unknown_lease_says_nothing(self, leases: LeasePort) -> None:
        assert await leases.state("nobody") is LeaseState.NONE

    async def test_another_owner_cannot_take_a_live_lease(
        self, leases: LeasePort, clock: ManualClock
    ) -> None:
        await leases.acquire("r1", "worker-a", self.TTL)
        clock.advance(self.TTL / 2)
        assert await leases.acquire("r1", "worker-b", self.TTL) is False
        assert await leases.renew("r1", "worker-b", self.TTL) is False

    async def test_the_owner_may_acquire_again(self, leases: LeasePort) -> None:
        assert await leases.acquire("r1", "worker-a", self.TTL) is True
        assert await leases.acquire("r1", "worker-a", self.TTL) is True

    async def test_a_lease_lapses_when_its_ttl_passes(
        self, leases: LeasePort, clock: ManualClock
    ) -> None:
        await leases.acquire("r1", "worker-a", self.TTL)
        clock.advance(self.TTL - 0.5)
        assert await leases.state("r1") is LeaseState.ALIVE
        clock.advance(1)
        assert await leases.state("r1") is LeaseState.LAPSED

    async def test_renewing_extends_the_lease(self, leases: LeasePort, clock: ManualClock) -> None:
        await leases.acquire("r1", "worker-a", self.TTL)
        for _ in range(5):
            clock.advance(self.TTL * 0.8)
            assert await leases.renew("r1", "worker-a", self.TTL) is True
        assert await leases.state("r1") is LeaseState.ALIVE
        clock.advance(self.TTL + 1)
        assert await leases.state("r1") is LeaseState.LAPSED

    async def test_a_lapsed_lease_cannot_be_renewed(
        self, leases: LeasePort, clock: ManualClock
    ) -> None:
        await leases.acquire("r1", "worker-a", self.TTL)
        clock.advance(self.TTL + 1)
        assert await leases.renew("r1", "worker-a", self.TTL) is False

    async def test_a_lapsed_lease_can_be_taken_by_another_owner(
        self, leases: LeasePort, clock: ManualClock
    ) -> None:
        await leases.acquire("r1", "worker-a", self.TTL)
        clock.advance(self.TTL + 1)
        assert await leases.acquire("r1", "worker-b", self.TTL) is True
        assert await leases.state("r1") is LeaseState.ALIVE
        assert await leases.renew("r1", "worker-a", self.TTL) is False
        assert await leases.renew("r1", "worker-b", self.TTL) is True

    async def test_releasing_forgets_the_lease(self, leases: LeasePort, clock: ManualClock) -> None:
        await leases.acquire("r1", "worker-a", self.TTL)
        await leases.release("r1", "worker-a")
        assert await leases.state("r1") is LeaseState.NONE
        clock.advance(self.TTL * 3)
        assert await leases.lapsed() == []
        assert await leases.acquire("r1", "worker-b", self.TTL) is True

    async def test_only_the_owner_can_release(self, leases: LeasePort) -> None:
        await leases.acquire("r1", "worker-a", self.TTL)
        await leases.release("r1", "worker-b")
        assert await leases.state("r1") is LeaseState.ALIVE
        await leases.release("nobody", "worker-a")  # no-op

    async def test_lapsed_lists_lapsed_leases_oldest_expiry_first(
        self, leases: LeasePort, clock: ManualClock
    ) -> None:
        await leases.acquire("late", "w", 30)
        await leases.acquire("early", "w", 10)
        await leases.acquire("middle", "w", 20)
        await leases.acquire("alive", "w", 1000)
        await leases.acquire("released", "w", 5)
        await leases.release("released", "w")
        clock.advance(15)
        assert await leases.lapsed() == ["early"]
        clock.advance(20)
        assert await leases.lapsed() == ["early", "middle", "late"]
        assert await leases.lapsed(limit=2) == ["early", "middle"]

    async def test_a_renewed_lease_leaves_the_lapsed_list(
        self, leases: LeasePort, clock: ManualClock
    ) -> None:
        await leases.acquire("r1", "worker-a", self.TTL)
        clock.advance(self.TTL + 1)
        assert await leases.lapsed() == ["r1"]
        await leases.acquire("r1", "worker-b", self.TTL)
        assert await leases.lapsed() == []

    async def test_forgetting_drops_leases_whoever_holds_them(
        self, leases: LeasePort, clock: ManualClock
    ) -> None:
        await leases.acquire("dead", "worker-a", self.TTL)
        await leases.acquire("alive", "worker-b", self.TTL)
        await leases.acquire("kept", "worker-a", self.TTL * 10)
        clock.advance(self.TTL + 1)
        assert sorted(await leases.lapsed()) == ["alive", "dead"]
        await leases.forget(["dead", "alive", "never-leased"])
        assert await leases.lapsed() == []
        assert await leases.state("dead") is LeaseState.NONE
        assert await leases.state("alive") is LeaseState.NONE
        assert await leases.state("kept") is LeaseState.ALIVE
        await leases.forget([])  # no-op
        assert await leases.acquire("dead", "worker-c", self.TTL) is True

    async def test_forgetting_many_leases_at_once_drops_them_all(
        self, leases: LeasePort, clock: ManualClock
    ) -> None:
        ids = [f"r{n:04d}" for n in range(1200)]  # more than one batch of any backend
        for start in range(0, len(ids), 100):  # a hundred at a time: a pool's usual load
            batch = ids[start : start + 100]
            await asyncio.gather(*(leases.acquire(run_id, "w", self.TTL) for run_id in batch))
        clock.advance(self.TTL + 1)
        assert len(await leases.lapsed(limit=2000)) == len(ids)
        await leases.forget(ids)
        assert await leases.lapsed(limit=2000) == []

    async def test_of_concurrent_acquirers_exactly_one_wins(self, leases: LeasePort) -> None:
        results = await asyncio.gather(
            *(leases.acquire("r1", f"worker-{n}", self.TTL) for n in range(10))
        )
        assert sum(results) == 1

    async def test_leases_are_seen_by_another_port_on_the_same_data(
        self, leases: LeasePort, clock: ManualClock, reopen: Callable[[], Awaitable[LeasePort]]
    ) -> None:
        if not self.shared:
            pytest.skip("the lease port is not declared shared")
        other = await reopen()
        try:
            await leases.acquire("r1", "worker-a", self.TTL)
            assert await other.state("r1") is LeaseState.ALIVE
            assert await other.acquire("r1", "worker-b", self.TTL) is False
            clock.advance(self.TTL + timedelta(seconds=1).total_seconds())
            assert await other.lapsed() == ["r1"]
            assert await other.acquire("r1", "worker-b", self.TTL) is True
        finally:
            await other.close()
