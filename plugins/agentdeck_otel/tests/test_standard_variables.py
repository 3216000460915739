"""The standard ``OTEL_*`` variables are the defaults of ``AGENTDECK_OTEL_*``: an application
configured for OpenTelemetry gets AgentDeck's traces without AgentDeck-specific settings, and
AgentDeck's own settings win wherever they are set."""

from __future__ import annotations

import logging

import pytest
from otlp_trees import exported_metrics, exported_spans

from agentdeck import Deck, WorkflowCtx, workflow
from agentdeck.errors import ConfigError
from agentdeck.settings import Settings
from agentdeck.testing.otlp import OTLPReceiver
from agentdeck_otel import OTelObserver


@workflow
async def refund(order_id: str, ctx: WorkflowCtx) -> str:
    await ctx.report("checking", order=order_id)
    return f"refunded {order_id}"


def observer_for(env: dict[str, str]) -> OTelObserver | None:
    return OTelObserver.from_settings(Settings(env=env))


async def test_with_only_standard_variables_a_decks_runs_reach_the_collector(
    receiver: OTLPReceiver,
) -> None:
    env = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url,
        "OTEL_SERVICE_NAME": "refunds",
        "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment.name=staging,team=payments",
        "OTEL_EXPORTER_OTLP_HEADERS": "x-tenant=acme",
    }
    async with Deck(workflows=[refund], settings=Settings(env=env)) as deck:
        assert await deck.run("refund", {"order_id": "A-1"}) == "refunded A-1"

    [root] = [s for s in exported_spans(receiver) if s.parent_span_id is None]
    assert root.name == "invoke_workflow"  # the conventions' name; capture is off by default
    assert root.attributes["gen_ai.operation.name"] == "invoke_workflow"
    assert root.attributes["agentdeck.run.status"] == "completed"
    assert root.resource["service.name"] == "refunds"
    assert root.resource["deployment.environment.name"] == "staging"
    assert root.resource["team"] == "payments"
    assert {r.headers["x-tenant"] for r in receiver.requests()} == {"acme"}
    assert "agentdeck.deck.runs" in exported_metrics(receiver)


def test_agentdecks_own_settings_win_over_the_standard_ones() -> None:
    observer = observer_for(
        {
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318",
            "OTEL_EXPORTER_OTLP_HEADERS": "x-from=standard",
            "OTEL_SERVICE_NAME": "standard-name",
            "AGENTDECK_OTEL_ENDPOINT": "http://localhost:9999",
            "AGENTDECK_OTEL_HEADERS": "x-from=agentdeck",
            "AGENTDECK_OTEL_SERVICE_NAME": "agentdeck-name",
        }
    )
    assert observer is not None
    assert observer.config.url("traces") == "http://localhost:9999/v1/traces"
    assert observer.config.headers_for("metrics") == {"x-from": "agentdeck"}
    assert observer.config.service_name == "agentdeck-name"


