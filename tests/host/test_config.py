"""Configuration: where it comes from, validation errors, environment values, secrets, aliases."""

from __future__ import annotations

import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from toolpacks import ConfigError, Host, Toolbox, hookimpl, tool
from toolpacks.testing import call

SAMPLE = """
[agents.researcher]
packs = ["web"]
include_tags = ["read"]
"""


class Database(Toolbox):
    """A toolbox configured with a database path and an optional password."""

    def __init__(self, database: str, password: str = "") -> None:
        self.database = database
        self.password = password

    def where(self) -> str:
        """Say which database this instance uses."""
        return self.database

    def leak(self) -> str:
        """Fail with the password in the message."""
        raise RuntimeError(f"cannot connect with password {self.password}")


def db_pack() -> types.ModuleType:
    """A pack building its toolbox from ``register.config``."""
    module = types.ModuleType("db_pack")

    @hookimpl
    def register_tools(register: Any) -> None:
        register(Database(**register.config))

    module.register_tools = register_tools  # type: ignore[attr-defined]
    return module


def settings_pack(seen: list[dict[str, Any]]) -> types.ModuleType:
    """A pack that records the settings it receives and registers one tool."""
    module = types.ModuleType("settings_pack")

    @tool
    def noop() -> str:
        """Do nothing."""
        return ""

    @hookimpl
    def register_tools(register: Any) -> None:
        seen.append(dict(register.config))
        register(noop)

    module.register_tools = register_tools  # type: ignore[attr-defined]
    return module


# -- sources ------------------------------------------------------------------------------------


def test_config_from_a_path(tmp_path: Path, pack_of: Callable[..., Any]) -> None:
    """A path to a TOML file is read, and its agents shape the toolset."""
    path = tmp_path / "custom.toml"
    path.write_text(SAMPLE, encoding="utf-8")
    host = Host(path, discover=False)
    assert host.config.path == path.resolve()
    assert not host.config.implicit
    assert host.agent_config("researcher").include_tags == ["read"]


def test_config_from_a_path_string(tmp_path: Path) -> None:
    """A path given as a string works like a Path."""
    path = tmp_path / "custom.toml"
    path.write_text(SAMPLE, encoding="utf-8")
    assert Host(str(path), discover=False).agent_config("researcher").packs == ["web"]


def test_config_from_a_mapping() -> None:
    """A mapping is validated like a file and reported as <mapping> in messages."""
    host = Host({"agents": {"a": {"packs": ["x"]}}}, discover=False)
    assert host.config.path is None
    assert host.config.source == "<mapping>"
    assert host.agent_config("a").packs == ["x"]


def test_implicit_toolpacks_toml_in_working_directory() -> None:
    """Without an argument, toolpacks.toml in the working directory is used (implicitly)."""
    Path("toolpacks.toml").write_text(SAMPLE, encoding="utf-8")
    host = Host(discover=False)
    assert host.config.implicit
    assert host.config.path == Path("toolpacks.toml").resolve()
    assert "researcher" in host.config.config.agents


def test_implicit_pyproject_tool_section() -> None:
    """Without toolpacks.toml, [tool.toolpacks] of pyproject.toml is used."""
    Path("pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.toolpacks.agents.researcher]\npacks = ["web"]\n',
        encoding="utf-8",
    )
    host = Host(discover=False)
    assert host.config.path is not None
    assert host.config.path.name == "pyproject.toml"
    assert host.agent_config("researcher").packs == ["web"]


def test_toolpacks_toml_wins_over_pyproject() -> None:
    """toolpacks.toml is preferred when both files exist."""
    Path("pyproject.toml").write_text(
        '[tool.toolpacks.agents.other]\npacks = ["x"]\n', encoding="utf-8"
    )
    Path("toolpacks.toml").write_text(SAMPLE, encoding="utf-8")
    assert list(Host(discover=False).config.config.agents) == ["researcher"]


