"""Skills from ``*/SKILL.md`` and MCP servers from ``.mcp.json``: parsing and refusals."""

import json
from pathlib import Path
from typing import Any

import pytest

from agentdeck.authoring.mcp import MCP, MCPServerSpec
from agentdeck.authoring.skills import Skill, Skills
from agentdeck.errors import ConfigError, NotFoundError


def write_skill(root: Path, directory: str, text: str) -> Path:
    file = root / directory / "SKILL.md"
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(text, encoding="utf-8")
    return file


PDF_SKILL = """---
name: pdf-forms
description: Fill in PDF forms field by field.
---
# PDF forms

Read the form first.
"""


# --------------------------------------------------------------------------- skills


def test_a_skill_is_parsed_from_its_front_matter_and_body(tmp_path: Path) -> None:
    file = write_skill(tmp_path, "pdf", PDF_SKILL)

    skill = Skill.from_file(file)

    assert skill.name == "pdf-forms"
    assert skill.description == "Fill in PDF forms field by field."
    assert skill.path == file
    assert skill.read() == "# PDF forms\n\nRead the form first."


def test_the_name_defaults_to_the_directory(tmp_path: Path) -> None:
    file = write_skill(tmp_path, "invoices", "---\ndescription: Read invoices.\n---\nBody.\n")

    assert Skill.from_file(file).name == "invoices"


def test_a_skill_without_a_description_is_refused_naming_the_file(tmp_path: Path) -> None:
    file = write_skill(tmp_path, "vague", "---\nname: vague\n---\nBody.\n")

    with pytest.raises(ConfigError, match=r"vague.*description"):
        Skill.from_file(file)


def test_unclosed_or_invalid_front_matter_is_refused(tmp_path: Path) -> None:
    unclosed = write_skill(tmp_path, "a", "---\ndescription: x\nBody.\n")
    invalid = write_skill(tmp_path, "b", "---\ndescription: [unclosed\n---\nBody.\n")

    with pytest.raises(ConfigError, match="never closed"):
        Skill.from_file(unclosed)
    with pytest.raises(ConfigError, match="not valid YAML"):
        Skill.from_file(invalid)


def test_skills_discovers_every_skill_md_one_level_down(tmp_path: Path) -> None:
    write_skill(tmp_path, "pdf", PDF_SKILL)
    write_skill(tmp_path, "invoices", "---\ndescription: Read invoices.\n---\nBody.\n")
    (tmp_path / "notes").mkdir()  # a directory without SKILL.md is not a skill

    skills = Skills(tmp_path)

    assert sorted(skills) == ["invoices", "pdf-forms"]
    assert skills["invoices"].description == "Read invoices."


def test_skills_reads_several_paths(tmp_path: Path) -> None:
    write_skill(tmp_path / "one", "pdf", PDF_SKILL)
    write_skill(tmp_path / "two", "csv", "---\ndescription: CSV.\n---\n")

    assert set(Skills(tmp_path / "one", tmp_path / "two")) == {"pdf-forms", "csv"}


def test_two_skills_of_one_name_are_refused_naming_both_files(tmp_path: Path) -> None:
    first = write_skill(tmp_path / "one", "pdf", PDF_SKILL)
    second = write_skill(tmp_path / "two", "forms", PDF_SKILL)

    with pytest.raises(ConfigError) as refused:
        Skills(tmp_path / "one", tmp_path / "two")

    assert str(first) in str(refused.value)
    assert str(second) in str(refused.value)


def test_a_missing_skills_path_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        Skills(tmp_path / "nowhere")


def test_an_unknown_skill_lookup_lists_what_exists(tmp_path: Path) -> None:
    write_skill(tmp_path, "pdf", PDF_SKILL)

    with pytest.raises(NotFoundError, match="pdf-forms") as missing:
        Skills(tmp_path)["nope"]

    assert missing.value.available == ("pdf-forms",)


def test_skills_coerces_what_the_deck_accepts(tmp_path: Path) -> None:
    write_skill(tmp_path, "pdf", PDF_SKILL)
    skills = Skills(tmp_path)

    assert Skills.coerce(skills) is skills
    assert list(Skills.coerce(str(tmp_path))) == ["pdf-forms"]
    assert list(Skills.coerce([tmp_path])) == ["pdf-forms"]
    assert len(Skills.coerce(None)) == 0


