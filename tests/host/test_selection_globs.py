"""Per-agent selection: allow and deny globs, hint selection, and tags no tool carries.

The same rules hold through ``Host.toolset(...)`` keywords, the configuration file and the
``toolpacks toolset`` command.
"""

from __future__ import annotations

import json
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from toolpacks import Host, tool
from toolpacks.cli._main import main
from toolpacks.exceptions import ConfigError


@tool(tags=["read"], read_only=True)
def read_text(path: str) -> str:
    """Read a text file."""
    return path


@tool(tags=["read"], read_only=True, idempotent=True)
def read_bytes(path: str) -> str:
    """Read a file's bytes."""
    return path


@tool(tags=["write"], destructive=True)
def delete(path: str) -> str:
    """Delete a file."""
    return path


@tool(tags=["write"])
def write(path: str, text: str) -> str:
    """Write a file."""
    return path


@tool(tags=["time"], read_only=True, open_world=True)
def now() -> str:
    """Tell the time."""
    return "12:00"


@pytest.fixture
def host(pack_of: Callable[..., types.ModuleType]) -> Iterator[Host]:
    """``files`` (read_text, read_bytes, delete, write) and ``clock`` (now)."""
    h = Host({}, discover=False)
    h.add_pack(pack_of(read_text, read_bytes, delete, write), "files")
    h.add_pack(pack_of(now), "clock")
    yield h
    h.close()


def _config_host(
    tmp_path: Path, pack_of: Callable[..., types.ModuleType], agent: str
) -> Iterator[Host]:
    path = tmp_path / "toolpacks.toml"
    path.write_text(agent, encoding="utf-8")
    h = Host(config=path, discover=False)
    h.add_pack(pack_of(read_text, read_bytes, delete, write), "files")
    h.add_pack(pack_of(now), "clock")
    yield h
    h.close()


# -- allow and deny globs ------------------------------------------------------------------------


def test_allow_globs_keep_only_matching_tools_by_qualified_or_exposed_name(host: Host) -> None:
    """``tools=`` keeps the tools any entry matches, on the qualified or the exposed name."""
    assert host.toolset(tools=["files.read_*", "clock.now"]).names() == [
        "now",
        "read_bytes",
        "read_text",
    ]
    assert host.toolset(tools=["read_*"]).names() == ["read_bytes", "read_text"]
    assert host.toolset(tools=["*"]).names() == host.toolset().names()


def test_deny_globs_drop_matching_tools(host: Host) -> None:
    """``exclude=`` takes globs; exact qualified names keep working."""
    assert host.toolset(exclude=["files.*"]).names() == ["now"]
    assert host.toolset(exclude=["*_bytes", "files.delete"]).names() == [
        "now",
        "read_text",
        "write",
    ]
    assert host.toolset(tools=["files.*"], exclude=["files.write"]).names() == [
        "delete",
        "read_bytes",
        "read_text",
    ]


def test_renamed_tools_match_by_their_new_name(host: Host) -> None:
    """A rename is the exposed name a glob sees, beside the qualified name."""
    ts = host.toolset(rename={"clock.now": "time_now"}, tools=["time_*", "files.delete"])
    assert ts.names() == ["delete", "time_now"]


@pytest.mark.parametrize("key", ["tools", "exclude"])
def test_a_glob_matching_nothing_is_a_config_error_with_a_suggestion(
    host: Host, key: str
) -> None:
    """A pattern that matches no tool is refused at build time, with a did-you-mean."""
    with pytest.raises(ConfigError, match=rf"{key} names unknown tool\(s\) fles\.\*") as info:
        host.toolset(**{key: ["fles.*"]})
    assert "did you mean" in str(info.value)
    with pytest.raises(ConfigError, match=r"'files\.reed_text' → did you mean 'files\.read_text'"):
        host.toolset(**{key: ["files.reed_text"]})


def test_patterns_of_packs_outside_the_toolset_are_accepted(host: Host) -> None:
    """As for exact names: a pattern under a pack not in this toolset matches nothing, quietly."""
    assert host.toolset(packs=["clock"], exclude=["files.*"]).names() == ["now"]


# -- hints ---------------------------------------------------------------------------------------


def test_exclude_hints_drops_tools_whose_hints_resolve_to_it(host: Host) -> None:
    """``exclude_hints`` follows MCP's defaults (issue 35).

    ``write`` states no hint, so it may be destructive and open-world, and is dropped with
    the tools that declare them.
    """
    assert host.toolset(exclude_hints=["destructive"]).names() == [
        "now",
        "read_bytes",
        "read_text",
    ]
    assert host.toolset(exclude_hints=["open_world", "idempotent"]).names() == []


