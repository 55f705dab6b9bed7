"""Remote MCP servers as packs: ``[mcp_servers.NAME]`` becomes the pack ``NAME``.

``Host`` calls ``load_mcp_pack`` when a toolset first needs the pack. The server is started
(``command``, over stdio) or reached (``url``, streamable HTTP) — see ``_connection`` —
its tools are listed, and each becomes a ``Tool`` whose schema, output schema, title and
behaviour hints come from the server, so it is namespaced, filtered, validated and called like
any other. A server that cannot be started or reached is a ``failed`` pack with the reason.

Later changes keep the pack honest:

- **The server changes its tools** (``notifications/tools/list_changed``): the pack's tools
  are rebuilt from the new list. Toolsets built afterwards see the new list (and the lock
  file withholds changed or new tools as usual); a toolset built before keeps its tools, and a
  call to one that the server no longer offers, or whose definition changed, is an error
  result saying to build the toolset again — a model is never served a definition it was not
  shown.
- **The server dies** (or its connection breaks): calls are error results saying when it is
  started again; the next call after that starts it (see ``_connection`` for the backoff)
  and the pack's ``error`` says what happened meanwhile. Its status stays ``loaded``.
"""

from __future__ import annotations

import importlib.util
import inspect
import logging
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from toolpacks.core import _logscrub
from toolpacks.core._context import ToolContext
from toolpacks.core._secrets import REDACTED, is_secret_key, is_secret_value, scrub
from toolpacks.core._tool import Tool
from toolpacks.exceptions import PackError, ToolError
from toolpacks.packs._record import LoadedPack, PackInfo
from toolpacks.packs.mcp._approval import AskApproval, CallTag, answer_elicitation
from toolpacks.packs.mcp._args import secret_args
from toolpacks.packs.mcp._names import (
    ApprovalGate,
    Gatekeeper,
    approval_plan,
    exposed_names,
    tool_name,
)
from toolpacks.packs.mcp._offered import remote_offerings
from toolpacks.packs.mcp._relay import MESSAGE_TOO_LARGE
from toolpacks.packs.mcp._results import content_text, result_value
from toolpacks.packs.mcp._spec import (
    ServerSpec,
    TransportSettings,
    code_fingerprint,
    resolve_headers,
)

if TYPE_CHECKING:
    import mcp_types

    from toolpacks.packs.mcp._connection import McpConnection

__all__ = ["content_text", "load_mcp_pack", "result_value"]

logger = logging.getLogger("toolpacks.mcp")


class McpServerSettings(TransportSettings, Protocol):
    """What mounting a server needs of its ``[mcp_servers.NAME]`` table (the host's model).

    ``command``, ``url`` and ``headers`` are the transport's (``TransportSettings``).
    """

    @property
    def args(self) -> Sequence[str]:
        """Its arguments."""

    @property
    def env(self) -> Mapping[str, str] | Sequence[str]:
        """Values to set, or names of variables to copy from the host's environment."""

    @property
    def cwd(self) -> str | None:
        """Working directory, relative to the configuration's directory."""

    @property
    def timeout(self) -> float:
        """Seconds allowed for starting, the handshake and listing tools; and per call."""

    @property
    def max_message_bytes(self) -> int:
        """The largest message read from a stdio server (a longer result fails its call)."""

    @property
    def tags(self) -> Sequence[str]:
        """Tags given to every tool of the server."""

    @property
    def require_approval(self) -> bool | Sequence[str]:
        """Every tool needs approval (True), or the server's names of those that do."""


_CONTEXT = "_toolpacks_context"
"""The keyword a remote tool's function receives its ``ToolContext`` under."""
_UNTYPED = inspect.Signature(
    [
        inspect.Parameter(
            _CONTEXT, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=ToolContext
        ),
        inspect.Parameter("arguments", inspect.Parameter.VAR_KEYWORD),
    ]
)


