"""The servers of the HTTP benchmark: toolpacks and FastMCP in subprocesses, and their CPUs.

The toolpacks server is the real command, ``python -m toolpacks serve --http 127.0.0.1:0
--workers N``, serving a pack written into a scratch directory (discovered through a
``.dist-info`` on ``PYTHONPATH``, as an installed pack is). FastMCP's is
``http_fastmcp_server.py``. Both are given the same tools: ``add`` (async), ``add_sync``
(a plain function) and, for toolpacks' fault run, ``record`` (writes the token it is given to
a ledger file, one line per run of the tool, so a call run twice would show).
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import sys
import textwrap
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

BENCH = Path(__file__).resolve().parent
START_TIMEOUT = 60.0
"""Seconds a server may take to start (its workers import the SDK and build toolsets)."""

PACK = '''
"""The tools of the HTTP benchmark."""

import os

from toolpacks import hookimpl, tool

LEDGER = os.environ.get("BENCH_HTTP_LEDGER", "")


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def add_sync(a: int, b: int) -> int:
    """Add two integers (a sync function)."""
    return a + b


@tool
def record(token: str) -> str:
    """Append the token to the ledger file (one line per run of this tool); return it."""
    fd = os.open(LEDGER, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (token + "\\n").encode())
    finally:
        os.close(fd)
    return token


@hookimpl
def register_tools(register):
    for t in (add, add_sync, record):
        register(t)
'''


def write_pack(directory: Path) -> Path:
    """Write the pack (discoverable from ``directory``) and a config; the config's path."""
    (directory / "bench_http_pack.py").write_text(textwrap.dedent(PACK))
    dist = directory / "toolpacks_bench_http-0.1.dist-info"
    dist.mkdir(exist_ok=True)
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: toolpacks-bench-http\nVersion: 0.1\n"
    )
    (dist / "entry_points.txt").write_text("[toolpacks]\nbench = bench_http_pack\n")
    config = directory / "toolpacks.toml"
    config.write_text('[agents.bench]\npacks = ["bench"]\n')
    return config


class Server:
    """One server in a subprocess: its base URL, its process tree, how to stop it."""

    def __init__(
        self,
        name: str,
        argv: list[str],
        env: dict[str, str],
        cwd: Path,
        ledger: Path | None = None,
    ) -> None:
        self.name = name
        self.ledger = ledger
        """The file the ``record`` tool appends to (toolpacks only)."""
        self.log = cwd / f"{name}.log"
        self._lines: queue.Queue[str] = queue.Queue()
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=cwd,
        )
        threading.Thread(target=self._pump, daemon=True).start()
        self.base = self._wait_started()
        """``http://127.0.0.1:PORT``."""

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        with self.log.open("w") as log:
            for raw in self.proc.stdout:
                line = raw.decode(errors="replace")
                log.write(line)
                log.flush()
                self._lines.put(line)
        self._lines.put("")

    def _wait_started(self) -> str:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            try:
                line = self._lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                break
            if not line:
                break
            if "serving http://" in line:  # toolpacks serve
                base = line.split("serving ", 1)[1].split("/agents/", 1)[0]
            elif line.startswith("port "):  # http_fastmcp_server.py
                base = f"http://127.0.0.1:{int(line.split()[1])}"
            else:
                continue
            if _healthy(base, deadline):
                return base
        self.stop()
        raise RuntimeError(f"{self.name} did not start; its output:\n{self.log.read_text()}")

    @property
    def pid(self) -> int:
        """The process the server was started as (the supervisor, with workers)."""
        return self.proc.pid

    def workers(self) -> list[int]:
        """The worker processes of a ``--workers N`` server (children running ``spawn_main``)."""
        return children(self.proc.pid, "spawn_main")

    def pids(self) -> list[int]:
        """Every process of the server: itself and its descendants."""
        return tree(self.proc.pid)

    def stop(self) -> None:
        """SIGTERM, then SIGKILL (to the whole tree) if it has not exited within 15 s."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                for pid in tree(self.proc.pid):
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                self.proc.wait(5)


def _healthy(base: str, deadline: float) -> bool:
    """Whether ``base`` answers HTTP (toolpacks: ``/healthz``; FastMCP has none: its 404)."""
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{base}/healthz", timeout=2):
                return True
        except urllib.error.HTTPError:
            return True
        except OSError:
            time.sleep(0.1)
    return False


def start_toolpacks(scratch: Path, workers: int, python: str = sys.executable) -> Server:
    """``toolpacks serve --http 127.0.0.1:0 --workers N`` for the benchmark's agent."""
    config = write_pack(scratch)
    ledger = scratch / "ledger.txt"
    env = {
        **os.environ,
        "PYTHONPATH": str(scratch),
        "PYTHONHASHSEED": "0",
        "BENCH_HTTP_LEDGER": str(ledger),
    }
    argv = [python, "-m", "toolpacks", "serve", "--config", str(config), "--agent", "bench"]
    argv += ["--http", "127.0.0.1:0", "--workers", str(workers)]
    return Server(f"toolpacks-w{workers}", argv, env, scratch, ledger)


def start_fastmcp(scratch: Path, python: str = sys.executable) -> Server:
    """FastMCP's HTTP server (``http_fastmcp_server.py``)."""
    env = {**os.environ, "PYTHONHASHSEED": "0", "FASTMCP_CHECK_FOR_UPDATES": "off"}
    return Server("fastmcp", [python, str(BENCH / "http_fastmcp_server.py")], env, scratch)


# -- processes and CPUs (Linux /proc) ---------------------------------------------------------


def _ppid(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
        if stat.rsplit(b") ", 1)[1][:1] == b"Z":
            return None  # a zombie: gone, only not yet reaped
        return int(stat.rsplit(b") ", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def children(parent: int, marker: str = "") -> list[int]:
    """Live children of ``parent`` whose command line contains ``marker``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and _ppid(int(entry)) == parent:
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ")
            except OSError:
                continue
            if marker.encode() in cmdline:
                found.append(int(entry))
    return sorted(found)


def tree(root: int) -> list[int]:
    """``root`` and its live descendants."""
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children(pid))
    return found


def pin(pids: list[int], cpus: set[int]) -> None:
    """Restrict every thread of ``pids`` to ``cpus`` (threads started later inherit it)."""
    for pid in pids:
        with contextlib.suppress(OSError):
            for tid in os.listdir(f"/proc/{pid}/task"):
                with contextlib.suppress(OSError):
                    os.sched_setaffinity(int(tid), cpus)


def connections_per_process(pids: list[int], port: int) -> dict[int, int]:
    """Established TCP connections on ``port`` held by each of ``pids`` (from /proc)."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for row in Path(table).read_text().splitlines()[1:]:
                cols = row.split()
                local_port = int(cols[1].rsplit(":", 1)[1], 16)
                if local_port == port and cols[3] == "01":  # 01: ESTABLISHED
                    inodes.add(cols[9])
    counts: dict[int, int] = {}
    for pid in pids:
        n = 0
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    target = os.readlink(f"/proc/{pid}/fd/{fd}")
                    if target.startswith("socket:[") and target[8:-1] in inodes:
                        n += 1
        counts[pid] = n
    return counts
