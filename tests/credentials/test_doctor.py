"""``toolpacks doctor`` reports ``[credentials]``: kinds and counts, never a value.

Through the real CLI entry point (``toolpacks.cli._main.main``) on a real toolpacks.toml,
against the real encrypted store in the test's own state directory.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

import pytest

from toolpacks.cli._main import main
from toolpacks.host.credentials._store import KEY_ENV, SqliteCredentialStore

CONFIG = """
[credentials.github]
kind = "secret"
description = "a GitHub token"

[credentials.hub]
kind = "oauth2"
authorize_url = "https://auth.example.com/authorize"
token_url = "https://auth.example.com/token"
client_id = "toolpacks"
client_secret = { env = "HUB_CLIENT_SECRET_UNSET" }
"""
VALUES = {
    ("github", "alice"): "ghp_doctor_alice_value_1",
    ("github", "bob"): "ghp_doctor_bob_value_22",
    ("hub", "alice"): '{"access_token": "at-doctor-secret-3"}',
    ("slack", "carol"): "xoxb-doctor-carol-value-4",
}


def doctor(tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    """Run ``toolpacks doctor`` on the test's configuration; the status and what it printed."""
    config = tmp_path / "toolpacks.toml"
    if not config.exists():
        config.write_text(CONFIG)
    status = main(["doctor", "--config", str(config), *extra])
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return status, out.out + out.err


def findings(output: str) -> dict[tuple[str, str], list[str]]:
    """``doctor --json``'s findings by (level, topic)."""
    found: dict[tuple[str, str], list[str]] = {}
    for f in json.loads(output[output.index("{") :])["findings"]:
        found.setdefault((f["level"], f["topic"]), []).append(f["message"])
    return found


def stored() -> SqliteCredentialStore:
    """The store with every value of ``VALUES``."""
    store = SqliteCredentialStore()
    for (name, subject), value in VALUES.items():
        store.set(name, subject, value)
    return store


def test_doctor_counts_subjects_and_never_shows_a_value(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Kinds and counts per credential, an unset client secret flagged, an orphan named."""
    monkeypatch.delenv("HUB_CLIENT_SECRET_UNSET", raising=False)
    stored()
    _, output = doctor(tmp_path, capsys, "--json")
    found = findings(output)
    assert found[("info", "credential github")] == ["kind secret; 2 subjects have a value"]
    assert found[("info", "credential hub")] == ["kind oauth2; 1 subject has a value"]
    (unset,) = found[("warning", "credential hub")]
    assert "client_secret" in unset
    assert "'HUB_CLIENT_SECRET_UNSET'" in unset
    (orphan,) = found[("warning", "credential slack")]
    assert "no [credentials.slack] table" in orphan
    assert any("opens with its key" in m for m in found[("info", "credentials")])
    _, text = doctor(tmp_path, capsys)  # the text report too
    assert "info: credential github: kind secret; 2 subjects have a value" in text
    for value in VALUES.values():
        assert value not in output
        assert value not in text
    assert "at-doctor" not in output + text


def test_a_set_client_secret_is_not_flagged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the variable set, no warning; its value is not printed either."""
    monkeypatch.setenv("HUB_CLIENT_SECRET_UNSET", "client-secret-doctor-value-5")
    stored()
    _, output = doctor(tmp_path, capsys, "--json")
    assert ("warning", "credential hub") not in findings(output)
    assert "client-secret-doctor-value-5" not in output


def test_a_wrong_key_is_an_error_line_not_a_crash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store made with another key: an error naming the key variable; nothing is counted."""
    monkeypatch.setenv(KEY_ENV, base64.urlsafe_b64encode(os.urandom(32)).decode())
    stored()
    monkeypatch.setenv(KEY_ENV, base64.urlsafe_b64encode(os.urandom(32)).decode())
    status, output = doctor(tmp_path, capsys, "--json")
    assert status == 1
    found = findings(output)
    (error,) = found[("error", "credentials")]
    assert "the key does not open the credential store" in error
    assert KEY_ENV in error
    assert found[("info", "credential github")] == [
        "kind secret; stored values not counted (see above)"
    ]
    status, text = doctor(tmp_path, capsys)
    assert status == 1
    assert "error: credentials: the credential store cannot be used" in text
    for value in VALUES.values():
        assert value not in output + text


def test_doctor_makes_no_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], dirs: dict[str, Path]
) -> None:
    """No store yet: doctor says so and leaves none behind (nor a key file)."""
    _, output = doctor(tmp_path, capsys, "--json")
    found = findings(output)
    assert any("no value stored yet" in m for m in found[("info", "credentials")])
    assert found[("info", "credential github")] == ["kind secret; 0 subjects have a value"]
    assert not list(dirs["state"].rglob("credentials.*"))
    assert not [t for level, t in found if level == "error" and t.startswith("credential")]


def test_no_credentials_configured_no_findings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without [credentials], doctor says nothing about them."""
    (tmp_path / "toolpacks.toml").write_text("[settings]\nexpose_errors = false\n")
    _, output = doctor(tmp_path, capsys, "--json")
    topics: Any = {topic for _, topic in findings(output)}
    assert not any(str(t).startswith("credential") for t in topics)


def test_credential_tables_hold_names_not_secrets() -> None:
    """Kinds, descriptions, client ids and header references are shown; client secrets not."""
    from toolpacks.core._secrets import secret_values

    raw = {
        "credentials": {
            "github": {"kind": "secret", "description": "a GitHub token"},
            "hub": {"kind": "oauth2", "client_id": "toolpacks", "client_secret": "cs-literal-6"},
        },
        "mcp_servers": {
            "hub": {
                "url": "https://example.com/mcp",
                "headers": {
                    "Authorization": {"credential": "github", "format": "Bearer {}"},
                    "X-Api-Key": "literal-key-value-7",
                },
            }
        },
    }
    found = secret_values(raw)
    assert "cs-literal-6" in found
    assert "literal-key-value-7" in found
    for shown in ("secret", "oauth2", "a GitHub token", "toolpacks", "github", "Bearer {}"):
        assert shown not in found
    # what `config show` prints keeps the reference (it was dropped) and masks the literal
    from toolpacks.core._secrets import redact

    headers = redact(raw)["mcp_servers"]["hub"]["headers"]
    assert headers["Authorization"] == {"credential": "github", "format": "Bearer {}"}
    assert headers["X-Api-Key"] != "literal-key-value-7"
