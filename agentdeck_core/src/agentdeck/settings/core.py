"""The core's own settings sections: where the deck's state lives, and the runtime's timings.

:class:`CoreSettings` (``agentdeck:`` in ``config.yaml``, ``AGENTDECK_*``) holds the state
location — ``AGENTDECK_STATE`` and the parts that may be split off it (events, control, session)
— and :class:`RuntimeSettings` (``runtime:``, ``AGENTDECK_RUNTIME_*``) the knobs the runtime
reads. Plugin sections may not reuse their names or variables (:data:`CORE_SECTIONS`).
"""

from __future__ import annotations

import re
from typing import ClassVar

from pydantic import Field, field_validator
from pydantic_settings import SettingsConfigDict

from agentdeck.settings.section import SettingsSection

__all__ = [
    "CORE_SECTIONS",
    "DEFAULT_STATE_FILE",
    "PROJECT_DIRECTORY",
    "CoreSettings",
    "RuntimeSettings",
]

PROJECT_DIRECTORY = ".agentdeck"
"""The project directory ``Deck.from_project()`` reads by default, where state lives too."""
DEFAULT_STATE_FILE = "state.db"
"""The SQLite file, in the project directory, that holds the state when nothing is configured."""

_SCHEME_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://")
_URL_ACCEPTED = (
    "a scheme-shaped URL such as memory://, sqlite:///path/to/state.db, redis://host:6379/0 "
    "or postgresql://user@host/db"
)


class CoreSettings(SettingsSection):
    """Where the deck's state lives: one root URL, and optional overrides for its parts."""

    section: ClassVar[str] = "agentdeck"
    model_config = SettingsConfigDict(env_prefix="AGENTDECK_")

    state: str = Field(
        default=f"sqlite:///{PROJECT_DIRECTORY}/{DEFAULT_STATE_FILE}",
        json_schema_extra={"accepted": _URL_ACCEPTED},
    )
    """The one location of all run state: the event log, control requests and leases, as a
    scheme-shaped URL (`memory://`, `sqlite:///path/to/state.db`, `redis://host`,
    `postgresql://dsn`); the scheme picks the plugin that stores it. Unset, the state is the
    SQLite file `state.db` of the project directory (`Deck.from_project(path)`: `path/state.db`;
    a deck built in code: `.agentdeck/state.db` of the working directory), created on first use
    and surviving a restart. `memory://` keeps everything in this process and loses it on exit
    (tests, throwaway scripts). Set this one variable to move everything."""

    events: str | None = Field(default=None, json_schema_extra={"accepted": _URL_ACCEPTED})
    """Where the canonical run event log is written, when it must differ from `AGENTDECK_STATE`.
    Unset (the default) means the event log lives at `AGENTDECK_STATE`."""

    control: str | None = Field(default=None, json_schema_extra={"accepted": _URL_ACCEPTED})
    """Where pending pause/cancel requests and run leases live, when they must differ from
    `AGENTDECK_STATE`. Unset (the default) means they live at `AGENTDECK_STATE`. Only a backend
    shared across processes lets another process signal a run or free a killed worker's
    session by its lapsed lease."""

    session: str | None = Field(default=None, json_schema_extra={"accepted": _URL_ACCEPTED})
    """Where agent conversation memory lives (not the event log), as a scheme-shaped URL whose
    scheme picks the session plugin: `redis://host` keeps conversations in Redis, shared by every
    worker and surviving a restart. Unset means `local://`: one in-process session per session
    id, lost when the process exits."""

    execution: str | None = Field(
        default=None,
        json_schema_extra={
            "accepted": "a scheme-shaped URL such as inprocess:// or "
            "temporal://HOST:PORT/NAMESPACE?task_queue=NAME"
        },
    )
    """Where runs execute, as a scheme-shaped URL whose scheme picks the execution plugin.
    Unset (the default) means `inprocess://`: each run plays in the process that started it.
    `temporal://HOST:PORT/NAMESPACE?task_queue=NAME` (agentdeck-temporal) records each run as
    queued and hands it to `agentdeck worker` processes; it needs a durable state store that
    every worker shares (PostgreSQL, Redis, or SQLite on one machine), so a deck on `memory://`
    refuses to build with it."""

    @field_validator("state", "events", "control", "session", "execution")
    @classmethod
    def _scheme_shaped(cls, value: str | None) -> str | None:
        if value is not None and not _SCHEME_URL.match(value):
            raise ValueError("is not a scheme-shaped URL (no '<scheme>://' at its start)")
        return value


class RuntimeSettings(SettingsSection):
    """Timing knobs the runtime itself reads."""

    section: ClassVar[str] = "runtime"
    model_config = SettingsConfigDict(env_prefix="AGENTDECK_RUNTIME_")

    stale_run_after_seconds: float = Field(default=3600.0, gt=0)
    """Seconds a *running* run may go without recording an event before it counts as abandoned,
    so a new run may take over its session. Paused runs and runs waiting for an answer are never
    stale: they keep their session until resumed, answered or cancelled. Must be greater than
    0; set it above the longest a healthy turn can stay silent."""

    lease_ttl_seconds: float = Field(default=90.0, gt=0)
    """Seconds a run's lease stays alive without renewal. The worker playing a run renews it
    several times per TTL, so a worker killed outright frees its session within one TTL rather
    than one `stale_run_after_seconds`. Takes effect only with a lease backend shared across
    processes; with the in-memory default no lease is ever seen to lapse and staleness is the
    only backstop. Must be greater than 0; set it above the longest the event loop can be
    blocked at once."""

    sweep_interval_seconds: float = Field(default=30.0, gt=0)
    """Seconds between an open deck's sweeps for timers whose wake time has passed, which it
    then resumes; no cron or scheduler needed. The sweep runs for the deck's lifetime, starting
    when it opens and stopping when it closes. Must be greater than 0."""

    max_suspended: int = Field(default=1000, ge=0)
    """Parked `@workflow` bodies an open deck keeps suspended in memory, so that continuing
    their runs here goes on where they stood instead of replaying them from the log. Past it
    the oldest is released (its run replays when it continues); 0 keeps none. A deck whose
    `AGENTDECK_EXECUTION` queues runs for workers keeps none whatever it says: its parked runs
    continue on whichever worker their execution picks, and hold no worker's memory."""


CORE_SECTIONS: tuple[type[SettingsSection], ...] = (CoreSettings, RuntimeSettings)
"""The sections the core owns; plugin sections may not reuse their names or variables."""
