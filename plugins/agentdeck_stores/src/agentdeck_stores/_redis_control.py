"""The Redis control and lease ports (``redis://`` / ``rediss://``).

Control requests are a hash per run (one field per pending verb); leases a hash per run (owner,
expiry) plus one sorted set of expiries, so ``lapsed()`` is a range query. Every decision that
must have one winner (request, take, acquire, renew, release) is one Lua script
(:mod:`agentdeck_stores._redis_lua`). Instants come from the clock the port was built with.
"""

from __future__ import annotations

import secrets
from collections.abc import Collection
from typing import ClassVar

from agentdeck.errors import InvalidInputError
from agentdeck.model.clock import Clock
from agentdeck.ports import BackendRequest, ControlPort, ControlSignal, LeasePort, LeaseState
from agentdeck.storage import checked_verb
from agentdeck.vocabulary import ControlVerb
from agentdeck_stores import _redis_lua as lua
from agentdeck_stores._redis_base import (
    RedisBackend,
    RedisTarget,
    as_text,
    from_micros,
    translate_errors,
)
from agentdeck_stores.settings import connect_timeout

__all__ = ["RedisControlPort", "RedisLeasePort"]


# =========================================================================== control


_VERBS = frozenset(verb.value for verb in ControlVerb)


class RedisControlPort(RedisBackend, ControlPort):
    """Pending pause/cancel requests in a Redis hash per run, seen by every process."""

    shared: ClassVar[bool] = True
    role: ClassVar[str] = "control"

    def __init__(
        self, target: RedisTarget, *, clock: Clock | None = None, read_only: bool = False
    ) -> None:
        super().__init__(target, clock=clock, read_only=read_only)
        self._request_script = self.client.register_script(lua.CONTROL_REQUEST)
        self._take_script = self.client.register_script(lua.CONTROL_TAKE)

    @classmethod
    def from_request(cls, request: BackendRequest) -> RedisControlPort:
        """The factory the ``redis``/``rediss`` schemes register."""
        return cls(
            RedisTarget.parse(request.url, timeout=connect_timeout(request.settings)),
            clock=request.clock,
            read_only=request.read_only,
        )

    def _key(self, run_id: str) -> str:
        return f"{self.prefix}ctl:{run_id}"

    async def request(self, run_id: str, verb: ControlVerb, reason: str | None = None) -> bool:
        self.check_writable("requesting a control signal")
        wanted = checked_verb(verb)
        reason_text = "" if reason is None else "=" + reason
        with translate_errors(self.target, f"request {wanted.value} of run '{run_id}'"):
            made = await self._request_script(
                keys=[self._key(run_id)],
                args=[wanted.value, secrets.token_hex(8), f"{self._now_micros()} {reason_text}"],
            )
        return bool(made)

    def _signal(
        self, run_id: str, verb: ControlVerb, value: bytes | str
    ) -> tuple[int, ControlSignal]:
        order, _, at, reason = (as_text(value) or "").split(" ", 3)
        return int(order), ControlSignal(
            run_id=run_id,
            verb=verb,
            reason=reason[1:] if reason else None,
            requested_at=from_micros(at),
        )

    async def pending(self, run_id: str) -> tuple[ControlSignal, ...]:
        with translate_errors(self.target, f"read control requests of run '{run_id}'"):
            held = await self.client.hgetall(self._key(run_id))
        signals = [
            self._signal(run_id, ControlVerb(verb), value)
            for verb, value in ((as_text(field) or "", value) for field, value in held.items())
            if verb in _VERBS
        ]
        # Cancel first (it wins over everything), the rest in the order they were asked.
        signals.sort(key=lambda item: (item[1].verb is not ControlVerb.CANCEL, item[0]))
        return tuple(signal for _, signal in signals)

    async def take(self, run_id: str, verb: ControlVerb) -> ControlSignal | None:
        self.check_writable("taking a control signal")
        wanted = checked_verb(verb)
        with translate_errors(self.target, f"take the {wanted.value} request of run '{run_id}'"):
            value = await self._take_script(
                keys=[self._key(run_id)], args=[wanted.value, secrets.token_hex(8)]
            )
        return self._signal(run_id, wanted, value)[1] if value is not None else None

    async def forget(self, run_ids: Collection[str]) -> None:
        self.check_writable("forgetting control signals")
        keys = [self._key(run_id) for run_id in run_ids]
        if not keys:
            return
        with translate_errors(self.target, "forget control requests"):
            for start in range(0, len(keys), 500):
                await self.client.delete(*keys[start : start + 500])


