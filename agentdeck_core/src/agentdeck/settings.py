"""Layered settings: an environment variable wins over ``config.yaml``, which wins over defaults.

Settings belong to a deck, never to the process: a :class:`Settings` object holds the
environment mapping it was loaded from and the parsed ``config.yaml``, so two decks in one
process can point at different stores, and a test passes a plain ``dict`` instead of patching
``os.environ``. Each group of settings is a :class:`SettingsSection` (a pydantic-settings
``BaseSettings``) with a ``config.yaml`` key and an env-var prefix; the core owns
:class:`CoreSettings` and :class:`RuntimeSettings`, and each plugin registers its own sections
through the ``agentdeck_register_settings`` hook.

For every setting, the first of these that has a value is used:

1. a keyword passed in code (``Settings(overrides={"runtime": {...}})``),
2. the environment variable (``AGENTDECK_RUNTIME_LEASE_TTL_SECONDS``); an empty value counts as
   unset,
3. the key in the section's block of ``config.yaml`` (``runtime: {lease_ttl_seconds: 30}``),
4. the default.

A bad value is a :class:`~agentdeck.errors.ConfigError` raised when the section is loaded, whose
``setting`` is the environment variable's name and whose message says where the value came
from, what is wrong with it and what would be accepted.

Defaults that don't trap
------------------------
With nothing configured, every piece of state (the event log, control requests, leases) lives in
memory, in one consistent place: nothing claims to be durable while it isn't, and no part of the
state outlives another across a restart. One variable, ``AGENTDECK_STATE``, moves all of it
(``AGENTDECK_STATE=sqlite:///var/lib/agentdeck/state.db``); ``AGENTDECK_EVENTS`` and
``AGENTDECK_CONTROL`` exist only to split one part off on purpose.
"""

from __future__ import annotations

import os
import re
import types
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar, Union, get_args, get_origin

import annotated_types
import yaml
from pydantic import Field, SecretBytes, SecretStr, ValidationError, field_validator
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    InitSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
)

from agentdeck.errors import ConfigError

__all__ = [
    "CONFIG_ENV_VAR",
    "CORE_SECTIONS",
    "DEFAULT_CONFIG_FILE",
    "CoreSettings",
    "RuntimeSettings",
    "SectionDoc",
    "SettingRow",
    "Settings",
    "SettingsSection",
    "describe_sections",
]

CONFIG_ENV_VAR = "AGENTDECK_CONFIG"
"""The environment variable naming the ``config.yaml`` to read (not itself a setting)."""

DEFAULT_CONFIG_FILE = "config.yaml"
"""Read from the working directory when it exists and ``AGENTDECK_CONFIG`` is unset."""

_S = TypeVar("_S", bound="SettingsSection")

_SCHEME_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://")
_URL_ACCEPTED = (
    "a scheme-shaped URL such as memory://, sqlite:///path/to/state.db, redis://host:6379/0 "
    "or postgresql://user@host/db"
)


# =========================================================================== sections


