"""Over MCP, calling a tool the agent's selection left out names the key that did (issue 35).

The SDK-free stdio server answers an unknown tool with JSON-RPC -32602; its message says which
key of ``[agents.NAME]`` left the tool out, as ``Toolset.call`` does in process.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError

from .conftest import BlockingClient, serve_params, write_demo

CONFIG = """
[agents.careful]
packs = ["demo"]
exclude = ["demo.wipe"]
"""


@pytest.fixture(scope="module")
def careful(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BlockingClient]:
    directory = tmp_path_factory.mktemp("excluded")
    config = write_demo(directory)
    config.write_text(CONFIG)
    client = BlockingClient(serve_params(directory, config, "careful"), directory / "err.log")
    client.connect()
    try:
        yield client
    finally:
        client.close()


def test_an_excluded_tool_answers_with_the_key_that_excluded_it(careful: BlockingClient) -> None:
    assert "wipe" not in careful.list_tools()
    with pytest.raises(MCPError) as info:
        careful.call("wipe", {"path": "/"})
    message = str(info.value)
    assert "wipe is not in this toolset: agents.careful.exclude leaves it out" in message
    assert str(Path.cwd()) not in message  # the configuration's path is not told


def test_a_tool_no_pack_has_is_only_unknown(careful: BlockingClient) -> None:
    with pytest.raises(MCPError) as info:
        careful.call("nothing_like_it", {})
    assert "not in this toolset" not in str(info.value)
