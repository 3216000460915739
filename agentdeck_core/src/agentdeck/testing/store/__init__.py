"""The store contract kit, one module per concern; import it from `agentdeck.testing.store_kit`.

* :mod:`~agentdeck.testing.store.helpers` -- ``new_run`` and the payloads and waits tests use;
* :mod:`~agentdeck.testing.store.base` -- capability flags, the fixtures an implementer supplies;
* :mod:`~agentdeck.testing.store.opening`, :mod:`~agentdeck.testing.store.appending`,
  :mod:`~agentdeck.testing.store.reading`, :mod:`~agentdeck.testing.store.listing`,
  :mod:`~agentdeck.testing.store.state`, :mod:`~agentdeck.testing.store.capabilities` -- the
  tests, by concern;
* :mod:`~agentdeck.testing.store.contract` -- :class:`StoreContract`, all of them plus the guard.
"""
