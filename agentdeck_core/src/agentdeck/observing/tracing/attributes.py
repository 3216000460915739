"""The attribute keys a span record carries, one constant each: the trace's vocabulary.

Keys are the OpenTelemetry GenAI semantic conventions' names where one exists (``gen_ai.*``) and
``agentdeck.*`` otherwise; ``langfuse.observation.type`` carries the span type for backends that
read it. The core imports no OpenTelemetry package, so the names are spelled here; the OTel
plugin's tests check each ``gen_ai.*`` one against the ``opentelemetry-semantic-conventions``
constant of the same name.

Which keys a record carries depends on the content policy. The operation
(:data:`GEN_AI_OPERATION_NAME`), the provider and the token counts are vocabulary and always go;
names (agents, workflows, tools, models, namespaces) appear only when the policy lets names out,
and identifiers as the policy writes them (hashed, raw). Content is not an attribute here: it is
the record's ``input``/``output`` and ``input_messages``/``output_messages``, which each exporter
puts where its backend expects it. The renderer names every key through these constants, so this
module is the one list of what an exporter may find in :attr:`~.spans.SpanRecord.attributes`.
"""

from __future__ import annotations

from agentdeck.model.payloads import Usage
from agentdeck.observing.tracing.spans import AttributeValue

__all__ = [
    "AGENT_NEXT",
    "AGENT_PREVIOUS",
    "ANSWER_ORIGIN",
    "APPROVAL_APPROVED",
    "APPROVAL_ORIGIN",
    "ARTIFACT_MEDIA_TYPE",
    "ARTIFACT_SIZE",
    "CONTROL_SAFE_POINT",
    "CONTROL_VERB",
    "ERROR_CODE",
    "ERROR_RETRYABLE",
    "ERROR_WHERE",
    "GEN_AI_AGENT_NAME",
    "GEN_AI_OPERATION_NAME",
    "GEN_AI_PROVIDER_NAME",
    "GEN_AI_REQUEST_MODEL",
    "GEN_AI_TOOL_CALL_ID",
    "GEN_AI_TOOL_NAME",
    "GEN_AI_TOOL_TYPE",
    "GEN_AI_USAGE_INPUT_TOKENS",
    "GEN_AI_USAGE_OUTPUT_TOKENS",
    "GEN_AI_WORKFLOW_NAME",
    "INTERRUPT_ID",
    "INTERRUPT_REASON",
    "INVOCABLE_KIND",
    "LANGFUSE_OBSERVATION_TYPE",
    "NAMESPACE",
    "NODE_STEP",
    "OPERATION_CHAT",
    "OPERATION_EXECUTE_TOOL",
    "OPERATION_INVOKE_AGENT",
    "OPERATION_INVOKE_WORKFLOW",
    "PAUSE_WAKE_AT",
    "PLAN_ITEMS",
    "PROVIDER_OPENAI",
    "PROVIDER_OTHER",
    "REPORT_LEVEL",
    "RUN_CONTINUED",
    "RUN_ID",
    "RUN_PARENT_ID",
    "RUN_STATUS",
    "SPAN_UNFINISHED",
    "STEP_INDEX",
    "TOOL_ARGS_INVALID",
    "TOOL_ERROR",
    "TOOL_RESULT_SIZE",
    "USAGE_REQUESTS",
    "USAGE_TOTAL_TOKENS",
    "provider_of",
    "usage_attributes",
]

# --------------------------------------------------------------------------- OpenTelemetry GenAI

GEN_AI_OPERATION_NAME = "gen_ai.operation.name"
"""On every run root, generation and tool call, whatever the policy (an operation is not
content): one of the ``OPERATION_*`` values."""
GEN_AI_PROVIDER_NAME = "gen_ai.provider.name"
"""On an agent turn's root and on every generation: who served the model calls
(:func:`provider_of`)."""
GEN_AI_AGENT_NAME = "gen_ai.agent.name"
"""The agent an agent turn's root stands for."""
GEN_AI_WORKFLOW_NAME = "gen_ai.workflow.name"
"""The workflow (or graph) a root that is not an agent turn stands for."""
GEN_AI_REQUEST_MODEL = "gen_ai.request.model"
"""The model a generation called."""
GEN_AI_TOOL_NAME = "gen_ai.tool.name"
GEN_AI_TOOL_CALL_ID = "gen_ai.tool.call.id"
GEN_AI_TOOL_TYPE = "gen_ai.tool.type"
"""``function``: every tool an agent calls is one of the application's functions."""
GEN_AI_USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens"
GEN_AI_USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"

