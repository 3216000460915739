"""The error hierarchy: typed, re-exported, carrying its facts, with messages saying what to do."""

from __future__ import annotations

import copy
import inspect
import pickle
from collections.abc import Callable
from dataclasses import dataclass

import pytest

import agentdeck
import agentdeck.errors as errors_module
from agentdeck.errors import (
    AgentDeckError,
    AlreadyAnsweredError,
    AnswerRefusedError,
    ConfigError,
    ContentTooLargeError,
    ContextTypeError,
    DuplicateKeyError,
    EventSchemaError,
    ExtraNotInstalledError,
    ForkUnsupportedError,
    InvalidInputError,
    NotFoundError,
    PluginNotInstalledError,
    ReplayError,
    RunCancelledError,
    RunFailedError,
    RunFinishedError,
    RunStateError,
    RunSuspendedError,
    SessionBusyError,
    StoreError,
)
from agentdeck.vocabulary import RunStatus


@dataclass(frozen=True)
class Case:
    build: Callable[[], AgentDeckError]
    fields: dict[str, object]
    """Structured attributes the error must carry, and their values."""
    facts: tuple[str, ...]
    """Fragments the message must contain: the key facts and what to do."""


CASES: dict[type[AgentDeckError], Case] = {
    AgentDeckError: Case(
        lambda: AgentDeckError("something the library meant to raise"),
        {"message": "something the library meant to raise"},
        ("something the library meant to raise",),
    ),
    ConfigError: Case(
        lambda: ConfigError(
            "unknown store scheme 'mongo://'; installed plugins offer memory, sqlite",
            setting="AGENTDECK_EVENTS_URL",
            accepted=["memory", "sqlite"],
        ),
        {"setting": "AGENTDECK_EVENTS_URL", "accepted": ("memory", "sqlite")},
        ("mongo://", "memory, sqlite"),
    ),
    ContextTypeError: Case(
        lambda: ContextTypeError(
            "find_slots requires Context[Calendar] but the deck provides Warehouse",
            callable_name="find_slots",
            required="Calendar",
            provided="Warehouse",
        ),
        {
            "callable_name": "find_slots",
            "required": "Calendar",
            "provided": "Warehouse",
            "setting": "context",
        },
        ("find_slots", "Calendar", "Warehouse"),
    ),
    InvalidInputError: Case(
        lambda: InvalidInputError(
            "RefundApproval takes order_id; got orderid", name="RefundApproval", field="order_id"
        ),
        {"name": "RefundApproval", "field": "order_id"},
        ("RefundApproval", "order_id"),
    ),
    ContentTooLargeError: Case(
        lambda: ContentTooLargeError(block_type="image", size=9_000_000, limit=8_388_608),
        {"block_type": "image", "size": 9_000_000, "limit": 8_388_608},
        ("image", "9000000", "8388608", "ResourceBlock"),
    ),
    EventSchemaError: Case(
        lambda: EventSchemaError(
            "malformed text.delta event: payload.message_id: Field required",
            kind="text.delta",
            field="payload.message_id",
        ),
        {"kind": "text.delta", "field": "payload.message_id"},
        ("text.delta", "payload.message_id"),
    ),
    NotFoundError: Case(
        lambda: NotFoundError(
            "no agent 'Greter' in namespace 'acme'; available: Greeter, Booking",
            what="agent",
            name="Greter",
            namespace="acme",
            available=["Greeter", "Booking"],
        ),
        {
            "what": "agent",
            "name": "Greter",
            "namespace": "acme",
            "available": ("Greeter", "Booking"),
        },
        ("Greter", "acme", "Greeter, Booking"),
    ),
    PluginNotInstalledError: Case(
        lambda: PluginNotInstalledError(
            attribute="LangfuseObserver",
            module="agentdeck.observers",
            distribution="agentdeck-langfuse",
        ),
        {
            "attribute": "LangfuseObserver",
            "module": "agentdeck.observers",
            "distribution": "agentdeck-langfuse",
            "accepted": ("agentdeck-langfuse",),
        },
        ("agentdeck.observers.LangfuseObserver", "pip install agentdeck-langfuse"),
    ),
    ExtraNotInstalledError: Case(
        lambda: ExtraNotInstalledError(
            feature="the postgresql:// store",
            distribution="agentdeck-stores",
            extra="postgres",
            missing="psycopg",
            setting="AGENTDECK_STATE",
        ),
        {
            "feature": "the postgresql:// store",
            "distribution": "agentdeck-stores",
            "extra": "postgres",
            "missing": "psycopg",
            "requirement": "agentdeck-stores[postgres]",
            "setting": "AGENTDECK_STATE",
            "accepted": ("agentdeck-stores[postgres]",),
        },
        ("postgresql://", "'psycopg'", "pip install 'agentdeck-stores[postgres]'"),
    ),
    RunStateError: Case(
        lambda: RunStateError(
            "run 'r-1' is paused and has no open question; use run.resume()",
            run_id="r-1",
            status=RunStatus.PAUSED,
            accepted=[RunStatus.WAITING_ANSWER],
            hint="resume",
        ),
        {
            "run_id": "r-1",
            "status": RunStatus.PAUSED,
            "accepted": (RunStatus.WAITING_ANSWER,),
            "hint": "resume",
        },
        ("r-1", "paused", "resume"),
    ),
    AlreadyAnsweredError: Case(
        lambda: AlreadyAnsweredError(
            run_id="r-1",
            interrupt_id="ask-1",
            origin="policy",
            answered_seq=7,
            status=RunStatus.RUNNING,
        ),
        {
            "run_id": "r-1",
            "interrupt_id": "ask-1",
            "origin": "policy",
            "answered_seq": 7,
            "status": RunStatus.RUNNING,
            "refusal": "answered",
        },
        ("r-1", "ask-1", "already answered", "policy", "not recorded"),
    ),
    RunFinishedError: Case(
        lambda: RunFinishedError(run_id="r-1", status=RunStatus.COMPLETED, verb="pause"),
        {"run_id": "r-1", "status": RunStatus.COMPLETED, "verb": "pause", "refusal": "finished"},
        ("r-1", "completed", "nothing to pause"),
    ),
    RunCancelledError: Case(
        lambda: RunCancelledError(run_id="r-1", verb="answer", cancel_reason="tab closed"),
        {
            "run_id": "r-1",
            "status": RunStatus.CANCELLED,
            "verb": "answer",
            "cancel_reason": "tab closed",
            "refusal": "cancelled",
        },
        ("r-1", "cancelled", "tab closed", "nothing to answer"),
    ),
    RunFailedError: Case(
        lambda: RunFailedError(
            run_id="r-1",
            status=RunStatus.FAILED,
            error_code="tool_error",
            reason="ValueError",
            where="lookup_order",
        ),
        {
            "run_id": "r-1",
            "status": RunStatus.FAILED,
            "error_code": "tool_error",
            "reason": "ValueError",
            "where": "lookup_order",
        },
        ("r-1", "tool_error", "lookup_order", "ValueError"),
    ),
    RunSuspendedError: Case(
        lambda: RunSuspendedError(
            run_id="r-1", status=RunStatus.WAITING_ANSWER, pending={"payload": "ok?"}
        ),
        {
            "run_id": "r-1",
            "status": RunStatus.WAITING_ANSWER,
            "pending": {"payload": "ok?"},
            "hint": "answer",
        },
        ("r-1", "waiting_answer", "run.answer(", "cancel"),
    ),
    SessionBusyError: Case(
        lambda: SessionBusyError(
            session_id="wa-1", holder_run_id="r-1", holder_status=RunStatus.RUNNING, run_id="r-2"
        ),
        {
            "session_id": "wa-1",
            "holder_run_id": "r-1",
            "holder_status": RunStatus.RUNNING,
            "run_id": "r-2",
        },
        ("wa-1", "r-1", "r-2", "wait", "cancel"),
    ),
    DuplicateKeyError: Case(
        lambda: DuplicateKeyError(namespace="acme", key="order-1234", holder_run_id="r-1"),
        {"namespace": "acme", "key": "order-1234", "holder_run_id": "r-1"},
        ("order-1234", "acme", "r-1", "runs.get("),
    ),
    AnswerRefusedError: Case(
        lambda: AnswerRefusedError(
            run_id="r-1", interrupt_id="q-1", reason="expected one of: yes, no"
        ),
        {"run_id": "r-1", "interrupt_id": "q-1", "reason": "expected one of: yes, no"},
        ("r-1", "q-1", "expected one of: yes, no", "answer again"),
    ),
    ReplayError: Case(
        lambda: ReplayError(
            "run 'r-1' was parked in memory by a process that is gone; cancel it and start again",
            run_id="r-1",
            reason="process_gone",
        ),
        {"run_id": "r-1", "reason": "process_gone"},
        ("r-1", "cancel it"),
    ),
    ForkUnsupportedError: Case(
        lambda: ForkUnsupportedError(run_id="r-1", engine="openai"),
        {"run_id": "r-1", "engine": "openai", "why": None},
        ("r-1", "'openai' engine", "retry it instead"),
    ),
    StoreError: Case(
        lambda: StoreError(
            "connection refused", backend="redis", url="redis://127.0.0.1:6379/0", retryable=True
        ),
        {"backend": "redis", "url": "redis://127.0.0.1:6379/0", "retryable": True},
        ("redis store", "redis://127.0.0.1:6379/0", "connection refused"),
    ),
}

