"""The steps that build a toolset (host/_assembly.py), each tested alone on plain values."""

from __future__ import annotations

from typing import Any

import pytest

from toolpacks import ConfigError, tool
from toolpacks.core._tool import Tool
from toolpacks.host._assembly import (
    ToolsetRequest,
    call_options,
    check_names,
    entries,
    request_for,
    resolve_packs,
    select,
)
from toolpacks.host._compose import Candidate
from toolpacks.host._conflicts import error_on_conflict, priority_on_conflict
from toolpacks.host.config._load import AgentConfig, SettingsConfig
from toolpacks.packs._record import LoadedPack, PackInfo, PackSource

NO_OVERRIDES: dict[str, Any] = {}


@tool(tags=["read"])
def look(path: str) -> str:
    """Read a thing."""
    return path


@tool(tags=["write", "destructive"])
def erase(path: str) -> str:
    """Erase a thing."""
    return path


@tool(allowed_agents=["admin"])
def audit() -> str:
    """Audit everything."""
    return "ok"


def source(name: str, status: str = "available") -> PackSource:
    return PackSource(PackInfo(name, status=status))  # type: ignore[arg-type]


def loaded(name: str, *tools: Tool) -> LoadedPack:
    by_name = {f"{name}.{t.name}": t for t in tools}
    return LoadedPack(PackInfo(name, status="loaded", tools=tuple(by_name)), by_name)


def request(**changes: Any) -> ToolsetRequest:
    base = request_for("researcher", AgentConfig(), "test", (), NO_OVERRIDES)
    fields = {name: getattr(base, name) for name in base.__slots__}
    fields.update(changes)
    return ToolsetRequest(**fields)


def test_request_takes_the_agent_config_and_overrides_win() -> None:
    """Step 1: keyword overrides replace the agent's values; None keeps them."""
    cfg = AgentConfig(packs=["fs"], include_tags=["read"], exclude=["fs.erase"])
    req = request_for("a", cfg, "scope", (), {"include_tags": ["write"], "exclude": None})
    assert req.packs == ("fs",)
    assert req.include_tags == frozenset({"write"})
    assert req.exclude == frozenset({"fs.erase"})
    assert req.policy is error_on_conflict


def test_request_reads_a_lone_string_as_one_name() -> None:
    """Step 1: ``packs="fs"`` or ``include_tags="read"`` is one name, not its letters."""
    req = request_for(None, AgentConfig(), "s", (), {"packs": "fs", "include_tags": "read"})
    assert req.packs == ("fs",)
    assert req.include_tags == frozenset({"read"})


def test_request_with_the_priority_policy_needs_an_order() -> None:
    """Step 1: on_conflict="priority" without a pack order is a ConfigError naming the fix."""
    with pytest.raises(ConfigError, match="needs a priority list"):
        request_for(None, AgentConfig(on_conflict="priority"), "s", (), NO_OVERRIDES)
    req = request_for(None, AgentConfig(on_conflict="priority"), "s", ("b", "a"), NO_OVERRIDES)
    assert req.policy is priority_on_conflict
    assert req.priority == ("b", "a")


def test_request_splits_approval_into_all_or_names() -> None:
    """Step 1: require_approval is either every tool or a set of qualified names."""
    assert request_for(None, AgentConfig(require_approval=True), "s", (), {}).approval_all
    names = request_for(None, AgentConfig(require_approval=["fs.erase"]), "s", (), {})
    assert not names.approval_all
    assert names.approval_names == frozenset({"fs.erase"})


def test_resolve_packs_lists_named_first_then_the_rest_for_star() -> None:
    """Step 2: named packs keep their order; "*" adds the others in source order."""
    sources = {n: source(n) for n in ("a", "b", "c")}
    assert resolve_packs(["c", "*"], sources, "s") == ["c", "a", "b"]
    assert resolve_packs(["b"], sources, "s") == ["b"]


def test_resolve_packs_leaves_out_disabled_and_clashing_packs() -> None:
    """Step 2: a disabled or clashing pack is never loaded, named or not."""
    sources = {"a": source("a"), "off": source("off", "disabled"), "x": source("x", "clash")}
    assert resolve_packs(["*"], sources, "s") == ["a"]
    assert resolve_packs(["off", "a"], sources, "s") == ["a"]


def test_resolve_packs_refuses_an_unknown_pack_naming_the_known_ones() -> None:
    """Step 2: an unknown pack is a ConfigError listing what is installed."""
    with pytest.raises(ConfigError, match=r"unknown pack\(s\) nope; known packs: a"):
        resolve_packs(["nope"], {"a": source("a")}, "s")


def test_check_names_refuses_a_rename_of_an_unknown_tool() -> None:
    """Step 3: a rename naming no tool of a loaded pack is a ConfigError listing the tools."""
    packs = [loaded("fs", look, erase)]
    with pytest.raises(ConfigError, match=r"rename names unknown tool\(s\) fs\.lok") as info:
        check_names(request(rename={"fs.lok": "x"}), packs, {"fs": source("fs")})
    assert "fs.erase, fs.look" in str(info.value)


def test_check_names_lets_through_names_of_packs_not_in_the_toolset() -> None:
    """Step 3: excluding a tool of a known pack that is not loaded here is not an error."""
    sources = {"fs": source("fs"), "web": source("web")}
    check_names(request(exclude=frozenset({"web.fetch"})), [loaded("fs", look)], sources)


def test_check_names_refuses_two_renames_to_one_name_and_invalid_names() -> None:
    """Step 3: rename targets are valid, distinct tool names."""
    packs = [loaded("fs", look, erase)]
    sources = {"fs": source("fs")}
    with pytest.raises(ConfigError, match="the same name 'x'"):
        check_names(request(rename={"fs.look": "x", "fs.erase": "x"}), packs, sources)
    with pytest.raises(ConfigError, match="not a valid tool name"):
        check_names(request(rename={"fs.look": "a b"}), packs, sources)


def test_select_applies_permissions_tags_exclusions_and_predicate() -> None:
    """Step 4: allowed_agents, include/exclude tags, excluded names and the predicate filter."""
    packs = [loaded("fs", look, erase, audit)]

    def names(req: ToolsetRequest) -> list[str]:
        return [c.qualified for c in select(req, packs, None)]

    assert names(request()) == ["fs.look", "fs.erase"]  # audit is for "admin" only
    assert names(request(agent="admin")) == ["fs.look", "fs.erase", "fs.audit"]
    assert names(request(include_tags=frozenset({"read"}))) == ["fs.look"]
    assert names(request(exclude_tags=frozenset({"destructive"}))) == ["fs.look"]
    assert names(request(exclude=frozenset({"fs.look"}))) == ["fs.erase"]
    assert names(request(predicate=lambda t: t.name == "erase")) == ["fs.erase"]


def test_entries_mark_approval_from_the_tool_the_request_or_its_names() -> None:
    """Step 6: a tool needs approval if it says so, the request says all, or names it."""
    assembled = {
        "look": Candidate("fs.look", "fs", look),
        "erase": Candidate("fs.erase", "fs", erase),
        "audit": Candidate("fs.audit", "fs", audit.replace(require_approval=True)),
    }
    base = call_options(SettingsConfig(), [])
    named = entries(request(approval_names=frozenset({"fs.erase"})), assembled, base, [])
    assert [(e.exposed, e.require_approval) for e in named] == [
        ("look", False),
        ("erase", True),
        ("audit", True),
    ]
    every = entries(request(approval_all=True), assembled, base, [])
    assert all(e.require_approval for e in every)
