"""MCP 2026-07-28 ``requestState``: sealed by the server and bound to its call.

A tool that asks twice (``delete``: "delete a?", then "really?") is driven through its
``input_required`` rounds by the official client (stdio, and HTTP with the first round on
the direct route or the streaming one) and by raw requests (stdio lines, HTTP posts). The
state of the second round carries the first "yes"; replayed on other arguments, on another
tool, by another subject (HTTP with a local JWT issuer), changed, or in the old unsigned
``toolpacks1.`` form, it is refused with -32602 naming requestState (never echoing it), and
the tool does not run (the pack notes every start in ``runs.log``). With two HTTP workers a
state one of them issued opens on the other (the key is the state directory's).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import mcp_types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from .auth_issuer import Issuer, auth_config
from .conftest import HTTP_TIMEOUT, HttpServer
from .test_rich_http import connect as connect_http
from .test_rich_stdio import run, text

GUARD = '''
"""A tool that asks twice before it acts, and notes every start in runs.log."""

import os

from pydantic import BaseModel

from toolpacks import ToolContext, hookimpl, tool

RUNS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "runs.log")


class Confirm(BaseModel):
    confirm: bool


def _note(text):
    with open(RUNS, "a") as out:
        out.write(f"{text} {os.getpid()}\\n")


async def _guarded(action, path, ctx):
    _note(f"start {action} {path}")
    for question in (f"{action} {path}?", "really?"):
        answer = await ctx.elicit(question, Confirm)
        if not (answer.accepted and answer.content.confirm):
            return f"kept {path}"
    _note(f"done {action} {path}")
    return f"{action}d {path}"


@tool
async def delete(path: str, ctx: ToolContext) -> str:
    """Deletes path, once the user said yes twice."""
    return await _guarded("delete", path, ctx)


@tool
async def archive(path: str, ctx: ToolContext) -> str:
    """Archives path, once the user said yes twice."""
    return await _guarded("archive", path, ctx)


@hookimpl
def register_tools(register):
    register(delete)
    register(archive)
'''

AGENT = '[agents.guard]\npacks = ["guard"]\n'
CAPABILITIES: dict[str, Any] = {"elicitation": {}}
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": CAPABILITIES,
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
}
YES = {"action": "accept", "content": {"confirm": True}}


def write_guard(directory: Path, config: str = AGENT) -> Path:
    """The pack (discoverable from ``directory``) and its configuration; the config's path."""
    (directory / "guard_pack.py").write_text(GUARD)
    dist = directory / "toolpacks_guard-0.1.dist-info"
    dist.mkdir(exist_ok=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toolpacks-guard\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[toolpacks]\nguard = guard_pack\n")
    path = directory / "toolpacks.toml"
    path.write_text(config)
    return path


def runs(directory: Path) -> list[str]:
    """The lines the pack noted: ``start delete a PID``, ``done delete a PID``."""
    path = directory / "runs.log"
    return path.read_text().splitlines() if path.exists() else []


Call = Callable[..., dict[str, Any]]
"""Sends one raw ``tools/call`` (name, arguments, state, responses): the JSON-RPC answer."""


def _params(name: str, arguments: dict[str, Any], state: Any, responses: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": arguments, "_meta": META}
    if state is not None:
        params["requestState"] = state
    if responses is not None:
        params["inputResponses"] = responses
    return params


# -- the roads: raw stdio lines, raw HTTP posts


class StdioPeer:
    """``toolpacks serve --agent guard`` over stdio, spoken to one JSON line at a time."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        config = write_guard(directory)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "toolpacks", "serve", "--agent", "guard", "--config", config],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=(directory / "serve.log").open("w"),
            env={**os.environ, "PYTHONPATH": str(directory)},
            cwd=directory,
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self._ids = iter(range(1, 10**6))

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(b"")

    def call(
        self, name: str, arguments: dict[str, Any], state: Any = None, responses: Any = None
    ) -> dict[str, Any]:
        request_id = next(self._ids)
        message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call"}
        message["params"] = _params(name, arguments, state, responses)
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()
        while True:
            line = self.lines.get(timeout=HTTP_TIMEOUT)
            assert line, "the server closed its output"
            answer: dict[str, Any] = json.loads(line)
            if answer.get("id") == request_id:
                return answer

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(HTTP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def http_call(url: str, token: str | None = None) -> Call:
    """Raw 2026-07-28 ``tools/call`` posts to ``url`` (a new connection each)."""

    def call(
        name: str, arguments: dict[str, Any], state: Any = None, responses: Any = None
    ) -> dict[str, Any]:
        headers = {
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": "tools/call",
            "Mcp-Name": name,
        }
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": 7, "method": "tools/call"}
        body["params"] = _params(name, arguments, state, responses)
        answer = httpx.post(url, json=body, headers=headers, timeout=HTTP_TIMEOUT)
        assert answer.status_code in (200, 400), answer.text
        value: dict[str, Any] = answer.json()
        return value

    return call


def served_dir(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    directory = tmp_path_factory.mktemp(name)
    (directory / "state").mkdir()
    return directory


@pytest.fixture(scope="module")
def stdio_peer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StdioPeer]:
    peer = StdioPeer(served_dir(tmp_path_factory, "state-stdio"))
    try:
        yield peer
    finally:
        peer.close()


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    directory = served_dir(tmp_path_factory, "state-http")
    env = {"TOOLPACKS_STATE_DIR": str(directory / "state")}
    server = HttpServer(directory, ["--agent", "guard"], env, config=write_guard(directory))
    try:
        yield server
    finally:
        server.kill()


@pytest.fixture(params=["stdio", "http"])
def road(request: pytest.FixtureRequest) -> tuple[Call, Path]:
    """A raw caller of the guard agent, and the directory whose runs.log it fills."""
    if request.param == "stdio":
        peer: StdioPeer = request.getfixturevalue("stdio_peer")
        return peer.call, peer.directory
    server: HttpServer = request.getfixturevalue("http_server")
    return http_call(server.url()), server.directory


# -- the rounds


def _input_required(answer: dict[str, Any], asked: str) -> str:
    """The requestState of an input_required answer that asks ``asked``."""
    result = answer.get("result")
    assert isinstance(result, dict), answer
    assert result["resultType"] == "input_required", answer
    assert list(result["inputRequests"]) == [asked]
    state: str = result["requestState"]
    assert state.startswith("toolpacks2.")
    return state


def _said_yes_once(call: Call, path: str = "a") -> str:
    """The state of ``delete(path)`` after the first "yes": it carries that answer."""
    first = _input_required(call("delete", {"path": path}), "elicitation-0")
    second = call("delete", {"path": path}, first, {"elicitation-0": YES})
    return _input_required(second, "elicitation-1")


def _refused(answer: dict[str, Any], state: Any) -> None:
    """-32602, naming requestState, not echoing it."""
    error = answer.get("error")
    assert isinstance(error, dict), answer
    assert error["code"] == -32602
    assert "requestState" in error["message"]
    assert "start over" in error["message"]
    assert not state or str(state) not in error["message"]


def _with_payload(state: str, change: Callable[[dict[str, Any]], None]) -> str:
    """``state`` with its payload changed and its signature kept (a forgery)."""
    body, _, mac = state[len("toolpacks2.") :].rpartition(".")
    value = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    change(value)
    raw = json.dumps(value, separators=(",", ":")).encode()
    return f"toolpacks2.{base64.urlsafe_b64encode(raw).decode().rstrip('=')}.{mac}"


def test_the_rounds_go_through_with_sealed_state(road: tuple[Call, Path]) -> None:
    """Ask, answer, ask again, answer: the tool acts once, with both answers."""
    call, directory = road
    state = _said_yes_once(call, "r")
    done = call("delete", {"path": "r"}, state, {"elicitation-1": YES})
    assert done["result"]["content"][0]["text"] == "deleted r", done
    assert [line.rsplit(" ", 1)[0] for line in runs(directory) if " r " in line + " "] == [
        "start delete r",
        "start delete r",
        "start delete r",
        "done delete r",
    ]


def test_a_state_replayed_on_other_arguments_is_refused(road: tuple[Call, Path]) -> None:
    """delete(a)'s "yes" replayed on delete(b): refused, the tool not run."""
    call, directory = road
    state = _said_yes_once(call, "a")
    before = runs(directory)
    answer = call("delete", {"path": "b"}, state, {"elicitation-1": YES})
    _refused(answer, state)
    assert runs(directory) == before


def test_a_state_replayed_on_another_tool_is_refused(road: tuple[Call, Path]) -> None:
    """delete(a)'s "yes" replayed on archive(a): refused, the tool not run."""
    call, directory = road
    state = _said_yes_once(call, "a")
    before = runs(directory)
    answer = call("archive", {"path": "a"}, state, {"elicitation-1": YES})
    _refused(answer, state)
    assert runs(directory) == before


def _digest_of(arguments: dict[str, Any]) -> str:
    text = json.dumps(arguments, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize(
    ("forge", "path"),
    [
        pytest.param(lambda v: v.update(args=_digest_of({"path": "b"})), "b", id="rebound-to-b"),
        pytest.param(lambda v: v["answers"].update({"elicitation-1": YES}), "a", id="answered"),
    ],
)
def test_a_changed_state_is_refused(
    road: tuple[Call, Path], forge: Callable[[dict[str, Any]], None], path: str
) -> None:
    """A state rewritten for delete(b), or given an answer never sent: refused, not run."""
    call, directory = road
    forged = _with_payload(_said_yes_once(call, "a"), forge)
    before = runs(directory)
    _refused(call("delete", {"path": path}, forged, {"elicitation-1": YES}), forged)
    assert runs(directory) == before


@pytest.mark.parametrize(
    "state",
    [
        "toolpacks1."
        + base64.urlsafe_b64encode(
            json.dumps({"tool": "delete", "answers": {"elicitation-0": YES}}).encode()
        ).decode(),
        "toolpacks2.e30.AAAA",
        "not a state",
        "",
    ],
    ids=["unsigned-v1", "bad-signature", "unknown", "empty"],
)
def test_a_state_this_server_did_not_seal_is_refused(road: tuple[Call, Path], state: str) -> None:
    """The old unsigned form, a wrong signature, anything else: refused, the tool not run."""
    call, directory = road
    before = runs(directory)
    _refused(call("delete", {"path": "a"}, state, {"elicitation-0": YES}), state)
    assert runs(directory) == before


def test_answers_without_a_state_answer_nothing(road: tuple[Call, Path]) -> None:
    """Answers (inputResponses) with no requestState: no question was asked, so the tool asks."""
    call, _ = road
    answer = call("delete", {"path": "c"}, None, {"elicitation-0": YES, "elicitation-1": YES})
    _input_required(answer, "elicitation-0")


# -- the official client: the rounds still go through


def _confirming() -> Any:
    async def elicit(context: Any, params: Any) -> mcp_types.ElicitResult:
        return mcp_types.ElicitResult(action="accept", content={"confirm": True})

    return elicit


@contextlib.asynccontextmanager
async def connect_stdio(directory: Path) -> AsyncIterator[Client]:
    config = directory / "toolpacks.toml"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "toolpacks", "serve", "--agent", "guard", "--config", str(config)],
        env={"PYTHONPATH": str(directory)},
    )
    with (directory / "client.log").open("a") as errlog:
        transport = stdio_client(params, errlog=errlog)
        async with Client(transport, mode="auto", elicitation_callback=_confirming()) as client:
            yield client


def test_the_official_client_goes_through_the_rounds_over_stdio(tmp_path: Path) -> None:
    """Two questions, two answers, one deletion: the client echoes the sealed state."""
    write_guard(tmp_path)

    async def main() -> mcp_types.CallToolResult:
        async with connect_stdio(tmp_path) as client:
            return await client.call_tool("delete", {"path": "x"})

    result = run(main())
    assert text(result) == "deleted x"
    assert [line.rsplit(" ", 1)[0] for line in runs(tmp_path)][-1] == "done delete x"


@pytest.mark.parametrize("listening", [False, True], ids=["direct", "streaming"])
def test_the_official_client_goes_through_the_rounds_over_http(
    http_server: HttpServer, listening: bool
) -> None:
    """The first round on the direct route or the streaming one, the retries on the SDK road."""

    async def progress(value: float, total: float | None, message: str | None) -> None:
        pass

    async def main() -> mcp_types.CallToolResult:
        async with connect_http(
            http_server.url(), "auto", elicitation_callback=_confirming()
        ) as client:
            listen = progress if listening else None
            return await client.call_tool("delete", {"path": "y"}, progress_callback=listen)

    result = run(main())
    assert text(result) == "deleted y"


# -- HTTP: another subject, another worker


def test_a_state_replayed_by_another_subject_is_refused(tmp_path: Path) -> None:
    """Alice's "yes" replayed by Bob on the same call: refused, the tool not run."""
    issuer = Issuer()
    try:
        (tmp_path / "state").mkdir()
        config = write_guard(tmp_path, auth_config(issuer, agents=AGENT))
        env = {"TOOLPACKS_STATE_DIR": str(tmp_path / "state")}
        server = HttpServer(tmp_path, ["--agent", "guard"], env, config=config)
        try:
            alice = http_call(server.url(), issuer.token(sub="alice"))
            bob = http_call(server.url(), issuer.token(sub="bob"))
            state = _said_yes_once(alice, "a")
            before = runs(tmp_path)
            _refused(bob("delete", {"path": "a"}, state, {"elicitation-1": YES}), state)
            assert runs(tmp_path) == before
            done = alice("delete", {"path": "a"}, state, {"elicitation-1": YES})
            assert done["result"]["content"][0]["text"] == "deleted a", done
        finally:
            server.kill()
    finally:
        issuer.close()


def test_a_state_one_worker_sealed_opens_on_the_other(tmp_path: Path) -> None:
    """Two workers share the state directory's key: rounds may land on either."""
    (tmp_path / "state").mkdir()
    env = {"TOOLPACKS_STATE_DIR": str(tmp_path / "state")}
    config = write_guard(tmp_path)
    server = HttpServer(tmp_path, ["--agent", "guard", "--workers", "2"], env, config=config)
    try:
        call = http_call(server.url())
        for attempt in range(40):  # each request a new connection: the kernel picks a worker
            path = f"w{attempt}"
            state = _said_yes_once(call, path)
            done = call("delete", {"path": path}, state, {"elicitation-1": YES})
            assert done["result"]["content"][0]["text"] == f"deleted {path}", done
            pids = {line.rsplit(" ", 1)[1] for line in runs(tmp_path) if f" {path} " in line}
            if len(pids) > 1:
                break
        else:
            pytest.fail("every round landed on one worker; cannot tell")
    finally:
        server.kill()


# -- in-process: the expiry


@pytest.mark.parametrize("ttl", [3600.0, -1.0], ids=["in-time", "expired"])
def test_a_state_past_its_hour_is_refused(monkeypatch: pytest.MonkeyPatch, ttl: float) -> None:
    """The same sealed state opens within its time and is refused after it."""
    from toolpacks.mcp import _state_seal
    from toolpacks.mcp._notify import STATELESS_CHANNEL, InputChannel, RequestStateRefused

    monkeypatch.setattr(_state_seal, "TTL", ttl)
    binding = {"tool": "delete", "args": _state_seal.arguments_digest({"path": "a"}), "sub": None}
    state = _state_seal.seal_state({**binding, "answers": {}, "asked": ["elicitation-0"]})
    params = {"_meta": META, "requestState": state, "inputResponses": {"elicitation-0": YES}}
    channel = InputChannel(STATELESS_CHANNEL, "delete", params)
    if ttl < 0:
        with pytest.raises(RequestStateRefused, match="requestState"):
            channel.bind({"path": "a"}, None)
        return
    channel.bind({"path": "a"}, None)
    assert run(channel.elicit("delete a?", {"type": "object"})) == YES
