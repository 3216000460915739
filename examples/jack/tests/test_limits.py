"""The quota and the conversation registry on their own, on a clock the test moves."""

from __future__ import annotations

import pytest
from agentdeck import ManualClock
from agentdeck.errors import NotFoundError

from jack.limits import Conversations, QuotaExceededError, RequestQuota, TurnsExhaustedError


def test_the_window_slides_rather_than_resetting() -> None:
    clock = ManualClock()
    quota = RequestQuota(2, 60, clock=clock)
    quota.charge("a")
    clock.advance(50)
    quota.charge("a")
    clock.advance(9)
    with pytest.raises(QuotaExceededError) as over:
        quota.charge("a")
    assert over.value.retry_after == 1  # the first request leaves the window at t=60
    clock.advance(1)
    quota.charge("a")  # the first left; the second (t=50) and this one are in the window
    with pytest.raises(QuotaExceededError) as again:
        quota.charge("a")
    assert again.value.retry_after == 50


def test_a_refused_request_is_not_counted() -> None:
    clock = ManualClock()
    quota = RequestQuota(1, 10, clock=clock)
    quota.charge("a")
    for _ in range(5):
        with pytest.raises(QuotaExceededError):
            quota.charge("a")
    clock.advance(10)
    quota.charge("a")


def test_a_quota_that_would_admit_nothing_is_refused() -> None:
    with pytest.raises(ValueError):
        RequestQuota(0, 60)


def test_a_conversation_counts_its_turns_and_belongs_to_its_client() -> None:
    conversations = Conversations(turns_per_session=2)
    session = conversations.open("a")
    conversations.check(session, "a")
    with pytest.raises(NotFoundError):
        conversations.check(session, "b")
    assert conversations.count_turn(session) == 1
    assert conversations.count_turn(session) == 2
    with pytest.raises(TurnsExhaustedError):
        conversations.check(session, "a")


def test_the_oldest_conversation_is_forgotten_past_the_cap() -> None:
    conversations = Conversations(turns_per_session=5, max_open=2)
    first, second, third = (conversations.open("a") for _ in range(3))
    with pytest.raises(NotFoundError):
        conversations.check(first, "a")
    conversations.check(second, "a")
    conversations.check(third, "a")
