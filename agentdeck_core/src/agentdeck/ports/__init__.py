"""The ports: the interfaces every backend, engine, observer and binding implements.

A store, a control backend, a lease backend, a session factory, a checkpointer factory, an
engine, an observer, a binding: each is an abstract class here with async methods, and each
method's docstring is the contract the core's kits (:mod:`agentdeck.testing`) check. Plugins
provide implementations through the registration hooks in :mod:`agentdeck.plugins.hookspecs`;
the core's own defaults (:mod:`agentdeck.memory`, :mod:`agentdeck.native`) go through the same
hooks. Nothing here knows an engine SDK or a database driver.

``from agentdeck.ports import X`` is the one import path for plugin authors, and the one the
documentation shows (``docs/reference/ports.md`` renders every name below). The modules of this
package group the ports by family and are free to move names between them:

* :mod:`.stores` -- :class:`EventStore` and the records and queries it takes and returns;
* :mod:`.control` -- :class:`ControlPort` and :class:`LeasePort`;
* :mod:`.engines` -- :class:`Engine`, :class:`HeadlessEngine`, :class:`ClientEngine`,
  :class:`EngineRef` and what a play receives (:class:`Invocation`, :class:`EngineRequest`, ...);
* :mod:`.surfaces` -- :class:`Observer`, :class:`Binding`, :class:`ListenerBinding`;
* :mod:`.execution` -- :class:`Execution` (where runs execute), :class:`Admission`,
  :class:`RecordedRuns`;
* :mod:`.backends` -- :class:`BackendRequest`, :class:`SessionFactory`,
  :class:`CheckpointerFactory`.
"""

from agentdeck.ports.backends import BackendRequest, CheckpointerFactory, SessionFactory
from agentdeck.ports.control import ControlPort, ControlSignal, LeasePort, LeaseState
from agentdeck.ports.engines import (
    ClientEngine,
    ControlDirective,
    Engine,
    EngineCapabilities,
    EngineRef,
    EngineRequest,
    EngineStateArea,
    Entry,
    ForkPlan,
    HeadlessEngine,
    Invocable,
    Invocation,
    Suspension,
)
from agentdeck.ports.execution import Admission, Execution, RecordedRuns
from agentdeck.ports.stores import (
    EventStore,
    NewRun,
    OpenOutcome,
    PruneQuery,
    RunPage,
    RunQuery,
    RunRecord,
    Takeover,
)
from agentdeck.ports.surfaces import ASGIApp, Binding, ListenerBinding, Observer

__all__ = [
    "ASGIApp",
    "Admission",
    "BackendRequest",
    "Binding",
    "CheckpointerFactory",
    "ClientEngine",
    "ControlDirective",
    "ControlPort",
    "ControlSignal",
    "Engine",
    "EngineCapabilities",
    "EngineRef",
    "EngineRequest",
    "EngineStateArea",
    "Entry",
    "EventStore",
    "Execution",
    "ForkPlan",
    "HeadlessEngine",
    "Invocable",
    "Invocation",
    "LeasePort",
    "LeaseState",
    "ListenerBinding",
    "NewRun",
    "Observer",
    "OpenOutcome",
    "PruneQuery",
    "RecordedRuns",
    "RunPage",
    "RunQuery",
    "RunRecord",
    "SessionFactory",
    "Suspension",
    "Takeover",
]
