"""The engine's view of the deck's settings, read once when the engine is built."""

from __future__ import annotations

from dataclasses import dataclass

from agentdeck.ports import EngineRequest
from agentdeck.settings import Settings
from agentdeck_openai.settings import OpenAISettings, RunnerSettings

__all__ = ["EngineConfig"]


@dataclass(frozen=True, slots=True)
class EngineConfig:
    """The ``OPENAI_*`` and ``AGENTDECK_RUNNER_*`` sections of one deck's settings.

    Read from the deck's :class:`~agentdeck.settings.Settings` (never the process environment
    directly), so two decks in one process may point at different endpoints.
    """

    openai: OpenAISettings
    runner: RunnerSettings

    @classmethod
    def from_request(cls, request: EngineRequest) -> EngineConfig:
        settings = request.settings if request.settings is not None else Settings()
        return cls(openai=settings.section(OpenAISettings), runner=settings.section(RunnerSettings))

    @property
    def use_responses(self) -> bool:
        return self.openai.use_responses
