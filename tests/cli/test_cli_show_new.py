"""``show`` (hints, output schema, failed packs), ``new``, ``new-tool`` and ``serve`` without MCP.

Through the real CLI in a subprocess, in each kind of working directory (``place``).
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

RICH = """
    from dataclasses import dataclass
    from toolpacks import hookimpl, tool

    @dataclass
    class Forecast:
        '''A forecast.'''
        city: str
        celsius: float

    @tool(tags=["weather"], read_only=False, destructive=True, idempotent=True, open_world=False)
    def forecast(city: str) -> Forecast:
        '''Forecast the weather.

        Args:
            city: Where.
        '''
        return Forecast(city, 21.5)

    @hookimpl
    def register_tools(register):
        register(forecast)
"""

BROKEN = "raise RuntimeError('bad build')\n"


# -- show -----------------------------------------------------------------------------------------


def test_show_tool_prints_hints_and_output_schema(cli: Any, site: Any, place: Any) -> None:
    """The human output has every hint and the output schema, as ``--json`` has."""
    site.pack("rich", RICH)
    place.configure('[agents.a]\npacks = ["rich"]\n')
    done = cli.run(*place.argv("show", "rich.forecast"), cwd=place.cwd)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "hints: read-only no, destructive yes, idempotent yes, open-world no" in out
    assert "requires approval: no" in out
    assert "input schema:" in out
    schema = out.split("output schema:\n", 1)[1]
    assert json.loads(schema)["properties"]["celsius"]["type"] == "number"
    data = json.loads(cli.run(*place.argv("show", "rich.forecast", "--json"), cwd=place.cwd).stdout)
    assert data["hints"] == {
        "read_only": False,
        "destructive": True,
        "idempotent": True,
        "open_world": False,
    }
    assert data["output_schema"] == json.loads(schema)


def test_show_tool_with_unstated_hints(cli: Any, site: Any, clock_source: str, place: Any) -> None:
    """Hints a tool does not state are shown as such; a text result's schema is a string."""
    site.pack("clock", clock_source)
    place.configure('[agents.a]\npacks = ["clock"]\n')
    done = cli.run(*place.argv("show", "clock.now"), cwd=place.cwd)
    assert done.returncode == 0, done.stderr
    assert "hints: read-only not stated, destructive not stated" in done.stdout
    assert json.loads(done.stdout.split("output schema:\n", 1)[1]) == {"type": "string"}


@pytest.mark.parametrize("json_output", [False, True], ids=["human", "json"])
@pytest.mark.parametrize("name", ["broken", "broken.tool"])
def test_show_of_a_failed_pack_exits_non_zero(
    cli: Any, site: Any, place: Any, name: str, json_output: bool
) -> None:
    """``show broken`` shows the pack and exits 1, saying why it failed."""
    site.pack("broken", BROKEN, version="0.2")
    place.configure('[agents.a]\npacks = ["broken"]\n')
    argv = ["show", name, *(["--json"] if json_output else [])]
    done = cli.run(*place.argv(*argv), cwd=place.cwd)
    assert done.returncode == 1, done.stdout + done.stderr
    line = cli.error_line(done.stderr)
    assert line.startswith("toolpacks: error: pack 'broken' failed to load: ")
    assert "RuntimeError: bad build" in line
    if name == "broken" and json_output:
        assert json.loads(done.stdout)["status"] == "failed"


def test_show_suggests_a_close_tool(cli: Any, site: Any, clock_source: str, place: Any) -> None:
    """A misspelt tool name gets a did-you-mean."""
    site.pack("clock", clock_source)
    place.configure('[agents.a]\npacks = ["clock"]\n')
    done = cli.run(*place.argv("show", "clock.nwo"), cwd=place.cwd)
    assert done.returncode == 2
    assert "pack 'clock' has no tool 'clock.nwo'" in cli.error_line(done.stderr)
    assert "  did you mean 'clock.now'?" in done.stderr.splitlines()
    done = cli.run(*place.argv("show", "clokc"), cwd=place.cwd)
    assert "did you mean 'clock'?" in done.stderr


# -- new and new-tool -----------------------------------------------------------------------------


