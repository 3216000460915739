"""Jack, AgentDeck's reference application: a documentation agent over AgentDeck's own docs.

The pieces, each in its own module: :mod:`jack.corpus` (the pages and their BM25 search),
:mod:`jack.tools` (``search_docs``, ``read_doc``), :mod:`jack.agent` (the agent and its Deck),
:mod:`jack.server` (the streaming route and its limits), :mod:`jack.offline` (a stand-in model
for running without a key) and :mod:`jack.cli` (``python -m jack ask|serve``).
"""

from jack.agent import AGENT, build_deck, jack_agent
from jack.corpus import DocsCorpus
from jack.settings import JackSettings
from jack.tools import read_doc, search_docs

__all__ = [
    "AGENT",
    "DocsCorpus",
    "JackSettings",
    "build_deck",
    "jack_agent",
    "read_doc",
    "search_docs",
]
