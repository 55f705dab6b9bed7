"""Tools listed from a pack's manifest (not imported) still declare their credentials."""

from __future__ import annotations

import json

import pytest

from toolpacks import ToolContext, tool
from toolpacks.exceptions import ConfigError
from toolpacks.host.credentials._vault import check_declared
from toolpacks.packs.entrypoints._manifest_tool import ManifestTool, canonical, tool_record


@tool(credentials=["github"])
def gh_token(ctx: ToolContext) -> str:
    """The GitHub token of the call's principal."""
    return ctx.credential("github")


def test_the_manifest_record_keeps_the_credentials() -> None:
    """A placeholder made from the manifest record declares what the real tool declares.

    So a toolset of listed tools is checked against [credentials] and resolves them.
    """
    record = tool_record("gh.gh_token", gh_token)
    assert record["credentials"] == ["github"]
    stored = json.loads(canonical(record))  # as the manifest file holds it
    listed = ManifestTool.from_record(stored, "gh", lambda placeholder: gh_token)
    assert listed.deferred
    assert listed.credentials == ("github",)
    with pytest.raises(ConfigError, match=r"\[credentials\.github\]"):
        check_declared([listed], {})
