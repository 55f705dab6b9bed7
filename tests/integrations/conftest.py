"""Fixtures for the framework adapters: a toolset whose calls leave a trace.

``toolset`` holds four tools (``add``, ``total`` returning a pydantic model, ``explode``
raising, ``delete`` requiring approval) and one ``authorize`` hook that records every call
it sees. The hook is consulted by ``Toolset.call`` only, so a recorded call proves that a
framework's call went through the toolset (the gate, permissions and hooks), and it records
the call id the toolset was given.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic import BaseModel

from toolpacks import ToolContext, Toolset, tool
from toolpacks.core.call._options import DEFAULT_OPTIONS, CallOptions
from toolpacks.host._approval import ApprovalHandler


class Total(BaseModel):
    """The sum of some numbers."""

    total: int
    count: int


@dataclass
class Trace:
    """What the toolset saw: calls authorized (name, call id, arguments) and tools run."""

    authorized: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    ran: list[str] = field(default_factory=list)

    def call_ids(self) -> list[str]:
        return [call_id for _, call_id, _ in self.authorized]


MakeToolset = Callable[..., Toolset]


def build_toolset(
    trace: Trace,
    *,
    approval: ApprovalHandler | None = None,
    options: CallOptions = DEFAULT_OPTIONS,
) -> Toolset:
    """Fresh tools recording into ``trace``, in a toolset with a recording authorize hook."""

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        trace.ran.append("add")
        return a + b

    @tool
    def total(numbers: list[int], label: str = "sum") -> Total:
        """Sum a list of integers.

        Args:
            numbers: The integers to add up.
            label: A name for the sum.
        """
        trace.ran.append("total")
        return Total(total=sum(numbers), count=len(numbers))

    @tool
    def explode(reason: str) -> str:
        """Fail on purpose."""
        trace.ran.append("explode")
        raise RuntimeError(f"internal detail: {reason}")

    @tool(require_approval=True)
    def delete(path: str) -> str:
        """Delete a file (requires approval)."""
        trace.ran.append("delete")
        return f"deleted {path}"

    def authorize(tool: Any, arguments: dict[str, Any], context: ToolContext) -> None:
        trace.authorized.append((tool.name, context.call_id, arguments))

    return Toolset(
        [add, total, explode, delete],
        agent="tester",
        approval=approval,
        authorizers=[authorize],
        options=options,
    )


@pytest.fixture
def trace() -> Trace:
    """The calls the ``toolset`` fixture saw."""
    return Trace()


@pytest.fixture
def toolset(trace: Trace) -> Toolset:
    """The four sample tools, with no approval handler, recording into ``trace``."""
    return build_toolset(trace)


@pytest.fixture
def make_toolset(trace: Trace) -> MakeToolset:
    """Build the sample toolset with other settings: ``make_toolset(approval=handler)``."""

    def make(**kwargs: Any) -> Toolset:
        return build_toolset(trace, **kwargs)

    return make


def import_without(module: str, framework: str) -> str:
    """The error text of importing an adapter module when ``framework`` cannot be imported."""
    code = (
        "import sys\n"
        f"sys.modules[{framework!r}] = None\n"
        "try:\n"
        f"    import {module}\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
        "else:\n"
        "    print('imported')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip()


@pytest.fixture(scope="session")
def strands_venv(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """This checkout of toolpacks (no MCP extra) and strands-agents from the package index.

    One per session: strands pins ``mcp<2.2``, so its loop runs in a venv of its own, shared
    by ``test_strands.py`` and ``test_sandbox_adapters.py``.
    """
    from ._llm_fixtures import REPO, Venv

    return Venv.create(
        tmp_path_factory.mktemp("strands-venv") / "env", "-e", str(REPO), "strands-agents"
    )
