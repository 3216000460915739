"""Several processes opening one *new* SQLite file at the same moment all succeed.

The first open of a file switches it to WAL and creates the schema; both need a write lock, and
SQLite answers a lock conflict on the journal-mode switch with "database is locked" at once
instead of waiting. With the state file the default, every process of a project started at the
same time (a server and a CLI command, several workers) makes that first open together.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

from agentdeck.sqlite.schema import SCHEMA_VERSION, connect, parse_url

PROCESSES = 8
ROUNDS = 4

# Each child imports everything, says "ready", then opens the file it is sent on stdin the
# moment it reads the line: the parent sends the same path to all of them at once.
_CHILD = """
import asyncio, sys
from agentdeck.sqlite.store import SqliteControlPort, SqliteEventStore, SqliteLeasePort
from agentdeck.testing import new_run

async def open_all(url, run_id):
    backends = [SqliteEventStore(url), SqliteControlPort(url), SqliteLeasePort(url)]
    for backend in backends:
        await backend.open()
    try:
        await backends[0].open_run(new_run(run_id=run_id))
    finally:
        for backend in backends:
            await backend.close()

worker = sys.argv[1]
print("ready", flush=True)
for line in sys.stdin:
    path = line.strip()
    try:
        asyncio.run(open_all("sqlite:///" + path, path + "-" + worker))
    except Exception as exc:
        print("failed", type(exc).__name__, exc, flush=True)
    else:
        print("ok", flush=True)
"""


def test_processes_opening_a_new_file_together_all_succeed(tmp_path: Path) -> None:
    children = [
        subprocess.Popen(
            [sys.executable, "-c", _CHILD, str(n)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(PROCESSES)
    ]
    try:
        assert [child.stdout.readline().strip() for child in children if child.stdout] == [
            "ready"
        ] * PROCESSES
        outcomes: list[str] = []
        for round_ in range(ROUNDS):
            path = tmp_path / f"round-{round_}" / "state.db"
            for child in children:
                assert child.stdin is not None
                child.stdin.write(f"{path}\n")
                child.stdin.flush()
            outcomes += [child.stdout.readline().strip() for child in children if child.stdout]
    finally:
        for child in children:
            if child.stdin is not None:
                child.stdin.close()
        for child in children:
            child.wait(timeout=60)
    assert [o for o in outcomes if o != "ok"] == []
    for round_ in range(ROUNDS):
        connection = sqlite3.connect(tmp_path / f"round-{round_}" / "state.db")
        try:
            (mode,) = connection.execute("PRAGMA journal_mode").fetchone()
            versions = connection.execute("SELECT version FROM agentdeck_schema").fetchall()
            (runs,) = connection.execute("SELECT count(*) FROM agentdeck_runs").fetchone()
        finally:
            connection.close()
        assert mode == "wal"
        assert versions == [(SCHEMA_VERSION,)]  # created once, not once per process
        assert runs == PROCESSES


def test_the_switch_to_wal_waits_for_another_connections_write_lock(tmp_path: Path) -> None:
    # The case SQLite does not busy-wait for: another connection holds the write lock of a file
    # still in rollback-journal mode (as the process creating the file does for a moment).
    path = tmp_path / "state.db"
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("CREATE TABLE other_program_is_not_here (x)")
    holder.execute("BEGIN IMMEDIATE")
    released = threading.Timer(0.3, holder.execute, args=("COMMIT",))
    released.start()
    try:
        connection = connect(parse_url(f"sqlite:///{path}"))
    finally:
        released.join()
        holder.close()
    try:
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    finally:
        connection.close()
