"""The sandbox's refusals on the framework-adapter roads (issues 32 and 36).

An isolated pack (``isolate = {...}``, a real child process under real Landlock rules, the
probe pack of ``tests/packs/test_sandbox.py`` in a fake site: no new virtual environment)
reads a file outside its grants (the host's ``toolpacks.toml`` holding a secret, a private
directory), writes outside its grants, and connects to a loopback listener with
``network = false``. Each adapter installed in this venv (pydantic-ai, openai-agents,
LangChain, llm) calls those tools the way its framework does: the framework receives the
tool's error (the ``PermissionError``), the refused file is not created, and a granted read
and write work (so the refusal is the sandbox's, not a broken call).

The control host runs the same pack with ``sandbox = "off"``: through the same roads the same
calls then read the secret, plant the file and connect, so each refusal asserted above is one
the test would notice missing. strands is not installed here (it needs ``mcp<2.2``, see
``test_strands.py``); its road is not covered by this file.

One sandboxed host and one control host per module (two child processes in all).
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import FakeSite
from tests.packs.test_sandbox import PROBE

from toolpacks import ToolError, Toolset
from toolpacks.packs.sandbox._landlock import abi

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(120),
    pytest.mark.skipif(abi() < 4, reason="needs Landlock ABI 4 (Linux 6.7)"),
]

SECRET = "sk-config-secret"


@dataclass
class Outcome:
    """What the framework received: whether it was told of an error, and the text."""

    error: bool
    text: str


Road = Callable[[Toolset, str, dict[str, Any]], Outcome]


# -- the roads: each framework's own call path -------------------------------------------------


def _pydantic_ai(toolset: Toolset, name: str, arguments: dict[str, Any]) -> Outcome:
    """A real ``Agent.run_sync`` whose scripted model calls the tool once."""
    from pydantic_ai import Agent, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from toolpacks.integrations.pydantic_ai import as_toolset

    returned: list[ToolReturnPart] = []

    def respond(messages: list[Any], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart(name, json.dumps(arguments), "c1")])
        returned.extend(p for p in messages[-1].parts if isinstance(p, ToolReturnPart))
        return ModelResponse(parts=[TextPart("done")])

    agent = Agent(FunctionModel(respond), toolsets=[as_toolset(toolset)])
    assert agent.run_sync("go").output == "done"
    (part,) = returned
    return Outcome(part.outcome == "failed", str(part.content))


def _openai_agents(toolset: Toolset, name: str, arguments: dict[str, Any]) -> Outcome:
    """``FunctionTool.on_invoke_tool``, as the Agents SDK's runner calls it."""
    from agents.tool_context import ToolContext as AgentsToolContext

    from toolpacks.integrations.openai_agents import as_tools

    function_tool = {t.name: t for t in as_tools(toolset)}[name]
    text = json.dumps(arguments)
    ctx = AgentsToolContext(None, tool_name=name, tool_call_id="c1", tool_arguments=text)
    output = str(asyncio.run(function_tool.on_invoke_tool(ctx, text)))
    # The SDK hands the model text only: a failure is toolpacks' own error message.
    return Outcome(output.startswith(f"Tool {name!r} failed"), output)


def _langchain(toolset: Toolset, name: str, arguments: dict[str, Any]) -> Outcome:
    """``BaseTool.ainvoke`` with a tool call: a ``ToolMessage``."""
    from toolpacks.integrations.langchain import as_tools

    lc_tool = {t.name: t for t in as_tools(toolset)}[name]
    call = {"name": name, "args": arguments, "id": "c1", "type": "tool_call"}
    message = asyncio.run(lc_tool.ainvoke(call))
    return Outcome(message.status == "error", str(message.content))


def _llm(toolset: Toolset, name: str, arguments: dict[str, Any]) -> Outcome:
    """The llm ``Tool``'s ``implementation``: a failure is a raised ``ToolError``."""
    from toolpacks.integrations.llm import as_tools

    implementation: Any = {t.name: t for t in as_tools(toolset)}[name].implementation
    try:
        value = implementation(**arguments)
    except ToolError as exc:
        return Outcome(True, str(exc))
    return Outcome(False, str(value))


ROADS: dict[str, Road] = {
    "pydantic-ai": _pydantic_ai,
    "openai-agents": _openai_agents,
    "langchain": _langchain,
    "llm": _llm,
}


# -- one sandboxed host and one control host per module ----------------------------------------


