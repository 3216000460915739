"""The 4.x import location of the content blocks (``from agentdeck.core import TextBlock``).

Deprecated: import them from ``agentdeck`` itself (``from agentdeck import TextBlock``). These
are the same classes, not copies. The first name taken from here emits one
:class:`DeprecationWarning` that names the 5.x import and points at the line that took it. The
names are resolved on that first use rather than at import, so that
``from agentdeck.core.ports import EventSinkPort`` -- which imports this package first -- warns
once, about its own name (:mod:`agentdeck.core.ports`).
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

from agentdeck.model import content

if TYPE_CHECKING:
    from agentdeck.model.content import (
        AudioBlock,
        ContentBlock,
        DataBlock,
        ImageBlock,
        ResourceBlock,
        TextBlock,
    )

__all__ = ["AudioBlock", "ContentBlock", "DataBlock", "ImageBlock", "ResourceBlock", "TextBlock"]


def __getattr__(name: str) -> object:
    # Called only while the names are not yet set here: the first one taken warns (once, however
    # many names one ``from`` line takes, as the import system looks each up before the line
    # binds it) and sets them all.
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(
        "agentdeck.core is the 4.x import location of the content blocks; it is deprecated: "
        f"use `from agentdeck import {name}` (the same class)",
        DeprecationWarning,
        stacklevel=2,  # the warnings machinery skips the import system's frames: the importer
    )
    globals().update({each: getattr(content, each) for each in __all__})
    return globals()[name]


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
