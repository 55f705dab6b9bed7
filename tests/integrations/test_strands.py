"""Strands Agents tools from a toolset, with the real strands-agents.

strands-agents pins ``mcp<2.2`` and toolpacks' MCP extra needs ``mcp>=2.3``, so strands is
tested in a venv of its own (built with uv once per session) where toolpacks is installed
without the MCP extra. A script there drives a real ``strands.Agent`` with a scripted model
(no network) and calls tools directly (``agent.tool.NAME(...)``); it prints what it saw.
"""

from __future__ import annotations

import ast
import io
import json
import re
import subprocess
import sys
import tokenize
from pathlib import Path
from typing import Any

import pytest

from toolpacks import Toolset, tool
from toolpacks.integrations.strands import tool_spec

from ._llm_fixtures import REPO, Venv

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "integrations" / "strands.md"

SCRIPT = r'''
import asyncio, json
from importlib import metadata
from toolpacks import Host, hookimpl, tool
from toolpacks.integrations.strands import as_tools
from strands import Agent
from strands.models.model import Model
from strands.tools.registry import ToolRegistry


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b

@tool
def info(name: str) -> dict:
    """Describe a name."""
    return {"name": name, "length": len(name)}

@tool(require_approval=True)
def delete(path: str) -> str:
    """Delete a path (requires approval)."""
    return "deleted " + path

class Pack:
    @hookimpl
    def register_tools(self, register):
        register(add); register(info); register(delete)

seen = {"hook": [], "approval": [], "invocation_state": []}

class Scripted(Model):
    """Answers each turn with the next scripted tool calls, then with text."""
    def __init__(self, turns):
        self.turns, self.results = list(turns), []
    def update_config(self, **config): pass
    def get_config(self): return {}
    def structured_output(self, *args, **kwargs): raise NotImplementedError
    async def stream(self, messages, tool_specs=None, system_prompt=None, **kwargs):
        self.results.extend(
            block["toolResult"] for block in messages[-1]["content"] if "toolResult" in block
        )
        self.specs = tool_specs
        calls = self.turns.pop(0) if self.turns else []
        yield {"messageStart": {"role": "assistant"}}
        for name, args, tid in calls:
            yield {"contentBlockStart": {"start": {"toolUse": {"name": name, "toolUseId": tid}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(args)}}}}
            yield {"contentBlockStop": {}}
        if not calls:
            yield {"contentBlockDelta": {"delta": {"text": "done"}}}
            yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "tool_use" if calls else "end_turn"}}

def approve(request):
    seen["approval"].append([request.tool, request.call_id])
    return request.arguments["path"] == "/tmp/ok"

host = Host({"agents": {"ops": {"packs": ["ops"]}}}, discover=False, approval=approve)
host.add_pack(Pack(), name="ops")

@host.hook("before_invoke")
def record(tool, context):
    seen["hook"].append([tool.name, context.call_id])
    seen["invocation_state"].append(sorted(k for k in context.invocation_state if k == "run"))

toolset = host.toolset("ops")
tools = as_tools(toolset)
model = Scripted([
    [
        ["info", {"name": "Ada"}, "tu_info"],
        ["add", {"a": "two"}, "tu_bad"],
        ["delete", {"path": "/etc"}, "tu_denied"],
        ["delete", {"path": "/tmp/ok"}, "tu_approved"],
    ],
])
agent = Agent(model=model, tools=tools, callback_handler=None)
answer = agent("go", invocation_state={"run": 7})
direct = agent.tool.add(a=2, b=5)

registry = ToolRegistry()
registry.process_tools(as_tools(toolset))
streamed = []
async def stream_directly():
    use = {"toolUseId": "tu_stream", "name": "add", "input": {"a": 1, "b": True}}
    async for event in registry.registry["add"].stream(use, {}):
        streamed.append(event)
asyncio.run(stream_directly())

print(json.dumps({
    "answer": str(answer).strip(),
    "results": {r["toolUseId"]: r for r in model.results},
    "specs": sorted(s["name"] for s in model.specs),
    "direct": direct,
    "streamed": streamed,
    "types": sorted({t.tool_type for t in tools}),
    "mcp": metadata.version("mcp"),
    **seen,
}))
'''


