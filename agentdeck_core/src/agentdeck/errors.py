"""Every error AgentDeck raises on purpose, in one hierarchy.

Callers catch :class:`AgentDeckError` to catch everything the library means to raise, or a
subclass to react to one situation. Each error carries the facts a caller would otherwise have to
parse out of the message (the run id, the status it was in, what would have been accepted) as
attributes, so handling code never matches on text.

The message is written for a person: it names the value that was wrong and what to do instead.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, ClassVar

from agentdeck.vocabulary import RunStatus

__all__ = [
    "AgentDeckError",
    "AlreadyAnsweredError",
    "AnswerRefusedError",
    "ConfigError",
    "ContentTooLargeError",
    "ContextTypeError",
    "DuplicateKeyError",
    "EventSchemaError",
    "ExtraNotInstalledError",
    "ForkUnsupportedError",
    "InvalidInputError",
    "NotFoundError",
    "PluginNotInstalledError",
    "ReplayError",
    "RunCancelledError",
    "RunFailedError",
    "RunFinishedError",
    "RunStateError",
    "RunSuspendedError",
    "SessionBusyError",
    "StoreError",
]


class AgentDeckError(Exception):
    """Base of every error AgentDeck raises deliberately.

    Every error pickles and copies with its structured fields intact, so it survives crossing a
    process boundary (a worker pool, ``anyio.to_process``) even though most subclasses take
    keyword-only arguments that ``Exception``'s default pickling cannot replay.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> tuple[Any, ...]:
        return (_restore_error, (type(self), self.args, dict(self.__dict__)))


def _restore_error(
    cls: type[AgentDeckError], args: tuple[Any, ...], state: dict[str, Any]
) -> AgentDeckError:
    """Rebuild a pickled error without calling its ``__init__`` (whose signature varies)."""
    error = cls.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    return error


# --------------------------------------------------------------------------- configuration


class ConfigError(AgentDeckError):
    """Configuration that cannot work: a bad setting, an unknown scheme, a clashing plugin.

    ``setting`` names the variable or argument that was wrong when there is one; ``accepted``
    lists what would have been accepted when that list is known.
    """

    def __init__(
        self,
        message: str,
        *,
        setting: str | None = None,
        accepted: Sequence[str] | None = None,
    ) -> None:
        super().__init__(message)
        self.setting = setting
        self.accepted = tuple(accepted) if accepted is not None else None


class PluginNotInstalledError(ConfigError, ImportError):
    """A name that belongs to a plugin distribution which is not installed.

    ``from agentdeck.observers import LangfuseObserver`` resolves the name from the installed
    plugin; without it, this error says which distribution to install. It is also an
    :class:`ImportError`, so the usual optional-dependency idiom (``except ImportError``) works.
    ``attribute`` is the name asked for, ``distribution`` what provides it.
    """

    def __init__(self, *, attribute: str, module: str, distribution: str) -> None:
        super().__init__(
            f"{module}.{attribute} is provided by the {distribution} plugin, which is not "
            f"installed; install it with: pip install {distribution}",
            setting=None,
            accepted=(distribution,),
        )
        self.attribute = attribute
        self.module = module
        self.distribution = distribution


class ExtraNotInstalledError(ConfigError, ImportError):
    """A feature of an installed plugin whose optional dependencies (one of its extras) are not.

    Database drivers and similar heavy dependencies are extras of the plugin that uses them
    (``agentdeck-stores[postgres]``), so choosing the feature -- a ``postgresql://`` store, a
    Redis session -- without them fails here, saying what to install, instead of with the bare
    ``ModuleNotFoundError`` of a driver the user never named. It is also an
    :class:`ImportError`, like :class:`PluginNotInstalledError`. ``feature`` is what was asked
    for, ``distribution`` and ``extra`` what provides it, ``missing`` the module that did not
    import and ``requirement`` the line to install (``agentdeck-stores[postgres]``).
    """

    def __init__(
        self,
        *,
        feature: str,
        distribution: str,
        extra: str,
        missing: str,
        setting: str | None = None,
    ) -> None:
        requirement = f"{distribution}[{extra}]"
        super().__init__(
            f"{feature} needs {missing!r}, which is not installed; install it with: "
            f"pip install '{requirement}'",
            setting=setting,
            accepted=(requirement,),
        )
        self.feature = feature
        self.distribution = distribution
        self.extra = extra
        self.missing = missing
        self.requirement = requirement


