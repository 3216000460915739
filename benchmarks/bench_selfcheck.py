"""Harness self-check rows: they measure no AgentDeck code.

They exist to show the ratio mechanism on a comparison whose answer is known to be small and
stable, so a broken harness (wrong batch sizes, swapped sides, a unit mix-up) shows up as an
absurd number here before it distorts a real row.
"""

from __future__ import annotations

import json

from pydantic import BaseModel

from benchmarks import Pair, bench


class _Event(BaseModel):
    run_id: str
    seq: int
    kind: str
    payload: dict[str, str]


_DOCUMENT = json.dumps(
    {"run_id": "run-0001", "seq": 42, "kind": "message", "payload": {"text": "hello", "role": "ai"}}
)


@bench("harness self-check: pydantic model_validate_json vs json.loads", budget=5.0, unit="x")
def pydantic_validate_vs_json_loads() -> Pair:
    """Not AgentDeck code: pydantic validating a small JSON object, relative to json.loads."""
    return Pair(
        subject=lambda: _Event.model_validate_json(_DOCUMENT),
        baseline=lambda: json.loads(_DOCUMENT),
    )
