"""An engine-state area held in memory: what the kit hands an engine instead of a store's.

An engine keeps what it needs to continue a suspended run in the run's engine-state area
(:class:`~agentdeck.ports.EngineStateArea`). The kit's plays and checks give it this one, so a
test can keep state across plays (pass the same instance) or prove a run continues in another
process (pass :meth:`MemoryStateArea.copy`).
"""

from __future__ import annotations

from collections.abc import Mapping

from agentdeck.ports import EngineStateArea

__all__ = ["MemoryStateArea"]


class MemoryStateArea(EngineStateArea):
    """One run's engine-state area, held in memory.

    Pass the same instance to several :func:`drive` calls to simulate durable state; pass
    :meth:`copy` to simulate another process reading the same store.
    """

    def __init__(self, values: Mapping[str, bytes] | None = None) -> None:
        self._values: dict[str, bytes] = dict(values or {})

    async def get(self, name: str) -> bytes | None:
        return self._values.get(name)

    async def put(self, name: str, value: bytes) -> None:
        if not isinstance(value, bytes):
            raise TypeError(
                f"engine state {name!r} must be bytes (stores keep blobs), "
                f"not {type(value).__name__}"
            )
        self._values[name] = value

    async def delete(self, name: str) -> None:
        self._values.pop(name, None)

    def snapshot(self) -> dict[str, bytes]:
        """What is stored now, by name."""
        return dict(self._values)

    def copy(self) -> MemoryStateArea:
        """An independent area holding the same values (a second process, the same store)."""
        return MemoryStateArea(self._values)
