"""Settings: env var > config.yaml > default, one Settings per deck, errors naming the variable."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import Field
from pydantic_settings import SettingsConfigDict

from agentdeck.errors import ConfigError
from agentdeck.settings import (
    CONFIG_ENV_VAR,
    CoreSettings,
    RuntimeSettings,
    Settings,
    SettingsSection,
    describe_sections,
    field_description,
)


def write_config(directory: Path, text: str, name: str = "config.yaml") -> Path:
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


# --------------------------------------------------------------------------- defaults


def test_with_nothing_configured_all_state_is_one_sqlite_file_of_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    settings = Settings.load(env={})
    monkeypatch.chdir(tmp_path.parent)  # resolved when loaded: a later chdir moves nothing

    default = f"sqlite:///{tmp_path / '.agentdeck' / 'state.db'}"
    assert settings.state_is_default
    assert settings.state_url == settings.events_url == settings.control_url == default
    assert settings.is_default_state(default)
    assert not (tmp_path / ".agentdeck").exists()  # created on first use, not when loaded
    assert settings.runtime.stale_run_after_seconds == 3600.0
    assert settings.runtime.lease_ttl_seconds == 90.0
    assert settings.runtime.sweep_interval_seconds == 30.0


def test_settings_without_load_use_exactly_what_they_are_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AGENTDECK_STATE", "sqlite:///ignored.db")

    assert Settings().state_is_default
    assert Settings(env={"AGENTDECK_STATE": "memory://"}).state_url == "memory://"


def test_a_project_keeps_its_default_state_in_its_own_directory(tmp_path: Path) -> None:
    project = tmp_path / "shop" / ".agentdeck"
    settings = Settings.load(env={})
    for_project = settings.for_project(project)

    assert for_project.state_url == f"sqlite:///{project / 'state.db'}"
    assert for_project.for_project(tmp_path) is for_project  # a named project stays
    assert settings.state_url != for_project.state_url  # the original is not changed
    explicit = Settings.load(env={"AGENTDECK_STATE": "memory://"}).for_project(project)
    assert explicit.state_url == "memory://"  # a configured location wins over the default


# --------------------------------------------------------------------------- layering


def test_env_beats_config_yaml_which_beats_the_default(tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        "runtime:\n  lease_ttl_seconds: 30\n  sweep_interval_seconds: 5\n",
    )

    settings = Settings.load(env={"AGENTDECK_RUNTIME_LEASE_TTL_SECONDS": "10"}, config_file=config)

    assert settings.runtime.lease_ttl_seconds == 10.0  # environment
    assert settings.runtime.sweep_interval_seconds == 5.0  # config.yaml
    assert settings.runtime.stale_run_after_seconds == 3600.0  # default


def test_values_passed_in_code_beat_the_environment() -> None:
    settings = Settings.load(
        env={"AGENTDECK_RUNTIME_LEASE_TTL_SECONDS": "10"},
        overrides={"runtime": {"lease_ttl_seconds": 2}},
    )

    assert settings.runtime.lease_ttl_seconds == 2.0


def test_an_empty_variable_counts_as_unset(tmp_path: Path) -> None:
    config = write_config(tmp_path, "agentdeck:\n  state: sqlite:///from-file.db\n")

    settings = Settings.load(env={"AGENTDECK_STATE": ""}, config_file=config)

    assert settings.state_url == "sqlite:///from-file.db"


@given(
    in_code=st.none() | st.floats(min_value=0.5, max_value=1e6),
    in_env=st.none() | st.floats(min_value=0.5, max_value=1e6),
    in_file=st.none() | st.floats(min_value=0.5, max_value=1e6),
)
def test_the_first_layer_that_has_a_value_wins(
    in_code: float | None, in_env: float | None, in_file: float | None
) -> None:
    settings = Settings(
        env={} if in_env is None else {"AGENTDECK_RUNTIME_LEASE_TTL_SECONDS": repr(in_env)},
        config={} if in_file is None else {"runtime": {"lease_ttl_seconds": in_file}},
        overrides={} if in_code is None else {"runtime": {"lease_ttl_seconds": in_code}},
    )

    expected = next((v for v in (in_code, in_env, in_file) if v is not None), 90.0)
    assert settings.runtime.lease_ttl_seconds == expected


# --------------------------------------------------------------------------- the config file


def test_agentdeck_config_names_the_yaml_file(tmp_path: Path) -> None:
    config = write_config(tmp_path, "runtime:\n  sweep_interval_seconds: 7\n", "deck.yaml")

    settings = Settings.load(env={CONFIG_ENV_VAR: str(config)})

    assert settings.runtime.sweep_interval_seconds == 7.0
    assert settings.config_file == config.resolve()


def test_config_yaml_in_the_working_directory_is_read_when_nothing_names_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(tmp_path, "agentdeck:\n  control: sqlite:///control.db\n")
    monkeypatch.chdir(tmp_path)

    settings = Settings.load(env={})

    assert settings.control_url == "sqlite:///control.db"


def test_without_any_config_file_only_env_and_defaults_apply(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)

    settings = Settings.load(env={})

    assert settings.config_file is None
    assert settings.config == {}


def test_a_missing_named_config_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist") as caught:
        Settings.load(env={CONFIG_ENV_VAR: str(tmp_path / "nope.yaml")})
    assert caught.value.setting == CONFIG_ENV_VAR


def test_a_config_file_that_is_not_a_mapping_is_a_config_error(tmp_path: Path) -> None:
    config = write_config(tmp_path, "- just\n- a list\n")

    with pytest.raises(ConfigError, match="mapping of section names"):
        Settings.load(env={}, config_file=config)


def test_invalid_yaml_is_a_config_error(tmp_path: Path) -> None:
    config = write_config(tmp_path, "runtime: [unclosed\n")

    with pytest.raises(ConfigError, match="not valid YAML"):
        Settings.load(env={}, config_file=config)


def test_an_unknown_key_in_a_section_lists_the_accepted_keys(tmp_path: Path) -> None:
    config = write_config(tmp_path, "runtime:\n  lease_ttl: 30\n")

    with pytest.raises(ConfigError, match=r"'lease_ttl'.*accepted: .*lease_ttl_seconds") as caught:
        Settings.load(env={}, config_file=config)
    assert caught.value.setting == "runtime.lease_ttl"


def test_a_section_that_is_not_a_mapping_is_a_config_error(tmp_path: Path) -> None:
    config = write_config(tmp_path, "runtime: 30\n")

    with pytest.raises(ConfigError, match=r"section 'runtime'.*must be a mapping"):
        Settings.load(env={}, config_file=config)


# --------------------------------------------------------------------------- invalid values


def test_an_invalid_env_value_names_the_variable_the_problem_and_what_is_accepted() -> None:
    with pytest.raises(ConfigError) as caught:
        Settings.load(env={"AGENTDECK_RUNTIME_LEASE_TTL_SECONDS": "-5"})

    error = caught.value
    assert error.setting == "AGENTDECK_RUNTIME_LEASE_TTL_SECONDS"
    assert "AGENTDECK_RUNTIME_LEASE_TTL_SECONDS='-5'" in str(error)
    assert "from the environment" in str(error)
    assert "greater than 0" in str(error)
    assert "accepted: a number greater than 0" in str(error)


def test_a_value_that_is_not_a_number_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="valid number") as caught:
        Settings.load(env={"AGENTDECK_RUNTIME_SWEEP_INTERVAL_SECONDS": "often"})
    assert caught.value.setting == "AGENTDECK_RUNTIME_SWEEP_INTERVAL_SECONDS"


def test_an_invalid_value_in_the_file_names_the_variable_and_the_file(tmp_path: Path) -> None:
    config = write_config(tmp_path, "runtime:\n  stale_run_after_seconds: 0\n")

    with pytest.raises(ConfigError) as caught:
        Settings.load(env={}, config_file=config)

    assert caught.value.setting == "AGENTDECK_RUNTIME_STALE_RUN_AFTER_SECONDS"
    assert "'runtime.stale_run_after_seconds'" in str(caught.value)
    assert str(config.resolve()) in str(caught.value)


def test_a_state_location_that_is_not_a_url_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="scheme-shaped URL") as caught:
        Settings.load(env={"AGENTDECK_STATE": "/var/lib/agentdeck"})
    assert caught.value.setting == "AGENTDECK_STATE"


# --------------------------------------------------------------------------- derivation


def test_agentdeck_state_moves_events_and_control_together() -> None:
    settings = Settings.load(env={"AGENTDECK_STATE": "sqlite:///var/agentdeck.db"})

    assert settings.events_url == "sqlite:///var/agentdeck.db"
    assert settings.control_url == "sqlite:///var/agentdeck.db"
    assert settings.events_setting == "AGENTDECK_STATE"
    assert settings.control_setting == "AGENTDECK_STATE"


def test_an_explicit_events_url_wins_over_the_state_root_for_events_only() -> None:
    settings = Settings.load(
        env={"AGENTDECK_STATE": "sqlite:///state.db", "AGENTDECK_EVENTS": "postgresql://db/x"}
    )

    assert settings.events_url == "postgresql://db/x"
    assert settings.events_setting == "AGENTDECK_EVENTS"
    assert settings.control_url == "sqlite:///state.db"


# --------------------------------------------------------------------------- isolation


def test_two_settings_objects_in_one_process_are_independent() -> None:
    first = Settings.load(env={"AGENTDECK_STATE": "sqlite:///one.db"})
    second = Settings.load(env={"AGENTDECK_STATE": "redis://localhost/0"})

    assert first.state_url == "sqlite:///one.db"
    assert second.state_url == "redis://localhost/0"


def test_settings_keep_the_environment_they_were_loaded_from(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    env = {"AGENTDECK_RUNTIME_LEASE_TTL_SECONDS": "12"}
    settings = Settings.load(env=env)
    env["AGENTDECK_RUNTIME_LEASE_TTL_SECONDS"] = "99"
    monkeypatch.setenv("AGENTDECK_RUNTIME_LEASE_TTL_SECONDS", "77")

    assert settings.runtime.lease_ttl_seconds == 12.0
    assert Settings.load().runtime.lease_ttl_seconds == 77.0


# --------------------------------------------------------------------------- plugin sections


class BellSettings(SettingsSection):
    """A plugin's section."""

    section: ClassVar[str] = "bell"
    model_config = SettingsConfigDict(env_prefix="AGENTDECK_BELL_")

    volume: int = 3
    """How loud."""


