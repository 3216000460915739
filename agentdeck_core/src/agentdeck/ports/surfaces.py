"""The surface ports: what reads a deck's runs from outside -- observers and bindings.

An :class:`Observer` is a read-only tap on the event stream (telemetry, audit, cost); a
:class:`Binding` serves a deck over one external protocol, either beside everything else (a
*running* binding, the terminal) or as an ASGI app under a mount path with a server to run it
(a :class:`ListenerBinding`, HTTP). Both read the canonical events with no translation layer.
Import these names from :mod:`agentdeck.ports`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any, ClassVar

from agentdeck.model.events import Event

if TYPE_CHECKING:  # the layers above, named for the type checker only
    from agentdeck.deck.deck import Deck
    from agentdeck.deck.serving import Exposure

__all__ = ["ASGIApp", "Binding", "ListenerBinding", "Observer"]


# =========================================================================== observers


class Observer:
    """A read-only tap on the event stream: telemetry, cost accounting, audit.

    Fire-and-forget by contract: the runtime feeds each observer through its own bounded queue,
    so a slow or raising observer costs its own backlog and never a run. :meth:`emit` does
    in-memory work only. ``view`` narrows what the observer receives (see
    ``agentdeck.observing.views``).
    """

    view: Callable[[Event], bool] | None = None

    async def start(self) -> None:
        """Open a client or a file; called once at deck open, before any run. Raising refuses
        the open."""

    @abstractmethod
    async def emit(self, event: Event) -> None:
        """Receive one event (after it was persisted)."""

    async def close(self) -> None:
        """The stream has ended: write out whatever is buffered."""


# =========================================================================== bindings


ASGIApp = Callable[
    [
        MutableMapping[str, Any],
        Callable[[], Awaitable[MutableMapping[str, Any]]],
        Callable[[MutableMapping[str, Any]], Awaitable[None]],
    ],
    Awaitable[None],
]
"""An ASGI 3 application: ``await app(scope, receive, send)``. Spelled out here so the core
needs no web framework to compose listener bindings."""


class Binding(ABC):
    """One external protocol over one transport (terminal, native HTTP/SSE, ...).

    Bindings read the canonical events with no translation layer of their own. The serving
    surface (``deck.serve``/``serve_async``/``asgi``/``expose``, built on
    :class:`agentdeck.deck.serving.Exposure`) drives them. A binding comes in one of two shapes:

    * a **running** binding (the terminal chat) implements only :meth:`serve`: once the deck is
      open, the exposure runs ``serve(deck)`` as a task beside everything else and cancels it at
      shutdown (after the drain has parked the deck's live runs);
    * a **listener** binding (HTTP) subclasses :class:`ListenerBinding`: it contributes an ASGI
      app for its routes, and can run the server that listens for the composed app.
    """

    name: ClassVar[str]

    @abstractmethod
    async def serve(self, deck: Deck) -> None:
        """Serve ``deck`` (already open) until done or cancelled.

        Returning ends this binding only. An exception is logged by the exposure and, when no
        listener is being served (``deck.serve(Terminal.stdio())``), re-raised to the caller.
        """


class ListenerBinding(Binding):
    """A binding reached through a network listener: it answers requests under
    :attr:`mount_path` with an ASGI app, and knows how to run a server.

    Several listener bindings share one listener: the exposure sends each ``http``/``websocket``
    request to the binding with the longest matching :attr:`mount_path`, with the scope untouched
    (the app sees the full path). The exposure owns the ``lifespan`` scope — it opens the deck,
    runs the running bindings and drains at shutdown — so a binding's app never receives it and
    asks the exposure whether it is ready (:attr:`~agentdeck.deck.serving.Exposure.state`).
    """

    mount_path: str = ""
    """The path prefix this binding owns (``""`` for the root, else ``"/api"``-shaped)."""

    @abstractmethod
    def asgi_app(self, exposure: Exposure) -> ASGIApp:
        """The ASGI app answering this binding's requests for ``exposure``
        (an :class:`~agentdeck.deck.serving.Exposure`); built once per exposure."""

    @abstractmethod
    async def listen(
        self, app: ASGIApp, exposure: Exposure, *, host: str, port: int, **options: Any
    ) -> None:
        """Serve ``app`` (the exposure's composed app, lifespan included) on ``host:port``.

        The contract with the exposure: call ``exposure.notify_listening(addresses)`` once bound;
        when a stop signal arrives (SIGTERM, SIGINT) or ``exposure.shutdown_requested`` becomes
        true, first ``await exposure.drain()`` — new runs are refused while live ones park —
        then stop accepting, let open responses finish and run the lifespan shutdown. Return
        when the server has stopped. ``options`` are server-specific; refuse unknown ones.
        """

    async def serve(self, deck: Deck) -> None:
        """Serve ``deck`` over this binding alone, with default options."""
        await deck.serve_async(self)
