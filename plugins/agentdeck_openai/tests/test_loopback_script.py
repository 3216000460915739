"""The loopback server's script: how turns are built, and which turn answers which request."""

from __future__ import annotations

from typing import Any

import pytest
from agents import Agent, Handoff

from agentdeck.errors import ConfigError
from agentdeck_openai.testing import (
    ModelRequest,
    Script,
    call,
    handoff,
    handoff_tool_name,
    http_error,
    rate_limited,
    reply,
    server_error,
    structured,
    tool_call,
    tool_calls,
)


def chat_request(text: str, index: int = 0, **body: Any) -> ModelRequest:
    return ModelRequest(
        index=index,
        method="POST",
        path="/v1/chat/completions",
        headers={},
        body={"model": "m", "messages": [{"role": "user", "content": text}], **body},
    )


# --------------------------------------------------------------------------- building turns


def test_a_reply_streams_one_delta_per_word_by_default() -> None:
    assert reply("It is sunny today").text == ("It ", "is ", "sunny ", "today")


def test_a_reply_can_be_split_into_a_number_of_deltas_or_given_pieces() -> None:
    assert reply("abcdefg", deltas=3).text == ("abc", "de", "fg")
    assert reply("abcd", deltas=4).text == ("a", "b", "c", "d")
    assert reply("abcde", deltas=4).text == ("ab", "c", "d", "e")
    assert reply(["It is", " sunny"]).text == ("It is", " sunny")
    assert reply("It is sunny", deltas=1).reply_text == "It is sunny"


def test_a_delta_count_the_text_cannot_give_is_refused_naming_the_range() -> None:
    with pytest.raises(ConfigError) as refused:
        reply("hi", deltas=5)
    assert refused.value.setting == "deltas"
    assert "from 1 to 2" in str(refused.value)


def test_structured_output_is_the_json_text_of_the_value() -> None:
    assert structured({"city": "Paris", "temp": 21}).reply_text == '{"city": "Paris", "temp": 21}'


def test_tool_arguments_are_json_text_and_a_string_is_sent_verbatim() -> None:
    assert tool_call("get_weather", {"city": "Paris"}).calls[0].arguments == '{"city": "Paris"}'
    malformed = tool_call("get_weather", '{"city": "Par')
    assert malformed.calls[0].arguments == '{"city": "Par'
    assert malformed.text is None


def test_arguments_stream_in_token_like_pieces() -> None:
    [weather] = tool_call("get_weather", {"city": "Paris", "units": "c"}).calls
    assert weather.argument_deltas == ['{"city":', ' "Paris",', ' "units":', ' "c"}']
    assert "".join(weather.argument_deltas) == weather.arguments


def test_parallel_calls_are_one_turn() -> None:
    turn = tool_calls(call("a", {"x": 1}, call_id="c-a"), call("b"), text="Checking both.")
    assert [(c.name, c.arguments, c.call_id) for c in turn.calls] == [
        ("a", '{"x": 1}', "c-a"),
        ("b", "{}", None),
    ]
    assert turn.reply_text == "Checking both."
    with pytest.raises(ConfigError):
        tool_calls()


def test_the_handoff_tool_name_is_the_one_the_agents_sdk_offers() -> None:
    for name in ("Billing", "Billing Desk", "Café-Bot 2"):
        assert handoff_tool_name(name) == Handoff.default_tool_name(Agent(name=name))
    assert handoff("Billing Desk").calls[0].name == "transfer_to_billing_desk"


def test_error_turns_carry_status_body_and_retry_headers() -> None:
    limited = rate_limited()
    assert limited.error is not None
    assert limited.error.status == 429
    assert dict(limited.error.headers) == {"retry-after": "0", "retry-after-ms": "1"}
    assert limited.error.body()["error"]["code"] == "rate_limit_exceeded"

    failing = server_error("boom")
    assert failing.error is not None
    assert (failing.error.status, dict(failing.error.headers)) == (500, {"x-should-retry": "false"})
    retried = server_error(retryable=True).error
    assert retried is not None
    assert dict(retried.headers)["x-should-retry"] == "true"

    with pytest.raises(ConfigError) as refused:
        http_error(200, "not an error")
    assert refused.value.setting == "status"


