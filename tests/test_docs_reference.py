"""The generated reference pages in docs/ are exactly what the code generates.

``docs/gen.py`` renders the settings reference from the settings classes the core and every
first-party plugin register, the HTTP wire reference from the binding's OpenAPI document, the
events reference from the payload models, the hooks and ports references from
``agentdeck.plugins.hookspecs``, ``docs/examples/hooks/`` and ``agentdeck.ports``, and (through
``agentdeck.cli``) the CLI reference. A page that differs from what the code says fails here with
the command that regenerates it; a hook without a section or an example, or a port without a
section, fails too.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import runpy
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


# --- the plugin contract: hooks and ports --------------------------------------------------------


def test_the_hooks_reference_has_a_section_and_its_example_for_every_hook() -> None:
    from agentdeck.plugins import hookspecs

    text = (ROOT / "docs" / "reference" / "hooks.md").read_text(encoding="utf-8")
    hooks = gen.contract.hook_names(hookspecs)
    assert hooks, "no hooks found in agentdeck.plugins.hookspecs"
    for hook in hooks:
        heading = f"### `{hook}` {{#{hook}}}"
        assert heading in text, f"{hook} has no section in hooks.md"
        example = gen.contract.example_path(hook)
        assert example.is_file(), f"{hook} has no example ({example})"
        section = text.split(heading, 1)[1].split("\n### ", 1)[0]
        assert example.read_text(encoding="utf-8").strip() in section, f"{hook}: example missing"


def test_the_hooks_reference_lists_hooks_in_the_spec_modules_order() -> None:
    from agentdeck.plugins import hookspecs

    text = (ROOT / "docs" / "reference" / "hooks.md").read_text(encoding="utf-8")
    in_spec = [hook for _, _, hooks in gen.contract.hook_groups(hookspecs) for hook in hooks]
    on_page = [hook for hook in in_spec if f"### `{hook}`" in text]
    assert sorted(in_spec) == gen.contract.hook_names(hookspecs)  # every hook is in a group
    assert on_page == sorted(on_page, key=lambda hook: text.index(f"### `{hook}`"))
    assert on_page == in_spec


def test_every_example_in_docs_examples_hooks_is_some_hooks_example() -> None:
    from agentdeck.plugins import hookspecs

    hooks = set(gen.contract.hook_names(hookspecs))
    for example in sorted(gen.contract.EXAMPLES.glob("*.py")):
        assert example.stem in hooks, f"{example.name} names no hook of agentdeck.plugins.hookspecs"


def test_a_hook_without_an_example_cannot_be_generated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gen.contract, "EXAMPLES", tmp_path)

    with pytest.raises(gen.contract.GenerationError, match="has no example"):
        gen.contract.hooks_markdown()
    assert gen.main(["--check"]) == 2  # reported, not a traceback


@pytest.mark.parametrize(
    "example",
    sorted((ROOT / "docs" / "examples" / "hooks").glob("*.py")),
    ids=lambda path: path.stem,
)
def test_each_hook_example_runs_on_its_own(
    example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The page's blocks share one namespace in the docs harness; here each runs alone, so no
    # example leans on a name another one defined.
    monkeypatch.chdir(tmp_path)
    runpy.run_path(str(example), run_name="__main__")


def test_the_ports_reference_has_a_section_for_every_port() -> None:
    import agentdeck.ports

    text = (ROOT / "docs" / "reference" / "ports.md").read_text(encoding="utf-8")
    for name in agentdeck.ports.__all__:
        assert f"### `{name}` {{#{name.lower()}}}" in text, name


def test_a_port_method_without_a_docstring_cannot_be_generated(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import agentdeck.ports.control as control

    source = inspect.getsource(control).replace(
        '"""Record a request; ``False`` if one with this verb was already pending."""', "..."
    )
    monkeypatch.setitem(gen.contract._TREES, control.__name__, ast.parse(source))

    with pytest.raises(gen.contract.GenerationError, match=r"ControlPort\.request has no doc"):
        gen.contract.ports_markdown()
