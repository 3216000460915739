"""The core's engine contract kit, run whole against the LangGraph engine.

Twice: on a SQLite checkpointer (durable, so the kit's fresh-engine continuations run: a second
engine instance on the same file continues what the first parked) and on the memory
checkpointer (not durable: the kit skips those two, as the engine declares).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from lg_graphs import SECRET, START_STATE, asking, failing, three_nodes

from agentdeck.model.content import ContentBlock, DataBlock
from agentdeck.ports import ClientEngine, Engine
from agentdeck.testing.engine_kit import EngineContract, EngineScenarios
from agentdeck_langgraph import LangGraphEngine, Workflow
from agentdeck_langgraph.client import LangGraphClientEngine

EXPECTED = {
    "completes": ["plan", "work", "review"],
    "streams": ["plan", "work", "review"],
    "asks": ["plan", "ask:yes", "review"],
}


def _check_output(name: str, output: list[ContentBlock]) -> bool:
    [block] = output
    assert isinstance(block, DataBlock)
    assert block.data == {
        "n": 2,
        "log": EXPECTED[name],
        **({"answer": "yes"} if name == "asks" else {}),
    }
    return True


def _scenarios() -> EngineScenarios:
    return EngineScenarios(
        completes=Workflow("completes", three_nodes()),
        fails=Workflow("fails", failing()),
        streams=Workflow("streams", three_nodes()),
        asks=Workflow("asks", asking()),
        answer_value="yes",
        failure_text=SECRET,
        input=START_STATE,
        given={"n": 1},
        check_output=_check_output,
    )


class TestLangGraphEngineOnSqlite(EngineContract):
    @pytest.fixture
    def engine_factory(self, tmp_path: Path) -> Callable[[], Engine]:
        url = f"sqlite:///{tmp_path / 'checkpoints.db'}"
        return lambda: LangGraphEngine(checkpointer=url)

    @pytest.fixture
    def client_factory(self) -> Callable[[], ClientEngine]:
        return LangGraphClientEngine

    @pytest.fixture
    def scenarios(self) -> EngineScenarios:
        return _scenarios()


class TestLangGraphEngineInMemory(EngineContract):
    @pytest.fixture
    def engine_factory(self) -> Callable[[], Engine]:
        return lambda: LangGraphEngine(checkpointer="memory://")

    @pytest.fixture
    def client_factory(self) -> Callable[[], ClientEngine]:
        return LangGraphClientEngine

    @pytest.fixture
    def scenarios(self) -> EngineScenarios:
        return _scenarios()
