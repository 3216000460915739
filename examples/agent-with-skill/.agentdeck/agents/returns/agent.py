"""The `returns` agent: answers questions about returns, refunds and gift wrapping.

Its instructions stay short. The shop's policies live in skills (`../../skills/*/SKILL.md`):
the model is told each skill's name and description, and loads a skill's full text with the
generated `load_skill` tool only when a question needs it.
"""

from __future__ import annotations

from agentdeck import Agent

returns = Agent(
    name="returns",
    description="Answers customers' questions about returns and refunds.",
    instructions=(
        "You answer customers of a small online shop. Before answering a question a skill "
        "covers, load that skill and follow it. Answer in at most three sentences."
    ),
    # Named skills are checked when the deck builds; leave skills= out to offer every skill.
    skills=["refund-policy", "gift-wrapping"],
)
