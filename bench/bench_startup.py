"""Startup costs (issue 17): importing, serving cold, and listing tools from pack manifests.

Every case is a fresh process, timed from spawn to what it must deliver, all cases interleaved
in a shuffled order in each repeat, in one run:

* import: ``from toolpacks import tool`` and ``from toolpacks import Host`` against
  ``from pydantic import BaseModel`` (and ``python -c pass``);
* serve: spawn -> the ``initialize`` reply and spawn -> the ``tools/list`` reply over stdio, for
  ``toolpacks serve`` with 1 tool, with 100 packs x 20 tools and with 10^4 tools (listed from
  their manifests, which a first run writes), against a FastMCP server of one tool; and
  ``import mcp.shared.message``, the MCP SDK that ``toolpacks serve`` imports, as a floor.

The packs are generated wheels installed with ``uv pip install --target`` into directories
of their own (a real installer writes their RECORDs), put on ``PYTHONPATH`` for the toolpacks
cases only. Each pack notes its import in a file: the run checks that listing imported none.

Usage: ``python bench/bench_startup.py [--quick] [--repeats N]`` (bench/.venv: FastMCP is there).
Results: ``bench/results/startup.json``.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

from _common import figure, machine_info, paired_ratios, summary, table, write_json

SETS = {"one": (1, 1), "100x20": (100, 20), "10k": (20, 500)}
"""Generated pack sets: (packs, tools per pack)."""
HELLO = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "bench", "version": "0"},
}
FASTMCP_SERVER = '''
from fastmcp import FastMCP

mcp = FastMCP("bench")


@mcp.tool
def echo(text: str, times: int = 1) -> str:
    """Repeat the text."""
    return text * times


mcp.run(show_banner=False)
'''
LIST = """
import os, sys
from toolpacks import Host
toolset = Host().toolset()
definitions = toolset.definitions("mcp")
assert len(definitions) == int(sys.argv[1]), len(definitions)
assert not [m for m in sys.modules if m.startswith("tpbench_")], "a pack was imported"
os._exit(0)  # timed to the listing, not to the teardown of 10^4 objects
"""


# -- the packs ----------------------------------------------------------------------------------


def pack_source(pack: int, tools: int) -> str:
    """A pack module of ``tools`` typed tools that notes its import in ``$TPB_MARKS``."""
    lines = [
        "import os",
        "",
        "from toolpacks import hookimpl, tool",
        "",
        'if os.environ.get("TPB_MARKS"):',
        '    with open(os.environ["TPB_MARKS"], "a", encoding="utf-8") as marks:',
        '        marks.write(__name__ + "\\n")',
    ]
    names = []
    for t in range(tools):
        name = f"p{pack:03d}_t{t:03d}"
        names.append(name)
        lines += [
            "",
            "",
            '@tool(tags=["bench"], read_only=True)',
            f"def {name}(text: str, times: int = 1) -> str:",
            f'    """Repeat the text (tool {t} of pack {pack})."""',
            "    return text * times",
        ]
    lines += ["", "", "@hookimpl", "def register_tools(register):"]
    lines += [f"    register({name})" for name in names]
    return "\n".join(lines) + "\n"


def _hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def write_wheel(directory: Path, pack: int, tools: int) -> Path:
    """A wheel of one pack distribution, ``tpbench-pNNN``."""
    dist, module, version = f"tpbench_p{pack:03d}", f"tpbench_p{pack:03d}", "1.0"
    info = f"{dist}-{version}.dist-info"
    files = {
        f"{module}/__init__.py": pack_source(pack, tools).encode(),
        f"{info}/METADATA": (
            f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\nRequires-Dist: toolpacks\n"
        ).encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: bench\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n",
        f"{info}/entry_points.txt": f"[toolpacks]\np{pack:03d} = {module}\n".encode(),
    }
    record = "".join(f"{n},{_hash(d)},{len(d)}\n" for n, d in files.items()) + f"{info}/RECORD,,\n"
    path = directory / f"{dist}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        for name, data in files.items():
            wheel.writestr(name, data)
        wheel.writestr(f"{info}/RECORD", record)
    return path


def install(site: Path, packs: int, tools: int, work: Path) -> None:
    """Generate ``packs`` wheels and install them with uv into the directory ``site``."""
    wheels = work / f"wheels-{site.name}"
    wheels.mkdir()
    paths = [str(write_wheel(wheels, p, tools)) for p in range(packs)]
    uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    command = [uv] if uv else [sys.executable, "-m", "uv"]
    options = ["--quiet", "--no-deps", "--no-index", "--python", sys.executable]
    subprocess.run(
        [*command, "pip", "install", *options, "--target", str(site), *paths],
        check=True,
        timeout=600,
    )


# -- one timed process ----------------------------------------------------------------------------


def _send(proc: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()


def _reply(proc: subprocess.Popen[bytes], request_id: int) -> dict[str, Any]:
    assert proc.stdout is not None
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"server exited without answering request {request_id}")
        message: dict[str, Any] = json.loads(line)
        if message.get("id") == request_id:
            return message


def timed_server(argv: list[str], env: dict[str, str], cwd: str, until: str) -> tuple[float, int]:
    """Seconds from spawn to the reply ``until`` asks for, and the number of tools listed."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        env=env, cwd=cwd,
    )  # fmt: skip
    try:
        _send(proc, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": HELLO})
        answer = _reply(proc, 0)
        elapsed, count = time.perf_counter() - t0, 0
        if "result" not in answer:
            raise RuntimeError(f"initialize failed: {answer}")
        if until == "tools/list":
            _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
            _send(proc, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
            listed = _reply(proc, 1)
            elapsed, count = time.perf_counter() - t0, len(listed["result"]["tools"])
        return elapsed, count
    finally:
        proc.kill()
        proc.wait()


def timed_process(argv: list[str], env: dict[str, str], cwd: str) -> tuple[float, int]:
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - t0, 0


# -- the run --------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few repeats (a smoke run)")
    parser.add_argument("--repeats", type=int, default=15, help="interleaved repeats per case")
    args = parser.parse_args(argv)
    repeats = 3 if args.quick else args.repeats
    work = Path(tempfile.mkdtemp(prefix="toolpacks-startup-"))
    cwd = str(work / "cwd")
    os.makedirs(cwd)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "TOOLPACKS_"))}
    base["TOOLPACKS_CACHE_DIR"] = str(work / "cache")
    marks = work / "marks.txt"
    py = sys.executable
    started = time.perf_counter()

    def phase(text: str) -> None:
        print(f"[{time.perf_counter() - started:6.1f}s] {text}", flush=True)

    cases: dict[str, tuple[Any, ...]] = {
        "python -c pass": (timed_process, [py, "-c", "pass"], base),
        "from pydantic import BaseModel": (
            timed_process, [py, "-c", "from pydantic import BaseModel"], base,
        ),
        "from toolpacks import tool": (
            timed_process, [py, "-c", "from toolpacks import tool"], base,
        ),
        "from toolpacks import Host": (
            timed_process, [py, "-c", "from toolpacks import Host"], base,
        ),
        "import mcp.shared.message (SDK)": (
            timed_process, [py, "-c", "import mcp.shared.message"], base,
        ),
    }  # fmt: skip
    counts: dict[str, int] = {}
    for name, (packs, tools) in SETS.items():
        phase(f"installing {packs} packs x {tools} tools ({name}) with uv --target ...")
        site = work / f"site-{name}"
        install(site, packs, tools, work)
        env = {**base, "PYTHONPATH": str(site), "TPB_MARKS": str(marks)}
        env["TOOLPACKS_PACKS"] = ",".join(f"p{p:03d}" for p in range(packs))
        serve = [py, "-m", "toolpacks", "serve"]
        phase(f"first serve of {name}: imports the packs and writes their manifests ...")
        _, count = timed_server(serve, env, cwd, "tools/list")
        counts[name] = count
        if count != packs * tools:
            raise RuntimeError(f"{name}: listed {count} tools, expected {packs * tools}")
        cases[f"toolpacks serve {name}: initialize"] = (timed_server, serve, env, "initialize")
        cases[f"toolpacks serve {name}: tools/list"] = (timed_server, serve, env, "tools/list")
        if name == "10k":
            listing = [py, "-c", LIST, str(packs * tools)]
            cases["toolpacks 10k: Host().toolset().definitions('mcp')"] = (
                timed_process, listing, env,
            )  # fmt: skip
    marks.write_text("")
    fastmcp = None
    try:
        subprocess.run([py, "-c", "import fastmcp"], check=True, capture_output=True, cwd=cwd)
        fastmcp = work / "fastmcp_one.py"
        fastmcp.write_text(FASTMCP_SERVER, encoding="utf-8")
        for until in ("initialize", "tools/list"):
            cases[f"fastmcp 1 tool: {until}"] = (timed_server, [py, str(fastmcp)], base, until)
    except subprocess.CalledProcessError:
        phase("fastmcp is not installed here: its cases are left out")
    samples: dict[str, list[float]] = {name: [] for name in cases}

    def run_case(name: str) -> float:
        fn, argv, env, *rest = cases[name]
        if fn is timed_server:
            return float(fn(argv, env, cwd, rest[0])[0])
        return float(fn(argv, env, cwd)[0])

    for name in cases:  # warm the file cache
        run_case(name)
    rng = random.Random(17)
    names = list(cases)
    for repeat in range(repeats):
        phase(f"repeat {repeat + 1}/{repeats}")
        rng.shuffle(names)
        for name in names:
            samples[name].append(run_case(name))
    imported = sorted(set(marks.read_text().split()))
    result = report(samples, counts, imported, repeats)
    path = write_json("startup.json", result)
    shutil.rmtree(work, ignore_errors=True)
    print()
    print(render(result))
    print(f"\nwrote {path}")
    return 0