def test_a_negative_delay_or_times_is_refused() -> None:
    with pytest.raises(ConfigError) as refused:
        reply("x", delay=-1)
    assert refused.value.setting == "delay"
    with pytest.raises(ConfigError) as refused:
        reply("x", times=0)
    assert refused.value.setting == "times"


# --------------------------------------------------------------------------- consuming turns


def test_turns_are_consumed_in_order_and_then_run_out() -> None:
    script = Script([reply("one"), reply("two")])
    assert script.take(chat_request("a")) == reply("one")
    assert script.take(chat_request("b")) == reply("two")
    assert script.take(chat_request("c")) is None
    assert script.served == 2


def test_a_turn_whose_rule_matches_wins_over_earlier_unruled_turns() -> None:
    def about_weather(request: ModelRequest) -> bool:
        return "weather" in (request.last_user_text or "")

    script = Script([reply("generic"), reply("sunny", when=about_weather)])
    answers = [script.take(chat_request("what is the weather?")) for _ in range(2)]
    assert [turn.reply_text if turn else None for turn in answers] == ["sunny", "generic"]
    assert script.take(chat_request("hello")) is None


def test_a_ruled_turn_never_answers_a_request_its_rule_refuses() -> None:
    script = Script([reply("sunny", when=lambda r: "weather" in (r.last_user_text or ""))])
    assert script.take(chat_request("hello")) is None
    assert len(script) == 1


def test_times_lets_a_turn_answer_several_requests_and_none_answers_forever() -> None:
    script = Script([reply("twice", times=2)])
    assert [script.take(chat_request("x")) is not None for _ in range(3)] == [True, True, False]

    forever = Script([reply("always", times=None)])
    assert all(forever.take(chat_request("x")) is not None for _ in range(50))
    forever.assert_consumed()  # an unlimited turn is never "left over"


def test_assert_consumed_names_the_turns_never_requested() -> None:
    script = Script().add(reply("used"), tool_call("get_weather", {"city": "Paris"}))
    script.take(chat_request("x"))
    with pytest.raises(AssertionError, match=r"1 scripted turn\(s\) never requested: tool_call"):
        script.assert_consumed()


def test_a_script_holds_only_turns() -> None:
    with pytest.raises(ConfigError, match="not str"):
        Script(["hi"])  # type: ignore[list-item]


# --------------------------------------------------------------------------- reading requests


def test_a_chat_request_reads_as_conversation_tools_and_outputs() -> None:
    request = ModelRequest(
        index=1,
        method="POST",
        path="/v1/chat/completions",
        headers={},
        body={
            "model": "m",
            "stream": True,
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": [{"type": "text", "text": "weather?"}]},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": "{}"},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
            ],
            "tools": [{"type": "function", "function": {"name": "get_weather"}}],
        },
    )
    assert (request.api, request.stream, request.model) == ("chat", True, "m")
    assert request.instructions == "Be brief."
    assert request.last_user_text == "weather?"
    assert request.tool_names == ["get_weather"]
    assert request.tool_calls == {"c1": ("get_weather", "{}")}
    assert request.tool_outputs == {"c1": "sunny"}


def test_a_responses_request_reads_the_same_way() -> None:
    request = ModelRequest(
        index=0,
        method="POST",
        path="/v1/responses",
        headers={},
        body={
            "model": "m",
            "instructions": "Be brief.",
            "input": [
                {"role": "user", "content": "weather?"},
                {
                    "type": "function_call",
                    "call_id": "c1",
                    "name": "get_weather",
                    "arguments": "{}",
                },
                {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
            ],
            "tools": [{"type": "function", "name": "get_weather"}],
        },
    )
    assert (request.api, request.stream) == ("responses", False)
    assert request.instructions == "Be brief."
    assert request.user_texts == ["weather?"]
    assert request.tool_names == ["get_weather"]
    assert request.tool_calls == {"c1": ("get_weather", "{}")}
    assert request.tool_outputs == {"c1": "sunny"}

    bare = ModelRequest(0, "POST", "/v1/responses", {}, {"input": "hi"})
    assert bare.last_user_text == "hi"