PUBLIC: list[type[AgentDeckError]] = [
    getattr(errors_module, name) for name in errors_module.__all__
]


def _defined_error_classes() -> set[type[BaseException]]:
    return {
        obj
        for _, obj in inspect.getmembers(errors_module, inspect.isclass)
        if issubclass(obj, BaseException) and obj.__module__ == errors_module.__name__
    }


# --------------------------------------------------------------------------- meta


def test_every_error_class_has_a_test_case() -> None:
    missing = _defined_error_classes() - set(CASES)
    assert not missing, (
        f"error classes without a case in CASES: {sorted(c.__name__ for c in missing)}"
    )


def test_every_error_class_is_public() -> None:
    assert _defined_error_classes() == set(PUBLIC)


# --------------------------------------------------------------------------- every class


@pytest.mark.parametrize("cls", PUBLIC, ids=lambda c: c.__name__)
def test_is_an_agentdeck_error(cls: type[AgentDeckError]) -> None:
    assert issubclass(cls, AgentDeckError)
    assert issubclass(cls, Exception)


@pytest.mark.parametrize("cls", PUBLIC, ids=lambda c: c.__name__)
def test_is_re_exported_from_agentdeck(cls: type[AgentDeckError]) -> None:
    assert getattr(agentdeck, cls.__name__) is cls
    assert cls.__name__ in agentdeck.__all__