def load_mcp_pack(
    info: PackInfo,
    cfg: McpServerSettings,
    base_dir: Path,
    environ: Mapping[str, str] | None = None,
    ask: AskApproval | None = None,
) -> LoadedPack:
    """Start (or connect to) the MCP server ``cfg`` describes; its tools are the pack.

    Never raises: a server that cannot be started or reached (command not found, connection
    refused, HTTP 401, exits during startup, no answer within ``cfg.timeout``) or a header
    whose variable is not set gives a ``failed`` pack whose error says why.

    Args:
        info: The pack's identity (``source == "mcp"``).
        cfg: The ``[mcp_servers.NAME]`` table.
        base_dir: The directory a relative ``cwd`` is resolved against.
        environ: The host environment that names in ``cfg.env`` and ``{ env = ... }`` header
            values are read from (``os.environ`` by default); nothing else of it reaches the
            server.
        ask: Asks the host's approval handler when the server requests approval mid-call
            (elicitation); without it such requests are declined.
    """
    started = time.perf_counter()

    def failed(error: str) -> LoadedPack:
        elapsed = time.perf_counter() - started
        logger.warning("%s failed to load: %s", info.describe(), error)
        return LoadedPack(replace(info, status="failed", error=error, import_seconds=elapsed))

    if importlib.util.find_spec("mcp") is None:  # the optional extra is missing
        return failed(
            "the MCP SDK is not installed, so MCP servers cannot be used; "
            "install it with `pip install 'toolpacks[mcp]'`"
        )
    source = os.environ if environ is None else environ
    try:
        spec, problems = _server_spec(info.name, cfg, base_dir, source)
    except ValueError as exc:
        return failed(str(exc))
    mount = _Mount(info, cfg, spec, base_dir, ask)
    try:
        remote_tools = mount.connection.start()
    except PackError as exc:
        return failed(mount.scrub(str(exc)))
    except Exception as exc:  # a fault of ours or the SDK's: still a failed pack, not a crash
        logger.debug("%s failed to start", spec.describe(), exc_info=True)
        return failed(mount.scrub(f"{spec.describe()} could not be started ({exc!r})"))
    pack = mount.mounted(remote_tools, problems, time.perf_counter() - started)
    pack.prompts, pack.resources = remote_offerings(mount.connection, info.name, cfg.timeout)
    if mount.connection.lost_reason is not None:  # it died while its tools were being built
        mount.on_lost(mount.connection.lost_reason)
    return pack


def _server_spec(
    name: str, cfg: McpServerSettings, base_dir: Path, environ: Mapping[str, str]
) -> tuple[ServerSpec, list[str]]:
    """The resolved ``ServerSpec``, and non-fatal problems (unset variables, plain HTTP)."""
    from toolpacks.packs.mcp._spec import sandbox_rules, server_environment

    where = f"mcp_servers.{name}"
    problems: list[str] = []
    if cfg.url is not None:
        spec = ServerSpec(
            name=name,
            url=cfg.url,
            headers=resolve_headers(cfg.headers, where, environ),
            timeout=cfg.timeout,
            max_message_bytes=cfg.max_message_bytes,
        )
        if spec.insecure():
            problems.append(
                f"{where}: headers are sent over plain http:// to a host that is not this "
                "machine; use https:// so that credentials are not readable on the way"
            )
        return spec, problems
    env, missing = server_environment(cfg.env, environ)
    problems.extend(
        f"environment variable {variable!r} listed in {where}.env is not set; "
        "the server runs without it"
        for variable in missing
    )
    spec = ServerSpec(
        name=name,
        command=cfg.command,
        args=tuple(cfg.args),
        env=env,
        cwd=(base_dir / cfg.cwd) if cfg.cwd else None,
        timeout=cfg.timeout,
        max_message_bytes=cfg.max_message_bytes,
        base_dir=base_dir,
        sandbox=sandbox_rules(cfg),
    )
    return spec, problems


