"""The pack's ``register_tools`` hook and how it reads ``[packs.files]``."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from toolpacks import Host

import toolpacks_files
from toolpacks_files import FileTools


class FakeRegister:
    """Records what a pack registers; carries its settings, name and config directory."""

    def __init__(
        self,
        config: Mapping[str, Any] | None = None,
        *,
        pack: str = "files",
        config_dir: Path | None = None,
    ) -> None:
        self.config: Mapping[str, Any] = dict(config or {})
        self.pack = pack
        self.config_dir = config_dir
        self.items: list[tuple[Any, dict[str, Any]]] = []

    def __call__(self, item: Any, /, **options: Any) -> None:
        self.items.append((item, options))


def test_register_tools_registers_one_configured_toolbox(root: Path) -> None:
    """One FileTools on the configured root, exposing the four expected tools."""
    register = FakeRegister({"root": str(root), "max_bytes": 10})
    toolpacks_files.register_tools(register)
    [(item, options)] = register.items
    assert isinstance(item, FileTools)
    assert options == {}
    assert item.root == root.resolve()
    assert item.max_bytes == 10
    assert [t.name for t in item.tools()] == ["list_dir", "read_file", "find_files", "search_text"]


def test_register_tools_without_root_fails_and_says_what_to_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No root, no tools: the working directory is never a default."""
    monkeypatch.chdir(tmp_path)
    register = FakeRegister()
    with pytest.raises(ValueError, match="needs a root") as info:
        toolpacks_files.register_tools(register)
    assert str(info.value) == (
        'the files pack needs a root: set [packs.files] root = "/path/to/dir" in toolpacks.toml'
    )
    assert register.items == []


def test_missing_root_message_names_the_alias_table() -> None:
    """An alias's error names its own table, the one to edit."""
    register = FakeRegister({"pack": "files"}, pack="notes")
    with pytest.raises(ValueError, match=r"set \[packs\.notes\] root = "):
        toolpacks_files.register_tools(register)


def test_max_bytes_defaults_to_64_kib(root: Path) -> None:
    """Only the root is required; read_file returns at most 64 KiB by default."""
    register = FakeRegister({"root": str(root)})
    toolpacks_files.register_tools(register)
    assert register.items[0][0].max_bytes == 65_536


def test_relative_root_is_relative_to_the_configuration_directory(
    tmp_path: Path, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A relative root is resolved against the configuration file's directory, not the cwd."""
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "docs").mkdir(parents=True)
    monkeypatch.chdir(elsewhere)
    register = FakeRegister({"root": "docs"}, config_dir=root)
    toolpacks_files.register_tools(register)
    assert register.items[0][0].root == (root / "docs").resolve()
    dot = FakeRegister({"root": "."}, config_dir=root)
    toolpacks_files.register_tools(dot)
    assert dot.items[0][0].root == root.resolve()


def test_relative_root_without_a_configuration_directory_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With settings from a mapping (no file), a relative root would mean the cwd: refused."""
    (tmp_path / "docs").mkdir()
    monkeypatch.chdir(tmp_path)
    for relative in (".", "docs", "./docs"):
        register = FakeRegister({"root": relative})
        with pytest.raises(ValueError, match="relative path") as info:
            toolpacks_files.register_tools(register)
        assert "absolute path" in str(info.value)
        assert register.items == []


def test_home_relative_root_is_expanded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """'~/...' does not depend on the working directory, so it needs no configuration file."""
    (tmp_path / "notes").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path))
    register = FakeRegister({"root": "~/notes"})
    toolpacks_files.register_tools(register)
    assert register.items[0][0].root == (tmp_path / "notes").resolve()


def test_absolute_root_ignores_the_configuration_directory(root: Path, tmp_path: Path) -> None:
    """An absolute root is used as it is."""
    register = FakeRegister({"root": str(root)}, config_dir=tmp_path / "config")
    toolpacks_files.register_tools(register)
    assert register.items[0][0].root == root.resolve()


def test_file_tools_has_no_default_root() -> None:
    """Building the toolbox in code also needs a root."""
    with pytest.raises(TypeError):
        FileTools()  # type: ignore[call-arg]


def test_alias_table_is_accepted(root: Path) -> None:
    """The host's 'pack' key of an alias table is not mistaken for a setting."""
    register = FakeRegister({"pack": "files", "root": str(root)})
    toolpacks_files.register_tools(register)
    assert register.items[0][0].root == root.resolve()


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"rot": "."}, "unknown setting"),
        ({"rot": "/"}, r"unknown setting\(s\) rot in \[packs\.files\]"),
        ({"root": 3}, "root must be the path of a directory"),
        ({"root": ""}, "root must be the path of a directory"),
        ({"root": "  "}, "root must be the path of a directory"),
        ({"root": "/nonexistent/toolpacks-files"}, "does not exist"),
        ({"root": "/", "max_bytes": "big"}, "max_bytes must be a positive integer"),
    ],
)
def test_bad_settings_fail_registration(config: dict[str, Any], message: str) -> None:
    """A bad [packs.files] table fails loudly, so the host reports the pack as failed."""
    with pytest.raises(ValueError, match=message):
        toolpacks_files.register_tools(FakeRegister(config))


def test_host_resolves_relative_root_against_the_config_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through a real Host: root = "docs" is the docs/ beside toolpacks.toml, from any cwd."""
    project = tmp_path / "project"
    (project / "docs").mkdir(parents=True)
    (project / "docs" / "guide.md").write_text("the guide\n", encoding="utf-8")
    config = project / "toolpacks.toml"
    config.write_text(
        '[packs.files]\nroot = "docs"\n\n[agents.reader]\npacks = ["files"]\n', encoding="utf-8"
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "guide.md").write_text("the wrong file\n", encoding="utf-8")
    monkeypatch.chdir(elsewhere)
    host = Host(config, discover=False)
    host.add_pack(toolpacks_files, "files")
    result = asyncio.run(host.toolset("reader").call("read_file", {"path": "guide.md"}))
    assert not result.is_error, result.content
    assert result.content == "the guide\n"


def test_host_with_a_mapping_refuses_relative_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through a real Host with settings given as a mapping: no file, so no relative root."""
    monkeypatch.chdir(tmp_path)
    host = Host({"packs": {"files": {"root": "."}}}, discover=False)
    host.add_pack(toolpacks_files, "files")
    loaded = host.load("files")
    assert loaded.info.status == "failed"
    assert "relative path" in (loaded.info.error or "")
