"""The operator console in a real headless Chromium, against a served deck on SQLite with the
loopback model server playing the model: live runs list, run timeline, inbox answers and
approvals, run controls, namespaces and cookies, untrusted content shown as text, paging through
cursors, sessions and health.

Each page the docs show is photographed on every run (``docs/images/console/``), so the
pictures in ``docs/console.md`` are of the console as it is."""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentdeck import Agent, WorkflowCtx, tool, workflow
from agentdeck.settings import Settings
from agentdeck_http import Native

support: Any = __import__("http_test_support")

# Debian's packages (.ci/services installs them); the variables exist so a test can point at a
# browser that is not there.
CHROMIUM = os.environ.get("AGENTDECK_TEST_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("AGENTDECK_TEST_CHROMEDRIVER", "/usr/bin/chromedriver")
SCREENSHOTS = Path(__file__).resolve().parents[3] / "docs" / "images" / "console"
KEYS = {"key-a": ["a"], "key-b": ["b"], "key-c": ["c"]}
PAGED_RUNS = 120  # more than two of the runs page's pages (50 each)
WAIT = 15.0  # a bound on waits that only time out when something is broken
HOSTILE = "<img src=x onerror=alert(1)>"
ENDINGS = ("run.completed", "run.failed", "run.cancelled")

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1400,900",
)

refunds: list[str] = []


@tool
async def lookup(order_id: str) -> str:
    """Look an order up."""
    await asyncio.sleep(0.3)
    return HOSTILE


@tool
def refund(order_id: str) -> str:
    """Refund an order."""
    refunds.append(order_id)
    return f"refunded {order_id}"


clerk = Agent(name="clerk", instructions="Look orders up.", tools=[lookup])
refunder = Agent(name="refunder", instructions="Refund.", tools=[refund], interrupt_on=["refund"])


@workflow
async def asker(ctx: WorkflowCtx[None]) -> dict[str, Any]:
    """Two questions: one with options, one typed."""
    colour = await ctx.ask("Which colour?", options=["red", "blue"])
    count = await ctx.ask("How many?", schema=int)
    return {"colour": colour, "count": count}


@workflow
async def noop() -> None:
    """Finishes at once: a run to page through."""


@workflow
async def pair_of_noops(ctx: WorkflowCtx[None]) -> None:
    """Two child runs of its own: the second level of a tree."""
    await ctx.invoke("noop", None)
    await ctx.invoke("noop", None)


@workflow
async def fanout(ctx: WorkflowCtx[None]) -> None:
    """A child run, and a child that has children."""
    await ctx.invoke("noop", None)
    await ctx.invoke("pair_of_noops", None)


@workflow
async def ticker(ctx: WorkflowCtx[None]) -> int:
    """Many small steps, each followed by a safe point where a pause or cancel takes effect."""

    async def tick() -> int:
        await asyncio.sleep(0.05)
        return 1

    total = 0
    for number in range(2000):
        total += await ctx.step(f"tick {number}", tick)
        await ctx.safepoint()
    return total


def chromium(profile: str) -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})  # the page's requests
    return webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from agentdeck.testing.fixtures import in_ci

    if not (os.access(CHROMIUM, os.X_OK) and os.access(CHROMEDRIVER, os.X_OK)):
        message = "chromium and chromium-driver are not installed (.ci/services installs them)"
        if in_ci():
            pytest.fail(message)
        pytest.skip(message)
    profile = tempfile.mkdtemp(prefix="agentdeck-chromium-")
    driver = chromium(profile)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def model() -> Iterator[Any]:
    testing = support.require_openai()
    from agents import set_trace_processors

    set_trace_processors([])
    with testing.LoopbackModelServer(testing.Script()) as server:
        yield server


