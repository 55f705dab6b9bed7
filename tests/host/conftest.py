"""Fixtures for host tests: in-process packs, fake installed distributions, isolation."""

from __future__ import annotations

import importlib
import sys
import textwrap
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from toolpacks import Host, Toolset, hookimpl, tool

_counter = iter(range(1_000_000))


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run every test in an empty directory with no TOOLPACKS_* variables leaking in."""
    for var in ("TOOLPACKS_DISABLE", "TOOLPACKS_PACKS", "TOOLPACKS_NO_CACHE"):
        monkeypatch.delenv(var, raising=False)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("TOOLPACKS_TRUST_FILE", str(tmp_path / "trusted.json"))
    monkeypatch.setenv("TOOLPACKS_CACHE_DIR", str(tmp_path / "cache"))


def _pack_of(*items: Any, **hooks: Callable[..., Any]) -> types.ModuleType:
    """A pack module registering ``items`` and implementing ``hooks`` (by hook name)."""
    module = types.ModuleType(f"inproc_pack_{next(_counter)}")

    def register_tools(register: Any) -> None:
        for item in items:
            register(item)

    module.register_tools = hookimpl(register_tools)  # type: ignore[attr-defined]
    for name, fn in hooks.items():
        setattr(module, name, hookimpl(fn))
    return module


@pytest.fixture
def pack_of() -> Callable[..., types.ModuleType]:
    """Build an in-process pack: ``pack_of(tool1, fn2, before_invoke=hook)``."""
    return _pack_of


@tool(tags=["read"])
def search(query: str) -> str:
    """Search the web."""
    return f"web:{query}"


@tool(tags=["read", "io"])
def fetch(url: str) -> str:
    """Fetch a page."""
    return f"page:{url}"


@tool(tags=["write", "destructive"])
def delete(path: str) -> str:
    """Delete a file."""
    return f"deleted:{path}"


@tool(name="search", tags=["read"])
def search_docs(query: str) -> str:
    """Search the documentation."""
    return f"docs:{query}"


@pytest.fixture
def packs() -> dict[str, types.ModuleType]:
    """Two in-process packs: ``web`` (search, fetch) and ``fs`` (delete)."""
    return {"web": _pack_of(search, fetch), "fs": _pack_of(delete)}


@pytest.fixture
def host(packs: dict[str, types.ModuleType]) -> Iterator[Host]:
    """A host with the ``packs``: ``web`` (search, fetch) and ``fs`` (delete)."""
    h = Host({}, discover=False)
    for name, pack in packs.items():
        h.add_pack(pack, name)
    yield h
    h.close()


@pytest.fixture
def toolset(host: Host) -> Toolset:
    """The default toolset of ``host``: every tool of ``web`` and ``fs``."""
    return host.toolset()


class FakeSite:
    """A directory standing in for site-packages: modules and ``*.dist-info`` entries."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.root = root
        self.modules: list[str] = []
        root.mkdir(parents=True, exist_ok=True)
        monkeypatch.syspath_prepend(str(root))

    def module(self, source: str, name: str | None = None) -> str:
        """Write a module (dedented ``source``) and return its unique name."""
        name = name or f"fakepack_{next(_counter)}"
        (self.root / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
        importlib.invalidate_caches()
        self.modules.append(name)
        return name

    def dist(self, dist: str, version: str, **entry_points: str) -> Path:
        """Install a distribution ``dist`` declaring ``pack name = module`` entry points."""
        info = self.root / f"{dist.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n", encoding="utf-8"
        )
        lines = ["[toolpacks]", *(f"{k} = {v}" for k, v in entry_points.items())]
        (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        return info

    def pack(self, name: str, source: str, *, dist: str | None = None, version: str = "1.0") -> str:
        """A module and a distribution declaring it as pack ``name``; returns the module."""
        module = self.module(source)
        self.dist(dist or f"toolpacks-{name}", version, **{name: module})
        return module

    def host(self, config: Any = None, **options: Any) -> Host:
        """A host that discovers only this site's packs."""
        return Host(config if config is not None else {}, path=[str(self.root)], **options)


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeSite]:
    """A fake site-packages directory; its modules are forgotten after the test."""
    fake = FakeSite(tmp_path / "site", monkeypatch)
    yield fake
    for name in fake.modules:
        sys.modules.pop(name, None)


PING_PACK = """
    from toolpacks import hookimpl, tool

    @tool(tags=["net"])
    def ping(host: str = "localhost") -> str:
        '''Answer pong.'''
        return "pong " + host

    @hookimpl
    def register_tools(register):
        register(ping)
"""
"""A minimal pack module with one tool, ``ping``."""


@pytest.fixture
def ping_source() -> str:
    """The source of a minimal pack module (one tool: ``ping``)."""
    return PING_PACK
