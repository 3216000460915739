"""The database drivers are extras: a scheme whose driver is missing says which one to install.

Masking a module in ``sys.modules`` makes importing it fail exactly as it does where the package
is not installed, whatever this environment has.
"""

from __future__ import annotations

import sys
from importlib.metadata import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from agentdeck import Deck, ExtraNotInstalledError, Settings


@pytest.mark.parametrize(
    ("url", "driver", "extra"),
    [
        ("postgresql://127.0.0.1:5432/test", "psycopg", "postgres"),
        ("postgres://127.0.0.1:5432/test", "psycopg_pool", "postgres"),
        ("redis://127.0.0.1:6379/0", "redis", "redis"),
        ("rediss://127.0.0.1:6379/0", "redis", "redis"),
    ],
)
async def test_a_scheme_without_its_driver_names_the_extra_to_install(
    url: str, driver: str, extra: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, driver, None)
    deck = Deck(settings=Settings(env={"AGENTDECK_STATE": url}))

    with pytest.raises(ExtraNotInstalledError) as missing:
        await deck.open()
    await deck.aclose()

    error = missing.value
    assert (error.distribution, error.extra, error.missing) == ("agentdeck-stores", extra, driver)
    assert f"pip install 'agentdeck-stores[{extra}]'" in str(error)
    assert url.split(":")[0] + "://" in str(error)
    assert isinstance(error, ImportError)


async def test_sqlite_needs_no_driver(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for driver in ("psycopg", "psycopg_pool", "redis"):
        monkeypatch.setitem(sys.modules, driver, None)
    settings = Settings(env={"AGENTDECK_STATE": f"sqlite:///{tmp_path / 'state.db'}"})

    async with Deck(settings=settings) as deck:
        assert await deck.runs.list() == []


def test_the_drivers_come_only_with_their_extras() -> None:
    declared = metadata("agentdeck-stores")
    requirements = [Requirement(line) for line in declared.get_all("Requires-Dist") or []]

    def wanted_by(extra: str | None) -> set[str]:
        environment = {"extra": extra or ""}
        return {
            f"{r.name}[{','.join(sorted(r.extras))}]" if r.extras else r.name
            for r in requirements
            if r.marker is None or r.marker.evaluate(environment)
        }

    assert wanted_by(None) == {"agentdeck-core"}
    assert wanted_by("postgres") - wanted_by(None) == {"psycopg[binary]", "psycopg-pool"}
    assert wanted_by("redis") - wanted_by(None) == {"redis[hiredis]"}
