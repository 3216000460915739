"""The guard fails a contract subclass that drops or silently replaces a kit test."""

from __future__ import annotations

import pytest

from agentdeck.testing import (
    ContractGuardError,
    ControlContract,
    LeaseContract,
    StoreContract,
    check_contract,
)
from agentdeck.testing.guard import contract_problems, kit_tests

KITS = [StoreContract, ControlContract, LeaseContract]


def _a_test_of(kit: type) -> str:
    return sorted(name for name in kit_tests(kit) if "dropped" not in name)[0]


@pytest.mark.parametrize("kit", KITS, ids=lambda kit: kit.__name__)
def test_a_subclass_that_keeps_every_kit_test_passes(kit: type) -> None:
    class TestWhole(kit):  # type: ignore[misc]
        pass

    check_contract(TestWhole)


@pytest.mark.parametrize("kit", KITS, ids=lambda kit: kit.__name__)
def test_silently_redefining_a_kit_test_fails_at_class_definition(kit: type) -> None:
    name = _a_test_of(kit)

    async def weaker(self: object) -> None:
        pass

    with pytest.raises(ContractGuardError) as error:
        type("TestWeaker", (kit,), {name: weaker})
    assert f"replaces kit test {name!r}" in str(error.value)


@pytest.mark.parametrize("kit", KITS, ids=lambda kit: kit.__name__)
def test_deleting_a_kit_test_fails_at_class_definition(kit: type) -> None:
    name = _a_test_of(kit)
    with pytest.raises(ContractGuardError) as error:
        type("TestFewer", (kit,), {name: None})
    assert f"drops kit test {name!r}" in str(error.value)


def test_the_guard_test_itself_cannot_be_replaced() -> None:
    async def nothing(self: object) -> None:
        pass

    with pytest.raises(ContractGuardError):
        type(
            "TestUnguarded",
            (StoreContract,),
            {"test_no_kit_test_is_dropped_or_silently_overridden": nothing},
        )


def test_turning_collection_off_fails() -> None:
    with pytest.raises(ContractGuardError) as error:
        type("TestOff", (StoreContract,), {"__test__": False})
    assert "__test__ = False" in str(error.value)


def test_an_override_listed_with_a_reason_is_accepted_and_inherited() -> None:
    name = _a_test_of(StoreContract)

    async def replacement(self: object) -> None:
        pass

    base = type(
        "StoreBase",
        (StoreContract,),
        {name: replacement, "overridden": {name: "our backend reports this differently"}},
    )
    child = type("TestChild", (base,), {})
    assert contract_problems(child) == []


@pytest.mark.parametrize("reason", ["", "   ", None])
def test_an_override_needs_a_reason(reason: str | None) -> None:
    name = _a_test_of(StoreContract)

    async def replacement(self: object) -> None:
        pass

    with pytest.raises(ContractGuardError) as error:
        type("TestNoReason", (StoreContract,), {name: replacement, "overridden": {name: reason}})
    assert "without a reason" in str(error.value)


def test_listing_a_test_the_kit_does_not_have_fails() -> None:
    with pytest.raises(ContractGuardError) as error:
        type("TestTypo", (StoreContract,), {"overridden": {"test_no_such_thing": "why"}})
    assert "no such test" in str(error.value)


def test_tampering_after_the_class_statement_is_caught_at_run_time() -> None:
    name = _a_test_of(LeaseContract)

    class TestTampered(LeaseContract):
        pass

    setattr(TestTampered, name, None)
    with pytest.raises(ContractGuardError):
        check_contract(TestTampered)


def test_every_problem_is_reported_at_once() -> None:
    first, second = sorted(kit_tests(ControlContract))[:2]
    with pytest.raises(ContractGuardError) as error:
        type("TestBroken", (ControlContract,), {first: None, second: None})
    assert len(error.value.problems) == 2


@pytest.mark.parametrize("kit", KITS, ids=lambda kit: kit.__name__)
def test_kit_tests_are_marked_for_pytest_asyncio(kit: type) -> None:
    for name, test in kit_tests(kit).items():
        marks = {mark.name for mark in getattr(test, "pytestmark", [])}
        assert "asyncio" in marks, name