@pytest.mark.parametrize("cls", PUBLIC, ids=lambda c: c.__name__)
def test_carries_its_structured_fields(cls: type[AgentDeckError]) -> None:
    case = CASES[cls]
    error = case.build()
    assert type(error) is cls
    for name, value in case.fields.items():
        assert getattr(error, name) == value, name


@pytest.mark.parametrize("cls", PUBLIC, ids=lambda c: c.__name__)
def test_message_names_the_key_facts(cls: type[AgentDeckError]) -> None:
    error = CASES[cls].build()
    assert str(error) == error.message
    assert error.args == (error.message,)
    for fact in CASES[cls].facts:
        assert fact in str(error), fact


@pytest.mark.parametrize("cls", PUBLIC, ids=lambda c: c.__name__)
def test_survives_pickling_and_copying_with_its_fields(cls: type[AgentDeckError]) -> None:
    error = CASES[cls].build()
    for clone in (pickle.loads(pickle.dumps(error)), copy.copy(error), copy.deepcopy(error)):
        assert type(clone) is cls
        assert str(clone) == str(error)
        assert clone.args == error.args
        for name, value in CASES[cls].fields.items():
            assert getattr(clone, name) == value, name


@pytest.mark.parametrize("cls", PUBLIC, ids=lambda c: c.__name__)
def test_is_raisable_and_catchable_as_agentdeck_error(cls: type[AgentDeckError]) -> None:
    with pytest.raises(AgentDeckError) as caught:
        raise CASES[cls].build()
    assert type(caught.value) is cls


# --------------------------------------------------------------------------- hierarchy


def test_context_type_error_is_a_config_error() -> None:
    assert issubclass(ContextTypeError, ConfigError)
    with pytest.raises(ConfigError):
        raise CASES[ContextTypeError].build()


@pytest.mark.parametrize("cls", [PluginNotInstalledError, ExtraNotInstalledError])
def test_a_missing_install_is_a_config_error_and_an_import_error(
    cls: type[AgentDeckError],
) -> None:
    # The optional-dependency idiom (`except ImportError`) and AgentDeck's own both catch it.
    for caught_as in (ConfigError, ImportError):
        with pytest.raises(caught_as):
            raise CASES[cls].build()


