"""The 4.x import location of the content blocks (``from agentdeck.core import TextBlock``).

Deprecated: import them from ``agentdeck`` itself. These are the same classes, not copies.
"""

from __future__ import annotations

from agentdeck.model.content import (
    AudioBlock,
    ContentBlock,
    DataBlock,
    ImageBlock,
    ResourceBlock,
    TextBlock,
)

__all__ = ["AudioBlock", "ContentBlock", "DataBlock", "ImageBlock", "ResourceBlock", "TextBlock"]
