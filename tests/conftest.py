"""Fixtures shared by every test directory: running coroutines, in-process packs, fake sites."""

from __future__ import annotations

import asyncio
import importlib
import sys
import textwrap
import types
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest

from toolpacks import Host, hookimpl


def pytest_configure(config: pytest.Config) -> None:
    """Keep the suite's state out of the user's: a state directory of the session's own.

    Servers the tests start (and their workers) inherit it, so key files such as the HTTP
    server's ``connect.key`` are never written under ``~/.local/state``. A test that needs
    its own sets ``TOOLPACKS_STATE_DIR`` itself.
    """
    import os
    import tempfile

    if "TOOLPACKS_STATE_DIR" not in os.environ:
        _made.append(tempfile.mkdtemp(prefix="toolpacks-test-state-"))
        os.environ["TOOLPACKS_STATE_DIR"] = _made[-1]


def pytest_unconfigure(config: pytest.Config) -> None:
    """Remove the session's state directory (when this session made it)."""
    import shutil

    for made in _made:
        shutil.rmtree(made, ignore_errors=True)


_made: list[str] = []
_counter = iter(range(1_000_000))


@pytest.fixture
def run() -> Callable[[Coroutine[Any, Any, Any]], Any]:
    """Run a coroutine to completion in a fresh event loop: ``run(tool.invoke({...}))``."""
    return asyncio.run


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty working directory, and no TOOLPACKS_* variables, trust file or cache leaking in.

    Host and pack tests use it for every test (an autouse fixture in their conftest).
    """
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
