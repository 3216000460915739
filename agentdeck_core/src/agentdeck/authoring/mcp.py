"""MCP server declarations, read from a ``.mcp.json`` in the common ``{"mcpServers": ...}`` shape.

This module only *describes* servers: nothing is started, nothing is contacted, so a deck with
MCP servers configured still builds in CI with none of them reachable. The engine plugin starts
each server when the deck opens and stops it when the deck closes.

``${VAR}`` and ``${VAR:-default}`` in a server's fields are kept as written here and expanded by
:meth:`MCPServerSpec.expanded` when the server is started, so a secret read from the environment
never sits in the catalog's declarations.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, cast

from agentdeck.errors import ConfigError, NotFoundError

__all__ = ["MCP", "MCPServerSpec", "Transport"]

Transport = Literal["stdio", "sse", "streamable-http"]

_TRANSPORT_SPELLINGS: Mapping[str, Transport] = {
    "stdio": "stdio",
    "sse": "sse",
    "http": "streamable-http",
    "streamable-http": "streamable-http",
    "streamable_http": "streamable-http",
    "streamablehttp": "streamable-http",
}
_STDIO_FIELDS = ("command", "args", "env", "cwd")
_REMOTE_FIELDS = ("url", "headers")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


@dataclass(frozen=True, slots=True)
class MCPServerSpec:
    """One MCP server: how to reach it, as written in the configuration.

    ``stdio`` servers are a ``command`` (with ``args``, ``env`` added to the inherited
    environment, and a working directory ``cwd``); ``sse`` and ``streamable-http`` servers are a
    ``url`` with optional ``headers``.
    """

    name: str
    transport: Transport
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        if not self.name:
            raise ConfigError("an MCP server needs a non-empty name", setting="mcp")
        if self.transport not in ("stdio", "sse", "streamable-http"):
            raise _bad(self.name, "type", f"unknown transport {self.transport!r}")
        if self.transport == "stdio" and not self.command:
            raise _bad(self.name, "command", "a stdio server needs a command to start")
        if self.transport != "stdio" and not self.url:
            raise _bad(self.name, "url", f"an {self.transport} server needs a url")
        object.__setattr__(self, "args", tuple(self.args))
        object.__setattr__(self, "env", MappingProxyType(dict(self.env)))
        object.__setattr__(self, "headers", MappingProxyType(dict(self.headers)))

    @classmethod
    def from_config(cls, name: str, config: Any) -> MCPServerSpec:
        """Parse one entry of ``mcpServers``; a bad shape names the server and the field."""
        if not isinstance(config, Mapping):
            raise _bad(name, None, f"expected an object, got {type(config).__name__}")
        transport = _transport(name, config)
        stray = [
            key
            for key in (_REMOTE_FIELDS if transport == "stdio" else _STDIO_FIELDS)
            if config.get(key) not in (None, [], {})
        ]
        if stray:
            raise _bad(
                name,
                stray[0],
                f"'{stray[0]}' does not apply to a {transport} server "
                f"(a stdio server has {', '.join(_STDIO_FIELDS)}; a remote one has "
                f"{', '.join(_REMOTE_FIELDS)})",
            )
        if transport == "stdio":
            return cls(
                name=name,
                transport=transport,
                command=_string(name, config, "command", required=True),
                args=tuple(_strings(name, config, "args")),
                env=_string_map(name, config, "env"),
                cwd=_string(name, config, "cwd"),
            )
        url = _string(name, config, "url", required=True)
        if (
            url is not None
            and not _VARIABLE.match(url)
            and not url.startswith(("http://", "https://"))
        ):
            raise _bad(name, "url", f"expected an http(s) URL, got {url!r}")
        return cls(
            name=name,
            transport=transport,
            url=url,
            headers=_string_map(name, config, "headers"),
        )

    def expanded(self, environ: Mapping[str, str] | None = None) -> MCPServerSpec:
        """A copy with ``${VAR}``/``${VAR:-default}`` replaced from ``environ`` (``os.environ``).

        Called by the engine when it starts the server. A variable with no value and no default
        is a :class:`ConfigError` naming the server, the field and the variable.
        """
        values = os.environ if environ is None else environ

        def expand(text: str | None, where: str) -> str | None:
            if text is None:
                return None

            def substitute(match: re.Match[str]) -> str:
                variable, default = match[1], match[2]
                if variable in values:
                    return values[variable]
                if default is not None:
                    return default
                raise _bad(self.name, where, f"${{{variable}}} is not set and has no default")

            return _VARIABLE.sub(substitute, text)

        return replace(
            self,
            command=expand(self.command, "command"),
            args=tuple(cast(str, expand(a, "args")) for a in self.args),
            env={k: cast(str, expand(v, f"env.{k}")) for k, v in self.env.items()},
            cwd=expand(self.cwd, "cwd"),
            url=expand(self.url, "url"),
            headers={k: cast(str, expand(v, f"headers.{k}")) for k, v in self.headers.items()},
        )


class MCP(Mapping[str, MCPServerSpec]):
    """The MCP servers a catalog declares, by name.

    Built from specs (``MCP(servers=[...])`` or a mapping of name to spec) or read from a file
    (:meth:`from_file`). Declarations only: starting and stopping servers is the engine's.
    """

    def __init__(
        self,
        servers: Iterable[MCPServerSpec] | Mapping[str, MCPServerSpec] = (),
        *,
        source: Path | None = None,
    ) -> None:
        specs = list(servers.values()) if isinstance(servers, Mapping) else list(servers)
        found: dict[str, MCPServerSpec] = {}
        for spec in specs:
            if not isinstance(spec, MCPServerSpec):
                raise ConfigError(
                    f"MCP(servers=...) takes MCPServerSpec objects; got {type(spec).__name__}",
                    setting="mcp",
                )
            if spec.name in found:
                raise ConfigError(f"two MCP servers are named '{spec.name}'", setting="mcp")
            found[spec.name] = spec
        self._servers = found
        self.source = source
        """The file these were read from, when they were."""

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> MCP:
        """Read a ``.mcp.json``. A missing file, invalid JSON or a bad entry is a
        :class:`ConfigError` naming the file (and the server and field, for an entry)."""
        file = Path(path)
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"MCP configuration {file} does not exist", setting="mcp") from None
        except (OSError, ValueError) as bad:
            raise ConfigError(
                f"MCP configuration {file} cannot be read: {bad}", setting="mcp"
            ) from bad
        try:
            return cls.from_dict(data, source=file)
        except ConfigError as bad:
            raise ConfigError(f"{file}: {bad.message}", setting="mcp") from bad

    @classmethod
    def from_dict(cls, data: Any, *, source: Path | None = None) -> MCP:
        """Parse the ``{"mcpServers": {name: {...}}}`` shape (``"servers"`` is read too)."""
        if not isinstance(data, Mapping):
            raise ConfigError("MCP configuration must be a JSON object", setting="mcp")
        servers = data.get("mcpServers", data.get("servers"))
        if servers is None:
            raise ConfigError(
                "MCP configuration has no 'mcpServers' object; expected "
                '{"mcpServers": {"<name>": {"command": ...} or {"url": ...}}}',
                setting="mcp",
            )
        if not isinstance(servers, Mapping):
            raise ConfigError("'mcpServers' must be an object of name to server", setting="mcp")
        return cls(
            [MCPServerSpec.from_config(str(name), config) for name, config in servers.items()],
            source=source,
        )

    @classmethod
    def coerce(cls, value: Any) -> MCP:
        """Normalize what ``Deck(mcp=...)`` accepts: a path, an :class:`MCP`, or nothing."""
        if value is None:
            return cls()
        if isinstance(value, MCP):
            return value
        if isinstance(value, str | os.PathLike):
            return cls.from_file(value)
        raise ConfigError(
            f"mcp= takes a path to a .mcp.json or an MCP(...) object; got {type(value).__name__}",
            setting="mcp",
        )

    def __getitem__(self, name: str) -> MCPServerSpec:
        try:
            return self._servers[name]
        except KeyError:
            raise NotFoundError(
                f"no MCP server named '{name}'; the servers are: "
                f"{', '.join(self._servers) or 'none'}",
                what="mcp server",
                name=name,
                available=list(self._servers),
            ) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._servers)

    def __len__(self) -> int:
        return len(self._servers)

    def __contains__(self, name: object) -> bool:
        return name in self._servers

    def __repr__(self) -> str:
        return f"MCP({', '.join(self._servers)})"


# --------------------------------------------------------------------------- field readers


def _bad(server: str, field_name: str | None, problem: str) -> ConfigError:
    where = f"MCP server '{server}'" + (f", field '{field_name}'" if field_name else "")
    return ConfigError(f"{where}: {problem}", setting="mcp")


def _transport(name: str, config: Mapping[str, Any]) -> Transport:
    declared = config.get("type", config.get("transport"))
    if declared is None:
        # Claude-style files omit the type for a command; a bare url is taken as the current
        # remote transport, streamable HTTP (write "type": "sse" for an SSE server).
        if "command" in config:
            return "stdio"
        if "url" in config:
            return "streamable-http"
        raise _bad(name, "command", "needs a 'command' (stdio) or a 'url' (sse, http)")
    if not isinstance(declared, str) or declared.lower() not in _TRANSPORT_SPELLINGS:
        raise _bad(name, "type", f"unknown transport {declared!r}; use stdio, sse or http")
    return _TRANSPORT_SPELLINGS[declared.lower()]


def _string(
    server: str, config: Mapping[str, Any], key: str, *, required: bool = False
) -> str | None:
    value = config.get(key)
    if value is None:
        if required:
            raise _bad(server, key, "is required")
        return None
    if not isinstance(value, str) or (required and not value):
        raise _bad(server, key, f"expected a non-empty string, got {value!r}")
    return value


def _strings(server: str, config: Mapping[str, Any], key: str) -> list[str]:
    value = config.get(key) or []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise _bad(server, key, f"expected a list of strings, got {value!r}")
    return value


def _string_map(server: str, config: Mapping[str, Any], key: str) -> dict[str, str]:
    value = config.get(key) or {}
    if not isinstance(value, Mapping):
        raise _bad(server, key, f"expected an object of strings, got {type(value).__name__}")
    result: dict[str, str] = {}
    for item_key, item in value.items():
        if not isinstance(item, str):
            # The type, not the value: env and headers are where secrets live.
            raise _bad(server, f"{key}.{item_key}", f"expected a string, got {type(item).__name__}")
        result[str(item_key)] = item
    return result
