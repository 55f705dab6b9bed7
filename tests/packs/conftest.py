"""Fixtures for pack tests: isolation, and real virtual environments (uv, once per session)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]


def _uv() -> list[str]:
    beside = Path(sys.executable).parent / "uv"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("uv")
    if found:
        return [found]
    return [sys.executable, "-m", "uv"]


class Venv:
    """A real virtual environment with toolpacks installed, and ways to use it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.python = root / "bin" / "python"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLPACKS_")}
        self.env["TOOLPACKS_CACHE_DIR"] = str(root / "cache")
        self.env.pop("VIRTUAL_ENV", None)
        self.env.pop("PYTHONPATH", None)

    def uv(self, *args: str) -> None:
        """Run ``uv pip ARGS`` against this environment."""
        subprocess.run(
            [*_uv(), "pip", *args, "--python", str(self.python), "--quiet"],
            check=True,
            env=self.env,
            timeout=600,
        )

    def run(
        self, *args: str, cwd: Path | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """Run a program of the environment (``toolpacks``, ``python``...)."""
        program = str(self.root / "bin" / args[0])
        return subprocess.run(
            [program, *args[1:]],
            capture_output=True,
            text=True,
            env=self.env,
            cwd=cwd,
            check=check,
            timeout=300,
        )

    def toolpacks_json(self, *args: str, cwd: Path | None = None) -> Any:
        """Run ``toolpacks ARGS --json`` and parse its output."""
        done = self.run("toolpacks", *args, "--json", cwd=cwd)
        return json.loads(done.stdout)


@pytest.fixture(scope="session")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    """One fresh virtual environment per session with toolpacks installed from this checkout."""
    root = tmp_path_factory.mktemp("venv") / "env"
    subprocess.run(
        [*_uv(), "venv", str(root), "--python", sys.executable, "--quiet"], check=True, timeout=300
    )
    env = Venv(root)
    env.uv("install", "-e", str(REPO))
    return env


def write_pack(
    base: Path,
    dist: str,
    pack: str,
    module: str,
    body: str,
    version: str = "1.0.0",
) -> Path:
    """Write a pack distribution, as a separate repository would hold it."""
    root = base / dist
    src = root / "src" / module
    src.mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        textwrap.dedent(
            f"""\
            [build-system]
            requires = ["hatchling"]
            build-backend = "hatchling.build"

            [project]
            name = "{dist}"
            version = "{version}"
            dependencies = ["toolpacks"]

            [project.entry-points.toolpacks]
            {pack} = "{module}"

            [tool.hatch.build.targets.wheel]
            packages = ["src/{module}"]
            """
        ),
        encoding="utf-8",
    )
    (src / "__init__.py").write_text(textwrap.dedent(body), encoding="utf-8")
    return root


@pytest.fixture
def pack_writer(tmp_path: Path) -> Callable[..., Path]:
    """Write a pack distribution into a temporary 'repository' directory."""

    def write(dist: str, pack: str, module: str, body: str, version: str = "1.0.0") -> Path:
        return write_pack(tmp_path / "repos", dist, pack, module, body, version)

    return write


@pytest.fixture(autouse=True)
def _isolated(isolated: None) -> None:
    """Every pack test runs isolated (see the root conftest's ``isolated``)."""
