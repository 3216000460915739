"""A settings section, and how one is loaded from the layers: code > environment > file > default.

:class:`SettingsSection` is the base of every section, the core's and each plugin's: a
pydantic-settings ``BaseSettings`` with a ``config.yaml`` key and an env-var prefix.
:func:`load_section` builds one from the layers a :class:`~agentdeck.settings.Settings` holds —
values passed in code, then the environment mapping, then the section's block of
``config.yaml``, then the defaults — and turns pydantic's validation error into a
:class:`~agentdeck.errors.ConfigError` that names the variable, where its value came from, what
is wrong with it and what would be accepted.
"""

from __future__ import annotations

import re
import types
import weakref
from collections.abc import Mapping
from enum import Enum
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar, Union, get_args, get_origin

import annotated_types
from pydantic import SecretBytes, SecretStr, ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    InitSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
)

from agentdeck.errors import ConfigError, did_you_mean

__all__ = [
    "SettingsSection",
    "check_section_class",
    "class_path",
    "defined_in",
    "file_label",
    "load_section",
    "type_name",
]

_S = TypeVar("_S", bound="SettingsSection")

_DEFINED_IN: weakref.WeakKeyDictionary[type, str] = weakref.WeakKeyDictionary()
"""The module each section class was defined in (its ``__module__`` may be changed after)."""


def defined_in(section: type) -> str:
    """The name of the module whose source declares ``section``."""
    return _DEFINED_IN.get(section, section.__module__)


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

    # A field's docstring is read from the source only when the reference asks for it
    # (:func:`~agentdeck.settings.reference.field_description`): pydantic's
    # ``use_attribute_docstrings`` would read and parse every section's source file whenever a
    # section class is defined, which is most of what loading the plugins costs.
    model_config = SettingsConfigDict(
        env_ignore_empty=True,
        extra="forbid",
        frozen=True,
    )

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _DEFINED_IN[cls] = cls.__module__  # before a package re-exports it under its own name

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


def load_section(
    section: type[_S],
    *,
    env: Mapping[str, str],
    block: Mapping[str, Any],
    overrides: Mapping[str, Any],
    config_file: Path | None,
) -> _S:
    """Build ``section`` from the layers, first wins: ``overrides`` (set in code), ``env``,
    ``block`` (its part of the file at ``config_file``), then the defaults.

    :raises ConfigError: for a bad value, naming its variable and where it came from.
    """
    check_section_class(section)
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
            origin = "passed in code" if key in overrides else f"in {file_label(config_file)}"
            setting = f"{section.section}.{key}"
            problems.append(
                f"'{key}' {origin} is not a setting of section '{section.section}'; "
                f"accepted: {', '.join(section.model_fields)}"
                f"{did_you_mean(key, list(section.model_fields))}"
            )
            first_setting = first_setting or setting
            continue
        var = section.env_var(key)
        if key in overrides:
            origin = f"{section.__name__}({key}=...) passed in code"
        elif var.lower() in env_lower:
            origin = "the environment"
        elif key in block:
            origin = f"'{section.section}.{key}' in {file_label(config_file)}"
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
        text = f"a value of type {type_name(annotation)}"
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


def type_name(annotation: Any) -> str:
    """A field's type as the reference and the error messages write it (``float | None``)."""
    if annotation is None or annotation is type(None):
        return "None"
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        return " | ".join(type_name(arg) for arg in get_args(annotation))
    if origin is Literal:
        return " | ".join(repr(arg) for arg in get_args(annotation))
    if isinstance(annotation, type) and origin is None:
        return annotation.__name__
    return str(annotation).replace("typing.", "")


def _short_repr(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def file_label(config_file: Path | None) -> str:
    """How an error names the config file a value came from."""
    return str(config_file) if config_file is not None else "the config"


def class_path(cls: type) -> str:
    """How an error names a section class: its module and qualified name."""
    return f"{cls.__module__}.{cls.__qualname__}"


def check_section_class(section: object) -> None:
    """Refuse what is not a :class:`SettingsSection` subclass declaring its ``section`` key."""
    if not (isinstance(section, type) and issubclass(section, SettingsSection)):
        raise ConfigError(f"{section!r} is not a SettingsSection subclass")
    if not section.section:
        raise ConfigError(
            f"{class_path(section)} declares no `section` (its key in config.yaml)",
            setting=section.__name__,
        )
