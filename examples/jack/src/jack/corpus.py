"""The documentation Jack reads: Markdown pages, split into sections, searchable with BM25.

One :class:`DocsCorpus` is built when the application starts and handed to every run as its
context (``deck.stream(..., context=corpus)``); the tools reach it through ``ToolCtx[DocsCorpus]``.
Nothing here is a module global, so a test builds a corpus from a temporary directory and two
corpora can serve side by side.

A page's slug is its path in the repository without ``.md`` (``docs/deck-and-runs``,
``plugins/agentdeck_openai/README``); a section adds the GitHub-style anchor of its heading
(``docs/deck-and-runs#budgets-and-deadlines``). Slugs are what the model passes to ``read_doc``,
and only slugs found here are ever read: nothing the model sends becomes a file path.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from agentdeck.errors import ConfigError, NotFoundError

from jack.search import Index

__all__ = [
    "DEFAULT_PATTERNS",
    "DocsCorpus",
    "Page",
    "Section",
    "SectionHit",
    "find_docs_root",
    "split_sections",
]

DEFAULT_PATTERNS: tuple[str, ...] = (
    "docs/**/*.md",
    "README.md",
    "agentdeck_core/README.md",
    "plugins/*/README.md",
    "examples/*/README.md",
)
"""What Jack reads under the repository root: the docs site, every package's README and every
example's."""

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")
"""An opening fence; its info string (```python) may follow."""
_EXPLICIT_ANCHOR = re.compile(r"\s*\{#([\w-]+)\}\s*$")
"""``## Title {#anchor}``: an anchor the page sets itself (MkDocs' attribute lists)."""
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_FIELD_WEIGHTS = {"heading": 2.0, "trail": 1.0, "body": 1.0}
"""A heading's terms count twice a body term's: a section titled "Run control" answers a
question about control better than one that mentions it in passing. The trail (the headings
above) places a section in its chapter."""


@dataclass(frozen=True, slots=True)
class Section:
    """One heading and the text under it, up to the next heading of any level."""

    page: str
    """The slug of the page it belongs to."""
    anchor: str
    heading: str
    trail: tuple[str, ...]
    """The headings above this one, outermost first (the page title, then its chapter)."""
    text: str
    """The section's Markdown, its heading line included."""

    @property
    def slug(self) -> str:
        return f"{self.page}#{self.anchor}"

    @property
    def title(self) -> str:
        """Where the section sits, for a reader: ``Page title > Chapter > Heading``."""
        return " > ".join((*self.trail, self.heading))

    @property
    def body(self) -> str:
        """The text under the heading, without HTML comments."""
        _, _, rest = self.text.partition("\n")
        return _COMMENT.sub("", rest).strip()

    def snippet(self, limit: int = 240) -> str:
        """The opening of the section on one line: enough to judge whether to read it."""
        lines = (line for line in self.body.splitlines() if not _FENCE.match(line))
        flat = " ".join(" ".join(lines).split())
        return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"

    def excerpt(self, limit: int = 700) -> str:
        """The opening paragraphs of the section, whole, as Markdown: at least the first one,
        then as many more as fit in ``limit`` characters."""
        paragraphs = re.split(r"\n\s*\n", self.body)
        kept = paragraphs[:1]
        for paragraph in paragraphs[1:]:
            if len("\n\n".join([*kept, paragraph])) > limit:
                break
            kept.append(paragraph)
        return "\n\n".join(kept)


@dataclass(frozen=True, slots=True)
class Page:
    slug: str
    title: str
    text: str
    sections: tuple[Section, ...]


@dataclass(frozen=True, slots=True)
class SectionHit:
    section: Section
    score: float