class _Mount:
    """One mounted server: its connection, and the pack its tools are kept current in."""

    def __init__(
        self,
        info: PackInfo,
        cfg: McpServerSettings,
        spec: ServerSpec,
        base_dir: Path,
        ask: AskApproval | None,
    ) -> None:
        from toolpacks.packs.mcp._per_principal import connection_for

        self.info = info
        self.cfg = cfg
        self.spec = spec
        self.ask = ask
        self.base_dir = base_dir
        self.secrets = _secret_values(spec.env, spec.headers, cfg.headers, spec.args)
        """Values kept out of messages, logs and results (variables, headers, arguments)."""
        _logscrub.remember(self, self.secrets)  # the SDK's records too (the mcp logger tree)
        self.problems: list[str] = []
        """Problems of the configuration (unset variables, plain HTTP), kept across lists."""
        self.pack: LoadedPack | None = None
        self.gate = ApprovalGate()
        """Which of the server's tools require approval (``require_approval``), now."""
        self.code = code_fingerprint(spec, base_dir) if spec.url is None else None
        self.connection = connection_for(  # per principal when headers carry a credential
            spec,
            cfg.headers,
            on_lost=self.on_lost,
            on_tools=self.on_tools,
            elicit=self.elicit,
            may_restart=self.may_restart,
            scrub=self.scrub,
        )

    def scrub(self, message: str) -> str:
        """``message`` with the server's secret values (environment, headers) masked."""
        return scrub(message, self.secrets, REDACTED)

    def mounted(
        self, remote: list[mcp_types.Tool], problems: list[str], seconds: float
    ) -> LoadedPack:
        """The loaded pack for the first tool list."""
        tools, naming = self._build(remote)
        self.problems = problems
        self.pack = LoadedPack(
            replace(self.info, status="loaded", tools=tuple(tools), import_seconds=seconds),
            tools,
            problems=[*problems, *naming],
            closer=self.connection.close,
            secrets=tuple(self.secrets),
        )
        return self.pack

    def _build(self, remote: list[mcp_types.Tool]) -> tuple[dict[str, Tool], list[str]]:
        """The pack's tools for ``remote``, its approval plan updated first; and problems."""
        named = exposed_names(remote)
        gate, gating = approval_plan(self.cfg.require_approval, named, self.info.name)
        if gate.every and not self.gate.every and gating:
            logger.warning("%s", gating[-1])
        self.gate = gate
        tools, naming = build_tools(self.connection, remote, self.info.name, self.cfg, self)
        return tools, [*naming, *gating]

    def requires_approval(self, remote_name: str) -> bool:
        """Whether the server's tool ``remote_name`` requires approval now."""
        return self.gate.every or remote_name in self.gate.names

    def on_lost(self, reason: str) -> None:
        """The server is gone: say so in the pack's ``error`` (its tools stay listed)."""
        pack = self.pack
        if pack is None:
            return
        error = self.scrub(
            f"{self.spec.describe()} stopped after it was loaded ({reason}); it is started "
            "again at the next call of one of its tools"
        )
        pack.info = replace(pack.info, error=error)

    def on_tools(self, remote: list[mcp_types.Tool]) -> None:
        """A new tool list (a change, or a restart): rebuild the pack's tools from it."""
        pack = self.pack
        if pack is None:
            return
        tools, naming = self._build(remote)
        pack.problems = [*self.problems, *naming]
        pack.tools = tools
        pack.info = replace(pack.info, status="loaded", tools=tuple(tools), error=None)

    def may_restart(self) -> str | None:
        """Refuse to restart a stdio server whose code (files trust covers) changed."""
        if self.code is None or code_fingerprint(self.spec, self.base_dir) == self.code:
            return None
        return (
            "its script changed since it was started, so it is not started again from code "
            "that was not reviewed; reload the host (Host.reload(), or restart the "
            "application) to use the new code, after `toolpacks trust` for a configuration "
            "found in the working directory"
        )

    async def elicit(
        self, params: mcp_types.ElicitRequestParams, tag: Any
    ) -> mcp_types.ElicitResult:
        """Answer the server's request for input during the call ``tag``."""
        return await answer_elicitation(self.ask, params, tag)


def build_tools(
    connection: McpConnection,
    remote_tools: list[mcp_types.Tool],
    pack: str,
    cfg: McpServerSettings,
    gate: Gatekeeper,
) -> tuple[dict[str, Tool], list[str]]:
    """One ``Tool`` per remote tool, keyed by qualified name; and naming problems.

    Each requires approval as ``gate`` says now; a call asks ``gate`` again before it is sent.
    """
    tools: dict[str, Tool] = {}
    problems: list[str] = []
    for remote, (_, name) in zip(remote_tools, exposed_names(remote_tools), strict=True):
        if name != tool_name(remote.name):
            problems.append(
                f"tool {remote.name!r} is exposed as {name!r}: its sanitized name collides with "
                "another tool of the server"
            )
        elif name != remote.name:
            logger.debug("pack %r: remote tool %r is named %r", pack, remote.name, name)
        try:
            t = _remote_tool(connection, remote, name, pack, cfg, gate)
        except Exception as exc:  # a definition toolpacks cannot accept: skip that tool only
            problems.append(f"tool {remote.name!r} was skipped: {exc}")
            logger.warning("pack %r: remote tool %r skipped: %s", pack, remote.name, exc)
            continue
        t.pack = pack
        tools[f"{pack}.{name}"] = t
    return tools, problems


def _definition(remote: mcp_types.Tool) -> tuple[Any, ...]:
    """What a model is shown of a remote tool (a change means a new definition)."""
    hints = remote.annotations.model_dump(exclude_none=True) if remote.annotations else None
    return (remote.title, remote.description, remote.input_schema, remote.output_schema, hints)


