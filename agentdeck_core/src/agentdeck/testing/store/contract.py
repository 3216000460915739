"""The whole store kit: every part's tests, and the guard that keeps them whole."""

from __future__ import annotations

from agentdeck.ports import EventStore
from agentdeck.testing.guard import check_contract
from agentdeck.testing.store.appending import AppendingTests
from agentdeck.testing.store.capabilities import CapabilityTests
from agentdeck.testing.store.listing import ListingTests
from agentdeck.testing.store.opening import OpeningTests
from agentdeck.testing.store.reading import ReadingTests
from agentdeck.testing.store.state import EngineStateTests
from agentdeck.testing.store.text import StoredTextContract

__all__ = ["StoreContract"]


class StoreContract(
    OpeningTests,
    AppendingTests,
    ReadingTests,
    ListingTests,
    EngineStateTests,
    CapabilityTests,
    StoredTextContract,
):
    """The event-store contract. Subclass it and override :meth:`store`.

    It includes :class:`~agentdeck.testing.store.text.StoredTextContract`: whatever text and
    numbers the public API accepts, the store hands back exactly.

    Its tests come from one part per concern (:mod:`agentdeck.testing.store`); the guard below
    runs them all, so a subclass may replace a test of any part only by listing it in
    ``overridden``.
    """

    __contract_kit__ = True

    # =========================================================================== the guard

    async def test_no_kit_test_is_dropped_or_silently_overridden(self) -> None:
        check_contract(type(self))

    async def test_capability_flags_agree_with_the_store(self, store: EventStore) -> None:
        assert type(store).durable is self.durable, (
            f"{type(store).__name__}.durable is {type(store).durable}; the kit subclass says "
            f"{self.durable}"
        )
        if type(store).shared:
            assert self.shared, "the store says it is shared; set shared = True to test it"
