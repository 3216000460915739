"""``@tool`` and undecorated functions: the schema the model sees, and invoking with a context."""

import asyncio
import functools
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field

from agentdeck.authoring.agents import Agent
from agentdeck.authoring.context import ToolCtx
from agentdeck.authoring.tools import Tool, as_tool, tool
from agentdeck.errors import ConfigError, ContextTypeError, InvalidInputError


class Calendar:
    def __init__(self) -> None:
        self.booked: list[str] = []

    def find(self, day: str) -> str:
        return f"{day} 09:00"


@tool
def find_slots(day: str, environment: ToolCtx[Calendar], limit: int = 3) -> str:
    """Find free appointment slots on a given day.

    Only working days are searched.

    Args:
        day: The day to search, as an ISO date.
        limit: How many slots to return at most.
    """
    return environment.data.find(day)


# --------------------------------------------------------------------------- the declaration


def test_the_schema_leaves_out_the_context_parameter() -> None:
    assert set(find_slots.params_json_schema["properties"]) == {"day", "limit"}


def test_the_schema_is_strict_json_schema_friendly() -> None:
    schema = find_slots.params_json_schema

    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["day"]
    assert schema["properties"]["limit"]["default"] == 3


def test_name_and_description_come_from_the_function() -> None:
    assert find_slots.name == "find_slots"
    assert find_slots.description == "Find free appointment slots on a given day."


def test_argument_descriptions_come_from_the_docstring() -> None:
    properties = find_slots.params_json_schema["properties"]

    assert properties["day"]["description"] == "The day to search, as an ISO date."
    assert properties["limit"]["description"] == "How many slots to return at most."


def test_the_decorator_takes_a_name_description_and_approval_policy() -> None:
    @tool(name="cancel", description="Cancel a booking.", needs_approval=True)
    def cancel_booking(booking_id: str) -> str:
        """Not this text."""
        return booking_id

    assert (cancel_booking.name, cancel_booking.description) == ("cancel", "Cancel a booking.")
    assert cancel_booking.needs_approval is True


def test_the_context_requirement_is_recorded() -> None:
    requirement = find_slots.context_requirement

    assert requirement is not None
    assert (requirement.parameter, requirement.required) == ("environment", Calendar)


def test_a_decorated_function_stays_callable_as_itself() -> None:
    calendar = Calendar()

    assert find_slots("2026-01-05", ToolCtx(calendar)) == "2026-01-05 09:00"


def test_nested_models_are_closed_objects_too() -> None:
    class Window(BaseModel):
        start: str
        end: str

    @tool
    def book(window: Window) -> str:
        """Book a window."""
        return window.start

    window_schema = next(iter(book.params_json_schema["$defs"].values()))
    assert window_schema["additionalProperties"] is False


def test_annotated_field_descriptions_are_kept() -> None:
    @tool
    def search(query: Annotated[str, Field(description="Words to look for.")]) -> str:
        """Search."""
        return query

    assert search.params_json_schema["properties"]["query"]["description"] == "Words to look for."


def test_parameters_named_like_pydantic_attributes_work() -> None:
    @tool
    def emit(json: str, model_config: int = 0) -> str:
        """Emit."""
        return json * (model_config or 1)

    assert set(emit.params_json_schema["properties"]) == {"json", "model_config"}
    assert asyncio.run(emit.invoke({"json": "a", "model_config": 2}, None)) == "aa"


def test_variadic_parameters_are_refused() -> None:
    def spread(*days: str) -> str:
        return ",".join(days)

    with pytest.raises(ConfigError, match=r"\*days"):
        tool(spread)


def test_a_name_model_apis_reject_is_refused() -> None:
    def fine(x: int) -> int:
        return x

    with pytest.raises(ConfigError, match="not accepted by model APIs"):
        tool(name="files.write")(fine)


def test_a_parameter_type_with_no_json_schema_is_refused_naming_the_tool() -> None:
    class Opaque:
        pass

    def takes_opaque(thing: Opaque) -> None: ...

    with pytest.raises(ConfigError, match="takes_opaque"):
        tool(takes_opaque)


# --------------------------------------------------------------------------- invoking


async def test_a_sync_tool_is_invoked_with_its_context_injected() -> None:
    calendar = Calendar()

    result = await find_slots.invoke({"day": "2026-01-05"}, ToolCtx(calendar))

    assert result == "2026-01-05 09:00"


async def test_an_async_tool_is_awaited() -> None:
    @tool
    async def book(day: str, ctx: ToolCtx[Calendar]) -> str:
        """Book a day."""
        await asyncio.sleep(0)
        ctx.data.booked.append(day)
        return "booked"

    calendar = Calendar()
    assert await book.invoke({"day": "mon"}, ToolCtx(calendar)) == "booked"
    assert calendar.booked == ["mon"]  # the context is the caller's object, by reference


