"""Fixtures for command-line tests: an isolated directory and a fake site-packages."""

from __future__ import annotations

import importlib
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

_counter = iter(range(1_000_000))


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run in an empty directory; only packs the test installs are allowed to load."""
    for var in ("TOOLPACKS_DISABLE", "TOOLPACKS_NO_CACHE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("TOOLPACKS_PACKS", "")  # tests allow their own packs
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("TOOLPACKS_TRUST_FILE", str(tmp_path / "trusted.json"))
    monkeypatch.setenv("TOOLPACKS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)


class Site:
    """A directory on ``sys.path`` holding pack modules and ``*.dist-info`` metadata."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.root = root
        self.monkeypatch = monkeypatch
        self.modules: list[str] = []
        self.allowed: list[str] = []
        root.mkdir()
        monkeypatch.syspath_prepend(str(root))

    def pack(
        self,
        name: str,
        source: str,
        *,
        dist: str | None = None,
        version: str = "1.0",
        module: str | None = None,
    ) -> str:
        """Install pack ``name`` (module ``source``) from distribution ``dist``; allow it."""
        module = module or f"clipack_{next(_counter)}"
        (self.root / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
        importlib.invalidate_caches()
        sys.modules.pop(module, None)
        self.modules.append(module)
        dist = dist or f"toolpacks-{name}"
        info = self.root / f"{dist.replace('-', '_')}-{version}.dist-info"
        info.mkdir(exist_ok=True)
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n", encoding="utf-8"
        )
        entry = info / "entry_points.txt"
        lines = (
            entry.read_text(encoding="utf-8").splitlines() if entry.exists() else ["[toolpacks]"]
        )
        entry.write_text("\n".join([*lines, f"{name} = {module}"]) + "\n", encoding="utf-8")
        self.allowed.append(name)
        self.monkeypatch.setenv("TOOLPACKS_PACKS", ",".join(self.allowed))
        return module


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Site]:
    """A fake site-packages on ``sys.path``; its modules are forgotten afterwards."""
    fake = Site(tmp_path / "site", monkeypatch)
    yield fake
    for name in fake.modules:
        sys.modules.pop(name, None)


CLOCK = """
    import builtins
    builtins.CLI_PACK_IMPORTED = True

    from toolpacks import hookimpl, tool, ToolError

    @tool(tags=["time", "read"])
    def now(zone: str = "UTC") -> str:
        '''Tell the time in a zone.

        Args:
            zone: An IANA time-zone name.
        '''
        if zone == "Mars/Olympus":
            raise ToolError("no such zone")
        return "12:00 " + zone

    @hookimpl
    def register_tools(register):
        register(now)
"""
"""A small pack: ``now(zone)`` answers "12:00 <zone>" (a ToolError for Mars)."""


@pytest.fixture
def clock_source() -> Iterator[str]:
    """The clock pack's source; forgets its import marker afterwards."""
    yield CLOCK
    import builtins

    if hasattr(builtins, "CLI_PACK_IMPORTED"):
        del builtins.CLI_PACK_IMPORTED
