"""Toolsets: qualified and exposed names, filters, renames, ordering."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from toolpacks import ConfigError, Host, Tool, Toolset, tool
from toolpacks.core.define._names import safe_name
from toolpacks.testing import call, make_host

SAFE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def test_qualified_names_are_pack_dot_tool(host: Host) -> None:
    """Every tool of a host has the qualified name <pack>.<tool>."""
    assert sorted(host.tools()) == ["fs.delete", "web.fetch", "web.search"]
    assert host.tools()["web.search"].pack == "web"


def test_subtools_are_qualified_pack_parent_child(pack_of: Callable[..., Any]) -> None:
    """A subtool's qualified name is <pack>.<parent>.<child>; its exposed name is safe."""

    @tool
    def repo(name: str) -> str:
        """Describe a repository."""
        return name

    @repo.subtool
    def issues(name: str) -> list[str]:
        """List a repository's issues."""
        return [name]

    host = make_host(pack_of(repo), names=["gh"])
    ts = host.toolset()
    assert "gh.repo.issues" in host.tools()
    assert ts.names() == ["repo", "repo_issues"]
    assert ts.qualified_name("repo_issues") == "gh.repo.issues"
    assert call(ts, "gh.repo.issues", {"name": "x"}).value == ["x"]


def test_exposed_names_are_safe_unique_and_reversible(toolset: Toolset) -> None:
    """Exposed names match the provider pattern, are unique and map back to qualified names."""
    names = toolset.names()
    assert len(set(names)) == len(names)
    assert all(SAFE.match(n) for n in names)
    assert {toolset.qualified_name(n) for n in names} == {"fs.delete", "web.fetch", "web.search"}


def test_long_prefixed_names_are_shortened_deterministically(
    pack_of: Callable[..., Any],
) -> None:
    """Names over 64 characters after prefixing get a hash suffix; no two collapse into one."""
    long_a = "a" * 60 + "_one"
    long_b = "a" * 60 + "_two"

    def make(name: str, text: str) -> Tool:
        @tool(name=name)
        def fn() -> str:
            """Return a marker."""
            return text

        return fn

    packname = "very_long_pack_name"
    host = Host({}, discover=False)
    host.add_pack(pack_of(make(long_a, "p1a"), make(long_b, "p1b")), packname)
    host.add_pack(pack_of(make(long_a, "p2a"), make(long_b, "p2b")), packname + "2")
    ts = host.toolset(on_conflict="prefix")
    names = ts.names()
    assert len(names) == 4
    assert len(set(names)) == 4
    assert all(SAFE.match(n) and len(n) == 64 for n in names)
    assert names == host.toolset(on_conflict="prefix").names()  # deterministic
    assert {ts.qualified_name(n) for n in names} == {
        f"{packname}.{long_a}",
        f"{packname}.{long_b}",
        f"{packname}2.{long_a}",
        f"{packname}2.{long_b}",
    }
    assert call(ts, f"{packname}2.{long_b}").value == "p2b"


def test_safe_name_keeps_short_names_and_hashes_long_ones() -> None:
    """safe_name replaces unsafe characters and hashes only names over 64 characters."""
    assert safe_name("a.b") == "a_b"
    assert safe_name("x" * 64) == "x" * 64
    long_1, long_2 = safe_name("x" * 70 + "1"), safe_name("x" * 70 + "2")
    assert len(long_1) == 64
    assert len(long_2) == 64
    assert long_1 != long_2
    assert safe_name("x" * 70 + "1") == long_1


def test_include_tags_keep_tools_with_any_tag(host: Host) -> None:
    """include_tags keeps tools sharing at least one tag."""
    assert host.toolset(include_tags=["io", "write"]).names() == ["delete", "fetch"]


def test_exclude_tags_drop_tools(host: Host) -> None:
    """exclude_tags drops every tool with any of those tags."""
    assert host.toolset(exclude_tags=["destructive"]).names() == ["fetch", "search"]


def test_exclude_drops_qualified_names(host: Host) -> None:
    """Exclude names qualified tools to drop."""
    assert host.toolset(exclude=["web.fetch"]).names() == ["delete", "search"]


def test_a_single_tag_string_is_one_tag(host: Host) -> None:
    """A lone string for tags means that tag, not its characters."""
    assert host.toolset(include_tags="io").names() == ["fetch"]  # type: ignore[arg-type]


def test_predicate_filters_tools(host: Host) -> None:
    """A predicate keeps only the tools it accepts."""
    assert host.toolset(predicate=lambda t: t.name.startswith("f")).names() == ["fetch"]


def test_packs_select_packs(host: Host) -> None:
    """Packs limits the toolset to those packs."""
    assert host.toolset(packs=["fs"]).names() == ["delete"]


