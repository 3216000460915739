"""The distributions' source metadata agrees with itself: one licence, one version, one core range.

`nox -s wheels` checks the built artifacts; these checks read the pyproject.toml files, so a new
plugin directory that forgets its LICENSE copy, its place in the meta-distribution or the core
range fails here in a second, before anything is built.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
DISTRIBUTIONS = [
    ROOT / "agentdeck_core",
    *sorted(p.parent for p in ROOT.glob("plugins/*/pyproject.toml")),
]
URL_LABELS = {"Homepage", "Documentation", "Source", "Issues", "Changelog"}


def _project(directory: Path) -> dict[str, Any]:
    with (directory / "pyproject.toml").open("rb") as file:
        return dict(tomllib.load(file))


def _ids(directories: list[Path]) -> list[str]:
    return [d.relative_to(ROOT).as_posix() for d in directories]


@pytest.mark.parametrize("directory", [ROOT, *DISTRIBUTIONS], ids=_ids([ROOT, *DISTRIBUTIONS]))
def test_every_distribution_carries_the_one_licence_and_says_so(directory: Path) -> None:
    project = _project(directory)["project"]
    assert (directory / "LICENSE").read_bytes() == (ROOT / "LICENSE").read_bytes()
    assert project["license"] == "Apache-2.0"
    assert project["license-files"] == ["LICENSE"]
    assert set(project["urls"]) == URL_LABELS
    assert not [c for c in project["classifiers"] if c.startswith("License ::")]


@pytest.mark.parametrize("directory", DISTRIBUTIONS[1:], ids=_ids(DISTRIBUTIONS[1:]))
def test_every_plugin_takes_the_cores_minor_series(directory: Path) -> None:
    requirements = [Requirement(r) for r in _project(directory)["project"]["dependencies"]]
    (core,) = [r for r in requirements if r.name == "agentdeck-core"]
    assert str(core.specifier) == "<0.2,>=0.1"


def test_the_meta_distribution_lists_every_distribution_at_its_own_version() -> None:
    root = _project(ROOT)
    members = root["tool"]["hatch"]["metadata"]["hooks"]["custom"]["members"]
    assert sorted(m["path"] for m in members) == _ids(DISTRIBUTIONS)
    for member in members:
        project = _project(ROOT / member["path"])["project"]
        assert project["name"] == member["name"]
        assert project["version"] == root["project"]["version"], "released in lockstep"
        # Every extra that adds a feature is installed by the meta-distribution.
        features = set(project.get("optional-dependencies", {})) - {"testing", "test"}
        assert set(member.get("extras", [])) == features, member["name"]
