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
