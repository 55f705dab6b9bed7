"""What checking access tokens costs a served call: ``serve --http`` with and without ``[auth]``.

Two real ``toolpacks serve --http`` processes serve the same one-tool pack, one with
``[auth]`` (keys from ``examples/local_issuer.py``, warmed before measuring) and one open.
Calls of ``add`` go to both in pairs, the order alternating, over keep-alive connections;
the figure is the median of the per-pair differences over the median open call, plus the
in-process cost of one warm ``TokenVerifier.verify`` of a repeated token (what a client
sending its token with every request pays) and of a token never seen (a signature check).
Target (issue 31): the token check is at most 10 % of a served call.

    .venv/bin/python bench/auth_overhead.py [--pairs 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
AUDIENCE = "https://bench.test/mcp"
PACK = '''
from toolpacks import hookimpl, tool


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@hookimpl
def register_tools(register):
    register(add, pack="bench")
'''


def _issuer_module() -> Any:
    spec = importlib.util.spec_from_file_location("local_issuer", ROOT / "examples/local_issuer.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _write_pack(directory: Path) -> None:
    (directory / "bench_pack.py").write_text(PACK)
    dist = directory / "toolpacks_bench-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toolpacks-bench\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[toolpacks]\nbench = bench_pack\n")


def _serve(directory: Path, config: str, name: str) -> tuple[subprocess.Popen[bytes], str]:
    path = directory / f"{name}.toml"
    path.write_text(config)
    command = [sys.executable, "-m", "toolpacks", "serve", "--config", str(path)]
    proc = subprocess.Popen(
        [*command, "--agent", "a", "--http", "127.0.0.1:0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(directory)},
        cwd=directory,
    )
    found: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert proc.stderr is not None
        for raw in proc.stderr:
            line = raw.decode(errors="replace")
            if "serving http://" in line:
                found.put(line.split("serving ", 1)[1].split("/agents/", 1)[0])
        found.put("")

    threading.Thread(target=pump, daemon=True).start()
    base = found.get(timeout=60)
    if not base:
        raise SystemExit(f"the {name} server did not start")
    return proc, f"{base}/mcp"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args()
    issuer_mod = _issuer_module()
    directory = Path(tempfile.mkdtemp(prefix="toolpacks-auth-bench-"))
    _write_pack(directory)
    key_file = directory / "key.pem"
    key = issuer_mod.load_key(key_file)
    script = [sys.executable, str(ROOT / "examples/local_issuer.py"), "--key-file", str(key_file)]
    issuer_proc = subprocess.Popen([*script, "serve", "--port", "0"], stdout=subprocess.PIPE)
    assert issuer_proc.stdout is not None
    issuer = issuer_proc.stdout.readline().decode().split()[1]
    agent = '[agents.a]\npacks = ["bench"]\n'
    auth = f'[auth]\nissuer = "{issuer}"\naudience = "{AUDIENCE}"\n\n{agent}'
    servers = [_serve(directory, agent, "open"), _serve(directory, auth, "auth")]
    token = issuer_mod.token(key, issuer, AUDIENCE, "bench-user", "a b c", 60)
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
         "params": {"name": "add", "arguments": {"a": 1, "b": 2}}}
    )  # fmt: skip
    try:
        with (
            httpx.Client(headers=headers, timeout=30) as plain_client,
            httpx.Client(
                headers={**headers, "Authorization": f"Bearer {token}"}, timeout=30
            ) as auth_client,
        ):
            roads = [(plain_client, servers[0][1]), (auth_client, servers[1][1])]

            def once(index: int) -> float:
                client, url = roads[index]
                start = time.perf_counter()
                response = client.post(url, content=body)
                took = time.perf_counter() - start
                if response.status_code != 200 or '"isError":false' not in response.text:
                    raise SystemExit(f"bad answer: {response.status_code} {response.text[:200]}")
                return took

            for _ in range(200):  # warm: connections, the JWKS, the caches
                once(0)
                once(1)
            plain: list[float] = []
            checked: list[float] = []
            for number in range(args.pairs):
                order = (0, 1) if number % 2 == 0 else (1, 0)
                took = {i: once(i) for i in order}
                plain.append(took[0])
                checked.append(took[1])
        verify_us, first_us = _verify_cost(issuer_mod, key, issuer)
    finally:
        for proc, _ in servers:
            proc.terminate()
        issuer_proc.terminate()
        for proc, _ in servers:
            proc.wait(30)
        issuer_proc.wait(30)
    diffs = [c - p for p, c in zip(plain, checked, strict=True)]
    plain_median = statistics.median(plain)
    figures = {
        "pairs": args.pairs,
        "open_call_median_us": plain_median * 1e6,
        "auth_call_median_us": statistics.median(checked) * 1e6,
        "paired_difference_median_us": statistics.median(diffs) * 1e6,
        "overhead_percent": 100 * statistics.median(diffs) / plain_median,
        "verify_in_process_us": verify_us,
        "verify_share_percent": 100 * verify_us / (plain_median * 1e6),
        "verify_new_token_us": first_us,
        "verify_new_token_share_percent": 100 * first_us / (plain_median * 1e6),
    }
    for name, value in figures.items():
        print(f"{name:32} {value:,.2f}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))


def _verify_cost(issuer_mod: Any, key: Any, issuer: str) -> tuple[float, float]:
    """Microseconds of one warm ``TokenVerifier.verify``: a repeated token, a new one."""
    from toolpacks.host.config._auth import AuthConfig
    from toolpacks.mcp.http.auth._verify import TokenVerifier

    config = AuthConfig.model_validate({"issuer": issuer, "audience": AUDIENCE})
    verifier = TokenVerifier(config)
    token = issuer_mod.token(key, issuer, AUDIENCE, "bench-user", "a b c", 60)

    fresh = [issuer_mod.token(key, issuer, AUDIENCE, f"u{n}", "a", 60) for n in range(300)]

    async def run(rounds: int) -> tuple[float, float]:
        await verifier.verify(token)  # fetch the keys
        start = time.perf_counter()
        for _ in range(rounds):
            await verifier.verify(token)
        repeated = (time.perf_counter() - start) / rounds * 1e6
        start = time.perf_counter()
        for other in fresh:
            await verifier.verify(other)
        first = (time.perf_counter() - start) / len(fresh) * 1e6
        return repeated, first

    return asyncio.run(run(2000))


if __name__ == "__main__":
    main()
