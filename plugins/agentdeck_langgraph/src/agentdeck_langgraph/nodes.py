"""A graph's nodes as AgentDeck sees them: where each asks for the run's context, and the bridge
that hands a ``ToolCtx[T]`` parameter its handle.

A node reaches the application's context in one of two ways, both through LangGraph's own
runtime-context channel (the engine passes the run's context as ``astream(..., context=...)``):

* LangGraph's way: a parameter named ``runtime`` annotated ``Runtime[T]``; ``runtime.context``
  *is* the object the caller passed.
* AgentDeck's way: a parameter annotated ``ToolCtx[T]`` (or ``Context[T]``), any name. LangGraph
  does not know that annotation, so :func:`bridge_nodes` wraps such a node in a function that
  declares ``runtime`` and ``config``, builds ``ToolCtx(runtime.context, run_id=...)`` and calls
  the original with it, passing on whatever else LangGraph would have injected (``config``,
  ``writer``, ``store``, ``previous``). The bridge is installed on a copy of the builder when the
  workflow compiles, so the Deck path and the headless ``Workflow.run()`` path both have it and
  the user's own ``StateGraph`` is never modified.

:func:`context_sites` yields both kinds with what each requires, for the deck's build-time
check; nodes of a compiled subgraph are walked too (their ``Runtime[T]`` reaches them through
the same channel).
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import typing
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

from langchain_core.runnables import RunnableConfig
from langgraph._internal._runnable import RunnableCallable, coerce_to_runnable
from langgraph.graph import StateGraph
from langgraph.graph._node import StateNodeSpec
from langgraph.pregel import Pregel
from langgraph.runtime import Runtime

from agentdeck.authoring.context import ToolCtx
from agentdeck.authoring.context_check import (
    Requirement,
    callable_label,
    context_requirement,
    is_unresolved,
    parameter_annotations,
    type_label,
)
from agentdeck.errors import ConfigError

__all__ = [
    "NAMESPACE_KEY",
    "RUN_ID_KEY",
    "SESSION_KEY",
    "RuntimeContext",
    "bridge_nodes",
    "context_sites",
    "graph_nodes",
    "node_function",
    "runtime_requirement",
]

T = TypeVar("T")

RUN_ID_KEY = "agentdeck_run_id"
SESSION_KEY = "agentdeck_session_id"
NAMESPACE_KEY = "agentdeck_namespace"
"""Keys of ``config["configurable"]`` through which the engine tells a node whose run it is."""


class RuntimeContext(ToolCtx[T]):
    """How a build-time context error names a node's ``runtime: Runtime[T]`` parameter.

    Never instantiated: LangGraph injects its own ``Runtime``. It exists so the deck's check,
    which speaks of context *handles*, says ``requires Runtime[Calendar]`` for such a node.
    """

    __slots__ = ()


RuntimeContext.__name__ = "Runtime"
RuntimeContext.__qualname__ = "Runtime"

Nodes = Mapping[str, StateNodeSpec[Any, Any]]


# =========================================================================== walking a graph


def graph_nodes(graph: object) -> Nodes | None:
    """The node specs of a ``StateGraph`` or of the builder a compiled ``StateGraph`` keeps;
    ``None`` for a graph that keeps none (a hand-built ``Pregel``)."""
    if isinstance(graph, StateGraph):
        return typing.cast(Nodes, graph.nodes)
    builder = getattr(graph, "builder", None)
    if isinstance(builder, StateGraph):
        return typing.cast(Nodes, builder.nodes)
    return None


def node_function(runnable: object) -> Callable[..., Any] | None:
    """The user's function behind a node's runnable, or ``None`` when there is none to read."""
    if isinstance(runnable, RunnableCallable):
        fn = runnable.func if runnable.func is not None else runnable.afunc
        return typing.cast(Callable[..., Any] | None, fn)
    return None


def _walk(nodes: Nodes, prefix: str) -> Iterator[tuple[str, object]]:
    for name, spec in nodes.items():
        label = f"{prefix}{name}"
        yield label, spec.runnable
        if isinstance(spec.runnable, Pregel):
            inner = graph_nodes(spec.runnable)
            if inner is not None:
                yield from _walk(inner, f"{label} > ")


def runtime_requirement(fn: Callable[..., Any]) -> Requirement | None:
    """What a ``runtime: Runtime[T]`` parameter requires (``None`` when ``fn`` has none, or a
    bare ``Runtime``, which accepts any context)."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    parameter = signature.parameters.get("runtime")
    if parameter is None or parameter.kind not in (
        parameter.POSITIONAL_OR_KEYWORD,
        parameter.KEYWORD_ONLY,
    ):
        return None
    annotation = parameter_annotations(fn, signature).get("runtime")
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) is not Runtime:
        return None
    args = typing.get_args(annotation)
    if not args or args[0] is Any:
        return None
    required = args[0]
    if is_unresolved(required):
        return Requirement(
            parameter="runtime",
            required=required,
            handle=RuntimeContext,
            deferred_reason=f"{type_label(required)} cannot be resolved when the catalog is built",
        )
    return Requirement(parameter="runtime", required=required, handle=RuntimeContext)


