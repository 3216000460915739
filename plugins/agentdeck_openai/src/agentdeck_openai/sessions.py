"""Conversation memory for the OpenAI engine: one Agents SDK session object per session id.

Three factories, chosen by ``AGENTDECK_SESSION`` (its URL scheme):

``local`` (the default when ``AGENTDECK_SESSION`` is unset)
    :class:`LocalSessionFactory`: one in-memory ``agents.SQLiteSession`` per session id, kept for
    the factory's life (the deck's). Gone when the process exits and invisible to other workers:
    a development convenience, not a durable option.
``sqlite``
    :class:`SqliteSessionFactory`: one ``agents.SQLiteSession`` per session id on the file the
    URL names (``sqlite:///rel/path.db``, ``sqlite:////abs/path.db``, as the state URLs), so a
    conversation survives a restart and is shared by the processes of one machine.
``redis`` / ``rediss``
    :class:`RedisSessionFactory`: ``agents.extensions.memory.RedisSession`` objects sharing one
    ``redis.asyncio.Redis`` client, keyed ``<AGENTDECK_SESSION_REDIS_KEY_PREFIX>:<session id>``
    and expiring after ``AGENTDECK_SESSION_REDIS_TTL`` seconds when that is set. Shared by every
    worker and surviving a restart. Needs the ``agentdeck-openai[redis]`` extra (the Redis
    client); without it the factory raises :class:`~agentdeck.errors.ExtraNotInstalledError`.

A session is the history an engine builds its next model call from — private to the engine, and
not the event log.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar
from urllib.parse import urlsplit

from agentdeck.errors import ConfigError, InvalidInputError, StoreError
from agentdeck.plugins.extras import require_extra
from agentdeck.ports import BackendRequest, SessionFactory
from agentdeck.settings import Settings
from agentdeck_openai.settings import SessionSettings

if TYPE_CHECKING:
    from agents import SQLiteSession
    from agents.extensions.memory import RedisSession
    from redis.asyncio import Redis

__all__ = ["LocalSessionFactory", "RedisSessionFactory", "SqliteSessionFactory"]

_SETTING = "AGENTDECK_SESSION"


def _checked_id(session_id: object) -> str:
    if not isinstance(session_id, str) or not session_id:
        raise InvalidInputError(
            f"a session id must be a non-empty string, not {session_id!r}", field="session_id"
        )
    return session_id


def _closed_error(session_id: str, backend: str, url: str) -> StoreError:
    return StoreError(
        f"this session factory is closed, so session {session_id!r} cannot be opened; "
        "open a new deck (or factory)",
        backend=backend,
        url=url,
    )


def _scheme(url: str) -> str:
    return urlsplit(url).scheme.lower()


def _redacted(url: str) -> str:
    """``url`` with any password masked, for error messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    return parts._replace(netloc=parts.netloc.replace(f":{parts.password}@", ":***@")).geturl()


class LocalSessionFactory(SessionFactory):
    """One in-process, in-memory ``SQLiteSession`` per session id, for the factory's life.

    Asking twice for one id returns the same object, so two turns of a conversation in one deck
    share their history. :meth:`close` drops every session (their history with them).
    """

    schemes: ClassVar[tuple[str, ...]] = ("local",)
    url = "local://"

    def __init__(self) -> None:
        self._sessions: dict[str, SQLiteSession] = {}
        self._lock = threading.Lock()
        self._closed = False

    @classmethod
    def from_request(cls, request: BackendRequest) -> LocalSessionFactory:
        """The factory the ``local`` scheme registers; the URL is ``local://`` and nothing more."""
        parts = urlsplit(request.url)
        if parts.scheme.lower() != "local" or any(
            (parts.netloc, parts.path.strip("/"), parts.query, parts.fragment)
        ):
            raise ConfigError(
                f"{request.url!r} is not a local session URL; in-process sessions take exactly "
                "'local://' (or leave AGENTDECK_SESSION unset)",
                setting=_SETTING,
                accepted=["local://"],
            )
        return cls()

    def session_for(self, session_id: str) -> SQLiteSession:
        from agents import SQLiteSession

        key = _checked_id(session_id)
        with self._lock:
            if self._closed:
                raise _closed_error(key, "local session", self.url)
            session = self._sessions.get(key)
            if session is None:
                session = self._sessions[key] = SQLiteSession(key)
            return session

    async def close(self) -> None:
        with self._lock:
            self._closed = True
            sessions, self._sessions = list(self._sessions.values()), {}
        for session in sessions:
            session.close()


