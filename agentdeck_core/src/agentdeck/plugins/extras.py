"""What a plugin calls before using an optional dependency it ships as an extra.

A plugin keeps heavy or platform-bound dependencies -- database drivers, a second checkpointer --
in extras (``agentdeck-stores[postgres]``), so installing it does not drag in every backend. The
feature that needs one then checks for it where the user chose it (a store URL's scheme, a
session URL), and a missing one fails with :class:`~agentdeck.errors.ExtraNotInstalledError`
naming the extra, not with the bare ``ModuleNotFoundError`` of a module the user never named.
"""

from __future__ import annotations

import importlib

from agentdeck.errors import ExtraNotInstalledError

__all__ = ["require_extra"]


def require_extra(
    *modules: str, feature: str, distribution: str, extra: str, setting: str | None = None
) -> None:
    """Import ``modules`` (what ``distribution[extra]`` installs), or raise naming the extra.

    Any ``ImportError`` counts as missing: a driver installed without its compiled part (psycopg
    without a libpq) fails to import the same way and is cured by the same install. Modules
    already imported cost a dictionary lookup.

    :param modules: the modules ``feature`` imports, e.g. ``"psycopg", "psycopg_pool"``.
    :param feature: what the user asked for, for the message (``"the postgresql:// store"``).
    :param distribution: the plugin's distribution name (``"agentdeck-stores"``).
    :param extra: the extra that installs ``modules`` (``"postgres"``).
    :param setting: the setting that chose ``feature``, when the caller knows it.
    :raises ExtraNotInstalledError: naming the first module that did not import.
    """
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise ExtraNotInstalledError(
                feature=feature,
                distribution=distribution,
                extra=extra,
                missing=module,
                setting=setting,
            ) from exc