class SettingsSection(BaseSettings):
    """Base of every settings section, the core's and each plugin's.

    A subclass declares ``section`` (its key in ``config.yaml``) and an ``env_prefix`` in its
    ``model_config``; each field is one setting, read from ``<env_prefix><FIELD NAME>``. A
    field's docstring is its description in the generated settings reference, so write it for
    the person setting the variable::

        class LangfuseSettings(SettingsSection):
            section: ClassVar[str] = "langfuse"
            model_config = SettingsConfigDict(env_prefix="AGENTDECK_LANGFUSE_")

            public_key: str = ""
            \"\"\"Langfuse public key. Tracing stays off unless both keys are set.\"\"\"

    Load sections through :class:`Settings` (``settings.section(LangfuseSettings)``), which
    supplies the deck's environment and ``config.yaml``. Constructing one directly reads keyword
    arguments and ``os.environ`` only, as plain pydantic-settings does.
    """

    section: ClassVar[str] = ""
    """Key of this section in ``config.yaml``; unique across the core and installed plugins."""

    model_config = SettingsConfigDict(
        env_ignore_empty=True,
        use_attribute_docstrings=True,
        extra="forbid",
        frozen=True,
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Direct construction: keywords, then the process environment. No dotenv, no secrets
        # dir: AgentDeck's file layer is config.yaml, supplied by Settings.
        return init_settings, env_settings

    @classmethod
    def env_prefix(cls) -> str:
        """The env-var prefix of this section's settings (``AGENTDECK_RUNTIME_``)."""
        return str(cls.model_config.get("env_prefix") or "")

    @classmethod
    def env_var(cls, field_name: str) -> str:
        """The environment variable that sets ``field_name``."""
        field = cls.model_fields[field_name]
        if isinstance(field.validation_alias, str):
            return field.validation_alias.upper()
        return f"{cls.env_prefix()}{field_name}".upper()

    @classmethod
    def env_vars(cls) -> dict[str, str]:
        """Every environment variable this section reads, mapped to its field name."""
        return {cls.env_var(name): name for name in cls.model_fields}


class CoreSettings(SettingsSection):
    """Where the deck's state lives: one root URL, and optional overrides for its parts."""

    section: ClassVar[str] = "agentdeck"
    model_config = SettingsConfigDict(env_prefix="AGENTDECK_")

    state: str = Field(default="memory://", json_schema_extra={"accepted": _URL_ACCEPTED})
    """The one location of all run state: the event log, control requests and leases, as a
    scheme-shaped URL (`memory://`, `sqlite:///path/to/state.db`, `redis://host`,
    `postgresql://dsn`); the scheme picks the plugin that stores it. The default `memory://`
    keeps everything in this process and loses it on exit. Set this one variable to move
    everything."""

    events: str | None = Field(default=None, json_schema_extra={"accepted": _URL_ACCEPTED})
    """Where the canonical run event log is written, when it must differ from `AGENTDECK_STATE`.
    Unset (the default) means the event log lives at `AGENTDECK_STATE`."""

    control: str | None = Field(default=None, json_schema_extra={"accepted": _URL_ACCEPTED})
    """Where pending pause/cancel requests and run leases live, when they must differ from
    `AGENTDECK_STATE`. Unset (the default) means they live at `AGENTDECK_STATE`. Only a backend
    shared across processes lets another process signal a run or free a killed worker's
    session by its lapsed lease."""

    session: str | None = Field(default=None, json_schema_extra={"accepted": _URL_ACCEPTED})
    """Where agent conversation memory lives (not the event log), as a scheme-shaped URL whose
    scheme picks the session plugin: `redis://host` keeps conversations in Redis, shared by every
    worker and surviving a restart. Unset means `local://`: one in-process session per session
    id, lost when the process exits."""

    @field_validator("state", "events", "control", "session")
    @classmethod
    def _scheme_shaped(cls, value: str | None) -> str | None:
        if value is not None and not _SCHEME_URL.match(value):
            raise ValueError("is not a scheme-shaped URL (no '<scheme>://' at its start)")
        return value


class RuntimeSettings(SettingsSection):
    """Timing knobs the runtime itself reads."""

    section: ClassVar[str] = "runtime"
    model_config = SettingsConfigDict(env_prefix="AGENTDECK_RUNTIME_")

    stale_run_after_seconds: float = Field(default=3600.0, gt=0)
    """Seconds a *running* run may go without recording an event before it counts as abandoned,
    so a new run may take over its session. Paused runs and runs waiting for an answer are never
    stale: they keep their session until resumed, answered or cancelled. Must be greater than
    0; set it above the longest a healthy turn can stay silent."""

    lease_ttl_seconds: float = Field(default=90.0, gt=0)
    """Seconds a run's lease stays alive without renewal. The worker playing a run renews it
    several times per TTL, so a worker killed outright frees its session within one TTL rather
    than one `stale_run_after_seconds`. Takes effect only with a lease backend shared across
    processes; with the in-memory default no lease is ever seen to lapse and staleness is the
    only backstop. Must be greater than 0; set it above the longest the event loop can be
    blocked at once."""

    sweep_interval_seconds: float = Field(default=30.0, gt=0)
    """Seconds between an open deck's sweeps for timers whose wake time has passed, which it
    then resumes; no cron or scheduler needed. The sweep runs for the deck's lifetime, starting
    when it opens and stopping when it closes. Must be greater than 0."""


CORE_SECTIONS: tuple[type[SettingsSection], ...] = (CoreSettings, RuntimeSettings)
"""The sections the core owns; plugin sections may not reuse their names or variables."""


# =========================================================================== the container


class Settings:
    """One deck's settings: an environment mapping, a parsed ``config.yaml``, and the sections
    loaded from them (each loaded on first use and cached).

    ``Settings()`` uses exactly what it is given (no environment at all by default);
    :meth:`load` is the usual entry point and reads the process environment and the config
    file. Instances are independent: nothing is shared through module globals.
    """

    def __init__(
        self,
        *,
        env: Mapping[str, str] | None = None,
        config: Mapping[str, Any] | None = None,
        config_file: Path | None = None,
        overrides: Mapping[str, Mapping[str, Any]] | None = None,
        sections: Iterable[type[SettingsSection]] = (),
    ) -> None:
        """
        :param env: the environment variables to read (copied; later changes are not seen).
        :param config: the parsed ``config.yaml``: section key -> mapping of field -> value.
        :param config_file: where ``config`` came from, for error messages.
        :param overrides: section key -> field values set in code; these win over everything.
        :param sections: extra (plugin) sections to know about, for :meth:`sections` and
            :func:`describe_sections`; :meth:`section` loads any section class regardless.
        """
        self.env: Mapping[str, str] = dict(env or {})
        self.config: Mapping[str, Any] = dict(config or {})
        self.config_file = config_file
        self._overrides: dict[str, dict[str, Any]] = {
            key: dict(values) for key, values in (overrides or {}).items()
        }
        self._known: dict[str, type[SettingsSection]] = {s.section: s for s in CORE_SECTIONS}
        self._loaded: dict[type[SettingsSection], SettingsSection] = {}
        self.register(*sections)

    @classmethod
    def load(
        cls,
        env: Mapping[str, str] | None = None,
        config_file: str | os.PathLike[str] | None = None,
        *,
        overrides: Mapping[str, Mapping[str, Any]] | None = None,
        sections: Iterable[type[SettingsSection]] = (),
    ) -> Settings:
        """Read settings from an environment mapping (default: ``os.environ``) and a config file.

        The file is ``config_file`` when given, else the path in ``AGENTDECK_CONFIG``, else
        ``./config.yaml`` if it exists, else none. A named file that is missing or unreadable,
        or whose YAML is not a mapping of sections, is a ``ConfigError``. The core sections are
        validated here, so a bad core value fails where the deck is built.
        """
        environ = dict(os.environ if env is None else env)
        path = _config_path(environ, config_file)
        config = _read_config(path) if path is not None else {}
        settings = cls(
            env=environ, config=config, config_file=path, overrides=overrides, sections=sections
        )
        for section in CORE_SECTIONS:
            settings.section(section)
        return settings

    # ----------------------------------------------------------------------- sections

    def register(self, *sections: type[SettingsSection]) -> None:
        """Make plugin sections known (idempotent); a clash with another section is an error."""
        for section in sections:
            _check_section_class(section)
            known = self._known.get(section.section)
            if known is section:
                continue
            if known is not None:
                raise ConfigError(
                    f"settings section '{section.section}' is declared by both "
                    f"{_qualname(known)} and {_qualname(section)}",
                    setting=section.section,
                )
            clash = _env_clash(section, self._known.values())
            if clash is not None:
                other, var = clash
                raise ConfigError(
                    f"{var} is read by both {_qualname(other)} and {_qualname(section)}",
                    setting=var,
                )
            self._known[section.section] = section

    def sections(self) -> list[type[SettingsSection]]:
        """The core sections, then every registered plugin section."""
        return list(self._known.values())

    def section(self, section: type[_S]) -> _S:
        """The loaded ``section`` (any :class:`SettingsSection` subclass), cached per object."""
        loaded = self._loaded.get(section)
        if loaded is None:
            loaded = _build_section(
                section,
                env=self.env,
                block=self._block(section),
                overrides=self._overrides.get(section.section, {}),
                config_file=self.config_file,
            )
            self._loaded[section] = loaded
        assert isinstance(loaded, section)
        return loaded

    def _block(self, section: type[SettingsSection]) -> Mapping[str, Any]:
        block = self.config.get(section.section)
        if block is None:
            return {}
        if not isinstance(block, Mapping):
            raise ConfigError(
                f"section '{section.section}' of {_where(self.config_file)} is a "
                f"{type(block).__name__}; it must be a mapping of setting names to values "
                f"(accepted keys: {', '.join(section.model_fields)})",
                setting=section.section,
                accepted=list(section.model_fields),
            )
        return block

    # ----------------------------------------------------------------------- core shortcuts

    @property
    def core(self) -> CoreSettings:
        return self.section(CoreSettings)

    @property
    def runtime(self) -> RuntimeSettings:
        return self.section(RuntimeSettings)

    @property
    def state_url(self) -> str:
        """The state root every part of the state derives from unless set on its own."""
        return self.core.state

    @property
    def events_url(self) -> str:
        """Where the event log lives: ``AGENTDECK_EVENTS`` if set, else ``AGENTDECK_STATE``."""
        return self.core.events or self.core.state

    @property
    def control_url(self) -> str:
        """Where control requests and leases live: ``AGENTDECK_CONTROL`` if set, else
        ``AGENTDECK_STATE``."""
        return self.core.control or self.core.state

    @property
    def events_setting(self) -> str:
        """The variable :attr:`events_url` came from, for error messages."""
        return CoreSettings.env_var("events" if self.core.events else "state")

    @property
    def control_setting(self) -> str:
        """The variable :attr:`control_url` came from, for error messages."""
        return CoreSettings.env_var("control" if self.core.control else "state")

    def __repr__(self) -> str:
        # Values stay out of the repr: URLs and keys may carry credentials.
        return f"Settings(config_file={self.config_file!r}, sections={list(self._known)!r})"


# =========================================================================== documentation


@dataclass(frozen=True, slots=True)
class SettingRow:
    """One setting as the reference page shows it."""

    env_var: str
    type: str
    default: str
    description: str


@dataclass(frozen=True, slots=True)
class SectionDoc:
    """One section of the settings reference."""

    name: str
    """The class name (``RuntimeSettings``)."""
    section: str
    """Its key in ``config.yaml``."""
    summary: str
    rows: tuple[SettingRow, ...]


def describe_sections(
    sections: Iterable[type[SettingsSection]] | None = None,
) -> list[SectionDoc]:
    """Describe sections for the settings reference: per setting its variable, type, default
    and description. ``sections`` defaults to the core's; pass ``settings.sections()`` (or the
    plugin host's) to include plugins."""
    docs = []
    for section in CORE_SECTIONS if sections is None else sections:
        rows = [
            SettingRow(
                env_var=section.env_var(name),
                type=_type_name(field.annotation),
                default=_default_text(field),
                description=_one_line(field.description or ""),
            )
            for name, field in section.model_fields.items()
        ]
        if section is CoreSettings:
            rows.append(
                SettingRow(
                    env_var=CONFIG_ENV_VAR,
                    type="path",
                    default=f"'./{DEFAULT_CONFIG_FILE}' if it exists",
                    description=(
                        "The YAML file whose sections (`agentdeck:`, `runtime:`, one per plugin) "
                        "hold settings under their field names; an environment variable wins "
                        "over the file. Unset: `config.yaml` in the working directory when "
                        "there is one, otherwise no file."
                    ),
                )
            )
        docs.append(
            SectionDoc(
                name=section.__name__,
                section=section.section,
                summary=_one_line((section.__doc__ or "").strip().split("\n\n")[0]),
                rows=tuple(rows),
            )
        )
    return docs


# =========================================================================== internals


class _MappingEnvSource(EnvSettingsSource):
    """pydantic-settings' environment source, reading a given mapping instead of os.environ."""

    def __init__(self, settings_cls: type[BaseSettings], env: Mapping[str, str]) -> None:
        self._env = env
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return {
            (key if self.case_sensitive else key.lower()): value
            for key, value in self._env.items()
            if not (self.env_ignore_empty and value == "")
        }


class _BlockSource(PydanticBaseSettingsSource):
    """One section's block of ``config.yaml``, keyed by field name."""

    def __init__(self, settings_cls: type[BaseSettings], block: Mapping[str, Any]) -> None:
        super().__init__(settings_cls)
        self._block = dict(block)

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return self._block.get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return dict(self._block)


def _build_section(
    section: type[_S],
    *,
    env: Mapping[str, str],
    block: Mapping[str, Any],
    overrides: Mapping[str, Any],
    config_file: Path | None,
) -> _S:
    _check_section_class(section)
    init_kwargs = dict(overrides)
    sources: tuple[PydanticBaseSettingsSource, ...] = (
        InitSettingsSource(section, init_kwargs=init_kwargs),
        _MappingEnvSource(section, env),
        _BlockSource(section, block),
    )
    try:
        return section(_build_sources=(sources, init_kwargs))
    except ValidationError as exc:
        raise _config_error(section, exc, env, block, overrides, config_file) from None
    except SettingsError as exc:
        raise _undecodable_value_error(section, exc) from None


_UNDECODABLE_FIELD = re.compile(r'error parsing value for field "(?P<field>[^"]+)"')


def _undecodable_value_error(section: type[SettingsSection], exc: SettingsError) -> ConfigError:
    """pydantic-settings decodes list/dict values from the environment as JSON *before*
    validation and raises its own error when that fails; say which variable and what shape."""
    match = _UNDECODABLE_FIELD.search(str(exc))
    field = match.group("field") if match else None
    if field is None or field not in section.model_fields:
        return ConfigError(f"settings section {section.section!r}: {exc}")
    variable = section.env_var(field)
    return ConfigError(
        f"{variable} could not be read: a list or mapping setting takes a JSON value"
        f' (for example ["a", "b"] or {{"key": "value"}})',
        setting=variable,
    )


def _config_error(
    section: type[SettingsSection],
    exc: ValidationError,
    env: Mapping[str, str],
    block: Mapping[str, Any],
    overrides: Mapping[str, Any],
    config_file: Path | None,
) -> ConfigError:
    problems: list[str] = []
    first_setting: str | None = None
    first_accepted: tuple[str, ...] | None = None
    env_lower = {key.lower(): key for key, value in env.items() if value != ""}
    aliases = {
        field.validation_alias: name
        for name, field in section.model_fields.items()
        if isinstance(field.validation_alias, str)
    }
    for error in exc.errors():
        key = str(error["loc"][0]) if error["loc"] else ""
        key = aliases.get(key, key)  # a field read through its alias reports the alias
        field = section.model_fields.get(key)
        if field is None:  # an unknown key, from config.yaml or overrides
            origin = "passed in code" if key in overrides else f"in {_where(config_file)}"
            setting = f"{section.section}.{key}"
            problems.append(
                f"'{key}' {origin} is not a setting of section '{section.section}'; "
                f"accepted: {', '.join(section.model_fields)}"
            )
            first_setting = first_setting or setting
            continue
        var = section.env_var(key)
        if key in overrides:
            origin = f"{section.__name__}({key}=...) passed in code"
        elif var.lower() in env_lower:
            origin = "the environment"
        elif key in block:
            origin = f"'{section.section}.{key}' in {_where(config_file)}"
        else:
            origin = f"the default of {var}"
        accepted_text, accepted_values = _accepted(field)
        shown = "" if _is_secret(field) else f"={_short_repr(error['input'])}"
        message = str(error["msg"]).removeprefix("Value error, ")
        problems.append(
            f"{var}{shown} (from {origin}): {message[:1].lower()}{message[1:]}; "
            f"accepted: {accepted_text}"
        )
        if first_setting is None:
            first_setting, first_accepted = var, accepted_values
    return ConfigError(
        f"invalid {section.__name__}: " + "; ".join(problems),
        setting=first_setting,
        accepted=first_accepted,
    )


def _accepted(field: FieldInfo) -> tuple[str, tuple[str, ...] | None]:
    """Say in words what a field accepts; list the values too when they are a closed set."""
    extra = field.json_schema_extra
    optional = False
    if isinstance(extra, dict) and isinstance(extra.get("accepted"), str):
        return str(extra["accepted"]), None
    annotation = field.annotation
    if get_origin(annotation) in (Union, types.UnionType):
        members = [arg for arg in get_args(annotation) if arg is not type(None)]
        optional = len(members) < len(get_args(annotation))
        annotation = members[0] if len(members) == 1 else annotation
    values: tuple[str, ...] | None = None
    if get_origin(annotation) is Literal:
        values = tuple(str(v) for v in get_args(annotation))
        text = "one of " + ", ".join(values)
    elif isinstance(annotation, type) and issubclass(annotation, Enum):
        values = tuple(str(member.value) for member in annotation)
        text = "one of " + ", ".join(values)
    elif annotation is bool:
        text = "true or false"
    elif annotation is int:
        text = "an integer"
    elif annotation is float:
        text = "a number"
    elif annotation in (str, SecretStr):
        text = "a string"
    else:
        text = f"a value of type {_type_name(annotation)}"
    bounds = []
    for constraint in field.metadata:
        if isinstance(constraint, annotated_types.Gt):
            bounds.append(f"greater than {constraint.gt}")
        elif isinstance(constraint, annotated_types.Ge):
            bounds.append(f"at least {constraint.ge}")
        elif isinstance(constraint, annotated_types.Lt):
            bounds.append(f"less than {constraint.lt}")
        elif isinstance(constraint, annotated_types.Le):
            bounds.append(f"at most {constraint.le}")
        elif isinstance(constraint, annotated_types.MinLen):
            bounds.append(f"at least {constraint.min_length} long")
        elif isinstance(constraint, annotated_types.MaxLen):
            bounds.append(f"at most {constraint.max_length} long")
    if bounds:
        text += " " + " and ".join(bounds)
    if optional:
        text += ", or unset"
    return text, values


def _is_secret(field: FieldInfo) -> bool:
    annotation = field.annotation
    candidates = get_args(annotation) or (annotation,)
    return any(c in (SecretStr, SecretBytes) for c in candidates)


def _type_name(annotation: Any) -> str:
    if annotation is None or annotation is type(None):
        return "None"
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        return " | ".join(_type_name(arg) for arg in get_args(annotation))
    if origin is Literal:
        return " | ".join(repr(arg) for arg in get_args(annotation))
    if isinstance(annotation, type) and origin is None:
        return annotation.__name__
    return str(annotation).replace("typing.", "")


def _default_text(field: FieldInfo) -> str:
    if field.is_required():
        return "required"
    if field.default_factory is not None:
        return "computed"
    return repr(field.default)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _short_repr(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _where(config_file: Path | None) -> str:
    return str(config_file) if config_file is not None else "the config"


def _qualname(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _check_section_class(section: object) -> None:
    if not (isinstance(section, type) and issubclass(section, SettingsSection)):
        raise ConfigError(f"{section!r} is not a SettingsSection subclass")
    if not section.section:
        raise ConfigError(
            f"{_qualname(section)} declares no `section` (its key in config.yaml)",
            setting=section.__name__,
        )


def _env_clash(
    section: type[SettingsSection], others: Iterable[type[SettingsSection]]
) -> tuple[type[SettingsSection], str] | None:
    mine = set(section.env_vars())
    for other in others:
        if other is section:
            continue
        shared = sorted(mine & set(other.env_vars()))
        if shared:
            return other, shared[0]
    return None


def _config_path(env: Mapping[str, str], config_file: str | os.PathLike[str] | None) -> Path | None:
    if config_file is not None:
        path, named_by = Path(config_file), "the config_file argument"
    elif env.get(CONFIG_ENV_VAR):
        path, named_by = Path(env[CONFIG_ENV_VAR]), CONFIG_ENV_VAR
    else:
        default = Path(DEFAULT_CONFIG_FILE)
        return default.resolve() if default.is_file() else None
    if not path.is_file():
        raise ConfigError(
            f"config file {str(path)!r} (named by {named_by}) does not exist or is not a file; "
            f"point {CONFIG_ENV_VAR} at a YAML file, or unset it to use "
            f"./{DEFAULT_CONFIG_FILE} when present",
            setting=CONFIG_ENV_VAR,
        )
    return path.resolve()


def _read_config(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(
            f"cannot read config file {str(path)!r}: {exc.strerror or exc}",
            setting=CONFIG_ENV_VAR,
        ) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(
            f"config file {str(path)!r} is not valid YAML: {exc}", setting=CONFIG_ENV_VAR
        ) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"config file {str(path)!r} holds a {type(data).__name__} at the top level; "
            "it must be a mapping of section names (agentdeck:, runtime:, ...) to settings",
            setting=CONFIG_ENV_VAR,
        )
    return {str(key): value for key, value in data.items()}