def test_any_section_class_loads_from_the_same_layers_and_is_cached(tmp_path: Path) -> None:
    config = write_config(tmp_path, "bell:\n  volume: 5\n")
    settings = Settings.load(env={}, config_file=config)

    assert settings.section(BellSettings).volume == 5
    assert settings.section(BellSettings) is settings.section(BellSettings)


def test_two_sections_with_one_name_cannot_both_be_registered() -> None:
    class OtherBell(SettingsSection):
        section: ClassVar[str] = "bell"
        model_config = SettingsConfigDict(env_prefix="OTHER_BELL_")

    settings = Settings(sections=[BellSettings])

    with pytest.raises(ConfigError, match="section 'bell' is declared by both"):
        settings.register(OtherBell)


def test_a_section_may_not_read_a_variable_another_section_reads() -> None:
    class Shadow(SettingsSection):
        section: ClassVar[str] = "shadow"
        model_config = SettingsConfigDict(env_prefix="AGENTDECK_RUNTIME_")

        lease_ttl_seconds: float = 1.0

    with pytest.raises(ConfigError, match="AGENTDECK_RUNTIME_LEASE_TTL_SECONDS is read by both"):
        Settings(sections=[Shadow])


def test_errors_name_a_core_section_by_its_documented_import_path() -> None:
    class Runtime2(SettingsSection):
        section: ClassVar[str] = "runtime"
        model_config = SettingsConfigDict(env_prefix="RUNTIME2_")

    with pytest.raises(ConfigError, match=r"both agentdeck\.settings\.RuntimeSettings and "):
        Settings(sections=[Runtime2])


