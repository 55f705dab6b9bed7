"""Conflicts: two packs offering one exposed name, and every policy that resolves it."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest

from toolpacks import ConfigError, Host, ToolConflictError, tool
from toolpacks.host._conflicts import ConflictContext
from toolpacks.host._toolset import ToolEntry
from toolpacks.testing import call


@tool(name="search")
def web_search(query: str) -> str:
    """Search the web."""
    return "web"


@tool(name="search")
def docs_search(query: str) -> str:
    """Search the docs."""
    return "docs"


@tool(name="web_search")
def plain_web_search(query: str) -> str:
    """A tool whose own name is what prefixing would produce."""
    return "plain"


@pytest.fixture
def clash_host(pack_of: Callable[..., Any]) -> Host:
    """A host whose packs ``web`` and ``docs`` both offer ``search``."""
    host = Host({"agents": {"helper": {"packs": ["web", "docs"]}}}, discover=False)
    host.add_pack(pack_of(web_search), "web")
    host.add_pack(pack_of(docs_search), "docs")
    return host


def test_default_error_names_packs_tool_and_fix(clash_host: Host) -> None:
    """The default error names both packs (in-process), the tool and the line that fixes it."""
    with pytest.raises(ToolConflictError) as info:
        clash_host.toolset("helper")
    message = str(info.value)
    assert "'search'" in message
    assert "'web.search' from pack 'web' (in-process)" in message
    assert "'docs.search' from pack 'docs' (in-process)" in message
    assert "[agents.helper]" in message
    assert 'on_conflict = "prefix"' in message
    assert 'rename = { "web.search" = "web_search" }' in message


def test_conflict_error_is_a_value_error(clash_host: Host) -> None:
    """ToolConflictError is a ValueError too."""
    with pytest.raises(ValueError, match="offered by"):
        clash_host.toolset()


def test_prefix_keeps_both_under_pack_names(clash_host: Host) -> None:
    """Prefix exposes the clashing tools as <pack>_<tool>."""
    ts = clash_host.toolset("helper", on_conflict="prefix")
    assert ts.names() == ["docs_search", "web_search"]
    assert call(ts, "docs_search", {"query": "q"}).value == "docs"
    assert ts.qualified_name("web_search") == "web.search"


def test_first_keeps_the_first_listed_pack_and_logs(
    clash_host: Host, caplog: pytest.LogCaptureFixture
) -> None:
    """First keeps the pack listed first in the agent's packs, and logs what it dropped."""
    with caplog.at_level(logging.WARNING, logger="toolpacks"):
        ts = clash_host.toolset("helper", on_conflict="first")
    assert ts.qualified_name("search") == "web.search"
    assert "kept web.search, dropped docs.search" in caplog.text
    reordered = clash_host.toolset(packs=["docs", "web"], on_conflict="first")
    assert reordered.qualified_name("search") == "docs.search"


def test_priority_keeps_the_listed_pack_and_logs(
    clash_host: Host, caplog: pytest.LogCaptureFixture
) -> None:
    """Priority keeps the pack earliest in the priority list, and logs it."""
    with caplog.at_level(logging.WARNING, logger="toolpacks"):
        ts = clash_host.toolset("helper", on_conflict="priority", priority=["docs"])
    assert ts.qualified_name("search") == "docs.search"
    assert "kept docs.search by priority, dropped web.search" in caplog.text


def test_priority_without_list_is_a_config_error(clash_host: Host) -> None:
    """Asking for the priority policy with no priority list is a ConfigError."""
    with pytest.raises(ConfigError, match="needs a priority list"):
        clash_host.toolset(on_conflict="priority")


def test_priority_listing_none_of_the_packs_is_an_error(clash_host: Host) -> None:
    """A priority list that names none of the clashing packs cannot resolve the clash."""
    with pytest.raises(ToolConflictError, match="none of which is in the priority list"):
        clash_host.toolset(on_conflict="priority", priority=["other"])


