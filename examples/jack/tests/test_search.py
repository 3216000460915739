"""The BM25F ranking itself, on documents small enough to reason about by hand."""

from __future__ import annotations

from jack.search import Index, terms

BODY_ONLY = {"body": 1.0}


def _index(*bodies: str) -> Index:
    return Index(({"body": body} for body in bodies), weights=BODY_ONLY)


def test_inflections_of_a_word_meet_on_one_term() -> None:
    assert len(set(terms("pause paused pausing pauses Pause()"))) == 1
    assert set(terms("run runs running")) == set(terms("run"))
    assert set(terms("cancel cancelled")) == set(terms("cancel"))


def test_identifiers_index_their_parts_and_stop_words_are_dropped() -> None:
    assert terms("run.pause() and session_id") == [*terms("run pause"), *terms("session id")]
    assert terms("how do I do it") == []


def test_a_document_sharing_no_term_with_the_query_is_not_returned() -> None:
    index = _index("pausing a run", "sessions and memory")
    assert [hit.doc for hit in index.search("pause")] == [0]
    assert index.search("kubernetes") == []


def test_a_rare_term_outweighs_a_common_one() -> None:
    # "run" is in every document, "cancel" in one: the query's rare word decides the order.
    index = _index("run run run the run", "cancel the run", "run a workflow")
    assert index.search("cancel run")[0].doc == 1


def test_a_heading_counts_for_more_than_the_same_word_in_a_body() -> None:
    body = "the engine stops at a safe point and then it waits for control"
    index = Index(
        [{"heading": "Safe points", "body": body}, {"heading": "Control", "body": body}],
        weights={"heading": 2.0, "body": 1.0},
    )
    assert index.search("control")[0].doc == 1
    assert index.search("safe point")[0].doc == 0


def test_a_one_line_stub_does_not_outrank_the_section_that_explains() -> None:
    # Both headings name the topic; the stub's short body must not make its single mention
    # count as much as a section that discusses it (per-field length normalisation).
    stub = {"heading": "run.paused", "body": "Suspends the run."}
    guide = {
        "heading": "Pausing a run",
        "body": "run.pause() asks the run to pause at its next safe point. A paused run keeps "
        "its state and resume() continues it; a paused run may also be cancelled. Pausing "
        "twice is a no-op, and the run records both the request and the pause itself.",
    }
    index = Index([stub, guide], weights={"heading": 2.0, "body": 1.0})
    assert index.search("How do I pause a run?")[0].doc == 1


def test_limit_caps_the_results_and_ties_keep_index_order() -> None:
    index = _index("pause", "pause", "pause")
    assert [hit.doc for hit in index.search("pause", limit=2)] == [0, 1]
    assert index.search("pause", limit=0) == []
