"""AgentDeck: a harness for AI agents you have to operate.

The public surface is imported from here (``from agentdeck import Event, RunStatus, ...``).
Plugins implement hooks marked with :data:`hookimpl`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from agentdeck.errors import (
    AgentDeckError,
    AlreadyAnsweredError,
    AnswerRefusedError,
    ConfigError,
    ContentTooLargeError,
    ContextTypeError,
    DuplicateKeyError,
    EventSchemaError,
    ExtraNotInstalledError,
    ForkUnsupportedError,
    InvalidInputError,
    NotFoundError,
    PluginNotInstalledError,
    ReplayError,
    RunCancelledError,
    RunFailedError,
    RunFinishedError,
    RunStateError,
    RunSuspendedError,
    SessionBusyError,
    StoreError,
)
from agentdeck.vocabulary import RunStatus

if TYPE_CHECKING:  # what a type checker and an editor see; at run time these resolve lazily
    from agentdeck.authoring.agents import Agent
    from agentdeck.authoring.context import Context, ToolCtx, WorkflowCtx
    from agentdeck.authoring.mcp import MCP, MCPServerSpec
    from agentdeck.authoring.skills import Skill, Skills
    from agentdeck.authoring.tools import Tool, tool
    from agentdeck.authoring.workflows import WorkflowDefinition, workflow
    from agentdeck.deck.deck import Deck
    from agentdeck.deck.runs import Run
    from agentdeck.model.clock import Clock, ManualClock, SystemClock
    from agentdeck.model.content import (
        INLINE_CAP_BYTES,
        AudioBlock,
        ContentBlock,
        DataBlock,
        ImageBlock,
        ResourceBlock,
        TextBlock,
        UnknownBlock,
    )
    from agentdeck.model.events import SCHEMA_VERSION, Event
    from agentdeck.model.payloads import (
        AgentChanged,
        AnswerRecorded,
        AnswerRefused,
        ApprovalDecided,
        ArtifactCreated,
        ControlObserved,
        ControlRequested,
        Custom,
        InputAppended,
        MessageCompleted,
        NodeUpdated,
        Payload,
        PlanUpdated,
        Report,
        RunCancelled,
        RunClaimed,
        RunCompleted,
        RunFailed,
        RunInterrupted,
        RunPaused,
        RunQueued,
        RunResumed,
        RunStarted,
        StepCompleted,
        TextDelta,
        ThoughtDelta,
        ToolCallCompleted,
        ToolCallStarted,
        UnknownEvent,
        Usage,
        UsageReported,
    )
    from agentdeck.model.results import InterruptResult, TurnResult
    from agentdeck.observing import views
    from agentdeck.plugins.hookspecs import hookimpl
    from agentdeck.ports import Observer
    from agentdeck.runtime.config import Budget
    from agentdeck.settings import Settings

_LAZY: dict[str, str] = {
    "Agent": "agentdeck.authoring.agents",
    "AgentChanged": "agentdeck.model.payloads",
    "AnswerRecorded": "agentdeck.model.payloads",
    "AnswerRefused": "agentdeck.model.payloads",
    "ApprovalDecided": "agentdeck.model.payloads",
    "ArtifactCreated": "agentdeck.model.payloads",
    "AudioBlock": "agentdeck.model.content",
    "Budget": "agentdeck.runtime.config",
    "Clock": "agentdeck.model.clock",
    "ContentBlock": "agentdeck.model.content",
    "Context": "agentdeck.authoring.context",
    "ControlObserved": "agentdeck.model.payloads",
    "ControlRequested": "agentdeck.model.payloads",
    "Custom": "agentdeck.model.payloads",
    "DataBlock": "agentdeck.model.content",
    "Deck": "agentdeck.deck.deck",
    "Event": "agentdeck.model.events",
    "INLINE_CAP_BYTES": "agentdeck.model.content",
    "ImageBlock": "agentdeck.model.content",
    "InputAppended": "agentdeck.model.payloads",
    "InterruptResult": "agentdeck.model.results",
    "MCP": "agentdeck.authoring.mcp",
    "MCPServerSpec": "agentdeck.authoring.mcp",
    "ManualClock": "agentdeck.model.clock",
    "MessageCompleted": "agentdeck.model.payloads",
    "NodeUpdated": "agentdeck.model.payloads",
    "Observer": "agentdeck.ports",
    "Payload": "agentdeck.model.payloads",
    "PlanUpdated": "agentdeck.model.payloads",
    "Report": "agentdeck.model.payloads",
    "ResourceBlock": "agentdeck.model.content",
    "Run": "agentdeck.deck.runs",
    "RunCancelled": "agentdeck.model.payloads",
    "RunClaimed": "agentdeck.model.payloads",
    "RunCompleted": "agentdeck.model.payloads",
    "RunFailed": "agentdeck.model.payloads",
    "RunInterrupted": "agentdeck.model.payloads",
    "RunPaused": "agentdeck.model.payloads",
    "RunQueued": "agentdeck.model.payloads",
    "RunResumed": "agentdeck.model.payloads",
    "RunStarted": "agentdeck.model.payloads",
    "SCHEMA_VERSION": "agentdeck.model.events",
    "Settings": "agentdeck.settings",
    "Skill": "agentdeck.authoring.skills",
    "Skills": "agentdeck.authoring.skills",
    "StepCompleted": "agentdeck.model.payloads",
    "SystemClock": "agentdeck.model.clock",
    "TextBlock": "agentdeck.model.content",
    "TextDelta": "agentdeck.model.payloads",
    "ThoughtDelta": "agentdeck.model.payloads",
    "Tool": "agentdeck.authoring.tools",
    "ToolCallCompleted": "agentdeck.model.payloads",
    "ToolCallStarted": "agentdeck.model.payloads",
    "ToolCtx": "agentdeck.authoring.context",
    "TurnResult": "agentdeck.model.results",
    "UnknownBlock": "agentdeck.model.content",
    "UnknownEvent": "agentdeck.model.payloads",
    "Usage": "agentdeck.model.payloads",
    "UsageReported": "agentdeck.model.payloads",
    "WorkflowCtx": "agentdeck.authoring.context",
    "WorkflowDefinition": "agentdeck.authoring.workflows",
    "hookimpl": "agentdeck.plugins.hookspecs",
    "tool": "agentdeck.authoring.tools",
    "views": "agentdeck.observing",
    "workflow": "agentdeck.authoring.workflows",
}
"""Each public name and the module defining it. Importing ``agentdeck`` (and so every
``agentdeck.*`` module, the ``agentdeck`` command among them) loads none of them: a name is
imported the first time it is used, so ``agentdeck --help`` and the commands that only read a
store do not pay for pydantic models, the authoring layer and the runtime."""

__version__ = "0.1.0"

__all__ = [
    "INLINE_CAP_BYTES",
    "MCP",
    "SCHEMA_VERSION",
    "Agent",
    "AgentChanged",
    "AgentDeckError",
    "AlreadyAnsweredError",
    "AnswerRecorded",
    "AnswerRefused",
    "AnswerRefusedError",
    "ApprovalDecided",
    "ArtifactCreated",
    "AudioBlock",
    "Budget",
    "Clock",
    "ConfigError",
    "ContentBlock",
    "ContentTooLargeError",
    "Context",
    "ContextTypeError",
    "ControlObserved",
    "ControlRequested",
    "Custom",
    "DataBlock",
    "Deck",
    "DuplicateKeyError",
    "Event",
    "EventSchemaError",
    "ExtraNotInstalledError",
    "ForkUnsupportedError",
    "ImageBlock",
    "InputAppended",
    "InterruptResult",
    "InvalidInputError",
    "MCPServerSpec",
    "ManualClock",
    "MessageCompleted",
    "NodeUpdated",
    "NotFoundError",
    "Observer",
    "Payload",
    "PlanUpdated",
    "PluginNotInstalledError",
    "ReplayError",
    "Report",
    "ResourceBlock",
    "Run",
    "RunCancelled",
    "RunCancelledError",
    "RunClaimed",
    "RunCompleted",
    "RunFailed",
    "RunFailedError",
    "RunFinishedError",
    "RunInterrupted",
    "RunPaused",
    "RunQueued",
    "RunResumed",
    "RunStarted",
    "RunStateError",
    "RunStatus",
    "RunSuspendedError",
    "SessionBusyError",
    "Settings",
    "Skill",
    "Skills",
    "StepCompleted",
    "StoreError",
    "SystemClock",
    "TextBlock",
    "TextDelta",
    "ThoughtDelta",
    "Tool",
    "ToolCallCompleted",
    "ToolCallStarted",
    "ToolCtx",
    "TurnResult",
    "UnknownBlock",
    "UnknownEvent",
    "Usage",
    "UsageReported",
    "WorkflowCtx",
    "WorkflowDefinition",
    "__version__",
    "hookimpl",
    "tool",
    "views",
    "workflow",
]


# Names that belong to plugins resolve lazily from the installed plugin; without it, naming one
# raises PluginNotInstalledError (an ImportError) saying which distribution to install.
_FROM_PLUGINS: dict[str, tuple[str, str, str]] = {
    "Workflow": ("agentdeck_langgraph", "Workflow", "agentdeck-langgraph"),
}


def __getattr__(name: str) -> object:
    home = _LAZY.get(name)
    if home is not None:
        module = importlib.import_module(home)
        # ``views`` is a module of its own: the package's attribute once it is imported.
        value = getattr(module, name, None)
        if value is None:
            value = importlib.import_module(f"{home}.{name}")
        globals()[name] = value  # resolved once; later lookups skip this function
        return value
    provider = _FROM_PLUGINS.get(name)
    if provider is None:
        raise AttributeError(f"module 'agentdeck' has no attribute {name!r}")
    module_name, attribute, distribution = provider
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as missing:
        if missing.name is not None and module_name.startswith(missing.name):
            raise PluginNotInstalledError(
                attribute=name, module="agentdeck", distribution=distribution
            ) from None
        raise
    return getattr(module, attribute)


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
