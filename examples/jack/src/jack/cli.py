"""``python -m jack ask "question"`` and ``python -m jack serve``.

With ``OPENAI_API_KEY`` set, Jack asks that provider (``OPENAI_BASE_URL`` for any compatible
endpoint, ``JACK_MODEL`` or ``OPENAI_MODEL`` for the model). Without one, or with ``--offline``,
a stand-in model on the loopback server plays the model's part (see :mod:`jack.offline`), so
both commands work on a machine with no key and no network.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from agentdeck import Event, RunCompleted, RunFailed, Settings, TextDelta, ToolCallStarted
from agentdeck.errors import AgentDeckError, ConfigError

from jack.agent import AGENT, build_deck
from jack.corpus import DocsCorpus, find_docs_root
from jack.offline import StandInModel
from jack.settings import JackSettings

__all__ = ["Application", "application", "load_corpus", "main"]


def load_corpus(settings: Settings) -> DocsCorpus:
    """The corpus at ``JACK_DOCS_ROOT``, else in the AgentDeck checkout Jack is run from."""
    configured = settings.section(JackSettings).docs_root
    root = (
        Path(configured)
        if configured
        else find_docs_root([Path.cwd(), Path(__file__).resolve().parent])
    )
    if root is None:
        raise ConfigError(
            "cannot find the AgentDeck documentation: run Jack from an AgentDeck checkout, "
            "or set JACK_DOCS_ROOT to one",
            setting="JACK_DOCS_ROOT",
        )
    return DocsCorpus.from_directory(root)


@dataclass(frozen=True, slots=True)
class Application:
    """What both commands run on: the deck's settings, the corpus, and the stand-in model when
    offline (``None`` when a provider answers)."""

    settings: Settings
    corpus: DocsCorpus
    stand_in: StandInModel | None

    @property
    def jack(self) -> JackSettings:
        return self.settings.section(JackSettings)


@contextmanager
def application(env: Mapping[str, str], *, offline: bool) -> Iterator[Application]:
    """Load settings and the corpus; offline, start the stand-in and point the settings at it."""
    settings = Settings.load(env)
    corpus = load_corpus(settings)
    if not offline:
        yield Application(settings, corpus, None)
        return
    with StandInModel(corpus) as stand_in:
        yield Application(Settings.load({**env, **stand_in.env()}), corpus, stand_in)


def _is_offline(env: Mapping[str, str], forced: bool) -> bool:
    return forced or not env.get("OPENAI_API_KEY")


def _describe(event: Event) -> str:
    payload = event.payload
    match payload:
        case ToolCallStarted(tool=tool, args=args):
            return f"{tool} {args}"
        case TextDelta(text=text):
            return repr(text)
        case RunFailed(error_code=code, message=message):
            return f"{code}: {message}"
        case RunCompleted(usage=usage):
            return f"{usage.requests} model calls, {usage.total_tokens} tokens"
        case _:
            return ""


async def ask(
    question: str,
    env: Mapping[str, str],
    *,
    offline: bool,
    show_events: bool,
    out: TextIO,
    err: TextIO,
) -> int:
    """Stream one answer to ``out``; tool calls (or, with ``show_events``, every event) to
    ``err``. Returns the process exit status: 0 answered, 1 the run did not complete."""
    with application(env, offline=offline) as app:
        if app.stand_in is not None:
            app.stand_in.prepare(question)
        ending: Event | None = None
        async with build_deck(app.settings) as deck:
            async for event in deck.stream(
                AGENT, question, context=app.corpus, budget=app.jack.budget()
            ):
                ending = event
                if show_events:
                    print(f"{event.seq:>3} {event.kind:<20} {_describe(event)}", file=err)
                elif isinstance(event.payload, ToolCallStarted):
                    print(f"[{_describe(event)}]", file=err)
                if isinstance(event.payload, TextDelta):
                    out.write(event.payload.text)
                    out.flush()
        out.write("\n")
        if ending is not None and isinstance(ending.payload, RunCompleted):
            return 0
        how = f"{ending.kind} ({_describe(ending)})" if ending is not None else "with no events"
        print(f"jack: the run ended {how}", file=err)
        return 1


def serve(env: Mapping[str, str], *, offline: bool, host: str, port: int) -> None:
    # Imported here: `ask` never needs the web stack, and it is a noticeable part of start-up.
    import uvicorn

    from jack.server import create_app

    with application(env, offline=offline) as app:
        asgi = create_app(
            build_deck(app.settings),
            app.corpus,
            app.jack,
            before_turn=app.stand_in.prepare if app.stand_in is not None else None,
        )
        mode = "the offline stand-in model" if app.stand_in is not None else "the provider"
        print(f"jack: {len(app.corpus)} pages, answering with {mode}", file=sys.stderr)
        uvicorn.run(asgi, host=host, port=port, proxy_headers=True, log_level="info")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m jack", description="Jack answers questions about AgentDeck from its docs."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    asking = commands.add_parser("ask", help="ask one question and print the streamed answer")
    asking.add_argument("question")
    asking.add_argument("--events", action="store_true", help="print every event of the run")
    serving = commands.add_parser("serve", help="serve POST /ask (Server-Sent Events)")
    serving.add_argument("--host", default="127.0.0.1")
    serving.add_argument("--port", type=int, default=8100)
    for command in (asking, serving):
        command.add_argument(
            "--offline", action="store_true", help="use the stand-in model even with a key set"
        )
        command.add_argument("--docs-root", help="AgentDeck checkout to read (JACK_DOCS_ROOT)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    arguments = _parser().parse_args(argv)
    env = dict(os.environ)
    if arguments.docs_root:
        env["JACK_DOCS_ROOT"] = arguments.docs_root
    offline = _is_offline(env, arguments.offline)
    try:
        if arguments.command == "ask":
            return asyncio.run(
                ask(
                    arguments.question,
                    env,
                    offline=offline,
                    show_events=arguments.events,
                    out=sys.stdout,
                    err=sys.stderr,
                )
            )
        serve(env, offline=offline, host=arguments.host, port=arguments.port)
        return 0
    except AgentDeckError as error:
        print(f"jack: {error}", file=sys.stderr)
        return 2
