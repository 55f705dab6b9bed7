"""Reading the host configuration: ``toolpacks.toml`` (or ``[tool.toolpacks]`` in pyproject.toml).

Found in the working directory or passed explicitly, parsed, validated against the models of
``_models`` (every error names the file, the key and what is allowed), and fingerprinted for
trust. Values may come from the environment (``{ env = "NAME" }``), so secrets stay out of
the file; secret-looking values are redacted wherever the configuration is shown.
"""

from __future__ import annotations

import hashlib
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from toolpacks.core._secrets import REDACTED, redact
from toolpacks.exceptions import ConfigError
from toolpacks.host.config._errors import format_errors
from toolpacks.host.config._models import (
    _RESERVED_PACK_KEYS,
    _SERVER_SECRET_TABLES,
    AgentConfig,
    Config,
    LlmConfig,
    McpServerConfig,
    SettingsConfig,
    redact_args,
)

__all__ = [
    "AgentConfig",
    "Config",
    "LlmConfig",
    "LoadedConfig",
    "McpServerConfig",
    "SettingsConfig",
    "find_config",
    "load_config",
    "redact_args",
    "resolve_env",
    "shown_raw",
    "untrusted_keys",
]


@dataclass(frozen=True, slots=True)
class LoadedConfig:
    """A validated configuration and where it came from."""

    config: Config
    """The validated configuration."""
    path: Path | None = None
    """The file it was read from (None for a mapping)."""
    implicit: bool = False
    """Whether it was found in the working directory rather than passed explicitly."""
    raw: Mapping[str, Any] = field(default_factory=dict)
    """The raw mapping, before validation."""
    digest: str | None = None
    """SHA-256 of the bytes that were parsed (None for a mapping): what trust records."""
    searched: Path | None = None
    """The directory looked in when no configuration was found (None otherwise)."""

    def __repr__(self) -> str:
        """The configuration with secret-looking values (and MCP server environments) hidden."""
        return (
            f"{type(self).__name__}(config={self.config!r}, path={self.path!r}, "
            f"implicit={self.implicit!r}, raw={shown_raw(self.raw)!r}, digest={self.digest!r})"
        )

    @property
    def base_dir(self) -> Path:
        """The directory relative paths in the configuration are resolved against."""
        return self.path.parent if self.path is not None else Path.cwd()

    @property
    def source(self) -> str:
        """A name for error messages: the file path or ``<mapping>``."""
        return str(self.path) if self.path is not None else "<mapping>"


def shown_raw(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A raw configuration for display, secrets hidden.

    It is ``redact``-ed, and every MCP server's environment values and secret-looking
    arguments are hidden too.
    """
    shown: dict[str, Any] = redact(dict(raw))
    servers = shown.get("mcp_servers")
    if isinstance(servers, dict):
        for table in servers.values():
            if not isinstance(table, dict):
                continue
            for key in _SERVER_SECRET_TABLES:
                if isinstance(table.get(key), dict):
                    table[key] = dict.fromkeys(table[key], REDACTED)
            if isinstance(table.get("args"), list):
                table["args"] = redact_args([str(a) for a in table["args"]])
    return shown


def find_config(cwd: Path | None = None) -> tuple[Path, bool] | None:
    """Find ``toolpacks.toml`` in ``cwd``, else a pyproject.toml with ``[tool.toolpacks]``.

    Returns:
        The path and whether it is a pyproject.toml, or None.
    """
    cwd = cwd or Path.cwd()
    candidate = cwd / "toolpacks.toml"
    if candidate.is_file():
        return candidate, False
    pyproject = cwd / "pyproject.toml"
    if pyproject.is_file():
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError):
            return None
        if isinstance(data.get("tool"), dict) and "toolpacks" in data["tool"]:
            return pyproject, True
    return None


def _read_file(path: Path, pyproject: bool) -> tuple[dict[str, Any], str]:
    """The configuration in ``path`` and the SHA-256 of the very bytes that were parsed."""
    try:
        data_bytes = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"{path}: configuration file not found") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read configuration: {exc.strerror}") from None
    digest = hashlib.sha256(data_bytes).hexdigest()
    try:
        data = tomllib.loads(data_bytes.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text: {exc.reason}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    if pyproject:
        tool = data.get("tool", {})
        section = tool.get("toolpacks", {}) if isinstance(tool, dict) else {}
        if not isinstance(section, dict):
            raise ConfigError(f"{path}: [tool.toolpacks] must be a table")
        return section, digest
    return data, digest


def untrusted_keys(raw: Mapping[str, Any]) -> list[str]:
    """The keys of ``raw`` that grant capability or run code, so need trust when implicit.

    An implicit configuration may only *select* among installed packs untrusted:
    ``[agents.*]``, ``packs.disabled`` and ``packs.priority``. Pack settings and aliases,
    MCP servers, file tools and host settings need ``toolpacks trust``.
    """
    keys: list[str] = []
    for key, value in raw.items():
        if key == "agents":
            continue
        if key == "packs" and isinstance(value, Mapping):
            keys.extend(f"packs.{k}" for k in value if k not in _RESERVED_PACK_KEYS)
        elif key in ("mcp_servers", "isolated") and isinstance(value, Mapping):
            keys.extend(f"{key}.{k}" for k in value)
        else:
            keys.append(str(key))
    return keys


def load_config(config: str | os.PathLike[str] | Mapping[str, Any] | None) -> LoadedConfig:
    """Load and validate a configuration.

    Args:
        config: A path (``toolpacks.toml`` or a pyproject.toml), a mapping, or None to look
            in the working directory (an implicit configuration; empty when none is found).

    Raises:
        ConfigError: The file cannot be read or parsed, or a key is unknown or invalid.
    """
    path: Path | None = None
    implicit = False
    digest: str | None = None
    if config is None:
        found = find_config()
        if found is None:
            return LoadedConfig(Config(), None, True, {}, searched=Path.cwd())
        path, is_pyproject = found
        raw, digest = _read_file(path, is_pyproject)
        implicit = True
    elif isinstance(config, Mapping):
        raw = dict(config)
    else:
        path = Path(config).resolve()
        raw, digest = _read_file(path, path.name == "pyproject.toml")
    source = str(path) if path else "<mapping>"
    try:
        validated = Config.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(format_errors(source, exc, Config)) from None
    for name, agent in validated.agents.items():
        if agent.on_conflict == "priority" and not (agent.priority or validated.priority):
            raise ConfigError(
                f'{source}: agents.{name}: on_conflict = "priority" needs a `priority` list '
                "of pack names, earliest wins (in the agent, or [packs] priority for every agent)"
            )
    return LoadedConfig(validated, path, implicit, raw, digest)


def resolve_env(value: Any, where: str, environ: Mapping[str, str] | None = None) -> Any:
    """Replace ``{ env = "NAME", default = ... }`` tables in ``value`` with the variable.

    Args:
        value: A configuration value (tables and lists are searched).
        where: The key of ``value``, for messages (``config.toml: packs.sqlite``).
        environ: The environment to read (``os.environ`` by default).

    Raises:
        ConfigError: A variable is not set and has no default.
    """
    env = os.environ if environ is None else environ
    if isinstance(value, dict):
        if set(value) <= {"env", "default"} and isinstance(value.get("env"), str):
            name = value["env"]
            if name in env:
                return env[name]
            if "default" in value:
                return value["default"]
            raise ConfigError(
                f"{where}: environment variable {name!r} is not set (and no default is given)"
            )
        return {k: resolve_env(v, f"{where}.{k}", env) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve_env(v, f"{where}[{i}]", env) for i, v in enumerate(value)]
    return value
