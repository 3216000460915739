"""The loopback OTLP receiver the exporter tests rely on keeps exactly what was POSTed."""

from __future__ import annotations

import gzip
import urllib.error
import urllib.request
import zlib

import pytest

from agentdeck.testing.otlp import OTLPReceiver


def post(url: str, body: bytes, **headers: str) -> int:
    request = urllib.request.Request(url, data=body, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return int(response.status)
    except urllib.error.HTTPError as refused:
        return refused.code


def test_it_keeps_each_post_with_its_body_decompressed() -> None:
    with OTLPReceiver() as receiver:
        assert receiver.url.startswith("http://127.0.0.1:")
        status = post(
            f"{receiver.url}/v1/traces",
            gzip.compress(b"\x0a\x02hi"),
            **{"Content-Encoding": "gzip", "Content-Type": "application/x-protobuf"},
        )
        post(f"{receiver.url}/v1/metrics", zlib.compress(b"m"), **{"Content-Encoding": "deflate"})
        post(f"{receiver.url}/v1/metrics", b"plain")

        assert status == 200
        [traces] = receiver.requests("/v1/traces")
        assert traces.body == b"\x0a\x02hi"
        assert traces.wire_size == len(gzip.compress(b"\x0a\x02hi"))
        assert traces.headers["content-type"] == "application/x-protobuf"
        assert [r.body for r in receiver.requests("/v1/metrics")] == [b"m", b"plain"]
        assert len(receiver.requests()) == 3

        receiver.clear()
        assert receiver.requests() == []


def test_it_answers_the_status_a_test_sets() -> None:
    with OTLPReceiver(status=503) as receiver:
        assert post(f"{receiver.url}/v1/traces", b"x") == 503
        assert len(receiver.requests()) == 1


def test_it_has_no_url_until_started() -> None:
    receiver = OTLPReceiver()
    with pytest.raises(RuntimeError, match="start"):
        _ = receiver.url