class _RemoteCall:
    """The function behind a remote tool: sends ``tools/call`` and converts the result."""

    # No annotations but the context, so ``Tool`` validates against the server's JSON Schema.
    __signature__ = _UNTYPED

    def __init__(
        self,
        connection: McpConnection,
        remote: mcp_types.Tool,
        name: str,
        pack: str,
        gate: Gatekeeper,
    ) -> None:
        self.connection = connection
        self.gate = gate
        self.require_approval = gate.requires_approval(remote.name)
        """Whether the toolset asks before calling it (as the plan said at build time)."""
        self.remote_name = remote.name
        self.definition = _definition(remote)
        self.tool_name = name
        self.pack = pack
        self.__name__ = remote.name
        self.__qualname__ = f"mcp:{connection.spec.name}.{remote.name}"

    def check(self) -> None:
        """Refuse a call to a tool the server no longer offers as this toolset knows it."""
        server, name = self.connection.spec.name, self.remote_name
        current = self.connection.tools.get(name)
        if current is None:
            raise ToolError(
                f"The MCP server '{server}' no longer offers the tool '{name}' (its tool list "
                "changed). Build the toolset again for the current tools."
            )
        if _definition(current) != self.definition:
            raise ToolError(
                f"The MCP server '{server}' changed the definition of '{name}' since this "
                "toolset was built, so it is not called with the old one. Build the toolset "
                "again to see the new definition (a toolpacks.lock withholds it until "
                "`toolpacks lock` runs again)."
            )
        if self.gate.requires_approval(name) and not self.require_approval:
            raise ToolError(
                f"The tool '{name}' of the MCP server '{server}' now requires approval (its "
                f"tools changed, and mcp_servers.{server}.require_approval names a tool it no "
                "longer offers), and this toolset was built without asking for it. Build the "
                "toolset again."
            )

    async def __call__(self, **arguments: Any) -> Any:
        context = arguments.pop(_CONTEXT, None)
        tag = CallTag(
            self.pack, self.tool_name, f"{self.pack}.{self.tool_name}", dict(arguments), context
        )
        result = await _call_remote(self.connection, self, arguments, tag)
        return result_value(result)


async def _call_remote(
    connection: McpConnection, call: _RemoteCall, arguments: dict[str, Any], tag: CallTag
) -> mcp_types.CallToolResult:
    from mcp import MCPError
    from pydantic import ValidationError

    server, name = connection.spec.name, call.remote_name
    try:
        return await connection.call_tool(name, arguments, tag, check=call.check)
    except MCPError as exc:
        if exc.code == MESSAGE_TOO_LARGE:  # ours: the answer was over max_message_bytes
            raise ToolError(exc.message) from None
        # A protocol-level error: the server's own message (unknown tool, invalid params).
        raise ToolError(f"the MCP server '{server}' refused the call: {exc.message}") from None
    except ValidationError:
        logger.exception("MCP server %r returned an invalid result for %r", server, name)
        raise ToolError(
            f"the MCP server '{server}' returned a result that is not valid MCP"
        ) from None
    except RuntimeError as exc:
        logger.warning("MCP server %r, tool %r: %s", server, name, exc)
        if "structured content" in str(exc):  # the SDK checks it against the output schema
            raise ToolError(
                f"the MCP server '{server}' returned structured content that does not match "
                "the tool's output schema"
            ) from None
        raise ToolError(f"the MCP server '{server}' could not complete the call") from None


def _remote_tool(
    connection: McpConnection,
    remote: mcp_types.Tool,
    name: str,
    pack: str,
    cfg: McpServerSettings,
    gate: Gatekeeper,
) -> Tool:
    hints = remote.annotations
    title = remote.title or (hints.title if hints is not None else None)
    call = _RemoteCall(connection, remote, name, pack, gate)
    t = Tool(
        call,
        name=name,
        description=remote.description or title or remote.name,
        input_schema=remote.input_schema,
        tags=cfg.tags,
        title=title,
        read_only=hints.read_only_hint if hints is not None else None,
        destructive=hints.destructive_hint if hints is not None else None,
        idempotent=hints.idempotent_hint if hints is not None else None,
        open_world=hints.open_world_hint if hints is not None else None,
        timeout=cfg.timeout,
        require_approval=call.require_approval,
        credentials=getattr(connection, "credentials", ()),  # sent in its headers
        # The MCP client already checks structured content against the output schema.
        validate_output=False,
    )
    if remote.output_schema is not None:
        t._output_schema = dict(remote.output_schema)
    return t


def _secret_values(
    env: Mapping[str, str],
    headers: Mapping[str, str],
    configured: Mapping[str, str | Mapping[str, str]],
    args: Sequence[str] = (),
) -> list[str]:
    """What to keep out of messages, logs and results.

    Secret-looking variables (API keys, tokens), header values that are secret-looking or
    read from the environment (with the credential of ``Bearer X`` on its own), and the
    values of secret-looking arguments (``--token X``, ``GITHUB_TOKEN=X``; see ``_args``).
    """
    found = [v for k, v in env.items() if is_secret_key(k) or is_secret_value(v)]
    found.extend(secret_args(args))
    for key, value in headers.items():
        if is_secret_key(key) or is_secret_value(value) or isinstance(configured.get(key), Mapping):
            found.append(value)
            scheme, _, credential = value.partition(" ")
            if credential and scheme.lower() in ("bearer", "basic", "token"):
                found.append(credential)
    return [value for value in dict.fromkeys(found) if len(value) >= 4]
