"""One warning when a store's server becomes unreachable, one line when it is back.

A server outage makes every call of every port fail until the server returns; logging each
failure (or each reconnect attempt of a pool) buries the one fact an operator needs under
dozens of lines. An :class:`Outage` is kept per backend and redacted URL for the whole process,
so the three ports of one store (events, control, leases) share it: the first failure of an
outage logs a warning, later failures log nothing until a call succeeds again, which logs one
"back" line naming how long the outage lasted.
"""

from __future__ import annotations

import logging
import threading
import time

from agentdeck.plugins.host import redact_url

__all__ = ["Outage", "outage_for"]

_log = logging.getLogger("agentdeck.stores.outage")


class Outage:
    """The reachability of one server as this process last saw it."""

    def __init__(self, backend: str, url: str) -> None:
        self.backend = backend
        self.shown = redact_url(url)
        self._down_since: float | None = None
        self._up_since = float("-inf")
        """When the last outage ended (``time.monotonic()``)."""
        self._lock = threading.Lock()

    @property
    def down(self) -> bool:
        return self._down_since is not None

    def failed(self, cause: BaseException, started: float) -> None:
        """A call that began at ``started`` (``time.monotonic()``) could not reach the server:
        warn if this starts an outage.

        Only a call begun after the last outage ended can start a new one: one that was
        already waiting (for a pooled connection, say) when the server came back may still
        fail afterwards, and is no sign that the server went away again.
        """
        with self._lock:
            if self._down_since is not None or started < self._up_since:
                return
            self._down_since = time.monotonic()
        _log.warning(
            "%s at %s is unreachable (%s: %s); calls fail with StoreError until it is back",
            self.backend,
            self.shown,
            type(cause).__name__,
            str(cause).strip().splitlines()[0] if str(cause).strip() else "",
        )

    def reached(self, started: float) -> None:
        """A call that began at ``started`` (``time.monotonic()``) reached the server: say so
        once if an outage was in progress.

        Only a call begun after the outage did can end it: one already in flight when the
        server died may still return after the first failure was seen, and is no sign that
        the server is back.
        """
        if self._down_since is None:  # the common case: no lock, no work
            return
        with self._lock:
            since = self._down_since
            if since is None or started < since:
                return
            self._down_since = None
            self._up_since = time.monotonic()
        if since is not None:
            _log.warning(
                "%s at %s is back after %.1f s", self.backend, self.shown, time.monotonic() - since
            )


_OUTAGES: dict[tuple[str, str], Outage] = {}
_OUTAGES_LOCK = threading.Lock()


def outage_for(backend: str, url: str) -> Outage:
    """The process-wide :class:`Outage` of ``backend`` at ``url`` (shared by its ports)."""
    key = (backend, redact_url(url))
    with _OUTAGES_LOCK:
        found = _OUTAGES.get(key)
        if found is None:
            found = _OUTAGES[key] = Outage(backend, url)
        return found
