"""llm both ways, with the real ``llm`` package.

- ``[llm] plugins``: installed llm tool plugins become packs (source ``llm``): a fake plugin
  in a fake site for every behaviour, and the real ``llm-tools-simpleeval`` in a real venv.
- toolpacks' ``llm`` plugin: ``TOOLPACKS_LLM_AGENT`` registers an agent's toolset into llm;
  in-process through the hook, and in a real venv through llm's own plugin loading, with the
  real ``llm-echo`` model driving llm's tool loop offline.
"""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import llm
import pytest

from toolpacks import Host, ToolError, Toolset
from toolpacks.exceptions import ConfigError, PackError, UntrustedConfigError
from toolpacks.integrations import llm as adapter

from ._llm_fixtures import PLUGIN, REPO, Venv, write_demo_pack, write_llm_dist
from .conftest import Trace

# -- installed llm plugins as packs (a fake plugin in a fake site) -----------------------------


@pytest.fixture(autouse=True)
def _isolated(isolated: None) -> None:
    """Every test runs in an empty working directory, with no TOOLPACKS_* leaking in."""


@pytest.fixture
def plugin(site: Any) -> str:
    """The fake llm plugin, installed as ``llm-fake`` with the entry point ``fake``."""
    module = site.module(PLUGIN)
    write_llm_dist(site.root, "llm-fake", "2.0", fake=module)
    return module


def llm_host(site: Any, plugins: list[str], **config: Any) -> Host:
    return Host({"llm": {"plugins": plugins}, **config}, path=[str(site.root)])


def test_listing_does_not_import_the_plugin(site: Any, plugin: str) -> None:
    """The pack is known from metadata (source llm, its distribution); a toolset imports it."""
    host = llm_host(site, ["fake"])
    info = host.pack("fake")
    assert (info.source, info.distribution, info.version) == ("llm", "llm-fake", "2.0")
    assert (info.status, info.module) == ("available", plugin)
    assert plugin not in sys.modules
    host.toolset(packs=["fake"])
    assert plugin in sys.modules
    assert host.pack("fake").status == "loaded"


