"""Checks on built distributions and on what an install of them discovers (`nox -s wheels`).

Standard library plus `packaging` only, so it runs in any environment that has pip. Commands:

  python .ci/dists.py check DIST_DIR
      every wheel and sdist carries LICENSE and PEP 639 license metadata, the five project URLs
      and only known trove classifiers; the meta-distribution `agentdeck` names its members
      (name==version, no direct references) with the extras it promises.
  python .ci/dists.py third-party DIST_DIR
      prints the third-party requirements an install of the meta-distribution pulls in (every
      wheel's Requires-Dist under the extras the members are asked for, first-party names
      left out), so they can be installed from an index before ours are installed from files.
  python .ci/dists.py plugins LISTING EXPECTED...
      the plugins in LISTING (the output of `agentdeck plugins`) are exactly EXPECTED; a
      missing one is named.
"""

from __future__ import annotations

import email.parser
import sys
import tarfile
import zipfile
from email.message import Message
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

META = "agentdeck"
FIRST_PARTY_PREFIX = "agentdeck"
URL_LABELS = ("Homepage", "Documentation", "Source", "Issues", "Changelog")


def _wheel_metadata(wheel: Path) -> tuple[Message, set[str]]:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        text = archive.read(metadata).decode()
    return email.parser.Parser().parsestr(text), names


def _sdist_metadata(sdist: Path) -> tuple[Message, set[str]]:
    with tarfile.open(sdist) as archive:
        names = {name.partition("/")[2] for name in archive.getnames()}
        top = archive.getnames()[0].partition("/")[0]
        member = archive.extractfile(f"{top}/PKG-INFO")
        assert member is not None
        text = member.read().decode()
    return email.parser.Parser().parsestr(text), names


def _requirements(metadata: Message) -> list[Requirement]:
    return [Requirement(line) for line in metadata.get_all("Requires-Dist") or []]


def _is_first_party(name: str) -> bool:
    canonical = canonicalize_name(name)
    return canonical == META or canonical.startswith(f"{FIRST_PARTY_PREFIX}-")


def _problems_of(path: Path, metadata: Message, names: set[str], known: set[str]) -> list[str]:
    problems = []
    if metadata.get("License-Expression") != "Apache-2.0":
        problems.append(f"License-Expression is {metadata.get('License-Expression')!r}")
    if "LICENSE" not in (metadata.get_all("License-File") or []):
        problems.append("no License-File: LICENSE")
    carried = (
        any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
        if path.suffix == ".whl"
        else "LICENSE" in names
    )
    if not carried:
        problems.append("the archive does not carry LICENSE")
    labels = {url.partition(",")[0].strip() for url in metadata.get_all("Project-URL") or []}
    problems += [f"no {label} project URL" for label in URL_LABELS if label not in labels]
    for classifier in metadata.get_all("Classifier") or []:
        if known and classifier not in known:
            problems.append(f"unknown classifier {classifier!r}")
        if classifier.startswith("License ::"):
            problems.append(f"license classifier {classifier!r} beside a license expression")
    if canonicalize_name(metadata["Name"]) == META:
        requirements = _requirements(metadata)
        direct = [str(r) for r in requirements if r.url]
        if direct:
            problems.append(f"direct references in a release build: {direct}")
        unpinned = [str(r) for r in requirements if not str(r.specifier).startswith("==")]
        if unpinned:
            problems.append(f"members not pinned to one version: {unpinned}")
    return problems


def check(dist: Path) -> int:
    try:
        from trove_classifiers import classifiers as known
    except ImportError:  # the check still runs; only the classifier list is skipped
        known = set()
    artifacts = sorted(dist.glob("*.whl")) + sorted(dist.glob("*.tar.gz"))
    if not artifacts:
        print(f"no distributions in {dist}", file=sys.stderr)
        return 1
    failed = 0
    for path in artifacts:
        reader = _wheel_metadata if path.suffix == ".whl" else _sdist_metadata
        metadata, names = reader(path)
        for problem in _problems_of(path, metadata, names, set(known)):
            print(f"{path.name}: {problem}", file=sys.stderr)
            failed += 1
    print(f"checked {len(artifacts)} distributions: {failed} problem(s)")
    return 1 if failed else 0


def third_party(dist: Path) -> int:
    wheels = {canonicalize_name(_wheel_metadata(w)[0]["Name"]): w for w in dist.glob("*.whl")}
    meta, _ = _wheel_metadata(wheels[META])
    wanted = {canonicalize_name(r.name): set(r.extras) for r in _requirements(meta)}
    lines: set[str] = set()
    for name, extras in wanted.items():
        metadata, _ = _wheel_metadata(wheels[name])
        for requirement in _requirements(metadata):
            if _is_first_party(requirement.name):
                continue
            marker = requirement.marker
            if marker is None or any(marker.evaluate({"extra": e}) for e in extras or {""}):
                requirement.marker = None
                lines.add(str(requirement))
    print("\n".join(sorted(lines)))
    return 0


def plugins(expected: list[str], listing: str) -> int:
    # `agentdeck plugins` prints one unindented line per plugin (`name  distribution version
    # [module]`), then its registrations indented below it.
    found = {line.split()[0] for line in listing.splitlines() if line and not line[0].isspace()}
    missing = sorted(set(expected) - found)
    unexpected = sorted(found - set(expected))
    for name in missing:
        print(f"plugin {name!r} is not discovered by `agentdeck plugins`", file=sys.stderr)
    for name in unexpected:
        print(f"`agentdeck plugins` lists {name!r}, which was not expected", file=sys.stderr)
    if missing or unexpected:
        return 1
    print(f"agentdeck plugins discovers all {len(found)}: {', '.join(sorted(found))}")
    return 0


def main(argv: list[str]) -> int:
    command, *args = argv
    if command == "check":
        return check(Path(args[0]))
    if command == "third-party":
        return third_party(Path(args[0]))
    if command == "plugins":
        return plugins(args[1:], Path(args[0]).read_text(encoding="utf-8"))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
