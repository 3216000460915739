"""The build-time check of who asks for which context type, row by row of its table.

Each row is checked twice: directly through ``check_context``, and end to end through the
catalog walk ``Deck.build()`` runs, in both spellings (``ToolCtx`` with ``@tool`` and the 4.x
``Context`` on an undecorated function).
"""

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Optional, Protocol, TypeVar, runtime_checkable

import pytest

from agentdeck.authoring.agents import Agent
from agentdeck.authoring.catalog import Catalog
from agentdeck.authoring.context import Context, ToolCtx, WorkflowCtx
from agentdeck.authoring.context_check import (
    Requirement,
    Verdict,
    check_context,
    context_requirement,
    validate_context_declaration,
)
from agentdeck.authoring.tools import tool
from agentdeck.errors import ConfigError, ContextTypeError


class Calendar:
    def find(self, day: str) -> str:
        return f"{day} 09:00"


class BusyCalendar(Calendar):
    """A subclass: a deck declaring it satisfies a ``ToolCtx[Calendar]``."""


class Warehouse:
    """A different application environment entirely."""


@runtime_checkable
class Finds(Protocol):
    def find(self, day: str) -> str: ...


@runtime_checkable
class HasName(Protocol):
    """A protocol with a data member: ``issubclass`` refuses to rule on it."""

    name: str


class FindsNotRuntime(Protocol):
    def find(self, day: str) -> str: ...


T = TypeVar("T")


# --------------------------------------------------------------------------- the table

TABLE = [
    pytest.param(Calendar, Calendar, Verdict.COMPATIBLE, id="exact-type"),
    pytest.param(Calendar, BusyCalendar, Verdict.COMPATIBLE, id="supertype-of-declared"),
    pytest.param(BusyCalendar, Calendar, Verdict.INCOMPATIBLE, id="subtype-of-declared"),
    pytest.param(Calendar, Warehouse, Verdict.INCOMPATIBLE, id="unrelated-type"),
    pytest.param(Any, Warehouse, Verdict.COMPATIBLE, id="any"),
    pytest.param(Mapping[str, Any], dict, Verdict.COMPATIBLE, id="abc-mapping"),
    pytest.param(Mapping[str, Any], dict[int, int], Verdict.COMPATIBLE, id="abc-ignores-params"),
    pytest.param(Mapping[str, Any], Calendar, Verdict.INCOMPATIBLE, id="abc-mapping-refused"),
    pytest.param(Sequence[str], list, Verdict.COMPATIBLE, id="abc-sequence"),
    pytest.param(Sequence[str], dict, Verdict.INCOMPATIBLE, id="abc-sequence-refused"),
    pytest.param(Finds, Calendar, Verdict.COMPATIBLE, id="runtime-protocol-structural"),
    pytest.param(Finds, Warehouse, Verdict.INCOMPATIBLE, id="runtime-protocol-refused"),
    pytest.param(Calendar | None, Calendar, Verdict.COMPATIBLE, id="union-with-none"),
    pytest.param(Optional[Calendar], Calendar, Verdict.COMPATIBLE, id="optional"),  # noqa: UP045
    pytest.param(Calendar | Warehouse, Warehouse, Verdict.COMPATIBLE, id="union-second-arm"),
    pytest.param(Calendar | None, Warehouse, Verdict.INCOMPATIBLE, id="union-no-arm"),
    pytest.param(HasName, Warehouse, Verdict.DEFERRED, id="protocol-issubclass-refuses"),
    pytest.param(FindsNotRuntime, Warehouse, Verdict.DEFERRED, id="protocol-not-runtime"),
    pytest.param(T, Warehouse, Verdict.DEFERRED, id="typevar"),
]


@pytest.mark.parametrize(("required", "provided", "verdict"), TABLE)
def test_check_context_follows_the_compatibility_table(
    required: Any, provided: Any, verdict: Verdict
) -> None:
    assert check_context(required, provided) is verdict


