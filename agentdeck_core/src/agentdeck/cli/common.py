"""What the ``agentdeck`` commands share: where the runs are, how output looks, exit statuses.

Every command that reads or acts on runs opens a :class:`~agentdeck.deck.deck.Deck` on the
configured state — ``--events`` / ``--control`` URLs (``--control-db PATH`` is
``--control sqlite:///PATH``), else the deck settings ``AGENTDECK_STATE`` / ``AGENTDECK_EVENTS``
/ ``AGENTDECK_CONTROL`` and ``config.yaml``. Without ``--project`` that deck has no engines: it
reads any run and answers, pauses or cancels it through the same runtime code a serving deck
uses, and leaves continuing a run to a deck that has its engine (see ``runs answer``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import re
import sys
from collections.abc import AsyncIterator, Coroutine
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from agentdeck.errors import ConfigError, InvalidInputError, NotFoundError
from agentdeck.plugins.urls import redact_url
from agentdeck.vocabulary import SUSPENDED, TERMINAL, RunStatus

if TYPE_CHECKING:
    # The deck, the runtime and the transcript (and the pydantic models they build) are
    # imported where a command needs them: the read commands go through agentdeck.reading
    # and never load them, which is what keeps ``runs list`` quick.
    from agentdeck.bindings.transcript import Style
    from agentdeck.deck.deck import Deck
    from agentdeck.model.status import OpenInterrupt
    from agentdeck.ports import EventStore, RunRecord
    from agentdeck.reading import RunReader
    from agentdeck.runtime.runtime import Runtime
    from agentdeck.settings import Settings

__all__ = [
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_SUSPENDED",
    "EXIT_USAGE",
    "RUN_ID_HELP",
    "Output",
    "add_json_option",
    "add_project_option",
    "add_state_options",
    "describe_state",
    "exit_status_for",
    "find_record",
    "find_run",
    "interrupt_dict",
    "open_deck",
    "open_reader_for",
    "parse_duration",
    "parse_input",
    "record_dict",
    "run_async",
    "runtime_of",
    "state_settings",
]

EXIT_OK = 0
"""Done; a run that was played or followed completed."""
EXIT_FAILED = 1
"""The operation failed (invalid project, unknown run, refused answer) or the run failed or was
cancelled."""
EXIT_USAGE = 2
"""Bad arguments or configuration."""
EXIT_SUSPENDED = 3
"""The run stopped without finishing: it waits for an answer or is paused."""

log = logging.getLogger("agentdeck.cli")

RUN_ID_HELP = "the run's id"
"""The help of a command's RUN_ID argument."""


# =========================================================================== options


def add_state_options(parser: argparse.ArgumentParser, *, control_db: bool = False) -> None:
    """``--events URL`` and ``--control URL`` (and the documented ``--control-db PATH``)."""
    group = parser.add_argument_group("state")
    group.add_argument(
        "--events",
        metavar="URL",
        help="the event store to read (default: AGENTDECK_EVENTS, else AGENTDECK_STATE)",
    )
    group.add_argument(
        "--control",
        metavar="URL",
        help="the control and lease backend (default: AGENTDECK_CONTROL, else AGENTDECK_STATE)",
    )
    if control_db:
        group.add_argument(
            "--control-db",
            metavar="CONTROL_DB",
            help="path to the ControlPort's SQLite file (the same as --control sqlite:///PATH)",
        )


def add_project_option(parser: argparse.ArgumentParser, help: str) -> None:
    parser.add_argument("--project", metavar="PATH", help=help)


def add_json_option(parser: argparse.ArgumentParser, help: str = "print JSON") -> None:
    parser.add_argument("--json", action="store_true", help=help)


# =========================================================================== where the runs are


