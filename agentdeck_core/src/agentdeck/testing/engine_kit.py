"""The engine contract kit: play an engine the way the runtime does, and check it keeps its word.

This module is the kit's documented import path — ``from agentdeck.testing.engine_kit import
EngineContract, EngineScenarios`` (and the rest of ``__all__``) is what engine plugin authors,
the examples and the docs write, and it keeps working. It holds no code of its own: it re-exports
the public names of the modules in :mod:`agentdeck.testing.engine`, one job each:

* :func:`drive` (:mod:`~agentdeck.testing.engine.driver`) plays one run, or one continuation of
  a run, through an engine with the same semantics the runtime has, and records the log the
  runtime would have written. It checks each payload as it arrives and reports every breach of
  the engine contract as a :class:`Violation` (:mod:`~agentdeck.testing.engine.rules`) instead of
  raising, so a test can assert on what went wrong; the ``check_*`` assertions
  (:mod:`~agentdeck.testing.engine.checks`) judge a finished drive.
* :class:`EngineContract` (:mod:`~agentdeck.testing.engine.contract`) is the base test class:
  subclass it, supply the engine through the ``engine_factory`` (or ``engine``) fixture and
  definitions through ``scenarios``, and every check runs against your engine. Tests the
  engine's declared capabilities do not cover are skipped with the reason; a capability declared
  without the scenario that exercises it fails, so nothing is skipped silently.
* :class:`ScriptedEngine` (:mod:`~agentdeck.testing.engine.scripted`) is a deterministic,
  model-free engine whose definitions are :class:`Script` objects. It is the kit's self-test
  subject and the engine runtime tests use.
* :class:`MemoryStateArea` (:mod:`~agentdeck.testing.engine.state_area`) is the engine-state area
  plays use unless given another.
"""

from __future__ import annotations

from agentdeck.testing.engine.checks import (
    check_capabilities,
    check_compiles,
    check_completed,
    check_control,
    check_failed,
    check_folded_like_content,
    check_interrupted,
    check_log,
    check_payloads,
    check_safe_points,
    check_walk_away,
)
from agentdeck.testing.engine.contract import EngineContract, EngineScenarios
from agentdeck.testing.engine.driver import DriveResult, drive, make_invocation
from agentdeck.testing.engine.rules import RESERVED_KINDS, ContractRule, Violation
from agentdeck.testing.engine.scripted import (
    Ask,
    Checkpoint,
    Complete,
    Raise,
    Script,
    ScriptedEngine,
    Step,
    Yield,
    reserved_kinds_script,
)
from agentdeck.testing.engine.state_area import MemoryStateArea

__all__ = [
    "RESERVED_KINDS",
    "Ask",
    "Checkpoint",
    "Complete",
    "ContractRule",
    "DriveResult",
    "EngineContract",
    "EngineScenarios",
    "MemoryStateArea",
    "Raise",
    "Script",
    "ScriptedEngine",
    "Step",
    "Violation",
    "Yield",
    "check_capabilities",
    "check_compiles",
    "check_completed",
    "check_control",
    "check_failed",
    "check_folded_like_content",
    "check_interrupted",
    "check_log",
    "check_payloads",
    "check_safe_points",
    "check_walk_away",
    "drive",
    "make_invocation",
    "reserved_kinds_script",
]