# --------------------------------------------------------------------------- reference


def test_describe_sections_gives_a_row_per_variable() -> None:
    docs = {doc.name: doc for doc in describe_sections()}

    runtime = {row.env_var: row for row in docs["RuntimeSettings"].rows}
    lease = runtime["AGENTDECK_RUNTIME_LEASE_TTL_SECONDS"]
    assert (lease.type, lease.default) == ("float", "90.0")
    assert "lease" in lease.description
    core = [row.env_var for row in docs["CoreSettings"].rows]
    assert core == [
        "AGENTDECK_STATE",
        "AGENTDECK_EVENTS",
        "AGENTDECK_CONTROL",
        "AGENTDECK_SESSION",
        "AGENTDECK_EXECUTION",
        CONFIG_ENV_VAR,
    ]
    assert docs["CoreSettings"].section == "agentdeck"


def test_every_core_setting_is_documented() -> None:
    for section in (CoreSettings, RuntimeSettings):
        for name in section.model_fields:
            assert field_description(section, name), f"{section.__name__}.{name} has no docstring"


def test_describe_sections_includes_plugin_sections_it_is_given() -> None:
    settings = Settings(sections=[BellSettings])

    docs = describe_sections(settings.sections())

    assert [doc.section for doc in docs] == ["agentdeck", "runtime", "bell"]
    assert docs[2].rows[0].env_var == "AGENTDECK_BELL_VOLUME"


