"""Retrying and forking an OpenAI agent's run: a retry is the same input asked again, as a new
run linked to the failed one; a fork has no sound meaning for the SDK's runs and is refused."""

from __future__ import annotations

import pytest

from agentdeck import Agent, Deck, ForkUnsupportedError, RunFailedError, Settings
from agentdeck.model.payloads import RunStarted
from agentdeck_openai.testing import LoopbackModelServer, reply, server_error


async def test_a_failed_agent_run_retried_asks_the_model_again_with_the_same_input(
    model_server: LoopbackModelServer,
) -> None:
    model_server.script.add(server_error("model overloaded"), reply("Refund approved."))
    agent = Agent(name="Support", instructions="Help with refunds.")
    async with Deck(
        agents=[agent], settings=Settings(env=model_server.env()), observers=()
    ) as deck:
        failed = await deck.runs.start("Support", "refund order A-1")
        with pytest.raises(RunFailedError):
            await failed
        with pytest.raises(ForkUnsupportedError) as refused:
            await deck.runs.fork(failed.id, at=0)
        assert refused.value.engine == "openai"

        retry = await deck.runs.retry(failed.id)

        assert (await retry).output == "Refund approved."
        first, again = model_server.model_requests
        assert again.body["input"] == first.body["input"]
        async for event in retry.events():
            assert isinstance(event.payload, RunStarted)
            assert event.payload.retry_of == failed.id
            break
