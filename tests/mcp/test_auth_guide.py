"""The "Serving to many users" guide's example, run as written (ports picked free).

The local issuer script (``examples/local_issuer.py``) serves its keys, the guide's TOML block
is the configuration, ``toolpacks serve --http`` serves it, and the script's tokens are let in
(200), refused without the agent's scope (403 step-up) and absent (401 naming the metadata).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from .conftest import HttpServer

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guides" / "many-users.md"
SCRIPT = ROOT / "examples" / "local_issuer.py"
AUDIENCE = "http://127.0.0.1:8000/mcp"


@pytest.fixture
def issuer(tmp_path: Path) -> Iterator[str]:
    command = [sys.executable, str(SCRIPT), "--key-file", str(tmp_path / "key.pem")]
    proc = subprocess.Popen(
        [*command, "serve", "--port", "0"], stdout=subprocess.PIPE, text=True, cwd=tmp_path
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # bounded: the script prints it before serving
        assert line.startswith("issuer "), line
        yield line.split()[1]
    finally:
        proc.kill()
        proc.wait(10)


def token(tmp_path: Path, issuer: str, scope: str) -> str:
    command = [sys.executable, str(SCRIPT), "--key-file", str(tmp_path / "key.pem"), "token"]
    args = ["--issuer", issuer, "--audience", AUDIENCE, "--sub", "alice", "--scope", scope]
    done = subprocess.run([*command, *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


class GuideServer(HttpServer):
    def __init__(self, directory: Path, config: str) -> None:
        import queue
        import threading

        path = directory / "toolpacks.toml"
        path.write_text(config)
        command = [sys.executable, "-m", "toolpacks", "serve", "--config", str(path)]
        self.proc = subprocess.Popen(
            [*command, "--agent", "support", "--http", "127.0.0.1:0"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=dict(os.environ),
            cwd=directory,
        )
        self.directory = directory
        self.lines: list[str] = []
        self._base: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self.base = self._wait_announced()


def test_the_guide_example_runs(tmp_path: Path, issuer: str) -> None:
    text = GUIDE.read_text(encoding="utf-8")
    config = re.search(r"```toml\n(.*?)```", text, re.S)
    assert config is not None
    written = config.group(1)
    assert 'issuer = "http://127.0.0.1:9000"' in written
    server = GuideServer(tmp_path, written.replace("http://127.0.0.1:9000", issuer))
    try:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        headers = {"Content-Type": "application/json", "Accept": "application/json"}

        def post(bearer: str | None) -> httpx.Response:
            sent = dict(headers)
            if bearer is not None:
                sent["Authorization"] = f"Bearer {bearer}"
            return httpx.post(server.url(), json=body, headers=sent, timeout=30)

        allowed = post(token(tmp_path, issuer, "support.use"))
        assert allowed.status_code == 200, allowed.text
        assert "tools" in allowed.json()["result"]
        stepped = post(token(tmp_path, issuer, "other"))
        assert stepped.status_code == 403
        assert 'scope="support.use"' in stepped.headers["www-authenticate"]
        absent = post(None)
        assert absent.status_code == 401
        expected = f'resource_metadata="{server.base}/.well-known/oauth-protected-resource/mcp"'
        assert expected in absent.headers["www-authenticate"]
    finally:
        server.kill()