def anchor_of(heading: str) -> str:
    """GitHub's anchor for a heading: lower-cased, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[`*_~]|\[|\]\([^)]*\)", "", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _closes(fence: str, line: str) -> bool:
    """Whether ``line`` closes a block opened by ``fence``: the same character, at least as
    many of it, and nothing else on the line."""
    marker = line.strip()
    return len(marker) >= len(fence) and set(marker) == {fence[0]}


def _headings(lines: Sequence[str]) -> list[tuple[int, int, str, str | None]]:
    """``(line index, level, text, explicit anchor)`` of every heading outside fenced code."""
    fence: str | None = None
    found: list[tuple[int, int, str, str | None]] = []
    for number, line in enumerate(lines):
        if fence is not None:
            if _closes(fence, line):
                fence = None
            continue
        opening = _FENCE.match(line)
        if opening is not None:
            fence = opening.group(1)
            continue
        heading = _HEADING.match(line)
        if heading is None:
            continue
        text = heading.group(2).strip()
        explicit = _EXPLICIT_ANCHOR.search(text)
        if explicit is not None:
            text = text[: explicit.start()]
        found.append((number, len(heading.group(1)), text, explicit.group(1) if explicit else None))
    return found


def split_sections(slug: str, markdown: str) -> tuple[str, tuple[Section, ...]]:
    """A page's title and its sections. ``#`` lines inside fenced code are not headings.

    Text before the first heading becomes a section headed by the page title, so nothing on a
    page is unsearchable.
    """
    lines = markdown.splitlines()
    headings = _headings(lines)
    title = next((text for _, level, text, _ in headings if level == 1), slug.rsplit("/", 1)[-1])
    first = headings[0][0] if headings else len(lines)
    if any(line.strip() for line in lines[:first]):
        headings.insert(0, (0, 0, title, None))  # level 0: the preamble

    sections: list[Section] = []
    seen: dict[str, int] = {}
    trail: list[tuple[int, str]] = []  # the headings above the current one, with their levels
    for index, (start, level, heading, explicit) in enumerate(headings):
        end = headings[index + 1][0] if index + 1 < len(headings) else len(lines)
        text = "\n".join(lines[start:end]).strip()
        if level == 0:
            text = f"# {title}\n{text}"
        while trail and trail[-1][0] >= max(level, 1):
            trail.pop()
        anchor = explicit or anchor_of(heading) or "section"
        repeats = seen.get(anchor, 0)
        seen[anchor] = repeats + 1
        sections.append(
            Section(
                page=slug,
                anchor=f"{anchor}-{repeats}" if repeats else anchor,
                heading=heading,
                trail=tuple(name for _, name in trail),
                text=text,
            )
        )
        trail.append((max(level, 1), heading))
    return title, tuple(sections)


class DocsCorpus:
    """Pages by slug, their sections, and a BM25 index over the sections.

    Immutable once built, so one instance is shared by every concurrent run without locks.
    """

    def __init__(self, pages: Mapping[str, str]) -> None:
        """:param pages: slug -> Markdown text."""
        built: dict[str, Page] = {}
        for slug, text in sorted(pages.items()):
            title, sections = split_sections(slug, text)
            built[slug] = Page(slug=slug, title=title, text=text, sections=sections)
        self.pages: Mapping[str, Page] = MappingProxyType(built)
        self.sections: tuple[Section, ...] = tuple(
            section for page in built.values() for section in page.sections
        )
        self._by_slug = {section.slug: section for section in self.sections}
        self._index = Index(
            (
                {"heading": section.heading, "trail": " ".join(section.trail), "body": section.body}
                for section in self.sections
            ),
            weights=_FIELD_WEIGHTS,
        )

    @classmethod
    def from_directory(
        cls, root: str | Path, patterns: Sequence[str] = DEFAULT_PATTERNS
    ) -> DocsCorpus:
        """Every Markdown file under ``root`` matching ``patterns``; an empty result is refused,
        since a documentation agent with nothing to read would answer from the model alone."""
        base = Path(root).resolve()
        if not base.is_dir():
            raise ConfigError(f"the docs root {str(base)!r} is not a directory", setting="root")
        files = sorted({path for pattern in patterns for path in base.glob(pattern)})
        pages = {
            path.relative_to(base).with_suffix("").as_posix(): path.read_text(encoding="utf-8")
            for path in files
            if path.is_file()
        }
        if not pages:
            raise ConfigError(
                f"no documentation found under {str(base)!r} (looked for {', '.join(patterns)})",
                setting="JACK_DOCS_ROOT",
            )
        return cls(pages)

    def __len__(self) -> int:
        return len(self.pages)

    def search(self, query: str, *, limit: int = 5) -> list[SectionHit]:
        """The sections that best answer ``query``, best first (empty when nothing matches)."""
        return [
            SectionHit(section=self.sections[hit.doc], score=hit.score)
            for hit in self._index.search(query, limit=limit)
        ]

    def read(self, slug: str) -> str:
        """A whole page (``docs/x``) or one section of it (``docs/x#anchor``), as Markdown.

        An unknown slug raises :class:`NotFoundError` listing the closest known slugs, so the
        caller (the model, through ``read_doc``) can correct itself.
        """
        wanted = slug.strip()
        page = self.pages.get(wanted)
        if page is not None:
            return page.text
        section = self._by_slug.get(wanted)
        if section is not None:
            return section.text
        close = difflib.get_close_matches(wanted, [*self.pages, *self._by_slug], n=3, cutoff=0.5)
        raise NotFoundError(
            f"no documentation page or section has the slug {wanted!r}",
            what="doc",
            name=wanted,
            available=close,
        )


def find_docs_root(starts: Iterable[Path]) -> Path | None:
    """The first directory at or above one of ``starts`` that looks like an AgentDeck checkout
    (a ``docs/`` directory beside ``agentdeck_core/``), or ``None``."""
    for start in starts:
        for candidate in (start, *start.parents):
            if (candidate / "docs").is_dir() and (candidate / "agentdeck_core").is_dir():
                return candidate
    return None