# --------------------------------------------------------------------------- MCP


def write_mcp(tmp_path: Path, data: Any) -> Path:
    file = tmp_path / ".mcp.json"
    file.write_text(json.dumps(data), encoding="utf-8")
    return file


def test_the_claude_style_shape_is_parsed(tmp_path: Path) -> None:
    file = write_mcp(
        tmp_path,
        {
            "mcpServers": {
                "files": {
                    "command": "npx",
                    "args": ["-y", "@modelcontextprotocol/server-filesystem", "."],
                    "env": {"LOG": "1"},
                },
                "search": {"type": "http", "url": "https://example.test/mcp"},
                "events": {
                    "type": "sse",
                    "url": "http://localhost:9000/sse",
                    "headers": {"A": "b"},
                },
            }
        },
    )

    mcp = MCP.from_file(file)

    assert list(mcp) == ["files", "search", "events"]
    assert mcp["files"] == MCPServerSpec(
        name="files",
        transport="stdio",
        command="npx",
        args=("-y", "@modelcontextprotocol/server-filesystem", "."),
        env={"LOG": "1"},
    )
    assert mcp["search"].transport == "streamable-http"
    assert mcp["events"].transport == "sse"
    assert dict(mcp["events"].headers) == {"A": "b"}
    assert mcp.source == file


def test_a_url_without_a_type_is_streamable_http() -> None:
    mcp = MCP.from_dict({"mcpServers": {"remote": {"url": "https://example.test/mcp"}}})

    assert mcp["remote"].transport == "streamable-http"


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"args": ["x"]}, "command"),
        ({"command": 42}, "command"),
        ({"command": "run", "args": "--flag"}, "args"),
        ({"command": "run", "env": {"KEY": 1}}, "env.KEY"),
        ({"type": "carrier-pigeon", "url": "https://x"}, "type"),
        ({"type": "sse"}, "url"),
        ({"type": "http", "url": "ftp://x"}, "url"),
        ({"command": "run", "url": "https://x"}, "url"),
    ],
)
def test_a_bad_shape_names_the_server_and_field(config: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError) as refused:
        MCP.from_dict({"mcpServers": {"broken": config}})

    assert "MCP server 'broken'" in str(refused.value)
    assert f"field '{field}'" in str(refused.value)


def test_a_file_without_mcp_servers_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="mcpServers"):
        MCP.from_file(write_mcp(tmp_path, {"servers_typo": {}}))


def test_a_missing_or_invalid_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        MCP.from_file(tmp_path / "absent.json")
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(ConfigError, match="cannot be read"):
        MCP.from_file(broken)


def test_variables_are_kept_until_the_engine_expands_them() -> None:
    spec = MCP.from_dict(
        {
            "mcpServers": {
                "api": {
                    "url": "${API_URL:-https://default.test}/mcp",
                    "headers": {"Authorization": "Bearer ${API_TOKEN}"},
                }
            }
        }
    )["api"]

    assert spec.headers["Authorization"] == "Bearer ${API_TOKEN}"
    expanded = spec.expanded({"API_TOKEN": "t0k"})
    assert expanded.url == "https://default.test/mcp"
    assert expanded.headers["Authorization"] == "Bearer t0k"


def test_an_unset_variable_without_default_names_server_field_and_variable() -> None:
    spec = MCPServerSpec(name="api", transport="stdio", command="run", env={"TOKEN": "${TOKEN}"})

    with pytest.raises(ConfigError, match=r"'api'.*'env.TOKEN'.*\$\{TOKEN\}"):
        spec.expanded({})


def test_mcp_coerces_what_the_deck_accepts(tmp_path: Path) -> None:
    file = write_mcp(tmp_path, {"mcpServers": {"files": {"command": "ls"}}})
    mcp = MCP.from_file(file)

    assert MCP.coerce(mcp) is mcp
    assert list(MCP.coerce(str(file))) == ["files"]
    assert len(MCP.coerce(None)) == 0
    with pytest.raises(ConfigError):
        MCP.coerce(42)


def test_an_unknown_server_lookup_lists_what_exists() -> None:
    mcp = MCP([MCPServerSpec(name="files", transport="stdio", command="ls")])

    with pytest.raises(NotFoundError) as missing:
        mcp["search"]

    assert missing.value.available == ("files",)
