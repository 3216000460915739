"""Decode what an exporter sent to the loopback receiver into spans a test can assert on.

(The receiver lives in the core's kits, which carry no OpenTelemetry dependency; decoding the
protobuf bodies is done here, with the ``opentelemetry-proto`` package the exporter depends on.)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.metrics.v1.metrics_pb2 import Metric

from agentdeck.testing.otlp import OTLPReceiver


@dataclass(frozen=True)
class ExportedSpan:
    name: str
    trace_id: str
    span_id: str
    parent_span_id: str | None
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    status_code: int
    status_message: str
    scope: str
    kind: int
    trace_state: str
    resource: dict[str, Any] = field(repr=False)

    @property
    def seconds(self) -> float:
        return (self.end_ns - self.start_ns) / 1e9


def value_of(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [value_of(v) for v in value.array_value.values]
    return getattr(value, kind) if kind else None


def exported_spans(receiver: OTLPReceiver, path_suffix: str = "/v1/traces") -> list[ExportedSpan]:
    spans = []
    for request in receiver.requests(path_suffix):
        decoded = ExportTraceServiceRequest.FromString(request.body)
        for resource_spans in decoded.resource_spans:
            resource = {a.key: value_of(a.value) for a in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    spans.append(
                        ExportedSpan(
                            name=span.name,
                            trace_id=span.trace_id.hex(),
                            span_id=span.span_id.hex(),
                            parent_span_id=span.parent_span_id.hex() or None,
                            start_ns=span.start_time_unix_nano,
                            end_ns=span.end_time_unix_nano,
                            attributes={a.key: value_of(a.value) for a in span.attributes},
                            status_code=span.status.code,
                            status_message=span.status.message,
                            scope=scope_spans.scope.name,
                            kind=span.kind,
                            trace_state=span.trace_state,
                            resource=resource,
                        )
                    )
    return spans


def by_name(spans: list[ExportedSpan]) -> dict[str, ExportedSpan]:
    named = {span.name: span for span in spans}
    assert len(named) == len(spans), f"span names are not unique: {[s.name for s in spans]}"
    return named


def exported_metrics(receiver: OTLPReceiver) -> dict[str, list[Metric]]:
    metrics: dict[str, list[Metric]] = {}
    for request in receiver.requests("/v1/metrics"):
        decoded = ExportMetricsServiceRequest.FromString(request.body)
        for resource_metrics in decoded.resource_metrics:
            for scope_metrics in resource_metrics.scope_metrics:
                for metric in scope_metrics.metrics:
                    metrics.setdefault(metric.name, []).append(metric)
    return metrics


def point_attributes(point: Any) -> dict[str, Any]:
    return {a.key: value_of(a.value) for a in point.attributes}
