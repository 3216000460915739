"""The attribute keys a span record carries, one constant each: the trace's vocabulary.

Keys follow the OpenTelemetry GenAI conventions where one exists (``gen_ai.*``) and use
``agentdeck.*`` otherwise; ``langfuse.observation.type`` carries the span type for backends that
read it. Which keys a record carries depends on the content policy: names (agents, tools,
models, namespaces) appear only when it lets names out, and identifiers as the policy writes them
(hashed, raw). The renderer names every key through these constants, so this module is the one
list of what an exporter may find in :attr:`~.spans.SpanRecord.attributes`.
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
    "GEN_AI_REQUEST_MODEL",
    "GEN_AI_TOOL_CALL_ID",
    "GEN_AI_TOOL_NAME",
    "GEN_AI_USAGE_INPUT_TOKENS",
    "GEN_AI_USAGE_OUTPUT_TOKENS",
    "INTERRUPT_ID",
    "INTERRUPT_REASON",
    "INVOCABLE_KIND",
    "LANGFUSE_OBSERVATION_TYPE",
    "NAMESPACE",
    "NODE_STEP",
    "PAUSE_WAKE_AT",
    "PLAN_ITEMS",
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
    "WORKFLOW_NAME",
    "usage_attributes",
]

# --------------------------------------------------------------------------- OpenTelemetry GenAI

GEN_AI_OPERATION_NAME = "gen_ai.operation.name"
"""``invoke_agent`` or ``invoke_workflow`` on a run's root, ``chat`` on a generation,
``execute_tool`` on a tool call."""
GEN_AI_AGENT_NAME = "gen_ai.agent.name"
"""The agent an agent turn's root stands for."""
GEN_AI_REQUEST_MODEL = "gen_ai.request.model"
"""The model a generation called."""
GEN_AI_TOOL_NAME = "gen_ai.tool.name"
GEN_AI_TOOL_CALL_ID = "gen_ai.tool.call.id"
GEN_AI_USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens"
GEN_AI_USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"

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
WORKFLOW_NAME = "agentdeck.workflow.name"
"""The workflow a root that is not an agent turn stands for."""
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


def usage_attributes(usage: Usage) -> dict[str, AttributeValue]:
    """The token and request counts of ``usage``, as a generation or a run's root carries them."""
    return {
        GEN_AI_USAGE_INPUT_TOKENS: usage.input_tokens,
        GEN_AI_USAGE_OUTPUT_TOKENS: usage.output_tokens,
        USAGE_TOTAL_TOKENS: usage.total_tokens,
        USAGE_REQUESTS: usage.requests,
    }
