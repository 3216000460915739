"""A loopback OTLP/HTTP endpoint for tests that check what an exporter really sends.

Telemetry exporters are tested by what leaves the process: point the exporter (the Langfuse SDK,
the OpenTelemetry OTLP exporter, anything speaking OTLP/HTTP) at :attr:`OTLPReceiver.url` and
assert on the requests it kept. Nothing is mocked: the real SDK serializes, compresses and POSTs.

The receiver keeps each request's path, headers and *decompressed* body bytes. It does not decode
protobuf (the core carries no OpenTelemetry dependency); a test decodes bodies with
``opentelemetry.proto`` (``ExportTraceServiceRequest.FromString(request.body)``), which every
OTLP exporter already depends on. Raw bytes are what a content-policy test wants anyway: "this
text appears nowhere in what was sent".

::

    with OTLPReceiver() as receiver:
        exporter = OTLPSpanExporter(endpoint=f"{receiver.url}/v1/traces")
        ...
        [request] = receiver.requests("/v1/traces")
"""

from __future__ import annotations

import gzip
import threading
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

__all__ = ["OTLPReceiver", "OTLPRequest"]


@dataclass(frozen=True, slots=True)
class OTLPRequest:
    """One POST the receiver accepted."""

    path: str
    headers: Mapping[str, str]
    """Header names lower-cased."""
    body: bytes
    """The body after undoing ``Content-Encoding`` (gzip or deflate)."""
    wire_size: int
    """The body's size as it was sent."""


class OTLPReceiver:
    """An HTTP server on ``127.0.0.1`` (a free port) that answers every POST and keeps it.

    ``status`` is what it answers (default 200 with an empty protobuf body, which OTLP reads as
    "all accepted"); set it to 503 to make an exporter see a failing collector. Use it as a
    context manager, or :meth:`start` and :meth:`stop` it.
    """

    def __init__(self, *, status: int = 200) -> None:
        self.status = status
        self._requests: list[OTLPRequest] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``, with no trailing slash."""
        if self._server is None:
            raise RuntimeError("the receiver is not running; start() it first")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> None:
        if self._server is not None:
            return
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.02},  # how long stop() waits for the loop to notice
            name="otlp-receiver",
            daemon=True,
        )
        self._thread.start()

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> OTLPReceiver:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def requests(self, path_suffix: str = "") -> list[OTLPRequest]:
        """The requests kept so far whose path ends with ``path_suffix``, oldest first."""
        with self._lock:
            return [r for r in self._requests if r.path.endswith(path_suffix)]

    def clear(self) -> None:
        with self._lock:
            self._requests.clear()

    def _keep(self, request: OTLPRequest) -> None:
        with self._lock:
            self._requests.append(request)


def _handler_for(receiver: OTLPReceiver) -> type[BaseHTTPRequestHandler]:
    class _Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            wire = self.rfile.read(length)
            encoding = (self.headers.get("Content-Encoding") or "").lower()
            if encoding == "gzip":
                body = gzip.decompress(wire)
            elif encoding == "deflate":
                body = zlib.decompress(wire)
            else:
                body = wire
            receiver._keep(
                OTLPRequest(
                    path=self.path,
                    headers={name.lower(): value for name, value in self.headers.items()},
                    body=body,
                    wire_size=len(wire),
                )
            )
            self.send_response(receiver.status)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            """Quiet: a test's output is not the place for an access log."""

    return _Handler
