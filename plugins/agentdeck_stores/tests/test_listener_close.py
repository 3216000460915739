"""A store's close never waits for good on its LISTEN connection.

Rarely (seen with psycopg 3.3.6, the floor) a cancelled ``AsyncConnection.notifies()`` goes on
waiting instead of ending, and the listener's close waited on it forever (a contract test hung
for its whole 15-minute timeout). Here ``notifies`` is replaced by one that always swallows the
cancellation and ends only when its connection is closed, as that wait does; the close must still
return, by closing the connection under it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest

from agentdeck.testing.fixtures import PostgresSchema
from agentdeck_stores._pg_notify import Listener


async def _deaf_notifies(self: psycopg.AsyncConnection[Any], **_: Any) -> AsyncIterator[Any]:
    while not self.closed:
        try:
            await asyncio.sleep(0.02)
        except asyncio.CancelledError:
            continue  # the cancellation is lost, as in the rare wait
    raise psycopg.OperationalError("the connection is closed")
    yield  # an async generator, as the real one


async def test_close_returns_when_a_cancelled_notifies_keeps_waiting(
    postgres_schema: PostgresSchema, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(psycopg.AsyncConnection, "notifies", _deaf_notifies)
    listener = Listener(postgres_schema.url, "agentdeck_test_deaf")
    parked = listener.park("run-1")
    async with asyncio.timeout(30):
        while listener.subscriptions == 0:
            await asyncio.sleep(0.02)
        await listener.close()
    assert parked.done()  # the close woke the parked follower
