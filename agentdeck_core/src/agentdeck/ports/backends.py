"""The backend ports: what a backend factory receives, and the engine-facing backends.

Every factory registered by URL scheme (event stores, control and lease backends, session
factories, checkpointers) is called with one :class:`BackendRequest`. :class:`SessionFactory`
(conversation memory) and :class:`CheckpointerFactory` (engine checkpoints) are backends only
engines use: the core builds them from their settings and hands them through without knowing the
engine-native objects they make. Import these names from :mod:`agentdeck.ports`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentdeck.model.clock import Clock, SystemClock

if TYPE_CHECKING:
    from agentdeck.settings import Settings

__all__ = ["BackendRequest", "CheckpointerFactory", "SessionFactory"]


# =========================================================================== backend construction


@dataclass(frozen=True, slots=True)
class BackendRequest:
    """What a backend factory receives: the URL that chose it, the deck's settings and clock.

    One object rather than loose arguments, so the request can grow without breaking plugins.
    """

    url: str
    settings: Settings | None = None
    clock: Clock = field(default_factory=SystemClock)
    read_only: bool = False
    """The caller only reads (``runs list``/``show``/``tail``, the console's reads): the backend
    must not create a file, a directory or a schema, and must not write. A store that does not
    exist yet is reported, not made."""


# =========================================================================== sessions, checkpoints


class SessionFactory(ABC):
    """Conversation memory for engines: one engine-native session object per session id.

    The object's type belongs to the engine plugin (an Agents SDK session, for instance); the
    core only hands it through. Not the event log: the session is private to the engine.
    """

    @abstractmethod
    def session_for(self, session_id: str) -> Any:
        """The session object for ``session_id`` (created on first use).

        Typed ``Any`` on purpose: the object is the engine SDK's own (an Agents SDK
        ``Session``), which the core never imports and only hands through.
        """

    async def close(self) -> None:
        """Release clients and in-process sessions. Idempotent."""


class CheckpointerFactory(ABC):
    """Opens an engine-native checkpointer (a LangGraph saver, for instance) for a deck's life."""

    @abstractmethod
    def open(self) -> AbstractAsyncContextManager[Any]:
        """An async context manager yielding the checkpointer; exiting closes it.

        What it yields is the engine SDK's own saver (``Any`` to the core, which never imports
        it); the engine that asked for it opens it once per deck and closes it at deck close.
        """
