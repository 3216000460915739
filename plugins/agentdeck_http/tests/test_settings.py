"""The ``http`` settings section: ``Native.from_settings`` builds the binding a deployment
describes in ``AGENTDECK_HTTP_*`` (or config.yaml's ``http:`` block), resolving keys and the
context factory at startup, and every bad value is a ConfigError naming its variable."""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from http_test_support import frames, make_deck, serving

from agentdeck import WorkflowCtx, workflow
from agentdeck.bindings import Native
from agentdeck.errors import ConfigError
from agentdeck.plugins.host import PluginHost
from agentdeck.settings import Settings
from agentdeck_http import HttpSettings, ServedCall

WriteModule = Callable[[str], str]

FACTORY_MODULE = """\
from agentdeck_http import ServedCall


def tenant(call: ServedCall) -> dict:
    return {"tenant": call.namespace, "plan": call.request.headers.get("x-plan", "free")}
"""


@workflow
async def quote(item: str, ctx: WorkflowCtx[Any]) -> str:
    price = await ctx.step("price", lambda: 10 if ctx.data["plan"] == "pro" else 12)
    return f"{item} for {ctx.data['tenant']}: {price}"


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[WriteModule]:
    """Write a module importable by a fresh name; returns that name."""
    monkeypatch.syspath_prepend(str(tmp_path))
    written: list[str] = []

    def write(source: str) -> str:
        name = f"factories_{uuid.uuid4().hex}"
        (tmp_path / f"{name}.py").write_text(source, encoding="utf-8")
        written.append(name)
        return name

    yield write
    for name in written:
        sys.modules.pop(name, None)


def from_env(**env: str) -> Native:
    return Native.from_settings(
        Settings(env={f"AGENTDECK_HTTP_{k.upper()}": v for k, v in env.items()})
    )


def refusal(**env: str) -> ConfigError:
    with pytest.raises(ConfigError) as refused:
        from_env(**env)
    return refused.value


# =========================================================================== building


def test_the_section_is_registered_by_the_plugin_hook() -> None:
    assert HttpSettings in PluginHost.discover().settings_sections()
    assert HttpSettings.section == "http"
    assert set(HttpSettings.env_vars()) >= {
        "AGENTDECK_HTTP_API_KEYS",
        "AGENTDECK_HTTP_API_KEYS_FILE",
        "AGENTDECK_HTTP_CONTEXT_FACTORY",
        "AGENTDECK_HTTP_PUBLIC_KINDS",
        "AGENTDECK_HTTP_MAX_BODY_BYTES",
        "AGENTDECK_HTTP_ALLOWED_ORIGINS",
        "AGENTDECK_HTTP_PATH",
    }


def test_nothing_configured_builds_the_same_binding_as_native_http() -> None:
    built, plain = Native.from_settings(Settings()), Native.http()

    assert (built.mount_path, built.api_keys, built.context_factory) == ("", None, None)
    assert (built.public_kinds, built.allowed_origins) == (plain.public_kinds, None)
    assert (built.max_body_bytes, built.heartbeat) == (plain.max_body_bytes, plain.heartbeat)
    assert built.console is plain.console is True  # the console is on for local serving


def test_the_console_is_turned_off_by_its_setting_or_option() -> None:
    assert from_env(console="false").console is False
    assert from_env(console="true").console is True
    assert Native.http(console=False).console is False
    with pytest.raises(ConfigError, match="console takes True or False"):
        Native.http(console="no")  # type: ignore[arg-type]
    refused = refusal(console="maybe")
    assert refused.setting == "AGENTDECK_HTTP_CONSOLE"


def test_every_setting_reaches_the_binding() -> None:
    built = from_env(
        api_keys='{"key-a": ["acme", null], "key-b": "globex"}',
        public_kinds="run.*, text.delta",
        max_body_bytes="2048",
        allowed_origins='["https://App.example.com"]',
        path="/api/",
        heartbeat_seconds="2.5",
    )

    assert built.api_keys == {"key-a": ("acme", None), "key-b": ("globex",)}
    assert built.public_kinds("run.completed") and built.public_kinds("text.delta")
    assert not built.public_kinds("step.completed")
    assert built.max_body_bytes == 2048
    assert built.allowed_origins == frozenset({"https://app.example.com"})
    assert (built.mount_path, built.heartbeat) == ("/api", 2.5)


def test_config_yaml_may_hold_the_keys_as_a_mapping_and_the_environment_wins(
    tmp_path: Path,
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        "http:\n  api_keys: {key-yaml: [acme]}\n  public_kinds: [run.*]\n", encoding="utf-8"
    )
    env = {"AGENTDECK_HTTP_PUBLIC_KINDS": '["text.delta"]'}

    built = Native.from_settings(Settings.load(env=env, config_file=config))

    assert built.api_keys == {"key-yaml": ("acme",)}
    assert built.public_kinds("text.delta") and not built.public_kinds("run.started")


def test_keys_are_read_from_a_file(tmp_path: Path) -> None:
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"key-file": ["acme"]}), encoding="utf-8")

    assert from_env(api_keys_file=str(keys)).api_keys == {"key-file": ("acme",)}


def test_arguments_given_in_code_win_over_settings_and_are_not_resolved_from_them() -> None:
    def factory(call: ServedCall) -> str:
        return "from code"

    settings = Settings(
        env={
            "AGENTDECK_HTTP_CONTEXT_FACTORY": "no_such_module:factory",  # never imported
            "AGENTDECK_HTTP_API_KEYS_FILE": "/no/such/keys.json",  # never read
            "AGENTDECK_HTTP_PATH": "/api",
        }
    )

    built = Native.from_settings(settings, context_factory=factory, api_keys={"k": "acme"})

    assert built.context_factory is factory
    assert built.api_keys == {"k": ("acme",)}
    assert built.mount_path == "/api"  # what code left alone still comes from settings


