"""The engine contract kit, one job per module; its users import `agentdeck.testing.engine_kit`.

* :mod:`.state_area` — an engine-state area held in memory (durable state, simulated);
* :mod:`.rules` — the contract's rules, and the judgement of each payload an engine yields;
* :mod:`.recorder` — the driver's stand-in for a store, and what it writes to continue a run;
* :mod:`.driver` — :func:`~.driver.drive`, which plays an engine the way the runtime does;
* :mod:`.checks` — assertions over a finished drive, one per promise of the contract;
* :mod:`.contract` — :class:`~.contract.EngineContract`, the base test class engine authors
  subclass;
* :mod:`.scripted` — :class:`~.scripted.ScriptedEngine`, a model-free engine to test with.
"""
