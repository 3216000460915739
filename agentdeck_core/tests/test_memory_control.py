"""The memory control and lease ports run their contracts, named instances included."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable

import pytest

from agentdeck.errors import InvalidInputError
from agentdeck.memory import MemoryControlPort, MemoryLeasePort
from agentdeck.model.clock import ManualClock
from agentdeck.ports import BackendRequest, ControlPort, LeasePort
from agentdeck.testing import ControlContract, LeaseContract
from agentdeck.vocabulary import ControlVerb


class TestMemoryControl(ControlContract):
    @pytest.fixture
    def control(self, clock: ManualClock) -> ControlPort:
        return MemoryControlPort.from_request(BackendRequest(url="memory://", clock=clock))


class TestNamedMemoryControl(ControlContract):
    shared = True

    @pytest.fixture
    def url(self) -> str:
        return f"memory://control-{uuid.uuid4().hex}"

    @pytest.fixture
    def control(self, clock: ManualClock, url: str) -> ControlPort:
        return MemoryControlPort.from_request(BackendRequest(url=url, clock=clock))

    @pytest.fixture
    def reopen(self, clock: ManualClock, url: str) -> Callable[[], Awaitable[ControlPort]]:
        async def reopen() -> ControlPort:
            return MemoryControlPort.from_request(BackendRequest(url=url, clock=clock))

        return reopen


class TestMemoryLeases(LeaseContract):
    @pytest.fixture
    def leases(self, clock: ManualClock) -> LeasePort:
        return MemoryLeasePort.from_request(BackendRequest(url="memory://", clock=clock))


class TestNamedMemoryLeases(LeaseContract):
    shared = True

    @pytest.fixture
    def url(self) -> str:
        return f"memory://leases-{uuid.uuid4().hex}"

    @pytest.fixture
    def leases(self, clock: ManualClock, url: str) -> LeasePort:
        return MemoryLeasePort.from_request(BackendRequest(url=url, clock=clock))

    @pytest.fixture
    def reopen(self, clock: ManualClock, url: str) -> Callable[[], Awaitable[LeasePort]]:
        async def reopen() -> LeasePort:
            return MemoryLeasePort.from_request(BackendRequest(url=url, clock=clock))

        return reopen


async def test_an_unknown_verb_is_refused_by_name() -> None:
    with pytest.raises(InvalidInputError) as error:
        await MemoryControlPort().request("r1", "explode")  # type: ignore[arg-type]
    assert error.value.field == "verb"


async def test_a_lease_needs_a_positive_ttl() -> None:
    with pytest.raises(InvalidInputError) as error:
        await MemoryLeasePort().acquire("r1", "w", 0)
    assert error.value.field == "ttl"


async def test_unnamed_ports_are_private_and_named_ones_shared() -> None:
    assert await MemoryControlPort().request("r1", "pause")  # type: ignore[arg-type]
    assert await MemoryControlPort().pending("r1") == ()
    url = f"memory://shared-{uuid.uuid4().hex}"
    await MemoryLeasePort.from_request(BackendRequest(url=url)).acquire("r1", "w", 10)
    assert not await MemoryLeasePort.from_request(BackendRequest(url=url)).acquire("r1", "x", 10)


# --------------------------------------------------------------------------- request count


def test_the_request_count_is_the_named_ports_not_the_processs() -> None:
    name = f"counted-{uuid.uuid4().hex}"
    one, same = MemoryControlPort(name=name), MemoryControlPort(name=name)
    assert one.request_count is same.request_count
    assert MemoryControlPort().request_count is not MemoryControlPort().request_count
    assert one.request_count is not MemoryControlPort(name=f"{name}-other").request_count


async def test_a_request_made_to_a_port_counts_once_it_is_recorded() -> None:
    port = MemoryControlPort()
    before = port.request_count.value
    assert await port.request("r", ControlVerb.PAUSE, "first")
    assert not await port.request("r", ControlVerb.PAUSE, "again")  # already pending
    assert port.request_count.value == before + 1