def test_the_context_factory_is_imported_from_its_import_string(module: WriteModule) -> None:
    name = module(FACTORY_MODULE)

    built = from_env(context_factory=f"{name}:tenant")

    assert built.context_factory is sys.modules[name].tenant


# =========================================================================== refusals


@pytest.mark.parametrize(
    ("variable", "value", "says"),
    [
        ("api_keys", "{not json", "is not JSON"),
        ("api_keys", '["key"]', "JSON array, not an object"),
        ("api_keys", "{}", "holds no keys"),
        ("api_keys", '{"key": 5}', "namespaces are a string"),
        ("public_kinds", "run.*,not a kind", "'not a kind' is not an event kind"),
        ("allowed_origins", "app.example.com", "is not an origin"),
        ("path", "api", "must start with '/'"),
        ("max_body_bytes", "0", "greater than 0"),
        ("heartbeat_seconds", "nan", "finite"),
        ("context_factory", "just_a_module", "is not an import string"),
    ],
)
def test_a_bad_value_names_its_variable(variable: str, value: str, says: str) -> None:
    refused = refusal(**{variable: value})

    assert refused.setting == f"AGENTDECK_HTTP_{variable.upper()}"
    assert refused.setting in str(refused)
    assert says in str(refused)


def test_inline_keys_never_appear_in_an_error() -> None:
    refused = refusal(api_keys='{"sk-very-secret": {"not": "namespaces"}}')

    assert "sk-very-secret" not in str(refused)
    assert "sk-very-secret" not in repr(HttpSettings(api_keys='{"sk-very-secret": null}'))


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("{not json", "is not JSON (line 1, column 2)"),
        ('[["sk-in-a-list"]]', "holds a JSON array"),
        ('{"sk-bad-grant": 5}', "namespaces are a string"),
    ],
)
def test_a_key_file_that_is_not_a_key_mapping_is_refused_without_quoting_it(
    tmp_path: Path, content: str, says: str
) -> None:
    keys = tmp_path / "keys.json"
    keys.write_text(content, encoding="utf-8")

    refused = refusal(api_keys_file=str(keys))

    assert refused.setting == "AGENTDECK_HTTP_API_KEYS_FILE"
    assert says in str(refused) and str(keys) in str(refused)
    assert "sk-" not in str(refused)


def test_a_missing_key_file_is_refused_naming_the_variable_and_the_path(tmp_path: Path) -> None:
    refused = refusal(api_keys_file=str(tmp_path / "absent.json"))

    assert refused.setting == "AGENTDECK_HTTP_API_KEYS_FILE"
    assert "no file at" in str(refused) and "absent.json" in str(refused)


def test_keys_inline_and_in_a_file_at_once_are_refused(tmp_path: Path) -> None:
    keys = tmp_path / "keys.json"
    keys.write_text('{"key-file": null}', encoding="utf-8")

    refused = refusal(api_keys='{"key-env": null}', api_keys_file=str(keys))

    assert "AGENTDECK_HTTP_API_KEYS and AGENTDECK_HTTP_API_KEYS_FILE are both set" in str(refused)


@pytest.mark.parametrize(
    ("source", "attribute", "says"),
    [
        (None, "tenant", "no module named"),
        ("raise RuntimeError('boom at import')\n", "tenant", "raised RuntimeError: boom at import"),
        ("import no_such_dependency_here\n", "tenant", "No module named 'no_such_dependency_here'"),
        (FACTORY_MODULE, "missing", "has no attribute 'missing'"),
        ("TENANT = 3\n", "TENANT", "is a int, not a callable"),
        ("def tenant(call, extra):\n    return None\n", "tenant", "cannot be called with one"),
    ],
)
def test_a_context_factory_that_cannot_be_used_fails_at_build_naming_the_variable(
    module: WriteModule, source: str | None, attribute: str, says: str
) -> None:
    name = module(source) if source is not None else f"absent_{uuid.uuid4().hex}"

    refused = refusal(context_factory=f"{name}:{attribute}")

    assert refused.setting == "AGENTDECK_HTTP_CONTEXT_FACTORY"
    assert says in str(refused)


# =========================================================================== served


async def test_a_binding_from_settings_enforces_keys_namespaces_context_and_kinds(
    tmp_path: Path, module: WriteModule
) -> None:
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"key-acme": ["acme"], "key-globex": ["globex"]}), encoding="utf-8")
    settings = Settings(
        env={
            "AGENTDECK_HTTP_API_KEYS_FILE": str(keys),
            "AGENTDECK_HTTP_CONTEXT_FACTORY": f"{module(FACTORY_MODULE)}:tenant",
            "AGENTDECK_HTTP_PUBLIC_KINDS": "run.*",
        }
    )
    acme = {"Authorization": "Bearer key-acme", "x-plan": "pro"}
    body = {"name": "quote", "input": {"item": "tea"}}

    async with serving(make_deck(workflows=[quote]), Native.from_settings(settings)) as served:
        client = served.client
        anonymous = await client.post("/runs", json=body)
        started = await client.post("/runs", json=body, headers=acme)
        run_id = started.json()["id"]
        async with client.stream("GET", f"/runs/{run_id}/events", headers=acme) as response:
            received = [f async for f in frames(response)]
        foreign = await client.get(f"/runs/{run_id}", headers={"X-API-Key": "key-globex"})

    assert anonymous.status_code == 401
    assert started.status_code == 201 and started.json()["namespace"] == "acme"
    assert [f.event for f in received] == ["run.started", "run.completed"]  # no step.completed
    assert received[-1].json["payload"]["output"][0]["data"] == "tea for acme: 10"
    assert foreign.status_code == 404
