"""The application itself: one agent, two tools, one Deck whose context type is the corpus.

Everything Jack-specific is *what* Jack does (how to search, when to read, what to say when the
documentation is silent). Run control, the event log, sessions, budgets and streaming are the
Deck's, and nothing here reaches for them.
"""

from __future__ import annotations

from agentdeck import Agent, Deck, Settings

from jack.corpus import DocsCorpus
from jack.settings import JackSettings
from jack.tools import read_doc, search_docs

__all__ = ["AGENT", "DEFAULT_MODEL", "INSTRUCTIONS", "build_deck", "jack_agent", "model_for"]

AGENT = "jack"
DEFAULT_MODEL = "gpt-4.1-mini"

INSTRUCTIONS = """\
You are Jack, the documentation assistant of AgentDeck, a Python harness for AI agents.
Answer questions about AgentDeck from its documentation only:

1. Call search_docs with the key words of the question.
2. Call read_doc on the most relevant result (a section slug like 'docs/page#anchor' is
   cheaper than a whole page); read another only if the first does not answer.
3. Answer briefly, with a short code example when one helps, and end with the slugs you used.

If the documentation does not cover the question, say so plainly and suggest where to look.
Never invent an API, a setting or a behaviour that the pages you read do not show. Questions
that are not about AgentDeck get a one-line refusal.
"""


def model_for(settings: Settings) -> str:
    """The model Jack asks: ``JACK_MODEL``, else ``OPENAI_MODEL``, else :data:`DEFAULT_MODEL`."""
    return settings.section(JackSettings).model or settings.env.get("OPENAI_MODEL") or DEFAULT_MODEL


def jack_agent(model: str | None = None) -> Agent:
    return Agent(
        name=AGENT,
        description="Answers questions about AgentDeck from its documentation.",
        instructions=INSTRUCTIONS,
        tools=[search_docs, read_doc],
        model=model,
    )


def build_deck(settings: Settings) -> Deck:
    """Jack's Deck, built (validated, compiled) but not open.

    ``context=DocsCorpus`` declares the type every run carries, so ``build()`` checks both
    tools' ``ToolCtx[DocsCorpus]`` against it at startup rather than mid-answer.
    """
    deck = Deck(agents=[jack_agent(model_for(settings))], context=DocsCorpus, settings=settings)
    deck.build()
    return deck