# --------------------------------------------------------------------------- undecodable values


class ChimeSettings(SettingsSection):
    section: ClassVar[str] = "chime"
    model_config = SettingsConfigDict(env_prefix="CHIME_")

    origins: list[str] = Field(default_factory=list)


def test_a_list_setting_that_is_not_json_in_the_environment_is_a_config_error_naming_it() -> None:
    settings = Settings.load(env={"CHIME_ORIGINS": "https://example.org"}, config_file=None)

    with pytest.raises(ConfigError, match=r"CHIME_ORIGINS could not be read.*JSON") as caught:
        settings.section(ChimeSettings)

    assert caught.value.setting == "CHIME_ORIGINS"


def test_a_list_setting_given_as_json_in_the_environment_is_read() -> None:
    settings = Settings.load(env={"CHIME_ORIGINS": '["https://a.org", "https://b.org"]'})

    assert settings.section(ChimeSettings).origins == ["https://a.org", "https://b.org"]


def test_a_settings_description_is_its_docstring_read_only_when_asked() -> None:
    from pydantic import Field
    from pydantic_settings import SettingsConfigDict

    class Described(SettingsSection):
        section: ClassVar[str] = "described"
        model_config = SettingsConfigDict(env_prefix="DESCRIBED_")

        documented: int = 1
        """How many, said under the field."""

        explicit: str = Field(default="", description="said in Field()")
        bare: bool = False

    class Extended(Described):
        extra: int = 0
        """Added by the subclass."""

    assert Described.model_fields["documented"].description is None  # nothing parsed yet
    assert field_description(Described, "documented") == "How many, said under the field."
    assert field_description(Described, "explicit") == "said in Field()"
    assert field_description(Described, "bare") == ""
    assert field_description(Extended, "documented") == "How many, said under the field."
    assert field_description(Extended, "extra") == "Added by the subclass."
    assert field_description(CoreSettings, "state").startswith("The one location of all run state")
