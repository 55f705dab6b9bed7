"""Hint selection by MCP's defaults, ``require_hints``, and why a tool was left out (issue 35).

MCP says a tool that states no hints may be destructive (``destructiveHint`` defaults to true
unless ``readOnlyHint`` is true) and open-world; ``exclude_hints`` follows that, so it no
longer fails open. ``require_hints`` is the allow form. A tool the selection left out answers
a call with the key that did it; a tool hidden for who is asking (``allowed_agents``) does
not.
"""

from __future__ import annotations

import asyncio
import types
from collections.abc import Callable, Iterator

import pytest

from toolpacks import ConfigError, Host, tool
from toolpacks.host._selection import resolved_hints


@tool
def plain(path: str) -> str:
    """Does something; states no hint."""
    return path


@tool(read_only=True)
def look(path: str) -> str:
    """Read-only."""
    return path


@tool(destructive=False, idempotent=True, open_world=False)
def tidy(path: str) -> str:
    """Not destructive, idempotent, closed-world."""
    return path


@tool(destructive=True)
def wipe(path: str) -> str:
    """Destructive."""
    return path


@tool(read_only=True, allowed_agents=["someone_else"])
def secret(path: str) -> str:
    """Only for another agent."""
    return path


def test_hints_resolve_by_the_mcp_defaults() -> None:
    assert resolved_hints(plain) == {
        "read_only": False,
        "destructive": True,
        "idempotent": False,
        "open_world": True,
    }
    assert resolved_hints(look)["destructive"] is False  # read-only destroys nothing
    assert resolved_hints(tidy) == {
        "read_only": False,
        "destructive": False,
        "idempotent": True,
        "open_world": False,
    }


CONFIG = """
[agents.careful]
exclude_hints = ["destructive"]

[agents.reader]
require_hints = ["read_only"]

[agents.closed]
require_hints = ["idempotent"]
exclude_hints = ["open_world"]

[agents.named]
exclude = ["files.wipe"]
"""


@pytest.fixture
def host(
    tmp_path: pytest.TempPathFactory, pack_of: Callable[..., types.ModuleType]
) -> Iterator[Host]:
    path = tmp_path / "toolpacks.toml"  # type: ignore[operator]
    path.write_text(CONFIG, encoding="utf-8")
    h = Host(str(path), discover=False)
    h.add_pack(pack_of(plain, look, tidy, wipe, secret), "files")
    yield h
    h.close()


def test_exclude_destructive_drops_a_tool_that_states_nothing(host: Host) -> None:
    assert host.toolset("careful").names() == ["look", "tidy"]
    assert host.toolset(exclude_hints=["destructive"]).names() == ["look", "tidy"]


def test_require_hints_keeps_only_tools_that_resolve_to_them(host: Host) -> None:
    assert host.toolset("reader").names() == ["look"]
    assert host.toolset("closed").names() == ["tidy"]


def test_an_unknown_required_hint_is_refused_naming_the_key(
    tmp_path: pytest.TempPathFactory, pack_of: Callable[..., types.ModuleType]
) -> None:
    path = tmp_path / "toolpacks.toml"  # type: ignore[operator]
    path.write_text('[agents.a]\nrequire_hints = ["readonly"]\n', encoding="utf-8")
    with Host(str(path), discover=False) as h:
        h.add_pack(pack_of(plain, look), "files")
        with pytest.raises(ConfigError, match=r"agents\.a: require_hints.*'readonly'"):
            h.toolset("a")


def test_the_toolset_records_which_key_left_each_tool_out(host: Host) -> None:
    assert host.toolset("careful").left_out == {
        "files.plain": "agents.careful.exclude_hints",
        "files.wipe": "agents.careful.exclude_hints",
    }
    assert host.toolset("reader").left_out == {
        "files.plain": "agents.reader.require_hints",
        "files.tidy": "agents.reader.require_hints",
        "files.wipe": "agents.reader.require_hints",
    }
    assert "files.secret" not in host.toolset("named").left_out  # identity: never explained


def test_calling_an_excluded_tool_says_which_key_excluded_it(host: Host) -> None:
    toolset = host.toolset("named")
    for name in ("wipe", "files.wipe"):
        result = asyncio.run(toolset.call(name, {"path": "/"}))
        assert result.is_error
        assert f"{name} is not in this toolset: agents.named.exclude leaves it out" in str(
            result.content
        )


def test_a_tool_hidden_for_another_agent_is_only_unknown(host: Host) -> None:
    result = asyncio.run(host.toolset("named").call("secret", {"path": "/"}))
    assert result.is_error
    text = str(result.content)
    assert text.startswith("Unknown tool 'secret'. Available tools:")
    assert "not in this toolset" not in text
    assert "allowed_agents" not in text
