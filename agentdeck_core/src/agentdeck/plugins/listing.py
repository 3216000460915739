"""What ``agentdeck plugins`` lists: each loaded plugin with what it provides, the broken ones
with the reason, and the ones the allow/deny lists kept out.

Plain frozen records with a ``to_dict()`` for ``--json``, built by the host from its loading
outcome and its registries; nothing here loads or registers anything.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from agentdeck.plugins.registry import Registration

__all__ = ["BrokenPlugin", "DisabledPlugin", "PluginInfo", "provided_by"]


@dataclass(frozen=True, slots=True)
class PluginInfo:
    """A loaded plugin and what it provides, per registry (``{"event_stores": ["memory"]}``)."""

    name: str
    distribution: str | None
    version: str | None
    module: str
    provides: dict[str, list[str]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "distribution": self.distribution,
            "version": self.version,
            "module": self.module,
            "provides": {key: list(names) for key, names in self.provides.items()},
        }


@dataclass(frozen=True, slots=True)
class BrokenPlugin:
    """A plugin that was skipped because it failed; ``reason`` says how."""

    name: str
    distribution: str | None
    version: str | None
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "distribution": self.distribution,
            "version": self.version,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class DisabledPlugin:
    """An installed plugin not loaded because the allow/deny lists exclude it."""

    name: str
    distribution: str | None
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "distribution": self.distribution, "reason": self.reason}


def provided_by(
    plugin: str, registries: Iterable[tuple[str, Iterable[Registration]]]
) -> dict[str, list[str]]:
    """What ``plugin`` registered, per registry key, names sorted; registries it left empty are
    omitted (``{"event_stores": ["memory"], "settings": ["memory"]}``)."""
    provides: dict[str, list[str]] = {}
    for key, registrations in registries:
        names = sorted(r.name for r in registrations if r.plugin == plugin)
        if names:
            provides[key] = names
    return provides