def state_settings(args: argparse.Namespace) -> Settings:
    """The deck settings with the command line's ``--events`` / ``--control`` applied.

    ``--control`` alone also moves the event log there when no event store is configured at
    all (the default file, or ``memory://``), following the one-place-for-state rule
    (``AGENTDECK_STATE``): the documented
    ``runs signal RUN VERB --control-db state.db`` then finds the run in the same file.
    """
    from agentdeck.settings import CoreSettings, Settings

    events: str | None = getattr(args, "events", None)
    control: str | None = getattr(args, "control", None)
    control_db: str | None = getattr(args, "control_db", None)
    if control_db is not None:
        if control is not None:
            raise ConfigError(
                "--control and --control-db name the same thing; pass one of them",
                setting="--control-db",
            )
        control = f"sqlite:///{control_db}"
    overrides: dict[str, str] = {}
    if control is not None:
        overrides["control"] = control
    if events is not None:
        overrides["events"] = events
    settings = Settings.load(overrides={CoreSettings.section: overrides} if overrides else None)
    if (
        control is not None
        and events is None
        and settings.core.events is None
        and (settings.state_is_default or settings.state_url == "memory://")
    ):
        overrides["events"] = control
        settings = Settings.load(overrides={CoreSettings.section: overrides})
    return settings


def _require_readable_store(settings: Settings) -> None:
    if settings.events_url == "memory://":
        raise ConfigError(
            f"{settings.events_setting}=memory:// is a fresh, in-process log, so there are no "
            "runs to read: set it to the store the deck writes (unset, that is "
            ".agentdeck/state.db), or pass --events URL",
            setting=settings.events_setting,
        )


@asynccontextmanager
async def open_deck(
    args: argparse.Namespace,
    *,
    project: str | None = None,
    need_store: bool = True,
) -> AsyncIterator[Deck]:
    """An open deck on the configured state: the project's, or one with no engines."""
    from agentdeck.deck.deck import Deck

    settings = state_settings(args)
    log.debug("opening a deck on %s", describe_state(settings))
    if project is not None:
        deck = Deck.from_project(project, settings=settings)
    else:
        if need_store:
            _require_readable_store(settings)
        deck = Deck(settings=settings, observers=())
    async with deck:
        yield deck


@asynccontextmanager
async def open_reader_for(args: argparse.Namespace) -> AsyncIterator[RunReader]:
    """The configured store and control port, opened read-only and without a deck: no
    engines, no runtime, no sweep, nothing written or created (see :mod:`agentdeck.reading`)."""
    from agentdeck.reading import open_reader

    settings = state_settings(args)
    log.debug("reading %s", describe_state(settings))
    _require_readable_store(settings)
    async with open_reader(settings) as reader:
        yield reader


async def find_record(store: EventStore, run_id: str) -> RunRecord:
    """The record of run ``run_id`` in ``store``; :class:`NotFoundError` if it has none."""
    record = await store.get_run(run_id)
    if record is None:
        raise NotFoundError(f"no run with id '{run_id}' in this store", what="run", name=run_id)
    return record


def runtime_of(deck: Deck) -> Runtime:
    """The runtime of an open deck, from its run service: the commands are its operator, and
    act through it as ``Run`` handles do."""
    return deck.service.runtime


async def find_run(deck: Deck, run_id: str) -> RunRecord:
    """The record of run ``run_id`` in the deck's store; :class:`NotFoundError` if it has none."""
    return await find_record(runtime_of(deck).store, run_id)


def describe_state(settings: Settings) -> str:
    """Where the events and control live, credentials hidden (for messages)."""
    return f"events {redact_url(settings.events_url)}, control {redact_url(settings.control_url)}"


# =========================================================================== running


def run_async(work: Coroutine[Any, Any, int]) -> int:
    """Run a command's coroutine; Ctrl-C ends it with status 130 and no traceback."""
    try:
        return asyncio.run(work)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def exit_status_for(status: RunStatus | None) -> int:
    """The exit status a command reports for a run it played or followed to ``status``."""
    if status is None or status is RunStatus.COMPLETED or status is RunStatus.RUNNING:
        return EXIT_OK
    if status in SUSPENDED:
        return EXIT_SUSPENDED
    if status in TERMINAL:
        return EXIT_FAILED
    return EXIT_OK  # pragma: no cover - every status is covered above