OPERATION_INVOKE_AGENT = "invoke_agent"
"""The operation of an agent turn's root."""
OPERATION_INVOKE_WORKFLOW = "invoke_workflow"
"""The operation of the root of any other run (a workflow, a graph)."""
OPERATION_CHAT = "chat"
"""The operation of a generation (one model call)."""
OPERATION_EXECUTE_TOOL = "execute_tool"
"""The operation of a tool call."""

PROVIDER_OPENAI = "openai"
"""The provider of an agent turn's model calls: agents run on the OpenAI Agents SDK, which
speaks to its endpoint through the OpenAI client -- the conventions' ``openai`` whichever
OpenAI-compatible service answers."""
PROVIDER_OTHER = "_OTHER"
"""The conventions' value when the provider is not known (a graph's model calls)."""

# --------------------------------------------------------------------------- Langfuse

LANGFUSE_OBSERVATION_TYPE = "langfuse.observation.type"
"""The span's :class:`~.spans.SpanType` value."""

# --------------------------------------------------------------------------- the run

RUN_ID = "agentdeck.run.id"
"""On every record: the run it belongs to."""
RUN_PARENT_ID = "agentdeck.run.parent_id"
"""On a child run's root: the run that started it."""
RUN_STATUS = "agentdeck.run.status"
"""On a run's root: how it ended (``completed``, ``failed``, ``cancelled``), or where it stood
when the stream ended first."""
RUN_CONTINUED = "agentdeck.run.continued"
"""On the span under which a process continues a run whose start another process rendered."""
NAMESPACE = "agentdeck.namespace"
INVOCABLE_KIND = "agentdeck.invocable.kind"
"""``agent``, ``workflow``, ``graph`` or an engine's own kind."""
SPAN_UNFINISHED = "agentdeck.span.unfinished"
"""The span was ended because the stream ended (or the renderer evicted its run), not by its
own closing event."""

# --------------------------------------------------------------------------- how a run ended

ERROR_CODE = "agentdeck.error.code"
ERROR_RETRYABLE = "agentdeck.error.retryable"
ERROR_WHERE = "agentdeck.error.where"
PAUSE_WAKE_AT = "agentdeck.pause.wake_at"
"""On a pause span: when a timer will resume the run (ISO 8601)."""

# --------------------------------------------------------------------------- questions and control

INTERRUPT_ID = "agentdeck.interrupt.id"
INTERRUPT_REASON = "agentdeck.interrupt.reason"
ANSWER_ORIGIN = "agentdeck.answer.origin"
APPROVAL_APPROVED = "agentdeck.approval.approved"
APPROVAL_ORIGIN = "agentdeck.approval.origin"
CONTROL_VERB = "agentdeck.control.verb"
CONTROL_SAFE_POINT = "agentdeck.control.safe_point"

# --------------------------------------------------------------------------- what the run did

AGENT_NEXT = "agentdeck.agent.next"
AGENT_PREVIOUS = "agentdeck.agent.previous"
TOOL_ARGS_INVALID = "agentdeck.tool.args_invalid"
TOOL_RESULT_SIZE = "agentdeck.tool.result_size"
TOOL_ERROR = "agentdeck.tool.error"
STEP_INDEX = "agentdeck.step.index"
NODE_STEP = "agentdeck.node.step"
REPORT_LEVEL = "agentdeck.report.level"
PLAN_ITEMS = "agentdeck.plan.items"
ARTIFACT_SIZE = "agentdeck.artifact.size"
ARTIFACT_MEDIA_TYPE = "agentdeck.artifact.media_type"

# --------------------------------------------------------------------------- usage

USAGE_TOTAL_TOKENS = "agentdeck.usage.total_tokens"
USAGE_REQUESTS = "agentdeck.usage.requests"


def provider_of(invocable_kind: str | None) -> str:
    """The :data:`GEN_AI_PROVIDER_NAME` of a run's model calls, by what the run is."""
    return PROVIDER_OPENAI if invocable_kind == "agent" else PROVIDER_OTHER


def usage_attributes(usage: Usage) -> dict[str, AttributeValue]:
    """The token and request counts of ``usage``, as a generation or a run's root carries them."""
    return {
        GEN_AI_USAGE_INPUT_TOKENS: usage.input_tokens,
        GEN_AI_USAGE_OUTPUT_TOKENS: usage.output_tokens,
        USAGE_TOTAL_TOKENS: usage.total_tokens,
        USAGE_REQUESTS: usage.requests,
    }
