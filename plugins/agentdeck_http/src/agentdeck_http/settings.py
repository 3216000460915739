"""The ``http`` settings section: how a deployment configures ``Native`` without writing code.

``Native.http(...)`` takes live objects (a key mapping, a callable); a deployment has only the
environment and ``config.yaml``. This section carries the same options as plain values
(``AGENTDECK_HTTP_*``) and turns them into those objects for :meth:`Native.from_settings
<agentdeck_http.binding.Native.from_settings>`, which ``agentdeck serve`` uses:

* **keys** come inline (``AGENTDECK_HTTP_API_KEYS``, a secret never shown in errors or reprs) or,
  better, from a JSON file (``AGENTDECK_HTTP_API_KEYS_FILE``) so they stay out of the process
  environment -- a mounted secret, readable by the service only. Setting both is refused rather
  than silently picking one.
* **the context factory** is an import string (``package.module:callable``), imported when the
  binding is built, so a typo fails at startup, not at the first request.

Every value is checked where it enters; a bad one is a ``ConfigError`` naming its variable.
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import SettingsConfigDict

from agentdeck.errors import ConfigError
from agentdeck.settings import SettingsSection
from agentdeck_http.binding import (
    ApiKeys,
    ContextFactory,
    KindFilter,
    check_api_keys,
    check_mount_path,
    check_origins,
)

__all__ = ["HttpSettings", "import_context_factory", "read_api_keys"]

_IMPORT_STRING = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")

_KEYS_ACCEPTED = (
    'a JSON object {"<key>": "<namespace>" | null | ["<namespace>", null, ...]}, '
    "null standing for the default namespace"
)
_KINDS_ACCEPTED = (
    'event kinds as a JSON list (["run.*", "text.delta"]) or separated by commas '
    "(run.*,text.delta); 'family.*' names a family"
)
_ORIGINS_ACCEPTED = (
    'origins as a JSON list (["https://app.example.com"]) or separated by commas; '
    "scheme, host and optional port, no path"
)


class HttpSettings(SettingsSection):
    """The native HTTP binding as `agentdeck serve` and `Native.from_settings()` build it:
    API keys, the context factory, the event kinds streams send, and request limits. Code that
    builds `Native.http(...)` itself does not read these."""

    section: ClassVar[str] = "http"
    model_config = SettingsConfigDict(env_prefix="AGENTDECK_HTTP_")

    api_keys: SecretStr = Field(
        default=SecretStr(""), json_schema_extra={"accepted": _KEYS_ACCEPTED}
    )
    """API keys and the namespaces each may touch, as a JSON object: `{"<key>": ["acme"],
    "<ops key>": ["acme", null]}` (`null` is the default namespace; a request naming no namespace
    uses the key's first). When keys are set, every route but `/health` and the OpenAPI document
    needs `Authorization: Bearer <key>` or `X-API-Key: <key>`. Prefer
    `AGENTDECK_HTTP_API_KEYS_FILE`, which keeps keys out of the process environment; setting
    both is refused. Empty (and no file): no keys, every request is served."""

    api_keys_file: Path | None = None
    """Path to a JSON file holding the API keys, in the shape `AGENTDECK_HTTP_API_KEYS` takes
    (a mounted secret, readable by the service only). Read once when the binding is built; a
    missing file or one that is not such a JSON object stops the server from starting."""

    context_factory: str | None = Field(
        default=None,
        json_schema_extra={"accepted": "an import string 'package.module:callable'"},
    )
    """Import string `package.module:callable` of the context factory: called with a
    `ServedCall` (sync or async) for every request that starts or continues a run, its value is
    the run's context. Imported when the binding is built, from the working directory or an
    installed package, as uvicorn imports an app. Unset: runs get no context."""

    public_kinds: list[str] | None = Field(
        default=None, json_schema_extra={"accepted": _KINDS_ACCEPTED}
    )
    """The event kinds event streams send, as a JSON list or separated by commas
    (`run.*,text.delta,message.completed`; `family.*` for a family). Unset: every kind. Leave
    `tool.call.completed` out of a public surface: its preview is the tool's output verbatim."""

    max_body_bytes: int = Field(default=1_000_000, gt=0)
    """Largest request body accepted, in bytes; larger ones are refused with 413 before they are
    read. Align the proxy's own limit."""

    allowed_origins: list[str] | None = Field(
        default=None, json_schema_extra={"accepted": _ORIGINS_ACCEPTED}
    )
    """Browser origins allowed to call the endpoint (`https://app.example.com`), as a JSON list
    or separated by commas; other origins are refused with 403, listed ones get CORS headers.
    Not authentication: `Origin` is set by browsers and forged by anyone else. Unset: no check."""

    path: str = ""
    """Prefix of every route (`/api` serves `POST /api/runs`). Empty: the root."""

    console: bool = True
    """Serve the operator console at `<path>/ui/`: runs, a run's timeline, the inbox of open
    questions and approvals, in a browser, with the same API keys (a key logs in once and the
    browser keeps an HttpOnly session cookie). `false` serves the API alone."""

    heartbeat_seconds: float = Field(default=15.0, gt=0, allow_inf_nan=False)
    """Seconds between the comment lines an idle event stream sends, so proxies keep it open.
    Must be greater than 0; keep it below the proxy's idle timeout."""

    # ------------------------------------------------------------------------- validation

    @field_validator("api_keys", mode="before")
    @classmethod
    def _mapping_as_json(cls, value: Any) -> Any:
        # config.yaml may hold the mapping itself; the environment holds its JSON text.
        return json.dumps(value) if isinstance(value, Mapping) else value

    @field_validator("api_keys")
    @classmethod
    def _keys_shape(cls, value: SecretStr) -> SecretStr:
        if value.get_secret_value():
            _keys_from_json(value.get_secret_value(), what="the value")
        return value

    @field_validator("public_kinds", "allowed_origins", mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:
        # A list setting read from the environment arrives as JSON when it parses as JSON and
        # as the raw text otherwise; the raw text is a comma-separated list.
        if isinstance(value, str):
            return [item.strip() for item in value.split(",") if item.strip()]
        return value

    @field_validator("public_kinds")
    @classmethod
    def _kinds(cls, value: list[str] | None) -> list[str] | None:
        if value is not None:
            _reraise_as_value_error(KindFilter.of, value)
        return value

    @field_validator("allowed_origins")
    @classmethod
    def _origins(cls, value: list[str] | None) -> list[str] | None:
        if value is not None:
            _reraise_as_value_error(check_origins, value)
        return value

    @field_validator("path")
    @classmethod
    def _path(cls, value: str) -> str:
        return str(_reraise_as_value_error(check_mount_path, value))

    @field_validator("context_factory")
    @classmethod
    def _import_string(cls, value: str | None) -> str | None:
        if value is not None and not _IMPORT_STRING.match(value):
            raise ValueError(
                "is not an import string; write 'package.module:callable' (dotted module, a "
                "colon, the attribute)"
            )
        return value

    # ------------------------------------------------------------------------- live values

    def resolved_api_keys(self) -> ApiKeys | None:
        """The key mapping from ``api_keys`` or ``api_keys_file`` (read now), or ``None``."""
        inline = self.api_keys.get_secret_value()
        if inline and self.api_keys_file is not None:
            raise ConfigError(
                f"{self.env_var('api_keys')} and {self.env_var('api_keys_file')} are both set; "
                "keys come from one place, so unset one (the file keeps them out of the "
                "process environment)",
                setting=self.env_var("api_keys_file"),
            )
        if self.api_keys_file is not None:
            return read_api_keys(self.api_keys_file, setting=self.env_var("api_keys_file"))
        if inline:
            return _keys_from_json(inline, what="the value")
        return None

    def resolved_context_factory(self) -> ContextFactory | None:
        """The callable ``context_factory`` names, imported now, or ``None``."""
        if self.context_factory is None:
            return None
        return import_context_factory(self.context_factory, setting=self.env_var("context_factory"))


# =========================================================================== resolution


def read_api_keys(path: Path, *, setting: str) -> ApiKeys:
    """The key mapping held by the JSON file at ``path``; ``setting`` is blamed for any fault.

    The file's content is never quoted in an error: it holds secrets.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        where = "" if path.is_absolute() else f" (relative to {Path.cwd()})"
        raise ConfigError(
            f"{setting}: no file at '{path}'{where}; point it at a JSON file of API keys",
            setting=setting,
        ) from None
    except (OSError, UnicodeDecodeError) as unreadable:
        reason = getattr(unreadable, "strerror", None) or type(unreadable).__name__
        raise ConfigError(f"{setting}: cannot read '{path}': {reason}", setting=setting) from None
    try:
        return _keys_from_json(text, what=f"'{path}'")
    except ValueError as invalid:
        raise ConfigError(
            f"{setting}: {invalid}; the file holds {_KEYS_ACCEPTED}", setting=setting
        ) from None


def import_context_factory(reference: str, *, setting: str) -> ContextFactory:
    """Import ``package.module:callable`` and check it can be called with one ``ServedCall``.

    Each way it can fail -- the module is missing, raises while importing, lacks the attribute,
    or holds something that cannot take one argument -- is a ``ConfigError`` blaming
    ``setting``, raised here rather than at the first request.
    """
    if not _IMPORT_STRING.match(reference):
        raise ConfigError(
            f"{setting}={reference!r} is not an import string; write 'package.module:callable'",
            setting=setting,
        )
    module_name, _, attribute = reference.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as missing:
        if missing.name is not None and module_name.startswith(missing.name):
            raise ConfigError(
                f"{setting}={reference!r}: no module named '{missing.name}' in the working "
                f"directory ({Path.cwd()}) or the installed packages",
                setting=setting,
            ) from None
        raise ConfigError(
            f"{setting}={reference!r}: importing '{module_name}' failed: {missing}",
            setting=setting,
        ) from missing
    except Exception as broken:
        raise ConfigError(
            f"{setting}={reference!r}: importing '{module_name}' raised "
            f"{type(broken).__name__}: {broken}",
            setting=setting,
        ) from broken
    found: object = module
    for part in attribute.split("."):
        if not hasattr(found, part):
            raise ConfigError(
                f"{setting}={reference!r}: '{module_name}' has no attribute '{attribute}'",
                setting=setting,
            )
        found = getattr(found, part)
    if not callable(found):
        raise ConfigError(
            f"{setting}={reference!r} is a {type(found).__name__}, not a callable "
            "(call) -> context",
            setting=setting,
        )
    _check_takes_one_argument(found, reference, setting)
    return found


def _check_takes_one_argument(factory: Callable[..., Any], reference: str, setting: str) -> None:
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # a builtin without a signature: let the call decide
        return
    try:
        signature.bind(None)
    except TypeError:
        raise ConfigError(
            f"{setting}={reference!r} cannot be called with one argument (the ServedCall); "
            f"its signature is {signature}",
            setting=setting,
        ) from None


def _keys_from_json(text: str, *, what: str) -> ApiKeys:
    """Parse and check a key mapping; raises ``ValueError`` that never quotes the text."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as invalid:
        raise ValueError(
            f"{what} is not JSON (line {invalid.lineno}, column {invalid.colno})"
        ) from None
    if not isinstance(data, dict):
        raise ValueError(f"{what} holds a JSON {_json_type(data)}, not an object")
    if not data:
        raise ValueError(
            f"{what} holds no keys, which would refuse every request; unset it to serve "
            "without keys"
        )
    try:
        keys = check_api_keys(data)
    except ConfigError as invalid:
        raise ValueError(f"in {what}, {str(invalid).removeprefix('api_keys: ')}") from None
    assert keys is not None  # only None for None
    return keys


def _json_type(value: object) -> str:
    names = {list: "array", str: "string", int: "number", float: "number", bool: "boolean"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def _reraise_as_value_error(check: Callable[[Any], Any], value: Any) -> Any:
    """Run one of the binding's checks; its ``ConfigError`` becomes the ``ValueError`` pydantic
    reports under the variable's name and the value's origin."""
    try:
        return check(value)
    except ConfigError as invalid:
        raise ValueError(str(invalid)) from None
