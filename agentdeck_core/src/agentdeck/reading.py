"""Reading runs without a deck: the event store and control port of some settings, read-only.

Listing or showing runs needs neither engines, observers, a runtime nor its sweep, and a reader
must never change what it reads: a deck's sweep marks a dead worker's run failed, and opening a
store may create its file or schema. :func:`open_reader` opens just the two backends a reader
uses, through the plugin host's registry, each asked with ``BackendRequest(read_only=True)`` so
that a store that does not exist is reported rather than made. The CLI's read commands use it
(and stay quick, importing no deck), as can any other read-only surface such as a console page.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentdeck.plugins.host import PluginHost
    from agentdeck.ports import ControlPort, EventStore
    from agentdeck.settings import Settings

__all__ = ["RunReader", "open_reader"]


@dataclass(frozen=True, slots=True)
class RunReader:
    """The open, read-only backends of one configuration: the run log and pending control."""

    store: EventStore
    control: ControlPort


@asynccontextmanager
async def open_reader(
    settings: Settings, *, host: PluginHost | None = None
) -> AsyncIterator[RunReader]:
    """Open the event store and control port ``settings`` name, read-only; close them after.

    ``host`` defaults to the process's :func:`~agentdeck.plugins.host.default_host`.
    """
    from agentdeck.plugins.host import default_host
    from agentdeck.ports import BackendRequest

    host = host if host is not None else default_host()
    store = host.event_store(
        BackendRequest(settings.events_url, settings, read_only=True),
        setting=settings.events_setting,
    )
    control = host.control_port(
        BackendRequest(settings.control_url, settings, read_only=True),
        setting=settings.control_setting,
    )
    async with AsyncExitStack() as stack:
        await store.open()
        stack.push_async_callback(store.close)
        await control.open()
        stack.push_async_callback(control.close)
        yield RunReader(store=store, control=control)
