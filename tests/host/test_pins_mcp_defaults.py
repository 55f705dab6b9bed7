"""The defaults of an ``[mcp_servers.NAME]`` table (issue 36, turn-3 survivors).

A mounted server gets, unless its table says otherwise: 30 s for starting, listing and each
call; a 16 MiB cap on a message read from it; no approval; no arguments, environment, tags or
working directory of its own. The configuration reference documents these values; a default
changed in the code without the page is a silent change of behaviour for every user.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from toolpacks.host.config._load import load_config

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "configuration.md"


@pytest.mark.parametrize("table", [{"command": "python"}, {"url": "http://127.0.0.1:9/mcp"}])
def test_a_minimal_server_table_gets_the_documented_defaults(table: dict[str, str]) -> None:
    server = load_config({"mcp_servers": {"t": table}}).config.mcp_servers["t"]
    assert server.timeout == 30.0
    assert server.max_message_bytes == 16 * 1024 * 1024
    assert server.require_approval is False
    assert server.args == []
    assert server.env == {}
    assert server.headers == {}
    assert server.tags == []
    assert server.cwd is None


def test_the_reference_page_states_the_same_defaults() -> None:
    text = REFERENCE.read_text(encoding="utf-8")

    def default(key: str) -> str:
        row = re.search(rf"^\| `mcp_servers\.NAME\.{key}` \|[^|]*\| ([^|]*) \|", text, re.M)
        assert row is not None, key
        return row.group(1).strip()

    assert default("timeout") == "`30`"
    assert "16" in default("max_message_bytes")
    assert default("require_approval") == "`false`"
