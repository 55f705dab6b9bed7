"""Fixtures for the tool core: a registry, a context, call options and a few small tools."""

from __future__ import annotations

import pytest

from toolpacks import CallOptions, Registry, Tool, ToolContext, tool


@pytest.fixture
def registry() -> Registry:
    """An empty registry."""
    return Registry()


@pytest.fixture
def context() -> ToolContext:
    """A context as an application would pass it, with every field set."""
    return ToolContext(
        call_id="call-42",
        agent_id="researcher",
        caller_identity="user-7",
        metadata={"tenant": "acme"},
        invocation_state={"turn": 1},
    )


@pytest.fixture
def options() -> CallOptions:
    """Call options that expose error messages (trusted development)."""
    return CallOptions(expose_errors=True)


@pytest.fixture
def add() -> Tool:
    """A sync tool adding two integers, the second optional."""

    @tool
    def add(a: int, b: int = 2) -> int:
        """Add two integers."""
        return a + b

    return add
