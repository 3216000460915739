"""``Native``: AgentDeck's own HTTP/SSE protocol, as a listener binding.

``Native.http(...)`` holds the binding's options and nothing live; the FastAPI app is built per
exposure (:meth:`Native.asgi_app`), and the server is uvicorn (:meth:`Native.listen`). Options
are checked here, where they enter, so a bad one fails at ``deck.asgi(...)``, not at the first
request. :meth:`Native.from_settings` builds the same binding from the ``http`` settings section
(``AGENTDECK_HTTP_*``), which is how ``agentdeck serve`` configures it.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypedDict, Unpack

from agentdeck.errors import ConfigError
from agentdeck.model.field_types import KIND_PATTERN
from agentdeck.ports import ASGIApp, ListenerBinding
from agentdeck.settings import Settings

if TYPE_CHECKING:
    from agentdeck.deck.serving import Exposure
    from agentdeck_http.context import ServedCall

__all__ = ["ApiKeys", "ContextFactory", "HttpOptions", "KindFilter", "Native"]

ContextFactory = Callable[["ServedCall"], Any | Awaitable[Any]]
"""``context_factory(call) -> context`` (or an awaitable of it), called per request that starts
or continues a run."""

ApiKeys = dict[str, tuple[str | None, ...]]
"""Checked API keys: each key -> the namespaces it grants, in order (``None``: the default)."""


class HttpOptions(TypedDict, total=False):
    """The keyword arguments of :meth:`Native.http`, for :meth:`Native.from_settings` to pass
    on: what code gives wins over the corresponding setting."""

    path: str
    api_keys: Mapping[str, str | Iterable[str | None] | None] | None
    context_factory: ContextFactory | None
    public_kinds: Iterable[str] | None
    max_body_bytes: int
    allowed_origins: Iterable[str] | None
    heartbeat: float
    title: str
    console: bool


@dataclass(frozen=True, slots=True)
class KindFilter:
    """Which event kinds a stream sends: exact kinds, or ``prefix.*`` for a family."""

    exact: frozenset[str]
    prefixes: tuple[str, ...]

    @classmethod
    def everything(cls) -> KindFilter:
        return cls(exact=frozenset(), prefixes=("",))

    @classmethod
    def of(cls, kinds: Iterable[str]) -> KindFilter:
        exact: set[str] = set()
        prefixes: list[str] = []
        for kind in kinds:
            if not isinstance(kind, str):
                raise ConfigError(
                    f"public_kinds takes event kinds as strings, not {type(kind).__name__}",
                    setting="public_kinds",
                )
            if kind.endswith(".*") and KIND_PATTERN.match(kind[:-2]):
                prefixes.append(kind[:-1])
            elif KIND_PATTERN.match(kind):
                exact.add(kind)
            else:
                raise ConfigError(
                    f"public_kinds entry {kind!r} is not an event kind; write kinds like "
                    "'text.delta', or 'run.*' for a family",
                    setting="public_kinds",
                )
        return cls(exact=frozenset(exact), prefixes=tuple(prefixes))

    def __call__(self, kind: str) -> bool:
        return kind in self.exact or any(kind.startswith(p) for p in self.prefixes)


class Native(ListenerBinding):
    """AgentDeck's native wire protocol. Build it with :meth:`http`."""

    name: ClassVar[str] = "http"

    def __init__(
        self,
        *,
        path: str = "",
        api_keys: Mapping[str, str | Iterable[str | None] | None] | None = None,
        context_factory: ContextFactory | None = None,
        public_kinds: Iterable[str] | None = None,
        max_body_bytes: int = 1_000_000,
        allowed_origins: Iterable[str] | None = None,
        heartbeat: float = 15.0,
        title: str = "AgentDeck",
        console: bool = True,
    ) -> None:
        self.mount_path = check_mount_path(path)
        self.api_keys = check_api_keys(api_keys)
        if context_factory is not None and not callable(context_factory):
            raise ConfigError(
                "context_factory takes a callable (call) -> context, not "
                f"{type(context_factory).__name__}",
                setting="context_factory",
            )
        self.context_factory = context_factory
        self.public_kinds = (
            KindFilter.everything() if public_kinds is None else KindFilter.of(public_kinds)
        )
        if isinstance(max_body_bytes, bool) or not isinstance(max_body_bytes, int):
            raise ConfigError(
                f"max_body_bytes takes an int, not {type(max_body_bytes).__name__}",
                setting="max_body_bytes",
            )
        if max_body_bytes < 1:
            raise ConfigError(
                f"max_body_bytes must be at least 1, not {max_body_bytes}", setting="max_body_bytes"
            )
        self.max_body_bytes = max_body_bytes
        self.allowed_origins = check_origins(allowed_origins)
        if (
            isinstance(heartbeat, bool)
            or not isinstance(heartbeat, int | float)
            or not math.isfinite(heartbeat)
            or heartbeat <= 0
        ):
            raise ConfigError(
                f"heartbeat takes seconds > 0, not {heartbeat!r}", setting="heartbeat"
            )
        self.heartbeat = float(heartbeat)
        self.title = title
        if not isinstance(console, bool):
            raise ConfigError(
                f"console takes True or False, not {type(console).__name__}", setting="console"
            )
        self.console = console

    @classmethod
    def http(
        cls,
        path: str = "",
        *,
        api_keys: Mapping[str, str | Iterable[str | None] | None] | None = None,
        context_factory: ContextFactory | None = None,
        public_kinds: Iterable[str] | None = None,
        max_body_bytes: int = 1_000_000,
        allowed_origins: Iterable[str] | None = None,
        heartbeat: float = 15.0,
        title: str = "AgentDeck",
        console: bool = True,
    ) -> Native:
        """The native protocol over HTTP and Server-Sent Events.

        :param path: prefix of every route (``"/api"``: ``POST /api/runs``); default the root.
        :param api_keys: ``{key: namespaces}``. When set, every request but the OpenAPI
            document needs ``Authorization: Bearer <key>`` or ``X-API-Key: <key>``, and touches
            only the key's namespaces (``None`` in the list is the default namespace). A request
            naming no namespace uses the key's first one. Another namespace's runs answer 404.
        :param context_factory: ``(call: ServedCall) -> context`` (sync or async), called for
            each request that starts or continues a run; its value is the run's ``context=``,
            so served agents' ``ToolCtx[...]`` tools and ``WorkflowCtx[...]`` bodies get one.
        :param public_kinds: the event kinds the SSE stream sends (``"run.*"`` for a family);
            default every kind. Leave ``tool.call.completed`` out of a public surface: its
            preview is the tool's output verbatim, exception text included.
        :param max_body_bytes: larger request bodies are refused with 413.
        :param allowed_origins: when set, a request whose ``Origin`` is not listed is refused
            with 403, and listed origins get CORS headers. Not authentication: ``Origin`` is set
            by browsers and forged by anyone else.
        :param heartbeat: seconds between SSE comment lines on an idle stream.
        :param title: the OpenAPI document's title.
        :param console: serve the operator console at ``<path>/ui/`` (the browser pages over
            this API, with the same keys); ``False`` serves the API alone.
        """
        return cls(
            path=path,
            api_keys=api_keys,
            context_factory=context_factory,
            public_kinds=public_kinds,
            max_body_bytes=max_body_bytes,
            allowed_origins=allowed_origins,
            heartbeat=heartbeat,
            title=title,
            console=console,
        )

    @classmethod
    def from_settings(
        cls, settings: Settings | None = None, **options: Unpack[HttpOptions]
    ) -> Native:
        """The binding the ``http`` settings section describes (``AGENTDECK_HTTP_*``, or the
        ``http:`` block of ``config.yaml``); what ``agentdeck serve`` serves.

        Everything is resolved now, so a deployment fails at startup, not at the first request:
        the key file is read, the context factory imported, and a bad value is a
        :class:`~agentdeck.errors.ConfigError` naming its variable. Keys never appear in an
        error or a repr.

        :param settings: where to read the section (a deck's ``Settings``); default
            ``Settings.load()``, the process environment and ``config.yaml``.
        :param options: any keyword argument of :meth:`http`; each wins over its setting, so
            code can supply what settings cannot carry (``context_factory=tenant_for``) and
            leave the rest to the deployment.
        """
        from agentdeck_http.settings import HttpSettings  # it builds on this module's checks

        section = (settings or Settings.load()).section(HttpSettings)
        configured: HttpOptions = {
            "path": section.path,
            "max_body_bytes": section.max_body_bytes,
            "heartbeat": section.heartbeat_seconds,
            "public_kinds": section.public_kinds,
            "allowed_origins": section.allowed_origins,
            "console": section.console,
        }
        # Resolving a key file or an import string has effects (I/O, importing user code): only
        # done for what code did not supply itself.
        if "api_keys" not in options:
            configured["api_keys"] = section.resolved_api_keys()
        if "context_factory" not in options:
            configured["context_factory"] = section.resolved_context_factory()
        configured.update(options)
        return cls.http(**configured)

    def __repr__(self) -> str:
        return f"Native.http(path={self.mount_path!r})"

    def asgi_app(self, exposure: Exposure) -> ASGIApp:
        from agentdeck_http.app import build_app

        return build_app(self, exposure)

    async def listen(
        self, app: ASGIApp, exposure: Exposure, *, host: str, port: int, **options: Any
    ) -> None:
        from agentdeck_http.server import listen

        await listen(app, exposure, host=host, port=port, **options)


