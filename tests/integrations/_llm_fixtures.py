"""Helpers for the llm tests: a fake llm plugin, and a real venv with llm and its plugins."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PLUGIN = """
    import llm

    def shout(text: str, times: int = 1) -> str:
        '''Shout some text.

        Say it loud.
        '''
        return (text.upper() + "! ") * times

    async def whisper(text: str) -> str:
        '''Whisper some text.'''
        return text.lower() + "..."

    def who_called(llm_tool_call) -> dict:
        '''Report the llm tool call it was given.'''
        return {"name": llm_tool_call.name, "arguments": llm_tool_call.arguments}

    def measured(text: str):
        '''Measure some text, with an attachment-free ToolOutput.'''
        return llm.ToolOutput(output={"length": len(text)})

    spelled = llm.Tool(
        name="spell",
        description="Spell a word.",
        input_schema={
            "type": "object",
            "properties": {"word": {"type": "string", "maxLength": 5}},
            "required": ["word"],
        },
        implementation=lambda word: "-".join(word),
    )

    class Counter(llm.Toolbox):
        '''Count things.'''

        def __init__(self, start: int = 0):
            self.value = start

        def bump(self, by: int) -> int:
            '''Add to the counter.'''
            self.value += by
            return self.value

        def current(self) -> int:
            '''The counter's value.'''
            return self.value

    class Greeter(llm.Toolbox):
        '''Greet in a configured language.'''

        def __init__(self, language: str):
            self.language = language

        def greet(self, name: str) -> str:
            '''Greet someone.'''
            return f"[{self.language}] hello {name}"

    @llm.hookimpl
    def register_tools(register):
        register(shout)
        register(whisper)
        register(who_called)
        register(measured)
        register(spelled)
        register(Counter)
        register(Greeter)
"""
"""A fake llm plugin: functions (sync, async, ``llm_tool_call``), an ``llm.Tool`` and two
Toolboxes, one of which needs constructor arguments."""


def write_llm_dist(root: Path, dist: str, version: str, **entry_points: str) -> Path:
    """A ``*.dist-info`` in ``root`` declaring ``name = module`` entry points in group ``llm``."""
    info = root / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n", encoding="utf-8"
    )
    lines = ["[llm]", *(f"{k} = {v}" for k, v in entry_points.items())]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return info


def uv() -> list[str]:
    """The uv command (beside this Python, on PATH, or as a module)."""
    beside = Path(sys.executable).parent / "uv"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("uv")
    return [found] if found else [sys.executable, "-m", "uv"]


class Venv:
    """A real virtual environment built with uv, and ways to run its programs."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.python = root / "bin" / "python"
        self.env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("TOOLPACKS_", "LLM_")) and k not in ("VIRTUAL_ENV", "PYTHONPATH")
        }
        self.env["TOOLPACKS_CACHE_DIR"] = str(root / "cache")
        self.env["TOOLPACKS_TRUST_FILE"] = str(root / "trusted.json")
        self.env["LLM_USER_PATH"] = str(root / "llm-home")

    @classmethod
    def create(cls, root: Path, *requirements: str) -> Venv:
        """A fresh environment with ``requirements`` installed (uv pip install ARGS)."""
        subprocess.run(
            [*uv(), "venv", str(root), "--python", sys.executable, "--quiet"],
            check=True,
            timeout=300,
        )
        venv = cls(root)
        venv.install(*requirements)
        return venv

    def install(self, *requirements: str) -> None:
        """``uv pip install`` into this environment."""
        subprocess.run(
            [*uv(), "pip", "install", "--python", str(self.python), "--quiet", *requirements],
            check=True,
            env=self.env,
            timeout=600,
        )

    def run(
        self, program: str, *args: str, cwd: Path, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run a program of the environment (``python``, ``llm``) and capture its output."""
        return subprocess.run(
            [str(self.root / "bin" / program), *args],
            capture_output=True,
            text=True,
            cwd=cwd,
            env={**self.env, **(env or {})},
            timeout=300,
        )


DEMO_PACK = """
    import json, os
    from toolpacks import ToolError, hookimpl, tool

    @tool
    def describe(name: str) -> dict:
        '''Describe a name.'''
        return {"name": name, "length": len(name)}

    @tool(require_approval=True)
    def wipe(path: str) -> str:
        '''Wipe a path (requires approval).'''
        return "wiped " + path

    @tool
    def refuse(reason: str) -> str:
        '''Fail on purpose.'''
        raise ToolError("refused: " + reason)

    @hookimpl
    def register_tools(register):
        register(describe)
        register(wipe)
        register(refuse)

    @hookimpl
    def before_invoke(tool, arguments, context):
        log = os.environ.get("DEMO_HOOK_LOG")
        if log:
            with open(log, "a") as f:
                f.write(json.dumps({"tool": tool.name, "call_id": context.call_id}) + "\\n")
"""
"""A toolpacks pack installed into the llm venv: a structured tool, one that needs approval,
one that fails, and a hook that logs every call with its id."""


def write_demo_pack(base: Path) -> Path:
    """The demo pack as a distribution in its own directory (``tp-demo``, pack ``demo``)."""
    root = base / "tp-demo"
    src = root / "src" / "tp_demo"
    src.mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        textwrap.dedent(
            """\
            [build-system]
            requires = ["hatchling"]
            build-backend = "hatchling.build"

            [project]
            name = "tp-demo"
            version = "1.0.0"
            dependencies = ["toolpacks"]

            [project.entry-points.toolpacks]
            demo = "tp_demo"

            [tool.hatch.build.targets.wheel]
            packages = ["src/tp_demo"]
            """
        ),
        encoding="utf-8",
    )
    (src / "__init__.py").write_text(textwrap.dedent(DEMO_PACK), encoding="utf-8")
    return root