def parse_input(text: str, *, kind: str) -> Any:
    """A command-line INPUT: text for an agent; JSON (else the text itself) for anything else."""
    if kind == "agent":
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


_DURATION = re.compile(r"(\d+(?:\.\d+)?)([smhdw])")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_duration(text: str) -> timedelta:
    """``90s``, ``30m``, ``12h``, ``7d``, ``2w`` or a sum such as ``1h30m``."""
    compact = text.replace(" ", "").lower()
    parts = _DURATION.findall(compact)
    if not compact or "".join(n + u for n, u in parts) != compact:
        raise InvalidInputError(
            f"{text!r} is not a duration; accepted: a number and a unit s, m, h, d or w, or a "
            "sum of them (90s, 30m, 12h, 7d, 2w, 1h30m)",
            field="duration",
        )
    return timedelta(seconds=sum(float(n) * _UNITS[u] for n, u in parts))


# =========================================================================== output


class Output:
    """Where a command writes: styled text on a terminal, plain when piped, or JSON."""

    def __init__(self, as_json: bool = False, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stdout
        self.as_json = as_json
        self._style: Style | None = None

    @property
    def style(self) -> Style:
        """The stream's style, built on first use (JSON output never needs one)."""
        if self._style is None:
            from agentdeck.bindings.transcript import Style

            self._style = Style.for_stream(self.stream)
        return self._style

    @property
    def terminal(self) -> bool:
        isatty = getattr(self.stream, "isatty", None)
        return bool(isatty and isatty()) and self.style.color

    def line(self, text: str = "") -> None:
        self.stream.write(text + "\n")
        self.stream.flush()

    def json(self, data: Any) -> None:
        json.dump(data, self.stream, indent=2, default=_json_default, ensure_ascii=False)
        self.stream.write("\n")
        self.stream.flush()

    def json_line(self, data: str) -> None:
        self.stream.write(data + "\n")
        self.stream.flush()

    def table(self, headers: list[str], rows: list[list[str]], widths: list[int]) -> None:
        """Columns padded to ``widths`` (measured on the unstyled text)."""
        s = self.style
        header = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()
        self.line(s.paint(header, "bold"))
        for row in rows:
            self.line("  ".join(row).rstrip())


def record_dict(record: RunRecord) -> dict[str, Any]:
    """A run record as JSON data, in the vocabulary ``GET /runs`` and :class:`~agentdeck.Run`
    use (``id``, ``kind``), so one parser reads the CLI's and the server's runs alike."""

    def moment(value: datetime | None) -> str | None:
        return value.isoformat() if value is not None else None

    return {
        "id": record.run_id,
        "name": record.name,
        "kind": record.invocable_kind,
        "status": record.status.value,
        "namespace": record.namespace,
        "session_id": record.session_id,
        "key": record.key,
        "parent_run_id": record.parent_run_id,
        "created_at": moment(record.created_at),
        "updated_at": moment(record.updated_at),
        "last_seq": record.last_seq,
        "wake_at": moment(record.wake_at),
    }


def interrupt_dict(interrupt: OpenInterrupt) -> dict[str, Any]:
    """An open question as JSON data, with the fields of an item of ``pending`` in ``GET
    /runs/{id}`` (``interrupt_id``, ``seq``, ``reason``, ``payload``, ``expected``)."""
    expected = interrupt.expected
    return {
        "interrupt_id": interrupt.interrupt_id,
        "seq": interrupt.seq,
        "reason": interrupt.reason,
        "payload": interrupt.payload,
        "expected": expected.model_dump(mode="json") if expected is not None else None,
    }


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON data")
