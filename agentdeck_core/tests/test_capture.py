"""The content-capture policy: what a trace may carry out of the process."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentdeck.errors import ConfigError
from agentdeck.model.content import DataBlock, ImageBlock, ResourceBlock, TextBlock
from agentdeck.observing.capture import (
    Capture,
    ContentPolicy,
    hash_id,
    mask_secrets,
    truncate_utf8,
)

PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB\n"
    "aFDrBz9vFqU4yQ==\n-----END RSA PRIVATE KEY-----"
)


@pytest.mark.parametrize(
    ("secret", "kept"),
    [
        ("sk-live-4f9a8b7c6d5e4f3a2b1c", "sk-"),
        ("sk-proj-AbCdEf0123456789xyz", "sk-"),
        ("pk-lf-1234567890abcdef", "pk-"),
        ("sk_live_51HqLyjWDarjtT1zdp7dc", "sk_live_"),
        ("ghp_16C7e42F292c6912E7710c838347Ae178B4a", "ghp_"),
        ("xoxb-123456789012-abcdefghij", "xoxb-"),
        ("AKIAIOSFODNN7EXAMPLE", "AKIA"),
        ("Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig", "Bearer "),
        ("authorization: basic dXNlcjpwYXNzd29yZA==", "basic "),
    ],
)
def test_known_credential_shapes_are_masked_keeping_their_kind(secret: str, kept: str) -> None:
    masked = mask_secrets(f"use {secret} now")
    assert secret not in masked
    assert f"{kept}[REDACTED]" in masked
    assert masked.startswith("use ") and masked.endswith(" now")


def test_a_pem_private_key_is_masked_whole() -> None:
    masked = mask_secrets(f"key:\n{PEM}\nend")
    assert masked == "key:\n[REDACTED PRIVATE KEY]\nend"


def test_a_pem_key_cut_off_before_its_end_line_is_still_masked() -> None:
    cut = PEM[:90]
    assert mask_secrets(f"key: {cut}") == "key: [REDACTED PRIVATE KEY]"


def test_ordinary_text_is_left_alone() -> None:
    text = "ask-me about the task-list, the skeleton key, and sk-123 (too short); Basic plan"
    assert mask_secrets(text) == text


def test_truncation_marks_the_cut_and_respects_the_cap() -> None:
    text = "é" * 100  # 200 bytes
    cut = truncate_utf8(text, 64)
    assert len(cut.encode()) <= 64
    assert cut.endswith("[truncated 200 bytes]")
    assert cut.startswith("é")
    assert truncate_utf8("short", 64) == "short"


@given(st.text(), st.integers(min_value=40, max_value=300))
def test_truncation_never_exceeds_the_cap_or_splits_a_character(text: str, cap: int) -> None:
    cut = truncate_utf8(text, cap)
    assert len(cut.encode("utf-8")) <= cap
    cut.encode("utf-8")  # well-formed: no lone surrogate or split sequence
    if len(text.encode("utf-8")) <= cap:
        assert cut == text


@given(st.text(max_size=200), st.text(max_size=200), st.integers(min_value=64, max_value=256))
def test_a_secret_never_survives_masking_then_truncation(before: str, after: str, cap: int) -> None:
    secret = "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"
    policy = ContentPolicy(capture="full", max_bytes=cap)
    text = policy.text(f"{before} {secret} {after}")
    assert text is not None
    assert "4f9a8b7c6d5e4f3a" not in text


def test_off_and_metadata_carry_no_content() -> None:
    for capture in ("off", "metadata"):
        policy = ContentPolicy(capture=capture)
        assert policy.text("the prompt") is None
        assert policy.text({"arg": 1}) is None


def test_full_renders_strings_data_and_blocks_as_text() -> None:
    policy = ContentPolicy(capture=Capture.FULL)
    assert policy.text("plain") == "plain"
    assert policy.text({"b": [1, 2], "a": "x"}) == '{"b":[1,2],"a":"x"}'
    blocks = [
        TextBlock(text="hello"),
        DataBlock(data={"n": 1}),
        ResourceBlock(uri="s3://bucket/report.pdf"),
        ImageBlock(media_type="image/png", data_b64="aGk="),
    ]
    assert policy.text(blocks) == (
        'hello\n{"n":1}\n[resource s3://bucket/report.pdf]\n[image image/png]'
    )
    assert policy.text("") is None


def test_full_can_skip_masking_when_asked() -> None:
    policy = ContentPolicy(capture="full", redact_secrets=False)
    assert policy.text("sk-live-4f9a8b7c6d5e4f3a") == "sk-live-4f9a8b7c6d5e4f3a"


def test_names_go_from_metadata_on_and_ids_are_hashed_until_full() -> None:
    off, metadata, full = (ContentPolicy(capture=c) for c in ("off", "metadata", "full"))
    assert off.name("booking", "agent") == "agent"
    assert metadata.name("booking", "agent") == "booking"
    assert metadata.name(None, "agent") == "agent"
    assert off.identifier("sess-1") == metadata.identifier("sess-1") == hash_id("sess-1")
    assert full.identifier("sess-1") == "sess-1"


def test_a_hashed_id_is_stable_short_hex() -> None:
    assert hash_id("sess-alice") == hash_id("sess-alice") != hash_id("sess-bob")
    assert len(hash_id("sess-alice")) == 16
    int(hash_id("sess-alice"), 16)


@pytest.mark.parametrize(
    ("options", "setting"),
    [
        ({"capture": "everything"}, "capture"),
        ({"max_bytes": 10}, "max_bytes"),
        ({"max_bytes": 65 * 1024}, "max_bytes"),
        ({"max_bytes": "8k"}, "max_bytes"),
    ],
)
def test_a_bad_policy_is_a_config_error_naming_the_option(
    options: dict[str, object], setting: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        ContentPolicy(**options)  # type: ignore[arg-type]
    assert refused.value.setting == setting
    if setting == "capture":
        assert refused.value.accepted == ("off", "metadata", "full")