def test_the_config_file_counts_as_agentdecks_own_setting() -> None:
    settings = Settings(
        env={"OTEL_SERVICE_NAME": "standard-name", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://[::1]:1"},
        config={"otel": {"service_name": "from-config"}},
    )
    observer = OTelObserver.from_settings(settings)
    assert observer is not None and observer.config.service_name == "from-config"


def test_per_signal_endpoints_are_used_as_given_and_only_those_signals_export() -> None:
    observer = observer_for(
        {
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://traces.example.com/ingest",
            "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "authorization=Bearer%20t0ken",
        }
    )
    assert observer is not None
    assert observer.config.signals == {"traces"}
    assert observer.config.url("traces") == "https://traces.example.com/ingest"
    assert observer.config.headers_for("traces") == {"authorization": "Bearer t0ken"}


def test_a_signal_endpoint_overrides_the_base_for_that_signal() -> None:
    observer = observer_for(
        {
            "OTEL_EXPORTER_OTLP_ENDPOINT": "https://otlp.example.com",
            "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "https://metrics.example.com/v1/metrics",
            "OTEL_TRACES_EXPORTER": "otlp",
        }
    )
    assert observer is not None
    assert observer.config.url("traces") == "https://otlp.example.com/v1/traces"
    assert observer.config.url("metrics") == "https://metrics.example.com/v1/metrics"


def test_a_signal_whose_exporter_is_none_is_not_sent() -> None:
    observer = observer_for(
        {"OTEL_EXPORTER_OTLP_ENDPOINT": "https://otlp.example.com", "OTEL_METRICS_EXPORTER": "none"}
    )
    assert observer is not None and observer.config.signals == {"traces"}


def test_grpc_is_refused_with_one_line_saying_http_protobuf_only(
    caplog: pytest.LogCaptureFixture,
) -> None:
    env = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://otel-collector:4317",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
    }
    with caplog.at_level(logging.INFO, logger="agentdeck.otel"):
        assert observer_for(env) is None
    [line] = caplog.records
    assert line.levelno == logging.WARNING
    assert "OTel observer not started" in line.message
    assert "OTEL_EXPORTER_OTLP_PROTOCOL=grpc" in line.message
    assert "http/protobuf" in line.message


def test_a_grpc_signal_is_left_out_and_the_other_still_exports(
    caplog: pytest.LogCaptureFixture,
) -> None:
    env = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://otel-collector:4318",
        "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "grpc",
    }
    with caplog.at_level(logging.INFO, logger="agentdeck.otel"):
        observer = observer_for(env)
    assert observer is not None and observer.config.signals == {"traces"}
    [line] = caplog.records
    assert "metrics are not exported: OTEL_EXPORTER_OTLP_METRICS_PROTOCOL=grpc" in line.message


def test_standard_variables_without_an_endpoint_log_why_nothing_starts(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.INFO, logger="agentdeck.otel"):
        assert observer_for({"OTEL_EXPORTER_OTLP_HEADERS": "authorization=Basic%20eA=="}) is None
    [line] = caplog.records
    assert "OTel observer not started" in line.message
    assert "OTEL_EXPORTER_OTLP_HEADERS is set but no endpoint is" in line.message
    assert "eA==" not in line.message  # a header's value is a credential


def test_nothing_set_starts_nothing_and_says_nothing(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="agentdeck.otel"):
        assert observer_for({"OTEL_SERVICE_NAME": "just-a-name"}) is None
    assert caplog.records == []


def test_otel_sdk_disabled_turns_the_automatic_observer_off(
    caplog: pytest.LogCaptureFixture,
) -> None:
    env = {"AGENTDECK_OTEL_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "true"}
    with caplog.at_level(logging.INFO, logger="agentdeck.otel"):
        assert observer_for(env) is None
    [line] = caplog.records
    assert "OTEL_SDK_DISABLED" in line.message


def test_a_bad_standard_value_names_the_standard_variable() -> None:
    with pytest.raises(ConfigError) as refused:
        observer_for({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector.example.com:4318"})
    assert refused.value.setting == "OTEL_EXPORTER_OTLP_ENDPOINT"
    assert "OTEL_EXPORTER_OTLP_INSECURE=true" in str(refused.value)


def test_the_standard_insecure_flag_allows_plain_http_anywhere() -> None:
    observer = observer_for(
        {
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector.example.com:4318",
            "OTEL_EXPORTER_OTLP_INSECURE": "true",
        }
    )
    assert observer is not None
    assert observer.config.url("traces") == "http://collector.example.com:4318/v1/traces"


def test_agentdecks_insecure_setting_wins_over_the_standard_one() -> None:
    with pytest.raises(ConfigError) as refused:
        observer_for(
            {
                "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector.example.com:4318",
                "OTEL_EXPORTER_OTLP_INSECURE": "true",
                "AGENTDECK_OTEL_INSECURE": "false",
            }
        )
    assert refused.value.setting == "OTEL_EXPORTER_OTLP_ENDPOINT"