async def test_arguments_are_validated_and_coerced_against_the_signature() -> None:
    @tool
    def repeat(text: str, times: int) -> str:
        """Repeat."""
        return text * times

    assert await repeat.invoke({"text": "ab", "times": "2"}, None) == "abab"


async def test_arguments_that_do_not_fit_raise_naming_the_tool_and_field() -> None:
    with pytest.raises(InvalidInputError) as invalid:
        await find_slots.invoke({"day": "mon", "limit": "many"}, ToolCtx(Calendar()))

    assert invalid.value.name == "find_slots"
    assert invalid.value.field == "limit"
    assert "limit" in str(invalid.value)


async def test_unknown_and_missing_arguments_are_refused() -> None:
    with pytest.raises(InvalidInputError, match=r"day.*Field required"):
        await find_slots.invoke({}, ToolCtx(Calendar()))
    with pytest.raises(InvalidInputError, match=r"(?i)extra inputs"):
        await find_slots.invoke({"day": "mon", "environment": "x"}, ToolCtx(Calendar()))


async def test_a_tool_that_declares_a_context_refuses_a_run_without_one() -> None:
    with pytest.raises(ContextTypeError) as refused:
        await find_slots.invoke({"day": "mon"}, None)

    message = str(refused.value)
    assert "find_slots" in message
    assert "carries NoneType rather than an AgentDeck run context" in message


async def test_a_tool_without_a_context_ignores_the_one_it_is_given() -> None:
    @tool
    def today() -> str:
        """Today."""
        return "mon"

    assert await today.invoke(None, ToolCtx(Calendar())) == "mon"


async def test_positional_only_parameters_are_passed_positionally() -> None:
    def add(a: int, b: int, /) -> int:
        """Add."""
        return a + b

    assert await tool(add).invoke({"a": 1, "b": 2}, None) == 3


async def test_an_unresolvable_context_annotation_is_still_kept_from_the_model() -> None:
    def later(day: str, ctx: "ToolCtx[DefinedNowhere]") -> str:  # type: ignore[name-defined]  # noqa: F821
        """Later."""
        return f"{day}:{type(ctx.data).__name__}"

    compiled = tool(later)

    assert set(compiled.params_json_schema["properties"]) == {"day"}
    assert await compiled.invoke({"day": "mon"}, ToolCtx(Calendar())) == "mon:Calendar"


# --------------------------------------------------------------------------- what tools= accepts


def test_a_plain_function_is_compiled_like_a_decorated_one() -> None:
    def read_doc(slug: str, docs: ToolCtx[dict[str, str]]) -> str:
        """Read one documentation page in full, by its slug."""
        return docs.data[slug]

    compiled = as_tool(read_doc)

    assert isinstance(compiled, Tool)
    assert set(compiled.params_json_schema["properties"]) == {"slug"}


def test_a_tool_is_kept_and_an_engine_native_object_passes_through() -> None:
    class FunctionTool:
        name = "native"

    native = FunctionTool()

    assert as_tool(find_slots) is find_slots
    assert as_tool(native) is native


def test_a_partial_and_a_bound_method_are_compiled() -> None:
    class Docs:
        def read(self, slug: str) -> str:
            """Read a page."""
            return slug

    def scaled(factor: int, value: int) -> int:
        """Scale a value."""
        return factor * value

    method_tool = as_tool(Docs().read)
    partial_tool = as_tool(functools.partial(scaled, 2))

    assert isinstance(method_tool, Tool)
    assert set(method_tool.params_json_schema["properties"]) == {"slug"}
    assert isinstance(partial_tool, Tool)
    assert partial_tool.description == "Scale a value."
    assert set(partial_tool.params_json_schema["properties"]) == {"value"}


def test_a_name_string_is_refused_in_tools() -> None:
    with pytest.raises(ConfigError, match="subagents="):
        as_tool("web_search")


def test_two_tools_of_one_name_in_an_agent_are_refused() -> None:
    def lookup(x: str) -> str:
        """One."""
        return x

    other = tool(name="lookup")(lambda y: y)

    with pytest.raises(ConfigError, match="two tools named 'lookup'"):
        Agent(name="A", tools=[lookup, other])


def test_an_untyped_parameter_accepts_any_json() -> None:
    def echo(value):  # type: ignore[no-untyped-def]
        """Echo."""
        return value

    compiled: Any = tool(echo)
    assert compiled.params_json_schema["required"] == ["value"]
    assert asyncio.run(compiled.invoke({"value": [1, {"a": 2}]}, None)) == [1, {"a": 2}]


