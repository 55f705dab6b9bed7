"""The host configuration: ``toolpacks.toml`` (or ``[tool.toolpacks]`` in pyproject.toml).

Validated with pydantic; unknown keys are errors, and every error names the file, the key
and what is allowed. Values may come from the environment (``{ env = "NAME" }``), so
secrets stay out of the file; secret-looking values are redacted wherever the configuration
is shown.
"""

from __future__ import annotations

import hashlib
import os
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from toolpacks.core._secrets import REDACTED, redact
from toolpacks.exceptions import ConfigError
from toolpacks.host._config_errors import format_errors
from toolpacks.packs.isolated._settings import IsolatedConfig, isolation_of

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

ConflictPolicyName = Literal["error", "prefix", "first", "priority"]
_RESERVED_PACK_KEYS = frozenset({"disabled", "priority"})


class _Strict(BaseModel):
    # defer_build: validators are built on first use, not at import (``from toolpacks import
    # Host`` would pay some 40 ms for models a command like ``toolpacks list`` never uses).
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    def __repr_args__(self) -> Iterable[tuple[str | None, Any]]:
        """The fields for ``repr()`` and ``str()``, secret-looking values redacted."""
        for name, value in super().__repr_args__():
            yield name, value if isinstance(value, BaseModel) else redact(value)


class AgentConfig(_Strict):
    """How one agent's toolset is assembled (``[agents.NAME]``)."""

    packs: list[str] = Field(default_factory=lambda: ["*"])
    """Packs whose tools the agent gets; ``["*"]`` for every enabled pack. A pack named
    here that fails to load fails the toolset (``"*"`` skips failed packs with a warning)."""
    optional_packs: list[str] = Field(default_factory=list)
    """Packs the agent uses when they load, and does without (with a warning) when they
    fail or are not installed."""
    include_tags: list[str] = Field(default_factory=list)
    """Keep only tools with at least one of these tags (empty keeps all)."""
    exclude_tags: list[str] = Field(default_factory=list)
    """Drop tools with any of these tags."""
    exclude: list[str] = Field(default_factory=list)
    """Tools to drop: qualified (``pack.tool``) or exposed names, or globs (``files.*``)."""
    tools: list[str] = Field(default_factory=list)
    """Keep only tools matching one of these names or globs (``files.read_*``); [] keeps all."""
    exclude_hints: list[str] = Field(default_factory=list)
    """Drop tools declaring any of these hints (``destructive``, ``read_only``, ...)."""
    on_conflict: ConflictPolicyName = "error"
    """How to resolve two packs offering the same exposed name."""
    priority: list[str] = Field(default_factory=list)
    """Pack order for ``on_conflict = "priority"`` (earlier wins)."""
    rename: dict[str, str] = Field(default_factory=dict)
    """Qualified name to the name the model sees."""
    require_approval: bool | list[str] = False
    """``true`` for every tool, or qualified names of tools that need approval."""
    defer: list[str] | Literal["auto"] = Field(default_factory=list)
    """Tools sent only once a search finds them (still callable by name): pack names,
    ``tag:NAME``, exposed or qualified names or globs; or ``"auto"``."""
    defer_threshold: int = Field(default=30, ge=0)
    """``defer = "auto"`` defers every tool once the toolset has more tools than this."""
    never_defer: list[str] = Field(default_factory=list)
    """Tools always sent up front, whatever ``defer`` says (same patterns)."""


class McpServerConfig(_Strict):
    """A remote MCP server mounted as a pack (``[mcp_servers.NAME]``): ``command`` or ``url``."""

    command: str | None = None
    """The program to start over stdio (never run through a shell)."""
    url: str | None = None
    """The endpoint of a server reached over MCP streamable HTTP (``http://`` or ``https://``)."""
    headers: dict[str, str | dict[str, str]] = Field(default_factory=dict)
    """HTTP headers sent with every request to ``url``; a value may be ``{ env = "VAR" }``."""
    require_approval: bool | list[str] = False
    """``true``: every tool of the server needs approval; or the server's names of those that do."""
    args: list[str] = Field(default_factory=list)
    """Its arguments."""
    env: dict[str, str] | list[str] = Field(default_factory=dict)
    """Environment for the server: a mapping of values, or names copied from the host's
    environment. Nothing else of the host's environment is passed but a minimal set."""
    cwd: str | None = None
    """Working directory (relative to the config file)."""
    timeout: float = Field(default=30.0, gt=0)
    """Seconds allowed for starting (or connecting) and listing tools, and for each call."""
    max_message_bytes: int = Field(default=16 * 1024 * 1024, gt=0)
    """The largest message (a tool's result) read from a ``command`` server, in bytes
    (16 MiB); a call answered with a longer one fails with an error naming this cap."""
    tags: list[str] = Field(default_factory=list)
    """Tags given to every tool of the server."""

    @model_validator(mode="after")
    def _check_transport(self) -> McpServerConfig:
        from toolpacks.packs.mcp._spec import transport_problem

        problem = transport_problem(self)
        if problem:
            raise ValueError(problem)
        return self

    def __repr_args__(self) -> Iterable[tuple[str | None, Any]]:
        """The fields for ``repr()`` and ``str()``, secrets hidden.

        Environment (and header) values are hidden, their names kept; so are the values of
        secret-looking flags in ``args`` (``--token X``, ``--api-key=X``).
        """
        for name, value in super().__repr_args__():
            if name in _SERVER_SECRET_TABLES and isinstance(value, Mapping):
                yield name, dict.fromkeys(value, REDACTED)
            elif name == "args" and isinstance(value, list):
                yield name, redact_args(value)
            else:
                yield name, value