@dataclass
class World:
    """The paths, the listener's port and the two hosts' toolsets."""

    config: Path
    private: Path
    granted: Path
    out: Path
    port: int
    sandboxed: Toolset
    control: Toolset


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """The probe pack, a host running it sandboxed and one running it with sandbox off."""
    tmp = tmp_path_factory.mktemp("sandbox-adapters")
    with pytest.MonkeyPatch.context() as mp, socket.socket() as server:
        # as the root conftest's ``isolated`` fixture: no trust file or cache leaking in
        for var in ("TOOLPACKS_DISABLE", "TOOLPACKS_PACKS", "TOOLPACKS_NO_CACHE"):
            mp.delenv(var, raising=False)
        (tmp / "work").mkdir()
        mp.chdir(tmp / "work")
        mp.setenv("TOOLPACKS_TRUST_FILE", str(tmp / "trusted.json"))
        mp.setenv("TOOLPACKS_CACHE_DIR", str(tmp / "cache"))
        site = FakeSite(tmp / "site", mp)
        site.pack("probe", PROBE)
        granted, private, out = tmp / "granted", tmp / "private", tmp / "out"
        for folder in (granted, private, out):
            folder.mkdir()
        (granted / "data.txt").write_text("granted data")
        (private / "secret.txt").write_text("private secret")
        config = tmp / "toolpacks.toml"
        config.write_text(f'[packs.probe]\napi_key = "{SECRET}"\n')
        server.bind(("127.0.0.1", 0))
        server.listen(16)
        grants = {"read": [str(granted)], "write": [str(out)]}
        sandboxed = {**grants, "network": False}
        control = {**grants, "sandbox": "off"}
        with (
            site.host({"packs": {"probe": {"isolate": sandboxed}}}) as host,
            site.host({"packs": {"probe": {"isolate": control}}}) as open_host,
        ):
            yield World(
                config=config,
                private=private,
                granted=granted,
                out=out,
                port=server.getsockname()[1],
                sandboxed=host.toolset(packs=["probe"]),
                control=open_host.toolset(packs=["probe"]),
            )
        for name in site.modules:
            sys.modules.pop(name, None)


def _refused(outcome: Outcome) -> bool:
    return outcome.error and "PermissionError" in outcome.text


# -- the refusals, on every road -----------------------------------------------------------


@pytest.mark.parametrize("road", ROADS)
def test_a_read_outside_the_grants_reaches_the_framework_as_the_tools_error(
    road: str, world: World
) -> None:
    """The host's config and a private file are refused; the secret never reaches the model."""
    call = ROADS[road]
    for path in (world.config, world.private / "secret.txt"):
        outcome = call(world.sandboxed, "read", {"path": str(path)})
        assert _refused(outcome), (road, path, outcome)
        assert SECRET not in outcome.text
        assert "private secret" not in outcome.text
    granted = call(world.sandboxed, "read", {"path": str(world.granted / "data.txt")})
    assert not granted.error, (road, granted)
    assert "granted data" in granted.text


@pytest.mark.parametrize("road", ROADS)
def test_a_write_outside_the_grants_is_refused_and_leaves_no_file(road: str, world: World) -> None:
    """Into a private directory and into a read-only grant: refused, no file; a grant works."""
    call = ROADS[road]
    for planted in (world.private / f"planted-{road}.txt", world.granted / f"planted-{road}.txt"):
        outcome = call(world.sandboxed, "write", {"path": str(planted), "text": "x"})
        assert _refused(outcome), (road, planted, outcome)
        assert not planted.exists(), (road, planted)
    allowed = world.out / f"ok-{road}.txt"
    outcome = call(world.sandboxed, "write", {"path": str(allowed), "text": road})
    assert not outcome.error, (road, outcome)
    assert "written" in outcome.text
    assert allowed.read_text() == road


@pytest.mark.parametrize("road", ROADS)
def test_network_false_refuses_a_loopback_connection_on_the_framework_road(
    road: str, world: World
) -> None:
    """``network = false``: the connection to the test's listener is the tool's error."""
    outcome = ROADS[road](world.sandboxed, "connect", {"port": world.port})
    assert _refused(outcome), (road, outcome)


# -- the control: the same roads without the sandbox do what the sandbox refuses -------------


@pytest.mark.parametrize("road", ROADS)
def test_without_the_sandbox_the_same_roads_read_write_and_connect(road: str, world: World) -> None:
    """Proof the assertions above would notice a sandbox that is not applied."""
    call = ROADS[road]
    leaked = call(world.control, "read", {"path": str(world.config)})
    assert not leaked.error, (road, leaked)
    assert SECRET in leaked.text
    planted = world.private / f"control-{road}.txt"
    assert not call(world.control, "write", {"path": str(planted), "text": "x"}).error
    assert planted.read_text() == "x"
    connected = call(world.control, "connect", {"port": world.port})
    assert not connected.error, (road, connected)
    assert "connected" in connected.text
