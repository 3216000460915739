"""The guard that keeps a contract kit whole in every implementation that runs it.

A kit is a base test class (``StoreContract``, ``ControlContract``, ...). An implementer
subclasses it and supplies the object under test through a fixture; every ``test*`` the kit
defines then runs against that object. The danger is silence: a subclass that redefines a kit
test (to make it pass) or sets it to ``None`` (to drop it) would still report green. So:

* a subclass may replace a kit test only by listing it in ``overridden`` with a reason::

      class TestMyStore(StoreContract):
          overridden = {"test_follow_ends_after_terminal": "our driver reorders; see #12"}

* anything else — a redefined, deleted or shadowed kit test, a reason that is empty, a listed
  name the kit does not have, or ``__test__ = False`` — fails at class definition with
  :class:`ContractGuardError`, and again at run time through the kit's own guard test (which
  catches tampering done after the class statement).

Kits mark themselves with ``__contract_kit__ = True`` in their class body and derive from
:class:`ContractKit`.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any, ClassVar

import pytest

__all__ = ["ContractGuardError", "ContractKit", "check_contract", "contract_problems", "kit_tests"]

_TEST_PREFIX = "test"
_MISSING = object()


class ContractGuardError(TypeError):
    """A contract subclass dropped or replaced kit tests without saying so."""

    def __init__(self, cls: type, problems: list[str]) -> None:
        super().__init__(
            f"{cls.__module__}.{cls.__qualname__} does not run its contract kit whole:\n  - "
            + "\n  - ".join(problems)
            + "\nA kit test may be replaced only by naming it in `overridden = {name: reason}`."
        )
        self.cls = cls
        self.problems = problems


class ContractKit:
    """Base of every contract kit: checks each subclass when it is defined.

    Each kit's coroutine tests are marked ``asyncio`` here, so the kit runs under
    pytest-asyncio's strict mode as well as auto mode without marking the subclass (and without
    marking an implementer's own synchronous tests).
    """

    __contract_kit__: ClassVar[bool] = False
    overridden: ClassVar[Mapping[str, str]] = {}
    """Kit tests this subclass replaces on purpose: name -> why (shown in the guard's report)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("__contract_kit__") is True:
            _mark_coroutine_tests(cls)
            return
        check_contract(cls)


def _mark_coroutine_tests(kit: type) -> None:
    for name, value in list(kit.__dict__.items()):
        if name.startswith(_TEST_PREFIX) and inspect.iscoroutinefunction(value):
            pytest.mark.asyncio(value)  # the mark is stored on the function object itself


def _kits_of(cls: type) -> list[type]:
    return [k for k in cls.__mro__[1:] if k.__dict__.get("__contract_kit__") is True]


def kit_tests(kit: type) -> dict[str, object]:
    """The tests ``kit`` defines (its own and those it inherits from other kits), by name."""
    return {
        name: inspect.getattr_static(kit, name)
        for name in dir(kit)
        if name.startswith(_TEST_PREFIX) and callable(inspect.getattr_static(kit, name))
    }


def _declared_overrides(cls: type) -> dict[str, object]:
    declared: dict[str, object] = {}
    for klass in reversed(cls.__mro__):
        if klass.__dict__.get("__contract_kit__") is True:
            continue
        own = klass.__dict__.get("overridden")
        if isinstance(own, Mapping):
            declared.update(own)
    return declared


def contract_problems(cls: type) -> list[str]:
    """Everything the guard objects to in ``cls`` (empty when the kit runs whole)."""
    kits = _kits_of(cls)
    if not kits:
        return []
    problems: list[str] = []
    if cls.__dict__.get("__test__", True) is False:
        problems.append("sets __test__ = False, which drops every kit test")
    expected: dict[str, object] = {}
    for kit in reversed(kits):
        expected.update(kit_tests(kit))
    declared = _declared_overrides(cls)
    for name, reason in declared.items():
        if name not in expected:
            problems.append(f"lists {name!r} in `overridden`, but the kit has no such test")
        elif not isinstance(reason, str) or not reason.strip():
            problems.append(f"lists {name!r} in `overridden` without a reason")
    for name, original in sorted(expected.items()):
        actual = inspect.getattr_static(cls, name, _MISSING)
        if actual is original or name in declared:
            continue
        if actual is _MISSING or actual is None or not callable(actual):
            problems.append(f"drops kit test {name!r}")
        else:
            problems.append(f"replaces kit test {name!r} without listing it in `overridden`")
    return problems


def check_contract(cls: type) -> None:
    """Raise :class:`ContractGuardError` if ``cls`` drops or silently replaces a kit test."""
    problems = contract_problems(cls)
    if problems:
        raise ContractGuardError(cls, problems)
