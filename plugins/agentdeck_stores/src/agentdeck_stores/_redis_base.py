"""What the three Redis ports share: URL parsing, key naming, the pooled client, error mapping.

A Redis URL is redis-py's (``redis://[[user]:password@]host[:port][/db][?option=value...]``,
``rediss://`` for TLS) plus one option of ours, ``prefix``: every key the backend writes starts
with it (default ``agentdeck:``), so several decks, tenants or test runs share one server without
seeing each other. redis-py's own query options (``max_connections``, ``socket_timeout``, ...)
pass through to its connection pool.

Connecting and waiting for a pooled connection are bounded by the stores'
``connect_timeout_seconds`` (default 5 s; a ``socket_connect_timeout`` in the URL wins), so an
unreachable server fails a call with a retryable ``StoreError`` within that bound; the first
such failure of an outage logs one warning and the next success one "back" line
(:mod:`._outage`).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff
from redis.commands.core import AsyncScript
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, RedisError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from agentdeck.errors import ConfigError, StoreError
from agentdeck.model.clock import Clock, SystemClock, utc
from agentdeck.plugins.host import redact_url
from agentdeck_stores._outage import outage_for
from agentdeck_stores.settings import DEFAULT_CONNECT_TIMEOUT

__all__ = [
    "BACKEND",
    "DEFAULT_PREFIX",
    "SCHEMA_VERSION",
    "RedisBackend",
    "RedisTarget",
    "ScriptBatcher",
    "as_text",
    "from_micros",
    "micros",
    "token",
    "translate_errors",
]

BACKEND = "redis"
DEFAULT_PREFIX = "agentdeck:"
SCHEMA_VERSION = 1
"""The key layout version written under ``<prefix>schema`` (see :mod:`._redis_lua`)."""

_SCHEMES = ("redis", "rediss")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


# =========================================================================== URLs


@dataclass(frozen=True, slots=True)
class RedisTarget:
    """A parsed backend URL: what redis-py connects to, and the key prefix."""

    url: str
    """The URL as configured (only ever shown redacted)."""
    client_url: str
    """``url`` without our own options, handed to redis-py."""
    prefix: str
    timeout: float = DEFAULT_CONNECT_TIMEOUT
    """Seconds to connect, or to wait for a free pooled connection, before failing."""

    @classmethod
    def parse(cls, url: str, *, timeout: float = DEFAULT_CONNECT_TIMEOUT) -> RedisTarget:
        parts = urlsplit(url)
        if parts.scheme not in _SCHEMES:
            raise ConfigError(
                f"{redact_url(url)!r} is not a Redis URL; use redis://host:port/db or "
                "rediss://... (TLS), optionally with ?prefix=<key prefix>",
                accepted=[f"{scheme}://" for scheme in _SCHEMES],
            )
        query = parse_qsl(parts.query, keep_blank_values=True)
        prefixes = [value for name, value in query if name == "prefix"]
        if len(prefixes) > 1 or (prefixes and not prefixes[0]):
            raise ConfigError(
                f"{redact_url(url)!r} must give at most one non-empty prefix= option "
                "(the string every key of this backend starts with, e.g. prefix=myapp:)",
                setting="prefix",
            )
        if any(name == "decode_responses" for name, _ in query):
            raise ConfigError(
                f"{redact_url(url)!r} sets decode_responses, which this backend cannot use: it "
                "stores bytes (engine state) and decodes text itself; drop the option",
                setting="decode_responses",
            )
        rest = urlencode([(name, value) for name, value in query if name != "prefix"])
        client_url = urlunsplit(parts._replace(query=rest))
        return cls(
            url=url,
            client_url=client_url,
            prefix=prefixes[0] if prefixes else DEFAULT_PREFIX,
            timeout=timeout,
        )

    @property
    def shown(self) -> str:
        return redact_url(self.url)


# =========================================================================== key naming


def token(value: str | None) -> str:
    """One component of a key name: unambiguous, free of ``:``, and ``None`` distinct from any
    string (``%`` alone is never produced by percent-encoding)."""
    return "%" if value is None else quote(value, safe="")


def as_text(value: bytes | str | None) -> str | None:
    """A reply value as text (redis-py hands back bytes unless told to decode)."""
    if value is None:
        return None
    return value.decode() if isinstance(value, bytes) else value


def micros(moment: datetime) -> int:
    """An instant as integer microseconds since the epoch: exact, and orderable as a score."""
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def from_micros(value: bytes | str | int) -> datetime:
    return _EPOCH + timedelta(microseconds=int(value))


# =========================================================================== errors


@contextlib.contextmanager
def translate_errors(target: RedisTarget, doing: str) -> Iterator[None]:
    """Turn every redis-py failure inside the block into a :class:`StoreError`, and keep the
    server's :class:`~agentdeck_stores._outage.Outage` up to date."""
    outage = outage_for(BACKEND, target.url)
    started = time.monotonic()
    try:
        yield
    except (RedisConnectionError, RedisTimeoutError, OSError) as exc:
        outage.failed(exc, started)
        raise StoreError(
            f"cannot {doing}: the server is unreachable or dropped the connection "
            f"({type(exc).__name__}: {exc}); check that Redis is running at that address",
            backend=BACKEND,
            url=target.url,
            retryable=True,
        ) from exc
    except RedisError as exc:
        raise StoreError(
            f"cannot {doing}: the server refused ({type(exc).__name__}: {exc})",
            backend=BACKEND,
            url=target.url,
        ) from exc
    outage.reached(started)


