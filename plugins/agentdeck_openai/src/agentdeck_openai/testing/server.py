"""A real OpenAI-compatible HTTP server on 127.0.0.1, answering from a :class:`Script`.

The official ``openai`` client and the Agents SDK talk to it unchanged (``base_url`` is all they
need), so tests exercise the real HTTP client, its retries and SSE parsing, and the SDK's own
stream handling — nothing is patched. It is the stdlib's threading HTTP server in a thread of its
own: usable from synchronous and asynchronous tests alike, no dependency, no network beyond
loopback.

Endpoints: ``POST /v1/chat/completions`` and ``POST /v1/responses`` (streamed when the body says
``"stream": true``), ``GET /v1/models``. Every request is recorded in :attr:`requests` before it
is answered.
"""

from __future__ import annotations

import contextlib
import json
import logging
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from agentdeck.errors import ConfigError
from agentdeck_openai.testing.script import HTTPError, ModelRequest, Script, Turn
from agentdeck_openai.testing.wire import (
    Frame,
    Rendering,
    chat_body,
    chat_stream,
    responses_body,
    responses_stream,
)

__all__ = ["API_KEY", "MODEL", "LoopbackModelServer"]

API_KEY = "sk-loopback"
"""The API key to give clients of the server (it is recorded, never checked)."""
MODEL = "loopback-model"
"""The model name the pytest plugin's settings use; any name is accepted and echoed."""

_log = logging.getLogger("agentdeck.openai.loopback")
_STOP_TIMEOUT = 5.0