# --------------------------------------------------------------------------- parameter descriptions


def _described(declared: Tool) -> dict[str, str | None]:
    return {
        name: spec.get("description")
        for name, spec in declared.params_json_schema["properties"].items()
    }


def test_numpy_style_parameters_give_descriptions_and_the_summary_stops_at_the_section() -> None:
    @tool
    def convert(amount: float, currency: str = "EUR", *, rounded: bool = False) -> str:
        """Convert an amount of pounds sterling.
        Parameters
        ----------
        amount : float
            How many pounds,
            before any fee.
        currency : str, optional
            What to convert to.
        rounded
            Whether to round.

        Returns
        -------
        str
            amount: not a parameter, a line of the Returns section.
        """
        return currency

    assert convert.description == "Convert an amount of pounds sterling."
    assert _described(convert) == {
        "amount": "How many pounds,\nbefore any fee.",
        "currency": "What to convert to.",
        "rounded": "Whether to round.",
    }


def test_a_numpy_line_naming_several_parameters_describes_each() -> None:
    @tool
    def span(start: int, end: int) -> int:
        """A span.

        Parameters
        ----------
        start, end : int
            Where the span starts and ends.
        """
        return end - start

    assert _described(span) == {
        "start": "Where the span starts and ends.",
        "end": "Where the span starts and ends.",
    }


def test_sphinx_and_google_multiline_descriptions_keep_their_line_breaks() -> None:
    @tool
    def sphinx(day: str, limit: int = 3) -> str:
        """Find slots.

        :param day: The day,
            as an ISO date.
        :type day: str
        :param int limit: How many.
        :returns: the slots
        """
        return day

    @tool
    def google(day: str, limit: int = 3) -> str:
        """Find slots.

        Args:
            day (str): The day,
                as an ISO date.
            limit: How many.

        Returns:
            limit: not a parameter.
        """
        return day

    expected = {"day": "The day,\nas an ISO date.", "limit": "How many."}
    assert _described(sphinx) == _described(google) == expected


def test_a_string_in_annotated_describes_a_parameter_the_docstring_does_not() -> None:
    @tool
    def search(
        query: Annotated[str, "Words to look for."],
        limit: Annotated[int, "Ignored: the docstring says it."] = 5,
        exact: Annotated[bool, Field(description="From the field.")] = False,
    ) -> str:
        """Search.

        Args:
            limit: How many results.
        """
        return query

    assert _described(search) == {
        "query": "Words to look for.",
        "limit": "How many results.",
        "exact": "From the field.",
    }
    assert asyncio.run(search.invoke({"query": "x"}, None)) == "x"


# --------------------------------------------------------------------------- approval and errors


def test_needs_approval_may_be_a_function_of_the_call() -> None:
    def over_limit(ctx: ToolCtx[Any], args: dict[str, Any], call_id: str) -> bool:
        return bool(args["amount"] > 100)

    @tool(needs_approval=over_limit)
    def refund(amount: int) -> str:
        """Refund."""
        return str(amount)

    agent = Agent(name="till", tools=[refund])
    assert refund.needs_approval is over_limit
    assert agent.approval_policy("refund") is over_limit
    assert agent.needs_approval("refund") is True
    assert agent.clone(interrupt_on=["refund"]).approval_policy("refund") is True


@pytest.mark.parametrize(
    ("options", "setting"),
    [
        ({"needs_approval": "yes"}, "needs_approval"),
        ({"needs_approval": lambda args: True}, "needs_approval"),
        ({"failure_error_function": "sorry"}, "failure_error_function"),
        ({"failure_error_function": lambda error: "x"}, "failure_error_function"),
    ],
    ids=["not a function", "too few parameters", "a string", "one parameter"],
)
def test_an_approval_or_error_function_of_the_wrong_shape_is_refused_at_once(
    options: dict[str, Any], setting: str
) -> None:
    def refund(amount: int) -> str:
        """Refund."""
        return str(amount)

    with pytest.raises(ConfigError) as refused:
        tool(**options)(refund)
    assert refused.value.setting == setting


def test_the_error_policy_is_kept_by_a_redecoration_that_does_not_mention_it() -> None:
    def explain(ctx: ToolCtx[Any], error: Exception) -> str:
        return "sorry"

    @tool(failure_error_function=explain)
    def refund(amount: int) -> str:
        """Refund."""
        return str(amount)

    assert tool(name="give_back")(refund).failure_error_function is explain
    assert tool(failure_error_function=None)(refund).failure_error_function is None
