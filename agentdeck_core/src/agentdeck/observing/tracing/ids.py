"""Trace and span ids derived from run ids: the same in every process that renders a run.

Ids are derived, not drawn at random: a run's trace id and its root's span id are the same in
every process. A child finished (and exported) before its parent can name the parent's span id,
and a run resumed by another process after a restart continues under the root the first process
exported. Sizes are the W3C ones: 32 lower-case hex digits for a trace, 16 for a span.
"""

from __future__ import annotations

import hashlib

__all__ = ["span_id_for", "trace_id_for"]


def trace_id_for(run_id: str) -> str:
    """The trace id of a top-level run: the same in every process that renders it."""
    return _hex_digest("agentdeck.trace", run_id, length=32)


def span_id_for(run_id: str, key: str) -> str:
    """The span id of one part (``key``) of a run; ``span_id_for(run_id, "run")`` is its root."""
    return _hex_digest("agentdeck.span", f"{run_id}\x00{key}", length=16)


def _hex_digest(domain: str, value: str, *, length: int) -> str:
    digest = hashlib.sha256(f"{domain}\x00{value}".encode()).hexdigest()[:length]
    # An all-zero id is invalid in W3C trace context; a hash hitting it is a curiosity, but the
    # guard costs nothing.
    return digest if digest.strip("0") else digest[:-1] + "1"
