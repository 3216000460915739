"""Under CI the console's browser tests fail when Chromium is missing: a CI run without the
browser must not go green by skipping them (.ci/services installs Debian's packages)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BROWSER_TESTS = Path(__file__).with_name("test_console_browser.py")


def test_the_browser_tests_fail_under_ci_when_chromium_is_missing(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-browser"
    env = {
        **os.environ,
        "CI": "true",
        "AGENTDECK_TEST_CHROMIUM": str(missing),
        "AGENTDECK_TEST_CHROMEDRIVER": str(missing),
    }
    finished = subprocess.run(
        [sys.executable, "-m", "pytest", str(BROWSER_TESTS), "-q", "-p", "no:cacheprovider"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    report = finished.stdout + finished.stderr
    assert finished.returncode == 1, report
    assert "chromium and chromium-driver are not installed" in report
    summary = report.strip().splitlines()[-1]
    assert " error" in summary, summary  # every test, refused at its browser fixture
    assert "passed" not in summary and "skipped" not in summary, summary
