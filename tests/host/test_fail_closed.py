"""Configuration fails closed: unknown agents, failed named packs and untrusted keys refuse.

The working directory is a fresh temporary one (``isolated``), so "no configuration" really
means none.
"""

from __future__ import annotations

import logging
import types
from pathlib import Path
from typing import Any

import pytest

from toolpacks import ConfigError, Host, PackError, UntrustedConfigError, hookimpl, tool


@tool
def ping() -> str:
    """Answer pong."""
    return "pong"


def _good() -> types.ModuleType:
    module = types.ModuleType("good_pack")

    def register_tools(register: Any) -> None:
        register(ping)

    module.register_tools = hookimpl(register_tools)  # type: ignore[attr-defined]
    return module


def _broken(message: str = "database unreachable") -> types.ModuleType:
    module = types.ModuleType("broken_pack")

    def register_tools(register: Any) -> None:
        raise RuntimeError(message)

    module.register_tools = hookimpl(register_tools)  # type: ignore[attr-defined]
    return module


def _host(config: dict[str, Any]) -> Host:
    host = Host(config, discover=False)
    host.add_pack(_good(), "good")
    host.add_pack(_broken(), "broken")
    return host


# -- unknown agents ---------------------------------------------------------------------------


def test_an_unknown_agent_with_no_configuration_at_all_is_an_error() -> None:
    """No file: the message says where it looked and how to pass one."""
    host = Host(discover=False)
    assert host.config.path is None
    with pytest.raises(ConfigError) as caught:
        host.toolset("reseacher")
    message = str(caught.value)
    assert "no agent named 'reseacher'" in message
    assert str(Path.cwd()) in message
    assert "toolpacks.toml" in message
    assert "--config" in message


def test_no_agent_and_no_configuration_still_gives_every_pack() -> None:
    """``toolset()`` without an agent is the documented "everything installed" road."""
    host = Host(discover=False)
    host.add_pack(_good(), "good")
    assert host.toolset().names() == ["ping"]


def test_an_unknown_agent_suggests_the_closest_configured_one() -> None:
    """A typo gets a did-you-mean, and the list of agents."""
    host = _host({"agents": {"researcher": {"packs": ["good"]}, "writer": {}}})
    with pytest.raises(ConfigError) as caught:
        host.toolset("reseacher")
    assert "did you mean 'researcher'?" in str(caught.value)
    assert "researcher, writer" in str(caught.value)


def test_a_mapping_without_agents_names_none() -> None:
    """A configuration that defines no agent says so, rather than serving everything."""
    with pytest.raises(ConfigError, match="configured agents: none"):
        _host({}).toolset("anyone")


# -- failed packs -----------------------------------------------------------------------------


def test_a_failed_pack_an_agent_names_fails_the_toolset() -> None:
    """The PackError names the pack and the cause and says how to do without."""
    host = _host({"agents": {"a": {"packs": ["good", "broken"]}}})
    with pytest.raises(PackError) as caught:
        host.toolset("a")
    message = str(caught.value)
    assert "'broken'" in message
    assert "RuntimeError: database unreachable" in message
    assert "optional_packs" in message


def test_a_failed_pack_named_in_code_fails_the_toolset() -> None:
    """``toolset(packs=[...])`` names packs explicitly too."""
    with pytest.raises(PackError, match="broken"):
        _host({}).toolset(packs=["broken"])


def test_star_skips_failed_packs_with_one_warning(caplog: pytest.LogCaptureFixture) -> None:
    """``"*"`` takes what loads; the failure is logged once, however many toolsets."""
    host = _host({"agents": {"a": {"packs": ["*"]}}})
    with caplog.at_level(logging.WARNING, logger="toolpacks"):
        assert host.toolset("a").names() == ["ping"]
        assert host.toolset().names() == ["ping"]
    lines = [r.getMessage() for r in caplog.records if "broken" in r.getMessage()]
    assert len(lines) == 1, lines
    assert "database unreachable" in lines[0]


def test_optional_packs_let_an_agent_do_without() -> None:
    """A failed or missing optional pack is left out; the toolset is built."""
    config = {"agents": {"a": {"packs": ["good"], "optional_packs": ["broken", "absent"]}}}
    assert _host(config).toolset("a").names() == ["ping"]
    assert _host({}).toolset(packs=["good"], optional_packs=["broken"]).names() == ["ping"]


def test_an_optional_pack_that_loads_is_used() -> None:
    """Optional is not excluded: a working optional pack contributes its tools."""
    host = Host({"agents": {"a": {"packs": [], "optional_packs": ["good"]}}}, discover=False)
    host.add_pack(_good(), "good")
    assert host.toolset("a").names() == ["ping"]


def test_an_unknown_pack_gets_a_did_you_mean() -> None:
    """A misspelt pack name is a configuration error with the closest known name."""
    with pytest.raises(ConfigError, match="did you mean 'good'"):
        _host({"agents": {"a": {"packs": ["goodd"]}}}).toolset("a")


# -- untrusted implicit configuration ---------------------------------------------------------


SELECTING = """
[agents.a]
packs = ["good"]
include_tags = []

[packs]
disabled = ["broken"]
priority = ["good"]
"""


def test_an_implicit_untrusted_config_may_select() -> None:
    """Agents, packs.disabled and packs.priority apply without trust."""
    Path("toolpacks.toml").write_text(SELECTING, encoding="utf-8")
    host = Host(discover=False)
    host.add_pack(_good(), "good")
    assert not host.trusted
    assert host.toolset("a").names() == ["ping"]


@pytest.mark.parametrize(
    ("table", "key"),
    [
        ('[packs.files]\nroot = "/"\n', "packs.files"),
        ('[packs.copy]\npack = "good"\n', "packs.copy"),
        ('[mcp_servers.remote]\ncommand = "python"\nargs = ["server.py"]\n', "mcp_servers.remote"),
        ('[files]\ndirs = ["tools"]\n', "files"),
        ("[settings]\nexpose_errors = true\n", "settings"),
    ],
)
def test_an_implicit_untrusted_config_may_not_grant(table: str, key: str) -> None:
    """Settings, aliases, MCP servers, file tools and host settings need trust."""
    Path("toolpacks.toml").write_text(SELECTING + table, encoding="utf-8")
    host = Host(discover=False)
    host.add_pack(_good(), "good")
    with pytest.raises(UntrustedConfigError) as caught:
        host.toolset("a")
    message = str(caught.value)
    assert str(Path("toolpacks.toml").resolve()) in message
    assert key in message
    assert "toolpacks trust" in message


def test_untrusted_keys_in_pyproject_are_refused_too() -> None:
    """``[tool.toolpacks]`` found in pyproject.toml is an implicit configuration as well."""
    Path("pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.toolpacks.settings]\nexpose_errors = true\n',
        encoding="utf-8",
    )
    with pytest.raises(UntrustedConfigError, match="settings"):
        Host(discover=False).toolset()


def test_an_explicit_configuration_is_trusted(tmp_path: Path) -> None:
    """Passing the file is the user's decision: its settings apply."""
    path = Path("toolpacks.toml")
    path.write_text("[settings]\nexpose_errors = true\n", encoding="utf-8")
    host = Host(path, discover=False)
    assert host.trusted
    host.toolset()
