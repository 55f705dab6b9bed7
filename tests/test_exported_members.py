"""The public API: ``__all__`` matches what the package exports, and importing stays light."""

from __future__ import annotations

import subprocess
import sys

import toolpacks
from toolpacks import exceptions, hookspecs


def test_all_is_sorted_and_every_name_resolves() -> None:
    """Every name in ``toolpacks.__all__`` is importable, and the list is sorted."""
    assert toolpacks.__all__ == sorted(toolpacks.__all__)
    for name in toolpacks.__all__:
        assert getattr(toolpacks, name) is not None, name


def test_design_names_are_exported() -> None:
    """The names DESIGN.md fixes as the contract are all exported from ``toolpacks``."""
    contract = {
        "tool",
        "Tool",
        "Toolbox",
        "ToolContext",
        "ToolResult",
        "Registry",
        "Host",
        "Toolset",
        "hookimpl",
        "hookspec",
        "WrongRunMethodError",
        "ToolDefinitionError",
        "ToolNotFoundError",
        "SearchHit",
    }
    assert contract <= set(toolpacks.__all__)


def test_exceptions_module_all_matches_its_classes() -> None:
    """``toolpacks.exceptions.__all__`` lists exactly the exception classes it defines."""
    defined = {
        name
        for name, value in vars(exceptions).items()
        if isinstance(value, type) and issubclass(value, BaseException)
    }
    assert set(exceptions.__all__) == defined


def test_exception_leaves_subclass_the_builtins_they_mean() -> None:
    """Leaves keep existing ``except ValueError`` / ``except LookupError`` clauses working."""
    assert issubclass(exceptions.ToolDefinitionError, ValueError)
    assert issubclass(exceptions.ToolConflictError, ValueError)
    assert issubclass(exceptions.ToolNotFoundError, LookupError)
    assert issubclass(exceptions.WrongRunMethodError, TypeError)
    for name in exceptions.__all__:
        assert issubclass(getattr(exceptions, name), exceptions.ToolpacksError)


def test_hookspecs_all_resolves() -> None:
    """Every name in ``toolpacks.hookspecs.__all__`` exists."""
    for name in hookspecs.__all__:
        assert hasattr(hookspecs, name), name


def test_import_toolpacks_imports_neither_pydantic_nor_pluggy() -> None:
    """``import toolpacks`` alone is cheap: heavy modules load on first use of a name."""
    code = "import sys, toolpacks; print('pydantic' in sys.modules, 'pluggy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


PUBLIC_MODULES = (
    "toolpacks",
    "toolpacks.mcp",
    "toolpacks.hookspecs",
    "toolpacks.exceptions",
    "toolpacks.testing",
    "toolpacks.integrations",
)


def test_public_modules_import_in_a_fresh_interpreter_and_their_names_resolve() -> None:
    """Each public module imports on its own, and every name in its ``__all__`` resolves."""
    code = (
        "import importlib, sys\n"
        f"for name in {PUBLIC_MODULES!r}:\n"
        "    module = importlib.import_module(name)\n"
        "    missing = [n for n in getattr(module, '__all__', ()) if not hasattr(module, n)]\n"
        "    assert not missing, (name, missing)\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_mcp_module_exports_the_serving_api_without_importing_the_sdk() -> None:
    """``toolpacks.mcp`` offers ``build_server``/``serve_stdio``; the SDK loads when used."""
    code = "import sys, toolpacks.mcp as m\nprint(sorted(m.__all__), 'mcp' in sys.modules)\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    names = "['build_server', 'http_app', 'serve', 'serve_agent', 'serve_http', 'serve_stdio']"
    assert out.stdout.strip() == f"{names} False"


def test_private_modules_are_not_reexported_as_public() -> None:
    """``toolpacks.__all__`` names no module: layers are private, reached through the facade."""
    assert not {"core", "packs", "host", "export", "filetools", "cli"} & set(toolpacks.__all__)