# =========================================================================== group commit


class ScriptBatcher:
    """Sends the script calls made while one batch is on the wire as the next batch, pipelined.

    A lone call goes out at once, as an ordinary ``EVALSHA``; under concurrency (a hundred runs
    appending at once) the calls that queue up during one round trip share the next one, so the
    cost per call is a share of a round trip instead of a whole one. Each call is still its own
    script, atomic and judged on its own. A batch resent after a dropped connection is safe
    because every writing script recognises its own token.

    ``combined`` maps a script to one that runs many calls of it in a single call (the
    dispatcher of `_redis_lua.APPEND_MANY`): consecutive calls of such a script in a batch go
    out as one command, which saves the client encoding and parsing a command per call and the
    server running a script per call. Each call's reply (or error) is still its own.
    """

    def __init__(
        self,
        client: Callable[[], aioredis.Redis],
        *,
        combined: dict[AsyncScript, AsyncScript] | None = None,
    ) -> None:
        self._client = client
        self._combined = {script.sha: many for script, many in (combined or {}).items()}
        self._queue: list[_Call] = []
        self._task: asyncio.Task[None] | None = None

    async def call(self, script: AsyncScript, keys: list[Any], args: list[Any]) -> Any:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._queue.append((script, keys, args, future))
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        try:
            while self._queue:
                batch, self._queue = self._queue, []
                try:
                    await self._send(batch)
                except BaseException as exc:  # never leave a caller waiting
                    for *_, future in batch:
                        if not future.done():
                            future.set_exception(exc)
                    if not isinstance(exc, Exception):
                        raise
        finally:
            self._task = None

    def _groups(self, batch: list[_Call]) -> list[list[_Call]]:
        """The batch in order, consecutive calls of a combinable script grouped together."""
        groups: list[list[_Call]] = []
        for call in batch:
            sha = call[0].sha
            last = groups[-1] if groups else None
            if last is not None and sha in self._combined and last[0][0].sha == sha:
                last.append(call)
            else:
                groups.append([call])
        return groups

    async def _send(self, batch: list[_Call]) -> None:
        if len(batch) == 1:
            script, keys, args, future = batch[0]
            result = await script(keys=keys, args=args)
            if not future.done():
                future.set_result(result)
            return
        groups = self._groups(batch)
        pipe = self._client().pipeline(transaction=False)
        for group in groups:
            keys, args = _command(group)
            script = group[0][0] if len(group) == 1 else self._combined[group[0][0].sha]
            pipe.evalsha(script.sha, len(keys), *keys, *args)
        results = await pipe.execute(raise_on_error=False)
        unknown: list[list[_Call]] = []
        for group, result in zip(groups, results, strict=True):
            if isinstance(result, NoScriptError):
                unknown.append(group)  # the server forgot the script (restart, SCRIPT FLUSH)
            else:
                _settle(group, result)
        for group in unknown:
            if len(group) == 1:
                await self._send(group)  # the script object loads it and calls again
            else:
                keys, args = _command(group)
                _settle(group, await self._combined[group[0][0].sha](keys=keys, args=args))


_Call = tuple[AsyncScript, list[Any], list[Any], "asyncio.Future[Any]"]


def _command(group: list[_Call]) -> tuple[list[Any], list[Any]]:
    """The keys and arguments of one call, or of a combined call of the whole group."""
    if len(group) == 1:
        _, keys, args, _ = group[0]
        return keys, args
    all_keys: list[Any] = []
    all_args: list[Any] = []
    for _, keys, args, _ in group:
        all_keys += keys
        all_args += [len(keys), len(args), *args]
    return all_keys, all_args


