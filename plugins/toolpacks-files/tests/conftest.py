"""Fixtures: a root directory with text, binary and large files, and links leading out."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from toolpacks import Tool

from toolpacks_files import FileTools

SECRET = "TOP SECRET outside the root"


@pytest.fixture
def secret() -> str:
    """The text of the file outside the root; no tool result may contain it."""
    return SECRET


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory next to the root holding a secret file."""
    directory = tmp_path / "outside"
    directory.mkdir()
    (directory / "secret.txt").write_text(SECRET + "\n", encoding="utf-8")
    return directory


@pytest.fixture
def root(tmp_path: Path, outside: Path) -> Path:
    """The root directory the tools are confined to."""
    base = tmp_path / "root"
    (base / "docs").mkdir(parents=True)
    (base / "src").mkdir()
    (base / ".git").mkdir()
    (base / "README.md").write_text("# Demo\nHello world\nA Needle in the README\n", "utf-8")
    (base / "docs" / "guide.md").write_text("Guide\nfind the needle here\n", "utf-8")
    (base / "docs" / "api.md").write_text("API\n", "utf-8")
    (base / "src" / "app.py").write_text("def main() -> str:\n    return 'needle'\n", "utf-8")
    (base / ".git" / "config").write_text("needle in git metadata\n", "utf-8")
    (base / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00needle\x00")
    (base / "big.txt").write_text("".join(f"line {i:03d}\n" for i in range(100)), "utf-8")
    (base / "empty.txt").write_bytes(b"")
    try:
        os.symlink(outside / "secret.txt", base / "escape.txt")
        os.symlink(outside, base / "escape_dir", target_is_directory=True)
        os.symlink(base / "docs" / "guide.md", base / "guide_link.md")
    except (OSError, NotImplementedError):  # pragma: no cover - platforms without symlinks
        pytest.skip("symbolic links are not available here")
    return base


@pytest.fixture
def tools(root: Path) -> dict[str, Tool]:
    """The file tools of a ``FileTools`` on ``root`` with a 100-byte read limit, by name."""
    return {t.name: t for t in FileTools(root, max_bytes=100).tools()}
