"""``temporal://HOST:PORT/NAMESPACE?task_queue=NAME``: which Temporal service, namespace and task
queue a deck's runs go to, parsed once where the setting enters.

Every part but the host has a default (port 7233, namespace ``default``, task queue
``agentdeck``), so ``temporal://127.0.0.1`` is a whole address. Anything the address does not
understand -- another scheme, a query parameter it has no use for, a port that is not a number --
is a :class:`~agentdeck.errors.ConfigError` naming ``AGENTDECK_EXECUTION``, before anything
connects.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from agentdeck.errors import ConfigError
from agentdeck.plugins.urls import redact_url

__all__ = ["DEFAULT_PORT", "DEFAULT_TASK_QUEUE", "SCHEME", "SETTING", "TemporalAddress"]

SCHEME = "temporal"
SETTING = "AGENTDECK_EXECUTION"
DEFAULT_PORT = 7233
DEFAULT_NAMESPACE = "default"
DEFAULT_TASK_QUEUE = "agentdeck"
DEFAULT_HEARTBEAT_SECONDS = 10.0
_ACCEPTED = "temporal://HOST[:PORT][/NAMESPACE][?task_queue=NAME&heartbeat_seconds=S]"


@dataclass(frozen=True, slots=True)
class TemporalAddress:
    """Where runs are queued: a Temporal frontend, a namespace and a task queue."""

    host: str
    port: int = DEFAULT_PORT
    namespace: str = DEFAULT_NAMESPACE
    task_queue: str = DEFAULT_TASK_QUEUE
    heartbeat_seconds: float = DEFAULT_HEARTBEAT_SECONDS
    """How long a worker playing a run may go without heartbeating before Temporal counts it
    dead and hands the run to another worker."""

    @property
    def target(self) -> str:
        """``host:port``, as the Temporal client connects to it."""
        return f"{self.host}:{self.port}"

    @classmethod
    def parse(cls, url: str) -> TemporalAddress:
        """The address ``url`` names; ``ConfigError`` saying what is wrong with it."""
        parts = urlsplit(url)
        if parts.scheme != SCHEME:
            raise _refused(url, f"its scheme is {parts.scheme!r}, not 'temporal'")
        if parts.username or parts.password:
            raise _refused(url, "it carries credentials; Temporal is reached without them here")
        try:
            port = parts.port
        except ValueError:
            raise _refused(url, "its port is not a number from 1 to 65535") from None
        if not parts.hostname:
            raise _refused(url, "it names no host")
        namespace = parts.path.strip("/") or DEFAULT_NAMESPACE
        if "/" in namespace:
            raise _refused(url, f"its path {parts.path!r} is more than one namespace")
        query = parse_qs(parts.query, keep_blank_values=True, strict_parsing=False)
        unknown = sorted(set(query) - {"task_queue", "heartbeat_seconds"})
        if unknown:
            raise _refused(url, f"it has query parameters this plugin does not know: {unknown}")
        task_queue = _single(url, query, "task_queue") or DEFAULT_TASK_QUEUE
        heartbeat = _single(url, query, "heartbeat_seconds")
        try:
            heartbeat_seconds = DEFAULT_HEARTBEAT_SECONDS if heartbeat is None else float(heartbeat)
        except ValueError:
            raise _refused(url, f"heartbeat_seconds={heartbeat!r} is not a number") from None
        if not heartbeat_seconds > 0:
            raise _refused(url, "heartbeat_seconds must be greater than 0")
        return cls(
            host=parts.hostname,
            port=port or DEFAULT_PORT,
            namespace=namespace,
            task_queue=task_queue,
            heartbeat_seconds=heartbeat_seconds,
        )


def _single(url: str, query: dict[str, list[str]], name: str) -> str | None:
    values = query.get(name)
    if values is None:
        return None
    if len(values) != 1 or not values[0]:
        raise _refused(url, f"{name} must be given once, with a value")
    return values[0]


def _refused(url: str, why: str) -> ConfigError:
    return ConfigError(
        f"{SETTING}={redact_url(url)!r} is not a Temporal address: {why}; accepted: {_ACCEPTED}",
        setting=SETTING,
        accepted=[_ACCEPTED],
    )