def test_unknown_pack_is_a_config_error_listing_known(host: Host) -> None:
    """Naming a pack that does not exist lists the known ones."""
    with pytest.raises(ConfigError, match=r"unknown pack\(s\) nope; known packs: fs, web"):
        host.toolset(packs=["nope"])


def test_agent_config_filters_apply(packs: dict[str, Any]) -> None:
    """An agent's configured filters shape its toolset; keywords override them."""
    host = Host(
        {"agents": {"reader": {"packs": ["web", "fs"], "exclude_tags": ["destructive"]}}},
        discover=False,
    )
    for name, pack in packs.items():
        host.add_pack(pack, name)
    assert host.toolset("reader").names() == ["fetch", "search"]
    assert host.toolset("reader", exclude_tags=[]).names() == ["delete", "fetch", "search"]


def test_rename_changes_the_exposed_name(host: Host) -> None:
    """Rename exposes a tool under a new name that maps back to its qualified name."""
    ts = host.toolset(rename={"web.search": "web_lookup"})
    assert ts.names() == ["delete", "fetch", "web_lookup"]
    assert ts.qualified_name("web_lookup") == "web.search"
    assert call(ts, "web_lookup", {"query": "q"}).value == "web:q"


def test_rename_to_invalid_name_is_a_config_error(host: Host) -> None:
    """A rename target that is not provider-safe is refused."""
    with pytest.raises(ConfigError, match="not a valid tool name"):
        host.toolset(rename={"web.search": "web search!"})


def test_rename_of_unknown_tool_is_a_config_error(host: Host) -> None:
    """A rename of a tool that does not exist is refused, listing the known names."""
    with pytest.raises(ConfigError, match=r"rename names unknown tool\(s\) web\.serch"):
        host.toolset(rename={"web.serch": "x"})


def test_rename_of_two_tools_to_one_name_is_a_config_error(host: Host) -> None:
    """Two renames onto the same name are refused rather than resolved by a policy."""
    with pytest.raises(ConfigError, match="the same name 'x'"):
        host.toolset(rename={"web.search": "x", "web.fetch": "x"}, on_conflict="first")


def test_every_listing_is_sorted(host: Host, toolset: Toolset) -> None:
    """names(), entries(), host.packs and host.tools() are all sorted."""
    assert toolset.names() == sorted(toolset.names())
    assert [e.exposed for e in toolset.entries()] == sorted(toolset.names())
    assert [p.name for p in host.packs] == sorted(p.name for p in host.packs)
    assert [t.name for t in toolset] == sorted(t.name for t in toolset)


def test_get_accepts_exposed_and_qualified_names(toolset: Toolset) -> None:
    """get() and ``in`` accept exposed and qualified names alike."""
    assert toolset.get("search") is toolset.get("web.search")
    assert "web.search" in toolset
    assert "search" in toolset
    assert "nope" not in toolset


def test_toolset_from_plain_tools() -> None:
    """Toolset([...]) builds a toolset from tools directly; duplicates are refused."""

    @tool
    def one() -> int:
        """Return one."""
        return 1

    ts = Toolset([one])
    assert ts.names() == ["one"]
    with pytest.raises(ValueError, match="two tools would be exposed as 'one'"):
        Toolset([one, one])


def test_definitions_neutral_format_is_sorted(toolset: Toolset) -> None:
    """The neutral definitions follow the sorted exposed names."""
    names = [d["name"] for d in toolset.definitions()]
    assert names == toolset.names()


def test_exclude_with_a_typo_is_a_config_error(host: Host) -> None:
    """An exclude naming no tool of a loaded pack (or an unknown pack) is refused."""
    with pytest.raises(ConfigError, match=r"exclude names unknown tool\(s\) web\.fetsh"):
        host.toolset(exclude=["web.fetsh"])
    with pytest.raises(ConfigError, match=r"exclude names unknown tool\(s\) wbe\.fetch"):
        host.toolset(exclude=["wbe.fetch"])


def test_names_of_packs_outside_the_toolset_are_accepted(host: Host) -> None:
    """exclude/rename naming a pack that exists but is not in this toolset is fine."""
    ts = host.toolset(packs=["web"], exclude=["fs.delete"], rename={"fs.delete": "rm"})
    assert ts.names() == ["fetch", "search"]


def test_a_host_toolset_without_hooks_keeps_the_calls_short_path(
    pack_of: Callable[..., Any],
) -> None:
    """No hook applies: the entries share the empty hook set the short path looks for."""
    from toolpacks.core._hooks import EMPTY_HOOKS

    @tool
    def plain(n: int) -> int:
        """Echo n."""
        return n

    host = Host({}, discover=False)
    host.add_pack(pack_of(plain), "p")
    host.hook("before_invoke", tags=["elsewhere"])(lambda **_: None)
    toolset = host.toolset()
    assert toolset.entry("plain").options.hooks is EMPTY_HOOKS
