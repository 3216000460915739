"""The loopback server's fixtures reach any test suite through the ``pytest11`` entry point."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points

import pytest

pytest_plugins = ["pytester"]


def test_the_plugin_is_registered_with_pytest_by_the_distribution() -> None:
    (entry_point,) = [ep for ep in entry_points(group="pytest11") if ep.name == "agentdeck_openai"]
    assert entry_point.value == "agentdeck_openai.pytest_plugin"
    assert entry_point.dist is not None
    assert entry_point.dist.name == "agentdeck-openai"


def test_loading_the_plugin_imports_neither_the_sdk_nor_the_server() -> None:
    # A fresh interpreter: what registering the plugin costs every test session that has the
    # distribution installed, whether or not it ever asks for a fixture.
    probe = (
        "import sys, agentdeck_openai.pytest_plugin; "
        "print(sorted(m for m in ('agents', 'openai', 'agentdeck_openai.testing') "
        "if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_a_suite_without_any_conftest_gets_the_fixtures(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        from openai import OpenAI

        from agentdeck_openai.testing import reply


        def test_the_server_answers_from_its_script(model_server, openai_env):
            model_server.script.add(reply("hi from the fixture"))
            client = OpenAI(base_url=openai_env["OPENAI_BASE_URL"], api_key="sk-loopback")
            answer = client.chat.completions.create(
                model=openai_env["OPENAI_MODEL"], messages=[{"role": "user", "content": "hi"}]
            )
            assert answer.choices[0].message.content == "hi from the fixture"
        """
    )
    # A subprocess, as a user's `pytest` run: plugins load from the installed entry points.
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_the_plugin_can_be_switched_off_by_its_name(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_uses_it(model_server):\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:agentdeck_openai", "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*fixture 'model_server' not found*"])