@pytest.fixture(scope="session")
def strands_venv(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    """This checkout of toolpacks (no MCP extra) and strands-agents from the package index."""
    return Venv.create(
        tmp_path_factory.mktemp("strands-venv") / "env", "-e", str(REPO), "strands-agents"
    )


@pytest.fixture(scope="session")
def outcome(strands_venv: Venv, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """What the script saw, run once."""
    done = strands_venv.run("python", "-c", SCRIPT, cwd=tmp_path_factory.mktemp("strands-run"))
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.slow
def test_agent_loop_runs_tools_through_the_toolset(outcome: dict[str, Any]) -> None:
    """The agent's tool calls reach toolpacks (hook), with strands' toolUseId as call id."""
    assert outcome["answer"] == "done"
    assert outcome["specs"] == ["add", "delete", "info"]
    assert ["info", "tu_info"] in outcome["hook"]
    assert ["delete", "tu_approved"] in outcome["hook"]
    assert ["delete", "tu_denied"] not in outcome["hook"]
    assert outcome["invocation_state"][0] == ["run"]
    assert outcome["types"] == ["toolpacks"]


@pytest.mark.slow
def test_structured_value_is_a_json_block(outcome: dict[str, Any]) -> None:
    """A dict return value reaches the model as a ``{"json": ...}`` content block."""
    result = outcome["results"]["tu_info"]
    assert result["status"] == "success"
    assert result["content"] == [{"json": {"name": "Ada", "length": 3}}]


@pytest.mark.slow
def test_bad_arguments_are_an_error_result_with_toolpacks_text(outcome: dict[str, Any]) -> None:
    """Invalid arguments: status error, per-argument text; the tool never runs."""
    result = outcome["results"]["tu_bad"]
    assert result["status"] == "error"
    [block] = result["content"]
    assert block["text"].startswith("Invalid arguments for tool 'add'")
    assert "- b: missing required argument" in block["text"]
    assert ["add", "tu_bad"] not in outcome["hook"]


@pytest.mark.slow
def test_approvals_go_to_the_toolsets_handler(outcome: dict[str, Any]) -> None:
    """The handler is asked with strands' ids; a refusal is an error result the model reads."""
    assert outcome["approval"] == [["delete", "tu_denied"], ["delete", "tu_approved"]]
    denied = outcome["results"]["tu_denied"]
    assert denied["status"] == "error"
    assert "requires approval and the call was not approved" in denied["content"][0]["text"]
    approved = outcome["results"]["tu_approved"]
    assert approved["content"] == [{"text": "deleted /tmp/ok"}]


@pytest.mark.slow
def test_direct_call_and_stream_api(outcome: dict[str, Any]) -> None:
    """``agent.tool.add(...)`` and ``AgentTool.stream`` give strands ToolResults."""
    assert outcome["direct"]["status"] == "success"
    assert outcome["direct"]["content"] == [{"text": "7"}]
    [event] = outcome["streamed"]
    assert (event["toolUseId"], event["status"]) == ("tu_stream", "error")
    assert "- b:" in event["content"][0]["text"]  # a boolean is no integer (the gate)


@pytest.mark.slow
def test_strands_venv_has_the_mcp_strands_pins(outcome: dict[str, Any]) -> None:
    """Toolpacks works beside strands' ``mcp<2.2`` (installed without the MCP extra)."""
    major, minor = (int(p) for p in outcome["mcp"].split(".")[:2])
    assert (major, minor) < (2, 2)


def guide_script() -> tuple[str, int]:
    """The guide's example with each ``expr  # literal`` line made an assertion.

    Returns:
        The script, and how many promises it checks.
    """
    [source] = re.findall(r"```python\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.DOTALL)
    comments = {
        tok.start[0]: tok.string.lstrip("#").strip()
        for tok in tokenize.generate_tokens(io.StringIO(source).readline)
        if tok.type == tokenize.COMMENT and tok.line[: tok.start[1]].strip()
    }
    tree = ast.parse(source)
    checks = 0
    for index, node in enumerate(tree.body):
        promise = comments.get(node.lineno)
        if isinstance(node, ast.Expr) and promise is not None:
            expected = ast.parse(promise, mode="eval").body
            check = ast.Compare(node.value, [ast.Eq()], [expected])
            tree.body[index] = ast.copy_location(
                ast.Assert(check, ast.Constant(ast.unparse(node.value))), node
            )
            checks += 1
    return ast.unparse(ast.fix_missing_locations(tree)), checks


@pytest.mark.slow
def test_the_guides_example_runs(strands_venv: Venv, tmp_path: Path) -> None:
    """docs/guides/integrations/strands.md: the example runs and keeps its promises."""
    script, checks = guide_script()
    assert checks == 5
    done = strands_venv.run("python", "-c", script, cwd=tmp_path)
    assert done.returncode == 0, done.stderr


# -- without strands (the main environment) ----------------------------------------------------


def test_tool_spec_carries_schemas_and_hints() -> None:
    """The ToolSpec has strands' ``{"json": schema}`` shapes and MCP-style hint names."""

    @tool(read_only=True, idempotent=True)
    def lookup(key: str) -> dict[str, int]:
        """Look a key up."""
        return {key: 1}

    [definition] = Toolset([lookup]).definitions("neutral")
    spec = tool_spec(definition)
    assert spec["name"] == "lookup"
    assert spec["description"] == "Look a key up."
    assert spec["inputSchema"] == {"json": definition["input_schema"]}
    assert spec["outputSchema"] == {"json": definition["output_schema"]}
    assert spec["annotations"] == {"readOnlyHint": True, "idempotentHint": True}


def test_missing_strands_names_the_extra() -> None:
    """Without strands-agents, ``as_tools`` raises ImportError naming ``toolpacks[strands]``."""
    code = (
        "import sys\nsys.modules['strands'] = None\n"
        "from toolpacks import Toolset\nfrom toolpacks.integrations.strands import as_tools\n"
        "try:\n    as_tools(Toolset([]))\nexcept ImportError as exc:\n    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install 'toolpacks[strands]'" in out.stdout


def test_module_does_not_import_strands() -> None:
    """Importing the adapter module does not import strands."""
    code = "import sys, toolpacks.integrations.strands\nprint('strands' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