def context_sites(graph: object) -> Iterator[tuple[str, Requirement]]:
    """Every node of ``graph`` (subgraphs included) that asks for a context, with what it asks."""
    nodes = graph_nodes(graph)
    if nodes is None:
        return
    for label, runnable in _walk(nodes, ""):
        fn = node_function(runnable)
        if fn is None:
            continue
        site = f"node '{label}' ({callable_label(fn)})"
        for requirement in (context_requirement(fn), runtime_requirement(fn)):
            if requirement is not None:
                yield site, requirement


# =========================================================================== the ToolCtx bridge


def bridge_nodes(
    builder: StateGraph[Any, Any, Any, Any], workflow: str
) -> StateGraph[Any, Any, Any, Any]:
    """``builder``, or a shallow copy of it whose ``ToolCtx`` nodes are wrapped (see the module
    doc). Refuses, naming the node, a ``ToolCtx`` parameter the bridge cannot reach: inside an
    already compiled subgraph, or on a node whose signature it cannot mirror."""
    wrapped: dict[str, StateNodeSpec[Any, Any]] = {}
    for name, spec in builder.nodes.items():
        fn = node_function(spec.runnable)
        requirement = context_requirement(fn) if fn is not None else None
        if isinstance(spec.runnable, Pregel):
            refuse_unbridgeable(spec.runnable, workflow, prefix=f"{name} > ")
        if fn is None or requirement is None or requirement.parameter is None:
            continue
        node = _bridge(fn, requirement.parameter, f"node '{name}' of workflow '{workflow}'")
        wrapped[name] = dataclasses.replace(
            spec, runnable=coerce_to_runnable(node, name=name, trace=False)
        )
    if not wrapped:
        return builder
    bridged = copy.copy(builder)
    bridged.nodes = {**builder.nodes, **wrapped}
    return bridged


def refuse_unbridgeable(graph: object, workflow: str, *, prefix: str = "") -> None:
    """Refuse a compiled graph with ``ToolCtx`` nodes: it is used unchanged, so nothing can hand
    them a handle; ``Runtime[T]`` reaches them instead."""
    nodes = graph_nodes(graph)
    if nodes is None:
        return
    for label, runnable in _walk(nodes, prefix):
        fn = node_function(runnable)
        requirement = context_requirement(fn) if fn is not None else None
        if fn is not None and requirement is not None:
            raise ConfigError(
                f"node '{label}' ({callable_label(fn)}) of workflow '{workflow}' declares "
                f"{requirement.describe()}, but it sits in an already compiled graph, which "
                "AgentDeck runs unchanged and cannot inject into; declare `runtime: Runtime[T]` "
                "and read runtime.context, or give Workflow(...) the StateGraph builder",
                setting="workflows",
            )


def _bridge(fn: Callable[..., Any], parameter: str, label: str) -> Callable[..., Any]:
    # What LangGraph would inject into `fn` itself, by its own rules (name and annotation).
    accepts = RunnableCallable(fn).func_accepts
    if "error" in accepts:
        raise ConfigError(
            f"{label} is an error handler that declares a ToolCtx parameter; read the context "
            "from `runtime: Runtime[T]` there instead",
            setting="workflows",
        )
    state_parameters = [
        p
        for p in inspect.signature(fn).parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        and p.name != parameter
        and p.name not in accepts
    ]
    state_parameter = state_parameters[0] if state_parameters else None

    def arguments(
        state: Any, config: RunnableConfig, runtime: Runtime[Any]
    ) -> tuple[list[Any], dict[str, Any]]:
        configurable = config.get("configurable", {})
        handle: ToolCtx[Any] = ToolCtx(
            runtime.context,
            run_id=configurable.get(RUN_ID_KEY),
            session_id=configurable.get(SESSION_KEY),
            namespace=configurable.get(NAMESPACE_KEY),
        )
        args: list[Any] = []
        kwargs: dict[str, Any] = {parameter: handle}
        if state_parameter is not None:
            if state_parameter.kind is state_parameter.POSITIONAL_ONLY:
                args.append(state)
            else:
                kwargs[state_parameter.name] = state
        for name, (runtime_key, default) in accepts.items():
            if name == "config":
                kwargs[name] = config
            elif name == "runtime":
                kwargs[name] = runtime
            else:
                kwargs[name] = getattr(runtime, runtime_key, default)
        return args, kwargs

    if inspect.iscoroutinefunction(fn):

        async def async_node(state: Any, config: RunnableConfig, runtime: Runtime[Any]) -> Any:
            args, kwargs = arguments(state, config, runtime)
            return await fn(*args, **kwargs)

        node: Callable[..., Any] = async_node
    else:

        def sync_node(state: Any, config: RunnableConfig, runtime: Runtime[Any]) -> Any:
            args, kwargs = arguments(state, config, runtime)
            return fn(*args, **kwargs)

        node = sync_node
    # Named like the original for traces, but without __wrapped__: LangGraph reads the signature
    # to decide what to inject, and must see the bridge's, not the original's.
    node.__name__ = getattr(fn, "__name__", "node")
    node.__qualname__ = getattr(fn, "__qualname__", node.__name__)
    node.__doc__ = fn.__doc__
    return node
