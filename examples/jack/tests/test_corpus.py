"""The corpus: which files it reads, how pages split into sections, slugs, search and read."""

from __future__ import annotations

from pathlib import Path

import pytest
from agentdeck.errors import ConfigError, NotFoundError

from jack.corpus import DocsCorpus, find_docs_root, split_sections

REPOSITORY = find_docs_root([Path(__file__).resolve().parent])


def test_reads_the_docs_tree_and_package_readmes_only(corpus: DocsCorpus) -> None:
    assert sorted(corpus.pages) == [
        "README",
        "docs/reference/events",
        "docs/runs-and-control",
        "docs/sessions",
        "docs/workflows",
        "plugins/agentdeck_demo/README",
    ]  # notes/ignored.md matches no pattern


def test_a_hash_line_inside_fenced_code_is_not_a_heading(corpus: DocsCorpus) -> None:
    page = corpus.pages["docs/runs-and-control"]
    assert [s.heading for s in page.sections] == [
        "Runs and control",
        "Pausing and resuming a run",
        "Cancelling a run",
    ]
    assert "# a comment line in code" in page.sections[1].text


def test_sections_know_their_trail_and_github_anchor(corpus: DocsCorpus) -> None:
    paused = corpus.pages["docs/reference/events"].sections[2]
    assert paused.slug == "docs/reference/events#run-paused"  # the page's own {#anchor}
    assert paused.heading == "`run.paused`"
    assert paused.title == "Events reference > Kinds > `run.paused`"
    pausing = corpus.pages["docs/runs-and-control"].sections[1]
    assert pausing.slug == "docs/runs-and-control#pausing-and-resuming-a-run"


def test_repeated_headings_get_distinct_anchors(corpus: DocsCorpus) -> None:
    anchors = [s.anchor for s in corpus.pages["plugins/agentdeck_demo/README"].sections]
    assert anchors == ["agentdeck-demo", "install", "install-1"]


def test_text_before_the_first_heading_is_a_section_too() -> None:
    title, sections = split_sections("README", "Intro.\n\n# AgentDeck\n\nBody.\n")
    assert title == "AgentDeck"
    assert [(s.heading, s.body) for s in sections] == [
        ("AgentDeck", "Intro."),
        ("AgentDeck", "Body."),
    ]
    assert sections[1].anchor == "agentdeck-1"


def test_a_question_about_pausing_finds_the_run_control_page_first(corpus: DocsCorpus) -> None:
    hits = corpus.search("How do I pause a run?")
    assert hits[0].section.slug == "docs/runs-and-control#pausing-and-resuming-a-run"
    # The one-line reference entry for run.paused is found too, ranked below the explanation.
    assert "docs/reference/events#run-paused" in [hit.section.slug for hit in hits[1:]]


def test_an_off_topic_question_finds_nothing(corpus: DocsCorpus) -> None:
    assert corpus.search("kubernetes helm chart") == []


def test_read_returns_a_page_or_one_section(corpus: DocsCorpus) -> None:
    assert corpus.read("docs/sessions").startswith("# Sessions\n")
    section = corpus.read("docs/runs-and-control#cancelling-a-run")
    assert section.startswith("## Cancelling a run")
    assert "Pausing" not in section


def test_an_unknown_slug_is_refused_with_the_nearest_ones(corpus: DocsCorpus) -> None:
    with pytest.raises(NotFoundError) as refused:
        corpus.read("docs/session")
    assert refused.value.available is not None
    assert "docs/sessions" in refused.value.available
    # Slugs are looked up, never opened as paths: a traversal is just an unknown slug.
    with pytest.raises(NotFoundError):
        corpus.read("../../etc/passwd")


def test_a_root_with_no_documentation_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as refused:
        DocsCorpus.from_directory(tmp_path)
    assert refused.value.setting == "JACK_DOCS_ROOT"


def test_on_agentdecks_own_docs_a_pause_question_finds_run_control() -> None:
    assert REPOSITORY is not None, "these tests live in the AgentDeck checkout Jack reads"
    corpus = DocsCorpus.from_directory(REPOSITORY)
    hits = corpus.search("How do I pause a run?")
    titles = [hit.section.title.lower() for hit in hits]
    assert any("control" in title for title in titles), titles
    for hit in hits:  # every slug search hands out is one read_doc accepts
        assert corpus.read(hit.section.slug) == hit.section.text
