"""What a turn's content blocks become on the wire, and what the engine refuses by name."""

from __future__ import annotations

import base64

import engine_support as support  # loaded by conftest.py
import pytest

from agentdeck import Agent
from agentdeck.errors import ConfigError
from agentdeck.model.content import (
    AudioBlock,
    ContentBlock,
    DataBlock,
    ImageBlock,
    ResourceBlock,
    TextBlock,
)
from agentdeck.ports import Invocation
from agentdeck.testing.engine_kit import check_completed, drive, make_invocation
from agentdeck_openai.testing import LoopbackModelServer, reply

INTAKE = Agent(name="Intake", instructions="Read what you are given.")
PNG = base64.b64encode(b"\x89PNG receipt").decode()
WAV = base64.b64encode(b"RIFF....WAVEfmt ").decode()


async def test_one_text_block_is_sent_as_the_plain_user_message(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(reply("hi"))
    async with support.opened(support.make_engine(model_server)) as engine:
        check_completed(await drive(engine, make_invocation(engine, INTAKE, "hello there")))

    assert model_server.model_requests[0].items == [{"role": "user", "content": "hello there"}]


@pytest.mark.parametrize("chat", [False, True], ids=["responses", "chat"])
async def test_text_image_and_data_blocks_are_parts_of_one_user_message(
    model_server: LoopbackModelServer, chat: bool
) -> None:
    model_server.script.add(reply("The total is 12 EUR."))
    blocks: list[ContentBlock] = [
        TextBlock(text="What is the total?"),
        ImageBlock(media_type="image/png", data_b64=PNG),
        DataBlock(data={"currency": "€", "lines": [1, 2]}),
    ]
    async with support.opened(support.make_engine(model_server, chat=chat)) as engine:
        result = await drive(engine, make_invocation(engine, INTAKE, blocks))

    assert check_completed(result) == [TextBlock(text="The total is 12 EUR.")]
    [message] = [i for i in model_server.model_requests[0].items if i.get("role") == "user"]
    parts = message["content"]
    url = f"data:image/png;base64,{PNG}"
    data_text = '{"currency": "€", "lines": [1, 2]}'
    if chat:
        assert parts[0] == {"type": "text", "text": "What is the total?"}
        assert parts[1]["image_url"]["url"] == url
        assert parts[2] == {"type": "text", "text": data_text}
    else:
        assert parts[0] == {"type": "input_text", "text": "What is the total?"}
        assert (parts[1]["type"], parts[1]["image_url"]) == ("input_image", url)
        assert parts[2] == {"type": "input_text", "text": data_text}


async def test_audio_is_sent_through_chat_completions(model_server: LoopbackModelServer) -> None:
    model_server.script.add(reply("I heard you."))
    blocks = [AudioBlock(media_type="audio/wav", data_b64=WAV)]
    async with support.opened(support.make_engine(model_server, chat=True)) as engine:
        check_completed(await drive(engine, make_invocation(engine, INTAKE, blocks)))

    [message] = [i for i in model_server.model_requests[0].items if i.get("role") == "user"]
    assert message["content"] == [
        {"type": "input_audio", "input_audio": {"data": WAV, "format": "wav"}}
    ]


def test_audio_on_the_responses_path_is_refused_naming_the_block_and_the_setting(
    model_server: LoopbackModelServer,
) -> None:
    engine = support.make_engine(model_server)
    invocable = engine.compile(INTAKE)
    with pytest.raises(ConfigError, match="AudioBlock") as refused:
        engine.prepare_input(invocable, [AudioBlock(media_type="audio/wav", data_b64=WAV)])
    assert refused.value.setting == "OPENAI_USE_RESPONSES"


def test_audio_chat_cannot_take_is_refused_naming_the_media_type(
    model_server: LoopbackModelServer,
) -> None:
    engine = support.make_engine(model_server, chat=True)
    with pytest.raises(ConfigError, match="audio/ogg"):
        engine.prepare_input(
            engine.compile(INTAKE), [AudioBlock(media_type="audio/ogg", data_b64=WAV)]
        )


def test_a_resource_block_is_refused_naming_the_block_type(
    model_server: LoopbackModelServer,
) -> None:
    engine = support.make_engine(model_server)
    blocks = [TextBlock(text="read this"), ResourceBlock(uri="s3://bucket/report.pdf")]
    with pytest.raises(ConfigError, match=r"input\[1\] is a ResourceBlock") as refused:
        engine.prepare_input(engine.compile(INTAKE), blocks)
    assert "text, image, audio or data block" in refused.value.message


async def test_a_resource_block_that_reaches_play_is_refused_before_any_model_call(
    model_server: LoopbackModelServer,
) -> None:
    async with support.opened(support.make_engine(model_server)) as engine:
        invocation = Invocation(
            run_id="run-r1",
            invocable=engine.compile(INTAKE),
            input=[ResourceBlock(uri="file:///etc/hosts")],
        )
        result = await drive(engine, invocation)

    assert isinstance(result.raised, ConfigError)
    assert result.last.kind == "run.failed"
    assert model_server.requests == []
