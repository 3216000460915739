"""Which ``config.yaml`` a deck reads, and reading it: the file layer of the settings.

The file is the one named in code, else by ``AGENTDECK_CONFIG``, else ``./config.yaml`` when it
exists, else none. A named file that is missing or unreadable, or whose YAML is not a mapping of
sections, is a :class:`~agentdeck.errors.ConfigError` naming ``AGENTDECK_CONFIG``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentdeck.errors import ConfigError

__all__ = ["CONFIG_ENV_VAR", "DEFAULT_CONFIG_FILE", "find_config", "read_config"]

CONFIG_ENV_VAR = "AGENTDECK_CONFIG"
"""The environment variable naming the ``config.yaml`` to read (not itself a setting)."""

DEFAULT_CONFIG_FILE = "config.yaml"
"""Read from the working directory when it exists and ``AGENTDECK_CONFIG`` is unset."""


def find_config(env: Mapping[str, str], config_file: str | os.PathLike[str] | None) -> Path | None:
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


def read_config(path: Path) -> dict[str, Any]:
    import yaml  # only when there is a file: most processes configure through the environment

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
