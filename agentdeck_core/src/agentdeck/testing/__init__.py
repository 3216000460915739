"""Contract kits: the suites every AgentDeck backend and engine runs, first-party or not.

Installed with ``pip install agentdeck-core[testing]``. pytest, pytest-asyncio and Hypothesis
are imported here and in the kit modules only, never by the runtime.

* :class:`StoreContract` — event stores (subclass it, supply the ``store`` fixture);
* :class:`ControlContract`, :class:`LeaseContract` — control signals and liveness leases;
* :class:`EngineContract`, :class:`ScriptedEngine` — engines, and a scripted engine to test with;
* :class:`StoreStateMachine`, :func:`make_store_state_machine` — random run histories checked
  against a reference model after every step;
* :mod:`agentdeck.testing.fixtures` — per-test PostgreSQL schema, Redis prefix and SQLite file
  (``pytest_plugins = ["agentdeck.testing.fixtures"]``);
* :func:`check_contract` — the guard that fails a subclass dropping or silently replacing a kit
  test (every kit runs it as one of its own tests).
"""

from __future__ import annotations

import pytest

# The kits' assertions are the report a failing implementer reads: have pytest rewrite them as
# it rewrites test modules (this must run before the kit modules are imported).
pytest.register_assert_rewrite(
    "agentdeck.testing.control_kit",
    "agentdeck.testing.engine",
    "agentdeck.testing.engine_kit",
    "agentdeck.testing.guard",
    "agentdeck.testing.statemachine",
    "agentdeck.testing.store",
    "agentdeck.testing.store_kit",
    "agentdeck.testing.store.text",
    "agentdeck.testing.api_fuzz",
)

from agentdeck.testing.control_kit import ControlContract, LeaseContract  # noqa: E402
from agentdeck.testing.engine_kit import (  # noqa: E402
    Ask,
    Checkpoint,
    Complete,
    DriveResult,
    EngineContract,
    EngineScenarios,
    MemoryStateArea,
    Raise,
    Script,
    ScriptedEngine,
    Yield,
    drive,
)
from agentdeck.testing.guard import ContractGuardError, ContractKit, check_contract  # noqa: E402
from agentdeck.testing.statemachine import StoreStateMachine, make_store_state_machine  # noqa: E402
from agentdeck.testing.store_kit import StoreContract, new_run  # noqa: E402

__all__ = [
    "Ask",
    "Checkpoint",
    "Complete",
    "ContractGuardError",
    "ContractKit",
    "ControlContract",
    "DriveResult",
    "EngineContract",
    "EngineScenarios",
    "LeaseContract",
    "MemoryStateArea",
    "Raise",
    "Script",
    "ScriptedEngine",
    "StoreContract",
    "StoreStateMachine",
    "Yield",
    "check_contract",
    "drive",
    "make_store_state_machine",
    "new_run",
]
