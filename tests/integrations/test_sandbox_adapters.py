"""The sandbox's refusals on the framework-adapter roads (issues 32 and 36).

An isolated pack (``isolate = {...}``: a real child process under real Landlock rules; the
probe pack of ``tests/packs/test_sandbox.py`` in a fake site, no new virtual environment)
reads files outside its grants (the host's ``toolpacks.toml`` holding a secret, a file in
the user's home, a private directory), writes outside its grants, and connects to a
loopback listener with ``network = false``. Each adapter calls those tools the way its
framework does: pydantic-ai's agent run on both of the adapter's roads (its short run of a
plain tool, and ``Toolset.call`` when ``deps`` carry a principal), openai-agents'
``FunctionTool.on_invoke_tool``, LangChain's ``BaseTool.ainvoke``, an llm ``chain``, and a
real ``strands.Agent`` loop in a venv of its own (strands pins ``mcp<2.2``, see
``test_strands.py``). The framework receives the tool's error (the ``PermissionError``), the
refused file is not created, and a granted read and write work (so the refusal is the
sandbox's, not a broken call).

The control host runs the same pack with ``sandbox = "off"``: through the same roads the same
calls then read the secret, plant the file and connect, so each refusal asserted above is one
the test would notice missing.

One sandboxed host and one control host per module here, and one script run in the strands
venv (its own two hosts).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import FakeSite
from tests.integrations._llm_fixtures import Venv
from tests.integrations.test_strands import SCRIPTED_MODEL
from tests.packs.test_sandbox import PROBE

from toolpacks import Principal, Toolset
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


def _pydantic_ai(
    toolset: Toolset, name: str, arguments: dict[str, Any], deps: Any = None
) -> Outcome:
    """A real ``Agent.run_sync`` whose scripted model calls the tool once.

    Without ``deps`` the adapter runs a plain tool itself (its short road); with a principal
    in ``deps`` the call goes through ``Toolset.call``.
    """
    from pydantic_ai import Agent, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from toolpacks.integrations.pydantic_ai import as_toolset

    returned: list[ToolReturnPart] = []

    def respond(messages: list[Any], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart(name, json.dumps(arguments), "c1")])
        returned.extend(p for p in messages[-1].parts if isinstance(p, ToolReturnPart))
        return ModelResponse(parts=[TextPart("done")])

    agent = Agent(FunctionModel(respond), toolsets=[as_toolset(toolset)], deps_type=object)
    assert agent.run_sync("go", deps=deps).output == "done"
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
    """A real llm ``chain`` whose scripted model asks for the tool call once."""
    import llm

    from toolpacks.integrations.llm import as_tools

    results: list[Any] = []

    class Scripted(llm.Model):  # type: ignore[misc]
        model_id = "toolpacks-scripted-sandbox"
        supports_tools = True

        def execute(self, prompt: Any, stream: bool, response: Any, conversation: Any) -> Any:
            results.extend(prompt.tool_results)
            if results:
                yield "done"
                return
            response.add_tool_call(llm.ToolCall(name=name, arguments=arguments, tool_call_id="c1"))
            yield ""

    assert Scripted().chain("go", tools=as_tools(toolset)).text() == "done"
    (result,) = results
    return Outcome(result.exception is not None, f"{result.output} {result.exception or ''}")


def _pydantic_ai_principal(toolset: Toolset, name: str, arguments: dict[str, Any]) -> Outcome:
    """pydantic-ai with a principal in ``deps``: the adapter's ``Toolset.call`` road."""
    return _pydantic_ai(toolset, name, arguments, deps=Principal("alice"))


ROADS: dict[str, Road] = {
    "pydantic-ai": _pydantic_ai,
    "pydantic-ai-principal": _pydantic_ai_principal,
    "openai-agents": _openai_agents,
    "langchain": _langchain,
    "llm": _llm,
}


# -- one sandboxed host and one control host per module ----------------------------------------


@dataclass
class World:
    """The paths, the listener's port and the two hosts' toolsets."""

    site: Path
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
                site=site.root,
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


@pytest.fixture(scope="module")
def home_file() -> Iterator[Path]:
    """A file in the user's home directory, which no isolated pack is granted."""
    path = Path.home() / f".toolpacks-sandbox-adapters-{os.getpid()}"
    path.write_text("home secret")
    try:
        yield path
    finally:
        path.unlink()


def _refused(outcome: Outcome) -> bool:
    return outcome.error and "PermissionError" in outcome.text


# -- the refusals, on every road -----------------------------------------------------------


