"""Jack's own settings, read like every AgentDeck section: ``JACK_*`` variables or the ``jack``
block of ``config.yaml``, through the deck's :class:`~agentdeck.Settings`.

The limits are the whole of what stands between a public, unauthenticated endpoint and someone
else's model bill, so each has a finite default and refuses a value that would switch it off by
accident (zero or negative).
"""

from __future__ import annotations

from typing import Annotated, ClassVar

from agentdeck import Budget
from agentdeck.settings import SettingsSection
from pydantic import Field, field_validator
from pydantic_settings import NoDecode, SettingsConfigDict

__all__ = ["JackSettings"]


class JackSettings(SettingsSection):
    """The reference application's settings."""

    section: ClassVar[str] = "jack"
    model_config = SettingsConfigDict(env_prefix="JACK_")

    docs_root: str | None = None
    """Directory whose `docs/` and package READMEs Jack reads. Unset: the AgentDeck checkout
    found at or above the working directory (or above the installed `jack` package)."""

    model: str | None = None
    """Model Jack asks. Unset: `OPENAI_MODEL`, else `gpt-4.1-mini`."""

    tokens_per_turn: int = Field(default=40_000, gt=0)
    """Token ceiling of one question (one run): model input plus output tokens summed over the
    turn's model calls. A turn that goes over ends `run.failed(budget_exceeded)`."""

    model_calls_per_turn: int = Field(default=8, gt=0)
    """Model calls one question may take (each tool round trip is one)."""

    requests_per_window: int = Field(default=20, gt=0)
    """Questions one client may ask per window; more are answered 429 with `Retry-After`."""

    window_seconds: float = Field(default=3600.0, gt=0)
    """Length of the quota window, in seconds."""

    turns_per_session: int = Field(default=20, gt=0)
    """Questions one conversation may hold. A conversation re-sends its history every turn,
    so this bounds the cost of the longest one; the client starts a new session after it."""

    max_question_chars: int = Field(default=2_000, gt=0)
    """Longest question accepted, in characters."""

    origins: Annotated[list[str], NoDecode] = Field(default_factory=list)
    """Browser origins allowed to call the route, comma-separated
    (`https://docs.example.com,https://example.com`). Empty: requests carrying an `Origin`
    header are refused. An origin check keeps other sites from embedding the endpoint; it is
    not authentication."""

    @field_validator("origins", mode="before")
    @classmethod
    def _comma_separated(cls, value: object) -> object:
        if isinstance(value, str):
            return [origin.strip() for origin in value.split(",") if origin.strip()]
        return value

    def budget(self) -> Budget:
        """The token ceiling of one question as the core's :class:`~agentdeck.Budget`: the
        runtime sums the run's reported usage and ends it ``budget_exceeded`` when it crosses."""
        return Budget(max_total_tokens=self.tokens_per_turn, max_requests=self.model_calls_per_turn)
