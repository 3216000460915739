"""The ``agentdeck`` subcommands beyond ``plugins``: one module per command family.

:mod:`agentdeck.cli` assembles them from its ``COMMAND_MODULES`` list; :mod:`.common` holds
what they share (where the runs are, output, exit statuses).
"""