def _lookup_tool(annotation: Any) -> Callable[..., str]:
    def lookup(day: str, ctx: Any) -> str:
        """Look a day up."""
        return day

    lookup.__annotations__["ctx"] = annotation
    return lookup


SPELLINGS = [
    pytest.param(ToolCtx, tool, id="ToolCtx+@tool"),
    pytest.param(Context, lambda fn: fn, id="Context+undecorated"),
]


@pytest.mark.parametrize(("handle", "declare"), SPELLINGS)
@pytest.mark.parametrize(("required", "provided", "verdict"), TABLE)
def test_build_walk_applies_the_table_in_both_spellings(
    handle: Any, declare: Callable[[Any], Any], required: Any, provided: Any, verdict: Verdict
) -> None:
    agent = Agent(name="Booking", tools=[declare(_lookup_tool(handle[required]))])
    catalog = Catalog(agents=[agent])
    if verdict is Verdict.INCOMPATIBLE:
        with pytest.raises(ContextTypeError):
            catalog.check_context_types(provided)
    else:
        catalog.check_context_types(provided)


@pytest.mark.parametrize(("handle", "declare"), SPELLINGS)
def test_a_bare_handle_is_compatible_with_anything(
    handle: Any, declare: Callable[[Any], Any]
) -> None:
    agent = Agent(name="Booking", tools=[declare(_lookup_tool(handle))])
    Catalog(agents=[agent]).check_context_types(Warehouse)


def test_an_unreadable_signature_is_deferred() -> None:
    requirement = context_requirement(max)
    assert requirement is not None
    assert requirement.check(Warehouse) is Verdict.DEFERRED
    Catalog(agents=[Agent(name="Booking", instructions=max)]).check_context_types(Warehouse)


def test_an_engine_native_tool_object_is_deferred() -> None:
    class SdkTool:
        name = "web_search"

    agent = Agent(name="Booking", tools=[SdkTool()])
    sites = list(agent.context_sites())
    assert [requirement.is_deferred for _, requirement in sites] == [True]
    Catalog(agents=[agent]).check_context_types(Warehouse)


def test_a_declared_union_must_satisfy_the_requirement_in_every_arm() -> None:
    assert check_context(Calendar, Calendar | BusyCalendar) is Verdict.COMPATIBLE
    assert check_context(Calendar, Calendar | Warehouse) is Verdict.INCOMPATIBLE


def test_a_declared_any_or_typevar_defers() -> None:
    assert check_context(Calendar, Any) is Verdict.DEFERRED
    assert check_context(Calendar, T) is Verdict.DEFERRED


# --------------------------------------------------------------------------- the spec's example


@tool
def find_slots(day: str, environment: ToolCtx[Calendar]) -> str:
    """Find free appointment slots on a given day."""
    return environment.data.find(day)


def test_the_spec_example_refuses_a_warehouse_deck_naming_all_three() -> None:
    booking = Agent(name="Booking", instructions="Book things.", tools=[find_slots])

    with pytest.raises(ContextTypeError) as refused:
        Catalog(agents=[booking]).validate(context=Warehouse)

    message = str(refused.value)
    assert "find_slots" in message
    assert "ToolCtx[Calendar]" in message
    assert "Warehouse" in message
    assert refused.value.required == "ToolCtx[Calendar]"
    assert refused.value.provided == "Warehouse"
    assert isinstance(refused.value, ConfigError)


def test_the_4x_spelling_on_an_undecorated_function_is_refused_the_same_way() -> None:
    def find_slots(day: str, environment: Context[Calendar]) -> str:
        """Find free appointment slots on a given day."""
        return environment.data.find(day)

    booking = Agent(name="Booking", instructions="Book things.", tools=[find_slots])

    with pytest.raises(ContextTypeError, match=r"find_slots.*Calendar.*Warehouse"):
        Catalog(agents=[booking]).validate(context=Warehouse)


def test_declaring_nothing_checks_nothing() -> None:
    booking = Agent(name="Booking", tools=[find_slots])
    Catalog(agents=[booking]).validate()