def test_listing_imports_neither_llm_nor_the_plugin_in_a_fresh_process(
    site: Any, plugin: str
) -> None:
    """Building a host that mounts an llm plugin loads neither llm nor the plugin."""
    code = (
        "import sys\nfrom toolpacks import Host\n"
        f"host = Host({{'llm': {{'plugins': ['fake']}}}}, path=[{str(site.root)!r}])\n"
        "print(host.pack('fake').source, 'llm' in sys.modules, "
        f"{plugin!r} in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["llm", "False", "False"]


def test_functions_tools_and_toolboxes_become_tools(site: Any, plugin: str) -> None:
    """Every kind of llm registration is wrapped; a Toolbox needing arguments is reported."""
    host = llm_host(site, ["fake"])
    toolset = host.toolset(packs=["fake"])
    assert toolset.names() == [
        "Counter_bump",
        "Counter_current",
        "measured",
        "shout",
        "spell",
        "whisper",
        "who_called",
    ]
    assert toolset.qualified_name("shout") == "fake.shout"
    [problem] = host.load("fake").problems
    assert "Toolbox 'Greeter' was left out" in problem
    assert "[packs.<pack>.Greeter]" in problem


def test_schemas_and_descriptions_come_from_llm(site: Any, plugin: str) -> None:
    """Input schemas are llm's own; descriptions are the cleaned docstrings."""
    toolset = llm_host(site, ["fake"]).toolset(packs=["fake"])
    shout = sys.modules[plugin].shout
    llm_schema = llm.Tool.function(shout).input_schema  # type: ignore[no-untyped-call]
    assert toolset.get("shout").input_schema["properties"] == llm_schema["properties"]
    assert toolset.get("shout").input_schema["required"] == ["text"]
    assert toolset.get("shout").description == "Shout some text.\n\nSay it loud."
    assert toolset.get("spell").input_schema["properties"]["word"]["maxLength"] == 5
    assert toolset.get("who_called").input_schema["properties"] == {}


def test_calls_run_each_kind(site: Any, plugin: str) -> None:
    """Sync, async, llm.Tool, Toolbox (one instance), llm_tool_call and ToolOutput all run."""
    toolset = llm_host(site, ["fake"]).toolset(packs=["fake"])

    async def calls() -> list[Any]:
        return [
            await toolset.call("shout", {"text": "hi", "times": 2}),
            await toolset.call("whisper", {"text": "HUSH"}),
            await toolset.call("spell", {"word": "abc"}),
            await toolset.call("Counter_bump", {"by": 2}),
            await toolset.call("Counter_bump", {"by": 3}),
            await toolset.call("Counter_current", {}),
            await toolset.call("who_called", {}),
            await toolset.call("measured", {"text": "four"}),
        ]

    results = asyncio.run(calls())
    assert [r.is_error for r in results] == [False] * 8
    assert [r.value for r in results[:6]] == ["HI! HI! ", "hush...", "a-b-c", 2, 5, 5]
    assert results[6].value == {"name": "who_called", "arguments": {}}
    assert results[7].value == {"length": 4}
    assert results[7].structured == {"length": 4}


def test_bad_arguments_are_checked_against_llms_schema(site: Any, plugin: str) -> None:
    """Arguments are validated against llm's schema (types, required, extras) and its gate."""
    toolset = llm_host(site, ["fake"]).toolset(packs=["fake"])
    wrong = toolset.call_sync("shout", {"text": "hi", "times": "many"})
    assert wrong.error is not None
    assert wrong.error.kind == "invalid_arguments"
    assert "- times:" in wrong.content
    not_text = toolset.call_sync("spell", {"word": 12, "letters": 2})
    assert not_text.is_error
    assert "- word:" in not_text.content
    assert "- letters: unexpected argument" in not_text.content
    nan = toolset.call_sync("Counter_bump", {"by": float("inf")})
    assert nan.is_error
    assert "not a finite number" in nan.content


def test_toolbox_arguments_come_from_the_packs_settings(site: Any, plugin: str) -> None:
    """``[packs.fake.Greeter]`` gives the Toolbox its constructor arguments."""
    host = llm_host(site, ["fake"], packs={"fake": {"Greeter": {"language": "fr"}}})
    toolset = host.toolset(packs=["fake"])
    assert toolset.call_sync("Greeter_greet", {"name": "Ada"}).value == "[fr] hello Ada"
    assert host.load("fake").problems == []


def test_settings_for_no_toolbox_are_reported(site: Any, plugin: str) -> None:
    """A settings key that names no Toolbox is a problem of the pack, with the known names."""
    host = llm_host(site, ["fake"], packs={"fake": {"Greter": {"language": "fr"}}})
    host.toolset(packs=["fake"])
    problems = host.load("fake").problems
    assert any("'Greter' names no Toolbox" in p and "Counter, Greeter" in p for p in problems)


def test_hooks_and_approvals_apply(site: Any, plugin: str) -> None:
    """Host hooks see llm tools' calls; an agent's require_approval holds them."""
    asked: list[str] = []
    host = Host(
        {
            "llm": {"plugins": ["fake"]},
            "agents": {"writer": {"packs": ["fake"], "require_approval": ["fake.shout"]}},
        },
        path=[str(site.root)],
        approval=lambda request: asked.append(request.tool) or False,
    )
    seen: list[str] = []
    host.hook("before_invoke")(lambda tool, context: seen.append(f"{tool.name}:{context.call_id}"))
    toolset = host.toolset("writer")
    denied = toolset.call_sync("shout", {"text": "x"}, call_id="c1")
    assert denied.error is not None
    assert denied.error.kind == "denied"
    assert asked == ["shout"]
    assert toolset.call_sync("whisper", {"text": "X"}, call_id="c2").value == "x..."
    assert seen == ["whisper:c2"]


def test_a_distribution_name_selects_its_entry_points(site: Any, plugin: str) -> None:
    """``llm-fake`` (as ``llm plugins`` shows it) selects the entry point ``fake``."""
    assert llm_host(site, ["llm-fake"]).pack("fake").source == "llm"


def test_unknown_plugin_name_is_a_config_error_with_a_suggestion(site: Any, plugin: str) -> None:
    """A name no installed llm plugin has fails the host, listing them and suggesting one."""
    with pytest.raises(ConfigError) as caught:
        llm_host(site, ["fak"])
    message = str(caught.value)
    assert "llm.plugins: no installed llm plugin is named 'fak'" in message
    assert "'fake' (llm-fake 2.0)" in message
    assert "did you mean 'fake'?" in message


def test_star_mounts_every_plugin_but_toolpacks_own(site: Any, plugin: str) -> None:
    """``"*"`` takes every llm entry point except toolpacks' own (it would load itself)."""
    write_llm_dist(site.root, "toolpacks", "9.9", toolpacks="toolpacks.integrations.llm")
    other = site.module("import llm\n")
    write_llm_dist(site.root, "llm-other", "1.0", other=other)
    host = llm_host(site, ["*"])
    assert sorted(p.name for p in host.packs if p.source == "llm") == ["fake", "other"]
    with pytest.raises(ConfigError, match="toolpacks' own llm entry point"):
        llm_host(site, ["toolpacks"])


def test_name_taken_by_a_toolpacks_pack(site: Any, plugin: str, ping_source: str) -> None:
    """Named explicitly, a clash is a ConfigError; under ``"*"`` the plugin is left out."""
    site.pack("fake", ping_source)
    with pytest.raises(ConfigError, match="has the name of pack 'fake'"):
        llm_host(site, ["fake"])
    host = llm_host(site, ["*"])
    assert host.pack("fake").source == "entry_point"
    assert any("llm plugin 'fake'" in p for p in host.discovery_problems)


def test_disabled_llm_pack_is_not_imported(site: Any, plugin: str) -> None:
    """``[packs] disabled`` covers llm packs too."""
    host = llm_host(site, ["fake"], packs={"disabled": ["fake"]})
    assert host.pack("fake").status == "disabled"
    assert "fake" not in host.toolset(packs=["*"]).names()
    assert plugin not in sys.modules


def test_registering_a_non_toolbox_class_fails_the_pack(site: Any) -> None:
    """A class that is not an llm.Toolbox fails the pack, named; asking for it raises."""
    module = site.module(
        "import llm\nclass Nope: pass\n@llm.hookimpl\ndef register_tools(register):\n"
        "    register(Nope)\n"
    )
    write_llm_dist(site.root, "llm-nope", "1.0", nope=module)
    host = llm_host(site, ["nope"])
    with pytest.raises(PackError, match=r"not an llm\.Toolbox subclass"):
        host.toolset(packs=["nope"])
    assert host.pack("nope").status == "failed"


def test_plugin_that_fails_to_import_is_a_failed_pack(site: Any, plugin: str) -> None:
    """A broken plugin is reported and skipped under ``"*"``; the others work."""
    broken = site.module("raise RuntimeError('broken on purpose')\n")
    write_llm_dist(site.root, "llm-broken", "1.0", broken=broken)
    host = llm_host(site, ["*"])
    toolset = host.toolset(packs=["*"])
    assert "shout" in toolset.names()
    info = host.pack("broken")
    assert info.status == "failed"
    assert info.error is not None
    assert "broken on purpose" in info.error


def test_unknown_key_in_the_llm_table_is_a_config_error() -> None:
    """``[llm]`` is validated like every table: unknown keys name the allowed ones."""
    with pytest.raises(ConfigError, match=r"llm.plugin: unknown key; allowed keys: plugins"):
        Host({"llm": {"plugin": ["x"]}}, discover=False)


def test_untrusted_implicit_config_with_llm_plugins_is_refused(site: Any, plugin: str) -> None:
    """``[llm]`` runs plugin code: found implicitly and untrusted, building a toolset fails."""
    Path("toolpacks.toml").write_text('[llm]\nplugins = ["fake"]\n', encoding="utf-8")
    host = Host(path=[str(site.root)])
    with pytest.raises(UntrustedConfigError, match="It sets llm"):
        host.toolset()
    assert plugin not in sys.modules


# -- toolpacks as an llm plugin (in-process) ---------------------------------------------------


def llm_call(name: str, arguments: dict[str, Any], call_id: str) -> llm.ToolCall:
    return llm.ToolCall(name=name, arguments=arguments, tool_call_id=call_id)


def test_as_tools_makes_llm_tools(toolset: Toolset) -> None:
    """Each tool is an llm.Tool with the exposed name, description and schema."""
    tools = {t.name: t for t in adapter.as_tools(toolset)}
    definitions = {d["name"]: d for d in toolset.definitions("neutral")}
    assert sorted(tools) == toolset.names()
    for name, made in tools.items():
        assert made.description == definitions[name]["description"]
        assert made.input_schema == definitions[name]["input_schema"]
        assert made.plugin == "toolpacks"


def test_llm_tool_runs_through_the_toolset_with_llms_call_id(
    toolset: Toolset, trace: Trace
) -> None:
    """An ``llm_tool_call`` from llm: its id is the toolpacks call id; values come as text."""
    tools = {t.name: t for t in adapter.as_tools(toolset)}
    implementation: Any = tools["total"].implementation
    arguments = {"numbers": [1, 2]}
    text = implementation(llm_tool_call=llm_call("total", arguments, "tc_1"), **arguments)
    assert json.loads(text) == {"total": 3, "count": 2}
    assert trace.authorized == [("total", "tc_1", {"numbers": [1, 2]})]


def test_llm_tool_errors_raise_toolpacks_text(toolset: Toolset, trace: Trace) -> None:
    """Bad arguments, a denied call, a failing tool: ToolError with toolpacks' message."""
    tools: dict[str, Any] = {t.name: t.implementation for t in adapter.as_tools(toolset)}
    with pytest.raises(ToolError, match="Invalid arguments for tool 'add'"):
        tools["add"](a=1)
    with pytest.raises(ToolError, match="requires approval"):
        tools["delete"](path="/x")
    with pytest.raises(ToolError, match="Tool 'explode' failed"):
        tools["explode"](reason="r")
    assert trace.ran == ["explode"]


def test_llm_tool_works_inside_a_running_loop(toolset: Toolset) -> None:
    """The implementation works inside a running loop (llm's async chains call it there)."""
    implementation: Any = adapter.as_tools(toolset)[0].implementation

    async def main() -> str:
        result: str = implementation(a=2, b=2)
        return result

    assert asyncio.run(main()) == "4"


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """What toolpacks' llm hook registers (its toolset cache emptied)."""
    monkeypatch.setattr(adapter, "_toolsets", {})
    monkeypatch.delenv(adapter.AGENT_ENV, raising=False)
    monkeypatch.delenv(adapter.CONFIG_ENV, raising=False)
    found: list[Any] = []
    return found


def test_hook_registers_nothing_without_an_agent(registered: list[Any]) -> None:
    """With ``TOOLPACKS_LLM_AGENT`` unset, no tool is registered and no host is built."""
    adapter.register_tools(registered.append)
    assert registered == []
    assert adapter._toolsets == {}


def test_hook_registers_the_agents_toolset(
    registered: list[Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """With the agent set, its tools (an installed pack's) are registered as llm.Tools."""
    config = tmp_path / "agents.toml"
    config.write_text('[agents.timekeeper]\npacks = ["clock"]\n', encoding="utf-8")
    monkeypatch.setenv(adapter.AGENT_ENV, "timekeeper")
    monkeypatch.setenv(adapter.CONFIG_ENV, str(config))
    adapter.register_tools(registered.append)
    names = [t.name for t in registered]
    assert "days_between" in names
    assert all(isinstance(t, llm.Tool) for t in registered)
    days: Any = next(t for t in registered if t.name == "days_between").implementation
    assert days(a="2024-01-01", b="2024-01-31") == "30"


def test_hook_logs_an_unknown_agent(
    registered: list[Any],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An unknown agent registers nothing and logs why (with the configured agents)."""
    config = tmp_path / "agents.toml"
    config.write_text('[agents.timekeeper]\npacks = ["clock"]\n', encoding="utf-8")
    monkeypatch.setenv(adapter.AGENT_ENV, "timekeepr")
    monkeypatch.setenv(adapter.CONFIG_ENV, str(config))
    with caplog.at_level(logging.ERROR, logger="toolpacks.llm"):
        adapter.register_tools(registered.append)
    assert registered == []
    assert "no tools registered for TOOLPACKS_LLM_AGENT='timekeepr'" in caplog.text
    assert "did you mean 'timekeeper'?" in caplog.text


def test_hook_logs_an_untrusted_implicit_config(
    registered: list[Any], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The working directory's configuration is held to the trust rules."""
    Path("toolpacks.toml").write_text(
        '[agents.a]\npacks = ["clock"]\n[files]\ndirs = ["tools"]\n', encoding="utf-8"
    )
    monkeypatch.setenv(adapter.AGENT_ENV, "a")
    with caplog.at_level(logging.ERROR, logger="toolpacks.llm"):
        adapter.register_tools(registered.append)
    assert registered == []
    assert "is not trusted" in caplog.text


def test_adapter_module_does_not_import_llm() -> None:
    """Importing toolpacks' llm plugin module (as llm does) does not import llm itself."""
    code = "import sys, toolpacks.integrations.llm\nprint('llm' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_missing_llm_names_the_extra() -> None:
    """Without llm, ``as_tools`` raises ImportError naming ``toolpacks[llm]``."""
    code = (
        "import sys\nsys.modules['llm'] = None\n"
        "from toolpacks import Toolset\nfrom toolpacks.integrations.llm import as_tools\n"
        "try:\n    as_tools(Toolset([]))\nexcept ImportError as exc:\n    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install 'toolpacks[llm]'" in out.stdout


# -- real installs: llm, llm-tools-simpleeval and llm-echo in a venv of their own ---------------


@pytest.fixture(scope="session")
def llm_venv(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    """This checkout of toolpacks, llm, llm-tools-simpleeval, llm-echo and a demo pack."""
    base = tmp_path_factory.mktemp("llm-venv")
    demo = write_demo_pack(base / "repos")
    return Venv.create(
        base / "env", "-e", str(REPO), "llm", "llm-tools-simpleeval", "llm-echo", str(demo)
    )


@pytest.fixture
def agent_dir(tmp_path: Path) -> Path:
    """A directory with a configuration defining the agent ``demo`` (the demo pack)."""
    work = tmp_path / "project"
    work.mkdir()
    (work / "agents.toml").write_text('[agents.demo]\npacks = ["demo"]\n', encoding="utf-8")
    return work


def tool_names(listing: str) -> dict[str, str | None]:
    return {t["name"]: t.get("plugin") for t in json.loads(listing)["tools"]}


@pytest.mark.slow
def test_llm_loads_toolpacks_as_a_plugin(llm_venv: Venv, agent_dir: Path) -> None:
    """``llm tools list`` shows the agent's tools (plugin toolpacks) only when it is set."""
    plain = llm_venv.run("llm", "tools", "list", "--json", cwd=agent_dir)
    assert plain.returncode == 0, plain.stderr
    assert "describe" not in tool_names(plain.stdout)
    assert tool_names(plain.stdout)["simple_eval"] == "tools_simpleeval"
    env = {adapter.AGENT_ENV: "demo", adapter.CONFIG_ENV: "agents.toml"}
    listed = llm_venv.run("llm", "tools", "list", "--json", cwd=agent_dir, env=env)
    assert listed.returncode == 0, listed.stderr
    names = tool_names(listed.stdout)
    assert {n: names[n] for n in ("describe", "wipe", "refuse")} == dict.fromkeys(
        ("describe", "wipe", "refuse"), "toolpacks"
    )


@pytest.mark.slow
def test_llm_runs_toolpacks_tools_in_its_own_tool_loop(
    llm_venv: Venv, agent_dir: Path, tmp_path: Path
) -> None:
    """The echo model calls four tools; llm runs them through toolpacks and sends results."""
    hook_log = tmp_path / "hook.jsonl"
    calls = [
        {"name": "describe", "arguments": {"name": "Ada"}},
        {"name": "describe", "arguments": {"nam": "Ada"}},
        {"name": "wipe", "arguments": {"path": "/data"}},
        {"name": "refuse", "arguments": {"reason": "no"}},
    ]
    env = {
        adapter.AGENT_ENV: "demo",
        adapter.CONFIG_ENV: "agents.toml",
        "DEMO_HOOK_LOG": str(hook_log),
    }
    tools = ["-T", "describe", "-T", "wipe", "-T", "refuse"]
    prompt = json.dumps({"tool_calls": calls})
    done = llm_venv.run("llm", "-m", "echo", "-n", *tools, prompt, cwd=agent_dir, env=env)
    assert done.returncode == 0, done.stderr
    final = json.loads(done.stdout[done.stdout.rindex('{\n  "prompt"') :])
    results = final["tool_results"]
    outputs = [r["output"] for r in results]
    assert json.loads(outputs[0]) == {"name": "Ada", "length": 3}
    assert outputs[1].startswith("Error: Invalid arguments for tool 'describe'")
    assert "- nam: unexpected argument" in outputs[1]
    assert outputs[2].startswith("Error: Tool 'wipe' requires approval")
    assert outputs[3] == "Error: Tool 'refuse' failed: refused: no"
    logged = [json.loads(line) for line in hook_log.read_text().splitlines()]
    assert [entry["tool"] for entry in logged] == ["describe", "refuse"]
    assert logged[0]["call_id"] == results[0]["tool_call_id"]
    assert logged[1]["call_id"] == results[3]["tool_call_id"]


@pytest.mark.slow
def test_unknown_agent_is_logged_and_llm_goes_on(llm_venv: Venv, agent_dir: Path) -> None:
    """An unknown agent: llm still lists its other tools; stderr says what is wrong."""
    env = {adapter.AGENT_ENV: "dmeo", adapter.CONFIG_ENV: "agents.toml"}
    listed = llm_venv.run("llm", "tools", "list", "--json", cwd=agent_dir, env=env)
    assert listed.returncode == 0, listed.stderr
    assert "describe" not in tool_names(listed.stdout)
    assert "no tools registered for TOOLPACKS_LLM_AGENT='dmeo'" in listed.stderr
    assert "did you mean 'demo'?" in listed.stderr


SIMPLEEVAL_SCRIPT = """
import asyncio, json, sys
from toolpacks import Host
host = Host("toolpacks.toml")
listed = {p.name: [p.source, p.distribution, p.status] for p in host.packs if p.source == "llm"}
imported_before = "llm_tools_simpleeval" in sys.modules
toolset = host.toolset("calc")
good = asyncio.run(toolset.call("simple_eval", {"expression": "6 * 7"}, call_id="c1"))
bad = asyncio.run(toolset.call("simple_eval", {"expr": "1"}))
print(json.dumps({
    "listed": listed, "imported_before": imported_before, "names": toolset.names(),
    "qualified": toolset.qualified_name("simple_eval"),
    "good": [good.is_error, good.value, good.call_id], "bad": [bad.is_error, bad.content],
}))
"""


@pytest.mark.slow
def test_host_mounts_the_real_simpleeval_plugin(llm_venv: Venv, tmp_path: Path) -> None:
    """``[llm] plugins = ["tools_simpleeval"]``: the real plugin is a pack, called by toolpacks."""
    (tmp_path / "toolpacks.toml").write_text(
        '[llm]\nplugins = ["tools_simpleeval"]\n[agents.calc]\npacks = ["tools_simpleeval"]\n',
        encoding="utf-8",
    )
    done = llm_venv.run("python", "-c", SIMPLEEVAL_SCRIPT, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["listed"] == {"tools_simpleeval": ["llm", "llm-tools-simpleeval", "available"]}
    assert out["imported_before"] is False
    assert out["names"] == ["simple_eval"]
    assert out["qualified"] == "tools_simpleeval.simple_eval"
    assert out["good"] == [False, "42", "c1"]
    assert out["bad"][0] is True
    assert "- expr: unexpected argument" in out["bad"][1]


def _llm_with_input(
    venv: Venv, cwd: Path, env: dict[str, str], stdin: str, *args: str
) -> subprocess.CompletedProcess[str]:
    """Run the venv's ``llm`` on a terminal whose input is ``stdin`` (the person's answers).

    A terminal, not a pipe: llm reads piped input as part of the prompt.
    """
    import os

    controller, terminal = os.openpty()
    try:
        os.write(controller, stdin.encode())
        process = subprocess.Popen(
            [str(venv.root / "bin" / "llm"), *args],
            stdin=terminal,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=cwd,
            env={**venv.env, **env},
        )
        os.close(terminal)
        terminal = -1
        try:
            out, err = process.communicate(timeout=300)
        finally:
            process.kill()
    finally:
        os.close(controller)
        if terminal >= 0:
            os.close(terminal)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


@pytest.mark.slow
@pytest.mark.parametrize("answer", ["y", "n"])
def test_llms_approval_prompt_approves_for_toolpacks(
    llm_venv: Venv, agent_dir: Path, answer: str
) -> None:
    """``llm --ta``: the person's yes runs a tool that requires approval; a no never does."""
    env = {adapter.AGENT_ENV: "demo", adapter.CONFIG_ENV: "agents.toml"}
    prompt = json.dumps({"tool_calls": [{"name": "wipe", "arguments": {"path": "/data"}}]})
    done = _llm_with_input(
        llm_venv, agent_dir, env, answer + "\n", "-m", "echo", "-n", "--ta", "-T", "wipe", prompt
    )
    assert done.returncode == 0, done.stderr
    assert "Approve tool call?" in done.stdout  # llm's own prompt (click writes it there)
    final = json.loads(done.stdout[done.stdout.rindex('{\n  "prompt"') :])
    [result] = final["tool_results"]
    if answer == "y":
        assert result["output"] == "wiped /data"
    else:
        assert result["output"].startswith("Cancelled")


@pytest.mark.slow
def test_llm_tools_list_shows_each_parameter(llm_venv: Venv, agent_dir: Path) -> None:
    """``llm tools list`` prints each parameter of a toolpacks tool, not ``**arguments``."""
    env = {adapter.AGENT_ENV: "demo", adapter.CONFIG_ENV: "agents.toml"}
    listed = llm_venv.run("llm", "tools", "list", cwd=agent_dir, env=env)
    assert listed.returncode == 0, listed.stderr
    assert "wipe(path: str, *, llm_tool_call=None) (plugin: toolpacks)" in listed.stdout
    assert "**arguments" not in listed.stdout
