"""The engine contract's rules, and the judgement of each payload an engine yields.

The rules are what :func:`~agentdeck.testing.engine.driver.drive` reports a breach of, as a
:class:`Violation` naming one :class:`ContractRule`. Most of them are about one yielded item: a
payload may only be a model of a known kind, never a lifecycle kind the runtime writes, only an
edge the run's status allows, and — once a control directive has been handed out — only the
directive's own payloads, in order. :func:`yield_violation` is that judgement, pure and in one
place; the driver applies it to every item before recording it, and adds the rules that depend on
how the play unfolds (ending, draining, closing, safe points).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from agentdeck.model.payloads import PAYLOAD_TYPES, Payload
from agentdeck.model.status import is_transition_allowed
from agentdeck.ports import ControlDirective
from agentdeck.vocabulary import SUSPENDING_KINDS, TERMINAL_KINDS, RunStatus

__all__ = ["FINAL_KINDS", "RESERVED_KINDS", "ContractRule", "Violation", "yield_violation"]

FINAL_KINDS = TERMINAL_KINDS | SUSPENDING_KINDS

RESERVED_KINDS = frozenset(payload.KIND for payload in PAYLOAD_TYPES if payload.RESERVED)
"""Kinds defined and read but produced by nothing in this release (``input.appended``): an engine
that yields one anyway is recorded and folded like any content event (see
:func:`~agentdeck.testing.engine.scripted.reserved_kinds_script` and
:func:`~agentdeck.testing.engine.checks.check_folded_like_content`)."""
"""Kinds that end a play: after one of these the engine yields nothing more."""

_RUNTIME_KINDS = frozenset({"run.started", "run.resumed"})
"""Lifecycle kinds only the runtime writes."""


class ContractRule(StrEnum):
    """The engine-contract rules :func:`drive` checks while it plays."""

    NOT_A_PAYLOAD = "not_a_payload"
    """Yielded something that is not a payload model of a known kind."""
    NOT_SERIALIZABLE = "not_serializable"
    """Yielded a payload that does not survive the JSON round trip a store makes."""
    RUNTIME_LIFECYCLE = "runtime_lifecycle"
    """Yielded ``run.started`` or ``run.resumed``, which only the runtime writes."""
    ILLEGAL_TRANSITION = "illegal_transition"
    """Yielded a lifecycle event the run's status does not allow."""
    AFTER_FINAL = "after_final"
    """Yielded, raised or kept running after its terminal or suspending payload."""
    NO_FINAL = "no_final"
    """Stopped without a terminal or suspending payload (and without raising)."""
    IGNORED_DIRECTIVE = "ignored_directive"
    """Did not yield exactly a control directive's payloads after receiving it."""
    CHECKPOINT_AFTER_DIRECTIVE = "checkpoint_after_directive"
    """Reached another safe point after it was told to stop at one."""
    UNDECLARED_SAFE_POINT = "undeclared_safe_point"
    """Reached a safe point its capabilities do not declare."""
    CLOSE_FAILED = "close_failed"
    """Raised when its iterator was closed."""


@dataclass(frozen=True, slots=True)
class Violation:
    """One breach of the engine contract, as :func:`drive` saw it happen."""

    rule: ContractRule
    detail: str

    def __str__(self) -> str:
        return f"{self.rule.value}: {self.detail}"


def yield_violation(
    item: object,
    *,
    status: RunStatus | None,
    due: Payload | None = None,
    directive: ControlDirective | None = None,
    directive_at: int | None = None,
) -> Violation | None:
    """The first rule an engine breaks by yielding ``item`` now, or ``None`` if it may.

    :param status: the run's status before ``item``.
    :param due: the next payload of the control ``directive`` the engine was handed at safe point
        ``directive_at``, while some of them are still owed.

    Whether the payload survives the JSON round trip a store makes
    (:attr:`ContractRule.NOT_SERIALIZABLE`) is found by recording it, not here.
    """
    if not isinstance(item, PAYLOAD_TYPES):
        return Violation(
            ContractRule.NOT_A_PAYLOAD,
            f"yielded a {type(item).__name__}; engines yield payload models of known kinds "
            "(agentdeck.model.events; Custom for application data)",
        )
    kind = item.kind
    if kind in _RUNTIME_KINDS:
        return Violation(
            ContractRule.RUNTIME_LIFECYCLE, f"yielded {kind}, which the runtime writes"
        )
    if due is not None and item != due:
        verb = directive.verb if directive is not None else None
        return Violation(
            ContractRule.IGNORED_DIRECTIVE,
            f"told to {verb} at safe point #{directive_at}, yielded {kind} where {due.kind} "
            "was due",
        )
    if not is_transition_allowed(status, kind):
        return Violation(
            ContractRule.ILLEGAL_TRANSITION, f"yielded {kind} while the run is {status}"
        )
    return None
