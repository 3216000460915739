"""``agentdeck runs``: list, show, follow, answer, signal, retry, fork and prune runs anywhere.

One module per family of subcommands — :mod:`.reading` (``list``, ``show``, ``tail``),
:mod:`.acting` (``answer``, ``signal``) and :mod:`.prune` — and :mod:`.command`, which puts them
under ``agentdeck runs``.
"""
