"""Property-based fuzzing of the HTTP API from its own OpenAPI document (schemathesis).

Seeded and bounded: Hypothesis runs derandomized, with a small number of examples per operation.
Every response must match what the document declares (status code, content type, body schema),
invalid requests must be refused with a 4xx, and the only 5xx allowed is an engine failure in
the documented shape (``500 {"detail": "internal error"}``) — which the ``pair`` workflow
produces on purpose when the fuzzer feeds it values it cannot add.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from http_test_support import ServerThread, make_deck
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import positive_data_acceptance

from agentdeck import WorkflowCtx, workflow
from agentdeck.bindings import Native
from agentdeck.testing.fixtures import in_ci

EXAMPLES = 40 if in_ci() else 15


@workflow
async def echo(value: Any = None) -> Any:
    return value


@workflow
async def pair(a: Any, b: Any) -> Any:
    return a + b  # an engine failure whenever the two do not add up


@workflow
async def asks(ctx: WorkflowCtx[Any]) -> Any:
    return await ctx.ask("go on?")


DECK = make_deck(workflows=[echo, pair, asks])
BINDING = Native.http(heartbeat=0.2)
EXPOSURE = DECK.expose(BINDING)
DOCUMENT = BINDING.asgi_app(EXPOSURE).openapi()  # the document the server serves, built offline

# GET /runs/changes is an endless stream by design (it ends when the client goes away), and
# schemathesis reads an event stream to its end: a valid case would never finish. Its refusals
# of bad parameters are tested in test_console_routes.py instead.
schema = schemathesis.openapi.from_dict(DOCUMENT).exclude(path="/runs/changes", method="GET")


@pytest.fixture(scope="module")
def server() -> Iterator[ServerThread]:
    with ServerThread(EXPOSURE) as running:
        yield running


def test_the_served_document_is_the_one_fuzzed(server: ServerThread) -> None:
    import httpx

    assert httpx.get(f"{server.base_url}/openapi.json").json() == DOCUMENT


def only_documented_server_errors(ctx: Any, response: Any, case: Any) -> bool | None:
    """A 5xx is acceptable only as the documented engine failure of a route that waits for a
    run's outcome."""
    if response.status_code < 500:
        return None
    body = json.loads(response.content or b"null")
    waits = case.operation.path.startswith(("/workflows/", "/agents/"))
    assert response.status_code == 500 and waits, (
        f"{case.operation.method.upper()} {case.operation.path} answered "
        f"{response.status_code}: {body}"
    )
    assert body == {"detail": "internal error"}, body
    return True


SEMANTIC_FIELDS = ("cursor", "input", "value", "interrupt_id", "message", "body")
"""Fields whose every value the schema allows but whose meaning the server checks: an opaque
cursor it did not issue, a workflow's input, an answer that does not fit its question."""


def names_the_problem(ctx: Any, response: Any, case: Any) -> bool | None:
    """Every 422 names the field that was wrong; a request the schema allows is refused with 422
    only for what the schema cannot say (the value of a semantic field, or text no store can
    hold)."""
    if response.status_code != 422:
        return None
    body = json.loads(response.content)
    assert isinstance(body.get("detail"), str) and body["detail"], body
    assert isinstance(body.get("field"), str) and body["field"], body
    meta = case.meta
    negative = meta.generation.mode.is_negative or any(
        component.mode.is_negative for component in meta.components.values()
    )
    # Text no store can hold (NUL, lone surrogates) is refused in any field: a rule of the
    # boundary (docs/state.md) that a JSON Schema string type cannot state.
    unstorable = "which no store can hold" in body["detail"]
    if not negative and not unstorable:
        assert body["field"].split(".")[0] in SEMANTIC_FIELDS, body
    return True


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
def test_the_api_keeps_its_documented_promises(case: Any, server: ServerThread) -> None:
    case.call_and_validate(
        base_url=server.base_url,
        excluded_checks=[not_a_server_error, positive_data_acceptance],
        additional_checks=[only_documented_server_errors, names_the_problem],
        timeout=30,
    )
