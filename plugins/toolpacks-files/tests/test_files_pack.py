"""The pack's ``register_tools`` hook and how it reads ``[packs.files]``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import toolpacks_files
from toolpacks_files import FileTools


class FakeRegister:
    """Records what a pack registers; carries the pack's settings like the host's callback."""

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        self.config: Mapping[str, Any] = dict(config or {})
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


def test_register_tools_defaults_to_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without settings the root is the working directory and the limit 64 KiB."""
    monkeypatch.chdir(tmp_path)
    register = FakeRegister()
    toolpacks_files.register_tools(register)
    [(item, _)] = register.items
    assert item.root == tmp_path.resolve()
    assert item.max_bytes == 65_536


def test_alias_table_is_accepted(root: Path) -> None:
    """The host's 'pack' key of an alias table is not mistaken for a setting."""
    register = FakeRegister({"pack": "files", "root": str(root)})
    toolpacks_files.register_tools(register)
    assert register.items[0][0].root == root.resolve()


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"rot": "."}, "unknown setting"),
        ({"root": 3}, "root must be a path"),
        ({"root": "/nonexistent/toolpacks-files"}, "does not exist"),
        ({"max_bytes": "big"}, "max_bytes must be a positive integer"),
    ],
)
def test_bad_settings_fail_registration(config: dict[str, Any], message: str) -> None:
    """A bad [packs.files] table fails loudly, so the host reports the pack as failed."""
    with pytest.raises(ValueError, match=message):
        toolpacks_files.register_tools(FakeRegister(config))
