"""Every ```python block in the docs and READMEs runs, so documentation cannot rot silently.

Each markdown file is one test: its python blocks run in order in one fresh namespace (later
blocks see earlier blocks' names), inside an empty temporary working directory, with no model
provider credentials in the environment. Blocks are compiled at their own line numbers, so a
traceback points at the markdown line that failed. Top-level ``await`` is allowed.

A block that cannot run here is fenced as ```python no-test reason="why" -- it is skipped but
counted, a missing reason fails, and the total is capped so the exception stays rare.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import re
import shlex
import sys
import textwrap
import types
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC_GLOBS = (
    "docs/**/*.md",
    "README.md",
    "agentdeck_core/README.md",
    "plugins/*/README.md",
    "examples/*/README.md",
    "benchmarks/README.md",
)
MAX_NO_TEST_BLOCKS = 10
# Keep examples offline: with these unset, examples run on the embedded defaults.
PROVIDER_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY")

_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")


@dataclass(frozen=True)
class Block:
    """One fenced code block. `line` is the 1-based markdown line of its first code line."""

    language: str
    options: dict[str, str]
    code: str
    line: int

    @property
    def no_test(self) -> bool:
        return "no-test" in self.options

    @property
    def reason(self) -> str:
        return self.options.get("reason", "").strip()


def _parse_info(info: str) -> tuple[str, dict[str, str]]:
    """```python no-test reason="x y" -> ("python", {"no-test": "", "reason": "x y"})."""
    try:
        words = shlex.split(info)
    except ValueError:  # an unbalanced quote: keep the words, the reason check will complain
        words = info.split()
    if not words:
        return "", {}
    options: dict[str, str] = {}
    for word in words[1:]:
        key, _, value = word.partition("=")
        options[key] = value
    return words[0].lower(), options


def extract_blocks(markdown: str) -> list[Block]:
    """All fenced code blocks (backtick or tilde fences, any indentation), in order."""
    lines = markdown.splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        opening = _OPEN.match(lines[i])
        if opening is None or (opening["fence"][0] == "`" and "`" in opening["info"]):
            i += 1
            continue
        fence = opening["fence"]
        close = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        language, options = _parse_info(opening["info"])
        body: list[str] = []
        j = i + 1
        while j < len(lines) and not close.match(lines[j]):
            body.append(lines[j])
            j += 1
        blocks.append(Block(language, options, textwrap.dedent("\n".join(body)), i + 2))
        i = j + 1
    return blocks


def python_blocks(markdown: str) -> list[Block]:
    return [b for b in extract_blocks(markdown) if b.language == "python"]


def assemble(blocks: list[Block]) -> str:
    """Join the runnable blocks into one source whose line numbers match the markdown file."""
    source: list[str] = []
    for block in blocks:
        if block.no_test:
            continue
        source += [""] * (block.line - 1 - len(source))
        source += block.code.splitlines()
    return "\n".join(source) + "\n"


def run_source(source: str, filename: str) -> dict[str, object]:
    """Execute `source` as a fresh `__main__` module; return its namespace."""
    code = compile(
        source, filename, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True
    )
    module = types.ModuleType("__main__")
    module.__file__ = filename
    previous_main = sys.modules["__main__"]
    sys.modules["__main__"] = module  # as runpy does: classes defined here resolve their module
    try:
        result = eval(code, module.__dict__)
        if inspect.iscoroutine(result):
            asyncio.run(result)
    finally:
        sys.modules["__main__"] = previous_main
    return module.__dict__


def _doc_files() -> list[Path]:
    return sorted({p for pattern in DOC_GLOBS for p in ROOT.glob(pattern) if p.is_file()})


DOCS: dict[str, list[Block]] = {
    path.relative_to(ROOT).as_posix(): python_blocks(path.read_text(encoding="utf-8"))
    for path in _doc_files()
}
NO_TEST_COUNT = sum(block.no_test for blocks in DOCS.values() for block in blocks)
assert NO_TEST_COUNT <= MAX_NO_TEST_BLOCKS, (
    f"{NO_TEST_COUNT} python blocks are marked no-test (at most {MAX_NO_TEST_BLOCKS}): make some "
    "of them runnable instead of raising the cap"
)
RUNNABLE = sorted(name for name, blocks in DOCS.items() if any(not b.no_test for b in blocks))


# --- the docs -----------------------------------------------------------------------------------


@pytest.mark.parametrize("doc", RUNNABLE)
def test_python_examples_run(doc: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = DOCS[doc]
    _assert_no_test_blocks_give_reasons(doc, blocks)
    monkeypatch.chdir(tmp_path)
    # A repo-level README (benchmarks/) is read from a checkout, where its commands run from the
    # root: its blocks may import the repo's own top-level packages, as `python -m` there would.
    monkeypatch.syspath_prepend(str(ROOT))
    for name in PROVIDER_ENV:
        monkeypatch.delenv(name, raising=False)
    run_source(assemble(blocks), str(ROOT / doc))


def test_every_no_test_block_gives_a_reason() -> None:
    for doc, blocks in DOCS.items():
        _assert_no_test_blocks_give_reasons(doc, blocks)


def _assert_no_test_blocks_give_reasons(doc: str, blocks: list[Block]) -> None:
    missing = [b.line - 1 for b in blocks if b.no_test and not b.reason]
    assert not missing, f'{doc}: no-test block(s) at line(s) {missing} need reason="..."'


_SHIM_IMPORT = re.compile(r"^\s*(?:from|import)\s+agentdeck\.core\b", re.M)
SHIM_TEST = "agentdeck_core/tests/test_public_api.py"
"""The one test that imports the 4.x shim (``agentdeck.core``), to prove it warns."""


def test_no_doc_block_or_test_imports_the_4x_shim() -> None:
    """Examples teach the 5.x imports (``from agentdeck import TextBlock``); the deprecated
    ``agentdeck.core`` warns, and only the shim's own test may import it."""
    blocks = [
        f"{doc}:{b.line}" for doc, bs in DOCS.items() for b in bs if _SHIM_IMPORT.search(b.code)
    ]
    sources = [
        path.relative_to(ROOT).as_posix()
        for pattern in (
            "agentdeck_core/tests/**/*.py",
            "plugins/*/tests/**/*.py",
            "tests/**/*.py",
            "examples/**/*.py",
        )
        for path in ROOT.glob(pattern)
        if _SHIM_IMPORT.search(path.read_text(encoding="utf-8"))
    ]
    assert blocks == []
    assert sorted(set(sources)) == [SHIM_TEST]


# --- the harness itself -------------------------------------------------------------------------

SAMPLE = """\
# Title

```python
x = 1
```

```bash
echo not python
```

- a list item with an indented block:

  ```python
  y = x + 1
  ```

~~~~python no-test reason="talks to a real provider"
raise RuntimeError("never runs")
~~~~

````python
text = '''
```
not a fence inside a longer fence
'''
````

```python no-test
z = 0
```
"""


def test_extractor_finds_fenced_blocks_with_languages_options_and_lines() -> None:
    blocks = extract_blocks(SAMPLE)
    assert [(b.language, b.line) for b in blocks] == [
        ("python", 4),
        ("bash", 8),
        ("python", 14),
        ("python", 18),
        ("python", 22),
        ("python", 29),
    ]
    assert blocks[2].code == "y = x + 1"
    assert blocks[3].no_test and blocks[3].reason == "talks to a real provider"
    assert "```" in blocks[4].code
    assert blocks[5].no_test and blocks[5].reason == ""


def test_blocks_share_one_namespace_and_no_test_blocks_are_skipped() -> None:
    namespace = run_source(assemble(python_blocks(SAMPLE)), "SAMPLE.md")
    assert (namespace["x"], namespace["y"]) == (1, 2)
    assert "```" in str(namespace["text"])
    assert "z" not in namespace  # its block is no-test; the other no-test block would raise


def test_a_failure_points_at_its_markdown_line() -> None:
    markdown = "intro\n\n```python\nok = True\n```\n\ntext\n\n```python\n1 / 0\n```\n"
    with pytest.raises(ZeroDivisionError) as failure:
        run_source(assemble(python_blocks(markdown)), "EXAMPLE.md")
    innermost = failure.value.__traceback__
    assert innermost is not None
    while innermost.tb_next is not None:
        innermost = innermost.tb_next
    assert (innermost.tb_frame.f_code.co_filename, innermost.tb_lineno) == ("EXAMPLE.md", 10)


def test_top_level_await_runs() -> None:
    markdown = "```python\nimport asyncio\nawait asyncio.sleep(0)\ndone = True\n```\n"
    assert run_source(assemble(python_blocks(markdown)), "ASYNC.md")["done"] is True


def test_a_no_test_block_without_reason_is_reported() -> None:
    with pytest.raises(AssertionError, match="need reason"):
        _assert_no_test_blocks_give_reasons("SAMPLE.md", python_blocks(SAMPLE))
