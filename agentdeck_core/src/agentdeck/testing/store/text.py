"""The store contract's half of "same input, same outcome": what the API accepts comes back exact.

The public API refuses, on every store alike, the text no backend can hold -- NUL characters and
lone surrogates (:mod:`agentdeck.deck.boundary`). Everything else it lets through, so every
store must hold everything else: each field a caller's text reaches (a run's input and output,
its session id, namespace and key, a run id it is asked about, a listing's filters) round-trips
unchanged, and so do JSON numbers at the edges of what JSON readers meet.

:class:`StoredTextContract` is one of the kits :class:`~agentdeck.testing.StoreContract` is
made of, so a store that runs the store kit runs these too; the fixtures are the store kit's.
The samples are public (:data:`ACCEPTED_TEXTS`, :data:`EDGE_NUMBERS`) so a store's own tests can
reuse them.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from agentdeck.deck.boundary import unstorable_text
from agentdeck.model.content import DataBlock, TextBlock
from agentdeck.model.payloads import RunCompleted, RunStarted
from agentdeck.ports import EventStore, NewRun, RunQuery
from agentdeck.testing.guard import ContractKit

__all__ = ["ACCEPTED_TEXTS", "EDGE_NUMBERS", "StoredTextContract"]

ACCEPTED_TEXTS: tuple[str, ...] = (
    "",
    "plain",
    " leading and trailing ",
    "\x01\x02\x1b\x1f\x7f",  # every control character but NUL is text
    "\t\n\r\x0b\x0c",
    "\x80\x85\x9f\u2028\u2029",  # C1 controls and Unicode line separators
    "\ufeff\ufffe\uffff\ufffd",  # byte-order mark, noncharacters, replacement character
    "\U0001f600 \U0001f468\u200d\U0001f469\u200d\U0001f467 \U0010ffff",  # beyond the BMP
    "e\u0301 \u00e9 \u0627\u0644\u0639\u0631\u0628\u064a\u0629 \u202eevil",  # combining, RTL
    "'; DROP TABLE agentdeck_runs; --",
    "%_\\*?[]{}^$|()",  # LIKE, glob and regex metacharacters
    "a:b:c {x} #y",  # Redis key separators and hash tags
    "\\u0000 \\x00",  # the *escaped* spellings of NUL are ordinary text
    "é" * 3000,
)
"""Text the API accepts in every field: each must round-trip exactly through every store."""

EDGE_NUMBERS: dict[str, list[Any]] = {
    "ints": [0, -1, 2**31, 2**53 + 1, 2**63 - 1, -(2**63), 2**64 + 1, 10**300],
    "floats": [0.5, 0.1, 1e20, 1e-300, 5e-324, 1.7976931348623157e308, -2.5, 1e16],
}
"""JSON numbers at the edges: integers past 64 bits, floats written with exponents. Each must come
back as the same value *and the same type* (a float that reads back as an int is a changed
value for a caller that checks types, and for the next store it is copied into)."""


class StoredTextContract(ContractKit):
    """Every store holds exactly what the public API lets through. Supplied by the store kit's
    ``store`` fixture."""

    __contract_kit__ = True

    async def test_the_kit_samples_are_text_the_api_accepts(self) -> None:
        refused = [text for text in ACCEPTED_TEXTS if unstorable_text(text) is not None]
        assert refused == [], "the samples must be text the boundary lets through"

    async def test_accepted_text_round_trips_through_every_field(self, store: EventStore) -> None:
        for index, text in enumerate(ACCEPTED_TEXTS):
            run_id = f"run-{uuid.uuid4().hex}"
            session_id, namespace, key = f"s{index} {text}", f"ns{index} {text}", f"k {text}"
            started = RunStarted(
                name="text",
                invocable_kind="workflow",
                input=[TextBlock(text=text), DataBlock(data={text: [text, {"k": text}]})],
                key=key,
            )
            outcome = await store.open_run(
                NewRun(run_id=run_id, started=started, session_id=session_id, namespace=namespace)
            )
            assert outcome.opened, f"sample {index}: the open was refused: {outcome}"
            ending = RunCompleted(output=[TextBlock(text=text), DataBlock(data=text)])
            await store.append(run_id, [ending])

            events = await store.read(run_id)
            assert [event.payload for event in events] == [started, ending], f"sample {index}"
            assert {(e.session_id, e.namespace) for e in events} == {(session_id, namespace)}
            record = await store.get_run(run_id)
            assert record is not None, f"sample {index}: the run is not indexed"
            assert (record.session_id, record.namespace, record.key) == (
                session_id,
                namespace,
                key,
            ), f"sample {index}: the index changed the text"
            held = await store.find_key(namespace, key)
            assert held is not None and held.run_id == run_id, f"sample {index}: key not found"
            listed = await store.list_runs(
                RunQuery(namespace=namespace, session_id=session_id, key=key)
            )
            assert [r.run_id for r in listed.runs] == [run_id], f"sample {index}: listing"

    async def test_a_run_id_of_any_accepted_text_reads_as_unknown(self, store: EventStore) -> None:
        for index, text in enumerate(ACCEPTED_TEXTS):
            unknown = f"no such run {text}"
            assert await store.get_run(unknown) is None, f"sample {index}"
            assert await store.read(unknown) == [], f"sample {index}"
            assert await store.find_key(f"ns {text}", text) is None, f"sample {index}"

    async def test_edge_numbers_come_back_with_their_value_and_type(
        self, store: EventStore
    ) -> None:
        run_id = f"run-{uuid.uuid4().hex}"
        started = RunStarted(
            name="numbers", invocable_kind="workflow", input=[DataBlock(data=EDGE_NUMBERS)]
        )
        assert (await store.open_run(NewRun(run_id=run_id, started=started))).opened
        (event,) = await store.read(run_id)
        assert isinstance(event.payload, RunStarted)
        (block,) = event.payload.input
        assert isinstance(block, DataBlock)
        assert json.dumps(block.data) == json.dumps(EDGE_NUMBERS)
