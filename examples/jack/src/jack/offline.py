"""A stand-in for the model, so Jack runs end to end with no API key and no network.

It is AgentDeck's loopback OpenAI-compatible server with a script written per question: search
the docs for the question, read the best section, answer by quoting it. The real engine, the
real tools and the real event log all run; only the model's judgement is replaced by that fixed
plan, and every offline answer says so. Set ``OPENAI_API_KEY`` to hear a model instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType

from agentdeck_openai.testing import (
    LoopbackModelServer,
    ModelRequest,
    Rule,
    Script,
    reply,
    tool_call,
)

from jack.corpus import DocsCorpus

__all__ = ["OFFLINE_NOTE", "StandInModel"]

OFFLINE_NOTE = "(Offline stand-in model: quoted from the docs, not written. Set OPENAI_API_KEY.)"
_QUOTE_CHARS = 700


def _tool_results_since_question(request: ModelRequest) -> int:
    """How many tool results the conversation holds after its last user message: which step
    of the plan this request is at, whatever happened in earlier turns of a session."""
    items = request.items
    last_user = max((i for i, item in enumerate(items) if item.get("role") == "user"), default=-1)
    return sum(
        1
        for item in items[last_user + 1 :]
        if item.get("type") == "function_call_output" or item.get("role") == "tool"
    )


def _at_step(question: str, step: int) -> Rule:
    def rule(request: ModelRequest) -> bool:
        return request.last_user_text == question and _tool_results_since_question(request) == step

    rule.__name__ = f"step_{step}"
    return rule


class StandInModel:
    """The loopback server plus :meth:`prepare`, which scripts the next question's turns.

    Questions may be prepared concurrently: each turn is matched by the question it answers and
    the step it is at, so two conversations never take each other's turns.
    """

    def __init__(self, corpus: DocsCorpus) -> None:
        self._corpus = corpus
        self._server = LoopbackModelServer(Script([]))

    def __enter__(self) -> StandInModel:
        self._server.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.stop()

    def env(self) -> Mapping[str, str]:
        """The ``OPENAI_*`` settings that point a deck at the stand-in."""
        return self._server.env()

    def prepare(self, question: str) -> None:
        """Script the model's three moves for ``question``: search, read, quote."""
        self._server.clear_requests()  # a long-running demo server would otherwise keep them all
        hits = self._corpus.search(question, limit=1)
        script = self._server.script
        script.add(tool_call("search_docs", {"query": question}, when=_at_step(question, 0)))
        if not hits:
            answer = f"The AgentDeck documentation does not cover that.\n\n{OFFLINE_NOTE}"
            script.add(reply(answer, when=_at_step(question, 1)))
            return
        section = hits[0].section
        script.add(tool_call("read_doc", {"slug": section.slug}, when=_at_step(question, 1)))
        quote = section.excerpt(_QUOTE_CHARS)
        answer = f"From {section.title}:\n\n{quote}\n\nSource: {section.slug}\n{OFFLINE_NOTE}"
        script.add(reply(answer, when=_at_step(question, 2)))
