"""Isolated packs in environments of their own, made with uv (``[isolated.NAME]``).

Two packs pin conflicting versions of one small dependency (a local distribution at versions
1.0 and 2.0, so no index is needed for it): installed together they cannot be, isolated they
both answer in one host. Environments are shared by the whole session (one cache directory),
as hosts on one machine share them.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from toolpacks import Host
from toolpacks.packs.isolated._env import env_for, environments, uv_command

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

PACK = """
import tinydep
from toolpacks import hookimpl, tool

@tool(tags=["version"])
def which() -> str:
    '''The version of tinydep this pack sees.'''
    return tinydep.VERSION

@hookimpl
def register_tools(register):
    register(which)
"""


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def _pyproject(name: str, version: str, deps: list[str], extra: str = "") -> str:
    return textwrap.dedent(
        f"""\
        [build-system]
        requires = ["hatchling"]
        build-backend = "hatchling.build"

        [project]
        name = "{name}"
        version = "{version}"
        dependencies = {json.dumps(deps)}

        [tool.hatch.metadata]
        allow-direct-references = true
        """
    ) + textwrap.dedent(extra)


@pytest.fixture(scope="session")
def repos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Versions 1.0 and 2.0 of ``tinydep``, and two packs each pinning one of them."""
    base = tmp_path_factory.mktemp("repos")
    out: dict[str, Path] = {}
    for version in ("1.0", "2.0"):
        out[f"tinydep-{version}"] = _write(
            base / f"tinydep-{version}",
            {
                "pyproject.toml": _pyproject("tinydep", version, []),
                "tinydep/__init__.py": f"VERSION = {version!r}\n",
            },
        )
    for pack, version in (("alpha", "1.0"), ("beta", "2.0")):
        dep = f"tinydep @ {out[f'tinydep-{version}'].as_uri()}"
        entry = (
            f'\n[project.entry-points.toolpacks]\n{pack} = "{pack}_pack"\n'
            f'\n[tool.hatch.build.targets.wheel]\npackages = ["{pack}_pack"]\n'
        )
        out[pack] = _write(
            base / f"toolpacks-{pack}",
            {
                "pyproject.toml": _pyproject(f"toolpacks-{pack}", "1.0", ["toolpacks", dep], entry),
                f"{pack}_pack/__init__.py": PACK,
            },
        )
    return out


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("isolated-cache")


