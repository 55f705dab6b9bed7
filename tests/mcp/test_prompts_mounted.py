"""A mounted MCP server's prompts and resources pass through its pack.

The upstream server is ``toolpacks serve --agent memo`` (a real stdio MCP server offering
prompts and resources); a second host mounts it as ``[mcp_servers.up]`` and serves the
agent using it over stdio, so the official client sees the upstream prompts and resources,
gets them with arguments, completes, reads templates, and gets the upstream server's refusal.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import mcp_types
import pytest

from .offer_pack import write_offer
from .test_prompts import _error_of, over_stdio
from .test_rich_stdio import run


@pytest.fixture(scope="module")
def mounted_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    upstream = tmp_path_factory.mktemp("upstream")
    config = write_offer(upstream)
    directory = tmp_path_factory.mktemp("mounting")
    command = [sys.executable, "-m", "toolpacks", "serve", "--agent", "memo", "--config"]
    args = ", ".join(f'"{a}"' for a in [*command[1:], str(config)])
    (directory / "toolpacks.toml").write_text(
        f"""
[mcp_servers.up]
command = "{sys.executable}"
args = [{args}]
env = {{ PYTHONPATH = "{upstream}" }}

[agents.front]
packs = ["up"]
""",
        encoding="utf-8",
    )
    return directory


def test_mounted_prompts_and_resources_pass_through(mounted_dir: Path) -> None:
    """Listed, got, completed and read through the mounting host; refusals keep their text."""

    async def main() -> dict[str, Any]:
        async with over_stdio(mounted_dir, "front", "legacy") as client:
            return {
                "prompts": await client.list_prompts(),
                "got": await client.get_prompt("trip", {"city": "oslo"}),
                "done": await client.complete(
                    mcp_types.PromptReference(type="ref/prompt", name="trip"),
                    {"name": "city", "value": "pa"},
                ),
                "resources": await client.list_resources(),
                "templates": await client.list_resource_templates(),
                "filled": await client.read_resource("memo://users/bo/notes/fri"),
                "blob": await client.read_resource("memo://blob"),
                "missing": await _error_of(client.get_prompt("trip", {})),
                "unknown": await _error_of(client.read_resource("memo://nowhere")),
                "broken": await _error_of(client.get_prompt("broken_prompt", {})),
            }

    out = run(main())
    trip = next(p for p in out["prompts"].prompts if p.name == "trip")
    assert [(a.name, a.required) for a in trip.arguments or []] == [
        ("city", True),
        ("days", False),
    ]
    first = out["got"].messages[0].content
    assert isinstance(first, mcp_types.TextContent)
    assert first.text == "Plan 3 days in oslo."
    assert isinstance(out["got"].messages[2].content, mcp_types.ImageContent)
    assert out["done"].completion.values == ["paris", "park", "party"]
    assert "memo://static" in {str(r.uri) for r in out["resources"].resources}
    assert [t.uri_template for t in out["templates"].resource_templates] == [
        "memo://users/{user}/notes/{day}"
    ]
    assert out["filled"].contents[0].text == "notes of bo on fri"
    assert isinstance(out["blob"].contents[0], mcp_types.BlobResourceContents)
    # The mounting host checks the arguments it was shown before asking upstream.
    assert "missing required argument(s) city" in out["missing"].message
    assert out["unknown"].code == -32002
    # A refusal of the upstream server reaches the client with its message, no secret.
    broken = out["broken"].message
    assert "the MCP server 'up' refused: prompt 'broken_prompt' failed (RuntimeError)" in broken
    assert "secret-prompt-detail" not in broken