@pytest.mark.parametrize("road", ROADS)
def test_a_read_outside_the_grants_reaches_the_framework_as_the_tools_error(
    road: str, world: World, home_file: Path
) -> None:
    """The host's config, a home and a private file are refused; no secret reaches the model."""
    call = ROADS[road]
    for path in (world.config, home_file, world.private / "secret.txt"):
        outcome = call(world.sandboxed, "read", {"path": str(path)})
        assert _refused(outcome), (road, path, outcome)
        assert SECRET not in outcome.text
        assert "home secret" not in outcome.text
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
    assert (
        "private secret"
        in call(world.control, "read", {"path": str(world.private / "secret.txt")}).text
    )
    planted = world.private / f"control-{road}.txt"
    assert not call(world.control, "write", {"path": str(planted), "text": "x"}).error
    assert planted.read_text() == "x"
    connected = call(world.control, "connect", {"port": world.port})
    assert not connected.error, (road, connected)
    assert "connected" in connected.text


# -- strands: a real ``strands.Agent`` loop in its own venv ------------------------------------

STRANDS = (
    r"""
import json, sys
from toolpacks import Host
from toolpacks.integrations.strands import as_tools
from strands import Agent
from strands.models.model import Model

paths = json.loads(sys.argv[1])


"""
    + SCRIPTED_MODEL
    + r"""

def run(isolate, calls):
    config = {"packs": {"probe": {"isolate": isolate}}}
    with Host(config, path=[paths["site"]]) as host:
        model = Scripted([(name, args, tid) for tid, name, args in calls])
        agent = Agent(model=model, tools=as_tools(host.toolset(packs=["probe"])),
                      callback_handler=None)
        answer = str(agent("go")).strip()
    return {"answer": answer, **{r["toolUseId"]: r for r in model.results}}


grants = {"read": [paths["granted"]], "write": [paths["out"]]}
port = paths["port"]
print(json.dumps({
    "sandboxed": run({**grants, "network": False}, [
        ["config", "read", {"path": paths["config"]}],
        ["private", "read", {"path": paths["private"] + "/secret.txt"}],
        ["home", "read", {"path": paths["home"]}],
        ["granted", "read", {"path": paths["granted"] + "/data.txt"}],
        ["plant", "write", {"path": paths["private"] + "/planted-strands.txt", "text": "x"}],
        ["plant_ro", "write", {"path": paths["granted"] + "/planted-strands.txt", "text": "x"}],
        ["ok", "write", {"path": paths["out"] + "/ok-strands.txt", "text": "strands"}],
        ["connect", "connect", {"port": port}],
    ]),
    "control": run({**grants, "sandbox": "off"}, [
        ["config", "read", {"path": paths["config"]}],
        ["plant", "write", {"path": paths["private"] + "/control-strands.txt", "text": "x"}],
        ["connect", "connect", {"port": port}],
    ]),
}))
"""
)


@pytest.fixture(scope="module")
def strands_seen(
    world: World, home_file: Path, strands_venv: Venv, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    """What the strands agent's model received, sandboxed and with the sandbox off."""
    venv = strands_venv
    paths = {
        "site": str(world.site),
        "config": str(world.config),
        "private": str(world.private),
        "granted": str(world.granted),
        "out": str(world.out),
        "port": world.port,
        "home": str(home_file),
    }
    cwd = tmp_path_factory.mktemp("strands-sandbox-run")
    done = venv.run("python", "-c", STRANDS, json.dumps(paths), cwd=cwd)
    assert done.returncode == 0, done.stderr
    seen: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return seen


def _strands(result: dict[str, Any]) -> Outcome:
    text = " ".join(str(block.get("text", "")) for block in result["content"])
    return Outcome(result["status"] == "error", text)


@pytest.mark.timeout(600)  # the first one builds the strands venv
def test_strands_receives_the_sandboxs_refusals(world: World, strands_seen: dict[str, Any]) -> None:
    """Read, write outside the grants and ``network = false``: strands' error tool results."""
    seen = strands_seen["sandboxed"]
    assert seen["answer"] == "done"
    for tid in ("config", "private", "home", "plant", "plant_ro", "connect"):
        outcome = _strands(seen[tid])
        assert _refused(outcome), (tid, outcome)
        assert SECRET not in outcome.text
        assert "home secret" not in outcome.text
    assert not (world.private / "planted-strands.txt").exists()
    assert not (world.granted / "planted-strands.txt").exists()
    granted = _strands(seen["granted"])
    assert not granted.error, granted
    assert "granted data" in granted.text
    assert not _strands(seen["ok"]).error
    assert (world.out / "ok-strands.txt").read_text() == "strands"


@pytest.mark.timeout(600)  # the first one builds the strands venv
def test_strands_without_the_sandbox_reads_writes_and_connects(
    world: World, strands_seen: dict[str, Any]
) -> None:
    """The control: the same strands road leaks what the sandbox refuses."""
    seen = strands_seen["control"]
    leaked = _strands(seen["config"])
    assert not leaked.error, leaked
    assert SECRET in leaked.text
    assert not _strands(seen["plant"]).error
    assert (world.private / "control-strands.txt").read_text() == "x"
    connected = _strands(seen["connect"])
    assert not connected.error, connected
    assert "connected" in connected.text
