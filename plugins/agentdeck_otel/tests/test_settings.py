"""``AGENTDECK_OTEL_*`` configures the observer a deck starts by itself."""

from __future__ import annotations

import pytest

from agentdeck.errors import ConfigError
from agentdeck.settings import Settings
from agentdeck_otel import OTelObserver, OTelSettings


def test_without_an_endpoint_no_observer_is_configured() -> None:
    assert OTelObserver.from_settings(Settings(env={})) is None


def test_the_endpoint_headers_and_policy_come_from_the_environment() -> None:
    settings = Settings(
        env={
            "AGENTDECK_OTEL_ENDPOINT": "https://otlp.example.com/otlp",
            "AGENTDECK_OTEL_HEADERS": "Authorization=Basic%20abc",
            "AGENTDECK_OTEL_CAPTURE": "metadata",
            "AGENTDECK_OTEL_SIGNALS": "traces",
            "AGENTDECK_OTEL_SERVICE_NAME": "booking-api",
        }
    )
    observer = OTelObserver.from_settings(settings)
    assert observer is not None
    assert observer.config.url("traces") == "https://otlp.example.com/otlp/v1/traces"
    assert observer.config.headers_for("traces") == {"Authorization": "Basic abc"}
    assert observer.config.policy.capture == "metadata"
    assert observer.config.signals == {"traces"}
    assert observer.config.service_name == "booking-api"


def test_a_bad_endpoint_in_the_environment_names_the_variable() -> None:
    settings = Settings(env={"AGENTDECK_OTEL_ENDPOINT": "http://collector.internal:4318"})
    with pytest.raises(ConfigError) as refused:
        OTelObserver.from_settings(settings)
    assert refused.value.setting == "AGENTDECK_OTEL_ENDPOINT"


def test_capture_defaults_to_off() -> None:
    assert Settings(env={}).section(OTelSettings).capture == "off"


def test_the_headers_setting_is_treated_as_a_secret() -> None:
    settings = Settings(env={"AGENTDECK_OTEL_HEADERS": "Authorization=Bearer%20tok3n"})
    section = settings.section(OTelSettings)
    assert "tok3n" not in repr(section)
    assert "tok3n" not in str(section.model_dump())
