"""What the Redis backend promises beyond the contract kits: its URL, its errors, recovery from
dropped connections, and writes that are never applied twice."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis.asyncio as aioredis

from agentdeck.errors import ConfigError, StoreError
from agentdeck.model.clock import ManualClock
from agentdeck.model.events import Event
from agentdeck.model.payloads import RunCompleted, TextDelta
from agentdeck.plugins.host import PluginHost
from agentdeck.ports import BackendRequest, PruneQuery, RunQuery
from agentdeck.testing import new_run
from agentdeck.testing.fixtures import RedisPrefix
from agentdeck.vocabulary import RunStatus
from agentdeck_stores._redis_base import DEFAULT_PREFIX, RedisTarget
from agentdeck_stores.redisstore import RedisControlPort, RedisEventStore, RedisLeasePort

# The core's per-test isolation fixtures (redis_prefix: a fresh key prefix, deleted after).
pytest_plugins = ["agentdeck.testing.fixtures"]

WAIT = 5.0


def _url(redis_prefix: RedisPrefix) -> str:
    return f"{redis_prefix.url}?prefix={redis_prefix.prefix}"


@pytest.fixture
async def store(redis_prefix: RedisPrefix) -> AsyncIterator[RedisEventStore]:
    store = RedisEventStore.from_request(
        BackendRequest(url=_url(redis_prefix), clock=ManualClock())
    )
    await store.open()
    yield store
    await store.close()


@pytest.fixture
async def admin(redis_prefix: RedisPrefix) -> AsyncIterator[aioredis.Redis]:
    """A plain client for looking at the server from outside the store."""
    client = aioredis.Redis.from_url(redis_prefix.url)
    yield client
    await client.aclose()


async def _kill_connections_of(admin: aioredis.Redis, client_name: str) -> int:
    """Drop every server connection named ``client_name`` (only the store's; the server is
    shared, so ``CLIENT KILL TYPE normal`` would hit other tests)."""
    killed = 0
    for client in await admin.client_list():
        if client.get("name") == client_name:
            killed += await admin.client_kill_filter(_id=client["id"])
    return killed


async def _collect(iterator: AsyncIterator[Event], into: list[Event]) -> None:
    async for event in iterator:
        into.append(event)


async def _eventually(predicate: object, what: str) -> None:
    assert callable(predicate)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT
    while not predicate():
        if loop.time() > deadline:
            pytest.fail(f"timed out waiting until {what}")
        await asyncio.sleep(0.001)


# =========================================================================== URLs


def test_the_prefix_option_is_ours_and_the_rest_goes_to_redis_py() -> None:
    target = RedisTarget.parse("redis://:s3cret@cache:6380/2?prefix=app1:&socket_timeout=3")
    assert target.prefix == "app1:"
    assert target.client_url == "redis://:s3cret@cache:6380/2?socket_timeout=3"
    assert "s3cret" not in target.shown


def test_without_a_prefix_keys_start_with_the_default() -> None:
    assert RedisTarget.parse("rediss://cache:6380/0").prefix == DEFAULT_PREFIX == "agentdeck:"


@pytest.mark.parametrize(
    "url",
    [
        "redis://cache/0?prefix=a:&prefix=b:",
        "redis://cache/0?prefix=",
        "redis://cache/0?decode_responses=true",
        "postgresql://db/test",
    ],
)
def test_a_url_that_cannot_work_is_a_config_error(url: str) -> None:
    with pytest.raises(ConfigError):
        RedisTarget.parse(url)


def test_an_option_redis_py_refuses_is_a_config_error_naming_the_url() -> None:
    with pytest.raises(ConfigError) as refused:
        RedisEventStore.from_request(
            BackendRequest(url="redis://:s3cret@127.0.0.1:6379/0?socket_timeout=soon")
        )
    assert "redis://:***@127.0.0.1:6379/0" in str(refused.value)
    assert "s3cret" not in str(refused.value)


def test_the_plugin_serves_both_schemes_with_these_classes(redis_prefix: RedisPrefix) -> None:
    host = PluginHost.discover(env={})
    for scheme in ("redis", "rediss"):
        url = f"{scheme}://127.0.0.1:6379/0?prefix={redis_prefix.prefix}"
        request = BackendRequest(url=url)
        assert isinstance(host.event_store(request), RedisEventStore)
        assert isinstance(host.control_port(request), RedisControlPort)
        assert isinstance(host.lease_port(request), RedisLeasePort)


# =========================================================================== errors


@pytest.mark.parametrize("port_class", [RedisEventStore, RedisControlPort, RedisLeasePort])
async def test_an_unreachable_server_is_a_store_error_with_the_password_redacted(
    port_class: type[RedisEventStore] | type[RedisControlPort] | type[RedisLeasePort],
) -> None:
    # Port 1 on loopback: nothing listens there, so the connection is refused at once.
    url = "redis://agent:s3cret@127.0.0.1:1/0?prefix=nowhere:&socket_connect_timeout=1"
    port = port_class.from_request(BackendRequest(url=url))
    try:
        with pytest.raises(StoreError) as failed:
            await port.open()
    finally:
        await port.close()
    error = failed.value
    assert error.backend == "redis" and error.retryable
    assert str(error).startswith("redis store at redis://agent:***@127.0.0.1:1/0")
    assert "s3cret" not in str(error) and "s3cret" not in (error.url or "")


async def test_operations_on_a_dead_server_are_store_errors_too() -> None:
    store = RedisEventStore.from_request(
        BackendRequest(url="redis://127.0.0.1:1/0?socket_connect_timeout=1")
    )
    try:
        with pytest.raises(StoreError):
            await store.open_run(new_run())
        with pytest.raises(StoreError):
            await store.list_runs(RunQuery())
        with pytest.raises(StoreError):
            await store.append("r", [TextDelta(message_id="m", text="x")])
    finally:
        await store.close()


async def test_a_closed_store_says_so(store: RedisEventStore) -> None:
    await store.close()
    with pytest.raises(StoreError, match="closed"):
        await store.get_run("r")


# =========================================================================== recovery


async def test_the_store_and_its_follower_survive_their_connections_being_killed(
    store: RedisEventStore, admin: aioredis.Redis
) -> None:
    run_id = (await store.open_run(new_run())).event.run_id  # type: ignore[union-attr]
    received: list[Event] = []
    follower = asyncio.create_task(_collect(store.follow(run_id), received))
    try:
        await _eventually(lambda: len(received) == 1, "the follower read run.started")
        await store.append(run_id, [TextDelta(message_id="m", text="before")])
        await _eventually(lambda: len(received) == 2, "the follower saw the first append")

        assert await _kill_connections_of(admin, store.client_name) >= 2  # pool + follower

        (after,) = await store.append(run_id, [TextDelta(message_id="m", text="after")])
        assert after.seq == 2
        await _eventually(lambda: len(received) == 3, "the follower came back")
        await store.append(run_id, [RunCompleted()])
        await asyncio.wait_for(follower, WAIT)
        assert received == await store.read(run_id)
        record = await store.get_run(run_id)
        assert record is not None and record.status is RunStatus.COMPLETED
    finally:
        follower.cancel()


async def test_a_killed_connection_under_concurrent_appends_loses_and_doubles_nothing(
    store: RedisEventStore, admin: aioredis.Redis
) -> None:
    runs = [(await store.open_run(new_run())).event.run_id for _ in range(10)]  # type: ignore[union-attr]

    async def appender(run_id: str) -> list[int]:
        seqs = []
        for n in range(30):
            (event,) = await store.append(run_id, [TextDelta(message_id="m", text=str(n))])
            seqs.append(event.seq)
        return seqs

    tasks = [asyncio.create_task(appender(run_id)) for run_id in runs]
    await asyncio.sleep(0)
    for _ in range(3):
        await _kill_connections_of(admin, store.client_name)
        await asyncio.sleep(0.005)
    results = await asyncio.gather(*tasks)
    for run_id, seqs in zip(runs, results, strict=True):
        assert seqs == list(range(1, 31))
        log = await store.read(run_id)
        assert [event.seq for event in log] == list(range(31))
        assert [event.payload.text for event in log[1:]] == [str(n) for n in range(30)]  # type: ignore[union-attr]


async def test_concurrent_appends_share_one_script_call_and_a_failing_one_fails_alone(
    store: RedisEventStore, admin: aioredis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = [(await store.open_run(new_run())).event.run_id for _ in range(20)]  # type: ignore[union-attr]
    broken = runs[7]
    await admin.set(f"{store.prefix}log:{broken}", "not a stream")  # XADD to it is refused
    sizes: list[int] = []
    grouped = store._batcher._groups

    def spy(batch: Any) -> Any:
        groups = grouped(batch)
        sizes.extend(len(group) for group in groups)
        return groups

    monkeypatch.setattr(store._batcher, "_groups", spy)
    outcomes = await asyncio.gather(
        *(store.append(run_id, [TextDelta(message_id="m", text=run_id)]) for run_id in runs),
        return_exceptions=True,
    )
    assert max(sizes) > 1  # appends queued behind the first went out as one call
    failed = outcomes[runs.index(broken)]
    assert isinstance(failed, StoreError) and "WRONGTYPE" in str(failed)
    for run_id, outcome in zip(runs, outcomes, strict=True):
        if run_id == broken:
            continue
        assert isinstance(outcome, list), outcome
        (event,) = outcome
        assert event.seq == 1 and event.payload.text == run_id  # type: ignore[union-attr]
        assert await store.read(run_id) == [*(await store.read(run_id))[:1], event]
    assert (await store.get_run(broken)).last_seq == 0  # type: ignore[union-attr]


async def test_a_write_replayed_after_a_lost_reply_is_recognised_not_applied_twice(
    store: RedisEventStore,
) -> None:
    # What redis-py does when a connection drops after the server ran the script but before
    # the reply arrived: it sends the same script call again on a new connection.
    opened = await store.open_run(new_run(session_id="s"))
    assert opened.event is not None
    run_id = opened.event.run_id
    run = store._cache[run_id]
    events, state = store._compose(run, [TextDelta(message_id="m", text="once")])
    reply = await store._record_batch(run, state, events, batch_token="t-1")
    assert reply[0] == b"ok"
    replayed = await store._record_batch(run, state, events, batch_token="t-1")
    assert replayed[0] == b"again"
    someone_else = await store._record_batch(run, state, events, batch_token="t-2")
    assert someone_else[0] == b"moved"
    assert [event.seq for event in await store.read(run_id)] == [0, 1]


async def test_a_followers_blocking_read_is_exempt_from_the_urls_socket_timeout(
    redis_prefix: RedisPrefix,
) -> None:
    # socket_timeout bounds every command; the read a follower blocks in waits for the next
    # append however long that takes, so its connection must have no read timeout.
    url = f"{redis_prefix.url}?prefix={redis_prefix.prefix}&socket_timeout=2"
    store = RedisEventStore.from_request(BackendRequest(url=url, clock=ManualClock()))
    await store.open()
    try:
        run_id = (await store.open_run(new_run())).event.run_id  # type: ignore[union-attr]
        received: list[Event] = []
        follower = asyncio.create_task(_collect(store.follow(run_id), received))
        await _eventually(lambda: len(received) == 1, "the follower read run.started")
        assert store.client.connection_pool.connection_kwargs["socket_timeout"] == 2
        (waiter,) = store._followers
        assert waiter.connection_pool.connection_kwargs["socket_timeout"] is None
        await store.append(run_id, [RunCompleted()])
        await asyncio.wait_for(follower, WAIT)
        assert [event.kind for event in received] == ["run.started", "run.completed"]
    finally:
        await store.close()


# =========================================================================== long scans


async def _open_many(store: RedisEventStore, count: int, **kwargs: Any) -> list[str]:
    outcomes = await asyncio.gather(*(store.open_run(new_run(**kwargs)) for _ in range(count)))
    return [outcome.event.run_id for outcome in outcomes if outcome.event is not None]


async def test_a_listing_longer_than_one_script_call_resumes_where_it_stopped(
    redis_prefix: RedisPrefix,
) -> None:
    # No index narrows "created after": the namespace's runs are walked, 2,000 per script call
    # (so Redis stays responsive), and the walk resumes where the last call stopped.
    clock = ManualClock()
    store = RedisEventStore.from_request(BackendRequest(url=_url(redis_prefix), clock=clock))
    await store.open()
    try:
        await _open_many(store, 2_500)
        since = clock.now()
        clock.advance(1)
        late = [(await store.open_run(new_run())).event.run_id for _ in range(3)]  # type: ignore[union-attr]
        page = await store.list_runs(RunQuery(created_after=since, limit=2))
        assert [record.run_id for record in page.runs] == late[:2]
        rest = await store.list_runs(RunQuery(created_after=since, cursor=page.next_cursor))
        assert [record.run_id for record in rest.runs] == late[2:] and rest.next_cursor is None
    finally:
        await store.close()


async def test_pruning_skips_young_runs_across_script_calls(redis_prefix: RedisPrefix) -> None:
    clock = ManualClock()
    store = RedisEventStore.from_request(BackendRequest(url=_url(redis_prefix), clock=clock))
    await store.open()
    try:
        young = await _open_many(store, 1_100)
        old = await _open_many(store, 5)
        await asyncio.gather(*(store.append(run_id, [RunCompleted()]) for run_id in old))
        clock.advance(30)
        cutoff = clock.now()  # strictly after the old runs finished, before the young ones
        clock.advance(30)
        await asyncio.gather(*(store.append(run_id, [RunCompleted()]) for run_id in young))
        assert await store.prune(PruneQuery(finished_before=cutoff)) == 5
        assert all([await store.get_run(run_id) is None for run_id in old])
        assert await store.get_run(young[-1]) is not None
        assert await store.prune(PruneQuery(limit=1_000)) == 1_000
        assert await store.prune(PruneQuery()) == 100
    finally:
        await store.close()
