"""Jack's two tools. Plain functions: the ``ToolCtx[DocsCorpus]`` parameter is injected by the
engine and never offered to the model, which sees only ``query`` or ``slug``.

Both return text the model can act on, including when it asked for something that is not there:
a slug that does not exist comes back as a correction (with the nearest slugs), not as an
exception that would end the run.
"""

from __future__ import annotations

from agentdeck import ToolCtx
from agentdeck.errors import NotFoundError

from jack.corpus import DocsCorpus

__all__ = ["MAX_READ_CHARS", "read_doc", "search_docs"]

SEARCH_RESULTS = 5
MAX_READ_CHARS = 12_000
"""Longest text ``read_doc`` hands back. The largest README is about twice this; reading it
whole would spend a turn's token ceiling on one call, so the model is told to read a section."""


def search_docs(query: str, docs: ToolCtx[DocsCorpus]) -> str:
    """Search the AgentDeck documentation. Returns the best-matching sections, best first, each
    with the slug to pass to read_doc and the opening of its text."""
    hits = docs.data.search(query, limit=SEARCH_RESULTS)
    if not hits:
        return f"No section of the AgentDeck documentation matches {query!r}. Try other words."
    lines = []
    for rank, hit in enumerate(hits, start=1):
        section = hit.section
        lines.append(f"{rank}. {section.slug} ({section.title})\n   {section.snippet()}")
    return "\n".join(lines)


def read_doc(slug: str, docs: ToolCtx[DocsCorpus]) -> str:
    """Read AgentDeck documentation by slug: a whole page ('docs/deck-and-runs') or one section
    ('docs/deck-and-runs#budgets-and-deadlines'), as search_docs lists them."""
    try:
        text = docs.data.read(slug)
    except NotFoundError as missing:
        nearest = ", ".join(missing.available or ()) or "none; search first"
        return f"There is no documentation at {slug!r}. Nearest slugs: {nearest}."
    if len(text) <= MAX_READ_CHARS:
        return text
    return (
        text[:MAX_READ_CHARS]
        + f"\n\n[cut at {MAX_READ_CHARS} of {len(text)} characters: read one section instead, "
        "with a slug from search_docs]"
    )