class ContextTypeError(ConfigError):
    """A callable requires a context type the deck does not provide.

    Raised by ``Deck.build()`` (and at construction when an instance is passed where a type
    belongs). A subclass of :class:`ConfigError` so code catching that around ``build()`` keeps
    working.
    """

    def __init__(
        self,
        message: str,
        *,
        callable_name: str | None = None,
        required: str | None = None,
        provided: str | None = None,
    ) -> None:
        super().__init__(message, setting="context")
        self.callable_name = callable_name
        self.required = required
        self.provided = provided


# --------------------------------------------------------------------------- input


class InvalidInputError(AgentDeckError):
    """Input that does not fit what was addressed: wrong shape for a workflow, a bad block list."""

    def __init__(self, message: str, *, name: str | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.name = name
        self.field = field


class ContentTooLargeError(AgentDeckError):
    """An inline content block over the inline cap.

    Raised wherever a block comes into being: constructing it, validating a dict, and parsing
    JSON -- including a whole event (``Event.from_json``), where it is raised as itself rather than
    as an :class:`EventSchemaError`, so one ``except`` handles the cap whichever door the block
    came through. ``size`` is the decoded size in bytes, ``limit`` the cap.

    Inline bytes land in an append-only log and replay down every stream of the run, so anything
    larger belongs in a ``ResourceBlock``.
    """

    def __init__(self, *, block_type: str, size: int, limit: int) -> None:
        super().__init__(
            f"{block_type} block carries {size} bytes inline, over the {limit}-byte cap; "
            "store the bytes elsewhere and send a ResourceBlock that points at them"
        )
        self.block_type = block_type
        self.size = size
        self.limit = limit


class EventSchemaError(AgentDeckError):
    """An event (or its JSON) that does not fit the event schema.

    Unknown *kinds* are not errors (they parse as ``UnknownEvent``); a malformed *known* payload,
    an envelope whose kind and payload disagree, or another schema major version is. ``kind`` is
    the payload kind that was malformed when it is known, ``field`` the dotted path of the first
    offending field (``payload.message_id``) when one field is to blame.
    """

    def __init__(self, message: str, *, kind: str | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.field = field


# --------------------------------------------------------------------------- lookup


def did_you_mean(name: str, candidates: Sequence[str]) -> str:
    """``"; did you mean 'refund'?"`` for the candidates closest to a mistyped ``name`` (by
    :func:`difflib.get_close_matches`, case-insensitively), or ``""`` when none is close."""
    import difflib

    folded = {candidate.casefold(): candidate for candidate in candidates if candidate != name}
    close = difflib.get_close_matches(name.casefold(), list(folded), n=3, cutoff=0.6)
    if not close:
        return ""
    quoted = [f"'{folded[match]}'" for match in close]
    return f"; did you mean {' or '.join(quoted)}?"


class NotFoundError(AgentDeckError):
    """A name, run or key this deck (or namespace) has never heard of.

    ``available`` lists what does exist when the set is small and known (catalog names).
    """

    def __init__(
        self,
        message: str,
        *,
        what: str,
        name: str | None = None,
        namespace: str | None = None,
        available: Sequence[str] | None = None,
    ) -> None:
        if name is not None and available and "did you mean" not in message:
            message += did_you_mean(name, list(available))
        super().__init__(message)
        self.what = what
        self.name = name
        self.namespace = namespace
        self.available = tuple(available) if available is not None else None


# --------------------------------------------------------------------------- runs


class RunStateError(AgentDeckError):
    """An operation the run's current status does not allow.

    ``status`` is the run's status when refused (``None`` if it has none yet); ``accepted`` names
    the statuses in which the operation would have been legal, and ``hint`` the call that is right
    in the current one, when there is such a call (``"resume"`` for answering a paused run).

    ``refusal`` names the situation in one word, the same in Python, over HTTP (the 409 body's
    ``reason``) and on the command line: ``"status"`` here (the status does not allow it), and
    ``"answered"``, ``"cancelled"`` or ``"finished"`` for the subclasses that say what happened
    to a run an answer or a control verb came too late for.
    """

    refusal: ClassVar[str] = "status"

    def __init__(
        self,
        message: str,
        *,
        run_id: str,
        status: RunStatus | None,
        accepted: Sequence[RunStatus] = (),
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.run_id = run_id
        self.status = status
        self.accepted = tuple(accepted)
        self.hint = hint


class AlreadyAnsweredError(RunStateError):
    """The question was answered first by another caller, with a different value.

    An answer that loses a race is told so rather than returning as if it had been recorded.
    ``interrupt_id`` is the question, ``origin`` who answered it (``"human"``, ``"policy"``, or
    what the winner's ``answer.recorded`` says) and ``answered_seq`` the seq of that event; the
    winner's value is deliberately not carried: it may be anything another person typed.
    Retrying the very answer that was recorded is not refused: it returns quietly.
    """

    refusal: ClassVar[str] = "answered"

    def __init__(
        self,
        *,
        run_id: str,
        interrupt_id: str,
        origin: str,
        answered_seq: int,
        status: RunStatus | None,
    ) -> None:
        super().__init__(
            f"interrupt '{interrupt_id}' of run '{run_id}' was already answered, first "
            f"(origin {origin}, event {answered_seq}); this answer was not recorded",
            run_id=run_id,
            status=status,
            accepted=(RunStatus.WAITING_ANSWER,),
        )
        self.interrupt_id = interrupt_id
        self.origin = origin
        self.answered_seq = answered_seq


class RunFinishedError(RunStateError):
    """A verb (answer, pause, resume, cancel) reached a run that has already finished.

    ``status`` is the finished status; ``verb`` the verb that came too late (``"answer"``,
    ``"pause"``, ``"resume"`` or ``"cancel"``). Nothing was recorded. A cancelled run raises the
    subclass :class:`RunCancelledError`.
    """

    refusal: ClassVar[str] = "finished"

    def __init__(
        self, *, run_id: str, status: RunStatus, verb: str, ended: str | None = None
    ) -> None:
        super().__init__(
            f"run '{run_id}' has already {ended or status.value}, so there is nothing to "
            f"{verb}; nothing was recorded",
            run_id=run_id,
            status=status,
            accepted=(RunStatus.RUNNING, RunStatus.PAUSED, RunStatus.WAITING_ANSWER),
        )
        self.verb = verb


class RunCancelledError(RunFinishedError):
    """A verb reached a run that was cancelled first (by another caller, or by its parent).

    ``cancel_reason`` is the recorded cancellation reason, when there is one.
    """

    refusal: ClassVar[str] = "cancelled"

    def __init__(self, *, run_id: str, verb: str, cancel_reason: str | None = None) -> None:
        super().__init__(
            run_id=run_id,
            status=RunStatus.CANCELLED,
            verb=verb,
            ended="been cancelled" + (f" ({cancel_reason})" if cancel_reason else ""),
        )
        self.cancel_reason = cancel_reason


class RunSuspendedError(RunStateError):
    """``await run`` on a run that stopped without finishing (paused, or waiting for an answer).

    ``pending`` carries the open interrupt for ``WAITING_ANSWER`` and is ``None`` for a pause.
    """

    def __init__(self, *, run_id: str, status: RunStatus, pending: Any = None) -> None:
        # The status decides what to say, not ``pending``: an interrupt's payload may itself be
        # ``None``, and a waiting run must still be told to answer, not to resume.
        waiting = status is RunStatus.WAITING_ANSWER
        super().__init__(
            f"run '{run_id}' is {status.value}, not finished: "
            + (
                "answer it with run.answer(...), or cancel it"
                if waiting
                else "continue it with run.resume(), or cancel it"
            ),
            run_id=run_id,
            status=status,
            accepted=(RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED),
            hint="answer" if waiting else "resume",
        )
        self.pending = pending


class RunFailedError(RunStateError):
    """``await run`` (or ``deck.run``) on a run that ended without completing.

    ``status`` is ``FAILED`` or ``CANCELLED``; ``error_code`` is the ``run.failed`` code
    (``tool_error``, ``deadline``, ...) and ``None`` for a cancelled run; ``reason`` is the
    recorded message or cancellation reason. The run's log holds the rest.
    """

    def __init__(
        self,
        *,
        run_id: str,
        status: RunStatus,
        error_code: str | None = None,
        reason: str | None = None,
        where: str | None = None,
    ) -> None:
        what = (
            f"failed ({error_code}{' in ' + where if where else ''})"
            if error_code is not None
            else "was cancelled"
        )
        super().__init__(
            f"run '{run_id}' {what}" + (f": {reason}" if reason else ""),
            run_id=run_id,
            status=status,
            accepted=(),
        )
        self.error_code = error_code
        self.reason = reason
        self.where = where


class SessionBusyError(AgentDeckError):
    """A session already has a turn in flight, so a new run cannot start on it.

    ``holder_run_id`` is the run holding the session, ``holder_status`` its status (which says
    what to do: wait for a running one, resume a paused one, answer a waiting one, or cancel it).
    """

    def __init__(
        self,
        *,
        session_id: str,
        holder_run_id: str,
        holder_status: RunStatus | None,
        run_id: str | None = None,
    ) -> None:
        actions: dict[RunStatus | None, str] = {
            RunStatus.RUNNING: "wait for it to finish, or cancel it",
            RunStatus.PAUSED: "it is paused: resume it or cancel it first",
            RunStatus.WAITING_ANSWER: "it is waiting for an answer: answer it or cancel it first",
        }
        action = actions.get(holder_status, "wait for it to finish, or cancel it")
        starting = f"run '{run_id}'" if run_id else "a new run"
        super().__init__(
            f"session '{session_id}' already has run '{holder_run_id}' in flight, "
            f"so {starting} cannot start on it; {action}"
        )
        self.session_id = session_id
        self.holder_run_id = holder_run_id
        self.holder_status = holder_status
        self.run_id = run_id


class DuplicateKeyError(AgentDeckError):
    """A ``(namespace, key)`` already belongs to a run; keys are claimed once, for good."""

    def __init__(self, *, namespace: str | None, key: str, holder_run_id: str) -> None:
        where = f"namespace '{namespace}'" if namespace is not None else "the default namespace"
        super().__init__(
            f"key '{key}' in {where} already belongs to run '{holder_run_id}'; "
            "address that run with runs.get(namespace=..., key=...) instead of starting another"
        )
        self.namespace = namespace
        self.key = key
        self.holder_run_id = holder_run_id


class AnswerRefusedError(AgentDeckError):
    """An answer that does not fit what the interrupt declared (schema or options).

    The run stays parked; ``reason`` names what was expected and never echoes the value.
    """

    def __init__(self, *, run_id: str, interrupt_id: str, reason: str) -> None:
        super().__init__(
            f"answer to interrupt '{interrupt_id}' of run '{run_id}' refused: {reason}; "
            "the run is still waiting, answer again with a value that fits"
        )
        self.run_id = run_id
        self.interrupt_id = interrupt_id
        self.reason = reason


class ReplayError(AgentDeckError):
    """A run cannot be continued from durable state.

    Raised when the engine can only park in memory and the process that held it is gone, or when
    the code a durable run started with has changed since. ``reason`` says which.
    """

    def __init__(self, message: str, *, run_id: str, reason: str) -> None:
        super().__init__(message)
        self.run_id = run_id
        self.reason = reason


class ForkUnsupportedError(AgentDeckError):
    """A fork asked of an engine that cannot start a run from a recorded point of another.

    Engines declare it (``EngineCapabilities.forks``); one that does not can still retry a run,
    by starting it again with the same input. ``engine`` names the engine that refused.
    """

    def __init__(self, *, run_id: str, engine: str, why: str | None = None) -> None:
        super().__init__(
            f"run '{run_id}' cannot be forked: the '{engine}' engine "
            + (why or "does not fork runs; retry it instead, which starts it again")
        )
        self.run_id = run_id
        self.engine = engine
        self.why = why


# --------------------------------------------------------------------------- backends


class StoreError(AgentDeckError):
    """A storage backend failed (unreachable, refused, corrupted).

    Driver exceptions never escape a store: they arrive as this, naming the backend and its URL
    with any password redacted (redacted here, so a store that passes its raw URL leaks nothing).
    ``retryable`` says whether trying again may succeed.
    """

    def __init__(
        self,
        message: str,
        *,
        backend: str,
        url: str | None = None,
        retryable: bool = False,
    ) -> None:
        url = _redact_password(url) if url else url
        where = f"{backend} store" + (f" at {url}" if url else "")
        super().__init__(f"{where}: {message}")
        self.backend = backend
        self.url = url
        self.retryable = retryable


_QUERY_SECRET = re.compile(r"(?i)([?&](?:password|passwd|pwd)=)[^&#]*")


def _redact_password(url: str) -> str:
    """``url`` with its password replaced by ``***``: in the authority (``user:secret@host``) and
    in a ``password=`` query parameter.

    Done by hand rather than with ``urllib.parse``, and generously: a password with an unescaped
    ``/`` or ``#`` in it, or a URL ``urllib`` cannot parse, is still redacted. Over-redacting an
    error message is harmless; leaking a password into a log is not.
    """
    url = _QUERY_SECRET.sub(r"\1***", url)
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    end = rest.find("?")
    head, tail = (rest, "") if end < 0 else (rest[:end], rest[end:])
    userinfo, at, host = head.rpartition("@")
    if not at or ":" not in userinfo:
        return url
    user = userinfo.split(":", 1)[0]
    return f"{scheme}://{user}:***@{host}{tail}"
