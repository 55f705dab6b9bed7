"""Installed packs through fake entry points: lazy loading, controls, clashes, conflicts."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from toolpacks import ConfigError, Host, ToolConflictError
from toolpacks.testing import call

SIDE_EFFECT = """
    import builtins
    builtins.IMPORTED_{tag} = True

    from toolpacks import hookimpl, tool

    @tool
    def {tool}() -> str:
        '''Say which pack answered.'''
        return "{tag}"

    @hookimpl
    def register_tools(register):
        register({tool})
"""


def side_effect_pack(tag: str, tool: str = "answer") -> str:
    """Pack source recording its import in ``builtins.IMPORTED_<tag>``."""
    return SIDE_EFFECT.format(tag=tag, tool=tool)


@pytest.fixture(autouse=True)
def _forget_imports() -> Any:
    """Remove the builtins markers side-effect packs set."""
    yield
    import builtins

    for name in [n for n in vars(builtins) if n.startswith("IMPORTED_")]:
        delattr(builtins, name)


def imported(tag: str) -> bool:
    """Whether the side-effect pack ``tag`` was imported."""
    import builtins

    return bool(getattr(builtins, f"IMPORTED_{tag}", False))


def test_discovered_pack_is_listed_without_import(site: Any) -> None:
    """Listing host.packs reads metadata only: no pack module is imported."""
    module = site.pack("lazy", side_effect_pack("lazy"), version="2.3")
    host = site.host()
    (info,) = host.packs
    assert (info.name, info.distribution, info.version, info.module, info.status) == (
        "lazy",
        "toolpacks-lazy",
        "2.3",
        module,
        "available",
    )
    assert not imported("lazy")
    assert module not in sys.modules


def test_pack_is_imported_when_a_toolset_uses_it(site: Any) -> None:
    """Building a toolset imports the packs it uses, and only those."""
    site.pack("one", side_effect_pack("one"))
    site.pack("two", side_effect_pack("two"))
    host = site.host()
    ts = host.toolset(packs=["one"])
    assert imported("one")
    assert not imported("two")
    assert call(ts, "answer").value == "one"
    assert host.pack("one").status == "loaded"
    assert host.pack("one").tools == ("one.answer",)
    assert host.pack("two").status == "available"


def test_config_disabled_pack_is_never_imported(site: Any) -> None:
    """``[packs] disabled`` blocks a pack before import, even for toolsets asking for "*"."""
    site.pack("blocked", side_effect_pack("blocked"))
    site.pack("fine", side_effect_pack("fine"))
    host = site.host({"packs": {"disabled": ["blocked"]}})
    assert host.pack("blocked").status == "disabled"
    assert host.pack("blocked").error == "disabled by config"
    assert host.toolset().names() == ["answer"]
    assert not imported("blocked")


def test_toolpacks_disable_env(site: Any) -> None:
    """TOOLPACKS_DISABLE (comma-separated) disables packs."""
    site.pack("a", side_effect_pack("a", "a_tool"))
    site.pack("b", side_effect_pack("b", "b_tool"))
    site.pack("c", side_effect_pack("c", "c_tool"))
    host = site.host(environ={"TOOLPACKS_DISABLE": "a, c"})
    assert [(p.name, p.status) for p in host.packs] == [
        ("a", "disabled"),
        ("b", "available"),
        ("c", "disabled"),
    ]
    assert host.toolset().names() == ["b_tool"]
    assert not imported("a")
    assert not imported("c")


def test_toolpacks_packs_allow_list(site: Any) -> None:
    """TOOLPACKS_PACKS loads only the named packs."""
    site.pack("a", side_effect_pack("a", "a_tool"))
    site.pack("b", side_effect_pack("b", "b_tool"))
    host = site.host(environ={"TOOLPACKS_PACKS": "b"})
    assert host.pack("a").status == "disabled"
    assert host.pack("a").error == "not in TOOLPACKS_PACKS"
    assert host.toolset().names() == ["b_tool"]


def test_empty_toolpacks_packs_loads_none(site: Any) -> None:
    """An empty TOOLPACKS_PACKS allows no pack at all."""
    site.pack("a", side_effect_pack("a"))
    host = site.host(environ={"TOOLPACKS_PACKS": ""})
    assert [p.status for p in host.packs] == ["disabled"]
    assert host.toolset().names() == []
    assert not imported("a")


def test_clash_reports_both_distributions_and_uses_neither(site: Any) -> None:
    """Two distributions declaring one pack name are a clash: reported, neither imported."""
    first = site.module(side_effect_pack("first"))
    second = site.module(side_effect_pack("second"))
    site.dist("dist-one", "1.0", shared=first)
    site.dist("dist-two", "2.0", shared=second)
    host = site.host()
    info = host.pack("shared")
    assert info.status == "clash"
    assert info.error is not None
    assert "dist-one 1.0" in info.error
    assert "dist-two 2.0" in info.error
    assert host.toolset().names() == []
    with pytest.raises(ConfigError, match="known packs: shared"):
        host.toolset(packs=["nosuch"])
    assert host.toolset(packs=["shared"]).names() == []
    assert not imported("first")
    assert not imported("second")


def test_two_installed_packs_clashing_on_a_tool_name(site: Any) -> None:
    """A tool-name clash between installed packs names both distributions and versions."""
    site.pack("alpha", side_effect_pack("alpha", "lookup"), dist="alpha-tools", version="1.2")
    site.pack("beta", side_effect_pack("beta", "lookup"), dist="beta-tools", version="3.4")
    host = site.host({"agents": {"main": {"packs": ["alpha", "beta"]}}})
    with pytest.raises(ToolConflictError) as info:
        host.toolset("main")
    message = str(info.value)
    assert "pack 'alpha' (alpha-tools 1.2)" in message
    assert "pack 'beta' (beta-tools 3.4)" in message
    assert "[agents.main]" in message
    prefixed = host.toolset("main", on_conflict="prefix")
    assert call(prefixed, "beta_lookup").value == "beta"


def test_entry_point_with_attribute(site: Any) -> None:
    """An entry point ``module:attr`` names an object inside the module as the pack."""
    module = site.module(
        """
        from toolpacks import hookimpl, tool

        @tool
        def hello() -> str:
            '''Say hello.'''
            return "hello"

        class Pack:
            @hookimpl
            def register_tools(self, register):
                register(hello)

        pack = Pack()
        """
    )
    site.dist("toolpacks-obj", "1.0", obj=f"{module}:pack")
    assert call(site.host().toolset(), "hello").value == "hello"


def test_in_process_pack_replaces_installed_one_with_a_warning(
    site: Any, pack_of: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """add_pack under an installed pack's name replaces it, and says so."""
    site.pack("thing", side_effect_pack("thing"))
    host = site.host()
    host.add_pack(pack_of(), "thing")
    assert "replaces pack 'thing' (toolpacks-thing 1.0)" in caplog.text
    assert host.pack("thing").source == "in_process"
    assert host.toolset().names() == []
    assert not imported("thing")


