"""A factory named by where it lives, imported the first time it is used.

Loading plugins must stay cheap: every process that reads a store or prints ``--help`` loads
them all, and most of what they register (an OpenTelemetry exporter, an HTTP server, a terminal
chat) is never built there. A plugin registers ``Deferred("package.module:Factory")`` instead of
importing ``Factory`` at the top of its registration module; the host calls it like the factory
itself, and the module is imported on that first call (or when a caller reads one of the
factory's attributes, such as an observer's ``from_settings``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce
from importlib import import_module
from typing import Any

from agentdeck.errors import ConfigError

__all__ = ["Deferred"]


@dataclass(frozen=True, slots=True)
class Deferred:
    """A factory given as ``"module:attribute"`` (``attribute`` may be dotted, as in
    ``"agentdeck.memory.store:MemoryEventStore.from_request"``), imported on first use.

    Calling it calls the target; reading a public attribute reads the target's. A target that
    cannot be imported or found is a :class:`~agentdeck.errors.ConfigError` naming it.
    """

    target: str

    def __post_init__(self) -> None:
        module, _, attribute = self.target.partition(":")
        if not module or not attribute:
            raise ConfigError(
                f"Deferred({self.target!r}) needs 'package.module:attribute'",
                setting=None,
            )

    def load(self) -> Any:
        """The target itself (the module is imported once, by Python's module cache)."""
        module_name, _, attribute = self.target.partition(":")
        try:
            module = import_module(module_name)
            return reduce(getattr, attribute.split("."), module)
        except (ImportError, AttributeError) as exc:
            raise ConfigError(
                f"the deferred factory {self.target!r} cannot be loaded: "
                f"{type(exc).__name__}: {exc}",
                setting=None,
            ) from exc

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.load()(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        # Only reached for names the dataclass does not define; private and special names are
        # not forwarded, so copying, pickling and introspection see this object, not the target.
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.load(), name)
