"""Scheme-shaped URLs: how a setting's value picks the plugin that serves it.

Backends are chosen by the scheme of a URL (``memory://``, ``sqlite:///path``,
``redis://host``); every place that reads one -- the host's lookups, the stores, the checkpointers
-- splits and redacts it with these two functions, so error messages name schemes the same way
and never print a password.
"""

from __future__ import annotations

import re

from agentdeck.errors import ConfigError

__all__ = ["SCHEME_NAME", "redact_url", "scheme_of"]

SCHEME_NAME = re.compile(r"^[a-z][a-z0-9+.\-]*$")
"""What a scheme may look like (RFC 3986, lower-cased): also what a plugin may register."""


def scheme_of(url: str, *, setting: str | None = None) -> str:
    """The scheme of a scheme-shaped URL: everything before ``://``, lower-cased.

    Schemes are compared exactly, so ``redis``/``rediss`` and ``postgres``/``postgresql`` are
    different schemes (a plugin registers each it serves). Raises
    :class:`~agentdeck.errors.ConfigError` naming ``setting`` when ``url`` has no scheme.
    """
    scheme, separator, _ = url.partition("://")
    if not separator or not SCHEME_NAME.match(scheme.lower()):
        subject = f"{setting}={redact_url(url)!r}" if setting else repr(redact_url(url))
        raise ConfigError(
            f"{subject} is not a scheme-shaped URL; accepted: '<scheme>://...' such as "
            "memory://, sqlite:///path/to/state.db, redis://host:6379/0, postgresql://user@host/db",
            setting=setting,
        )
    return scheme.lower()


def redact_url(url: str) -> str:
    """``url`` with any password in its authority replaced by ``***``."""
    return re.sub(r"^([^:/?#]+://[^:/?#@]*):[^@/?#]*@", r"\1:***@", url)