def test_the_instructions_callable_is_an_injection_site() -> None:
    def briefing(ctx: ToolCtx[Calendar]) -> str:
        return "Book things."

    booking = Agent(name="Booking", instructions=briefing)

    with pytest.raises(ContextTypeError, match=r"instructions callable 'briefing'.*Warehouse"):
        Catalog(agents=[booking]).validate(context=Warehouse)


def test_hook_methods_are_injection_sites() -> None:
    class BookingHooks:
        async def on_start(self, ctx: ToolCtx[Calendar]) -> None: ...

        async def on_end(self, output: str) -> None: ...

    booking = Agent(name="Booking", hooks=BookingHooks())

    with pytest.raises(ContextTypeError, match=r"hook method 'BookingHooks.on_start'"):
        Catalog(agents=[booking]).validate(context=Warehouse)


# --------------------------------------------------------------------------- the declaration


def test_an_instance_where_the_type_belongs_is_refused() -> None:
    with pytest.raises(ContextTypeError, match=r"instance of Calendar.*context=Calendar"):
        validate_context_declaration(Calendar())


@pytest.mark.parametrize(
    "declared",
    [Calendar, Mapping[str, Any], dict[str, int], Calendar | None, Any, T, Finds, None],
    ids=repr,
)
def test_types_and_typing_constructs_are_accepted_declarations(declared: Any) -> None:
    assert validate_context_declaration(declared) is declared


# --------------------------------------------------------------------------- finding the parameter


def test_the_parameter_is_found_by_annotation_not_by_name() -> None:
    def uses_ctx_name(ctx: str, calendar: ToolCtx[Calendar]) -> str:
        return ctx

    requirement = context_requirement(uses_ctx_name)
    assert requirement == Requirement(parameter="calendar", required=Calendar, handle=ToolCtx)


def test_a_callable_without_a_context_parameter_has_no_requirement() -> None:
    def plain(day: str) -> str:
        return day

    assert context_requirement(plain) is None


def test_an_optional_context_parameter_is_still_the_context_parameter() -> None:
    def maybe(ctx: ToolCtx[Calendar] | None = None) -> None: ...

    requirement = context_requirement(maybe)
    assert requirement is not None
    assert requirement.required is Calendar


def test_a_string_annotation_naming_something_unresolvable_defers() -> None:
    def later(day: str, ctx: "ToolCtx[NotDefinedAnywhere]") -> str:  # type: ignore[name-defined]  # noqa: F821
        return day

    requirement = context_requirement(later)
    assert requirement is not None
    assert requirement.parameter == "ctx"
    assert requirement.check(Warehouse) is Verdict.DEFERRED


def test_a_string_annotation_that_resolves_is_checked() -> None:
    def resolved(day: str, ctx: "ToolCtx[Calendar]") -> str:
        return day

    requirement = context_requirement(resolved)
    assert requirement is not None
    assert requirement.check(Warehouse) is Verdict.INCOMPATIBLE


def test_two_context_parameters_are_refused() -> None:
    def greedy(a: ToolCtx[Calendar], b: ToolCtx[Warehouse]) -> None: ...

    with pytest.raises(ConfigError, match=r"'a', 'b'"):
        context_requirement(greedy)


def test_a_workflow_ctx_parameter_is_a_requirement() -> None:
    async def body(ctx: WorkflowCtx[Calendar]) -> None: ...

    requirement = context_requirement(body)
    assert requirement is not None
    assert requirement.handle is WorkflowCtx
    assert requirement.describe() == "WorkflowCtx[Calendar]"


def test_a_subclass_of_a_parameterised_handle_requires_its_parameter() -> None:
    class CalendarCtx(ToolCtx[Calendar]):
        __slots__ = ()

    def uses(ctx: CalendarCtx) -> None: ...

    requirement = context_requirement(uses)
    assert requirement is not None
    assert requirement.required is Calendar