def test_an_unknown_hint_is_a_config_error(host: Host) -> None:
    """A hint name that is not one of the four is refused, naming the known ones."""
    with pytest.raises(ConfigError, match=r"destrutive.*did you mean 'destructive'") as info:
        host.toolset(exclude_hints=["destrutive"])
    assert "read_only" in str(info.value)


# -- tags no tool carries ------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["include_tags", "exclude_tags"])
def test_a_tag_no_tool_carries_is_a_config_error(host: Host, key: str) -> None:
    """``exclude_tags = ["wrte"]`` used to keep the write tools silently; now it is refused."""
    with pytest.raises(ConfigError, match=rf"{key}.*'wrte'.*did you mean 'write'"):
        host.toolset(**{key: ["wrte"]})
    assert host.toolset(exclude_tags=["write"]).names() == ["now", "read_bytes", "read_text"]


def test_tags_are_checked_against_the_selected_packs_only(host: Host) -> None:
    """A tag that only a pack outside the toolset carries matches nothing: refused."""
    with pytest.raises(ConfigError, match=r"exclude_tags.*'write'"):
        host.toolset(packs=["clock"], exclude_tags=["write"])


# -- through the configuration file and the CLI --------------------------------------------------


AGENT = """
[agents.reader]
packs = ["files", "clock"]
tools = ["files.read_*", "clock.now"]
exclude = ["*_bytes"]

[agents.careful]
exclude_hints = ["destructive"]
exclude_tags = ["time"]
"""


def test_the_configuration_file_selects_the_same_way(
    tmp_path: Path, pack_of: Callable[..., types.ModuleType]
) -> None:
    """``tools``, ``exclude`` globs and ``exclude_hints`` in ``[agents.NAME]``."""
    for h in _config_host(tmp_path, pack_of, AGENT):
        assert h.toolset("reader").names() == ["now", "read_text"]
        assert h.toolset("careful").names() == ["read_bytes", "read_text"]
        # keywords still override the table
        assert h.toolset("reader", tools=["clock.*"]).names() == ["now"]


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('exclude = ["files.wirte*"]', r"agents\.a: exclude names unknown tool\(s\) files\.wir"),
        ('tools = ["clok.*"]', r"agents\.a: tools names unknown tool\(s\) clok\.\*"),
        ('exclude_hints = ["readonly"]', r"agents\.a: exclude_hints.*'readonly'"),
        ('include_tags = ["raed"]', r"agents\.a: include_tags.*'raed'.*did you mean 'read'"),
    ],
)
def test_configuration_typos_are_config_errors(
    tmp_path: Path, pack_of: Callable[..., types.ModuleType], table: str, message: str
) -> None:
    """Every selection key's typo names the file, the agent and the key."""
    for h in _config_host(tmp_path, pack_of, f"[agents.a]\n{table}\n"):
        with pytest.raises(ConfigError, match=message):
            h.toolset("a")


def test_the_toolset_command_shows_the_selection(
    site: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``toolpacks toolset AGENT --json`` lists what the globs and hints leave."""
    monkeypatch.setenv("TOOLPACKS_PACKS", "files")
    site.pack(
        "files",
        """
        from toolpacks import hookimpl, tool

        @tool(tags=["read"], read_only=True)
        def read_text(path: str) -> str:
            '''Read a text file.'''
            return path

        @tool(tags=["write"], destructive=True)
        def delete(path: str) -> str:
            '''Delete a file.'''
            return path

        @tool(tags=["write"])
        def write(path: str) -> str:
            '''Write a file.'''
            return path

        @hookimpl
        def register_tools(register):
            for t in (read_text, delete, write):
                register(t)
        """,
    )
    Path("toolpacks.toml").write_text(
        '[agents.a]\ntools = ["files.*"]\nexclude_hints = ["destructive"]\n'
        '[agents.b]\nexclude = ["files.wirte"]\n'
        '[agents.c]\nexclude_tags = ["wrte"]\n',
        encoding="utf-8",
    )
    assert main(["toolset", "a", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [t["qualified"] for t in out["tools"]] == ["files.read_text"]
    assert out["left_out"] == {
        "files.delete": "agents.a.exclude_hints",
        "files.write": "agents.a.exclude_hints",
    }
    assert main(["toolset", "b"]) != 0
    err = capsys.readouterr().err
    assert "did you mean 'files.write'" in err
    assert main(["toolset", "c"]) != 0
    assert "did you mean 'write'" in capsys.readouterr().err
