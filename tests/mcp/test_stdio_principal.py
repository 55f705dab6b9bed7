"""``toolpacks serve --principal SUBJECT --scope S`` over stdio, with the official MCP client.

The local operator says who the stdio client acts for: it lists and calls only what that
principal's scopes reach, and the tool sees the principal. Without ``--principal``, a tool
needing a scope is neither listed nor callable. Each call leaves one ``toolpacks.audit``
record (shipped here to a file by a plain ``logging.FileHandler``), never argument values.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from .conftest import run_bounded, text_of

TIMEOUT = 20.0

PACK = '''
from toolpacks import ToolContext, hookimpl, tool


@tool(scopes=["repo.read"])
def whoami(note: str, context: ToolContext) -> dict:
    """Say who called."""
    p = context.principal
    return {"subject": p.subject if p else None, "scopes": sorted(p.scopes) if p else None}


@tool
def ping(word: str) -> str:
    """Answer a ping."""
    return word


@tool
def deploy(target: str) -> str:
    """Deploy."""
    return target


@hookimpl
def register_tools(register):
    for t in (whoami, ping, deploy):
        register(t)
'''

CONFIG = """
[agents.dev]
packs = ["scoped"]

[agents.dev.tool_scopes]
"scoped.deploy" = ["ops"]
"""

# Ships the audit log of the server process as JSON lines, as the guide shows.
SITECUSTOMIZE = """
import logging, os
path = os.environ.get("AUDIT_FILE")
if path:
    handler = logging.FileHandler(path)
    logging.getLogger("toolpacks.audit").addHandler(handler)
    logging.getLogger("toolpacks.audit").setLevel(logging.INFO)
"""


@pytest.fixture(scope="module")
def pack_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("scoped")
    (directory / "scoped_pack_mod.py").write_text(textwrap.dedent(PACK))
    dist = directory / "toolpacks_scoped-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toolpacks-scoped\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[toolpacks]\nscoped = scoped_pack_mod\n")
    (directory / "toolpacks.toml").write_text(CONFIG)
    (directory / "sitecustomize.py").write_text(SITECUSTOMIZE)
    return directory


@contextlib.asynccontextmanager
async def connect(directory: Path, *extra: str, audit: Path | None = None) -> AsyncIterator[Client]:
    env = {"PYTHONPATH": str(directory)}
    config = directory / "toolpacks.toml"
    if audit is not None:
        env["AUDIT_FILE"] = str(audit)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "toolpacks", "serve", "--agent", "dev", "--config", str(config), *extra],
        env=env,
    )
    with (directory / "serve.log").open("a") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            yield client


def run(coro: Any) -> Any:
    """Run a test coroutine, bounded by this module's ``TIMEOUT``."""
    return run_bounded(coro, TIMEOUT)


text = text_of


async def session(directory: Path, *extra: str, audit: Path | None = None) -> dict[str, Any]:
    async with connect(directory, *extra, audit=audit) as client:
        listed = sorted(t.name for t in (await client.list_tools()).tools)
        who = await client.call_tool("whoami", {"note": "SECRET-NOTE"})
        deploy = await client.call_tool("deploy", {"target": "prod"})
        ping = await client.call_tool("ping", {"word": "w"})
        return {"listed": listed, "whoami": who, "deploy": deploy, "ping": ping}


def test_with_a_principal_the_client_sees_and_calls_what_its_scopes_reach(
    pack_dir: Path, tmp_path: Path
) -> None:
    audit = tmp_path / "audit.jsonl"
    got = run(session(pack_dir, "--principal", "alice", "--scope", "repo.read", audit=audit))
    assert got["listed"] == ["ping", "whoami"]
    assert not got["whoami"].is_error
    assert json.loads(text(got["whoami"])) == {"subject": "alice", "scopes": ["repo.read"]}
    assert got["deploy"].is_error
    assert "missing scope ops" in text(got["deploy"])
    assert not got["ping"].is_error
    lines = audit.read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert [(r["subject"], r["tool"], r["decision"], r["reason"]) for r in records] == [
        ("alice", "whoami", "allowed", None),
        ("alice", "deploy", "refused", "missing_scope"),
        ("alice", "ping", "allowed", None),
    ]
    assert all(r["agent"] == "dev" for r in records)
    assert "SECRET-NOTE" not in audit.read_text()


def test_with_all_scopes_every_tool_is_listed(pack_dir: Path) -> None:
    got = run(session(pack_dir, "--principal", "root", "--scope", "repo.read", "--scope", "ops"))
    assert got["listed"] == ["deploy", "ping", "whoami"]
    assert not got["deploy"].is_error


def test_without_a_principal_scoped_tools_are_hidden_and_refused(
    pack_dir: Path, tmp_path: Path
) -> None:
    audit = tmp_path / "audit.jsonl"
    got = run(session(pack_dir, audit=audit))
    assert got["listed"] == ["ping"]
    assert got["whoami"].is_error
    assert "no principal" in text(got["whoami"])
    assert got["deploy"].is_error
    records = [json.loads(line) for line in audit.read_text().splitlines()]
    assert [(r["subject"], r["decision"]) for r in records] == [
        (None, "refused"),
        (None, "refused"),
        (None, "allowed"),
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--scope", "x"], "--scope needs --principal"),
        (["--principal", "a", "--http", "127.0.0.1:0"], "apply to stdio only"),
        (["--principal", "a", "--scope", "two words"], "without spaces"),
    ],
)
def test_bad_principal_options_fail_with_one_line(
    pack_dir: Path, args: list[str], message: str
) -> None:
    config = pack_dir / "toolpacks.toml"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "toolpacks",
            "serve",
            "--agent",
            "dev",
            "--config",
            str(config),
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env={"PYTHONPATH": str(pack_dir), "PATH": "/usr/bin:/bin"},
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode != 0
    assert message in done.stderr
