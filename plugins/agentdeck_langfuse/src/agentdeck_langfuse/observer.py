"""``LangfuseObserver``: every run as one Langfuse trace, rendered from the canonical events."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import anyio.to_thread

from agentdeck.errors import ConfigError
from agentdeck.model.events import Event
from agentdeck.observing.capture import ContentPolicy
from agentdeck.observing.tracing.renderer import ReadStart, TraceRenderer, place
from agentdeck.ports import Observer
from agentdeck.settings import Settings
from agentdeck_langfuse.settings import (
    LangfuseSettings,
    standard_source,
    with_standard_defaults,
)

if TYPE_CHECKING:
    from agentdeck_langfuse.export import LangfuseExport

__all__ = ["LangfuseObserver"]

log = logging.getLogger("agentdeck.langfuse")

FLUSH_SECONDS = 5.0
"""The longest :meth:`LangfuseObserver.close` waits for the exporter before giving up."""


class LangfuseObserver(Observer):
    """Exports each run as a Langfuse trace: configured entirely by ``AGENTDECK_LANGFUSE_*``.

    One run is one trace. Its root observation is an ``agent`` (an agent turn) or a ``chain`` (a
    workflow) named after what the caller addressed; model calls are ``generation``\\ s with
    their model and token usage, tool calls ``tool`` observations (at level ``ERROR`` when the
    tool raised), interrupts and pauses spans covering the wait, approvals, answers and reports
    events; a failed run's root carries level ``ERROR`` and its error code. Every observation
    carries the run's ``session_id`` (Langfuse's session) and, as metadata, its run ids and
    namespace. A nested run is placed under its parent's root, in the parent's trace. The
    rendering is :class:`agentdeck.observing.tracing.renderer.TraceRenderer`'s, shared with
    every exporter.

    Constructing one contacts nothing and imports no SDK. :meth:`start` (the deck's open)
    reads the settings -- the deck's, handed over with :meth:`use_settings` or ``settings=``,
    else the process environment and ``config.yaml`` -- and refuses the open with
    :class:`~agentdeck.errors.ConfigError` when either key is missing, rather than tracing
    nothing quietly. :meth:`emit` only hands spans to the SDK's background exporter; export
    failures are logged by the SDK and never reach a run. :meth:`close` flushes for at most
    :data:`FLUSH_SECONDS`.

    ``sdk_spans=True`` also sends the OpenAI Agents SDK's raw spans (every agent, generation
    and tool call with its input and output, via OpenInference) -- as a second, separate trace
    per run. It is opt-in: turn it on to debug how a turn ran, and leave it off for one clean
    trace per run. It needs ``pip install "agentdeck-langfuse[sdk-spans]"``.
    """

    def __init__(
        self,
        *,
        sdk_spans: bool = False,
        settings: Settings | None = None,
        view: Callable[[Event], bool] | None = None,
    ) -> None:
        if not isinstance(sdk_spans, bool):
            raise ConfigError(
                f"sdk_spans takes True or False, not {sdk_spans!r}", setting="sdk_spans"
            )
        self.sdk_spans = sdk_spans
        self.view = view
        self._settings = settings
        self._renderer: TraceRenderer | None = None
        self._read_start: ReadStart | None = None
        self._export: LangfuseExport | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> LangfuseObserver | None:
        """The observer a deck starts by itself: one when both keys are set
        (``AGENTDECK_LANGFUSE_*``, else the SDK's own ``LANGFUSE_*``), else ``None``.

        One key without the other, ``LANGFUSE_TRACING_ENABLED=false`` or ``OTEL_SDK_DISABLED``
        start none and log one line saying which and why.
        """
        env = settings.env
        raw = settings.section(LangfuseSettings)
        section = with_standard_defaults(raw, env)
        if not section.public_key and not section.secret_key:
            return None
        missing = _missing_keys(section, env)
        if missing:
            log.warning(
                "Langfuse observer not started: %s is set but %s is not",
                _key_source("public_key" if section.public_key else "secret_key", raw, env),
                " or ".join(missing),
            )
            return None
        for variable, off in (("LANGFUSE_TRACING_ENABLED", "false"), ("OTEL_SDK_DISABLED", "true")):
            if env.get(variable, "").strip().lower() == off:
                log.info("Langfuse observer not started: %s=%s turns tracing off", variable, off)
                return None
        return cls(settings=settings)

    def use_settings(self, settings: Settings) -> None:
        """Read ``settings`` (the deck's) at :meth:`start`, unless some were given explicitly."""
        if self._settings is None:
            self._settings = settings

    def use_run_log(self, read_start: ReadStart) -> None:
        """Read a run's ``run.started`` from the deck's log, with ``read_start``, when a run is
        met mid-way (continued here after another process started it), so its spans land in the
        trace it was started in -- a caller's W3C trace context included."""
        self._read_start = read_start

    async def start(self) -> None:
        if self._export is not None:
            return
        settings = self._settings if self._settings is not None else Settings.load()
        section = _effective(settings)
        missing = _missing_keys(section, settings.env)
        if missing:
            raise ConfigError(
                f"LangfuseObserver needs both Langfuse keys, and {' and '.join(missing)} "
                f"{'is' if len(missing) == 1 else 'are'} not set; set "
                "AGENTDECK_LANGFUSE_PUBLIC_KEY and AGENTDECK_LANGFUSE_SECRET_KEY (environment "
                "or the langfuse section of config.yaml) or the SDK's own LANGFUSE_PUBLIC_KEY and "
                "LANGFUSE_SECRET_KEY, or remove the observer",
                setting=LangfuseSettings.env_var(_missing_fields(section)[0]),
            )
        policy = ContentPolicy(capture=section.capture, max_bytes=section.max_bytes)
        from agentdeck_langfuse.export import LangfuseExport  # the SDK loads here, not at build

        export = LangfuseExport(section)
        if self.sdk_spans:
            from agentdeck_langfuse.sdk_spans import instrument

            instrument(export.provider)
        self._renderer = TraceRenderer(policy)
        self._export = export

    async def emit(self, event: Event) -> None:
        if self._renderer is None or self._export is None:
            raise ConfigError(
                "LangfuseObserver received an event before start(); a deck starts its "
                "observers when it opens, a caller driving one by hand must await start() first"
            )
        renderer = self._renderer
        if self._read_start is not None and renderer.unplaced(event) is not None:
            await place(renderer, event, self._read_start)
        for record in renderer.feed(event):
            self._export.export(record)

    async def close(self) -> None:
        renderer, export = self._renderer, self._export
        self._renderer = self._export = None
        if renderer is None or export is None:
            return
        for record in renderer.close(datetime.now(UTC)):
            export.export(record)
        if self.sdk_spans:
            from agentdeck_langfuse.sdk_spans import uninstrument

            uninstrument(export.provider)
        await anyio.to_thread.run_sync(export.flush, FLUSH_SECONDS, abandon_on_cancel=True)

    def __repr__(self) -> str:
        return f"LangfuseObserver(sdk_spans={self.sdk_spans!r})"


def _effective(settings: Settings) -> LangfuseSettings:
    """The deck's ``langfuse`` section, what it leaves unset taken from ``LANGFUSE_*``."""
    return with_standard_defaults(settings.section(LangfuseSettings), settings.env)


def _missing_fields(section: LangfuseSettings) -> list[str]:
    return [name for name in ("public_key", "secret_key") if not getattr(section, name)]


def _missing_keys(section: LangfuseSettings, env: Mapping[str, str]) -> list[str]:
    """The keys ``section`` lacks, each named by both variables that could set it."""
    return [
        f"{LangfuseSettings.env_var(name)} (or LANGFUSE_{name.upper()})"
        for name in _missing_fields(section)
    ]


def _key_source(name: str, raw: LangfuseSettings, env: Mapping[str, str]) -> str:
    """The variable a key that is set came from (``raw``: the section before the defaults)."""
    if getattr(raw, name):
        return LangfuseSettings.env_var(name)
    return standard_source(name, env) or LangfuseSettings.env_var(name)
