"""``toolpacks call``: qualified names need no agent; approval from the command line.

Through the real CLI in a subprocess, in each kind of working directory (``place``).
"""

from __future__ import annotations

import os
import pty
import select
import time
from pathlib import Path
from typing import Any

import pytest

CONVERT = """
    from toolpacks import hookimpl, tool

    @tool(tags=["convert"])
    def convert_time(time: str) -> str:
        '''Convert a time.

        Args:
            time: A time.
        '''
        return "{name}: " + time

    @hookimpl
    def register_tools(register):
        register(convert_time)
"""

GUARD = """
    from pathlib import Path
    from toolpacks import hookimpl, tool

    @tool(tags=["write"], require_approval=True, destructive=True)
    def wipe(path: str) -> str:
        '''Overwrite a file (needs approval).

        Args:
            path: The file to overwrite.
        '''
        Path(path).write_text("wiped", encoding="utf-8")
        return "wiped " + path

    @hookimpl
    def register_tools(register):
        register(wipe)
"""

AGENTS = """
[agents.a]
packs = ["clock", "alpha"]

[agents.keeper]
packs = ["clock"]
require_approval = ["clock.now"]
"""


@pytest.fixture
def clashing(site: Any, clock_source: str) -> None:
    """clock, plus two unrelated packs that both offer ``convert_time``."""
    site.pack("clock", clock_source)
    site.pack("alpha", CONVERT.replace("{name}", "alpha"))
    site.pack("beta", CONVERT.replace("{name}", "beta"))


# -- qualified names ------------------------------------------------------------------------------


@pytest.mark.usefixtures("clashing")
@pytest.mark.parametrize(
    ("name", "args", "output"),
    [("clock.now", "{}", "12:00 UTC"), ("alpha.convert_time", '{"time": "9"}', "alpha: 9")],
)
def test_a_qualified_name_needs_no_agent(
    cli: Any, place: Any, name: str, args: str, output: str
) -> None:
    """``call pack.tool`` uses that pack alone: the alpha/beta clash does not matter."""
    place.configure(AGENTS)
    done = cli.run(*place.argv("call", name, "--args", args), cwd=place.cwd)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == output
    assert done.stderr == ""


@pytest.mark.usefixtures("clashing")
@pytest.mark.parametrize("argv", [["call", "convert_time"], ["toolset"]])
def test_a_clash_without_an_agent_says_what_to_do(cli: Any, place: Any, argv: list[str]) -> None:
    """The clash is named, and the advice fits the command line (no "agent's table")."""
    place.configure(AGENTS)
    done = cli.run(*place.argv(*argv), cwd=place.cwd)
    assert done.returncode == 2, done.stdout + done.stderr
    line = cli.error_line(done.stderr)
    assert "'convert_time' is offered by 'alpha.convert_time'" in line
    assert "agent's table" not in done.stderr
    assert "Host.toolset" not in done.stderr
    assert "PACK.TOOL" in done.stderr if argv[0] == "call" else "AGENT" in done.stderr


@pytest.mark.configured
@pytest.mark.usefixtures("clashing")
def test_an_agent_without_the_clash_calls_by_exposed_name(cli: Any, place: Any) -> None:
    """Through an agent whose packs do not clash, the exposed name works."""
    place.configure(AGENTS)
    done = cli.run(
        *place.argv("call", "convert_time", "--agent", "a", "--args", '{"time": "8"}'),
        cwd=place.cwd,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "alpha: 8"


# -- approval -------------------------------------------------------------------------------------


@pytest.fixture
def guard(site: Any, clock_source: str) -> None:
    """A pack whose ``wipe`` tool requires approval (and the clock)."""
    site.pack("clock", clock_source)
    site.pack("guard", GUARD)


@pytest.mark.usefixtures("guard")
def test_without_approval_the_call_is_refused(cli: Any, place: Any, tmp_path: Path) -> None:
    """Not on a terminal and no --approve: refused, exit 1, with a hint on stderr."""
    place.configure(AGENTS)
    target = tmp_path / "victim.txt"
    args = f'{{"path": "{target}"}}'
    done = cli.run(*place.argv("call", "guard.wipe", "--args", args), cwd=place.cwd, input="y\n")
    assert done.returncode == 1, done.stderr
    assert not target.exists()
    assert "requires approval" in done.stdout  # what a model would be told
    line = cli.error_line(done.stderr)
    assert "guard.wipe requires approval" in line
    assert "--approve" in done.stderr


@pytest.mark.usefixtures("guard")
def test_approve_approves(cli: Any, place: Any, tmp_path: Path) -> None:
    """``--approve`` lets a call that requires approval run."""
    place.configure(AGENTS)
    target = tmp_path / "victim.txt"
    args = f'{{"path": "{target}"}}'
    done = cli.run(*place.argv("call", "guard.wipe", "--approve", "--args", args), cwd=place.cwd)
    assert done.returncode == 0, done.stderr
    assert target.read_text(encoding="utf-8") == "wiped"
    assert done.stdout.strip() == f"wiped {target}"


@pytest.mark.configured
@pytest.mark.usefixtures("guard")
def test_an_agents_approval_list_applies(cli: Any, place: Any) -> None:
    """``require_approval`` in an agent's table: refused without --approve, run with it."""
    place.configure(AGENTS)
    refused = cli.run(*place.argv("call", "now", "--agent", "keeper"), cwd=place.cwd, input="")
    assert refused.returncode == 1
    assert "--approve" in refused.stderr
    approved = cli.run(*place.argv("call", "now", "--agent", "keeper", "--approve"), cwd=place.cwd)
    assert approved.returncode == 0, approved.stderr
    assert approved.stdout.strip() == "12:00 UTC"


def run_on_terminal(cli: Any, place: Any, argv: list[str], answer: str) -> tuple[int, str, str]:
    """Run with a terminal as stdin, answer the prompt once it shows; (status, out, err)."""
    import subprocess
    import sys

    primary, secondary = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolpacks", *place.argv(*argv)],
        cwd=place.cwd,
        env=cli.env(),
        stdin=secondary,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    os.close(secondary)
    try:
        assert proc.stderr is not None
        err = ""
        deadline = time.monotonic() + 60
        while "[y/N]" not in err and time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stderr], [], [], 1)
            if ready:
                chunk = os.read(proc.stderr.fileno(), 4096).decode()
                if not chunk:
                    break
                err += chunk
        os.write(primary, answer.encode())
        out, rest = proc.communicate(timeout=60)
    finally:
        os.close(primary)
    return proc.returncode, out, err + rest


@pytest.mark.usefixtures("guard")
@pytest.mark.parametrize(("answer", "runs"), [("y\n", True), ("n\n", False), ("\n", False)])
def test_a_terminal_is_asked_on_stderr(
    cli: Any, place: Any, tmp_path: Path, answer: str, runs: bool
) -> None:
    """On a terminal, ``call`` asks y/N on stderr (stdout holds only the result)."""
    place.configure(AGENTS)
    target = tmp_path / "victim.txt"
    argv = ["call", "guard.wipe", "--args", f'{{"path": "{target}"}}']
    status, out, err = run_on_terminal(cli, place, argv, answer)
    assert "guard.wipe requires approval" in err
    assert "[y/N]" in err
    assert "[y/N]" not in out
    assert target.exists() is runs
    assert status == (0 if runs else 1), err
    if runs:
        assert out.strip() == f"wiped {target}"
