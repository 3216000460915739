"""A tenant's client: refused without its key, then starts a run and streams it over SSE.

    python client.py "Where is my order A-1003?"
    python client.py --url http://127.0.0.1:8000 --key acme-dev-key "Where is A-1004?"

It speaks plain HTTP with `httpx`: `POST /runs` starts a run, `GET /runs/{id}/events` streams
its events as Server-Sent Events (`id: <seq>`, `event: <kind>`, `data: <event JSON>`) until the
run ends or parks.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from typing import Any

import httpx

QUESTION = "Where is my order A-1003?"


def render(kind: str, event: dict[str, Any]) -> str:
    """What to print for one frame of the stream."""
    payload = event["payload"]
    if kind == "text.delta":
        return str(payload["text"])
    if kind == "message.completed":
        return "\n"
    if kind == "tool.call.started":
        return f"-> {payload['tool']} {json.dumps(payload['args'])}\n"
    return f"[{kind}]\n"


async def stream_run(client: httpx.AsyncClient, run_id: str, headers: dict[str, str]) -> str:
    """Print the run's events as they arrive; return the kind of the last one."""
    kind = last = ""
    async with client.stream("GET", f"/runs/{run_id}/events", headers=headers) as stream:
        stream.raise_for_status()
        async for line in stream.aiter_lines():
            if line.startswith("event:"):
                kind = line.removeprefix("event:").strip()
            elif line.startswith("data:"):
                print(render(kind, json.loads(line.removeprefix("data:"))), end="", flush=True)
                last = kind
    return last


async def main(url: str, key: str, question: str = QUESTION) -> str:
    """Show the refusal, then start one run and stream it; return its last event's kind."""
    start = {"name": "support", "input": question}
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        refused = await client.post("/runs", json=start)
        print(f"without a key: {refused.status_code} {refused.json()['error']}")

        headers = {"Authorization": f"Bearer {key}"}
        started = await client.post("/runs", json=start, headers=headers)
        started.raise_for_status()
        run = started.json()
        print(f"with a key: {started.status_code} {run['status']} in namespace {run['namespace']}")
        return await stream_run(client, run["id"], headers)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Start a run on the served deck and stream it.")
    parser.add_argument("question", nargs="?", default=QUESTION)
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--key", default=os.environ.get("ACME_API_KEY", "acme-dev-key"))
    args = parser.parse_args()
    asyncio.run(main(args.url, args.key, args.question))