@pytest.fixture(autouse=True)
def _shared_cache(shared_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLPACKS_CACHE_DIR", str(shared_cache))


def _config(tmp_path: Path, repos: dict[str, Path]) -> Path:
    path = tmp_path / "toolpacks.toml"
    path.write_text(
        textwrap.dedent(
            f"""\
            [isolated.alpha]
            requirement = "{repos["alpha"]}"

            [isolated.beta]
            requirement = "{repos["beta"]}"

            [agents.both]
            packs = ["alpha", "beta"]
            on_conflict = "prefix"
            """
        ),
        encoding="utf-8",
    )
    return path


def test_two_packs_pinning_conflicting_versions_answer_in_one_host(
    tmp_path: Path, repos: dict[str, Path]
) -> None:
    with Host(_config(tmp_path, repos)) as host:
        toolset = host.toolset("both")
        assert len(toolset.names()) == 2
        by_pack = {e.pack: e.exposed for e in toolset.entries()}
        alpha = asyncio.run(toolset.call(by_pack["alpha"], {}))
        beta = asyncio.run(toolset.call(by_pack["beta"], {}))
        assert (alpha.value, beta.value) == ("1.0", "2.0")
        assert host.load("alpha").info.distribution == "toolpacks-alpha"


def test_the_same_two_packs_cannot_share_one_environment(
    tmp_path: Path, repos: dict[str, Path]
) -> None:
    """What the isolated test above means: together, the resolver refuses them."""
    root = tmp_path / "together"
    uv = uv_command()
    subprocess.run([*uv, "venv", str(root), "--python", sys.executable, "--quiet"], check=True)
    from toolpacks.packs.isolated._env import toolpacks_requirement

    python = str(root / "bin" / "python")
    packs = [str(repos["alpha"]), str(repos["beta"])]
    done = subprocess.run(
        [*uv, "pip", "install", "--python", python, *toolpacks_requirement(), *packs],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode != 0
    assert "tinydep" in done.stderr


def _toolpacks(*args: str, cwd: Path, env: dict[str, str] | None = None) -> Any:
    return subprocess.run(
        [sys.executable, "-m", "toolpacks", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=600,
        check=False,
    )


def _serve_http(config: Path, cwd: Path) -> tuple[str, subprocess.Popen[str]]:
    """``toolpacks serve --agent dev --http 127.0.0.1:0``: its agent URL, and the process."""
    argv = ["--config", str(config), "serve", "--agent", "dev", "--http", "127.0.0.1:0"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolpacks", *argv],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        cwd=cwd,
    )
    assert proc.stderr is not None
    for line in proc.stderr:  # ends when the process does: a server that cannot start
        match = re.search(r"(http://\S+/agents/dev/mcp)", line)
        if match:
            return match.group(1), proc
    proc.wait(30)
    raise AssertionError(f"toolpacks serve --http did not start (status {proc.returncode})")


def test_install_isolated_then_call_toolset_serve_and_gc(
    tmp_path: Path, repos: dict[str, Path], shared_cache: Path
) -> None:
    work = tmp_path / "project"
    work.mkdir()
    # A copy of the pack of its own: environments are shared machine-wide by requirement, and
    # `gc` keeps one another existing project used (the other tests' alpha), so this test's
    # environment must be this project's alone for `gc` to remove it.
    alpha = shutil.copytree(repos["alpha"], tmp_path / "toolpacks-alpha")
    config = work / "toolpacks.toml"
    config.write_text("# my agents\n[settings]\nmax_concurrency = 4\n", encoding="utf-8")
    done = _toolpacks(
        "install",
        str(alpha),
        "--isolated",
        "--agent",
        "dev",
        "--config",
        str(config),
        cwd=work,
    )
    assert done.returncode == 0, done.stderr
    text = config.read_text(encoding="utf-8")
    assert text.startswith("# my agents\n[settings]\nmax_concurrency = 4\n")
    assert "[isolated.alpha]" in text
    assert '[agents.dev]\npacks = ["alpha"]' in text

    called = _toolpacks("--config", str(config), "call", "which", "--agent", "dev", cwd=work)
    assert called.returncode == 0, called.stderr
    assert "1.0" in called.stdout
    listed = _toolpacks("--config", str(config), "toolset", "dev", "--json", cwd=work)
    assert listed.returncode == 0, listed.stderr
    assert "which" in listed.stdout

    # Served over stdio to an MCP client: the host's own MCP client pack source.
    served = {
        "mcp_servers": {
            "served": {
                "command": sys.executable,
                "args": ["-m", "toolpacks", "--config", str(config), "serve", "--agent", "dev"],
                "env": {"TOOLPACKS_CACHE_DIR": str(shared_cache)},
                "timeout": 120,
            }
        }
    }
    with Host(served, discover=False) as client:
        toolset = client.toolset(packs=["served"])
        result = asyncio.run(toolset.call("which", {}))
        assert result.value == {"result": "1.0"}, result.content  # MCP wraps a string output

    # Served over streamable HTTP, mounted by another host with `url`.
    url = _serve_http(config, work)
    try:
        with Host({"mcp_servers": {"web": {"url": url[0], "timeout": 120}}}, discover=False) as web:
            result = asyncio.run(web.toolset(packs=["web"]).call("which", {}))
            assert result.value == {"result": "1.0"}, result.content
    finally:
        url[1].terminate()
        url[1].wait(30)

    env = env_for(str(alpha), work)
    assert env.ready
    removed = _toolpacks("--config", str(config), "uninstall", "alpha", cwd=work)
    assert removed.returncode == 0, removed.stderr
    assert "[isolated.alpha]" not in config.read_text(encoding="utf-8")
    gc = _toolpacks("--config", str(config), "gc", "--days", "0", cwd=work)
    assert gc.returncode == 0, gc.stderr
    assert not env.root.exists()
    assert env.root not in [e.root for e in environments()]