class LoopbackModelServer:
    """An OpenAI-compatible endpoint on ``127.0.0.1`` that answers from a script.

    ::

        with LoopbackModelServer(Script([reply("hi")])) as server:
            client = AsyncOpenAI(base_url=server.base_url, api_key=API_KEY)

    Start and stop are synchronous and quick; ``stop()`` also ends slow streams still being
    sent and closes idle keep-alive connections, so it never waits on a client.
    """

    def __init__(self, script: Script | None = None, *, port: int = 0) -> None:
        self.script = script if script is not None else Script()
        self._port = port
        self._requests: list[ModelRequest] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._connections: dict[socket.socket, threading.Thread] = {}

    # ----------------------------------------------------------------------- lifecycle

    def start(self) -> LoopbackModelServer:
        """Bind (port 0 picks a free one) and serve in a background thread."""
        if self._httpd is not None:
            raise ConfigError("this loopback model server is already started; stop() it first")
        self._stopping.clear()
        httpd = _HTTPServer(("127.0.0.1", self._port), _Handler, owner=self)
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"loopback-model-server:{httpd.server_address[1]}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, end open connections and join every thread. Idempotent."""
        httpd, thread = self._httpd, self._thread
        if httpd is None:
            return
        self._stopping.set()
        httpd.shutdown()
        httpd.server_close()
        with self._lock:
            connections = dict(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):  # already closed by its handler
                connection.shutdown(socket.SHUT_RDWR)
        for handler_thread in connections.values():
            handler_thread.join(_STOP_TIMEOUT)
        if thread is not None:
            thread.join(_STOP_TIMEOUT)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> LoopbackModelServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    # ----------------------------------------------------------------------- where and what

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise ConfigError(
                "the loopback model server has no port until it is started "
                "(use it as a context manager, or call start())",
                setting="port",
            )
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``"""
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``: what an OpenAI client's ``base_url`` takes."""
        return f"{self.url}/v1"

    def env(self, *, model: str = MODEL) -> dict[str, str]:
        """The ``OPENAI_*`` settings pointing a deck at this server."""
        return {"OPENAI_BASE_URL": self.base_url, "OPENAI_API_KEY": API_KEY, "OPENAI_MODEL": model}

    @property
    def requests(self) -> list[ModelRequest]:
        """Every request received so far, in arrival order (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def model_requests(self) -> list[ModelRequest]:
        """The Chat Completions and Responses requests only (what a model call sends)."""
        return [r for r in self.requests if r.api != "other"]

    def clear_requests(self) -> None:
        with self._lock:
            self._requests.clear()

    # ----------------------------------------------------------------------- used by the handler

    def _record(self, method: str, path: str, headers: dict[str, str], body: Any) -> ModelRequest:
        with self._lock:
            request = ModelRequest(
                index=len(self._requests), method=method, path=path, headers=headers, body=body
            )
            self._requests.append(request)
            return request

    def _track(self, connection: socket.socket, *, open_: bool) -> None:
        with self._lock:
            if open_:
                self._connections[connection] = threading.current_thread()
            else:
                self._connections.pop(connection, None)

    def _pause(self, seconds: float) -> bool:
        """Wait ``seconds`` unless the server stops first; whether to carry on."""
        return seconds <= 0 or not self._stopping.wait(seconds)

    def _pause_until(self, deadline: float) -> bool:
        """Wait until ``time.monotonic()`` reaches ``deadline`` unless the server stops first."""
        return self._pause(deadline - time.monotonic())

    def _exhausted(self, request: ModelRequest) -> HTTPError:
        pending = [turn.describe() for turn in self.script.pending]
        return HTTPError(
            status=500,
            type="loopback_script_exhausted",
            message=(
                f"loopback model script is exhausted: request #{request.index} "
                f"({request.method} {request.path}, last user text "
                f"{request.last_user_text!r}) matched no scripted turn; "
                f"{self.script.served} turn(s) served, pending: "
                + (", ".join(pending) if pending else "none")
                + ". Add turns with script.add(...)"
            ),
            headers=(("x-should-retry", "false"),),
        )


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = False
    block_on_close = False  # stop() joins the handler threads it tracks, with a timeout
    request_queue_size = 128  # the default 5 drops bursts of connects into a 1 s SYN retry

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[BaseHTTPRequestHandler],
        *,
        owner: LoopbackModelServer,
    ) -> None:
        self.owner = owner
        super().__init__(address, handler)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the openai client pools connections
    server: _HTTPServer
    server_version = "agentdeck-loopback"
    sys_version = ""

    # ----------------------------------------------------------------------- connection life

    def setup(self) -> None:
        super().setup()
        # A paced stream writes once per delta: without this, Nagle's algorithm holds each
        # small write for the client's delayed ACK and every delta stalls ~40 ms.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.owner._track(self.connection, open_=True)

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass  # the client (or stop()) already closed the socket
        finally:
            self.server.owner._track(self.connection, open_=False)

    def log_message(self, format: str, *args: Any) -> None:
        _log.debug("%s " + format, self.address_string(), *args)

    # ----------------------------------------------------------------------- routes

    def do_GET(self) -> None:
        owner = self.server.owner
        path = self.path.split("?", 1)[0]
        owner._record("GET", path, self._headers(), None)
        if path.rstrip("/") == "/v1/models":
            self._send_json(
                200, {"object": "list", "data": [{"id": _model(None), "object": "model"}]}
            )
        else:
            self._send_error(_not_found("GET", path))

    def do_POST(self) -> None:
        owner = self.server.owner
        path = self.path.split("?", 1)[0]
        raw = self._read_body()
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError as exc:
            owner._record("POST", path, self._headers(), raw.decode("utf-8", "replace"))
            self._send_error(
                HTTPError(400, f"the request body is not JSON: {exc}", "invalid_request_error")
            )
            return
        request = owner._record("POST", path, self._headers(), body)
        if request.api == "other":
            self._send_error(_not_found("POST", path))
            return
        if not isinstance(body, dict):
            self._send_error(
                HTTPError(400, "the request body must be a JSON object", "invalid_request_error")
            )
            return
        try:
            turn = owner.script.take(request)
        except Exception as exc:  # a test's rule raised: report it instead of dropping the call
            self._send_error(
                HTTPError(
                    500,
                    f"a scripted turn's when-rule raised {type(exc).__name__}: {exc}",
                    "loopback_rule_error",
                    headers=(("x-should-retry", "false"),),
                )
            )
            return
        if turn is None:
            self._send_error(owner._exhausted(request))
            return
        if turn.error is not None:
            self._send_error(turn.error)
            return
        rendering = Rendering(
            number=request.index + 1,
            model=_model(body.get("model")),
            created=int(time.time()),
            request=body,
        )
        if request.stream:
            frames = (
                chat_stream(turn, rendering)
                if request.api == "chat"
                else responses_stream(turn, rendering)
            )
            self._send_stream(turn, frames, request_id=rendering.number)
        else:
            if not owner._pause(turn.delay * turn.delta_count):
                self.close_connection = True
                return
            answer = (
                chat_body(turn, rendering)
                if request.api == "chat"
                else responses_body(turn, rendering)
            )
            self._send_json(200, answer, request_id=rendering.number)

    # ----------------------------------------------------------------------- reading

    def _headers(self) -> dict[str, str]:
        return {name.lower(): value for name, value in self.headers.items()}

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            chunks: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()  # the blank line after the last chunk
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length else b""

    # ----------------------------------------------------------------------- writing
    #
    # An answer goes out in as few writes as possible: head and body together, and a stream's
    # frames batched between paced deltas. The server shares the GIL with the test's event loop,
    # and every blocking write hands the GIL over and may wait a whole switch interval (5 ms)
    # to get it back: one write per frame made a turn ~10x slower than one write per answer.

    def _head(self, status: int, headers: list[tuple[str, str]]) -> bytes:
        self.log_request(status)
        reason = self.responses.get(status, ("",))[0]
        lines = [f"{self.protocol_version} {status} {reason}"]
        lines.append(f"date: {self.date_time_string()}")
        lines.extend(f"{name}: {value}" for name, value in headers)
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    def _send_json(self, status: int, value: Any, *, request_id: int | None = None) -> None:
        self._send_bytes(status, json.dumps(value).encode(), (), request_id=request_id)

    def _send_error(self, error: HTTPError) -> None:
        self._send_bytes(error.status, json.dumps(error.body()).encode(), error.headers)

    def _send_bytes(
        self,
        status: int,
        data: bytes,
        headers: tuple[tuple[str, str], ...],
        *,
        request_id: int | None = None,
    ) -> None:
        sent = [("content-type", "application/json"), ("content-length", str(len(data)))]
        if request_id is not None:
            sent.append(("x-request-id", f"req_{request_id}"))
        sent.extend(headers)
        try:
            self.wfile.write(self._head(status, sent) + data)
        except OSError:
            self.close_connection = True

    def _send_stream(self, turn: Turn, frames: Iterator[Frame], *, request_id: int) -> None:
        """Send SSE frames as HTTP chunks, pacing deltas; a client that hangs up ends it.

        Each write carries the frames ready at that moment as *one* HTTP chunk (SSE events need
        not line up with chunk boundaries): a client's HTTP parser pays per chunk (h11 costs
        ~10 µs a chunk here), so one chunk per frame made an unpaced answer of 28 events cost the
        client ~0.3 ms more than the same events in one chunk. A paced delta still leaves in a
        chunk of its own, when it is due.

        A slow turn's deltas keep a schedule (delta ``k`` leaves ``k * delay`` seconds after the
        answer started) rather than sleeping ``delay`` after each write: every sleep overshoots
        a little, and twenty overshoots made a paced stream ~1 ms per delta slower than the
        same turn answered whole (which waits the total once).
        """
        owner = self.server.owner
        started = time.monotonic()
        paced = 0
        head = self._head(
            200,
            [
                ("content-type", "text/event-stream; charset=utf-8"),
                ("cache-control", "no-cache"),
                ("transfer-encoding", "chunked"),
                ("x-request-id", f"req_{request_id}"),
            ],
        )
        ready: list[bytes] = []
        try:
            for frame in frames:
                if frame.paced and turn.delay > 0:
                    self.wfile.write(head + _chunk(ready))
                    head = b""
                    ready.clear()
                    paced += 1
                    if not owner._pause_until(started + paced * turn.delay):
                        self.close_connection = True
                        return
                ready.append(frame.data)
            self.wfile.write(head + _chunk(ready) + b"0\r\n\r\n")
        except OSError:  # BrokenPipe / ConnectionReset: the client went away (a cancel)
            self.close_connection = True


def _chunk(frames: list[bytes]) -> bytes:
    """The frames as one HTTP chunk (nothing for none: a zero-size chunk ends the body)."""
    data = b"".join(frames)
    return b"%x\r\n%s\r\n" % (len(data), data) if data else b""


def _model(requested: object) -> str:
    return requested if isinstance(requested, str) and requested else MODEL


def _not_found(method: str, path: str) -> HTTPError:
    return HTTPError(
        404,
        f"the loopback model server has no route {method} {path}; it serves "
        "POST /v1/chat/completions, POST /v1/responses and GET /v1/models",
        "invalid_request_error",
    )
