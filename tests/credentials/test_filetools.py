"""A TOOL.md tool declares credentials in its front matter, as @tool does."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolpacks import Host, Principal, ToolContext
from toolpacks.exceptions import ConfigError
from toolpacks.host.credentials._store import SqliteCredentialStore

TOOL_MD = """---
description: Say which token the call received.
credentials: [github]
---
"""
HANDLER = """
def handle(arguments, context):
    return "token=" + context.credential("github")
"""


def files_config(tmp_path: Path, credentials: dict[str, object]) -> dict[str, object]:
    """A configuration with one TOOL.md tool under ``tools/whoami``."""
    tool = tmp_path / "tools" / "whoami"
    tool.mkdir(parents=True)
    (tool / "TOOL.md").write_text(TOOL_MD, encoding="utf-8")
    (tool / "handler.py").write_text(HANDLER, encoding="utf-8")
    return {"files": {"dirs": [str(tmp_path / "tools")]}, "credentials": credentials}


def test_front_matter_credentials_per_principal(tmp_path: Path) -> None:
    """Each principal's call of a file tool gets its own value; one without is told how."""
    store = SqliteCredentialStore()
    store.set("github", "alice", "ghp_alice_file")
    store.set("github", "bob", "ghp_bob_file")
    config = files_config(tmp_path, {"github": {"kind": "secret"}})
    toolset = Host(config, discover=False).toolset()
    assert toolset.get("whoami").credentials == ("github",)
    for who in ("alice", "bob"):
        result = toolset.call_sync("whoami", {}, ToolContext(principal=Principal(who)))
        assert result.value == f"token=ghp_{who}_file"
    carol = toolset.call_sync("whoami", {}, ToolContext(principal=Principal("carol")))
    assert carol.is_error
    assert "credentials set github --subject carol" in carol.error.message


def test_front_matter_credential_undefined(tmp_path: Path) -> None:
    """A file tool declaring a credential no [credentials] table defines fails the toolset."""
    config = files_config(tmp_path, {})
    with pytest.raises(ConfigError, match=r"\[credentials\.github\]"):
        Host(config, discover=False).toolset()
