"""``docs/parity.md`` keeps its promises: every row links to an example that runs, and every row
that claims support names tests that exist.

The examples themselves run in ``test_docs_examples.py`` (every python block of ``docs/`` does);
this checks the tables' structure against the page and the test tree, so a row cannot cite a test
that was renamed or deleted, or point at an example that is not there.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "parity.md"
ENGINES = ("OpenAI Agents SDK", "LangGraph")
STATUSES = ("supported", "partly", "not supported")
CLAIMS = ("supported", "partly")
"""Statuses that claim the feature works, and so must name the tests that show it."""

_ROW = re.compile(r"^\|(?P<cells>.+)\|\s*$")
_FEATURE = re.compile(r"^\[(?P<name>[^\]]+)\]\(#(?P<anchor>[a-z0-9-]+)\)$")
_CITED = re.compile(r"`(?P<path>[^`:]+\.py)::(?P<test>test_\w+)`")
_ANCHOR = re.compile(r"^#{2,4} .+\{#(?P<anchor>[a-z0-9-]+)\}\s*$")


@dataclass(frozen=True)
class Row:
    engine: str
    feature: str
    anchor: str
    status: str
    spelling: str
    shown_by: str


def _rows() -> list[Row]:
    rows: list[Row] = []
    engine: str | None = None
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            title = line[3:].strip()
            engine = title if title in ENGINES else None
            continue
        found = _ROW.match(line)
        if engine is None or found is None:
            continue
        cells = [cell.strip() for cell in found["cells"].split("|")]
        if cells[0] in ("Feature", "---") or set(cells[0]) <= {"-"}:
            continue
        feature = _FEATURE.match(cells[0])
        assert feature is not None, f"parity.md: a row's feature must link to its example: {line}"
        assert len(cells) == 4, f"parity.md: a row has four cells: {line}"
        rows.append(Row(engine, feature["name"], feature["anchor"], *cells[1:]))
    return rows


ROWS = _rows()


@cache
def _sections() -> dict[str, str]:
    """Anchor -> the text of its section (up to the next heading)."""
    sections: dict[str, str] = {}
    anchor: str | None = None
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            found = _ANCHOR.match(line)
            anchor = found["anchor"] if found else None
            if anchor is not None:
                sections[anchor] = ""
            continue
        if anchor is not None:
            sections[anchor] += line + "\n"
    return sections


@cache
def _tests_in(path: str) -> frozenset[str]:
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    return frozenset(
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    )


def test_both_engines_have_a_table() -> None:
    assert {row.engine for row in ROWS} == set(ENGINES)


@pytest.mark.parametrize("row", ROWS, ids=lambda row: f"{row.engine}: {row.feature}")
def test_a_row_has_a_status_and_an_example(row: Row) -> None:
    assert row.status in STATUSES, f"{row.feature}: status {row.status!r} is not one of {STATUSES}"
    assert row.spelling, f"{row.feature}: say how to spell it in AgentDeck (or why not)"
    section = _sections().get(row.anchor)
    assert section is not None, f"{row.feature}: no example section {{#{row.anchor}}}"
    assert "```python" in section, f"{row.feature}: its example section has no python block"


@pytest.mark.parametrize("row", ROWS, ids=lambda row: f"{row.engine}: {row.feature}")
def test_a_row_claiming_support_names_tests_that_exist(row: Row) -> None:
    cited = list(_CITED.finditer(row.shown_by))
    if row.status not in CLAIMS:
        assert row.shown_by == "—", f"{row.feature}: a {row.status} row cites no test"
        return
    assert cited, f"{row.feature}: a {row.status} row names the test that shows it"
    for citation in cited:
        path, test = citation["path"], citation["test"]
        assert (ROOT / path).is_file(), f"{row.feature}: {path} does not exist"
        assert test in _tests_in(path), f"{row.feature}: {path} has no test {test}"


def test_time_travel_is_supported_now_that_runs_fork() -> None:
    statuses = {row.feature: row.status for row in ROWS if row.engine == "LangGraph"}
    assert statuses["Forking from a checkpoint"] == "supported"
    assert statuses["State history"] == "partly"
