"""What every event store needs from the core, so a store author writes only their backend.

The pieces here sit on the ports and the run model and are shared by the embedded stores, the
first-party store plugins and third-party stores alike, so a store gets the same checks,
refusals and wire formats by calling them rather than by re-writing them:

* :mod:`~agentdeck.storage.payloads` -- what ``append`` and ``open_run`` accept;
* :mod:`~agentdeck.storage.batch` -- the append-batch check (``expect``, ``expect_seq``, the
  designed transitions) with its canonical refusal, worded in :mod:`~agentdeck.storage.refusals`;
* :mod:`~agentdeck.storage.folding` -- seqs, batch times and the folded status a batch leaves;
* :mod:`~agentdeck.storage.claims` -- when an open may step over its session's holder;
* :mod:`~agentdeck.storage.records` -- a run's :class:`~agentdeck.ports.RunRecord` from the
  store's own run object;
* :mod:`~agentdeck.storage.listing` and :mod:`~agentdeck.storage.cursors` -- listing filters,
  pages and the run cursor codec;
* :mod:`~agentdeck.storage.following` -- a follower's loop over the pages a store reads;
* :mod:`~agentdeck.storage.verbs` -- the control-verb check of a control port;
* :mod:`~agentdeck.storage.leases` -- the TTL check of a lease port;
* :mod:`~agentdeck.storage.codec` -- reading stored events back, fast.
"""

from agentdeck.storage.batch import batch_refusal, check_batch
from agentdeck.storage.claims import may_step_over
from agentdeck.storage.cursors import decode_cursor, encode_cursor
from agentdeck.storage.folding import EventRecorder, append_time, compose_batch, started_event
from agentdeck.storage.following import NextEvents, follow_pages
from agentdeck.storage.leases import checked_ttl
from agentdeck.storage.listing import (
    checked_limit,
    prunable,
    run_filter,
    run_page,
    take_page,
)
from agentdeck.storage.payloads import (
    KNOWN_PAYLOADS,
    checked_payload,
    checked_payloads,
    checked_started,
)
from agentdeck.storage.records import RunFacts, StoredRun, record_of
from agentdeck.storage.refusals import (
    accepting,
    moved_on,
    no_such_run,
    not_as_expected,
    refuse_transition,
    run_id_taken,
)
from agentdeck.storage.verbs import checked_verb

__all__ = [
    "KNOWN_PAYLOADS",
    "EventRecorder",
    "NextEvents",
    "RunFacts",
    "StoredRun",
    "accepting",
    "append_time",
    "batch_refusal",
    "check_batch",
    "checked_limit",
    "checked_payload",
    "checked_payloads",
    "checked_started",
    "checked_ttl",
    "checked_verb",
    "compose_batch",
    "decode_cursor",
    "encode_cursor",
    "follow_pages",
    "may_step_over",
    "moved_on",
    "no_such_run",
    "not_as_expected",
    "prunable",
    "record_of",
    "refuse_transition",
    "run_filter",
    "run_id_taken",
    "run_page",
    "started_event",
    "take_page",
]
