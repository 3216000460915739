"""Skills: progressive disclosure of prose, one ``SKILL.md`` per directory.

A skill is a ``skills/<dir>/SKILL.md`` whose YAML front matter carries a ``name`` (defaulting to
the directory) and a ``description``. An engine offers the model each skill's name and
description, and generates a ``load_skill`` tool that returns the body (:meth:`Skill.read`) only
when the model asks: the instructions stay short until a skill is needed. A skill is text, not a
program, so it never receives a context: a skill that needs application state is a tool.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from agentdeck.errors import ConfigError, NotFoundError

__all__ = ["SKILL_FILE", "Skill", "Skills"]

SKILL_FILE = "SKILL.md"


@dataclass(frozen=True, slots=True)
class Skill:
    """One skill: what the model is told about it, and the text it loads on demand."""

    name: str
    description: str
    path: Path
    """The ``SKILL.md`` file; files beside it (scripts, references) live in :attr:`directory`."""
    body: str

    @property
    def directory(self) -> Path:
        return self.path.parent

    def read(self) -> str:
        """The skill's instructions, front matter removed: what ``load_skill`` returns."""
        return self.body

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> Skill:
        """Parse a ``SKILL.md``. A missing description or malformed front matter is a
        :class:`ConfigError` naming the file."""
        file = Path(path)
        try:
            text = file.read_text(encoding="utf-8")
        except OSError as unreadable:
            raise ConfigError(f"cannot read skill file {file}: {unreadable}") from unreadable
        front, body = _split_front_matter(text, file)
        name = front.get("name", file.parent.name)
        description = front.get("description")
        if not isinstance(name, str) or not name.strip():
            raise ConfigError(f"skill file {file}: 'name' must be a non-empty string")
        if not isinstance(description, str) or not description.strip():
            raise ConfigError(
                f"skill file {file}: front matter needs a 'description' (a non-empty string): "
                "it is all the model sees when deciding whether to load the skill"
            )
        return cls(name=name.strip(), description=description.strip(), path=file, body=body)


class Skills(Mapping[str, Skill]):
    """The skills of a catalog, by name, discovered from directories of ``*/SKILL.md``.

    ``Skills("./skills", "./more")`` reads every ``<dir>/SKILL.md`` one level below each path;
    :class:`Skill` objects may be given directly too. A path that does not exist is a
    :class:`ConfigError` (a typo must not silently mean "no skills"); two skills of one name are a
    :class:`ConfigError` naming both files.
    """

    def __init__(self, *sources: str | os.PathLike[str] | Skill) -> None:
        found: dict[str, Skill] = {}
        for source in sources:
            for skill in [source] if isinstance(source, Skill) else _discover(Path(source)):
                if skill.name in found:
                    raise ConfigError(
                        f"two skills are named '{skill.name}': {found[skill.name].path} and "
                        f"{skill.path}; rename one in its front matter",
                        setting="skills",
                    )
                found[skill.name] = skill
        self._skills = found

    @classmethod
    def coerce(cls, value: Any) -> Skills:
        """Normalize what ``Deck(skills=...)`` accepts into a :class:`Skills`."""
        if value is None:
            return cls()
        if isinstance(value, Skills):
            return value
        if isinstance(value, str | os.PathLike | Skill):
            return cls(value)
        if isinstance(value, Iterable):
            return cls(*value)
        raise ConfigError(
            f"skills= takes a path, a list of paths or a Skills(...) object; "
            f"got {type(value).__name__}",
            setting="skills",
        )

    def __getitem__(self, name: str) -> Skill:
        try:
            return self._skills[name]
        except KeyError:
            raise NotFoundError(
                f"no skill named '{name}'; the skills are: {', '.join(self._skills) or 'none'}",
                what="skill",
                name=name,
                available=list(self._skills),
            ) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._skills)

    def __len__(self) -> int:
        return len(self._skills)

    def __contains__(self, name: object) -> bool:
        return name in self._skills

    def __repr__(self) -> str:
        return f"Skills({', '.join(self._skills)})"


def _discover(root: Path) -> list[Skill]:
    if not root.exists():
        raise ConfigError(f"skills path {root} does not exist", setting="skills")
    if not root.is_dir():
        raise ConfigError(
            f"skills path {root} is a file; give the directory holding <skill>/{SKILL_FILE}",
            setting="skills",
        )
    return [Skill.from_file(file) for file in sorted(root.glob(f"*/{SKILL_FILE}"))]


def _split_front_matter(text: str, file: Path) -> tuple[dict[str, Any], str]:
    """``(front matter, body)``; a file without front matter has an empty one."""
    lines = text.lstrip("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return {}, text.strip()
    for index, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            raw = "".join(lines[1:index])
            body = "".join(lines[index + 1 :])
            break
    else:
        raise ConfigError(f"skill file {file}: front matter opened with '---' is never closed")
    try:
        front = yaml.safe_load(raw) if raw.strip() else {}
    except yaml.YAMLError as bad:
        raise ConfigError(f"skill file {file}: front matter is not valid YAML: {bad}") from bad
    if not isinstance(front, dict):
        raise ConfigError(f"skill file {file}: front matter must be a mapping of keys to values")
    return front, body.strip()
