"""The raw layer (``sdk_spans=True``): the OpenAI Agents SDK's own spans, via OpenInference.

OpenInference's instrumentor registers a trace processor with the Agents SDK that turns every
agent, generation, tool and handoff span the SDK records into an OpenTelemetry span, with its
input and output. Pointed at the observer's private tracer provider, those spans reach the same
Langfuse project as the semantic trace -- as a *separate* trace per run: nesting them under the
semantic one would need the engine to establish an OTel context, which engines never do.

The instrumentation is process-wide (the Agents SDK has one list of trace processors), so every
observer exporting to the same Langfuse key shares it; it is removed when the last one closes.
It is added alongside the application's own trace processors, never replacing them.
"""

from __future__ import annotations

import threading
from importlib.util import find_spec
from typing import TYPE_CHECKING

from agentdeck.errors import ConfigError

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

__all__ = ["instrument", "uninstrument"]

_LOCK = threading.Lock()
_installed: list[TracerProvider] = []
"""The provider the instrumentation exports to, once per observer using it."""


def instrument(provider: TracerProvider) -> None:
    """Send the Agents SDK's spans to ``provider`` (refcounted per observer)."""
    for module, distribution in (
        ("agents", "agentdeck-openai (the OpenAI Agents SDK engine)"),
        (
            "openinference.instrumentation.openai_agents",
            '"agentdeck-langfuse[sdk-spans]"',
        ),
    ):
        if find_spec(module.split(".")[0]) is None or find_spec(module) is None:
            raise ConfigError(
                f"LangfuseObserver(sdk_spans=True) records the OpenAI Agents SDK's spans, which "
                f"needs the {module!r} module; install {distribution}",
                setting="sdk_spans",
            )
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    with _LOCK:
        if _installed and _installed[0] is not provider:
            raise ConfigError(
                "another LangfuseObserver(sdk_spans=True) in this process already receives the "
                "Agents SDK's spans for a different Langfuse key; the SDK's tracing is "
                "process-wide, so only one Langfuse project can have them at a time",
                setting="sdk_spans",
            )
        if not _installed:
            OpenAIAgentsInstrumentor().instrument(
                tracer_provider=provider, exclusive_processor=False
            )
        _installed.append(provider)


def uninstrument(provider: TracerProvider) -> None:
    """Undo one :func:`instrument`; the last one removes the trace processor."""
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    with _LOCK:
        if provider not in _installed:
            return
        _installed.remove(provider)
        if not _installed:
            OpenAIAgentsInstrumentor().uninstrument()
