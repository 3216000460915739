"""The engine's view of the deck's settings, read once when the engine is built."""

from __future__ import annotations

from dataclasses import dataclass

from agentdeck.ports import EngineRequest
from agentdeck.settings import Settings
from agentdeck_openai.settings import OpenAISettings, RunnerSettings

__all__ = ["SDK_DEFAULT_MODEL_ENV", "EngineConfig"]

SDK_DEFAULT_MODEL_ENV = "OPENAI_DEFAULT_MODEL"
"""The variable the OpenAI Agents SDK reads for its default model: this plugin's default model
when ``OPENAI_MODEL`` (environment or the ``openai:`` section of ``config.yaml``) is unset."""


@dataclass(frozen=True, slots=True)
class EngineConfig:
    """The ``OPENAI_*`` and ``AGENTDECK_RUNNER_*`` sections of one deck's settings.

    Read from the deck's :class:`~agentdeck.settings.Settings` (never the process environment
    directly), so two decks in one process may point at different endpoints.
    """

    openai: OpenAISettings
    runner: RunnerSettings
    sdk_default_model: str = ""
    """``OPENAI_DEFAULT_MODEL`` from the deck's environment (empty when unset)."""

    @classmethod
    def from_request(cls, request: EngineRequest) -> EngineConfig:
        settings = request.settings if request.settings is not None else Settings()
        return cls(
            openai=settings.section(OpenAISettings),
            runner=settings.section(RunnerSettings),
            sdk_default_model=settings.env.get(SDK_DEFAULT_MODEL_ENV, "").strip(),
        )

    @property
    def default_model(self) -> str:
        """The model of an agent that names none: ``OPENAI_MODEL``, else the Agents SDK's
        ``OPENAI_DEFAULT_MODEL``, else empty (every agent must name its own)."""
        return self.openai.model or self.sdk_default_model

    @property
    def use_responses(self) -> bool:
        return self.openai.use_responses
