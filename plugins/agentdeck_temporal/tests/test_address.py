"""``temporal://HOST:PORT/NAMESPACE?task_queue=NAME``: what an address means, what it refuses."""

from __future__ import annotations

import pytest

from agentdeck.errors import ConfigError
from agentdeck_temporal.address import TemporalAddress


def test_every_part_of_an_address_is_read() -> None:
    address = TemporalAddress.parse(
        "temporal://temporal.internal:7300/prod?task_queue=agents&heartbeat_seconds=4.5"
    )
    assert address == TemporalAddress("temporal.internal", 7300, "prod", "agents", 4.5)
    assert address.target == "temporal.internal:7300"


def test_a_host_alone_takes_the_default_port_namespace_and_task_queue() -> None:
    address = TemporalAddress.parse("temporal://127.0.0.1")
    assert (address.port, address.namespace, address.task_queue) == (7233, "default", "agentdeck")


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("temporal://127.0.0.1:7233/default?taskqueue=x", "query parameters"),
        ("temporal://127.0.0.1:notaport/default", "port"),
        ("temporal:///default", "no host"),
        ("temporal://127.0.0.1/a/b", "more than one namespace"),
        ("temporal://127.0.0.1/default?task_queue=", "once, with a value"),
        ("temporal://127.0.0.1/default?heartbeat_seconds=0", "greater than 0"),
        ("temporal://user:secret@127.0.0.1/default", "credentials"),
    ],
)
def test_an_address_it_cannot_use_is_a_config_error_saying_why(url: str, why: str) -> None:
    with pytest.raises(ConfigError) as refused:
        TemporalAddress.parse(url)
    assert why in str(refused.value)
    assert refused.value.setting == "AGENTDECK_EXECUTION"
    assert "secret" not in str(refused.value)
