"""The configuration's schema: one pydantic model per table of ``toolpacks.toml``.

Unknown keys are errors; values may come from the environment (``{ env = "NAME" }``) and are
resolved where they are used. Secret-looking values are redacted in every ``repr()``.
Reading files, finding them and trust live in ``_load``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from toolpacks.core._secrets import REDACTED, redact
from toolpacks.host.config._auth import AuthConfig
from toolpacks.host.credentials._settings import CredentialConfig
from toolpacks.packs.isolated._settings import IsolatedConfig, isolation_of

__all__ = [
    "AgentConfig",
    "Config",
    "FilesConfig",
    "LlmConfig",
    "McpServerConfig",
    "SettingsConfig",
    "redact_args",
]

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
    """Drop tools whose hints resolve to any of these (``destructive``, ``read_only``, ...);
    a hint a tool does not state takes MCP's default (``destructive``: true unless read-only,
    ``open_world``: true, ``read_only`` and ``idempotent``: false)."""
    require_hints: list[str] = Field(default_factory=list)
    """Keep only tools whose hints resolve to every one of these (``["read_only"]``)."""
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
    token: dict[str, str] | None = Field(default=None, repr=False)
    """``{ env = "VAR" }``: a static bearer token that reaches this agent only over HTTP."""
    scopes: list[str] = Field(default_factory=list)
    """Scopes a principal needs to reach this agent at all (over HTTP: 403 without them)."""
    tool_scopes: dict[str, list[str]] = Field(default_factory=dict)
    """``"glob" = ["scope", ...]``: scopes a principal needs for the tools whose exposed or
    qualified names match, added to their own ``@tool(scopes=...)``."""
    prompts: list[str] | None = None
    """Prompts offered: qualified names (``pack.prompt``) or globs; unset offers every
    prompt of the agent's packs, ``[]`` none."""
    resources: list[str] | None = None
    """Resources offered: qualified names (``pack.resource``) or globs; unset offers every
    resource of the agent's packs, ``[]`` none."""


class McpServerConfig(_Strict):
    """A remote MCP server mounted as a pack (``[mcp_servers.NAME]``): ``command`` or ``url``."""

    command: str | None = None
    """The program to start over stdio (never run through a shell)."""
    url: str | None = None
    """The endpoint of a server reached over MCP streamable HTTP (``http://`` or ``https://``)."""
    headers: dict[str, str | dict[str, str]] = Field(default_factory=dict)
    """HTTP headers sent with every request to ``url``; a value may be ``{ env = "VAR" }``, or
    ``{ credential = "NAME", format = "Bearer {}" }``: the calling principal's own value."""
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
    sandbox: bool = False
    """``true``: a ``command`` server runs sandboxed like an isolated pack (Landlock: it reads
    only its program, Python, system files and ``read``; writes only ``write``), and refuses
    to start where the system offers no sandbox."""
    read: list[str] = Field(default_factory=list)
    """With ``sandbox``: absolute paths the server may read beneath."""
    write: list[str] = Field(default_factory=list)
    """With ``sandbox``: absolute paths the server may write beneath."""
    network: bool = True
    """With ``sandbox``: ``false`` refuses the server's TCP connect and bind."""

    @field_validator("read", "write")
    @classmethod
    def _grants(cls, value: list[str], info: Any) -> list[str]:
        from toolpacks.packs.sandbox import checked_grant

        return [checked_grant(entry, info.field_name) for entry in value]

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
    http_sessions: bool = False
    """``serve --http`` keeps an MCP session per client (one worker only), so tools can ask
    the client (elicitation, sampling) and subscriptions deliver updates; default stateless."""


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
    credentials: dict[str, CredentialConfig] = Field(default_factory=dict)
    """Per-user credentials tools may declare (``[credentials.NAME]``); values are stored
    encrypted per subject, never in this file."""
    auth: AuthConfig | None = None
    """``serve --http`` as an OAuth 2.1 resource server: the issuer whose tokens it accepts."""

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

    @model_validator(mode="after")
    def _check_header_credentials(self) -> Config:
        from toolpacks.packs.mcp._credential_headers import undefined_credentials

        problem = undefined_credentials(self.mcp_servers, self.credentials)
        if problem:
            raise ValueError(problem)
        return self

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
