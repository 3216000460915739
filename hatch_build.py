"""The meta-distribution's dependencies: local paths from a checkout, released names for an index.

The distribution `agentdeck` (this directory's pyproject.toml) ships no code; it is the list of
first-party distributions, each with every extra, so one install gives everything. That list
has to be written two ways:

* **local** -- ``agentdeck-core @ file:///<checkout>/agentdeck_core``. Plain ``pip install .``
  from a fresh clone finds the core and the plugins nowhere else: they are not on any index it
  can reach, and uv's workspace sources (``[tool.uv.sources]``) are uv's alone.
* **released** -- ``agentdeck-core==0.1.0``. What an index must hold: PyPI refuses a
  distribution whose metadata points at a URL, and a user's resolver must be free to fetch each
  plugin by name. The distributions are released in lockstep, so each is pinned to this one's
  version.

Which form a build writes:

* ``AGENTDECK_RELEASE=1`` (or ``true``/``yes``) in the build's environment: released. The
  release procedure and ``nox -s wheels`` build the meta-distribution that way.
* otherwise, when the member directories are beside this file (a checkout): local.
* otherwise released: an sdist of the meta-distribution carries no members, so the wheel built
  from it -- by ``python -m build``, by pip, or by an index's users -- names them.

A release built without the variable would carry ``file://`` URLs; uploading it fails loudly (an
index refuses direct references), it never installs the wrong thing quietly. The alternatives
weighed were hatchling's context formatting alone (``{root:uri}`` in ``project.dependencies``:
right for a checkout, but the same text would go to the index) and keeping two hand-edited
requirement lists (one of them always stale); a hook reads one list, written once below.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from hatchling.metadata.plugin.interface import MetadataHookInterface

RELEASE_VARIABLE = "AGENTDECK_RELEASE"
_TRUE = {"1", "true", "yes", "on"}


class MetaDependenciesHook(MetadataHookInterface):
    """Fill ``project.dependencies`` from ``[tool.hatch.metadata.hooks.custom] members``.

    Each member is ``{ name, path, extras }``: the distribution, its directory relative to this
    file, and the extras the meta-distribution installs with it.
    """

    def update(self, metadata: dict[str, Any]) -> None:
        members: list[dict[str, Any]] = self.config["members"]
        root = Path(self.root)
        version = metadata["version"]
        release = os.environ.get(RELEASE_VARIABLE, "").strip().lower() in _TRUE
        checkout = all((root / m["path"] / "pyproject.toml").is_file() for m in members)
        local = checkout and not release
        dependencies = []
        for member in members:
            extras = member.get("extras", [])
            requirement = member["name"] + (f"[{','.join(extras)}]" if extras else "")
            if local:
                dependencies.append(f"{requirement} @ {(root / member['path']).as_uri()}")
            else:
                dependencies.append(f"{requirement}=={version}")
        metadata["dependencies"] = dependencies
