"""``python -m agentdeck``: the ``agentdeck`` command, for environments without its script."""

from agentdeck.cli import main

raise SystemExit(main())
