"""Per-client request quotas and per-client conversations: what keeps a public endpoint cheap.

Both live in this process. Behind several workers each keeps its own counts (a client gets up to
N times the quota, and a follow-up must reach the worker that opened its session); moving them
to Redis is the step a multi-worker deployment adds, and the interfaces here are what it keeps.
"""

from __future__ import annotations

import math
import secrets
from collections import deque
from dataclasses import dataclass

from agentdeck import Clock, SystemClock
from agentdeck.errors import AgentDeckError, NotFoundError

__all__ = [
    "Conversations",
    "QuotaExceededError",
    "RequestQuota",
    "TurnsExhaustedError",
]


class QuotaExceededError(AgentDeckError):
    """A client asked more than its quota allows in the current window.

    ``retry_after`` is the whole number of seconds until the oldest counted request leaves the
    window, so a client that waits that long is admitted.
    """

    def __init__(self, client: str, limit: int, window: float, retry_after: int) -> None:
        super().__init__(
            f"client {client!r} has asked {limit} questions in the last {window:g} seconds; "
            f"retry after {retry_after} s"
        )
        self.client = client
        self.limit = limit
        self.retry_after = retry_after


class TurnsExhaustedError(AgentDeckError):
    """A conversation reached its turn limit; waiting does not help, a new session does."""

    def __init__(self, session_id: str, limit: int) -> None:
        super().__init__(
            f"this conversation has had its {limit} turns; start a new one (send no session_id)"
        )
        self.session_id = session_id
        self.limit = limit


class RequestQuota:
    """At most ``limit`` requests per client in any sliding ``window`` seconds.

    A sliding log rather than fixed windows: a fixed window admits twice the limit across a
    boundary, and the log costs one timestamp per admitted request.
    """

    def __init__(self, limit: int, window: float, *, clock: Clock | None = None) -> None:
        if limit < 1 or not window > 0:
            raise ValueError(f"a quota needs limit >= 1 and window > 0, not {limit}/{window}")
        self.limit = limit
        self.window = window
        self._clock = clock or SystemClock()
        self._log: dict[str, deque[float]] = {}
        self._swept_at = self._now()

    def _now(self) -> float:
        return self._clock.now().timestamp()

    def charge(self, client: str) -> None:
        """Count one request for ``client``, or raise :class:`QuotaExceededError` (uncounted)."""
        now = self._now()
        self._sweep(now)
        log = self._log.setdefault(client, deque())
        while log and log[0] <= now - self.window:
            log.popleft()
        if len(log) >= self.limit:
            retry_after = max(1, math.ceil(log[0] + self.window - now))
            raise QuotaExceededError(client, self.limit, self.window, retry_after)
        log.append(now)

    def _sweep(self, now: float) -> None:
        # Forget clients whose every request has left the window, once per window, so a stream
        # of one-off clients cannot grow the table without bound.
        if now - self._swept_at < self.window:
            return
        self._swept_at = now
        for client in [
            c for c, log in self._log.items() if not log or log[-1] <= now - self.window
        ]:
            del self._log[client]


@dataclass(slots=True)
class _Conversation:
    client: str
    turns: int = 0


class Conversations:
    """Session ids this server minted, which client owns each, and how many turns it had.

    Ids are unguessable, and one is honoured only for the client that opened it: a session's
    history is that client's questions, and nobody else continues it. An unknown id and another
    client's id get the same :class:`NotFoundError`, so ids cannot be probed.
    """

    def __init__(self, turns_per_session: int, *, max_open: int = 10_000) -> None:
        """:param max_open: conversations remembered at once; opening one more forgets the
        oldest, whose follow-ups then get 404 (a public server cannot grow without bound)."""
        self.turns_per_session = turns_per_session
        self.max_open = max_open
        self._open: dict[str, _Conversation] = {}  # insertion order: oldest first

    def open(self, client: str) -> str:
        session_id = f"jack-{secrets.token_urlsafe(18)}"
        while len(self._open) >= self.max_open:
            del self._open[next(iter(self._open))]
        self._open[session_id] = _Conversation(client=client)
        return session_id

    def check(self, session_id: str, client: str) -> None:
        """Refuse a turn on a session this client does not own, or one out of turns."""
        conversation = self._open.get(session_id)
        if conversation is None or conversation.client != client:
            raise NotFoundError(
                f"no conversation {session_id!r} is open for this client; "
                "send no session_id to start one",
                what="session",
                name=session_id,
            )
        if conversation.turns >= self.turns_per_session:
            raise TurnsExhaustedError(session_id, self.turns_per_session)

    def count_turn(self, session_id: str) -> int:
        """Record that a turn started on ``session_id``; returns how many it has had."""
        conversation = self._open[session_id]
        conversation.turns += 1
        return conversation.turns
