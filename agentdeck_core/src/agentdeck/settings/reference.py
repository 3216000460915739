"""Describing settings sections for the generated settings reference.

:func:`describe_sections` turns section classes into :class:`SectionDoc` rows — per setting its
variable, type, default and description (the field's docstring) — which ``docs/gen.py`` renders
as ``docs/reference/settings.md``. It reads the classes only; nothing is loaded.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pydantic.fields import FieldInfo

from agentdeck.settings.config_file import CONFIG_ENV_VAR, DEFAULT_CONFIG_FILE
from agentdeck.settings.core import CORE_SECTIONS, CoreSettings
from agentdeck.settings.section import SettingsSection, type_name

__all__ = ["SectionDoc", "SettingRow", "describe_sections"]


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
                description=_one_line(field.description or ""),
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


def _default_text(field: FieldInfo) -> str:
    if field.is_required():
        return "required"
    if field.default_factory is not None:
        return "computed"
    return repr(field.default)


def _one_line(text: str) -> str:
    return " ".join(text.split())
