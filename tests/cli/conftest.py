"""Fixtures for command-line tests: an isolated directory and a fake site-packages."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


# -- the real command line in a subprocess -------------------------------------------------------


class Cli:
    """Runs ``python -m toolpacks`` in a fresh interpreter with an isolated environment.

    HOME, XDG_CONFIG_HOME, XDG_CACHE_HOME, TOOLPACKS_TRUST_FILE and TOOLPACKS_CACHE_DIR point
    into the test's directory; only the packs of ``site`` may load (``TOOLPACKS_PACKS``),
    found through ``PYTHONPATH``.
    """

    def __init__(self, tmp_path: Path, site: Site) -> None:
        self.tmp = tmp_path
        self.site = site
        self.home = tmp_path / "home"
        self.home.mkdir()

    def env(self, **extra: str) -> dict[str, str]:
        """The environment a command runs in."""
        import os

        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("TOOLPACKS_", "XDG_")) and k not in ("PYTHONPATH", "HOME")
        }
        env.update(
            HOME=str(self.home),
            XDG_CONFIG_HOME=str(self.home / ".config"),
            XDG_CACHE_HOME=str(self.home / ".cache"),
            TOOLPACKS_TRUST_FILE=str(self.tmp / "trusted.json"),
            TOOLPACKS_CACHE_DIR=str(self.tmp / "cache"),
            TOOLPACKS_PACKS=",".join(self.site.allowed),
            PYTHONPATH=str(self.site.root),
            PYTHONDONTWRITEBYTECODE="1",
        )
        env.update(extra)
        return env

    def run(
        self,
        *argv: str,
        cwd: Path,
        python: tuple[str, ...] = ("-m", "toolpacks"),
        stdin: Any = None,
        input: str | None = None,
        env: dict[str, str] | None = None,
        timeout: float = 120,
    ) -> subprocess.CompletedProcess[str]:
        """Run ``toolpacks *argv`` in ``cwd``; stdout and stderr are captured as text."""
        return subprocess.run(
            [sys.executable, *python, *argv],
            cwd=cwd,
            env=env or self.env(),
            stdin=stdin if input is None else None,
            input=input,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    @staticmethod
    def error_line(stderr: str) -> str:
        """The one ``toolpacks: error: ...`` line of ``stderr`` (fails unless exactly one).

        No traceback, and no ``toolpacks: ValueError: ...`` line.
        """
        lines = [line for line in stderr.splitlines() if line.startswith("toolpacks: error: ")]
        assert len(lines) == 1, stderr
        assert "Traceback" not in stderr, stderr
        assert not re.search(r"^toolpacks: \w*(Error|Exception):", stderr, re.M), stderr
        return lines[0]


class Place:
    """A working directory of one of three kinds, and the arguments that select its config.

    ``none``: no configuration at all. ``implicit``: a ``toolpacks.toml`` in the directory,
    not trusted. ``explicit``: the configuration elsewhere, passed with ``--config``.
    """

    def __init__(self, kind: str, tmp_path: Path) -> None:
        self.kind = kind
        self.cwd = tmp_path / f"cwd-{kind}"
        self.cwd.mkdir()
        self.config_path: Path | None = None

    def configure(self, text: str) -> None:
        """Write the configuration (nothing for ``none``)."""
        if self.kind == "implicit":
            self.config_path = self.cwd / "toolpacks.toml"
        elif self.kind == "explicit":
            self.config_path = self.cwd.parent / f"config-{next(_counter)}.toml"
        else:
            return
        self.config_path.write_text(textwrap.dedent(text), encoding="utf-8")

    def argv(self, *argv: str) -> tuple[str, ...]:
        """``argv`` preceded by ``--config PATH`` for an explicit configuration."""
        if self.kind == "explicit" and self.config_path is not None:
            return ("--config", str(self.config_path), *argv)
        return argv


PLACES = ("none", "implicit", "explicit")


@pytest.fixture
def cli(tmp_path: Path, site: Site) -> Cli:
    """The command line, run in a subprocess (see ``Cli``)."""
    return Cli(tmp_path, site)


CONFIGURED = ("implicit", "explicit")
"""The places that hold a configuration: tests marked ``configured`` run in these only."""


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run ``place`` tests in every place, or, marked ``configured``, where a file is."""
    if "place" in metafunc.fixturenames:
        configured = metafunc.definition.get_closest_marker("configured") is not None
        metafunc.parametrize("place", CONFIGURED if configured else PLACES, indirect=True)


@pytest.fixture
def place(request: pytest.FixtureRequest, tmp_path: Path) -> Place:
    """Each kind of working directory in turn (see ``Place``)."""
    return Place(str(request.param), tmp_path)
