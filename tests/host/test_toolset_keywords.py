"""``require_hints`` and ``tool_scopes`` are ``Host.toolset`` keywords, as their keys (issue 35).

Every other selection key of ``[agents.NAME]`` (``exclude_hints``, ``tools``, ``exclude``, ...)
can be given in code and overrides the agent's table; these two could only be set in the file.
"""

from __future__ import annotations

import asyncio
import types
from collections.abc import Callable, Iterator

import pytest

from toolpacks import ConfigError, Host, Principal, ToolContext, tool


@tool(read_only=True)
def look(path: str) -> str:
    """Look at a file."""
    return path


@tool(destructive=False, idempotent=True)
def tidy(path: str) -> str:
    """Tidy a file."""
    return path


@tool(destructive=True)
def wipe(path: str) -> str:
    """Wipe a file."""
    return path


CONFIG = {
    "agents": {
        "reader": {"require_hints": ["read_only"], "tool_scopes": {"files.look": ["files.read"]}},
    }
}
READER = Principal("r", scopes={"files.read"})
WIPER = Principal("w", scopes={"files.wipe"})


@pytest.fixture
def host(pack_of: Callable[..., types.ModuleType]) -> Iterator[Host]:
    h = Host(CONFIG, discover=False)
    h.add_pack(pack_of(look, tidy, wipe), "files")
    yield h
    h.close()


def test_require_hints_keyword_keeps_only_tools_that_resolve_to_them(host: Host) -> None:
    """``require_hints=`` in code selects as the key does, and overrides the agent's."""
    assert host.toolset().names() == ["look", "tidy", "wipe"]
    assert host.toolset(require_hints=["read_only"]).names() == ["look"]
    assert host.toolset(require_hints="idempotent").names() == ["tidy"]  # one name, not letters
    assert host.toolset("reader").names() == ["look"]
    both = host.toolset("reader", require_hints=["idempotent"], tool_scopes={})
    assert both.names() == ["tidy"]  # the agent's tool_scopes name files.look, now left out
    assert host.toolset("reader", require_hints=[]).names() == ["look", "tidy", "wipe"]


def test_require_hints_keyword_records_why_a_tool_was_left_out(host: Host) -> None:
    """A tool the keyword left out answers a call with the key that did it."""
    toolset = host.toolset(require_hints=["read_only"])
    assert set(toolset.left_out) == {"files.tidy", "files.wipe"}
    result = toolset.call_sync("wipe", {"path": "p"})
    assert result.error is not None
    assert result.error.kind == "not_found"
    assert "require_hints" in result.error.message


def test_an_unknown_hint_in_the_require_hints_keyword_is_refused_naming_it(host: Host) -> None:
    """A misspelt hint is a ``ConfigError`` naming the keyword, not an empty toolset."""
    with pytest.raises(ConfigError, match=r"Host\.toolset\(\): require_hints.*'readonly'"):
        host.toolset(require_hints=["readonly"])


def test_tool_scopes_keyword_adds_scopes_and_refuses_on_call_and_list(host: Host) -> None:
    """``tool_scopes=`` hides and refuses as ``[agents.NAME.tool_scopes]`` does."""
    toolset = host.toolset(tool_scopes={"files.wipe": ["files.wipe"], "tidy": ["files.tidy"]})
    assert toolset.scope_table.needs("wipe") == {"files.wipe"}
    assert toolset.for_principal(READER).names() == ["look"]
    assert toolset.for_principal(WIPER).names() == ["look", "wipe"]
    refused = asyncio.run(toolset.call("wipe", {"path": "p"}, ToolContext(principal=READER)))
    assert refused.error is not None
    assert "missing scope files.wipe" in refused.error.message
    allowed = asyncio.run(toolset.for_principal(WIPER).call("wipe", {"path": "p"}))
    assert allowed.error is None
    assert allowed.value == "p"


def test_tool_scopes_keyword_replaces_the_agents_table(host: Host) -> None:
    """The keyword replaces the agent's table (``{}`` clears it), as other keywords do."""
    assert host.toolset("reader").scope_table.needs("look") == {"files.read"}
    replaced = host.toolset("reader", tool_scopes={"look": ["files.audit"]})
    assert replaced.scope_table.needs("look") == {"files.audit"}
    assert host.toolset("reader", tool_scopes={}).scope_table.needs("look") == frozenset()


@pytest.mark.parametrize(
    ("table", "match"),
    [
        ({"files.wpie": ["files.wipe"]}, r"tool_scopes .*files\.wpie.*did you mean 'files\.wipe'"),
        ({"wipe": []}, r"tool_scopes 'wipe'"),
        ({"wipe": ["two words"]}, r"tool_scopes 'wipe'"),
    ],
)
def test_a_bad_tool_scopes_keyword_is_a_config_error(
    host: Host, table: dict[str, list[str]], match: str
) -> None:
    """A glob matching no tool, or a bad scope, is refused with the keyword's name."""
    with pytest.raises(ConfigError, match=match):
        host.toolset(tool_scopes=table)
