"""The deck: the composition root a project talks to, its runs, and serving it.

:mod:`.deck` builds a catalog into invocables and opens the runtime; :mod:`.runs` holds the
``deck.runs`` API and the :class:`~agentdeck.deck.runs.Run` handle; :mod:`.service` the run
service every handle and surface acts through; :mod:`.serving` the lifecycle bindings share
when the deck is served.
"""