class FilesConfig(_Strict):
    """Local directories of file-based tools (``[files]``)."""

    dirs: list[str] = Field(default_factory=list)
    """Tools directories, relative to the config file; mounted as the pack ``files_local``."""
    pack: str = "local"
    """The pack name their tools get."""


class SettingsConfig(_Strict):
    """Host-wide settings (``[settings]``)."""

    expose_errors: bool = False
    """Send tool exception messages to the model (trusted development use only)."""
    extra_args: Literal["reject", "ignore"] | None = None
    """Override every tool's policy for undeclared arguments."""
    max_argument_bytes: int = Field(default=1024 * 1024, gt=0)
    """Largest JSON arguments text accepted."""
    max_argument_depth: int = Field(default=64, gt=0)
    """Deepest JSON nesting accepted."""
    max_content_chars: int = Field(default=100_000, ge=0)
    """Results whose text is longer are truncated with a marker (0: never)."""
    max_concurrency: int = Field(default=8, gt=0)
    """Default cap for ``Toolset.call_many``."""


class LlmConfig(_Strict):
    """Installed ``llm`` tool plugins mounted as packs (``[llm]``)."""

    plugins: list[str] = Field(default_factory=list)
    """Entry-point names (or distribution names) of ``llm`` plugins whose tools become
    packs of source ``llm``, each named after its entry point; ``["*"]`` for all."""


class Config(_Strict):
    """The whole configuration."""

    packs: dict[str, Any] = Field(default_factory=dict)
    """``disabled``, ``priority``, and one table of settings per pack (``[packs.NAME]``);
    a table with ``pack = "other"`` defines an alias: another instance of that pack."""
    agents: dict[str, AgentConfig] = Field(default_factory=dict)
    """Agents by name."""
    mcp_servers: dict[str, McpServerConfig] = Field(default_factory=dict)
    """Remote MCP servers mounted as packs."""
    files: FilesConfig = Field(default_factory=FilesConfig)
    """Local file-based tools."""
    settings: SettingsConfig = Field(default_factory=SettingsConfig)
    """Host-wide settings."""
    llm: LlmConfig = Field(default_factory=LlmConfig)
    """``llm`` tool plugins used as packs (runs their code: needs trust when implicit)."""
    isolated: dict[str, IsolatedConfig] = Field(default_factory=dict)
    """Packs each in an environment and a child process of its own (``[isolated.NAME]``)."""

    @field_validator("packs")
    @classmethod
    def _check_packs(cls, value: dict[str, Any]) -> dict[str, Any]:
        for key in ("disabled", "priority"):
            names = value.get(key, [])
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                raise ValueError(f"packs.{key} must be a list of pack names")
        for key, table in value.items():
            if key in _RESERVED_PACK_KEYS:
                continue
            if not isinstance(table, dict):
                raise ValueError(
                    f"packs.{key} must be a table of settings for pack {key!r} "
                    "(allowed plain keys: disabled, priority)"
                )
            if "pack" in table and not isinstance(table["pack"], str):
                raise ValueError(
                    f"packs.{key}.pack must be the name of the pack {key!r} is another "
                    "instance of (a string)"
                )
            isolation_of(table, f"packs.{key}")  # `isolate`, if set, must be valid
        return value

    @property
    def disabled(self) -> frozenset[str]:
        """Packs never imported."""
        return frozenset(self.packs.get("disabled", []))

    @property
    def priority(self) -> tuple[str, ...]:
        """Host-wide pack order for ``on_conflict = "priority"`` (an agent's own wins)."""
        return tuple(self.packs.get("priority", []))

    def pack_settings(self) -> dict[str, dict[str, Any]]:
        """Settings tables by pack name (aliases included)."""
        return {k: v for k, v in self.packs.items() if k not in _RESERVED_PACK_KEYS}


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


_SERVER_SECRET_TABLES = ("env", "headers")
"""Tables of an ``[mcp_servers.NAME]`` entry whose values are never shown."""


def redact_args(args: Sequence[str]) -> list[str]:
    """Command-line arguments for display, secrets hidden.

    The value of a secret-looking flag (``--token X``, ``--api-key=X``), of a secret-looking
    assignment or header (``GITHUB_TOKEN=X``, ``Authorization: Bearer X``), token-like
    strings and passwords in URLs are replaced by ``"****"`` (``packs.mcp._args``).
    """
    from toolpacks.packs.mcp._args import redact_args as hidden

    return hidden(args)


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
