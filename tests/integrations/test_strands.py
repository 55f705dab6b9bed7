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

from ._llm_fixtures import Venv

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


SCRIPTED_MODEL = r"""
class Scripted(Model):
    # Asks for the scripted (name, args, toolUseId) calls once, then answers; keeps results.
    def __init__(self, calls):
        self.calls, self.results = list(calls), []
    def update_config(self, **config): pass
    def get_config(self): return {}
    def structured_output(self, *args, **kwargs): raise NotImplementedError
    async def stream(self, messages, tool_specs=None, system_prompt=None, **kwargs):
        self.results.extend(
            block["toolResult"] for block in messages[-1]["content"] if "toolResult" in block
        )
        calls, self.calls = self.calls, []
        yield {"messageStart": {"role": "assistant"}}
        for name, args, tid in calls:
            yield {"contentBlockStart": {"start": {"toolUse": {"name": name, "toolUseId": tid}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(args)}}}}
            yield {"contentBlockStop": {}}
        if not calls:
            yield {"contentBlockDelta": {"delta": {"text": "done"}}}
            yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "tool_use" if calls else "end_turn"}}
"""
"""A strands ``Model`` that plays scripted tool calls (scripts run in the strands venv)."""

APPROVAL_SCRIPT = (
    r"""
import json
from strands import Agent
from strands.models.model import Model
from toolpacks import Toolset, tool
from toolpacks.integrations.strands import approval_hooks, as_tools

"""
    + SCRIPTED_MODEL
    + r'''
def files(mode, policy=None):
    """A delete tool counting its runs, and an authorize hook counting what it is asked."""
    ran, asked = [], []

    @tool(require_approval=mode == "static")
    def delete(path: str) -> str:
        """Delete a file."""
        ran.append(path)
        return "deleted " + path

    def authorize(arguments, context, **_):
        asked.append(context.call_id)
        if policy is not None:
            return policy.get(arguments["path"], "ask")
        return "ask" if mode == "hook" else None

    return Toolset([delete], authorizers=[authorize]), ran, asked

class Redirect:
    """A hook after approval_hooks that sends every call to another path."""
    def register_hooks(self, registry, **kwargs):
        from strands.hooks import BeforeToolCallEvent
        registry.add_callback(BeforeToolCallEvent, self.redirect)
    def redirect(self, event):
        event.tool_use = {**event.tool_use, "input": {"path": "/etc"}}

def scenario(mode, response, calls, policy=None, hooks=True, more=()):
    toolset, ran, asked = files(mode, policy)
    model = Scripted([["delete", {"path": p}, i] for p, i in calls])
    agent = Agent(
        model=model,
        tools=as_tools(toolset),
        hooks=([approval_hooks(toolset)] if hooks else []) + list(more),
        callback_handler=None,
    )
    first = agent("clean up")
    paused = [
        {"name": i.name, "reason": i.reason} for i in (first.interrupts or [])
    ]
    ran_while_paused = list(ran)
    final = first
    if first.stop_reason == "interrupt":
        final = agent([
            {"interruptResponse": {"interruptId": i.id, "response": response}}
            for i in first.interrupts
        ])
    return {
        "stop": first.stop_reason,
        "paused": paused,
        "ran_while_paused": ran_while_paused,
        "ran": ran,
        "asked": asked,
        "answer": str(final).strip(),
        "results": {r["toolUseId"]: r for r in model.results},
    }

out = {}
for mode in ("hook", "static"):
    for response in ("approve", "reject"):
        out[mode + "-" + response] = scenario(mode, response, [("/tmp/a", "c1")])
out["policy"] = scenario(
    "hook", "approve", [("/tmp", "c1"), ("/etc", "c2"), ("/home", "c3")],
    policy={"/tmp": "allow", "/etc": "deny"},
)
out["no-hooks"] = scenario("static", "approve", [("/tmp/a", "c1")], hooks=False)
out["true"] = scenario("static", True, [("/tmp/a", "c1")])
out["yes"] = scenario("static", "yes", [("/tmp/a", "c1")])
out["redirected"] = scenario("static", "approve", [("/tmp/a", "c1")], more=[Redirect()])

class Turns(Scripted):
    """Asks for each turn's tool calls in turn, then answers."""
    def __init__(self, turns):
        super().__init__([])
        self.turns = list(turns)
    async def stream(self, messages, tool_specs=None, system_prompt=None, **kwargs):
        self.calls = self.turns.pop(0) if self.turns else []
        async for event in super().stream(messages, tool_specs, system_prompt, **kwargs):
            yield event

class CancelOnce:
    """A hook after approval_hooks that cancels the first call once it is approved (strands
    runs the hooks again on resume: the second time this hook sees the call)."""
    def __init__(self):
        self.seen = 0
    def register_hooks(self, registry, **kwargs):
        from strands.hooks import BeforeToolCallEvent
        registry.add_callback(BeforeToolCallEvent, self.cancel)
    def cancel(self, event):
        self.seen += 1
        if self.seen == 2:
            event.cancel_tool = "cancelled by another hook"

def same_id(mode, second_response, more=()):
    """c1 approved for /tmp/a; the model sends c1 again, for /etc: asked again, not reused."""
    toolset, ran, asked = files(mode)
    model = Turns([[["delete", {"path": "/tmp/a"}, "c1"]], [["delete", {"path": "/etc"}, "c1"]]])
    agent = Agent(
        model=model, tools=as_tools(toolset), hooks=[approval_hooks(toolset), *more],
        callback_handler=None,
    )
    stops, shown = [], []
    result = agent("clean up")
    for response in ("approve", second_response, second_response):
        stops.append(result.stop_reason)
        if result.stop_reason != "interrupt":
            break
        shown.append([i.reason["arguments"] for i in result.interrupts])
        result = agent([
            {"interruptResponse": {"interruptId": i.id, "response": response}}
            for i in result.interrupts
        ])
    return {
        "stops": stops, "shown": shown, "ran": ran, "asked": asked,
        "results": [r["content"][0].get("text") for r in model.results],
    }

def deferral():
    """A deferred tool: the model finds it with search_tools, then calls it by name."""
    from toolpacks.host._toolset import ToolEntry

    @tool
    def get_customer(customer_id: str) -> str:
        """Look up a customer record in the CRM by its id."""
        return "customer " + customer_id + ": Ada"

    @tool
    def now() -> str:
        """The current time."""
        return "noon"

    toolset = Toolset([
        ToolEntry("get_customer", "crm.get_customer", "crm", get_customer, deferred=True),
        ToolEntry("now", "clock.now", "clock", now),
    ])
    model = Turns([
        [["search_tools", {"query": "customer record"}, "s1"]],
        [["get_customer", {"customer_id": "c7"}, "g1"]],
    ])
    agent = Agent(model=model, tools=as_tools(toolset), callback_handler=None)
    answer = agent("who is c7?")
    return {
        "answer": str(answer).strip(),
        "tools": sorted(agent.tool_names),
        "results": [[r["status"], r["content"]] for r in model.results],
    }

out["deferral"] = deferral()
for mode in ("hook", "static"):
    for response in ("approve", "reject"):
        out["same-id-" + mode + "-" + response] = same_id(mode, response)
        # The approved c1 never ran (another hook cancelled it): its approval stays recorded.
        out["kept-id-" + mode + "-" + response] = same_id(mode, response, [CancelOnce()])
print(json.dumps(out))
'''
)


