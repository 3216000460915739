"""``OTelObserver``: run traces and metrics over OTLP/HTTP, to any OpenTelemetry backend."""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import anyio
import anyio.to_thread

from agentdeck.errors import ConfigError
from agentdeck.model.events import Event
from agentdeck.observing.capture import DEFAULT_MAX_BYTES, Capture, ContentPolicy
from agentdeck.observing.tracing.renderer import ReadStart, TraceRenderer, place
from agentdeck.observing.tracing.spans import Rendered, SpanRecord
from agentdeck.ports import Observer
from agentdeck.settings import Settings
from agentdeck_otel.config import SIGNALS, ExportConfig
from agentdeck_otel.environment import log, resolve

if TYPE_CHECKING:
    from agentdeck_otel.metrics import MetricExport
    from agentdeck_otel.spans import SpanExport

__all__ = ["OTelObserver"]

METRICS_INTERVAL_SECONDS = 60.0
"""How often metrics are exported while the deck runs (and once more when it closes)."""


class OTelObserver(Observer):
    """Exports every run as a trace, and run metrics, to an OTLP/HTTP endpoint.

    The traces are the ones the Langfuse plugin sends, rendered by the same
    :class:`agentdeck.observing.tracing.renderer.TraceRenderer`: one trace per run, the run as
    its root span, model calls, tool calls, waits and decisions under it, nested runs under
    their parent. Any OTLP/HTTP receiver takes them: an OpenTelemetry Collector, the Datadog
    agent (``http://127.0.0.1:4318``), Grafana Cloud (``.../otlp`` with a Basic
    ``Authorization`` header), Langfuse (``.../api/public/otel``, ``signals=("traces",)``).

    ``capture`` decides what content leaves the process (see :mod:`agentdeck.observing.capture`):
    ``off`` by default -- timings, outcomes, token counts and hashed ids only. ``headers`` (at most
    8) typically carry credentials and are never printed.

    Spans, attributes and metrics follow the OpenTelemetry GenAI semantic conventions (span
    names such as ``chat gpt-5-mini``, ``execute_tool find_slots``, ``invoke_agent booking``;
    ``gen_ai.operation.name`` on every one; content as ``gen_ai.input.messages`` /
    ``gen_ai.output.messages`` and the tool call attributes, under ``full`` capture only).

    Metrics: ``gen_ai.client.token.usage`` (by ``gen_ai.token.type``) and
    ``gen_ai.client.operation.duration`` per model call, and AgentDeck's own
    ``agentdeck.deck.runs`` (by outcome), ``agentdeck.run.duration`` and
    ``agentdeck.observer.dropped`` (what the deck reports through :meth:`count_dropped`).

    Export happens on background threads: :meth:`emit` only queues, an unreachable or failing
    collector is retried and logged by the exporter and never reaches a run, and :meth:`close`
    flushes for at most ``timeout`` seconds, then gives up on what is left.
    """

    def __init__(
        self,
        endpoint: str = "",
        *,
        headers: Mapping[str, str] | None = None,
        capture: Capture | str = Capture.OFF,
        max_bytes: int = DEFAULT_MAX_BYTES,
        service_name: str = "agentdeck",
        signals: Collection[str] = SIGNALS,
        timeout: float = 5.0,
        view: Callable[[Event], bool] | None = None,
        insecure: bool = False,
        signal_endpoints: Mapping[str, str] | None = None,
        signal_headers: Mapping[str, Mapping[str, str]] | None = None,
        resource_attributes: Mapping[str, str] | None = None,
    ) -> None:
        """
        :param endpoint: base URL of an OTLP/HTTP receiver (``/v1/<signal>`` is appended).
        :param insecure: allow plain ``http://`` to a host that is neither loopback nor
            cluster-local.
        :param signal_endpoints: signal -> full URL, used as given (what
            ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` is); a signal given one needs no ``endpoint``.
        :param signal_headers: signal -> headers replacing ``headers`` for that signal.
        :param resource_attributes: further resource attributes beside ``service.name``.
        """
        if not isinstance(timeout, int | float) or not 0 < timeout <= 60:
            raise ConfigError(
                f"timeout must be a number of seconds in (0, 60], not {timeout!r}",
                setting="timeout",
            )
        self.config = ExportConfig.build(
            endpoint,
            headers=headers,
            signals=signals,
            policy=ContentPolicy(capture=capture, max_bytes=max_bytes),
            service_name=service_name,
            insecure=bool(insecure),
            signal_endpoints=signal_endpoints,
            signal_headers=signal_headers,
            resource_attributes=resource_attributes,
        )
        self.timeout = float(timeout)
        self.view = view
        self._renderer: TraceRenderer | None = None
        self._read_start: ReadStart | None = None
        self._spans: SpanExport | None = None
        self._metrics: MetricExport | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> OTelObserver | None:
        """The observer a deck starts by itself, from ``AGENTDECK_OTEL_*`` and, for what those
        leave unset, the standard ``OTEL_*`` variables (:mod:`agentdeck_otel.environment`).

        ``None`` when nothing asks for one; when the standard variables are present but cannot
        start one (no endpoint, gRPC only, ``OTEL_SDK_DISABLED``), one line is logged saying so.
        """
        resolution = resolve(settings)
        if resolution.note is not None:
            log.log(resolution.note_level, resolution.note)
        if resolution.arguments is None:
            return None
        try:
            return cls(**resolution.arguments)
        except ConfigError as error:
            # Name the variable the value came from, not the constructor argument.
            name = error.setting or "endpoint"
            variable = resolution.origins.get(name, name)
            raise ConfigError(error.message, setting=variable, accepted=error.accepted) from None

    def use_run_log(self, read_start: ReadStart) -> None:
        """Read a run's ``run.started`` from the deck's log, with ``read_start``, when a run is
        met mid-way (continued here after another process started it), so its spans land in the
        trace it was started in -- a caller's W3C trace context included."""
        self._read_start = read_start

    async def start(self) -> None:
        if self._renderer is not None:
            return
        # The SDK loads here, when the deck opens, not when a deck is built.
        from opentelemetry.sdk.resources import Resource

        from agentdeck_otel.metrics import MetricExport
        from agentdeck_otel.spans import SpanExport

        resource = Resource.create(
            {**self.config.resource_attributes, "service.name": self.config.service_name}
        )
        if "traces" in self.config.signals:
            self._spans = SpanExport(self.config, resource, timeout=self.timeout)
        if "metrics" in self.config.signals:
            self._metrics = MetricExport(
                self.config, resource, timeout=self.timeout, interval=METRICS_INTERVAL_SECONDS
            )
        self._renderer = TraceRenderer(self.config.policy)

    async def emit(self, event: Event) -> None:
        if self._renderer is None:
            raise ConfigError(
                "OTelObserver received an event before start(); a deck starts its observers "
                "when it opens, a caller driving one by hand must await start() first"
            )
        renderer = self._renderer
        if self._read_start is not None and renderer.unplaced(event) is not None:
            await place(renderer, event, self._read_start)
        self._send(renderer.feed(event))

    def count_dropped(self, observer: str, count: int) -> None:
        """Count events another observer's queue dropped (the deck's observer hub calls this)."""
        if self._metrics is not None:
            self._metrics.count_dropped(observer, count)

    async def close(self) -> None:
        renderer, spans, metrics = self._renderer, self._spans, self._metrics
        self._renderer, self._spans, self._metrics = None, None, None
        if renderer is None:
            return
        self._send(renderer.close(datetime.now(UTC)), spans=spans, metrics=metrics)
        deadline = time.monotonic() + self.timeout
        with anyio.move_on_after(self.timeout):
            await anyio.to_thread.run_sync(_drain, spans, metrics, deadline, abandon_on_cancel=True)

    def _send(
        self,
        rendered: Sequence[Rendered],
        *,
        spans: SpanExport | None = None,
        metrics: MetricExport | None = None,
    ) -> None:
        spans = spans if spans is not None else self._spans
        metrics = metrics if metrics is not None else self._metrics
        for item in rendered:
            if not isinstance(item, SpanRecord):
                continue  # SpanStarted: spans are written whole, at their end
            if spans is not None:
                spans.export(item)
            if metrics is not None:
                metrics.record(item)

    def __repr__(self) -> str:
        return (
            f"OTelObserver({self.config.endpoint!r}, capture={self.config.policy.capture!s}, "
            f"signals={sorted(self.config.signals)})"
        )


def _drain(spans: SpanExport | None, metrics: MetricExport | None, deadline: float) -> None:
    """Flush and stop both pipelines, each step within what is left of the close budget."""

    def remaining() -> float:
        return max(0.001, deadline - time.monotonic())

    if spans is not None:
        spans.flush(remaining())
    if metrics is not None:
        metrics.shutdown(remaining())
    if spans is not None:
        spans.shutdown()
