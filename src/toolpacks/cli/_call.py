"""``toolpacks call`` (with approval on the command line) and ``toolpacks serve``."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolpacks.cli._errors import CliError, report
from toolpacks.cli._toolsets import build_toolset, check_agent, make_host, unknown_pack

if TYPE_CHECKING:
    from toolpacks.host._approval import ApprovalRequest
    from toolpacks.host._host import Host
    from toolpacks.host._toolset import Toolset

__all__ = ["CliApproval", "cmd_call", "cmd_serve", "mcp_available"]

MCP_MISSING = "serving over MCP needs the MCP SDK: pip install 'toolpacks[mcp]'"


@dataclass(slots=True)
class CliApproval:
    """Approval for ``toolpacks call``: ``--approve`` says yes; a terminal is asked y/N.

    Without either (input is not a terminal), every request is refused and remembered, so
    the command can say how to approve it.
    """

    approve: bool
    """``--approve`` was given."""
    interactive: bool
    """Standard input is a terminal: ask there (the question goes to stderr)."""
    refused: list[str] = field(default_factory=list)
    """Qualified names of calls refused for want of an answer."""

    def __call__(self, request: ApprovalRequest) -> bool:
        """Answer one approval request."""
        if self.approve:
            return True
        if not self.interactive:
            self.refused.append(request.qualified_name)
            return False
        arguments = json.dumps(dict(request.arguments), sort_keys=True, default=str)
        sys.stderr.write(
            f"toolpacks: {request.qualified_name} requires approval ({request.reason})\n"
            f"  arguments: {arguments}\n"
            "run it? [y/N] "
        )
        sys.stderr.flush()
        answer = sys.stdin.readline()
        return answer.strip().lower() in ("y", "yes")


def _is_terminal() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False


def _call_toolset(host: Host, args: argparse.Namespace, approval: CliApproval) -> Toolset:
    """The agent's toolset; without an agent, only the pack a qualified name names."""
    if args.agent is None and "." in args.name:
        pack = args.name.split(".", 1)[0]
        info = next((p for p in host.packs if p.name == pack), None)
        if info is None:
            raise unknown_pack(args.name, host, "tool")
        if info.status in ("disabled", "clash"):
            raise CliError(f"pack {pack!r} is {info.status}: {info.error}")
        return build_toolset(host, None, "call", packs=[pack], approval=approval)
    return build_toolset(host, args.agent, "call", approval=approval)


def cmd_call(args: argparse.Namespace) -> int:
    """``toolpacks call``; exit status 1 when the result is an error.

    A qualified name (``pack.tool``) without ``--agent`` builds a toolset of that pack
    alone, so a clash between other packs does not stand in the way.
    """
    import asyncio

    approval = CliApproval(approve=args.approve, interactive=_is_terminal())
    host = make_host(args)
    try:
        toolset = _call_toolset(host, args, approval)
        result = asyncio.run(toolset.call(args.name, args.args))
    finally:
        host.close()
    if args.json:
        print(json.dumps(result.to_dict(), indent=2, sort_keys=True, default=str))
    else:
        print(result.content)
    if result.is_error and approval.refused:
        report(
            CliError(
                f"{approval.refused[0]} requires approval, and nothing approved the call",
                "pass --approve to approve it (or run the command on a terminal to be asked)",
            )
        )
    return 1 if result.is_error else 0


def mcp_available() -> bool:
    """Whether the MCP SDK (the ``toolpacks[mcp]`` extra) can be imported."""
    import importlib.util

    try:
        return importlib.util.find_spec("mcp") is not None
    except (ImportError, ValueError):
        return False


