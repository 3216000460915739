"""BM25F ranking over short documents, written out in full because it is small.

The corpus is a few dozen Markdown pages, split into a few hundred sections: a scan of an
in-memory inverted index answers a query in well under a millisecond, there is no index to keep
in sync with the pages, and every score can be explained from the formula. An embedding store
would add a network round trip and a staleness problem to buy nothing at this size.

A document is a set of named fields (a heading, the headings above it, its text), each with a
weight: that is how a heading counts for more than the paragraph under it.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = ["Hit", "Index", "terms"]

_WORD = re.compile(r"[a-z0-9]+")

# Words that occur everywhere in prose and say nothing about which section answers a question.
# Deliberately short: "run", "pause", "not" and the like carry meaning in these docs.
_STOPWORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "so",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "this",
        "to",
        "was",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "work",
        "you",
        "your",
    }
)


def _stem(word: str) -> str:
    """Fold the inflections English documentation uses most onto one term.

    Not a real stemmer: just enough that "paused", "pausing", "pauses" and "pause" meet, and
    "runs"/"running" meet "run". Over-stemming a rare word costs little at this corpus size;
    missing "paused" for "pause" would cost the answer.
    """
    if len(word) <= 3 or word.isdigit():
        return word
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    else:
        if word.endswith("ies") and len(word) > 4:
            word = word[:-3] + "y"
        elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
            word = word[:-1]
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]  # pause and paus(ed) meet on "paus"
    if len(word) >= 4 and word[-1] == word[-2]:
        word = word[:-1]  # running -> runn -> run, cancelled -> cancell -> cancel
    return word


def terms(text: str) -> list[str]:
    """The index terms of ``text``: lower-cased words, stop words dropped, lightly stemmed.

    Identifiers split at punctuation, so ``run.pause()`` and ``session_id`` index their parts.
    """
    return [_stem(word) for word in _WORD.findall(text.lower()) if word not in _STOPWORDS]


@dataclass(frozen=True, slots=True)
class Hit:
    """One ranked document: its position in the index and its BM25F score."""

    doc: int
    score: float


class Index:
    """A BM25F index: documents made of named fields, each field weighted and length-normalised
    on its own before the term frequencies are combined and saturated.

    Normalising per field is what keeps a two-word heading over a one-line stub from outranking
    a section that explains the same thing: the stub's short body no longer shortens the whole
    document, so its single mention cannot saturate the way a real discussion does. ``k1``
    bounds how much repeating a term keeps paying; ``b`` how much a long field is discounted.
    The defaults are the textbook ones.
    """

    def __init__(
        self,
        documents: Iterable[Mapping[str, str]],
        weights: Mapping[str, float],
        *,
        k1: float = 1.2,
        b: float = 0.75,
    ) -> None:
        self._k1 = k1
        self._weights = dict(weights)
        fields = list(self._weights)
        counted: list[dict[str, tuple[Counter[str], int]]] = []
        document_frequency: Counter[str] = Counter()
        for document in documents:
            per_field: dict[str, tuple[Counter[str], int]] = {}
            seen: set[str] = set()
            for field in fields:
                words = terms(document.get(field, ""))
                per_field[field] = (Counter(words), len(words))
                seen.update(words)
            counted.append(per_field)
            document_frequency.update(seen)
        self._size = len(counted)
        averages = {
            field: (sum(doc[field][1] for doc in counted) / self._size if self._size else 0.0)
            for field in fields
        }
        # Per document: term -> weighted, length-normalised frequency summed over its fields.
        self._frequencies: list[dict[str, float]] = []
        for doc in counted:
            combined: dict[str, float] = {}
            for field, (counts, length) in doc.items():
                average = averages[field] or 1.0
                norm = 1 - b + b * length / average
                for term, tf in counts.items():
                    combined[term] = combined.get(term, 0.0) + self._weights[field] * tf / norm
            self._frequencies.append(combined)
        self._idf = {
            term: math.log((self._size - n + 0.5) / (n + 0.5) + 1.0)
            for term, n in document_frequency.items()
        }

    def __len__(self) -> int:
        return self._size

    def search(self, query: str, *, limit: int = 5) -> list[Hit]:
        """The best ``limit`` documents for ``query``, best first; ties keep index order.

        A document that shares no term with the query is never returned, so an off-topic
        question gets an empty list rather than the least bad guess.
        """
        wanted = [term for term in dict.fromkeys(terms(query)) if term in self._idf]
        if not wanted or limit < 1:
            return []
        hits: list[Hit] = []
        for doc, frequencies in enumerate(self._frequencies):
            score = 0.0
            for term in wanted:
                tf = frequencies.get(term, 0.0)
                if tf:
                    score += self._idf[term] * tf * (self._k1 + 1) / (tf + self._k1)
            if score > 0:
                hits.append(Hit(doc=doc, score=score))
        hits.sort(key=lambda hit: (-hit.score, hit.doc))
        return hits[:limit]
