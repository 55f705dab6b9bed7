"""The ``toolpacks`` command line.

Commands that only list packs (``list``, ``--version``) import neither pydantic nor any
pack; everything else builds a ``Host``. Errors print one line (``--debug`` for the trace).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from toolpacks._version import __version__

if TYPE_CHECKING:
    from toolpacks.cli._doctor import LogRedactor

__all__ = ["main"]

EPILOG = """examples:
  toolpacks list                         installed packs (imports none of them)
  toolpacks list --tools                 packs and their tools (imports them)
  toolpacks --config toolpacks.toml toolset researcher
  toolpacks call clock.convert_time --args '{"time": "12:00", "to_tz": "Asia/Tokyo"}'
  toolpacks doctor                       broken packs, clashes, config errors, conflicts
  toolpacks serve --agent researcher     the agent's toolset as an MCP server over stdio
  toolpacks new my-pack                  scaffold a pack repository
"""


class CliError(Exception):
    """A failure reported as one line on stderr, exit status 2."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="toolpacks",
        description="A plugin-based tool registry for AI agents.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"toolpacks {__version__}")
    parser.add_argument("--config", help="configuration file (default: ./toolpacks.toml)")
    parser.add_argument("--debug", action="store_true", help="show stack traces on errors")
    # The same options after the command name (`toolpacks list --config x.toml`).
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    common.add_argument(
        "--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def add(name: str, help_text: str, example: str) -> argparse.ArgumentParser:
        return sub.add_parser(
            name,
            help=help_text,
            description=help_text,
            epilog=f"example:\n  {example}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
            parents=[common],
        )

    p = add(
        "list", "List installed packs (and, with --tools, their tools).", "toolpacks list --json"
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--tools", action="store_true", help="import packs to list their tools")
    p = add("show", "Show a pack or a tool (qualified name).", "toolpacks show clock.now --json")
    p.add_argument("name")
    p.add_argument("--json", action="store_true")
    p = add(
        "toolset", "Show the toolset an agent gets.", "toolpacks toolset researcher --format openai"
    )
    p.add_argument("agent", nargs="?")
    p.add_argument("--json", action="store_true")
    p.add_argument(
        "--format", help="print definitions in a provider format (openai, anthropic, ...)"
    )
    p = add("call", "Call a tool and print its result.", "toolpacks call clock.now --args '{}'")
    p.add_argument("name", help="exposed or qualified tool name")
    p.add_argument("--args", default="{}", help="arguments as a JSON object")
    p.add_argument("--agent", help="call through this agent's toolset")
    p.add_argument("--json", action="store_true")
    p = add(
        "doctor",
        "Check packs, configuration and agents; non-zero exit on problems.",
        "toolpacks doctor",
    )
    p.add_argument("--json", action="store_true")
    p.add_argument("--slow", type=float, default=1.0, help="warn when a pack imports slower (s)")
    p = add(
        "serve",
        "Serve an agent's toolset as an MCP server over stdio.",
        "toolpacks serve --agent researcher",
    )
    p.add_argument("--agent")
    p.add_argument("--expose-errors", action="store_true", help="send exception text to clients")
    p = add(
        "new", "Scaffold a tool pack repository.", "toolpacks new weather --dir ./toolpacks-weather"
    )
    p.add_argument("name")
    p.add_argument("--dir", help="target directory (default: ./toolpacks-NAME)")
    p = add(
        "new-tool",
        "Scaffold a file-based tool (TOOL.md + handler.py).",
        "toolpacks new-tool greet --dir tools",
    )
    p.add_argument("name")
    p.add_argument("--dir", default="tools")
    p = add(
        "trust", "Trust a configuration file found in the working directory.", "toolpacks trust"
    )
    p.add_argument("path", nargs="?", default=None)
    p = add("lock", "Pin tool definitions to toolpacks.lock.", "toolpacks lock")
    p.add_argument("--output", default=None)
    return parser


def _host(args: argparse.Namespace) -> Any:
    from toolpacks.host._host import Host

    return Host(args.config)


def _print_json(value: Any) -> None:
    print(json.dumps(value, indent=2, sort_keys=True, default=str))


def cmd_list(args: argparse.Namespace) -> int:
    """``toolpacks list``."""
    if args.tools:
        host = _host(args)
        for info in host.packs:
            if info.status == "available":
                host.load(info.name)
        packs = [p.to_dict() for p in host.packs]
        tools = {
            q: sorted(t.tags)
            for p in host.packs
            if p.status == "loaded"
            for q, t in host.load(p.name).tools.items()
        }
        if args.json:
            _print_json(
                {"packs": packs, "tools": [{"name": q, "tags": tg} for q, tg in tools.items()]}
            )
            return 0
        for p in packs:
            print(_pack_line(p))
            for q in p["tools"]:
                tags = ", ".join(tools.get(q, []))
                print(f"    {q}" + (f"  [{tags}]" if tags else ""))
        return 0
    from toolpacks.cli._listing import list_packs

    packs = list_packs(args.config)
    if args.json:
        _print_json({"packs": packs})
        return 0
    if not packs:
        print("no packs installed (entry point group 'toolpacks')")
    for p in packs:
        print(_pack_line(p))
    return 0


def _pack_line(p: dict[str, Any]) -> str:
    dist = f"{p['distribution']} {p['version']}" if p.get("distribution") else p.get("source", "")
    line = f"{p['name']:<20} {p['status']:<10} {dist}"
    if p.get("error"):
        line += f"  ({p['error']})"
    return line


def cmd_show(args: argparse.Namespace) -> int:
    """``toolpacks show``; secrets are redacted by key (nested tables included) and by value."""
    from toolpacks.cli._doctor import redacted_logs

    with redacted_logs() as logs:
        return _show(args, logs)


def _show(args: argparse.Namespace, logs: LogRedactor) -> int:
    from toolpacks.cli._doctor import config_secrets, shown
    from toolpacks.core._secrets import redact

    host = _host(args)
    secrets = logs.secrets = config_secrets(host)
    names = {p.name for p in host.packs}
    if args.name in names:
        info = host.load(args.name).info
        data = shown(info.to_dict(), secrets)
        settings = host.config.config.pack_settings().get(args.name, {})
        data["settings"] = redact(settings, secrets)
        if args.json:
            _print_json(data)
        else:
            print(_pack_line(data))
            for key, value in data["settings"].items():
                print(f"  setting {key} = {value!r}")
            for q in data["tools"]:
                print(f"  {q}")
        return 0
    pack = args.name.split(".", 1)[0]
    if pack not in names:
        raise CliError(f"no pack or tool named {args.name!r}; try `toolpacks list --tools`")
    tools = host.load(pack).tools
    if args.name not in tools:
        raise CliError(
            f"pack {pack!r} has no tool {args.name!r}; it has: {', '.join(tools) or 'none'}"
        )
    t = tools[args.name]
    data = shown(
        {
            "name": args.name,
            "description": t.description,
            "tags": sorted(t.tags),
            "input_schema": t.input_schema,
            "output_schema": t.output_schema,
            "require_approval": t.require_approval,
            "allowed_agents": sorted(t.allowed_agents) if t.allowed_agents is not None else None,
            "hints": {
                k: getattr(t.hints, k)
                for k in ("read_only", "destructive", "idempotent", "open_world")
            },
        },
        secrets,
    )
    if args.json:
        _print_json(data)
    else:
        print(f"{args.name}  [{', '.join(data['tags'])}]")
        print(data["description"])
        print(json.dumps(data["input_schema"], indent=2))
    return 0


def cmd_toolset(args: argparse.Namespace) -> int:
    """``toolpacks toolset``."""
    host = _host(args)
    toolset = host.toolset(args.agent)
    if args.format:
        _print_json(toolset.definitions(args.format))
        return 0
    rows = [
        {
            "name": e.exposed,
            "qualified": e.qualified,
            "pack": e.pack,
            "tags": sorted(e.tool.tags),
            "require_approval": e.require_approval,
        }
        for e in toolset.entries()
    ]
    if args.json:
        _print_json({"agent": args.agent, "tools": rows})
        return 0
    print(f"toolset for agent {args.agent or '(default)'}: {len(rows)} tools")
    for row in rows:
        extra = "  (approval)" if row["require_approval"] else ""
        print(f"  {row['name']:<28} {row['qualified']:<32} [{', '.join(row['tags'])}]{extra}")
    return 0


def cmd_call(args: argparse.Namespace) -> int:
    """``toolpacks call``; exit status 1 when the result is an error."""
    import asyncio

    host = _host(args)
    try:
        toolset = host.toolset(args.agent)
        result = asyncio.run(toolset.call(args.name, args.args))
    finally:
        host.close()
    if args.json:
        _print_json(result.to_dict())
    else:
        print(result.content)
    return 1 if result.is_error else 0


def cmd_doctor(args: argparse.Namespace) -> int:
    """``toolpacks doctor``."""
    from toolpacks.cli._doctor import run_doctor

    return run_doctor(args)


def cmd_serve(args: argparse.Namespace) -> int:
    """``toolpacks serve``."""
    from toolpacks.mcp._server import serve_agent

    serve_agent(args.config, args.agent, expose_errors=args.expose_errors)
    return 0


def cmd_new(args: argparse.Namespace) -> int:
    """``toolpacks new``."""
    from pathlib import Path

    from toolpacks.cli._scaffold import scaffold_pack

    target = scaffold_pack(args.name, Path(args.dir) if args.dir else None)
    print(f"created {target}; next: cd {target} && pip install -e . && pytest")
    return 0


def cmd_new_tool(args: argparse.Namespace) -> int:
    """``toolpacks new-tool``."""
    from pathlib import Path

    from toolpacks.filetools._loader import scaffold_tool

    target = scaffold_tool(args.name, Path(args.dir))
    print(f"created {target}")
    return 0


def cmd_trust(args: argparse.Namespace) -> int:
    """``toolpacks trust``."""
    from pathlib import Path

    from toolpacks.host._config import find_config
    from toolpacks.packs._trust import trust

    if args.path:
        path = Path(args.path)
    else:
        found = find_config()
        if found is None:
            raise CliError("no toolpacks.toml or [tool.toolpacks] in this directory")
        path = found[0]
    if not path.is_file():
        raise CliError(f"{path}: no such file")
    digest = trust(path)
    print(
        f"trusted {path.resolve()} (sha256 {digest[:12]}…); "
        "it may now start MCP servers and load local tools"
    )
    return 0


def cmd_lock(args: argparse.Namespace) -> int:
    """``toolpacks lock``."""
    from toolpacks.host._lockfile import write_lock

    host = _host(args)
    path = write_lock(host, args.output)
    print(f"wrote {path}")
    return 0


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "list": cmd_list,
    "show": cmd_show,
    "toolset": cmd_toolset,
    "call": cmd_call,
    "doctor": cmd_doctor,
    "serve": cmd_serve,
    "new": cmd_new,
    "new-tool": cmd_new_tool,
    "trust": cmd_trust,
    "lock": cmd_lock,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    try:
        return COMMANDS[args.command](args)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if args.debug:
            import traceback

            traceback.print_exc()
            return 2
        from toolpacks.exceptions import ToolpacksError

        kind = "error" if isinstance(exc, ToolpacksError | CliError) else type(exc).__name__
        message = str(exc).strip().replace("\n", "; ")
        print(f"toolpacks: {kind}: {message} (run with --debug for details)", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
