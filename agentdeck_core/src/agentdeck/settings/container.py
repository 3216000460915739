"""The :class:`Settings` container: one deck's layers, and the sections loaded from them.

A :class:`Settings` object holds the environment mapping it was loaded from, the parsed
``config.yaml`` and the values set in code, knows the core's sections and the plugins'
(refusing two that claim one name or one variable), and loads each section on first use
(:func:`~agentdeck.settings.section.load_section`), caching it. Nothing is shared through module
globals, so two decks in one process can point at different stores.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from agentdeck.errors import ConfigError
from agentdeck.settings.config_file import find_config, read_config
from agentdeck.settings.core import (
    CORE_SECTIONS,
    DEFAULT_STATE_FILE,
    PROJECT_DIRECTORY,
    CoreSettings,
    RuntimeSettings,
)
from agentdeck.settings.section import (
    SettingsSection,
    check_section_class,
    class_path,
    file_label,
    load_section,
)

__all__ = ["Settings"]

_S = TypeVar("_S", bound=SettingsSection)


class Settings:
    """One deck's settings: an environment mapping, a parsed ``config.yaml``, and the sections
    loaded from them (each loaded on first use and cached).

    ``Settings()`` uses exactly what it is given (no environment at all by default);
    :meth:`load` is the usual entry point and reads the process environment and the config
    file. Instances are independent: nothing is shared through module globals.

    With ``AGENTDECK_STATE`` unset the state lives in ``state.db`` of the project directory
    (``project``; :meth:`for_project` sets it for ``Deck.from_project``), else of
    ``.agentdeck/`` in the working directory at construction: a default that survives a
    restart, so a parked approval is never lost by default.
    """

    def __init__(
        self,
        *,
        env: Mapping[str, str] | None = None,
        config: Mapping[str, Any] | None = None,
        config_file: Path | None = None,
        overrides: Mapping[str, Mapping[str, Any]] | None = None,
        sections: Iterable[type[SettingsSection]] = (),
        project: str | os.PathLike[str] | None = None,
    ) -> None:
        """
        :param env: the environment variables to read (copied; later changes are not seen).
        :param config: the parsed ``config.yaml``: section key -> mapping of field -> value.
        :param config_file: where ``config`` came from, for error messages.
        :param overrides: section key -> field values set in code; these win over everything.
        :param sections: extra (plugin) sections to know about, for :meth:`sections` and
            :func:`describe_sections`; :meth:`section` loads any section class regardless.
        :param project: the project directory whose ``state.db`` is the default state location
            (``None``: ``.agentdeck/`` of the working directory, as it is now).
        """
        for argument, given in (("env", env), ("config", config), ("overrides", overrides)):
            if given is not None and not isinstance(given, Mapping):
                raise ConfigError(
                    f"Settings({argument}=) takes a mapping, not {type(given).__name__}",
                    setting=argument,
                )
        self.env: Mapping[str, str] = dict(env or {})
        self.config: Mapping[str, Any] = dict(config or {})
        self.config_file = config_file
        self._overrides: dict[str, dict[str, Any]] = {
            key: dict(values) for key, values in (overrides or {}).items()
        }
        self._known: dict[str, type[SettingsSection]] = {s.section: s for s in CORE_SECTIONS}
        self._loaded: dict[type[SettingsSection], SettingsSection] = {}
        self.project: Path | None = Path(project).expanduser().resolve() if project else None
        # Resolved now: a later chdir must not move where this deck's state is.
        self._state_home = self.project or Path.cwd() / PROJECT_DIRECTORY
        self.register(*sections)

    @classmethod
    def load(
        cls,
        env: Mapping[str, str] | None = None,
        config_file: str | os.PathLike[str] | None = None,
        *,
        overrides: Mapping[str, Mapping[str, Any]] | None = None,
        sections: Iterable[type[SettingsSection]] = (),
        project: str | os.PathLike[str] | None = None,
    ) -> Settings:
        """Read settings from an environment mapping (default: ``os.environ``) and a config file.

        The file is ``config_file`` when given, else the path in ``AGENTDECK_CONFIG``, else
        ``./config.yaml`` if it exists, else none. A named file that is missing or unreadable,
        or whose YAML is not a mapping of sections, is a ``ConfigError``. The core sections are
        validated here, so a bad core value fails where the deck is built.
        """
        environ = dict(os.environ if env is None else env)
        path = find_config(environ, config_file)
        config = read_config(path) if path is not None else {}
        settings = cls(
            env=environ,
            config=config,
            config_file=path,
            overrides=overrides,
            sections=sections,
            project=project,
        )
        for section in CORE_SECTIONS:
            settings.section(section)
        return settings

    # ----------------------------------------------------------------------- sections

    def for_project(self, project: str | os.PathLike[str]) -> Settings:
        """These settings for a deck of the project directory ``project``: the same layers, with
        the default state in that directory. Settings that already name a project are returned
        as they are; others are copied, so one object may serve decks of several projects."""
        if self.project is not None:
            return self
        return Settings(
            env=self.env,
            config=self.config,
            config_file=self.config_file,
            overrides=self._overrides,
            sections=self.sections(),
            project=project,
        )

    def register(self, *sections: type[SettingsSection]) -> None:
        """Make plugin sections known (idempotent); a clash with another section is an error."""
        for section in sections:
            check_section_class(section)
            known = self._known.get(section.section)
            if known is section:
                continue
            if known is not None:
                raise ConfigError(
                    f"settings section '{section.section}' is declared by both "
                    f"{class_path(known)} and {class_path(section)}",
                    setting=section.section,
                )
            clash = _env_clash(section, self._known.values())
            if clash is not None:
                other, var = clash
                raise ConfigError(
                    f"{var} is read by both {class_path(other)} and {class_path(section)}",
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
            loaded = load_section(
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
                f"section '{section.section}' of {file_label(self.config_file)} is a "
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
    def state_is_default(self) -> bool:
        """Whether ``AGENTDECK_STATE`` was left unset (in code, the environment and the file),
        so the state is the default file :attr:`default_state_url`."""
        return "state" not in self.core.model_fields_set

    @property
    def default_state_path(self) -> Path:
        """The file of :attr:`default_state_url` (it may not exist yet)."""
        return self._state_home / DEFAULT_STATE_FILE

    @property
    def default_state_url(self) -> str:
        """Where the state lives when nothing says otherwise: ``state.db`` of the project
        directory, as an absolute ``sqlite:`` URL (the file is created on first use)."""
        return f"sqlite:///{self.default_state_path}"

    def is_default_state(self, url: str) -> bool:
        """Whether ``url`` is the default state file, used because nothing named another."""
        return self.state_is_default and url == self.default_state_url

    @property
    def state_url(self) -> str:
        """The state root every part of the state derives from unless set on its own."""
        return self.default_state_url if self.state_is_default else self.core.state

    @property
    def events_url(self) -> str:
        """Where the event log lives: ``AGENTDECK_EVENTS`` if set, else ``AGENTDECK_STATE``."""
        return self.core.events or self.state_url

    @property
    def control_url(self) -> str:
        """Where control requests and leases live: ``AGENTDECK_CONTROL`` if set, else
        ``AGENTDECK_STATE``."""
        return self.core.control or self.state_url

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