# =========================================================================== leases


class RedisLeasePort(RedisBackend, LeasePort):
    """Liveness leases in Redis: a hash per run (owner, expiry) and a sorted set of expiries.

    Expiry instants come from this port's clock, and so does "now" when they are compared: the
    server's own time (and Redis key expiry) is never used, so a ``ManualClock`` drives them.
    """

    shared: ClassVar[bool] = True
    role: ClassVar[str] = "leases"

    def __init__(
        self, target: RedisTarget, *, clock: Clock | None = None, read_only: bool = False
    ) -> None:
        super().__init__(target, clock=clock, read_only=read_only)
        self._acquire_script = self.client.register_script(lua.LEASE_ACQUIRE)
        self._renew_script = self.client.register_script(lua.LEASE_RENEW)
        self._release_script = self.client.register_script(lua.LEASE_RELEASE)
        self._expiries = f"{self.prefix}leases"

    @classmethod
    def from_request(cls, request: BackendRequest) -> RedisLeasePort:
        """The factory the ``redis``/``rediss`` schemes register."""
        return cls(
            RedisTarget.parse(request.url, timeout=connect_timeout(request.settings)),
            clock=request.clock,
            read_only=request.read_only,
        )

    def _key(self, run_id: str) -> str:
        return f"{self.prefix}lease:{run_id}"

    def _window(self, ttl: float) -> tuple[int, int]:
        if not ttl > 0:
            raise InvalidInputError(
                f"a lease TTL must be a positive number of seconds, not {ttl!r}", field="ttl"
            )
        now = self._now_micros()
        return now, now + round(ttl * 1_000_000)

    async def acquire(self, run_id: str, owner: str, ttl: float) -> bool:
        self.check_writable("acquiring a lease")
        now, expires = self._window(ttl)
        with translate_errors(self.target, f"acquire the lease of run '{run_id}'"):
            won = await self._acquire_script(
                keys=[self._key(run_id), self._expiries], args=[run_id, owner, now, expires]
            )
        return bool(won)

    async def renew(self, run_id: str, owner: str, ttl: float) -> bool:
        self.check_writable("renewing a lease")
        now, expires = self._window(ttl)
        with translate_errors(self.target, f"renew the lease of run '{run_id}'"):
            renewed = await self._renew_script(
                keys=[self._key(run_id), self._expiries], args=[run_id, owner, now, expires]
            )
        return bool(renewed)

    async def release(self, run_id: str, owner: str) -> None:
        self.check_writable("releasing a lease")
        with translate_errors(self.target, f"release the lease of run '{run_id}'"):
            await self._release_script(
                keys=[self._key(run_id), self._expiries], args=[run_id, owner]
            )

    async def state(self, run_id: str) -> LeaseState:
        with translate_errors(self.target, f"read the lease of run '{run_id}'"):
            expires = await self.client.hget(self._key(run_id), "exp")
        if expires is None:
            return LeaseState.NONE
        return LeaseState.ALIVE if self._now_micros() < int(expires) else LeaseState.LAPSED

    async def lapsed(self, limit: int = 100) -> list[str]:
        if limit <= 0:
            return []
        with translate_errors(self.target, "list lapsed leases"):
            run_ids = await self.client.zrangebyscore(
                self._expiries, "-inf", self._now_micros(), start=0, num=limit
            )
        return [run_id.decode() if isinstance(run_id, bytes) else str(run_id) for run_id in run_ids]

    async def forget(self, run_ids: Collection[str]) -> None:
        ids = list(run_ids)
        if not ids:
            return
        with translate_errors(self.target, "forget leases"):
            for start in range(0, len(ids), 500):
                batch = ids[start : start + 500]
                async with self.client.pipeline(transaction=True) as pipe:
                    pipe.delete(*(self._key(run_id) for run_id in batch))
                    pipe.zrem(self._expiries, *batch)
                    await pipe.execute()