class SqliteSessionFactory(SessionFactory):
    """One file-backed ``SQLiteSession`` per session id, all on one SQLite file.

    The Agents SDK's own session class keeps the history (its tables ``agent_sessions`` and
    ``agent_messages``), so a conversation continued after a restart, or by another process on
    the same machine, reads exactly what the SDK wrote. The directory is created when the
    first session opens, not when the deck builds.
    """

    schemes: ClassVar[tuple[str, ...]] = ("sqlite",)

    def __init__(self, url: str) -> None:
        from agentdeck.sqlite.schema import parse_url

        try:
            self.path = Path(parse_url(url).path)
        except ConfigError as refused:
            raise ConfigError(
                f"{_SETTING}={url!r}: {refused}", setting=_SETTING, accepted=refused.accepted
            ) from None
        self.url = url
        self._sessions: dict[str, SQLiteSession] = {}
        self._lock = threading.Lock()
        self._closed = False

    @classmethod
    def from_request(cls, request: BackendRequest) -> SqliteSessionFactory:
        """The factory the ``sqlite`` scheme registers."""
        return cls(request.url)

    def session_for(self, session_id: str) -> SQLiteSession:
        from agents import SQLiteSession

        key = _checked_id(session_id)
        with self._lock:
            if self._closed:
                raise _closed_error(key, "sqlite session", self.url)
            session = self._sessions.get(key)
            if session is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                session = self._sessions[key] = SQLiteSession(key, db_path=self.path)
            return session

    async def close(self) -> None:
        with self._lock:
            self._closed = True
            sessions, self._sessions = list(self._sessions.values()), {}
        for session in sessions:
            session.close()


class RedisSessionFactory(SessionFactory):
    """``RedisSession`` objects over one shared ``redis.asyncio.Redis`` client.

    Constructing it connects nowhere (the client connects on first use). A client passed in is
    the caller's to close; one built from the URL is closed by :meth:`close`.
    """

    schemes: ClassVar[tuple[str, ...]] = ("redis", "rediss")

    def __init__(
        self,
        url: str,
        *,
        key_prefix: str = "agents:session",
        ttl: int | None = None,
        client: Redis | None = None,
    ) -> None:
        if _scheme(url) not in self.schemes:
            raise ConfigError(
                f"{_redacted(url)!r} is not a Redis URL; Redis sessions take "
                "redis://host:port/db or rediss://host:port/db (TLS)",
                setting=_SETTING,
                accepted=["redis://host:port/db", "rediss://host:port/db"],
            )
        if ttl is not None and ttl <= 0:
            raise ConfigError(
                f"a Redis session TTL must be a positive number of seconds or unset, not {ttl!r}",
                setting=SessionSettings.env_var("redis_ttl"),
            )
        require_extra(
            "redis",
            feature=f"AGENTDECK_SESSION={_scheme(url)}://...",
            distribution="agentdeck-openai",
            extra="redis",
            setting=_SETTING,
        )
        from redis.asyncio import Redis

        self.url = url
        self.key_prefix = key_prefix
        self.ttl = ttl
        self._owns_client = client is None
        self._client: Redis = client if client is not None else Redis.from_url(url)
        self._sessions: dict[str, RedisSession] = {}
        self._lock = threading.Lock()
        self._closed = False

    @classmethod
    def from_request(cls, request: BackendRequest) -> RedisSessionFactory:
        """The factory the ``redis``/``rediss`` schemes register; prefix and TTL come from the
        deck's :class:`~agentdeck_openai.settings.SessionSettings`."""
        settings = request.settings if request.settings is not None else Settings()
        section = settings.section(SessionSettings)
        return cls(request.url, key_prefix=section.redis_key_prefix, ttl=section.redis_ttl)

    @property
    def client(self) -> Redis:
        """The one client every session of this factory shares."""
        return self._client

    def session_for(self, session_id: str) -> RedisSession:
        from agents.extensions.memory import RedisSession

        key = _checked_id(session_id)
        with self._lock:
            if self._closed:
                raise _closed_error(key, "redis session", self.url)
            session = self._sessions.get(key)
            if session is None:
                session = self._sessions[key] = RedisSession(
                    key, redis_client=self._client, key_prefix=self.key_prefix, ttl=self.ttl
                )
            return session

    async def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._sessions.clear()
        if self._owns_client:
            await self._client.aclose()
