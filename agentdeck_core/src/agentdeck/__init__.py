"""AgentDeck: a harness for AI agents you have to operate.

The public surface is imported from here (``from agentdeck import Event, RunStatus, ...``).
Plugins implement hooks marked with :data:`hookimpl`.
"""

from __future__ import annotations

from agentdeck.authoring.agents import Agent
from agentdeck.authoring.context import Context, ToolCtx, WorkflowCtx
from agentdeck.authoring.mcp import MCP, MCPServerSpec
from agentdeck.authoring.skills import Skill, Skills
from agentdeck.authoring.tools import Tool, tool
from agentdeck.authoring.workflows import WorkflowDefinition, workflow
from agentdeck.deck.deck import Deck
from agentdeck.deck.runs import Run
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
    RunCompleted,
    RunFailed,
    RunInterrupted,
    RunPaused,
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
from agentdeck.vocabulary import RunStatus

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
    "RunCompleted",
    "RunFailed",
    "RunFailedError",
    "RunFinishedError",
    "RunInterrupted",
    "RunPaused",
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
    provider = _FROM_PLUGINS.get(name)
    if provider is None:
        raise AttributeError(f"module 'agentdeck' has no attribute {name!r}")
    import importlib

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
