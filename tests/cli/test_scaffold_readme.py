"""A pack scaffolded by ``toolpacks new``, set up by following its README word for word.

toolpacks is not on a package index, so a README that only says ``pip install -e ".[test]"``
fails in a fresh environment. The test reads the README's shell block and runs each command
as written, in a fresh virtual environment that has no toolpacks in it: the only change is
the README's placeholder for a toolpacks checkout, which becomes this repository. ``pip`` runs
as ``uv pip`` (the same arguments, faster); the other programs are the environment's own.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from toolpacks.cli._scaffold import CHECKOUT_PLACEHOLDER, scaffold_pack

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
SHELL_BLOCK = re.compile(r"```(?:bash|console|sh)\n(.*?)```", re.DOTALL)


def _uv() -> list[str]:
    beside = Path(sys.executable).parent / "uv"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("uv")
    return [found] if found else [sys.executable, "-m", "uv"]


def readme_commands(readme: str) -> list[list[str]]:
    """The commands of the README's first shell block, in order (``a && b`` is two)."""
    block = SHELL_BLOCK.search(readme)
    assert block is not None, "the README has no shell block"
    commands: list[list[str]] = []
    for line in block.group(1).splitlines():
        words = shlex.split(line, comments=True)
        while words:
            if "&&" in words:
                cut = words.index("&&")
                commands.append(words[:cut])
                words = words[cut + 1 :]
            else:
                commands.append(words)
                words = []
    return commands


def test_readme_commands_are_read_as_a_shell_would() -> None:
    """Comments, quotes and ``&&`` are taken apart as a shell would (a check of the test)."""
    text = (
        '```bash\npip install -e ".[test]" && pytest   # then\n'
        "toolpacks call x --args '{\"a\": 1}'\n```"
    )
    assert readme_commands(text) == [
        ["pip", "install", "-e", ".[test]"],
        ["pytest"],
        ["toolpacks", "call", "x", "--args", '{"a": 1}'],
    ]


def test_the_scaffold_readme_works_in_a_fresh_venv(tmp_path: Path) -> None:
    """Each command of the README succeeds in a fresh venv; the pack's own tests pass."""
    repo = scaffold_pack("weather", tmp_path / "toolpacks-weather")
    readme = (repo / "README.md").read_text(encoding="utf-8")
    commands = readme_commands(readme)
    assert any(CHECKOUT_PLACEHOLDER in word for c in commands for word in c), readme

    venv = tmp_path / "venv"
    subprocess.run(
        [*_uv(), "venv", str(venv), "--python", sys.executable, "--quiet"],
        check=True,
        timeout=300,
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLPACKS_")}
    env.pop("PYTHONPATH", None)
    env.update(
        VIRTUAL_ENV=str(venv),
        PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        TOOLPACKS_CACHE_DIR=str(tmp_path / "cache"),
        TOOLPACKS_TRUST_FILE=str(tmp_path / "trusted.json"),
    )
    outputs: dict[str, str] = {}
    for words in commands:
        words = [w.replace(CHECKOUT_PLACEHOLDER, str(REPO)) for w in words]
        if words[0] == "pip":
            argv = [*_uv(), "pip", *words[1:], "--python", str(venv / "bin" / "python")]
        else:
            argv = [str(venv / "bin" / words[0]), *words[1:]]
        done = subprocess.run(
            argv, cwd=repo, env=env, capture_output=True, text=True, timeout=600, check=False
        )
        assert done.returncode == 0, f"{shlex.join(words)} failed:\n{done.stdout}{done.stderr}"
        outputs[words[0]] = outputs.get(words[0], "") + done.stdout
    assert "3 passed" in outputs["pytest"]
    assert "weather" in outputs["toolpacks"]
    assert "Hello, Ada." in outputs["toolpacks"]