def test_new_prints_the_install_with_the_test_extra(cli: Any, place: Any) -> None:
    """The next step printed installs ``.[test]``, and the scaffold declares that extra."""
    place.configure("[packs]\n")
    done = cli.run(*place.argv("new", "weather"), cwd=place.cwd)
    assert done.returncode == 0, done.stderr
    assert "pip install -e '.[test]' && pytest" in done.stdout
    pyproject = tomllib.loads((place.cwd / "toolpacks-weather" / "pyproject.toml").read_text())
    assert any(
        dep.startswith("pytest") for dep in pyproject["project"]["optional-dependencies"]["test"]
    )


@pytest.mark.parametrize(
    ("name", "summary"),
    [("get_weather", "Get weather"), ("convertCurrency", "Convert currency"), ("sum", "Sum")],
)
def test_new_tool_fits_its_name(cli: Any, place: Any, name: str, summary: str) -> None:
    """The template's description comes from the name; it loads and runs as written."""
    place.configure("[packs]\n")
    done = cli.run(*place.argv("new-tool", name), cwd=place.cwd)
    assert done.returncode == 0, done.stderr
    tool_md = (place.cwd / "tools" / name / "TOOL.md").read_text(encoding="utf-8")
    handler = (place.cwd / "tools" / name / "handler.py").read_text(encoding="utf-8")
    assert f"description: {summary}." in tool_md
    assert "Greet" not in tool_md + handler
    config = place.cwd.parent / f"tools-{place.kind}.toml"
    config.write_text(f'[files]\ndirs = ["{place.cwd / "tools"}"]\n', encoding="utf-8")
    argv = ["--config", str(config), "call", f"local.{name}", "--args", '{"text": "x"}']
    called = cli.run(*argv, cwd=place.cwd, env=cli.env(TOOLPACKS_PACKS="local"))
    assert called.returncode == 0, called.stdout + called.stderr
    assert called.stdout.startswith(f"{name} received 'x'")


def test_new_tool_greet_keeps_the_greeting(cli: Any, place: Any) -> None:
    """``new-tool greet`` (the documented example) still writes the greeting tool."""
    done = cli.run(*place.argv("new-tool", "greet"), cwd=place.cwd)
    assert done.returncode == 0, done.stderr
    assert "Greet someone by name" in (place.cwd / "tools/greet/TOOL.md").read_text()


def test_new_tool_refuses_an_existing_tool(cli: Any, place: Any) -> None:
    """Scaffolding over an existing tool is a one-line error; nothing is overwritten."""
    assert cli.run(*place.argv("new-tool", "sum"), cwd=place.cwd).returncode == 0
    done = cli.run(*place.argv("new-tool", "sum"), cwd=place.cwd)
    assert done.returncode == 2
    assert "already exists" in cli.error_line(done.stderr)


# -- serve without the MCP SDK --------------------------------------------------------------------

WITHOUT_MCP = """
import runpy, sys

class NoMcp:
    def find_spec(self, name, path=None, target=None):
        if name == "mcp" or name.startswith("mcp."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NoMcp())
sys.argv = ["toolpacks", *sys.argv[1:]]
runpy.run_module("toolpacks", run_name="__main__", alter_sys=True)
"""


@pytest.mark.parametrize("argv", [["serve", "--http", "127.0.0.1:0", "--agent", "a"]])
def test_serve_without_the_mcp_sdk_says_what_to_install(
    cli: Any, site: Any, clock_source: str, place: Any, argv: list[str]
) -> None:
    """No MCP SDK, over HTTP: one line naming the extra, exit 2, nothing on stdout.

    Over stdio the SDK is not needed (tests/packs/test_isolated_strands.py).
    """
    site.pack("clock", clock_source)
    place.configure('[agents.a]\npacks = ["clock"]\n')
    done = cli.run(*place.argv(*argv), cwd=place.cwd, python=("-c", WITHOUT_MCP), input="")
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == ""
    assert done.stderr == (
        "toolpacks: error: serving over HTTP needs mcp, which is not installed\n"
        "  pip install 'toolpacks[http]'\n"
    )


def test_the_blocker_works(cli: Any, place: Any) -> None:
    """The wrapper really hides the SDK (and other commands still work without it)."""
    done = cli.run(*place.argv("list"), cwd=place.cwd, python=("-c", WITHOUT_MCP))
    assert done.returncode == 0, done.stderr
    probe = "import importlib.util, sys\n" + WITHOUT_MCP.split("sys.argv")[0]
    probe += "try:\n    import mcp\nexcept ModuleNotFoundError:\n    print('blocked')\n"
    blocked = cli.run(cwd=Path(place.cwd), python=("-c", probe))
    assert blocked.stdout.strip() == "blocked", blocked.stderr