def _ratio(samples: dict[str, list[float]], a: str, b: str) -> dict[str, Any] | None:
    if a not in samples or b not in samples:
        return None
    return summary(paired_ratios(samples[a], samples[b]))


def report(
    samples: dict[str, list[float]], counts: dict[str, int], imported: list[str], repeats: int
) -> dict[str, Any]:
    """The figures, the ratios each target names, and whether it is met."""
    base = "from pydantic import BaseModel"
    ratios = {
        "from toolpacks import tool / from pydantic import BaseModel": _ratio(
            samples, "from toolpacks import tool", base
        ),
        "from toolpacks import Host / from pydantic import BaseModel": _ratio(
            samples, "from toolpacks import Host", base
        ),
        "toolpacks serve (1 tool) initialize / fastmcp initialize": _ratio(
            samples, "toolpacks serve one: initialize", "fastmcp 1 tool: initialize"
        ),
        "toolpacks serve (100x20) initialize / fastmcp initialize": _ratio(
            samples, "toolpacks serve 100x20: initialize", "fastmcp 1 tool: initialize"
        ),
        "toolpacks serve (100x20) tools/list / fastmcp (1 tool) tools/list": _ratio(
            samples, "toolpacks serve 100x20: tools/list", "fastmcp 1 tool: tools/list"
        ),
        "MCP SDK import / fastmcp initialize": _ratio(
            samples, "import mcp.shared.message (SDK)", "fastmcp 1 tool: initialize"
        ),
    }
    list_10k = summary(samples["toolpacks 10k: Host().toolset().definitions('mcp')"])
    serve_10k = summary(samples["toolpacks serve 10k: tools/list"])

    def target(key: str, limit: float) -> dict[str, Any]:
        fig = ratios[key]
        value = None if fig is None else fig["median"]
        return {"value": value, "limit": limit, "met": value is not None and value <= limit}

    targets = {
        "from toolpacks import tool <= 1.2x from pydantic import BaseModel": target(
            "from toolpacks import tool / from pydantic import BaseModel", 1.2
        ),
        "from toolpacks import Host <= 1.5x from pydantic import BaseModel": target(
            "from toolpacks import Host / from pydantic import BaseModel", 1.5
        ),
        "serve: spawn -> initialize <= 0.6x FastMCP's": target(
            "toolpacks serve (1 tool) initialize / fastmcp initialize", 0.6
        ),
        "serve: spawn -> tools/list, 100 packs x 20 tools <= 1.0x FastMCP's for one tool": target(
            "toolpacks serve (100x20) tools/list / fastmcp (1 tool) tools/list", 1.0
        ),
        "10^4 tools listed in < 1 s without importing a pack (spawn -> MCP definitions)": {
            "value": list_10k["median"],
            "limit": 1.0,
            "met": list_10k["median"] < 1.0 and not imported,
        },
        "10^4 tools listed in < 1 s without importing a pack (serve: spawn -> tools/list)": {
            "value": serve_10k["median"],
            "limit": 1.0,
            "met": serve_10k["median"] < 1.0 and not imported,
        },
    }
    return {
        "benchmark": "startup",
        "machine": machine_info(("toolpacks", "pydantic", "mcp", "mcp-types", "fastmcp")),
        "repeats": repeats,
        "method": "fresh processes, spawn to reply, all cases interleaved in a shuffled order "
        "per repeat; ratios per repeat, summarised",
        "tools_listed": counts,
        "packs_imported_while_listing": imported,
        "rows": {name: figure(data, scale=1e3) for name, data in samples.items()},
        "ratios": ratios,
        "targets": targets,
    }


def render(result: dict[str, Any]) -> str:
    rows = [
        [
            name,
            f"{f['median']:.0f}",
            f"{f['q1']:.0f}-{f['q3']:.0f}",
            f"{f['min']:.0f}-{f['max']:.0f}",
        ]
        for name, f in result["rows"].items()
    ]
    out = [table(["case (fresh process)", "median ms", "IQR", "min-max"], rows), ""]
    ratio_rows = [
        [name, f"{r['median']:.2f}x", f"{r['q1']:.2f}-{r['q3']:.2f}"]
        for name, r in result["ratios"].items()
        if r
    ]
    out += [table(["ratio (per repeat)", "median", "IQR"], ratio_rows), ""]
    imported = result["packs_imported_while_listing"]
    out.append(f"packs imported while listing from manifests: {', '.join(imported) or 'none'}")
    for name, t in result["targets"].items():
        value = "-" if t["value"] is None else f"{t['value']:.2f}"
        out.append(f"target: {name}: {value} -> {'met' if t['met'] else 'MISSED'}")
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
