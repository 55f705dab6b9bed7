"""``toolpacks new``: a pack repository whose own tests pass right after scaffolding."""

from __future__ import annotations

import re
from pathlib import Path

from toolpacks._version import __version__

__all__ = ["CHECKOUT_PLACEHOLDER", "scaffold_pack"]

CHECKOUT_PLACEHOLDER = "/path/to/toolpacks"
"""Where the README says a checkout of toolpacks is (it is not on a package index)."""

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")

PYPROJECT = """\
[build-system]
requires = ["hatchling>=1.24"]
build-backend = "hatchling.build"

[project]
name = "toolpacks-{dash}"
version = "0.1.0"
description = "A toolpacks pack: {name} tools for AI agents."
readme = "README.md"
requires-python = ">=3.11"
dependencies = ["toolpacks>={version}"]

[project.optional-dependencies]
test = ["pytest>=8"]

[project.entry-points.toolpacks]
{name} = "toolpacks_{name}"

[tool.hatch.build.targets.wheel]
packages = ["src/toolpacks_{name}"]

[tool.pytest.ini_options]
testpaths = ["tests"]
"""

MODULE = '''\
"""The {name} tool pack."""

from __future__ import annotations

from toolpacks import hookimpl, tool


@tool(tags=["{name}"], read_only=True, idempotent=True)
def greet(name: str, excited: bool = False) -> str:
    """Greet someone by name.

    Args:
        name: Who to greet.
        excited: End with an exclamation mark instead of a full stop.
    """
    return f"Hello, {{name}}" + ("!" if excited else ".")


@hookimpl
def register_tools(register):  # type: ignore[no-untyped-def]
    """Register this pack's tools with the host."""
    register(greet)
'''

TEST = '''\
"""Tests for the {name} pack, run without installing it into a host."""

from toolpacks.testing import call, make_host

import toolpacks_{name}


def test_greet_tool_is_registered() -> None:
    """The pack registers its greet tool under the pack's name."""
    host = make_host(toolpacks_{name}, names=["{name}"])
    assert host.toolset().names() == ["greet"]
    assert "{name}.greet" in host.tools()


def test_greet_returns_text() -> None:
    """Calling greet with a name returns the greeting."""
    toolset = make_host(toolpacks_{name}).toolset()
    result = call(toolset, "greet", {{"name": "Ada", "excited": True}})
    assert not result.is_error
    assert result.value == "Hello, Ada!"


def test_greet_rejects_bad_arguments() -> None:
    """A missing name is an error result a model can act on, not an exception."""
    result = call(make_host(toolpacks_{name}).toolset(), "greet", {{}})
    assert result.is_error
    assert "name" in result.content
'''

README = """\
# toolpacks-{dash}

A toolpacks pack with {name} tools for AI agents.

## Set up

toolpacks is not on a package index, so install it first: from a checkout of its repository
(replace `{checkout}` below with its directory), or from a wheel built there with
`uv build --wheel` or `python -m build --wheel`
(`pip install {checkout}/dist/toolpacks-{version}-py3-none-any.whl`). Then install this
pack with its test extra, and run its tests:

```bash
pip install {checkout}
pip install -e ".[test]"
pytest
toolpacks list            # shows the pack '{name}'
toolpacks call {name}.greet --args '{{"name": "Ada"}}'
```

A directory of wheels works too: `pip install --find-links /path/to/wheels -e ".[test]"`.

## Use it

Enable it for an agent in `toolpacks.toml`:

```toml
[agents.assistant]
packs = ["{name}"]
```
"""


def scaffold_pack(name: str, directory: Path | None = None) -> Path:
    """Write a new pack repository and return its directory.

    Args:
        name: The pack name (lowercase letters, digits, underscores; a leading letter).
        directory: Where to create it (default ``./toolpacks-NAME``); must not exist.

    Raises:
        ValueError: The name is invalid or the directory exists.
    """
    name = name.replace("-", "_")
    if not _NAME.match(name):
        raise ValueError(
            f"pack name {name!r} is invalid; use lowercase letters, digits and underscores, "
            "starting with a letter"
        )
    dash = name.replace("_", "-")
    target = directory or Path(f"toolpacks-{dash}")
    if target.exists():
        raise ValueError(f"{target} already exists; choose another --dir")
    module = target / "src" / f"toolpacks_{name}"
    module.mkdir(parents=True)
    (target / "tests").mkdir()
    fields = {"name": name, "dash": dash, "version": __version__, "checkout": CHECKOUT_PLACEHOLDER}
    (target / "pyproject.toml").write_text(PYPROJECT.format(**fields), encoding="utf-8")
    (target / "README.md").write_text(README.format(**fields), encoding="utf-8")
    (module / "__init__.py").write_text(MODULE.format(**fields), encoding="utf-8")
    (module / "py.typed").write_text("", encoding="utf-8")
    (target / "tests" / f"test_{name}.py").write_text(TEST.format(**fields), encoding="utf-8")
    (target / ".gitignore").write_text(
        "__pycache__/\n*.egg-info/\n.venv/\ndist/\n", encoding="utf-8"
    )
    return target