@pytest.fixture(scope="module")
def deck_url(model: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    state = tmp_path_factory.mktemp("console") / "state.db"
    deck = support.make_deck(
        workflows=[asker, ticker, noop, pair_of_noops, fanout],
        agents=[clerk, refunder],
        settings=Settings(env={"AGENTDECK_STATE": f"sqlite:///{state}", **model.env()}),
    )
    with support.ServerThread(deck.expose(Native.http(api_keys=KEYS))) as served:
        yield served.base_url


def api(base: str, key: str) -> httpx.Client:
    return httpx.Client(base_url=base, headers={"X-API-Key": key}, timeout=WAIT)


def wait_for(driver: Any, condition: Any, timeout: float = WAIT) -> Any:
    """``condition`` once it holds; a page redrawn under it (a live update) is looked at again."""
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    ignored = (NoSuchElementException, StaleElementReferenceException)
    return WebDriverWait(driver, timeout, poll_frequency=0.05, ignored_exceptions=ignored).until(
        condition
    )


def settled(driver: Any, read: Any) -> Any:
    """``read(driver)``, read again when a live redraw replaced an element under it."""
    return wait_for(driver, lambda d: (read(d),))[0]


def click(driver: Any, selector: str) -> None:
    """Click the first element ``selector`` finds, again if a live redraw replaced it."""
    from selenium.webdriver.common.by import By

    wait_for(driver, lambda d: d.find_element(By.CSS_SELECTOR, selector).click() or True)


def css(driver: Any, selector: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    return list(driver.find_elements(By.CSS_SELECTOR, selector))


def sign_in(driver: Any, base: str, key: str) -> None:
    from selenium.webdriver.common.by import By

    driver.delete_all_cookies()
    driver.get(f"{base}/ui/login")
    field = wait_for(driver, lambda d: d.find_element(By.ID, "api-key"))
    field.send_keys(key)
    driver.find_element(By.CSS_SELECTOR, "#login button").click()
    wait_for(driver, lambda d: css(d, "#runs-body"))


def screenshot(driver: Any, name: str) -> None:
    """Rewrite the docs' picture of this page, so it shows the console as it is now."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    assert driver.save_screenshot(str(SCREENSHOTS / f"{name}.png"))


def status_of(driver: Any, run_id: str) -> str | None:
    cells = css(driver, f'tr[data-run-id="{run_id}"] .status')
    return cells[0].text if cells else None


def wait_status(client: httpx.Client, run_id: str, status: str) -> dict[str, Any]:
    deadline = time.monotonic() + WAIT
    while True:
        run = client.get(f"/runs/{run_id}").json()
        if run["status"] == status or time.monotonic() > deadline:
            assert run["status"] == status, run
            return run
        time.sleep(0.05)


def requests_made(driver: Any) -> list[str]:
    """The URLs the page asked for since the last call (Chrome's performance log)."""
    import json

    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def open_model_ms(driver: Any) -> float | None:
    """The open model bar's duration as the timeline shows it ("412 ms…"), in ms."""
    shown = [cell.text for cell in css(driver, '.span[data-lane="model"] .span-duration')]
    if not shown or not shown[0].endswith("…"):
        return None
    number, unit = shown[0].removesuffix("…").split(" ", 1)
    return float(number) * (1000.0 if unit == "s" else 1.0) if unit in ("ms", "s") else None


def events_of_started(client: httpx.Client, run_id: str) -> list[dict[str, Any]]:
    """A live run's events so far (its stream ends where the run stands, or at once)."""
    import json

    with client.stream("GET", f"/runs/{run_id}/events", params={"from_seq": 0}) as response:
        lines = []
        for line in response.iter_lines():
            if line[:5] == "data:":
                lines.append(json.loads(line[5:]))
                break  # run.started is the first event; the stream may go on for long
        return lines


def events_of(client: httpx.Client, run_id: str) -> list[dict[str, Any]]:
    """A finished run's events. Its event stream ends where the run stopped (a pause, say), so
    read on from there until the last event is the run's end."""
    import json

    events: list[dict[str, Any]] = []
    while not events or events[-1]["kind"] not in ENDINGS:
        params = {"from_seq": events[-1]["seq"] + 1 if events else 0}
        with client.stream("GET", f"/runs/{run_id}/events", params=params) as response:
            events += [
                json.loads(line[5:]) for line in response.iter_lines() if line[:5] == "data:"
            ]
    return events


# ----------------------------------------------------------------------------- the tests


def test_a_run_started_over_the_api_appears_live_and_its_status_changes(
    browser: Any, deck_url: str
) -> None:
    sign_in(browser, deck_url, "key-a")
    wait_for(browser, lambda d: any("/runs/changes" in url for url in requests_made(d)))
    with api(deck_url, "key-a") as client:
        started = time.monotonic()
        run_id = client.post("/runs", json={"name": "asker"}).json()["id"]
        wait_for(browser, lambda d: status_of(d, run_id) is not None, timeout=1.0)
        assert time.monotonic() - started <= 1.0
        wait_for(browser, lambda d: status_of(d, run_id) == "waiting_answer")
        screenshot(browser, "runs")
        client.post(f"/runs/{run_id}/cancel", json={"reason": "tidy"})
        wait_for(browser, lambda d: status_of(d, run_id) == "cancelled")
    # All of that came down the one open change stream: the page asked for nothing more.
    assert requests_made(browser) == []


def test_options_and_typed_questions_are_answered_in_the_inbox(browser: Any, deck_url: str) -> None:
    from selenium.webdriver.common.by import By

    sign_in(browser, deck_url, "key-a")
    with api(deck_url, "key-a") as client:
        run_id = client.post("/runs", json={"name": "asker"}).json()["id"]
        wait_status(client, run_id, "waiting_answer")
        browser.get(f"{deck_url}/ui/inbox")
        card = f'li.item[data-run-id="{run_id}"]'
        wait_for(browser, lambda d: css(d, f"{card} button.option"))
        screenshot(browser, "inbox")
        [blue] = [b for b in css(browser, f"{card} button.option") if b.text == "blue"]
        blue.click()
        wait_for(browser, lambda d: css(d, f"{card} input.answer-input"))
        field = css(browser, f"{card} input.answer-input")[0]
        field.send_keys("many")
        css(browser, f"{card} button[type=submit]")[0].click()
        refusal = wait_for(
            browser,
            lambda d: next((r for r in css(d, f"{card} .refusal") if r.text), None),
        )
        assert "int" in refusal.text.lower()
        screenshot(browser, "inbox-refused")
        assert client.get(f"/runs/{run_id}").json()["status"] == "waiting_answer"
        field = css(browser, f"{card} input.answer-input")[0]
        field.clear()
        field.send_keys("3")
        browser.find_element(By.CSS_SELECTOR, f"{card} button[type=submit]").click()
        run = wait_status(client, run_id, "completed")
    assert run["output"] is not None
    assert "blue" in str(run["output"]) and "3" in str(run["output"])


def test_a_tool_approval_is_approved_once_and_another_denied(
    browser: Any, deck_url: str, model: Any
) -> None:
    from agentdeck_openai.testing import reply, tool_call

    sign_in(browser, deck_url, "key-a")
    refunds.clear()
    with api(deck_url, "key-a") as client:
        model.script.add(tool_call("refund", {"order_id": "A-1"}, call_id="call_a"))
        model.script.add(reply("Refunded."))
        approved = client.post("/runs", json={"name": "refunder", "input": "refund A-1"})
        approved_id = approved.json()["id"]
        wait_status(client, approved_id, "waiting_answer")
        browser.get(f"{deck_url}/ui/inbox")
        card = f'li.item[data-run-id="{approved_id}"]'
        wait_for(browser, lambda d: any("A-1" in p.text for p in css(d, f"{card} pre.json")))
        click(browser, f"{card} button.approve")
        wait_status(client, approved_id, "completed")
        assert refunds == ["A-1"]

        model.script.add(tool_call("refund", {"order_id": "B-2"}, call_id="call_b"))
        model.script.add(reply("Not refunded."))
        denied_id = client.post("/runs", json={"name": "refunder", "input": "refund B-2"})
        denied_id = denied_id.json()["id"]
        wait_status(client, denied_id, "waiting_answer")
        card = f'li.item[data-run-id="{denied_id}"]'
        click(browser, f"{card} button.deny")
        wait_status(client, denied_id, "completed")
    assert refunds == ["A-1"]


def test_the_timeline_grows_while_an_agent_streams_and_shows_a_tool_duration(
    browser: Any, deck_url: str, model: Any
) -> None:
    from agentdeck_openai.testing import reply, tool_call

    sign_in(browser, deck_url, "key-a")
    model.script.add(tool_call("lookup", {"order_id": "A-7"}, call_id="call_l"))
    model.script.add(reply(["Found ", "the ", "order ", "for ", "you."], delay=0.4))
    with api(deck_url, "key-a") as client:
        run_id = client.post("/runs", json={"name": "clerk", "input": "find A-7"}).json()["id"]
        browser.get(f"{deck_url}/ui/runs/{run_id}")
        wait_for(browser, lambda d: css(d, '#events li[data-kind="text.delta"]'))
        deltas_seen = len(css(browser, '#events li[data-kind="text.delta"]'))
        [streaming] = wait_for(browser, lambda d: [ms] if (ms := open_model_ms(d)) else None)
        assert client.get(f"/runs/{run_id}").json()["status"] == "running"
        wait_for(
            browser,
            lambda d: len(css(d, '#events li[data-kind="text.delta"]')) > deltas_seen,
        )
        # The model's bar is still open and has grown: the picture follows the stream.
        wait_for(browser, lambda d: (open_model_ms(d) or 0) > streaming)
        wait_status(client, run_id, "completed")
    wait_for(browser, lambda d: css(d, '#events li[data-kind="run.completed"]'))
    tool_duration = '.span[data-lane="tool"] .span-duration'
    duration = wait_for(browser, lambda d: css(d, tool_duration)[0].text)  # a redraw: read again
    assert duration.endswith(" ms") or duration.endswith(" s")
    assert not duration.endswith("…")
    assert css(browser, '.span[data-lane="model"]')
    header = browser.find_element("id", "run-header").text
    assert "clerk" in header and "null" not in header and "undefined" not in header
    screenshot(browser, "run")


def test_a_hostile_tool_result_renders_as_text(browser: Any, deck_url: str, model: Any) -> None:
    from selenium.common.exceptions import NoAlertPresentException

    from agentdeck_openai.testing import reply, tool_call

    sign_in(browser, deck_url, "key-a")
    model.script.add(tool_call("lookup", {"order_id": "X"}, call_id="call_x"))
    model.script.add(reply("Done."))
    with api(deck_url, "key-a") as client:
        run_id = client.post("/runs", json={"name": "clerk", "input": "find X"}).json()["id"]
        wait_status(client, run_id, "completed")
    browser.get(f"{deck_url}/ui/runs/{run_id}")
    item = wait_for(browser, lambda d: css(d, '#events li[data-kind="tool.call.completed"]'))[0]
    item.find_element("css selector", "summary").click()
    result = item.find_element("css selector", "pre.result")
    assert result.text == HOSTILE
    assert css(browser, "main img") == []
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text  # noqa: B018 -- reading it is the check


def test_pause_resume_and_cancel_from_the_run_page(browser: Any, deck_url: str) -> None:
    from selenium.webdriver.common.by import By

    sign_in(browser, deck_url, "key-a")
    with api(deck_url, "key-a") as client:
        run_id = client.post("/runs", json={"name": "ticker"}).json()["id"]
        browser.get(f"{deck_url}/ui/runs/{run_id}")
        click(browser, "#pause")
        wait_status(client, run_id, "paused")
        click(browser, "#resume")
        wait_status(client, run_id, "running")
        wait_for(browser, lambda d: d.find_element(By.ID, "cancel-reason")).send_keys("enough")
        click(browser, "#cancel")
        wait_status(client, run_id, "cancelled")
        events = events_of(client, run_id)
        kinds = [e["kind"] for e in events]
        [cancelled] = [e for e in events if e["kind"] == "run.cancelled"]
    assert cancelled["payload"]["reason"] == "enough"
    assert kinds.count("run.paused") == 1 and kinds.count("run.resumed") == 1
    wait_for(browser, lambda d: css(d, '#run-header .status[data-status="cancelled"]'))
    click(browser, "#retry")
    wait_for(browser, lambda d: run_id not in d.current_url and "/ui/runs/" in d.current_url)
    retried = browser.current_url.rsplit("/", 1)[-1]
    with api(deck_url, "key-a") as client:
        [started] = [e for e in events_of_started(client, retried) if e["kind"] == "run.started"]
        assert started["payload"]["retry_of"] == run_id
        client.post(f"/runs/{retried}/cancel", json={"reason": "done"})
        wait_status(client, retried, "cancelled")


def test_key_b_sees_none_of_namespace_a_and_its_cookie_is_refused_there(
    browser: Any, deck_url: str
) -> None:
    with api(deck_url, "key-a") as client_a:
        a_run = client_a.post("/runs", json={"name": "asker"}).json()["id"]
        wait_status(client_a, a_run, "waiting_answer")
    sign_in(browser, deck_url, "key-b")
    wait_for(browser, lambda d: css(d, "#runs-note"))
    assert css(browser, "#runs-body tr") == []
    browser.get(f"{deck_url}/ui/inbox")
    wait_for(browser, lambda d: css(d, "#inbox-note") and css(d, "#inbox-note")[0].text)
    assert css(browser, "#inbox li") == []

    cookie = browser.get_cookie("agentdeck_console")
    assert cookie["httpOnly"] is True and cookie["sameSite"] == "Strict"
    jar = {"agentdeck_console": cookie["value"]}
    with httpx.Client(base_url=deck_url, cookies=jar, timeout=WAIT) as crafted:
        csrf = crafted.get("/ui/session").json()["csrf"]
        assert crafted.get(f"/runs/{a_run}").status_code == 404
        assert crafted.get(f"/runs/{a_run}", params={"namespace": "a"}).status_code == 404
        refused = crafted.post(
            f"/runs/{a_run}/cancel", params={"namespace": "a"}, headers={"X-CSRF-Token": csrf}
        )
        assert refused.status_code == 404
        assert crafted.post("/runs", json={"name": "asker"}).status_code == 403  # no CSRF token
    with api(deck_url, "key-a") as client_a:
        assert client_a.get(f"/runs/{a_run}").json()["status"] == "waiting_answer"


def test_scrolling_the_runs_page_pages_through_every_run_by_cursor(
    browser: Any, deck_url: str
) -> None:
    with api(deck_url, "key-c") as client:
        for _ in range(PAGED_RUNS):
            assert client.post("/runs", json={"name": "noop"}).status_code == 201
        expected: list[str] = []
        cursor = None
        while True:
            params = {"order": "newest", "limit": 50, **({"cursor": cursor} if cursor else {})}
            page = client.get("/runs", params=params)
            expected += [run["id"] for run in page.json()["runs"]]
            cursor = page.json()["next_cursor"]
            if cursor is None:
                break
    assert len(expected) == PAGED_RUNS == len(set(expected))

    sign_in(browser, deck_url, "key-c")
    rows = "#runs-body tr"
    wait_for(browser, lambda d: len(css(d, rows)) == 50)
    for shown in (100, PAGED_RUNS):
        browser.execute_script("window.scrollTo(0, document.body.scrollHeight)")
        wait_for(browser, lambda d, n=shown: len(css(d, rows)) == n)
    wait_for(browser, lambda d: not d.find_element("id", "more").is_displayed())
    shown = settled(browser, lambda d: [row.get_attribute("data-run-id") for row in css(d, rows)])
    assert shown == expected


def test_a_session_page_lists_its_runs_in_order(browser: Any, deck_url: str, model: Any) -> None:
    from agentdeck_openai.testing import reply

    sign_in(browser, deck_url, "key-a")
    model.script.add(reply("First answer."))
    model.script.add(reply("Second answer."))
    session = "console-session"
    with api(deck_url, "key-a") as client:
        ran = []
        for text in ("hello", "and again"):
            started = client.post(
                "/runs", json={"name": "clerk", "input": text, "session_id": session}
            )
            ran.append(started.json()["id"])
            wait_status(client, ran[-1], "completed")
    browser.get(f"{deck_url}/ui/sessions")
    click(browser, f'#sessions a[href$="/sessions/{session}"]')
    wait_for(browser, lambda d: len(css(d, "#session-runs li")) == 2)
    links = [a.get_attribute("href") for a in css(browser, "#session-runs li a")]
    assert [link.rsplit("/", 1)[-1] for link in links] == ran
    screenshot(browser, "session")


def test_the_health_page_shows_the_catalog_the_plugins_and_the_store(
    browser: Any, deck_url: str
) -> None:
    from selenium.webdriver.common.by import By

    sign_in(browser, deck_url, "key-a")
    browser.get(f"{deck_url}/ui/health")
    store = wait_for(browser, lambda d: d.find_element(By.ID, "health-store"))
    assert store.find_element(By.CSS_SELECTOR, ".status").text == "ok"
    assert "Sqlite" in store.text
    agents = browser.find_element(By.ID, "health-agents").text
    workflows = browser.find_element(By.ID, "health-workflows").text
    assert "clerk" in agents and "refunder" in agents
    assert "asker" in workflows and "ticker" in workflows
    plugins = {row.get_attribute("data-plugin") for row in css(browser, "#health-plugins tbody tr")}
    assert plugins and any("http" in name for name in plugins)
    screenshot(browser, "health")


def test_the_runs_page_filters_by_status_and_finds_a_run_by_id_or_key(
    browser: Any, deck_url: str
) -> None:
    with api(deck_url, "key-a") as client:
        keyed = client.post("/runs", json={"name": "noop", "key": "order-77"}).json()["id"]
        waiting = client.post("/runs", json={"name": "asker"}).json()["id"]
        wait_status(client, keyed, "completed")
        wait_status(client, waiting, "waiting_answer")
    sign_in(browser, deck_url, "key-a")
    for term in ("order-77", keyed):
        browser.get(f"{deck_url}/ui/?search={term}")
        wait_for(
            browser, lambda d: [r.get_attribute("data-run-id") for r in css(d, "#runs-body tr")]
        )
        found = settled(
            browser, lambda d: [r.get_attribute("data-run-id") for r in css(d, "#runs-body tr")]
        )
        assert found == [keyed]
    browser.get(f"{deck_url}/ui/?search=no-such-thing")
    wait_for(browser, lambda d: "No run" in d.find_element("id", "runs-note").text)

    browser.get(f"{deck_url}/ui/")
    wait_for(browser, lambda d: status_of(d, waiting) == "waiting_answer")
    from selenium.webdriver.support.ui import Select

    Select(browser.find_element("id", "filter-status")).select_by_value("waiting_answer")
    browser.find_element("css selector", "#filters button[type=submit]").click()
    wait_for(browser, lambda d: "status=waiting_answer" in d.current_url)
    wait_for(browser, lambda d: status_of(d, waiting) == "waiting_answer")
    statuses = settled(browser, lambda d: {cell.text for cell in css(d, "#runs-body .status")})
    assert statuses == {"waiting_answer"}
    with api(deck_url, "key-a") as client:
        client.post(f"/runs/{waiting}/cancel", json={"reason": "tidy"})
        wait_status(client, waiting, "cancelled")


def test_a_run_page_shows_its_tree_of_child_runs_on_the_timeline(
    browser: Any, deck_url: str
) -> None:
    sign_in(browser, deck_url, "key-a")
    with api(deck_url, "key-a") as client:
        run_id = client.post("/runs", json={"name": "fanout"}).json()["id"]
        browser.get(f"{deck_url}/ui/runs/{run_id}")
        wait_status(client, run_id, "completed")
        children = client.get("/runs", params={"parent_run_id": run_id}).json()["runs"]
        [middle] = [child["id"] for child in children if child["name"] == "pair_of_noops"]
        grandchildren = client.get("/runs", params={"parent_run_id": middle}).json()["runs"]
    assert len(children) == 2 and len(grandchildren) == 2
    nested = f'#children li[data-run-id="{middle}"] li'
    wait_for(browser, lambda d: len(css(d, nested)) == 2)
    shown = settled(browser, lambda d: {li.get_attribute("data-run-id") for li in css(d, nested)})
    assert shown == {child["id"] for child in grandchildren}
    assert len(css(browser, "#children > ul > li")) == 2
    wait_for(browser, lambda d: len(css(d, '.span[data-lane="child"]')) == 2)


def test_without_keys_the_console_opens_at_once_and_browses_any_namespace(
    browser: Any, tmp_path: Path
) -> None:
    state = tmp_path / "open.db"
    deck = support.make_deck(
        workflows=[noop], settings=Settings(env={"AGENTDECK_STATE": f"sqlite:///{state}"})
    )
    with support.ServerThread(deck.expose(Native.http())) as served:
        base = served.base_url
        with httpx.Client(base_url=base, timeout=WAIT) as client:
            elsewhere = client.post("/runs", json={"name": "noop", "namespace": "x"}).json()["id"]
        browser.delete_all_cookies()
        browser.get(f"{base}/ui/")
        wait_for(browser, lambda d: "No runs match" in d.find_element("id", "runs-note").text)
        assert "/ui/login" not in browser.current_url
        field = browser.find_element("id", "filter-namespace")
        field.send_keys("x")
        browser.find_element("css selector", "#filters button[type=submit]").click()
        wait_for(browser, lambda d: status_of(d, elsewhere) == "completed")