def _settle(group: list[_Call], result: Any) -> None:
    """Hand each call of ``group`` its reply: ``result`` itself for a lone call, else its item."""
    if len(group) == 1:
        replies = [result]
    elif isinstance(result, Exception):
        replies = [result] * len(group)
    else:
        replies = [
            ResponseError(as_text(reply[1]) or "script error")
            if isinstance(reply, list) and reply and as_text(reply[0]) == "error"
            else reply
            for reply in result
        ]
    for (*_, future), reply in zip(group, replies, strict=True):
        if future.done():
            continue
        if isinstance(reply, Exception):
            future.set_exception(reply)
        else:
            future.set_result(reply)


# =========================================================================== the shared base


class RedisBackend:
    """The connection side of a Redis port: one pooled client, opened and closed once.

    The pool is redis-py's blocking pool: when every connection is busy a caller waits for one
    rather than failing, so a burst of concurrent operations shares a bounded set of
    connections. Dropped connections are replaced on the next call (redis-py retries a command
    that failed on a dead connection a few times, with jittered backoff); the scripts that write
    carry a token so that a retried write that had in fact been applied is recognised instead of
    applied twice.
    """

    role: ClassVar[str] = "backend"

    def __init__(
        self, target: RedisTarget, *, clock: Clock | None = None, read_only: bool = False
    ) -> None:
        self.target = target
        self.url = target.url
        self.read_only = read_only
        """Opened for a reader: :meth:`open` writes no layout version, and every write of the
        port raises :class:`~agentdeck.errors.StoreError` before reaching the server."""
        self.prefix = target.prefix
        self._clock: Clock = clock if clock is not None else SystemClock()
        self.client_name = f"agentdeck-{self.role}-{secrets.token_hex(4)}"
        """What ``CLIENT LIST`` shows for this backend's connections (``CLIENT SETNAME``)."""
        self._client: aioredis.Redis | None = None
        self._pool: aioredis.BlockingConnectionPool | None = None
        self._closed = False

    # -- lifecycle --------------------------------------------------------------------------

    def _connect(self) -> aioredis.Redis:
        if self._closed:
            raise StoreError(
                "this backend object was closed; build a new one to reconnect",
                backend=BACKEND,
                url=self.url,
            )
        if self._client is None:
            with translate_errors(self.target, "configure the connection"):
                try:
                    pool = aioredis.BlockingConnectionPool.from_url(
                        self.target.client_url,
                        **self._pool_options(),
                    )
                except (TypeError, ValueError) as exc:
                    raise ConfigError(
                        f"{self.target.shown!r} has an option redis-py does not accept: {exc}",
                        setting="url",
                    ) from None
            self._pool = pool
            self._client = aioredis.Redis(connection_pool=pool)
        return self._client

    def _pool_options(self) -> dict[str, Any]:
        return {
            "client_name": self.client_name,
            # A command that failed on a dropped connection is sent again on a fresh one.
            "retry": Retry(ExponentialWithJitterBackoff(cap=0.5, base=0.02), retries=4),
            "max_connections": 64,
            # Waiting for a free pooled connection, and connecting, are bounded alike.
            "timeout": self.target.timeout,
            "socket_connect_timeout": self.target.timeout,
        }

    @property
    def client(self) -> aioredis.Redis:
        return self._connect()

    async def open(self) -> None:
        """Connect (proving the server answers) and check or write the key-layout version (a
        read-only port only checks it: a prefix with no keys yet reads as an empty store)."""
        client = self._connect()
        key = f"{self.prefix}schema"
        with translate_errors(self.target, "open the store"):
            if not self.read_only:
                await client.set(key, SCHEMA_VERSION, nx=True)
            found = await client.get(key)
        if found is not None and int(found) > SCHEMA_VERSION:
            raise StoreError(
                f"the keys under prefix {self.prefix!r} were written by a newer release (layout "
                f"version {int(found)}; this one reads {SCHEMA_VERSION}); upgrade agentdeck-stores "
                "or use another prefix",
                backend=BACKEND,
                url=self.url,
            )

    async def close(self) -> None:
        """Release every connection. Idempotent."""
        if self._closed:
            return
        self._closed = True
        client, self._client, self._pool = self._client, None, None
        if client is not None:
            with contextlib.suppress(RedisError, OSError):
                await client.aclose(close_connection_pool=True)

    def check_writable(self, operation: str) -> None:
        """Refuse ``operation`` on a read-only port, naming it."""
        if self.read_only:
            raise StoreError(
                f"{operation} refused: this handle was opened read-only (a reader such as "
                "`agentdeck runs list` never writes); open it without read_only to write",
                backend=BACKEND,
                url=self.url,
            )

    def _now_micros(self) -> int:
        return micros(utc(self._clock.now()))
