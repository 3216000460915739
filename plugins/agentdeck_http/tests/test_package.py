"""agentdeck-http installs as an AgentDeck plugin, and its distributions carry the console."""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points, version
from pathlib import Path

import agentdeck_http


def test_package_imports_and_its_entry_point_is_declared() -> None:
    assert agentdeck_http.__version__ == version("agentdeck-http")

    (entry_point,) = [ep for ep in entry_points(group="agentdeck") if ep.name == "http"]
    assert entry_point.value == "agentdeck_http.plugin"
    assert entry_point.dist is not None
    assert entry_point.dist.name == "agentdeck-http"
    assert entry_point.load() is importlib.import_module("agentdeck_http.plugin")


def test_the_binding_is_registered_as_http_and_resolves_from_agentdeck_bindings() -> None:
    from agentdeck.bindings import Native as Resolved
    from agentdeck.plugins.host import PluginHost

    assert Resolved is agentdeck_http.Native
    built = PluginHost.discover().binding("http", path="/api")
    assert isinstance(built, agentdeck_http.Native)
    assert built.mount_path == "/api"


def test_the_sdist_and_the_wheel_built_from_it_ship_every_console_file(tmp_path: Path) -> None:
    """The console needs no JavaScript toolchain and no network: its files are in the wheel."""
    import tarfile
    import zipfile

    from hatchling.builders.sdist import SdistBuilder
    from hatchling.builders.wheel import WheelBuilder

    root = Path(__file__).resolve().parents[1]
    source = root / "src" / "agentdeck_http" / "console" / "static"
    shipped = sorted(path.name for path in source.iterdir() if path.suffix in {".js", ".css"})
    assert "app.js" in shipped and "console.css" in shipped

    [sdist] = list(SdistBuilder(str(root)).build(directory=str(tmp_path / "sdist")))
    with tarfile.open(sdist) as archive:
        archive.extractall(tmp_path / "unpacked", filter="data")
    [unpacked] = list((tmp_path / "unpacked").iterdir())
    [wheel] = list(WheelBuilder(str(unpacked)).build(directory=str(tmp_path / "wheel")))
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        static = "agentdeck_http/console/static/"
        assert sorted(n.removeprefix(static) for n in names if n.startswith(static)) == shipped
        for name in shipped:
            assert archive.read(static + name) == (source / name).read_bytes()
