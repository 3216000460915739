"""What a trace exporter may carry out of the process: the content-capture policy.

Telemetry backends are systems of record someone else operates, so what leaves the process is
decided here, once, for every exporter (Langfuse, OTLP, anything a plugin adds):

``off`` (the default for generic OTLP export)
    Timings, outcomes, token counts and *hashed* identifiers only. Span names are generic
    (``agent``, ``tool``, ``generation``), so not even a tool's name leaves.
``metadata``
    Adds names: the agent or workflow, the model, the tool, the operation, the namespace and
    the session as a hash. Still no text.
``full``
    Adds content: the run's input and output, what each model call saw and said, tool
    arguments and results, interrupt payloads and answers, report messages. Identifiers are no
    longer hashed. Every value is passed through best-effort secret masking (API-key prefixes,
    bearer and basic credentials, PEM private keys) and then truncated to ``max_bytes``.

Masking is not a guarantee: ``full`` capture can still carry personal or confidential data, so
treat the backend as a system of record for conversation content. Content is computed only when
``full`` is on, so ``off`` and ``metadata`` cost nothing for it.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pydantic import BaseModel

from agentdeck.errors import ConfigError
from agentdeck.model.content import ContentBlock, DataBlock, ResourceBlock, TextBlock

__all__ = [
    "DEFAULT_MAX_BYTES",
    "MAX_MAX_BYTES",
    "Capture",
    "ContentPolicy",
    "blocks_text",
    "hash_id",
    "mask_secrets",
    "truncate_utf8",
]

DEFAULT_MAX_BYTES = 8 * 1024
"""Default cap, in UTF-8 bytes, on each captured value."""
MAX_MAX_BYTES = 64 * 1024
"""The largest cap a policy accepts: spans are not a blob store."""

_REDACTED = "[REDACTED]"

# Each pattern matches a whole credential; the replacement keeps a recognizable prefix so a
# reader can tell what kind of secret was there without seeing it.
_SECRET_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # PEM private keys, including a block cut off before its END line (an already-capped
    # preview), which would otherwise leak the key's first lines.
    (
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----"
            r"(?:.*?-----END [A-Z0-9 ]*PRIVATE KEY-----|.*\Z)",
            re.DOTALL,
        ),
        "[REDACTED PRIVATE KEY]",
    ),
    # Authorization credentials: "Bearer <token>", "Basic <base64>".
    (re.compile(r"(?i)\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=\-]{8,}"), rf"\1\2{_REDACTED}"),
    # API keys recognizable by their vendor prefix: OpenAI/Anthropic/Langfuse style sk-/pk-/rk-,
    # Stripe sk_live_/pk_test_/rk_..., GitHub, GitLab, Slack, AWS access key ids, Google keys.
    (re.compile(r"\b((?:sk|pk|rk)-)[A-Za-z0-9_\-]{8,}"), rf"\1{_REDACTED}"),
    (re.compile(r"\b((?:sk|pk|rk)_(?:live|test)_)[A-Za-z0-9]{8,}"), rf"\1{_REDACTED}"),
    (re.compile(r"\b(gh[pousr]_|github_pat_)[A-Za-z0-9_]{16,}"), rf"\1{_REDACTED}"),
    (re.compile(r"\b(glpat-)[A-Za-z0-9_\-]{16,}"), rf"\1{_REDACTED}"),
    (re.compile(r"\b(xox[abposr]-)[A-Za-z0-9\-]{8,}"), rf"\1{_REDACTED}"),
    (re.compile(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b"), rf"\1{_REDACTED}"),
    (re.compile(r"\b(AIza)[0-9A-Za-z_\-]{35}"), rf"\1{_REDACTED}"),
)


class Capture(StrEnum):
    """How much content a trace carries; each level includes the one before."""

    OFF = "off"
    METADATA = "metadata"
    FULL = "full"


def hash_id(value: str) -> str:
    """A stable, one-way 16-hex-digit stand-in for an identifier.

    The same id always hashes the same, so traces still group by session and runs can still be
    found by whoever knows their id (hash it and search), while the backend never learns it.
    """
    return hashlib.sha256(value.encode("utf-8")).hexdigest()[:16]


def mask_secrets(text: str) -> str:
    """Replace credentials that look like API keys, bearer/basic tokens or PEM private keys.

    Best effort: it recognizes known shapes, not every secret.
    """
    for pattern, replacement in _SECRET_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def truncate_utf8(text: str, max_bytes: int) -> str:
    """``text`` cut to at most ``max_bytes`` UTF-8 bytes, marked when it was cut.

    The cut never splits a character, and the marker (counted inside the cap) says how many
    bytes were dropped, so a reader never mistakes a truncated value for the whole.
    """
    encoded = text.encode("utf-8")
    if len(encoded) <= max_bytes:
        return text
    marker = f"…[truncated {len(encoded)} bytes]"
    room = max(0, max_bytes - len(marker.encode("utf-8")))
    return encoded[:room].decode("utf-8", errors="ignore") + marker


def blocks_text(blocks: list[ContentBlock]) -> str:
    """Content blocks as readable text; inline bytes are described, never copied."""
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, TextBlock):
            parts.append(block.text)
        elif isinstance(block, DataBlock):
            parts.append(_json_text(block.data))
        elif isinstance(block, ResourceBlock):
            parts.append(f"[resource {block.uri}]")
        else:
            media_type = getattr(block, "media_type", None)
            parts.append(f"[{block.type} {media_type}]" if media_type else f"[{block.type}]")
    return "\n".join(parts)


def _json_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class ContentPolicy:
    """One exporter's capture level, value cap and masking switch.

    Build it where the configuration enters (an observer's arguments or settings); a bad value
    is a :class:`~agentdeck.errors.ConfigError` naming what would be accepted.
    """

    capture: Capture | str = Capture.OFF
    """A :class:`Capture` level, or its name (``"off"``, ``"metadata"``, ``"full"``)."""
    max_bytes: int = DEFAULT_MAX_BYTES
    redact_secrets: bool = True

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "capture", Capture(self.capture))
        except ValueError:
            raise ConfigError(
                f"content capture {self.capture!r} is not a capture level; "
                "use 'off', 'metadata' or 'full'",
                setting="capture",
                accepted=[c.value for c in Capture],
            ) from None
        if isinstance(self.max_bytes, bool) or not isinstance(self.max_bytes, int):
            raise ConfigError(
                f"max_bytes must be an integer number of bytes, not {self.max_bytes!r}",
                setting="max_bytes",
            )
        if not 64 <= self.max_bytes <= MAX_MAX_BYTES:
            raise ConfigError(
                f"max_bytes {self.max_bytes} is out of range; use 64 to {MAX_MAX_BYTES} bytes "
                f"(default {DEFAULT_MAX_BYTES})",
                setting="max_bytes",
            )

    @property
    def names(self) -> bool:
        """Whether names (agent, model, tool, namespace) may leave the process."""
        return self.capture is not Capture.OFF

    @property
    def content(self) -> bool:
        """Whether text and data may leave the process."""
        return self.capture is Capture.FULL

    def name(self, value: str | None, generic: str) -> str:
        """``value`` when names are captured (and it is set), else the generic label."""
        return value if self.names and value else generic

    def identifier(self, value: str) -> str:
        """An identifier as it may be exported: itself under ``full``, its hash otherwise."""
        return value if self.content else hash_id(value)

    def text(self, value: object) -> str | None:
        """``value`` as capped, masked text under ``full``; ``None`` at every other level.

        Strings are taken as they are, content blocks as readable text, anything else as its
        JSON. Masking runs before truncation, so a cut can never leave half a secret behind.
        """
        if not self.content or value is None or value == "":
            return None
        if isinstance(value, str):
            text = value
        elif isinstance(value, list) and value and all(isinstance(v, BaseModel) for v in value):
            text = blocks_text(value)
        else:
            text = _json_text(value)
        if self.redact_secrets:
            text = mask_secrets(text)
        return truncate_utf8(text, self.max_bytes)
