"""The generated reference pages in docs/ are exactly what the code generates.

``docs/gen.py`` renders the settings reference from the settings classes the core and every
first-party plugin register, the HTTP wire reference from the binding's OpenAPI document, the
events reference from the payload models, and (through ``agentdeck.cli``) the CLI reference. A
page that differs from what the code says fails here with the command that regenerates it.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("agentdeck_docs_gen", ROOT / "docs" / "gen.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


gen = _load_generator()


@pytest.mark.parametrize("page", gen.PAGES, ids=lambda page: page.name)
def test_the_committed_page_is_what_the_code_generates(page: Any) -> None:
    committed = page.path.read_text(encoding="utf-8")

    assert gen.rendered(page) == committed, (
        f"{page.name} is out of date with the code; regenerate it: {gen.REGENERATE}"
    )


def test_the_check_mode_reports_nothing_stale(capsys: pytest.CaptureFixture[str]) -> None:
    assert gen.main(["--check"]) == 0, capsys.readouterr().out


def test_the_settings_reference_has_an_entry_for_every_variable() -> None:
    from agentdeck.plugins.host import PluginHost
    from agentdeck.settings import CORE_SECTIONS, describe_sections

    text = (ROOT / "docs" / "reference" / "settings.md").read_text(encoding="utf-8")
    host = PluginHost.discover({})
    sections = [*CORE_SECTIONS, *host.settings_sections()]
    first_party = set(gen.first_party_distributions())
    owned = {
        registration.factory
        for registration in host.registrations("settings")
        if registration.distribution in first_party
    }
    for doc in describe_sections([s for s in sections if s in CORE_SECTIONS or s in owned]):
        for row in doc.rows:
            assert f"### `{row.env_var}` {{#{row.env_var.lower()}}}" in text, row.env_var


def test_the_http_reference_has_a_section_for_every_route_and_schema() -> None:
    text = (ROOT / "docs" / "reference" / "http.md").read_text(encoding="utf-8")
    document = gen.openapi_document()

    for path, operations in document["paths"].items():
        for method in operations:
            assert f"### `{method.upper()} {path}`" in text, (method, path)
    for name in document["components"]["schemas"]:
        assert f"### {name} {{#{name.lower()}}}" in text, name


def test_the_events_reference_has_a_section_for_every_kind() -> None:
    from agentdeck.model.payloads import PAYLOAD_TYPES

    text = (ROOT / "docs" / "reference" / "events.md").read_text(encoding="utf-8")
    for payload in PAYLOAD_TYPES:
        assert f"### `{payload.KIND}`" in text, payload.KIND


def test_a_stale_page_is_reported_with_the_command_that_regenerates_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    page = gen.PAGES[0]
    text = page.path.read_text(encoding="utf-8")
    begin = text.index(gen.BEGIN) + len(gen.BEGIN)
    stale = tmp_path / "settings.md"
    stale.write_text(text[:begin] + "\n\na hand edit\n" + text[begin:], encoding="utf-8")
    monkeypatch.setattr(gen, "PAGES", (gen.Page(stale, page.render),))
    monkeypatch.setattr(gen, "cli_page_is_current", lambda: True)

    assert gen.main(["--check"]) == 1
    assert "is out of date with the code; regenerate it: python docs/gen.py" in (
        capsys.readouterr().out
    )
    assert "a hand edit" in stale.read_text(encoding="utf-8"), "--check must change nothing"


def test_splice_replaces_only_the_generated_block() -> None:
    text = f"# Title\n\nprose\n\n{gen.BEGIN}\nold\n{gen.END}\n\nmore prose\n"

    spliced = gen.splice(text, "new")

    assert spliced == f"# Title\n\nprose\n\n{gen.BEGIN}\n\nnew\n\n{gen.END}\n\nmore prose\n"
    with pytest.raises(gen.GenerationError, match="no"):
        gen.splice("# no markers\n", "new", where="page.md")