def test_pyproject_without_section_is_no_configuration() -> None:
    """A pyproject.toml without [tool.toolpacks] is ignored: empty, implicit configuration."""
    Path("pyproject.toml").write_text('[project]\nname = "x"\n', encoding="utf-8")
    host = Host(discover=False)
    assert host.config.path is None
    assert host.config.config.agents == {}


def test_explicit_pyproject_path_reads_tool_section(tmp_path: Path) -> None:
    """An explicit path to a pyproject.toml reads its [tool.toolpacks] table."""
    path = tmp_path / "pyproject.toml"
    path.write_text('[tool.toolpacks.packs]\ndisabled = ["shell"]\n', encoding="utf-8")
    assert Host(path, discover=False).config.config.disabled == {"shell"}


# -- errors -------------------------------------------------------------------------------------


def test_unknown_on_conflict_lists_valid_policies(tmp_path: Path) -> None:
    """An unknown on_conflict value names the file, the key and every valid policy."""
    path = tmp_path / "toolpacks.toml"
    path.write_text('[agents.a]\non_conflict = "last"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        Host(path, discover=False)
    message = str(info.value)
    assert str(path) in message
    assert "agents.a.on_conflict" in message
    for valid in ("error", "prefix", "first", "priority"):
        assert valid in message


def test_unknown_key_is_an_error_listing_allowed_keys(tmp_path: Path) -> None:
    """An unknown key is an error (not ignored) that lists the keys allowed there."""
    path = tmp_path / "toolpacks.toml"
    path.write_text('[agents.a]\npackz = ["web"]\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"agents\.a\.packz: unknown key") as info:
        Host(path, discover=False)
    assert "include_tags" in str(info.value)
    assert str(path) in str(info.value)


def test_unknown_top_level_table_is_an_error() -> None:
    """An unknown top-level table is refused too."""
    with pytest.raises(ConfigError, match=r"agent: unknown key; allowed keys: agents"):
        Host({"agent": {}}, discover=False)


def test_wrong_type_names_key_and_expected_types() -> None:
    """A value of the wrong type names the key, the types allowed and the value given."""
    with pytest.raises(ConfigError) as info:
        Host({"agents": {"a": {"require_approval": "files.delete"}}}, discover=False)
    message = str(info.value)
    assert "agents.a.require_approval" in message
    assert "bool or list[str]" in message
    assert "'files.delete'" in message


def test_invalid_settings_value_is_reported() -> None:
    """A numeric setting out of range names its key and the constraint."""
    with pytest.raises(ConfigError, match=r"settings\.max_concurrency: Input should be greater"):
        Host({"settings": {"max_concurrency": 0}}, discover=False)


def test_invalid_toml_names_the_file(tmp_path: Path) -> None:
    """Unparseable TOML is a ConfigError naming the file and the position."""
    path = tmp_path / "toolpacks.toml"
    path.write_text("[agents.a\npacks = 1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="invalid TOML") as info:
        Host(path, discover=False)
    assert str(path) in str(info.value)
    assert "line 1" in str(info.value)


def test_missing_file_is_a_config_error(tmp_path: Path) -> None:
    """A configuration path that does not exist is a ConfigError naming it."""
    path = tmp_path / "nowhere.toml"
    with pytest.raises(ConfigError, match="configuration file not found") as info:
        Host(path, discover=False)
    assert str(path) in str(info.value)


def test_config_error_is_a_value_error() -> None:
    """ConfigError is also a ValueError, so existing handlers keep working."""
    with pytest.raises(ValueError, match="unknown key"):
        Host({"nope": 1}, discover=False)


def test_pack_table_must_be_a_table() -> None:
    """A plain value under [packs] other than disabled/priority is refused."""
    with pytest.raises(ConfigError, match=r"packs\.web must be a table"):
        Host({"packs": {"web": 3}}, discover=False)


def test_unknown_agent_lists_configured_ones() -> None:
    """Asking for an agent that is not configured names the configured ones."""
    host = Host({"agents": {"a": {}, "b": {}}}, discover=False)
    with pytest.raises(ConfigError, match="no agent named 'c'; configured agents: a, b"):
        host.toolset("c")


def test_priority_policy_without_priority_list_is_a_config_error() -> None:
    """on_conflict = "priority" with no priority list is refused when the file is loaded."""
    with pytest.raises(ConfigError, match="needs a `priority` list"):
        Host({"agents": {"a": {"on_conflict": "priority"}}}, discover=False)


def test_packs_priority_serves_every_agent() -> None:
    """A host-wide [packs] priority satisfies an agent using the priority policy."""
    host = Host(
        {"packs": {"priority": ["fs"]}, "agents": {"a": {"on_conflict": "priority"}}},
        discover=False,
    )
    assert host.config.config.priority == ("fs",)


# -- environment values and secrets -------------------------------------------------------------


def test_env_values_reach_the_pack(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``{ env = "NAME" }`` value is replaced by the variable when the pack loads."""
    monkeypatch.setenv("TEST_DB_PATH", "/data/main.db")
    seen: list[dict[str, Any]] = []
    host = Host({"packs": {"db": {"path": {"env": "TEST_DB_PATH"}, "n": 3}}}, discover=False)
    host.add_pack(settings_pack(seen), "db")
    host.toolset()
    assert seen == [{"path": "/data/main.db", "n": 3}]


def test_env_value_default_is_used_when_unset() -> None:
    """``{ env = "NAME", default = ... }`` falls back to the default."""
    seen: list[dict[str, Any]] = []
    host = Host(
        {"packs": {"db": {"path": {"env": "TEST_UNSET_VAR_X", "default": "mem"}}}},
        discover=False,
        environ={},
    )
    host.add_pack(settings_pack(seen), "db")
    host.toolset()
    assert seen == [{"path": "mem"}]


def test_missing_env_var_fails_the_pack_with_its_key() -> None:
    """An unset variable without default fails that pack, naming the variable and the key."""
    host = Host({"packs": {"db": {"token": {"env": "TEST_MISSING_TOKEN"}}}}, discover=False)
    host.add_pack(settings_pack([]), "db")
    loaded = host.load("db")
    assert loaded.info.status == "failed"
    assert loaded.info.error is not None
    assert "TEST_MISSING_TOKEN" in loaded.info.error
    assert "packs.db.token" in loaded.info.error


def test_env_values_come_from_the_host_environ_argument() -> None:
    """``Host(environ=...)`` is the environment ``{ env = ... }`` values are read from."""
    seen: list[dict[str, Any]] = []
    host = Host(
        {"packs": {"db": {"path": {"env": "ONLY_IN_ARG"}}}},
        discover=False,
        environ={"ONLY_IN_ARG": "from-arg"},
    )
    host.add_pack(settings_pack(seen), "db")
    host.toolset()
    assert seen == [{"path": "from-arg"}]


def test_shown_config_redacts_secret_looking_values() -> None:
    """shown_config() hides values under secret-looking keys, tokens and URL passwords."""
    host = Host(
        {
            "packs": {
                "db": {
                    "api_key": "abc123",
                    "password": "hunter2",
                    "url": "postgres://me:pw123@db.example/main",
                    "header": "Bearer xyz",
                    "token": {"env": "DB_TOKEN"},
                    "path": "/data/main.db",
                }
            },
            "mcp_servers": {"gh": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": "ghp_secret"}}},
        },
        discover=False,
    )
    shown = host.shown_config()
    db = shown["packs"]["db"]
    assert db["api_key"] == "****"
    assert db["password"] == "****"
    assert db["url"] == "postgres://me:****@db.example/main"
    assert db["header"] == "****"
    assert db["token"] == {"env": "DB_TOKEN"}  # names a variable, not a secret
    assert db["path"] == "/data/main.db"
    assert shown["mcp_servers"]["gh"]["env"]["GITHUB_TOKEN"] == "****"
    text = repr(shown)
    for secret in ("abc123", "hunter2", "pw123", "ghp_secret", "xyz"):
        assert secret not in text


def test_secrets_from_env_are_scrubbed_from_error_messages(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A secret read from the environment never reaches the model, even with exposed errors."""
    monkeypatch.setenv("TEST_DB_PASSWORD", "s3cr3t-value")
    host = Host(
        {
            "packs": {"db": {"database": "main.db", "password": {"env": "TEST_DB_PASSWORD"}}},
            "settings": {"expose_errors": True},
        },
        discover=False,
    )
    host.add_pack(db_pack(), "db")
    result = call(host.toolset(), "leak")
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "tool_error"
    assert "RuntimeError" in result.content
    assert "s3cr3t-value" not in result.content


# -- per-pack settings and aliases --------------------------------------------------------------


def test_pack_settings_reach_register_config() -> None:
    """A [packs.NAME] table is what the pack's register.config holds."""
    host = Host({"packs": {"db": {"database": "main.db"}}}, discover=False)
    host.add_pack(db_pack(), "db")
    assert call(host.toolset(), "where").value == "main.db"


def test_add_pack_config_overrides_file_settings() -> None:
    """``add_pack(config=...)`` gives the pack its settings directly."""
    host = Host({"packs": {"db": {"database": "file.db"}}}, discover=False)
    host.add_pack(db_pack(), "db", config={"database": "given.db"})
    assert call(host.toolset(), "where").value == "given.db"


def test_alias_is_a_second_instance_with_its_own_settings() -> None:
    """``[packs.analytics] pack = "db"`` instantiates the pack again under its own name."""
    host = Host(
        {
            "packs": {
                "db": {"database": "main.db"},
                "analytics": {"pack": "db", "database": "analytics.db"},
            }
        },
        discover=False,
    )
    host.add_pack(db_pack(), "db")
    assert host.pack("analytics").source == "alias"
    assert host.pack("analytics").alias_of == "db"
    ts = host.toolset(on_conflict="prefix")
    assert ts.names() == ["analytics_leak", "analytics_where", "db_leak", "db_where"]
    assert ts.qualified_name("analytics_where") == "analytics.where"
    assert call(ts, "analytics_where").value == "analytics.db"
    assert call(ts, "db.where").value == "main.db"


def test_alias_of_unknown_pack_fails_with_a_message() -> None:
    """An alias of a pack that does not exist is a failed pack naming the key and the packs."""
    host = Host({"packs": {"analytics": {"pack": "nosuch"}}}, discover=False)
    info = host.pack("analytics")
    assert info.status == "failed"
    assert info.error is not None
    assert "packs.analytics.pack = 'nosuch'" in info.error


def test_alias_pack_value_must_be_a_string() -> None:
    """``pack = 3`` in a pack table is a validation error."""
    with pytest.raises(ConfigError, match=r"packs\.analytics\.pack must be the name"):
        Host({"packs": {"analytics": {"pack": 3}}}, discover=False)


def test_alias_name_already_used_is_refused(pack_of: Callable[..., Any]) -> None:
    """Adding a pack under a name the configuration uses for an alias is refused."""
    host = Host({"packs": {"analytics": {"pack": "db"}}}, discover=False)
    host.add_pack(db_pack(), "db")
    with pytest.raises(ValueError, match="already used by pack 'analytics'"):
        host.add_pack(pack_of(), "analytics")


def test_mcp_server_name_clashing_with_a_pack_is_a_config_error(
    pack_of: Callable[..., Any],
) -> None:
    """An MCP server may not take the name of an alias: names stay unique."""
    with pytest.raises(ConfigError, match=r"(mcp_servers|packs)\.x: the name 'x' is already used"):
        Host(
            {
                "packs": {"base": {}, "x": {"pack": "base"}},
                "mcp_servers": {"x": {"command": "server"}},
            },
            discover=False,
        )