def test_run_suspended_error_is_a_run_state_error() -> None:
    assert issubclass(RunSuspendedError, RunStateError)
    with pytest.raises(RunStateError):
        raise CASES[RunSuspendedError].build()


def test_context_type_error_is_importable_from_both_documented_places() -> None:
    from agentdeck import ContextTypeError as from_root
    from agentdeck.errors import ContextTypeError as from_errors

    assert from_root is from_errors


# --------------------------------------------------------------------------- SessionBusyError


def test_session_busy_message_has_the_reference_shape() -> None:
    error = SessionBusyError(
        session_id="wa-1", holder_run_id="r-1", holder_status=RunStatus.RUNNING, run_id="r-2"
    )
    assert str(error).startswith(
        "session 'wa-1' already has run 'r-1' in flight, so run 'r-2' cannot start on it"
    )


@pytest.mark.parametrize(
    ("status", "says"),
    [
        (RunStatus.RUNNING, ("wait", "cancel")),
        (RunStatus.PAUSED, ("resume", "cancel")),
        (RunStatus.WAITING_ANSWER, ("answer", "cancel")),
        (None, ("wait", "cancel")),
    ],
)
def test_session_busy_says_what_to_do_for_the_holders_status(
    status: RunStatus | None, says: tuple[str, ...]
) -> None:
    message = str(SessionBusyError(session_id="wa-1", holder_run_id="r-1", holder_status=status))
    for word in says:
        assert word in message
    others = {"resume", "answer"} - set(says)
    for word in others:
        assert word not in message


def test_session_busy_without_the_new_run_id_names_a_new_run() -> None:
    error = SessionBusyError(session_id="wa-1", holder_run_id="r-1", holder_status=RunStatus.PAUSED)
    assert "so a new run cannot start on it" in str(error)
    assert error.run_id is None


# --------------------------------------------------------------------------- RunSuspendedError


def test_run_suspended_on_a_pause_says_resume_and_has_no_pending() -> None:
    error = RunSuspendedError(run_id="r-1", status=RunStatus.PAUSED)
    assert error.pending is None
    assert error.hint == "resume"
    assert "run.resume()" in str(error) and "'r-1'" in str(error) and "paused" in str(error)


def test_run_suspended_while_waiting_says_answer_even_when_the_payload_is_none() -> None:
    # The interrupt's own payload may be None; the status decides what to say.
    error = RunSuspendedError(run_id="r-1", status=RunStatus.WAITING_ANSWER, pending=None)
    assert error.hint == "answer"
    assert "run.answer(" in str(error)


def test_run_suspended_names_the_statuses_in_which_awaiting_returns() -> None:
    error = RunSuspendedError(run_id="r-1", status=RunStatus.PAUSED)
    assert set(error.accepted) == {RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED}


# --------------------------------------------------------------------------- StoreError


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://:s3cret@cache:6379/0", "redis://:***@cache:6379/0"),
        ("postgresql://app:s3cret@db:5432/deck", "postgresql://app:***@db:5432/deck"),
        ("postgresql://app:s3/cr#et@db/deck", "postgresql://app:***@db/deck"),
        (
            "postgresql://db/deck?user=app&password=s3cret",
            "postgresql://db/deck?user=app&password=***",
        ),
        ("sqlite:///var/lib/deck.db", "sqlite:///var/lib/deck.db"),
        ("redis://cache:6379", "redis://cache:6379"),
    ],
)
def test_store_error_never_shows_a_password(url: str, shown: str) -> None:
    error = StoreError("connection refused", backend="x", url=url)
    assert "s3cret" not in str(error) and "s3/cr" not in str(error)
    assert error.url == shown
    assert shown in str(error)
    assert "s3cret" not in repr(pickle.loads(pickle.dumps(error)).__dict__)


def test_store_error_without_a_url_names_the_backend() -> None:
    assert str(StoreError("disk full", backend="sqlite")) == "sqlite store: disk full"


# --------------------------------------------------------------------------- others


def test_duplicate_key_in_the_default_namespace_says_so() -> None:
    error = DuplicateKeyError(namespace=None, key="k", holder_run_id="r-1")
    assert "the default namespace" in str(error)


def test_config_error_without_accepted_has_none() -> None:
    error = ConfigError("bad")
    assert (error.setting, error.accepted) == (None, None)
