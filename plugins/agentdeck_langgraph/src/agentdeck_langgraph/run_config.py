"""Per-run LangGraph config: what ``graph.ainvoke(input, config)`` takes, given to one deck run.

A raw LangGraph call sets a run's ``recursion_limit``, its ``configurable`` values (what nodes
read from ``config["configurable"]``), its ``tags``, ``metadata`` and ``max_concurrency`` in the
config it passes. A deck run takes only an input, so :func:`with_config` wraps the input with that
config::

    await deck.run("triage", with_config({"ticket": "T-1"}, recursion_limit=5,
                                         configurable={"tenant": "acme"}))

The config is recorded with the run's input (a second ``DataBlock`` of ``run.started.input``,
under :data:`CONFIG_KEY`), so a continuation in any process plays with the same config. Values
must therefore be JSON. What the engine owns stays the engine's: ``configurable`` may not set
``thread_id`` (chosen by ``Workflow(thread_id=...)``), ``checkpoint_id``/``checkpoint_ns`` or the
engine's run-identity keys; ``callbacks`` (objects, not data) are not taken.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from agentdeck.errors import InvalidInputError
from agentdeck.model.content import DataBlock
from agentdeck_langgraph.nodes import NAMESPACE_KEY, RUN_ID_KEY, SESSION_KEY

__all__ = ["CONFIG_KEY", "GraphInput", "config_block", "read_config", "with_config"]

CONFIG_KEY = "langgraph.config"
"""The one key of the input block that carries a run's config."""

_ENGINE_OWNED = frozenset(
    {"thread_id", "checkpoint_id", "checkpoint_ns", RUN_ID_KEY, SESSION_KEY, NAMESPACE_KEY}
)


@dataclass(frozen=True, slots=True)
class GraphInput:
    """A workflow run's input together with the LangGraph config to play it with."""

    input: Any
    config: Mapping[str, Any] = field(default_factory=dict)


def with_config(
    input: Any = None,
    *,
    recursion_limit: int | None = None,
    configurable: Mapping[str, Any] | None = None,
    tags: list[str] | None = None,
    metadata: Mapping[str, Any] | None = None,
    max_concurrency: int | None = None,
) -> GraphInput:
    """``input`` for ``deck.run``/``deck.runs.start``, played with this LangGraph config.

    Raises :class:`~agentdeck.errors.InvalidInputError` naming the field for a value LangGraph
    would not take, or a ``configurable`` key the engine owns.
    """
    config: dict[str, Any] = {}
    for name, value in (("recursion_limit", recursion_limit), ("max_concurrency", max_concurrency)):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InvalidInputError(
                f"with_config({name}=...) takes a whole number of at least 1; got {value!r}",
                field=name,
            )
        config[name] = value
    if configurable:
        owned = sorted(set(configurable) & _ENGINE_OWNED)
        if owned:
            raise InvalidInputError(
                f"with_config(configurable=...) may not set {', '.join(map(repr, owned))}: the "
                "engine chooses the run's thread and checkpoint (see Workflow(thread_id=...))",
                field="configurable",
            )
        config["configurable"] = dict(configurable)
    if tags:
        if not all(isinstance(tag, str) for tag in tags):
            raise InvalidInputError("with_config(tags=...) takes strings", field="tags")
        config["tags"] = list(tags)
    if metadata:
        config["metadata"] = dict(metadata)
    return GraphInput(input=input, config=config)


def config_block(given: GraphInput, workflow: str) -> DataBlock | None:
    """The input block recording ``given.config`` (``None`` when there is none)."""
    if not given.config:
        return None
    try:
        return DataBlock(data={CONFIG_KEY: dict(given.config)})
    except ValidationError as bad:
        raise InvalidInputError(
            f"workflow '{workflow}': the run's LangGraph config is recorded with its input, so "
            f"it must be JSON data: {bad.errors(include_url=False)[0]['msg']}",
            name=workflow,
            field="config",
        ) from None


def read_config(block: object) -> dict[str, Any] | None:
    """The config a :func:`config_block` recorded, or ``None`` when ``block`` is not one."""
    if not isinstance(block, DataBlock) or not isinstance(block.data, dict):
        return None
    if set(block.data) != {CONFIG_KEY} or not isinstance(block.data[CONFIG_KEY], dict):
        return None
    return dict(block.data[CONFIG_KEY])
