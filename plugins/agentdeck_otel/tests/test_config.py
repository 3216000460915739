"""Where and what OTelObserver exports is checked when it is constructed, with errors that name
the bad value and what would be accepted -- and never echo a header's value."""

from __future__ import annotations

import pytest

from agentdeck.errors import ConfigError
from agentdeck_otel import OTelObserver
from agentdeck_otel.config import parse_headers


def test_the_endpoint_is_a_base_url_and_signal_paths_are_appended() -> None:
    observer = OTelObserver("https://cloud.langfuse.com/api/public/otel/")
    assert observer.config.url("traces") == "https://cloud.langfuse.com/api/public/otel/v1/traces"
    assert observer.config.url("metrics") == "https://cloud.langfuse.com/api/public/otel/v1/metrics"


def test_a_signal_path_given_by_mistake_is_taken_off() -> None:
    observer = OTelObserver("http://127.0.0.1:4318/v1/traces")
    assert observer.config.url("traces") == "http://127.0.0.1:4318/v1/traces"


@pytest.mark.parametrize(
    "endpoint", ["http://127.0.0.1:4318", "http://localhost:4318", "http://[::1]:4318"]
)
def test_plain_http_is_accepted_for_a_loopback_collector(endpoint: str) -> None:
    assert OTelObserver(endpoint).config.endpoint == endpoint


def test_plain_http_to_another_host_is_refused() -> None:
    with pytest.raises(ConfigError) as refused:
        OTelObserver("http://collector.example.com:4318")
    assert refused.value.setting == "endpoint"
    assert "https" in str(refused.value)


@pytest.mark.parametrize(
    "endpoint", ["", "collector:4318", "ftp://127.0.0.1", "https://host/otel?x=1", "https://"]
)
def test_an_endpoint_that_is_not_a_base_url_is_refused(endpoint: str) -> None:
    with pytest.raises(ConfigError) as refused:
        OTelObserver(endpoint)
    assert refused.value.setting == "endpoint"


def test_more_than_eight_headers_are_refused() -> None:
    headers = {f"x-h{i}": "v" for i in range(9)}
    with pytest.raises(ConfigError, match="at most 8"):
        OTelObserver("http://127.0.0.1:4318", headers=headers)


@pytest.mark.parametrize(
    "name", ["Host", "Content-Type", "content-encoding", "Proxy-Authorization"]
)
def test_headers_the_exporter_manages_are_refused(name: str) -> None:
    with pytest.raises(ConfigError) as refused:
        OTelObserver("http://127.0.0.1:4318", headers={name: "s3cr3t-value"})
    assert name in str(refused.value)
    assert "s3cr3t-value" not in str(refused.value)


def test_header_values_never_show_in_the_observer_repr() -> None:
    observer = OTelObserver("http://127.0.0.1:4318", headers={"Authorization": "Basic c2VjcmV0"})
    assert "c2VjcmV0" not in repr(observer)
    assert "c2VjcmV0" not in repr(observer.config)


def test_an_unknown_signal_is_refused_naming_the_known_ones() -> None:
    with pytest.raises(ConfigError) as refused:
        OTelObserver("http://127.0.0.1:4318", signals=("traces", "logs"))
    assert refused.value.accepted == ("traces", "metrics")


@pytest.mark.parametrize(
    ("options", "setting"),
    [
        ({"capture": "everything"}, "capture"),
        ({"max_bytes": 10}, "max_bytes"),
        ({"max_bytes": 1_000_000}, "max_bytes"),
        ({"service_name": " "}, "service_name"),
        ({"timeout": 0}, "timeout"),
    ],
)
def test_bad_options_are_config_errors_naming_the_option(
    options: dict[str, object], setting: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        OTelObserver("http://127.0.0.1:4318", **options)  # type: ignore[arg-type]
    assert refused.value.setting == setting


def test_headers_parse_from_the_otlp_env_format() -> None:
    assert parse_headers("Authorization=Basic%20cGs6c2s=, x-tenant = acme") == {
        "Authorization": "Basic cGs6c2s=",
        "x-tenant": "acme",
    }


def test_a_header_entry_without_a_value_is_refused() -> None:
    with pytest.raises(ConfigError) as refused:
        parse_headers("Authorization")
    assert refused.value.setting == "AGENTDECK_OTEL_HEADERS"


@pytest.mark.parametrize(
    "endpoint",
    [
        "http://otel-collector:4318",  # a single-label name: a service in the same namespace
        "http://otel-collector.observability.svc:4318",
        "http://otel-collector.observability.svc.cluster.local:4318",
        "http://collector.local:4318",
        "http://127.8.9.10:4318",
        "http://LOCALHOST:4318",
    ],
)
def test_plain_http_is_accepted_for_a_cluster_local_collector(endpoint: str) -> None:
    assert OTelObserver(endpoint).config.url("traces") == f"{endpoint}/v1/traces"


@pytest.mark.parametrize(
    "endpoint", ["http://10.0.0.7:4318", "http://collector.internal:4318", "http://svc.example.com"]
)
def test_plain_http_elsewhere_is_refused_saying_how_to_allow_it(endpoint: str) -> None:
    with pytest.raises(ConfigError) as refused:
        OTelObserver(endpoint)
    assert "AGENTDECK_OTEL_INSECURE=true" in str(refused.value)
    assert "insecure=True" in str(refused.value)


def test_insecure_allows_plain_http_to_any_host() -> None:
    observer = OTelObserver("http://10.0.0.7:4318", insecure=True)
    assert observer.config.url("metrics") == "http://10.0.0.7:4318/v1/metrics"


def test_a_signal_endpoint_is_used_as_given_and_checked_too() -> None:
    observer = OTelObserver(signal_endpoints={"traces": "https://t.example.com/in"})
    assert observer.config.urls == {"traces": "https://t.example.com/in"}
    with pytest.raises(ConfigError) as refused:
        OTelObserver(signal_endpoints={"traces": "http://t.example.com/in"})
    assert refused.value.setting == "traces_endpoint"
