"""search_docs and read_doc over a temporary corpus, called the way the engine calls them."""

from __future__ import annotations

import re

from agentdeck import ToolCtx

from jack.corpus import DocsCorpus
from jack.tools import MAX_READ_CHARS, read_doc, search_docs


def test_search_lists_slugs_titles_and_openings_best_first(corpus: DocsCorpus) -> None:
    found = search_docs("pause a run", ToolCtx(corpus))
    first = found.splitlines()[0]
    assert first == (
        "1. docs/runs-and-control#pausing-and-resuming-a-run "
        "(Runs and control > Pausing and resuming a run)"
    )
    assert "`await run.pause()` records a pause request" in found


def test_every_slug_search_hands_out_is_readable(corpus: DocsCorpus) -> None:
    found = search_docs("run", ToolCtx(corpus))
    slugs = re.findall(r"^\d+\. (\S+) ", found, flags=re.MULTILINE)
    assert len(slugs) == 5
    for slug in slugs:
        assert not read_doc(slug, ToolCtx(corpus)).startswith("There is no documentation")


def test_search_with_no_match_says_so(corpus: DocsCorpus) -> None:
    assert search_docs("kubernetes", ToolCtx(corpus)) == (
        "No section of the AgentDeck documentation matches 'kubernetes'. Try other words."
    )


def test_read_a_page_or_a_section(corpus: DocsCorpus) -> None:
    page = read_doc("docs/runs-and-control", ToolCtx(corpus))
    assert page.startswith("# Runs and control") and "## Cancelling a run" in page
    section = read_doc("docs/runs-and-control#cancelling-a-run", ToolCtx(corpus))
    assert section.startswith("## Cancelling a run") and "Pausing" not in section


def test_an_unknown_slug_comes_back_as_a_correction_not_an_error(corpus: DocsCorpus) -> None:
    answer = read_doc("docs/session", ToolCtx(corpus))
    assert answer.startswith("There is no documentation at 'docs/session'. Nearest slugs: ")
    assert "docs/sessions" in answer


def test_a_page_longer_than_the_cap_is_cut_with_a_pointer_to_sections() -> None:
    long_page = "# Big\n\n" + "word " * MAX_READ_CHARS
    corpus = DocsCorpus({"docs/big": long_page})
    text = read_doc("docs/big", ToolCtx(corpus))
    assert text.startswith(long_page[:MAX_READ_CHARS])
    assert text.endswith(
        f"[cut at {MAX_READ_CHARS} of {len(long_page)} characters: read one section instead, "
        "with a slug from search_docs]"
    )
