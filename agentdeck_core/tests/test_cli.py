"""The ``agentdeck`` command: ``plugins``, ``--version``, and ``--help`` on every command.

Extra plugins are made real by writing a distribution's metadata (``*.dist-info`` with an
``entry_points.txt``) into a temporary directory on ``sys.path``: the host then finds them
through ``importlib.metadata`` exactly as it finds pip-installed ones.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import agentdeck
from agentdeck.cli import command_paths, main
from agentdeck.plugins.host import ALLOW_ENV, DENY_ENV


def install_fake_distribution(
    site: Path, distribution: str, entry_point: str, module: str, source: str
) -> None:
    """Write an importable module and the metadata that declares it an ``agentdeck`` plugin."""
    (site / f"{module}.py").write_text(source, encoding="utf-8")
    info = site / f"{distribution.replace('-', '_')}-0.3.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 0.3.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        f"[agentdeck]\n{entry_point} = {module}\n", encoding="utf-8"
    )


@pytest.fixture(autouse=True)
def only_listed_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep whatever else is installed in this environment out of the listings under test."""
    monkeypatch.delenv(DENY_ENV, raising=False)
    monkeypatch.setenv(ALLOW_ENV, "memory,clitest_broken,clitest_a,clitest_b")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_plugins_json_lists_the_core_memory_plugin(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plugins", "--json"]) == 0

    listing = json.loads(capsys.readouterr().out)
    [memory] = [p for p in listing["plugins"] if p["name"] == "memory"]
    assert memory["distribution"] == "agentdeck-core"
    assert memory["version"] == agentdeck.__version__
    assert memory["provides"]["event_stores"] == ["memory"]
    assert listing["broken"] == []


def test_plugins_lists_what_each_plugin_provides(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plugins"]) == 0

    out = capsys.readouterr().out
    assert f"memory  agentdeck-core {agentdeck.__version__}" in out
    assert "event_stores: memory" in out


def test_plugins_lists_a_broken_plugin_with_the_reason(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    install_fake_distribution(
        site, "clitest-broken", "clitest_broken", "clitest_broken_mod", "raise RuntimeError('no')"
    )

    assert main(["plugins", "--json"]) == 0

    listing = json.loads(capsys.readouterr().out)
    assert listing["broken"] == [
        {
            "name": "clitest_broken",
            "distribution": "clitest-broken",
            "version": "0.3.0",
            "reason": "failed to import: RuntimeError: no",
        }
    ]
    assert [p["name"] for p in listing["plugins"]] == ["memory"]


def test_plugins_text_shows_broken_and_disabled_plugins(
    site: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    install_fake_distribution(
        site, "clitest-broken", "clitest_broken", "clitest_broken_mod", "raise RuntimeError('no')"
    )
    monkeypatch.setenv(DENY_ENV, "memory")

    assert main(["plugins"]) == 0

    out = capsys.readouterr().out
    assert "Broken plugins (skipped):\nclitest_broken  clitest-broken 0.3.0" in out
    assert "RuntimeError: no" in out
    assert f"memory  agentdeck-core: listed in {DENY_ENV}" in out


def test_a_clash_between_plugins_is_reported_with_status_2(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plugin_source = (
        "import agentdeck\n"
        "@agentdeck.hookimpl\n"
        "def agentdeck_register_event_stores(register):\n"
        "    register('memory', lambda request: None)\n"
    )
    install_fake_distribution(site, "clitest-a", "clitest_a", "clitest_a_mod", plugin_source)

    assert main(["plugins"]) == 2

    err = capsys.readouterr().err
    assert "configuration error" in err
    assert "plugin 'clitest_a' (clitest-a)" in err
    assert "plugin 'memory' (agentdeck-core)" in err


def test_version_prints_the_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0

    assert capsys.readouterr().out.strip() == f"agentdeck {agentdeck.__version__}"


@pytest.mark.parametrize("path", [[], *command_paths()], ids=lambda p: " ".join(["agentdeck", *p]))
def test_help_works_on_every_command(path: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*path, "--help"]) == 0

    assert capsys.readouterr().out.startswith(f"usage: {' '.join(['agentdeck', *path])}")


def test_no_command_prints_help_and_fails(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2

    assert "usage: agentdeck" in capsys.readouterr().err


def test_an_unknown_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["frobnicate"]) == 2

    assert "invalid choice" in capsys.readouterr().err


def test_garbage_left_at_exit_is_still_finalized() -> None:
    # The exit handler main() registers freezes what is alive at exit, but collects the garbage
    # first: a cycle dropped before the process ends still has its finalizer run.
    script = (
        "from agentdeck.cli import main\n"
        "main(['--help'])\n"
        "class Cycle:\n"
        "    def __del__(self):\n"
        "        print('finalized')\n"
        "cycle = Cycle()\n"
        "cycle.itself = cycle\n"
        "del cycle\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )

    assert done.stdout.splitlines()[-1] == "finalized"