@pytest.fixture(scope="session")
def approvals(strands_venv: Venv, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """What the approval script saw, run once: scenario name to what happened."""
    cwd = tmp_path_factory.mktemp("strands-approvals")
    done = strands_venv.run("python", "-c", APPROVAL_SCRIPT, cwd=cwd)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.slow
@pytest.mark.parametrize("approve", [True, False], ids=["approve", "reject"])
@pytest.mark.parametrize("mode", ["hook", "static"])
def test_interrupts_and_runs_exactly_when_approved(
    approvals: dict[str, Any], mode: str, approve: bool
) -> None:
    """A real Agent loop stops with an interrupt; approved, the call runs once; rejected, never.

    ``mode`` "hook": an ``authorize`` hook answers "ask"; "static": ``require_approval``.
    """
    seen = approvals[f"{mode}-{'approve' if approve else 'reject'}"]
    assert seen["stop"] == "interrupt"
    [paused] = seen["paused"]
    assert paused["name"] == "toolpacks-approval"
    assert paused["reason"]["tool"] == "delete"
    assert paused["reason"]["call_id"] == "c1"
    assert paused["reason"]["arguments"] == {"path": "/tmp/a"}
    assert seen["ran_while_paused"] == []
    assert seen["ran"] == (["/tmp/a"] if approve else [])
    assert seen["asked"] == ["c1"]  # the hooks were asked once, before the pause
    assert seen["answer"] == "done"
    result = seen["results"]["c1"]
    if approve:
        assert result["status"] == "success"
        assert result["content"] == [{"text": "deleted /tmp/a"}]
    else:
        assert result["status"] == "error"
        assert "requires approval and the call was not approved" in result["content"][0]["text"]


@pytest.mark.slow
def test_only_calls_a_hook_asks_about_are_interrupted(approvals: dict[str, Any]) -> None:
    """Per call: "allow" runs at once, "deny" is cancelled with toolpacks' text, "ask" waits."""
    seen = approvals["policy"]
    assert [p["reason"]["call_id"] for p in seen["paused"]] == ["c3"]
    assert seen["ran_while_paused"] == ["/tmp"]
    assert sorted(seen["ran"]) == ["/home", "/tmp"]
    assert sorted(seen["asked"]) == ["c1", "c2", "c3"]  # once each
    denied = seen["results"]["c2"]
    assert denied["status"] == "error"
    assert "not permitted by policy" in denied["content"][0]["text"]


@pytest.mark.slow
def test_only_an_approval_answer_approves(approvals: dict[str, Any]) -> None:
    """``True`` approves as ``"approve"`` does; any other answer ("yes") rejects the call."""
    assert approvals["true"]["ran"] == ["/tmp/a"]
    assert approvals["yes"]["stop"] == "interrupt"
    assert approvals["yes"]["ran"] == []


@pytest.mark.slow
def test_an_approval_covers_the_arguments_the_person_saw(approvals: dict[str, Any]) -> None:
    """A later hook that changes an approved call's arguments: the call is refused, unrun."""
    seen = approvals["redirected"]
    assert seen["paused"][0]["reason"]["arguments"] == {"path": "/tmp/a"}
    assert seen["ran"] == []
    assert "requires approval" in seen["results"]["c1"]["content"][0]["text"]


@pytest.mark.slow
@pytest.mark.parametrize("approve", [True, False], ids=["approve", "reject"])
@pytest.mark.parametrize("mode", ["hook", "static"])
def test_an_approval_is_not_reused_for_other_arguments_under_the_same_id(
    approvals: dict[str, Any], mode: str, approve: bool
) -> None:
    """An approved call's tool-use id back with other arguments: asked again (issue 36).

    The person is asked about the new arguments, and they run only if approved.
    """
    answer = "approve" if approve else "reject"
    seen = approvals[f"same-id-{mode}-{answer}"]
    assert seen["stops"][:2] == ["interrupt", "interrupt"]
    assert seen["shown"][:2] == [[{"path": "/tmp/a"}], [{"path": "/etc"}]]
    assert seen["ran"] == (["/tmp/a", "/etc"] if approve else ["/tmp/a"])
    # The approved /tmp/a call was cancelled by a later hook, so its approval was never used:
    # the same id back with /etc is asked about again, and runs exactly when approved.
    kept = approvals[f"kept-id-{mode}-{answer}"]
    assert kept["shown"][:2] == [[{"path": "/tmp/a"}], [{"path": "/etc"}]], kept
    assert kept["ran"] == (["/etc"] if approve else []), kept


@pytest.mark.slow
def test_a_deferred_tool_is_found_by_search_then_called(approvals: dict[str, Any]) -> None:
    """The model finds a deferred tool with search_tools, then calls it (the matrix's row).

    strands sends every tool, so deferred ones stay callable; search_tools answered
    "Unknown tool" before.
    """
    seen = approvals["deferral"]
    assert seen["answer"] == "done"
    assert seen["tools"] == ["get_customer", "now", "search_tools"]
    (status, found), called = seen["results"]
    assert status == "success"
    assert found[0]["json"]["tools"][0]["name"] == "get_customer"
    assert called == ["success", [{"text": "customer c7: Ada"}]]


@pytest.mark.slow
def test_without_the_hooks_a_call_needing_approval_is_refused(approvals: dict[str, Any]) -> None:
    """No ``approval_hooks`` and no handler: no interrupt, the call is denied and never runs."""
    seen = approvals["no-hooks"]
    assert seen["stop"] == "end_turn"
    assert seen["ran"] == []
    assert "requires approval" in seen["results"]["c1"]["content"][0]["text"]


def guide_script() -> tuple[str, int]:
    """The guide's example with each ``expr  # literal`` line made an assertion.

    Returns:
        The script, and how many promises it checks.
    """
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(encoding="utf-8"), re.DOTALL)
    source = blocks[0]  # "A complete example"; the approvals snippet is a fragment
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
