"""Every command that needs an optional extra says which, in a real venv without it (issue 35).

One virtual environment for the module, made with uv, with toolpacks installed from this
checkout without any extra (no MCP SDK, uvicorn, starlette, prometheus_client, uv or
framework). ``serve --http`` used to die there with "unexpected ModuleNotFoundError: No module
named 'prometheus_client'"; each command now stops with the missing module and the
``pip install 'toolpacks[EXTRA]'`` that installs it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from tests.packs.conftest import REPO, _uv


class Bare:
    """A venv with toolpacks and no extras, and a working directory with a configuration."""

    def __init__(self, root: Path, work: Path) -> None:
        self.python = root / "bin" / "python"
        self.toolpacks = root / "bin" / "toolpacks"
        self.work = work
        # No uv on PATH either: only the system's programs.
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("TOOLPACKS_", "PY"))}
        self.env.pop("VIRTUAL_ENV", None)
        self.env["PATH"] = "/usr/bin:/bin"
        self.env["TOOLPACKS_CACHE_DIR"] = str(root / "cache")

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.toolpacks), "--config", "toolpacks.toml", *args],
            capture_output=True,
            text=True,
            env=self.env,
            cwd=self.work,
            stdin=subprocess.DEVNULL,
            check=False,
            timeout=120,
        )

    def python_code(self, code: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.python), "-c", textwrap.dedent(code)],
            capture_output=True,
            text=True,
            env=self.env,
            cwd=self.work,
            check=False,
            timeout=120,
        )


@pytest.fixture(scope="module")
def bare(tmp_path_factory: pytest.TempPathFactory) -> Bare:
    root = tmp_path_factory.mktemp("bare") / "env"
    uv = _uv()
    python = str(root / "bin" / "python")
    subprocess.run([*uv, "venv", str(root), "--python", sys.executable, "--quiet"], check=True)
    install = [*uv, "pip", "install", "-e", str(REPO), "--python", python, "--quiet"]
    subprocess.run(install, check=True)
    work = root.parent / "work"
    work.mkdir()
    (work / "toolpacks.toml").write_text(
        '[agents.a]\npacks = []\n\n[agents.m]\npacks = ["fs"]\n\n'
        '[mcp_servers.fs]\ncommand = "python"\nargs = ["-c", "pass"]\n'
    )
    env = Bare(root, work)
    check = env.python_code(
        "import importlib.util as u\n"
        "print([m for m in ('mcp', 'uvicorn', 'prometheus_client', 'uv', 'langchain_core',"
        " 'pydantic_ai', 'agents', 'llm', 'strands', 'opentelemetry') if u.find_spec(m)])"
    )
    assert check.stdout.strip() == "[]", check.stdout + check.stderr  # truly without extras
    return env


def _refused(done: subprocess.CompletedProcess[str], module: str, extra: str) -> None:
    assert done.returncode != 0, done.stdout
    assert "unexpected" not in done.stderr, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert module in done.stderr, done.stderr
    assert f"pip install 'toolpacks[{extra}]'" in done.stderr, done.stderr


def test_serve_over_http_names_the_http_extra(bare: Bare) -> None:
    _refused(bare.run("serve", "--agent", "a", "--http", "0"), "prometheus_client", "http")


def test_install_names_the_isolated_extra(bare: Bare) -> None:
    _refused(bare.run("install", "--isolated", "some-pack", "--agent", "a"), "uv", "isolated")
    _refused(bare.run("install", "some-pack"), "uv", "isolated")


def test_mounting_an_mcp_server_names_the_mcp_extra(bare: Bare) -> None:
    _refused(bare.run("toolset", "m"), "MCP SDK", "mcp")


def test_serving_over_stdio_needs_no_extra(bare: Bare) -> None:
    """The stdio server is toolpacks' own: with stdin closed it ends cleanly."""
    done = bare.run("serve", "--agent", "a")
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    ("module", "call", "extra"),
    [
        ("langchain", "as_tools(toolset)", "langchain"),
        ("openai_agents", "as_tools(toolset)", "openai-agents"),
        ("pydantic_ai", "as_toolset(toolset)", "pydantic-ai"),
        ("strands", "as_tools(toolset)", "strands"),
        ("llm", "as_tools(toolset)", "llm"),
        ("otel", "instrument()", "otel"),
    ],
)
def test_each_integration_names_its_extra(bare: Bare, module: str, call: str, extra: str) -> None:
    done = bare.python_code(
        f"""
        from toolpacks import Toolset, tool

        @tool
        def now() -> str:
            '''The time.'''
            return "noon"

        toolset = Toolset([now])
        try:
            from toolpacks.integrations import {module} as integration

            integration.{call}
        except ImportError as exc:
            print(exc)
        else:
            print("no error")
        """
    )
    assert f"pip install 'toolpacks[{extra}]'" in done.stdout, done.stdout + done.stderr
