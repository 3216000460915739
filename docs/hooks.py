"""MkDocs hooks for the AgentDeck site (``hooks:`` in ``mkdocs.yml``).

A code block the docs tests cannot run is fenced ```` ```python no-test reason="..." ````
(``tests/test_docs_examples.py`` skips and counts it). Markdown's fenced-code extensions read
words after the language as options and give up on ones they do not know, which would render the
block as plain text; so before a page is converted, the test-only words are removed from the
fence and the block renders like any other Python block.
"""

from __future__ import annotations

import re
from typing import Any

_TEST_ONLY_OPTIONS = re.compile(
    r"^(?P<fence>[ \t]*(?:`{3,}|~{3,})python)"  # the fence and its language, kept
    r"[ \t]+no-test(?:[ \t]+reason=(?:\"[^\"]*\"|'[^']*'|\S+))?[ \t]*$",  # dropped
    re.MULTILINE,
)


def strip_test_options(markdown: str) -> str:
    """``markdown`` with each ``python no-test reason="..."`` fence opening cut to ``python``."""
    return _TEST_ONLY_OPTIONS.sub(r"\g<fence>", markdown)


def on_page_markdown(markdown: str, **_: Any) -> str:
    return strip_test_options(markdown)
