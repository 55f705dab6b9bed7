"""Credential tests: every test gets its own state, cache and config directories."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """Private state, cache and config directories; no key from the environment."""
    found = {k: tmp_path / k for k in ("state", "cache", "config")}
    monkeypatch.setenv("TOOLPACKS_STATE_DIR", str(found["state"]))
    monkeypatch.setenv("TOOLPACKS_CACHE_DIR", str(found["cache"]))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(found["config"]))
    monkeypatch.setenv("TOOLPACKS_TRUST_FILE", str(found["config"] / "trusted.json"))
    monkeypatch.delenv("TOOLPACKS_CREDENTIALS_KEY", raising=False)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return found


@pytest.fixture
def plaintext_in() -> object:
    """``plaintext_in(dirs, secret)``: files under ``dirs`` whose bytes contain ``secret``."""
    return _plaintext_in


def _plaintext_in(directories: list[Path], secret: str) -> list[Path]:
    needle = secret.encode()
    return [
        p
        for d in directories
        if d.exists()
        for p in d.rglob("*")
        if p.is_file() and needle in p.read_bytes()
    ]
