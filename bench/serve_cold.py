"""Cold start of ``toolpacks serve`` (stdio) against FastMCP and the SDK's ``MCPServer`` (issue 24).

Each case is a fresh process, timed from spawn to the reply it must deliver over stdio:

* spawn -> ``initialize`` reply: ``toolpacks serve`` of one tool; FastMCP of one tool; the
  MCP SDK's own ``MCPServer`` of one tool;
* spawn -> ``tools/list`` reply: ``toolpacks serve`` of 100 packs x 20 tools (listed from
  their manifests, which a first run writes) against FastMCP of one tool.

The packs are generated wheels installed with uv (``bench_startup.install``). FastMCP runs in
the interpreter given by ``--fastmcp-python`` (its own environment: it pins another MCP SDK),
the other servers in this one. Every repeat runs every case once, in a shuffled order; the
ratios are taken per repeat (same run), then summarised: median, IQR, min, max.

Targets: initialize <= 0.5x FastMCP and <= 0.7x MCPServer; the 2,000-tool listing <= 0.6x
FastMCP's one tool.

Usage: ``.venv/bin/python bench/serve_cold.py --fastmcp-python PATH [--repeats N]``; writes
``bench/results/serve_cold.json``.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine_info, paired_ratios, summary, table, write_json
from bench_startup import FASTMCP_SERVER, install, timed_server

MCPSERVER_SERVER = '''
from mcp.server.mcpserver import MCPServer

mcp = MCPServer("bench")


@mcp.tool()
def echo(text: str, times: int = 1) -> str:
    """Repeat the text."""
    return text * times


mcp.run()
'''

TARGETS = {
    "initialize / FastMCP": ("toolpacks 1 tool: initialize", "fastmcp 1 tool: initialize", 0.5),
    "initialize / MCPServer": (
        "toolpacks 1 tool: initialize",
        "mcpserver 1 tool: initialize",
        0.7,
    ),
    "100x20 tools/list / FastMCP 1 tool": (
        "toolpacks 100x20: tools/list",
        "fastmcp 1 tool: tools/list",
        0.6,
    ),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--fastmcp-python", default=None, help="an interpreter with fastmcp")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="toolpacks-serve-cold-"))
    cwd = str(work / "cwd")
    os.makedirs(cwd)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "TOOLPACKS_"))}
    base["TOOLPACKS_CACHE_DIR"] = str(work / "cache")
    py = sys.executable
    cases: dict[str, tuple[list[str], dict[str, str], str]] = {}
    for name, (packs, tools) in {"1 tool": (1, 1), "100x20": (100, 20)}.items():
        site = work / f"site-{name.replace(' ', '')}"
        install(site, packs, tools, work)
        env = {**base, "PYTHONPATH": str(site)}
        env["TOOLPACKS_PACKS"] = ",".join(f"p{p:03d}" for p in range(packs))
        serve = [py, "-m", "toolpacks", "serve"]
        _, count = timed_server(serve, env, cwd, "tools/list")  # writes the manifests
        if count != packs * tools:
            raise RuntimeError(f"{name}: listed {count} tools, expected {packs * tools}")
        until = "initialize" if name == "1 tool" else "tools/list"
        cases[f"toolpacks {name}: {until}"] = (serve, env, until)
    mcpserver = work / "mcpserver_one.py"
    mcpserver.write_text(MCPSERVER_SERVER, encoding="utf-8")
    cases["mcpserver 1 tool: initialize"] = ([py, str(mcpserver)], base, "initialize")
    if args.fastmcp_python:
        fastmcp = work / "fastmcp_one.py"
        fastmcp.write_text(FASTMCP_SERVER, encoding="utf-8")
        for until in ("initialize", "tools/list"):
            argv = [args.fastmcp_python, str(fastmcp)]
            cases[f"fastmcp 1 tool: {until}"] = (argv, base, until)
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for argv, env, until in cases.values():  # warm the file cache
        timed_server(argv, env, cwd, until)
    rng = random.Random(24)
    names = list(cases)
    for repeat in range(args.repeats):
        print(f"repeat {repeat + 1}/{args.repeats}", flush=True)
        rng.shuffle(names)
        for name in names:
            argv, env, until = cases[name]
            samples[name].append(timed_server(argv, env, cwd, until)[0])
    shutil.rmtree(work, ignore_errors=True)
    result: dict[str, Any] = {
        "machine": machine_info(("toolpacks", "mcp")),
        "repeats": args.repeats,
        "cases": {name: summary(values) for name, values in samples.items()},
        "targets": {},
    }
    rows = [
        [name, f"{1000 * fig['median']:.0f} ms", f"{1000 * fig['min']:.0f}-{1000 * fig['max']:.0f}"]
        for name, fig in result["cases"].items()
    ]
    print(table(["case", "median", "spread"], rows))
    target_rows = []
    for label, (case, floor, limit) in TARGETS.items():
        if case not in samples or floor not in samples:
            continue
        ratio = summary(paired_ratios(samples[case], samples[floor]))
        met = ratio["median"] <= limit
        result["targets"][label] = {**ratio, "limit": limit, "met": met}
        spread = f"{ratio['min']:.2f}-{ratio['max']:.2f}"
        target_rows.append(
            [label, f"{ratio['median']:.2f}x", spread, f"<= {limit}x", "met" if met else "missed"]
        )
    print()
    print(table(["target", "ratio (median)", "spread", "limit", ""], target_rows))
    print(f"wrote {write_json('serve_cold.json', result)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
