"""Isolated packs: per-call cost, first call, and environment creation (issue 23).

Cases, measured interleaved (each repeat runs one batch of every case, in shuffled order):

* ``in_process``: the tool imported into the host (``Toolset.call``);
* ``served_mcp``: the same tool served by ``toolpacks serve --pack`` over stdio, mounted as an
  ``[mcp_servers]`` server (the road an isolated pack takes, without isolation);
* ``isolated``: ``[packs.NAME] isolate = true`` (the child of the host's environment).

Then the first call of an isolated pack whose manifest exists (spawn to result) against a
``toolpacks serve`` cold start (spawn, handshake, tool list, one call), and the time to make
an environment with uv's cache warm. Run: ``.venv/bin/python bench/isolated_call.py``.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

PACK = """
from toolpacks import hookimpl, tool

@tool
def add(a: int, b: int) -> int:
    '''Add two integers.'''
    return a + b

@hookimpl
def register_tools(register):
    register(add)
"""


def _site(root: Path) -> Path:
    site = root / "site"
    info = site / "toolpacks_benchiso-1.0.dist-info"
    info.mkdir(parents=True)
    (site / "benchiso.py").write_text(textwrap.dedent(PACK), encoding="utf-8")
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: toolpacks-benchiso\nVersion: 1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text("[toolpacks]\nbenchiso = benchiso\n", encoding="utf-8")
    sys.path.insert(0, str(site))
    return site


def _served(site: Path) -> dict[str, Any]:
    args = ["-m", "toolpacks", "serve", "--pack", "benchiso", "--path", str(site)]
    return {"mcp_servers": {"served": {"command": sys.executable, "args": args, "timeout": 120}}}


async def _batch(toolset: Any, name: str, n: int) -> float:
    start = time.perf_counter()
    for i in range(n):
        result = await toolset.call(name, {"a": i, "b": 1})
        assert not result.is_error, result.content
    return (time.perf_counter() - start) / n


def per_call(site: Path, repeats: int = 15, n: int = 40) -> dict[str, float]:
    """Median seconds per call of each case."""
    from toolpacks import Host

    hosts = {
        "in_process": Host({}, path=[str(site)]),
        "served_mcp": Host(_served(site), discover=False),
        "isolated": Host({"packs": {"benchiso": {"isolate": True}}}, path=[str(site)]),
    }
    toolsets = {
        "in_process": (hosts["in_process"].toolset(packs=["benchiso"]), "add"),
        "served_mcp": (hosts["served_mcp"].toolset(packs=["served"]), "add"),
        "isolated": (hosts["isolated"].toolset(packs=["benchiso"]), "add"),
    }
    samples: dict[str, list[float]] = {name: [] for name in toolsets}

    async def run() -> None:
        for toolset, tool in toolsets.values():  # warm up: start children, plans
            await _batch(toolset, tool, 5)
        for _ in range(repeats):
            order = list(toolsets)
            random.shuffle(order)
            for name in order:
                toolset, tool = toolsets[name]
                samples[name].append(await _batch(toolset, tool, n))

    asyncio.run(run())
    for host in hosts.values():
        host.close()
    return {name: statistics.median(values) for name, values in samples.items()}


def first_call(site: Path, repeats: int = 5) -> dict[str, float]:
    """Median seconds from nothing running to a first result: isolated vs served cold start."""
    from toolpacks import Host

    config = {"packs": {"benchiso": {"isolate": True}}}
    with Host(config, path=[str(site)]) as host:  # writes the manifest
        host.toolset(packs=["benchiso"])
    samples: dict[str, list[float]] = {"isolated": [], "served_mcp": []}
    for _ in range(repeats):
        for name in random.sample(list(samples), 2):
            start = time.perf_counter()
            if name == "isolated":
                host = Host(config, path=[str(site)])
                toolset = host.toolset(packs=["benchiso"])
            else:
                host = Host(_served(site), discover=False)
                toolset = host.toolset(packs=["served"])
            result = asyncio.run(toolset.call("add", {"a": 1, "b": 2}))
            samples[name].append(time.perf_counter() - start)
            assert not result.is_error, result.content
            host.close()
    return {name: statistics.median(values) for name, values in samples.items()}


def env_creation(root: Path) -> dict[str, float]:
    """Seconds to make an isolated environment for a local pack (second run: uv cache warm)."""
    from toolpacks.packs.isolated._env import ensure_env

    pack = root / "toolpacks-benchenv"
    (pack / "benchenv").mkdir(parents=True)
    (pack / "benchenv" / "__init__.py").write_text(textwrap.dedent(PACK), encoding="utf-8")
    (pack / "pyproject.toml").write_text(
        textwrap.dedent(
            """\
            [build-system]
            requires = ["hatchling"]
            build-backend = "hatchling.build"

            [project]
            name = "toolpacks-benchenv"
            version = "1.0"
            dependencies = ["toolpacks"]

            [project.entry-points.toolpacks]
            benchenv = "benchenv"

            [tool.hatch.build.targets.wheel]
            packages = ["benchenv"]
            """
        ),
        encoding="utf-8",
    )
    out: dict[str, float] = {}
    for label in ("first", "warm_cache"):
        cache = root / f"cache-{label}"
        start = time.perf_counter()
        ensure_env(str(pack), root, {**os.environ, "TOOLPACKS_CACHE_DIR": str(cache)})
        out[label] = time.perf_counter() - start
    start = time.perf_counter()
    ensure_env(
        str(pack), root, {**os.environ, "TOOLPACKS_CACHE_DIR": str(root / "cache-warm_cache")}
    )
    out["existing"] = time.perf_counter() - start
    return out


def main() -> None:
    """Run every measurement and print a JSON report."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        os.environ["TOOLPACKS_CACHE_DIR"] = str(root / "cache")
        site = _site(root)
        calls = per_call(site)
        firsts = first_call(site)
        envs = env_creation(root)
    report = {
        "per_call_seconds": calls,
        "isolated_vs_served_mcp": calls["isolated"] / calls["served_mcp"],
        "isolated_vs_in_process": calls["isolated"] / calls["in_process"],
        "first_call_seconds": firsts,
        "first_call_isolated_vs_served_cold_start": firsts["isolated"] / firsts["served_mcp"],
        "env_creation_seconds": envs,
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
