"""Describing settings sections for the generated settings reference.

:func:`describe_sections` turns section classes into :class:`SectionDoc` rows — per setting its
variable, type, default and description (the field's docstring) — which ``docs/gen.py`` renders
as ``docs/reference/settings.md``. It reads the classes only; nothing is loaded.
"""

from __future__ import annotations

import ast
import functools
import inspect
import itertools
import sys
from collections.abc import Iterable
from dataclasses import dataclass

from pydantic.fields import FieldInfo

from agentdeck.settings.config_file import CONFIG_ENV_VAR, DEFAULT_CONFIG_FILE
from agentdeck.settings.core import CORE_SECTIONS, CoreSettings
from agentdeck.settings.section import SettingsSection, defined_in, type_name

__all__ = ["SectionDoc", "SettingRow", "describe_sections", "field_description"]


@dataclass(frozen=True, slots=True)
class SettingRow:
    """One setting as the reference page shows it."""

    env_var: str
    type: str
    default: str
    description: str


@dataclass(frozen=True, slots=True)
class SectionDoc:
    """One section of the settings reference."""

    name: str
    """The class name (``RuntimeSettings``)."""
    section: str
    """Its key in ``config.yaml``."""
    summary: str
    rows: tuple[SettingRow, ...]


def describe_sections(
    sections: Iterable[type[SettingsSection]] | None = None,
) -> list[SectionDoc]:
    """Describe sections for the settings reference: per setting its variable, type, default
    and description. ``sections`` defaults to the core's; pass ``settings.sections()`` (or the
    plugin host's) to include plugins."""
    docs = []
    for section in CORE_SECTIONS if sections is None else sections:
        rows = [
            SettingRow(
                env_var=section.env_var(name),
                type=type_name(field.annotation),
                default=_default_text(field),
                description=_one_line(field_description(section, name)),
            )
            for name, field in section.model_fields.items()
        ]
        if section is CoreSettings:
            rows.append(
                SettingRow(
                    env_var=CONFIG_ENV_VAR,
                    type="path",
                    default=f"'./{DEFAULT_CONFIG_FILE}' if it exists",
                    description=(
                        "The YAML file whose sections (`agentdeck:`, `runtime:`, one per plugin) "
                        "hold settings under their field names; an environment variable wins "
                        "over the file. Unset: `config.yaml` in the working directory when "
                        "there is one, otherwise no file."
                    ),
                )
            )
        docs.append(
            SectionDoc(
                name=section.__name__,
                section=section.section,
                summary=_one_line((section.__doc__ or "").strip().split("\n\n")[0]),
                rows=tuple(rows),
            )
        )
    return docs


def field_description(section: type[SettingsSection], name: str) -> str:
    """What setting ``name`` of ``section`` is for: its ``Field(description=...)`` when it has
    one, else the docstring written under its declaration (in ``section`` or a base), else ``""``.

    Read from the source on first use and remembered per class, so defining a section (which
    every process that loads the plugins does) never parses source files.
    """
    explicit = section.model_fields[name].description
    if explicit:
        return explicit
    return _attribute_docstrings(section).get(name, "")


@functools.cache
def _attribute_docstrings(section: type[SettingsSection]) -> dict[str, str]:
    """``field name -> docstring`` for the string literal right after each annotated field of
    ``section`` and its bases (a subclass's wins)."""
    found: dict[str, str] = {}
    for cls in reversed(section.__mro__):
        if not (issubclass(cls, SettingsSection) and cls is not SettingsSection):
            continue
        declared = _class_node(cls)
        if declared is None:  # defined where no source is kept (an interactive session)
            continue
        body = declared.body
        for node, after in itertools.pairwise(body):
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                found[node.target.id] = inspect.cleandoc(after.value.value)
    return found


def _class_node(cls: type) -> ast.ClassDef | None:
    """The ``class`` statement of ``cls`` in the source of the module that defined it."""
    module = sys.modules.get(defined_in(cls))
    try:
        source = inspect.getsource(module) if module is not None else None
    except (OSError, TypeError):
        source = None
    if source is None:
        return None
    # By name, anywhere in the module (a test may define a section inside a function).
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef) and node.name == cls.__name__:
            return node
    return None


def _default_text(field: FieldInfo) -> str:
    if field.is_required():
        return "required"
    if field.default_factory is not None:
        return "computed"
    return repr(field.default)


def _one_line(text: str) -> str:
    return " ".join(text.split())
