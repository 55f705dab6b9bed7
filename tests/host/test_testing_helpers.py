"""``toolpacks.testing``: building hosts from packs without installing them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from toolpacks import Host, hookimpl, tool
from toolpacks.testing import call, make_host
from toolpacks.testing import toolpacks_host as toolpacks_host  # the fixture, for this module


@tool
def ping() -> str:
    """Answer pong."""
    return "pong"


class PingPack:
    """A pack object (not a module)."""

    @hookimpl
    def register_tools(self, register: Any) -> None:
        register(ping)


def test_make_host_with_objects_and_names() -> None:
    """make_host adds each pack under the given name and discovers nothing else."""
    host = make_host(PingPack(), names=["demo"])
    assert [p.name for p in host.packs] == ["demo"]
    assert call(host.toolset(), "demo.ping").value == "pong"


def test_make_host_names_must_match_packs() -> None:
    """A names list of the wrong length is refused."""
    with pytest.raises(ValueError, match="one each"):
        make_host(PingPack(), names=["a", "b"])


def test_make_host_settings_and_config(pack_of: Callable[..., Any]) -> None:
    """make_host passes per-pack settings and the host configuration."""
    seen: list[dict[str, Any]] = []

    def register_tools(register: Any) -> None:
        seen.append(dict(register.config))

    pack = pack_of()
    pack.register_tools = hookimpl(register_tools)
    host = make_host(
        pack,
        names=["cfg"],
        settings={"cfg": {"root": "/tmp"}},
        config={"agents": {"a": {"packs": ["cfg"]}}},
    )
    host.toolset("a")
    assert seen == [{"root": "/tmp"}]


def test_toolpacks_host_fixture(toolpacks_host: Callable[..., Host]) -> None:
    """The pytest fixture builds hosts from packs."""
    host = toolpacks_host(PingPack(), names=["p"])
    assert host.toolset().names() == ["ping"]


def test_add_pack_rejects_dotted_names() -> None:
    """A pack name with a dot would make qualified names ambiguous, so it is refused."""
    with pytest.raises(ValueError, match="no dots"):
        Host({}, discover=False).add_pack(PingPack(), "my.pack")


def test_add_pack_default_name_is_the_class_or_module_name() -> None:
    """Without a name, an object's class name (or a module's last component) is used."""
    host = Host({}, discover=False)
    assert host.add_pack(PingPack()).name == "PingPack"


def test_add_pack_again_replaces_it() -> None:
    """Adding a pack again under the same name replaces the earlier one."""

    @tool
    def other() -> str:
        """Another tool."""
        return "other"

    class OtherPack:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(other)

    host = Host({}, discover=False)
    host.add_pack(PingPack(), "p")
    assert host.toolset().names() == ["ping"]
    host.add_pack(OtherPack(), "p")
    assert host.toolset().names() == ["other"]


def test_reload_keeps_old_toolsets_working() -> None:
    """A toolset built before reload() keeps its tools."""
    host = make_host(PingPack(), names=["p"])
    before = host.toolset()
    host.reload()
    assert call(before, "ping").value == "pong"
    assert call(host.toolset(), "ping").value == "pong"