def cmd_serve(args: argparse.Namespace) -> int:
    """``toolpacks serve``: checked before a byte of MCP is written to stdout.

    Over stdio (an agent, or ``--pack`` as an isolated child) toolpacks answers the protocol
    itself, so the MCP SDK is not needed: a pack's environment may hold an ``mcp`` the extra
    refuses (strands-agents pins ``mcp<2.2``). ``--http`` without the SDK, or an agent no
    configuration defines, fails with one line.
    """
    if args.http is not None:
        from toolpacks.cli._extras import require_extra

        require_extra("http", "serving over HTTP")  # mcp, uvicorn, starlette, prometheus_client
    if args.http is not None and (args.principal is not None or args.scope):
        raise CliError(
            "--principal and --scope apply to stdio only",
            "over HTTP each request's principal comes from its token ([auth] or agent tokens)",
        )
    if args.pack is not None:
        from toolpacks.cli._install import serve_pack

        return serve_pack(args)
    agents: list[str] = args.agent or []
    if args.http is None:
        _stdio_options(args, agents)
    host = make_host(args)
    try:
        for name in agents:
            check_agent(host, name)
    finally:
        host.close()
    from toolpacks.cli._toolsets import toolset_errors
    from toolpacks.mcp._server import serve_agent

    if args.http is not None:
        return _serve_http(args, agents)
    agent = agents[0] if agents else None
    try:
        with toolset_errors(agent, "serve"):
            serve_agent(
                args.config, agent, expose_errors=args.expose_errors, principal=_principal(args)
            )
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in ("mcp", "mcp_types", "anyio"):
            raise
        raise CliError(f"{MCP_MISSING} (cannot import {exc.name})") from exc
    return 0


def _principal(args: argparse.Namespace) -> Any:
    """``--principal SUBJECT [--scope S ...]`` as a Principal (None without ``--principal``)."""
    from toolpacks.core._principal import Principal

    scopes: list[str] = args.scope or []
    if args.principal is None:
        if scopes:
            raise CliError("--scope needs --principal", "toolpacks serve --principal alice ...")
        return None
    if not args.principal.strip() or any(not s.strip() or len(s.split()) != 1 for s in scopes):
        raise CliError("--principal and each --scope must be non-empty words without spaces")
    return Principal(args.principal, scopes=frozenset(scopes))


def _stdio_options(args: argparse.Namespace, agents: list[str]) -> None:
    """Refuse the options that only mean something with ``--http``."""
    if len(agents) > 1:
        raise CliError(
            "over stdio one process serves one agent",
            "serve several agents over HTTP (--http PORT), or start one `toolpacks serve` each",
        )
    http_only = [args.header_timeout, args.body_timeout, args.max_connections, args.token_env]
    http_only.append(args.max_connections_per_client)
    if args.workers != 1 or any(option is not None for option in http_only):
        raise CliError(
            "--workers, --token-env, --header-timeout, --body-timeout and --max-connections "
            "apply to --http only"
        )


def _limits(args: argparse.Namespace) -> dict[str, Any]:
    """The per-connection limits given on the command line (the others keep their defaults)."""
    given = {
        "header_timeout": args.header_timeout,
        "body_timeout": args.body_timeout,
        "max_connections": args.max_connections,
        "max_connections_per_client": args.max_connections_per_client,
    }
    for name, value in given.items():
        if value is not None and value <= 0:
            flag = "--" + name.replace("_", "-")
            raise CliError(f"{flag} must be a positive number, got {value}")
    return {name: value for name, value in given.items() if value is not None}


def _serve_http(args: argparse.Namespace, agents: list[str]) -> int:
    """``toolpacks serve --http``: the exit status of ``serve_http``."""
    import logging
    import os

    from toolpacks.mcp.http._run import parse_bind
    from toolpacks.mcp.http._workers import serve_http

    if not agents:
        raise CliError("--http serves named agents: add --agent NAME (once for each agent)")
    try:
        bind, port = parse_bind(args.http)
    except ValueError as exc:
        raise CliError(f"--http {exc}") from exc
    token = None
    if args.token_env is not None:
        token = os.environ.get(args.token_env, "")
        if not token:
            raise CliError(
                f"--token-env {args.token_env}: that environment variable is not set or empty",
                f"set it to a long random value: export {args.token_env}="
                "$(python -c 'import secrets; print(secrets.token_urlsafe(32))')",
            )
    if args.workers < 1:
        raise CliError(f"--workers {args.workers}: give 1 or more worker processes")

    def announce(line: str) -> None:
        print(f"toolpacks serve: {line}", file=sys.stderr, flush=True)

    try:
        return serve_http(
            args.config,
            agents,
            host=bind,
            port=port,
            workers=args.workers,
            token=token,
            expose_errors=args.expose_errors,
            announce=announce,
            log_level=logging.INFO if args.verbose else logging.WARNING,
            **_limits(args),
        )
    except OSError as exc:
        raise CliError(f"cannot listen on {bind}:{port}: {exc.strerror or exc}") from exc