def test_priority_from_agent_config(pack_of: Callable[..., Any]) -> None:
    """An agent's configured policy and priority list apply."""
    host = Host(
        {"agents": {"a": {"on_conflict": "priority", "priority": ["docs", "web"]}}},
        discover=False,
    )
    host.add_pack(pack_of(web_search), "web")
    host.add_pack(pack_of(docs_search), "docs")
    assert host.toolset("a").qualified_name("search") == "docs.search"


def test_host_wide_priority_applies(pack_of: Callable[..., Any]) -> None:
    """[packs] priority is the priority of agents that do not give their own."""
    host = Host(
        {"packs": {"priority": ["web"]}, "agents": {"a": {"on_conflict": "priority"}}},
        discover=False,
    )
    host.add_pack(pack_of(web_search), "web")
    host.add_pack(pack_of(docs_search), "docs")
    assert host.toolset("a").qualified_name("search") == "web.search"


def test_unknown_policy_name_lists_valid_ones(clash_host: Host) -> None:
    """An unknown policy name is a ConfigError listing the valid ones."""
    with pytest.raises(ConfigError, match="use one of: error, prefix, first, priority"):
        clash_host.toolset(on_conflict="last")


def test_custom_policy_function(clash_host: Host) -> None:
    """A plain function can resolve conflicts; it sees the name, the entries and the agent."""
    seen: list[tuple[str, list[str], str | None]] = []

    def suffix_policy(
        name: str, entries: Sequence[ToolEntry], context: ConflictContext
    ) -> Mapping[str, ToolEntry]:
        seen.append((name, [e.qualified for e in entries], context.agent))
        return {f"{name}_{e.pack}": e for e in entries}

    ts = clash_host.toolset("helper", on_conflict=suffix_policy)
    assert ts.names() == ["search_docs", "search_web"]
    assert seen == [("search", ["web.search", "docs.search"], "helper")]


def test_custom_policy_returning_a_stranger_is_an_error(clash_host: Host) -> None:
    """A policy may only keep entries that claimed the name."""
    stranger = ToolEntry("x", "other.x", "other", web_search)

    def bad(
        name: str, entries: Sequence[ToolEntry], context: ConflictContext
    ) -> Mapping[str, ToolEntry]:
        return {"x": stranger}

    with pytest.raises(ToolConflictError, match=r"returned 'other\.x'"):
        clash_host.toolset(on_conflict=bad)


def test_policy_made_name_colliding_with_another_tool_is_an_error(
    pack_of: Callable[..., Any],
) -> None:
    """Prefix producing a name another tool already has is an error, never last-wins."""
    host = Host({}, discover=False)
    host.add_pack(pack_of(web_search, plain_web_search), "web")
    host.add_pack(pack_of(docs_search), "docs")
    with pytest.raises(ToolConflictError, match="'web_search' would be used by both"):
        host.toolset(on_conflict="prefix")


def test_rename_resolves_a_clash(clash_host: Host) -> None:
    """An explicit rename resolves a clash by hand."""
    ts = clash_host.toolset("helper", rename={"docs.search": "docs_lookup"})
    assert ts.names() == ["docs_lookup", "search"]


def test_rename_onto_a_taken_name_goes_to_the_policy(pack_of: Callable[..., Any]) -> None:
    """A rename onto another tool's name is a conflict like any other."""
    host = Host({}, discover=False)
    host.add_pack(pack_of(web_search), "web")
    host.add_pack(pack_of(plain_web_search), "plain")
    with pytest.raises(ToolConflictError, match="'web_search' is offered by"):
        host.toolset(rename={"web.search": "web_search"})


def test_prefix_cannot_separate_two_tools_of_one_pack(pack_of: Callable[..., Any]) -> None:
    """Two tools of one pack claiming a name (via rename) are not silently merged by prefix."""
    host = Host({}, discover=False)
    host.add_pack(pack_of(web_search, plain_web_search), "web")
    with pytest.raises(ToolConflictError, match="claimed twice within pack 'web'"):
        host.toolset(rename={"web.web_search": "search"}, on_conflict="prefix")
