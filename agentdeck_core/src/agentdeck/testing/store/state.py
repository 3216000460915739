"""The engine-state area: put, replace, read and delete named blobs per run."""

from __future__ import annotations

from agentdeck.ports import EventStore
from agentdeck.testing.store.base import StoreKitBase

__all__ = ["EngineStateTests"]


class EngineStateTests(StoreKitBase):
    """The engine-state area (part of :class:`~agentdeck.testing.store_kit.StoreContract`)."""

    __contract_kit__ = True

    # =========================================================================== engine state

    async def test_engine_state_is_put_replaced_read_and_deleted(self, store: EventStore) -> None:
        run_id = await self._open(store)
        other = await self._open(store)
        assert await store.get_state(run_id, "journal") is None
        await store.put_state(run_id, "journal", b"\x00one")
        await store.put_state(run_id, "journal", b"\x00two")
        await store.put_state(run_id, "approvals", b"")
        await store.put_state(other, "journal", b"theirs")
        assert await store.get_state(run_id, "journal") == b"\x00two"
        assert await store.get_state(run_id, "approvals") == b""
        await store.delete_state(run_id, "journal")
        await store.delete_state(run_id, "journal")  # deleting what is gone is a no-op
        assert await store.get_state(run_id, "journal") is None
        assert await store.get_state(other, "journal") == b"theirs"

    async def test_engine_state_holds_larger_blobs(self, store: EventStore) -> None:
        run_id = await self._open(store)
        blob = bytes(range(256)) * 4096  # 1 MiB, every byte value
        await store.put_state(run_id, "checkpoint", blob)
        assert await store.get_state(run_id, "checkpoint") == blob
