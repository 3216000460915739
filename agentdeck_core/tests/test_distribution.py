"""The installed agentdeck-core distribution declares what the rest of the project relies on.

These read installed metadata only (nothing here imports `agentdeck`), so they hold whether the
package was installed from a wheel or editable.
"""

from __future__ import annotations

from importlib.metadata import entry_points
from importlib.util import find_spec
from pathlib import Path


def test_core_default_plugin_is_declared_like_a_third_party_plugin() -> None:
    declared = {ep.name: ep for ep in entry_points(group="agentdeck")}
    memory = declared["memory"]
    assert memory.value == "agentdeck.memory.plugin"
    assert memory.dist is not None
    assert memory.dist.name == "agentdeck-core"


def test_console_script_points_at_the_cli() -> None:
    scripts = {ep.name: ep.value for ep in entry_points(group="console_scripts")}
    assert scripts["agentdeck"] == "agentdeck.cli:main"


def test_package_ships_the_py_typed_marker() -> None:
    spec = find_spec("agentdeck")  # locates the package without executing its __init__
    assert spec is not None and spec.submodule_search_locations
    package_dir = Path(next(iter(spec.submodule_search_locations)))
    assert (package_dir / "py.typed").is_file()