def test_alias_of_installed_pack(site: Any) -> None:
    """An alias of an installed pack reports the base pack's distribution."""
    site.pack("greet", side_effect_pack("greet"))
    host = site.host({"packs": {"hello": {"pack": "greet"}}})
    info = host.pack("hello")
    assert (info.source, info.alias_of, info.distribution) == ("alias", "greet", "toolpacks-greet")
    ts = host.toolset(packs=["hello"])
    assert ts.qualified_name("answer") == "hello.answer"


def test_reload_sees_new_installs(site: Any, ping_source: str) -> None:
    """reload() discovers packs installed after the host was made."""
    host = site.host()
    assert host.packs == []
    site.pack("ping", ping_source)
    host.reload()
    assert [p.name for p in host.packs] == ["ping"]
    assert call(host.toolset(), "ping").value == "pong localhost"


def test_malformed_entry_points_are_reported(site: Any) -> None:
    """Lines of entry_points.txt that discovery skips are kept for doctor to report."""
    info = site.dist("toolpacks-odd", "1.0")
    (info / "entry_points.txt").write_text("[toolpacks]\nnot a pair\n", encoding="utf-8")
    host = site.host()
    assert any("not a pair" in p for p in host.discovery_problems)


def test_disabling_covers_aliases_and_mcp_servers(pack_of: Any) -> None:
    """``[packs] disabled`` and TOOLPACKS_DISABLE block configured packs too: never started."""
    host = Host(
        {
            "packs": {"disabled": ["copy"], "copy": {"pack": "base"}},
            "mcp_servers": {"remote": {"command": "never-started"}},
        },
        discover=False,
        environ={"TOOLPACKS_DISABLE": "remote"},
    )
    host.add_pack(pack_of(), "base")
    statuses = {p.name: (p.status, p.error) for p in host.packs}
    assert statuses == {
        "base": ("available", None),
        "copy": ("disabled", "disabled by config"),
        "remote": ("disabled", "disabled by TOOLPACKS_DISABLE"),
    }
    assert host.toolset().names() == []


def test_listing_matches_the_host(site: Any) -> None:
    """list_packs (no pydantic) and host.packs agree on names, statuses and sources."""
    from toolpacks.cli._listing import list_packs

    site.pack("one", side_effect_pack("one"))
    site.pack("two", side_effect_pack("two"))
    Path("toolpacks.toml").write_text(
        '[packs]\ndisabled = ["two", "dup"]\n\n[packs.dup]\npack = "one"\n\n'
        '[packs.lost]\npack = "nowhere"\n\n[mcp_servers.remote]\ncommand = "srv"\n',
        encoding="utf-8",
    )
    rows = list_packs(path=[str(site.root)], environ={})
    host = Host(path=[str(site.root)], environ={})
    assert [(r["name"], r["status"], r["source"]) for r in rows] == [
        (p.name, p.status, p.source) for p in host.packs
    ]
    assert [r["name"] for r in rows] == ["dup", "lost", "one", "remote", "two"]
