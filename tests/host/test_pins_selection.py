"""Selection entries match exposed and renamed names too, and case-sensitively (issue 36).

``exclude`` is documented to match a tool's qualified name *and* the name the model sees
(its rename, else its tool name), with globs that are case-sensitive. An implementation that
matched only qualified names would let ``exclude = ["delete"]`` or a renamed name silently
stop removing the tool while the did-you-mean check still passed; one that folded case would
drop ``Read`` for ``read``. These tests pin both, through keywords and a configuration file.
"""

from __future__ import annotations

import asyncio
import types
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from toolpacks import Host, tool
from toolpacks.exceptions import ConfigError


@tool
def read(path: str) -> str:
    """Read a file."""
    return path


@tool(name="Read")
def read_upper(path: str) -> str:
    """Read a file, loudly."""
    return path.upper()


@tool
def delete(path: str) -> str:
    """Delete a file."""
    return path


@pytest.fixture
def host(pack_of: Callable[..., types.ModuleType]) -> Iterator[Host]:
    """``files``: read, Read, delete."""
    h = Host({}, discover=False)
    h.add_pack(pack_of(read, read_upper, delete), "files")
    yield h
    h.close()


def test_exclude_by_exposed_name_removes_the_tool(host: Host) -> None:
    """An exact exposed name in ``exclude`` removes the tool (not only its qualified name)."""
    assert host.toolset(exclude=["delete"]).names() == ["Read", "read"]


def test_exclude_by_renamed_name_removes_the_tool(host: Host) -> None:
    """A renamed tool is excluded by its new name, exactly and by glob."""
    renamed = {"files.delete": "remove_file"}
    assert host.toolset(rename=renamed, exclude=["remove_file"]).names() == ["Read", "read"]
    assert host.toolset(rename=renamed, exclude=["remove_*"]).names() == ["Read", "read"]


def test_an_excluded_exposed_name_cannot_be_called(host: Host) -> None:
    """What ``exclude`` removed by exposed name is not callable either."""
    ts = host.toolset(exclude=["delete"])
    result = asyncio.run(ts.call("delete", {"path": "x"}))
    assert result.is_error
    assert "delete" not in ts.names()


def test_globs_are_case_sensitive(host: Host) -> None:
    """``R*`` matches ``Read`` and not ``read``; ``files.read`` is not ``files.Read``."""
    assert host.toolset(exclude=["R*"]).names() == ["delete", "read"]
    assert host.toolset(exclude=["files.read"]).names() == ["Read", "delete"]
    assert host.toolset(tools=["r*"]).names() == ["read"]


def test_a_name_in_the_wrong_case_matches_nothing_and_is_refused(host: Host) -> None:
    """A case-folded match would silently drop a tool; instead it is a typo, refused."""
    with pytest.raises(ConfigError, match=r"DELETE"):
        host.toolset(exclude=["DELETE"])
    with pytest.raises(ConfigError, match=r"FILES\.\*"):
        host.toolset(tools=["FILES.*"])


def test_the_configuration_file_excludes_by_exposed_name(
    tmp_path: Path, pack_of: Callable[..., types.ModuleType]
) -> None:
    """The same through ``[agents.NAME] exclude`` and ``rename`` in a real TOML file."""
    path = tmp_path / "toolpacks.toml"
    path.write_text(
        '[agents.a]\npacks = ["files"]\nexclude = ["remove_file", "R*"]\n'
        'rename = { "files.delete" = "remove_file" }\n',
        encoding="utf-8",
    )
    h = Host(config=path, discover=False)
    h.add_pack(pack_of(read, read_upper, delete), "files")
    try:
        assert h.toolset("a").names() == ["read"]
    finally:
        h.close()
