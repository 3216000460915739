"""Write-behind for one playing run: the engine keeps going while its payloads are persisted.

With a durable store every ``append`` is a commit or a network round trip. Awaiting each one
before asking the engine for its next payload puts that latency between every two tokens of a
reply, and one commit per event caps a run at the store's commit rate. A :class:`WriteBehind`
takes the payloads as the engine yields them and persists them in order, one ``append`` per
*burst*: the first payload is written at once (so a live follower sees the first token as soon as
the store has it), and whatever arrives while that write is in flight goes out together in the
next one: group commit within one run.

What stays true:

* **Order.** One writer per play; batches go out one after another, in yield order.
* **Persist, then publish.** Observers and in-process waiters see an event only after the store
  returned it, exactly as with a direct append.
* **Barriers.** The play calls :meth:`flush` before anything that must find the log complete: a
  conditional append of its own (an ending, a budget or deadline failure), a safe point where
  side effects may follow (a tool's dispatch, a node boundary), and the end of the play.
* **Failures.** A write that fails stops the writer; the error is raised to the play at its next
  :meth:`push` or :meth:`flush`, which then ends the run as it would have on a direct append.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from agentdeck.model.events import Event
from agentdeck.model.payloads import Payload

__all__ = ["WriteBehind"]

Append = Callable[[Sequence[Payload]], Awaitable[list[Event]]]


class WriteBehind:
    """Persists one run's payloads in order, a burst per ``append`` call."""

    __slots__ = ("_append", "_error", "_name", "_pending", "_writing")

    def __init__(self, append: Append, *, name: str) -> None:
        self._append = append
        self._name = name
        self._pending: list[Payload] = []
        self._writing: asyncio.Task[None] | None = None
        self._error: BaseException | None = None

    def push(self, payload: Payload) -> None:
        """Queue ``payload``; start a write unless one is in flight (it will take this along)."""
        if self._error is not None:
            raise self._error
        self._pending.append(payload)
        if self._writing is None:
            self._writing = asyncio.get_running_loop().create_task(self._drain(), name=self._name)

    async def flush(self) -> None:
        """Return once everything pushed so far is persisted; raise the write's error if any."""
        while self._writing is not None:
            # Shielded: a play cancelled while waiting must not cut a commit in half; the
            # write finishes and the cancellation is still delivered to the play.
            await asyncio.shield(self._writing)
        if self._error is not None:
            raise self._error

    @property
    def idle(self) -> bool:
        """Nothing queued, nothing in flight and no failed write to report: an append made
        directly now would land right after everything pushed so far."""
        return self._writing is None and not self._pending and self._error is None

    async def _drain(self) -> None:
        try:
            while self._pending:
                batch, self._pending = self._pending, []
                await self._append(batch)
        except BaseException as exc:  # handed to the play, which decides what it means
            self._error = exc
            self._pending.clear()
        finally:
            self._writing = None