def check_mount_path(path: object) -> str:
    """``path`` without a trailing slash, refused unless it is '' or starts with '/'."""
    if not isinstance(path, str):
        raise ConfigError(f"path takes a string like '/api', not {type(path).__name__}")
    cleaned = path.rstrip("/")
    if cleaned and not cleaned.startswith("/"):
        raise ConfigError(
            f"path {path!r} must start with '/', like '/api' (or be '' for the root)",
            setting="path",
        )
    if any(c in cleaned for c in "?#{} "):
        raise ConfigError(f"path {path!r} may not contain '?', '#', braces or spaces")
    return cleaned


def check_api_keys(
    keys: Mapping[str, str | Iterable[str | None] | None] | None,
) -> ApiKeys | None:
    """Each key with the tuple of namespaces it grants; messages never quote a key."""
    if keys is None:
        return None
    if not isinstance(keys, Mapping):
        raise ConfigError(
            "api_keys takes a mapping {key: namespaces}, not " + type(keys).__name__,
            setting="api_keys",
        )
    if not keys:
        raise ConfigError(
            "api_keys is empty, which would refuse every request; pass None to serve without "
            "keys, or at least one {key: namespaces}",
            setting="api_keys",
        )
    resolved: ApiKeys = {}
    for key, granted in keys.items():
        if not isinstance(key, str) or not key.strip() or key != key.strip():
            raise ConfigError(
                "api_keys: each key must be a non-empty string without surrounding spaces",
                setting="api_keys",
            )
        namespaces: tuple[str | None, ...]
        if granted is None or isinstance(granted, str):
            namespaces = (granted,)
        elif isinstance(granted, Collection) and not isinstance(granted, Mapping | bytes):
            namespaces = tuple(granted)
        else:
            raise ConfigError(
                "api_keys: a key's namespaces are a string, None (the default namespace) or a "
                f"list of them, not {type(granted).__name__}",
                setting="api_keys",
            )
        if not namespaces:
            raise ConfigError(
                "api_keys: a key grants no namespace; list at least one (None is the default)",
                setting="api_keys",
            )
        for namespace in namespaces:
            if namespace is not None and (not isinstance(namespace, str) or not namespace):
                raise ConfigError(
                    f"api_keys: namespace {namespace!r} must be a non-empty string or None",
                    setting="api_keys",
                )
        resolved[key] = tuple(dict.fromkeys(namespaces))
    return resolved


def check_origins(origins: Iterable[str] | None) -> frozenset[str] | None:
    """The origins, lower-cased; each must be ``scheme://host[:port]`` with no path."""
    if origins is None:
        return None
    if isinstance(origins, str):
        origins = [origins]
    checked: set[str] = set()
    for origin in origins:
        if (
            not isinstance(origin, str)
            or "://" not in origin
            or origin.endswith("/")
            or origin != origin.strip()
        ):
            raise ConfigError(
                f"allowed_origins entry {origin!r} is not an origin; write "
                "'https://app.example.com' (scheme, host, optional port, no path)",
                setting="allowed_origins",
            )
        checked.add(origin.lower())
    return frozenset(checked)
