"""``Terminal``: a chat with one agent or workflow of a deck, on a terminal.

``deck.serve(Terminal.stdio())`` (what ``agentdeck chat`` runs) reads a message per line from
standard input, plays it as a turn with ``deck.stream`` and renders the turn's canonical events
as they arrive (:class:`~agentdeck.bindings.transcript.Transcript`): text deltas inline, one line
per tool call, reports, the outcome. A question the run parks on is asked inline — ``y``/``n`` for
a tool approval, a typed answer otherwise — and answered through ``run.answer``, so the deck
validates it: a refused answer is shown with the reason and asked again.

Ctrl-C stops the turn in flight by *cancelling* its run (recorded as ``run.cancelled`` at the
run's next safe point, or at once when it is parked on a question); the conversation goes on.
Pressed again before another message is sent — or twice at the prompt — it leaves the chat, as
Ctrl-D (end of input) and ``/exit`` do. Cancelling rather than pausing is deliberate: a paused run
keeps its session, so the next message would be refused until someone resumed it; an operator
who wants a pause uses ``agentdeck runs signal RUN pause``.

The terminal is not a listener: :meth:`Terminal.serve` returns when the person leaves (or when it
is cancelled), and it reads and writes only canonical events through the deck's public API.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import threading
import uuid
from collections.abc import Awaitable
from typing import Any, ClassVar, TextIO

from agentdeck.bindings.transcript import Style, Transcript, expected_hint, is_approval
from agentdeck.deck.runs import Run
from agentdeck.errors import (
    AgentDeckError,
    AnswerRefusedError,
    ConfigError,
    NotFoundError,
    RunFinishedError,
)
from agentdeck.model.events import Event
from agentdeck.model.payloads import RunInterrupted
from agentdeck.model.results import InterruptResult
from agentdeck.ports import Binding

__all__ = ["Terminal"]

_YES = frozenset({"y", "yes"})
_NO = frozenset({"n", "no"})


class Terminal(Binding):
    """A chat on a terminal: one message per line, the reply streamed, questions asked inline.

    :param agent: the agent or workflow to talk to; default: the deck's only agent (or its only
        invocable). A workflow's message is parsed as JSON when it is JSON, else passed as text.
    :param namespace: the namespace runs are started in.
    :param context: the per-run context object, handed to every turn (the terminal runs in the
        deck's own process, so a live context reaches its runs).
    :param input_fd: the file descriptor lines are read from; ``output`` where everything is
        written (default: the process's standard input and output).
    """

    name: ClassVar[str] = "terminal"

    def __init__(
        self,
        agent: str | None = None,
        *,
        namespace: str | None = None,
        context: Any = None,
        input_fd: int | None = None,
        output: TextIO | None = None,
    ) -> None:
        self.agent = agent
        self.namespace = namespace
        self.context = context
        self._input_fd = input_fd
        self._output = output

    @classmethod
    def stdio(
        cls, agent: str | None = None, *, namespace: str | None = None, context: Any = None
    ) -> Terminal:
        """A terminal chat on this process's standard input and output."""
        return cls(agent, namespace=namespace, context=context)

    def __repr__(self) -> str:
        return f"Terminal(agent={self.agent!r})"

    def resolve(self, deck: Any) -> tuple[str, str]:
        """The name and kind (``agent``, ``workflow``) this terminal chats with on ``deck``.

        Raises :class:`~agentdeck.errors.NotFoundError` for a name the deck does not have, and
        :class:`~agentdeck.errors.ConfigError` when none was given and the deck has no single
        agent (or single invocable) to default to.
        """
        return _target(deck, self.agent)

    async def serve(self, deck: Any) -> None:
        """Chat with ``deck`` (already open) until the person leaves or this is cancelled."""
        name, kind = self.resolve(deck)
        out = self._output if self._output is not None else sys.stdout
        fd = self._input_fd if self._input_fd is not None else sys.stdin.fileno()
        chat = _Chat(self, deck, name, kind, out)
        await chat.run(fd)


class _Chat:
    """One conversation: the state :meth:`Terminal.serve` keeps while it runs."""

    def __init__(self, terminal: Terminal, deck: Any, name: str, kind: str, out: TextIO) -> None:
        self.terminal = terminal
        self.deck = deck
        self.name = name
        self.kind = kind
        self.out = out
        self.style = Style.for_stream(out)
        isatty = getattr(out, "isatty", None)
        self.transcript = Transcript(
            out,
            self.style,
            lifecycle=False,
            terminal=bool(isatty and isatty()) and self.style.color,
        )
        # Conversation memory is an agent's; a workflow turn needs no session.
        self.session = f"terminal-{uuid.uuid4().hex[:12]}" if kind == "agent" else None
        self.quit = asyncio.Event()
        self.stop = asyncio.Event()
        self.interrupts = 0
        self.active: Run | None = None
        self.next_seq = 0
        self.shown_questions: set[str] = set()
        self.background: set[asyncio.Task[Any]] = set()

    async def run(self, fd: int) -> None:
        reader = _LineReader(fd)
        reader.start()
        handled = self._catch_interrupts()
        style = self.style
        try:
            self.transcript.line(
                style.paint(f"Chatting with {self.name} ({self.kind}).", "bold")
                + style.paint(" Ctrl-C stops a reply; Ctrl-C twice or Ctrl-D leaves.", "dim")
            )
            while not self.quit.is_set():
                line = await self._read(reader, style.paint("you> ", "bold", "blue"))
                if line is None:
                    if self.stop.is_set() and not self.quit.is_set():
                        continue  # Ctrl-C at the prompt: it said how to leave; ask again
                    break
                self.interrupts = 0
                text = line.strip()
                if not text:
                    continue
                if text in ("/exit", "/quit"):
                    break
                await _first(self._turn(text, reader), self.quit.wait())
        finally:
            if handled:
                with contextlib.suppress(Exception):
                    asyncio.get_running_loop().remove_signal_handler(signal.SIGINT)
            reader.close()
            self.transcript.end_line()
            self.out.flush()

    # ------------------------------------------------------------------------------- a turn

    async def _turn(self, text: str, reader: _LineReader) -> None:
        transcript = self.transcript
        transcript.reset()
        self.stop.clear()
        self.next_seq = 0
        self.shown_questions.clear()
        try:
            ending: Event | None = None
            stream = self.deck.stream(
                self.name,
                self._input(text),
                session_id=self.session,
                namespace=self.terminal.namespace,
                context=self.terminal.context,
            )
            async for event in stream:
                if self.active is None:
                    self.active = await self.deck.runs.get(
                        event.run_id, namespace=self.terminal.namespace
                    )
                self._show(event)
                ending = event
            run = self.active
            while run is not None and ending is not None and ending.kind == "run.interrupted":
                if not await self._answer_all(run, reader):
                    break
                ending = await self._follow(run)
        except AgentDeckError as error:
            transcript.line(self.style.paint(f"{type(error).__name__}: {error}", "red"))
        finally:
            self.active = None
            transcript.end_line()

    async def _answer_all(self, run: Run, reader: _LineReader) -> bool:
        """Ask every open question in turn; ``False`` if the person stopped or left instead."""
        while True:
            pending = await run.pending_all()
            if not pending:
                return True
            if await self._ask(run, pending[0], reader):
                continue
            if self.stop.is_set() and not self.quit.is_set():
                await self._follow(run)  # show the cancellation the stop recorded
            elif not self.quit.is_set():
                self.transcript.line(
                    self.style.paint(
                        f"left waiting; answer later with: agentdeck runs answer {run.id} VALUE",
                        "dim",
                    )
                )
            return False

    async def _ask(self, run: Run, question: InterruptResult, reader: _LineReader) -> bool:
        asked = await self._question(run, question.interrupt_id)
        hint = expected_hint(asked) if asked is not None else ""
        prompt = self.style.paint(f"{hint or 'answer'}> ", "bold", "magenta")
        while True:
            line = await self._read(reader, prompt)
            if line is None:
                return False
            self.interrupts = 0
            value = _answer_value(asked, line.strip())
            if value is _NOT_AN_ANSWER:
                self.transcript.line(self.style.paint("answer y or n", "yellow"))
                continue
            try:
                await run.answer(value, interrupt_id=question.interrupt_id)
            except AnswerRefusedError as refused:
                self.transcript.line(self.style.paint(f"refused: {refused.reason}", "red"))
                continue
            return True

    async def _follow(self, run: Run) -> Event | None:
        """Render the run's events after the last one shown, until it stops again."""
        ending: Event | None = None
        async for event in run.events(from_seq=self.next_seq, follow=True):
            if event.kind == "answer.refused":
                self.next_seq = event.seq + 1  # already said while asking
                continue
            self._show(event)
            ending = event
        return ending

    def _show(self, event: Event) -> None:
        self.next_seq = max(self.next_seq, event.seq + 1)
        payload = event.payload
        if isinstance(payload, RunInterrupted):
            if payload.interrupt_id in self.shown_questions:
                return
            self.shown_questions.add(payload.interrupt_id)
        self.transcript.write(event)

    async def _question(self, run: Run, interrupt_id: str) -> RunInterrupted | None:
        """The question's own event (its payload and expected answer), shown if not yet."""
        async for event in run.events():
            payload = event.payload
            if isinstance(payload, RunInterrupted) and payload.interrupt_id == interrupt_id:
                if interrupt_id not in self.shown_questions:
                    self.shown_questions.add(interrupt_id)
                    self.transcript.write(event)
                return payload
        return None

    def _input(self, text: str) -> Any:
        return text if self.kind == "agent" else _parse_loose(text)

    async def _read(self, reader: _LineReader, prompt: str) -> str | None:
        """The next line, or ``None`` at end of input, on Ctrl-C, or when leaving."""
        self.transcript.end_line()
        self.out.write(prompt)
        self.out.flush()
        self.stop.clear()
        line = await _first(reader.readline(), self.stop.wait(), self.quit.wait())
        if not isinstance(line, str):
            self.out.write("\n")
            self.out.flush()
            return None
        if not reader.interactive:  # nothing echoed it: show what was read, as a transcript
            self.out.write(line + "\n")
            self.out.flush()
        return line

    # ------------------------------------------------------------------------------- Ctrl-C

    def _catch_interrupts(self) -> bool:
        """Handle SIGINT on the loop (main thread only); ``False`` where that is not possible."""
        if threading.current_thread() is not threading.main_thread():
            return False
        try:
            asyncio.get_running_loop().add_signal_handler(signal.SIGINT, self._interrupted)
        except (NotImplementedError, RuntimeError, ValueError):
            return False
        return True

    def _interrupted(self) -> None:
        self.interrupts += 1
        if self.interrupts >= 2:
            self.quit.set()
            return
        self.stop.set()
        run = self.active
        if run is None:
            self.out.write(self.style.paint("\n(Ctrl-C again or Ctrl-D to leave)", "dim"))
            self.out.flush()
            return
        self.transcript.line(
            # "\r": over the "^C" a terminal echoes, so the line reads cleanly.
            "\r" + self.style.paint("stopping this turn (Ctrl-C again to leave)", "yellow")
        )
        task = asyncio.get_running_loop().create_task(_stop(run))
        self.background.add(task)
        task.add_done_callback(self.background.discard)


def _target(deck: Any, wanted: str | None) -> tuple[str, str]:
    """The name and kind to chat with: ``wanted``, else the deck's only agent or invocable."""
    invocables = deck.invocables
    if wanted is not None:
        if wanted not in invocables:
            raise NotFoundError(
                f"no agent or workflow named {wanted!r} to chat with; available: "
                + (", ".join(sorted(invocables)) or "none"),
                what="invocable",
                name=wanted,
                available=sorted(invocables),
            )
        return wanted, str(invocables[wanted].kind)
    agents = [name for name, invocable in invocables.items() if invocable.kind == "agent"]
    if len(agents) == 1:
        return agents[0], "agent"
    if len(invocables) == 1:
        [(name, invocable)] = invocables.items()
        return name, str(invocable.kind)
    raise ConfigError(
        "the deck has "
        + ("no agent or workflow" if not invocables else "several agents and workflows")
        + " to chat with; name one (Terminal.stdio('name'), or agentdeck chat NAME)"
        + (f"; available: {', '.join(sorted(invocables))}" if invocables else ""),
        setting="agent",
        accepted=sorted(invocables),
    )


async def _first(*awaitables: Awaitable[Any]) -> Any:
    """The result of whichever awaitable finishes first; the others are cancelled and awaited."""
    tasks = [asyncio.ensure_future(awaitable) for awaitable in awaitables]
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            if not task.done():
                task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
    winner = next(task for task in tasks if task in done)
    return winner.result()


def _answer_value(asked: RunInterrupted | None, text: str) -> Any:
    """The typed line as an answer to ``asked``: y/n for approvals, text or JSON otherwise."""
    if asked is None:
        return _parse_loose(text)
    if is_approval(asked):
        lowered = text.lower()
        if lowered in _YES:
            return {"approved": True}
        if lowered in _NO:
            return {"approved": False}
        return _NOT_AN_ANSWER
    expected = asked.expected
    if expected is not None and expected.options is not None:
        if all(isinstance(option, str) for option in expected.options):
            return text
        return _parse_loose(text)
    if expected is not None and expected.json_schema is not None:
        if expected.json_schema.get("type") == "string":
            return text
        return _parse_loose(text)
    return text


_NOT_AN_ANSWER: Any = object()


def _parse_loose(text: str) -> Any:
    """JSON when the text is JSON (``42``, ``true``, ``{"a": 1}``), else the text itself."""
    try:
        return json.loads(text)
    except ValueError:
        return text


class _LineReader:
    """Lines from a file descriptor, awaited without blocking the event loop.

    Pipes and terminals are watched with the loop's reader callback; anything the loop cannot
    watch (a regular file) is read by a daemon thread. Bytes are read with ``os.read`` rather
    than through ``sys.stdin``'s buffered object, so a reader still blocked when the process
    exits never holds a lock the interpreter needs at shutdown.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self.interactive = os.isatty(fd)
        """Whether the lines come from a terminal (which echoes them as they are typed)."""
        self._buffer = b""
        self._lines: asyncio.Queue[str | None] = asyncio.Queue()
        self._loop = asyncio.get_running_loop()
        self._watching = False
        self._eof = False

    def start(self) -> None:
        try:
            self._loop.add_reader(self._fd, self._readable)
            self._watching = True
        except (OSError, NotImplementedError, ValueError):
            thread = threading.Thread(
                target=self._read_blocking, name="terminal-input", daemon=True
            )
            thread.start()

    async def readline(self) -> str | None:
        """The next line without its newline; ``None`` at end of input."""
        if self._eof and self._lines.empty():
            return None
        line = await self._lines.get()
        if line is None:
            self._eof = True
        return line

    def close(self) -> None:
        if self._watching:
            self._loop.remove_reader(self._fd)
            self._watching = False

    def _readable(self) -> None:
        try:
            chunk = os.read(self._fd, 65536)
        except OSError:
            chunk = b""
        self._feed(chunk)
        if not chunk:
            self.close()

    def _read_blocking(self) -> None:
        while True:
            try:
                chunk = os.read(self._fd, 65536)
            except OSError:
                chunk = b""
            self._loop.call_soon_threadsafe(self._feed, chunk)
            if not chunk:
                return

    def _feed(self, chunk: bytes) -> None:
        if not chunk:
            if self._buffer:
                self._lines.put_nowait(self._buffer.decode("utf-8", errors="replace"))
                self._buffer = b""
            self._lines.put_nowait(None)
            return
        self._buffer += chunk
        *lines, self._buffer = self._buffer.split(b"\n")
        for line in lines:
            self._lines.put_nowait(line.decode("utf-8", errors="replace").rstrip("\r"))


async def _stop(run: Any) -> None:
    """Cancel the turn Ctrl-C interrupted; one that finished in the meantime needs nothing."""
    with contextlib.suppress(RunFinishedError):
        await run.cancel("stopped from the terminal (Ctrl-C)")
