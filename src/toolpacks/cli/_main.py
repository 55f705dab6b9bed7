"""The ``toolpacks`` command line.

Commands that only list packs (``list``, ``--version``) import neither pydantic nor any
pack; everything else builds a ``Host``. Every error prints ``toolpacks: error: <message>``
(hints on the lines below; ``--debug`` for the trace) and exits non-zero. Log records go to
stderr once each (``--verbose`` adds notes such as resolved tool-name conflicts).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from toolpacks._version import __version__
from toolpacks.cli._call import cmd_call, cmd_serve
from toolpacks.cli._commands import (
    cmd_list,
    cmd_lock,
    cmd_new,
    cmd_new_tool,
    cmd_show,
    cmd_toolset,
)
from toolpacks.cli._credentials import add_credentials, cmd_credentials
from toolpacks.cli._errors import CliError, CliParser, report
from toolpacks.cli._install import add_commands, cmd_gc, cmd_install, cmd_uninstall

__all__ = ["CliError", "main"]

EPILOG = """examples:
  toolpacks list                         installed packs (imports none of them)
  toolpacks list --tools                 packs and their tools (imports them)
  toolpacks --config toolpacks.toml toolset researcher
  toolpacks call clock.convert_time --args '{"time": "12:00", "to_tz": "Asia/Tokyo"}'
  toolpacks doctor                       broken packs, clashes, config errors, conflicts
  toolpacks serve --agent researcher     the agent's toolset as an MCP server over stdio
  toolpacks serve --agent a --agent b --http 8000 --token-env TOKEN   the same over HTTP
  toolpacks new my-pack                  scaffold a pack repository
"""


def _parser() -> argparse.ArgumentParser:
    parser = CliParser(
        prog="toolpacks",
        description="A plugin-based tool registry for AI agents.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"toolpacks {__version__}")
    parser.add_argument("--config", help="configuration file (default: ./toolpacks.toml)")
    parser.add_argument("--debug", action="store_true", help="show stack traces on errors")
    parser.add_argument(
        "--verbose", action="store_true", help="also log notes (resolved tool-name conflicts)"
    )
    # The same options after the command name (`toolpacks list --config x.toml`).
    common = CliParser(add_help=False)
    common.add_argument("--config", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    for flag in ("--debug", "--verbose"):
        common.add_argument(
            flag, action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS
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
    p.add_argument(
        "--approve",
        action="store_true",
        help="approve the call if the tool requires approval (else a terminal is asked)",
    )
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
        "Serve an agent's toolset as an MCP server over stdio, or agents' over HTTP.",
        "toolpacks serve --agent researcher --agent writer --http 8000 --token-env MCP_TOKEN",
    )
    p.add_argument("--agent", action="append", help="the agent to serve (repeat with --http)")
    p.add_argument("--expose-errors", action="store_true", help="send exception text to clients")
    p.add_argument("--principal", metavar="SUBJECT", help="over stdio: who the client acts for")
    p.add_argument("--scope", action="append", help="with --principal: a scope it was granted")
    p.add_argument(
        "--http", metavar="[HOST:]PORT", help="serve MCP streamable HTTP (default host 127.0.0.1)"
    )
    p.add_argument(
        "--workers", type=int, default=1, metavar="N", help="worker processes with --http"
    )
    p.add_argument(
        "--token-env", metavar="VAR", help="require 'Authorization: Bearer <value of VAR>'"
    )
    p.add_argument(
        "--header-timeout", type=float, metavar="S", help="with --http: seconds to send headers"
    )
    p.add_argument(
        "--body-timeout", type=float, metavar="S", help="with --http: seconds to send a body"
    )
    p.add_argument(
        "--max-connections", type=int, metavar="N", help="with --http: connections per worker"
    )
    p.add_argument(
        "--max-connections-per-client",
        type=int,
        metavar="N",
        help="with --http: connections per worker from one client address (default: 9/10 of"
        " --max-connections)",
    )
    p.add_argument("--pack", help="serve this one installed pack over stdio (an isolated child)")
    p.add_argument("--settings", help="with --pack: a JSON file of the pack's settings")
    p.add_argument("--manifest", help="with --pack: write the pack's manifest to this file")
    p.add_argument("--print-manifest", action="store_true", help="with --pack: print it, exit")
    p.add_argument("--path", action="append", help=argparse.SUPPRESS)
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
    add_commands(add)  # install, uninstall, gc
    add_credentials(add)  # credentials set | login | list | delete
    return parser


def cmd_doctor(args: argparse.Namespace) -> int:
    """``toolpacks doctor``."""
    from toolpacks.cli._doctor import run_doctor

    return run_doctor(args)


def cmd_trust(args: argparse.Namespace) -> int:
    """``toolpacks trust``."""
    from pathlib import Path

    from toolpacks.host._trust_scope import config_fingerprint, covered_files
    from toolpacks.host.config._load import find_config, load_config, untrusted_keys
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
    loaded = load_config(path)
    files = covered_files(loaded)
    trust(path, config_fingerprint(loaded))
    print(f"trusted {path.resolve()} as it is now, and the code it points to:")
    base = loaded.base_dir.resolve()
    for file in files:
        print(f"  {file.relative_to(base) if file.is_relative_to(base) else file}")
    if not files:
        print("  (no [files] dirs or MCP server scripts in its directory)")
    keys = untrusted_keys(loaded.raw)
    if keys:
        print(f"it may now apply: {', '.join(keys)}")
    print("a change to any of these needs `toolpacks trust` again")
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
    "install": cmd_install,
    "uninstall": cmd_uninstall,
    "gc": cmd_gc,
    "credentials": cmd_credentials,
}


def _check_config(config: str | None) -> None:
    """``--config`` must name a file, whatever the command."""
    if config is None:
        return
    path = Path(config)
    if not path.is_file():
        what = "is a directory, not a file" if path.is_dir() else "no such file"
        raise CliError(
            f"--config {config}: {what}",
            "without --config, toolpacks reads ./toolpacks.toml, else [tool.toolpacks] in "
            "./pyproject.toml",
        )


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's final flush cannot fail again."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    from toolpacks.cli._logs import cli_logging, release_pack_failures

    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    with cli_logging(verbose=args.verbose, once=args.command != "serve"):
        try:
            _check_config(args.config)
            return COMMANDS[args.command](args)
        except KeyboardInterrupt:
            return 130
        except BrokenPipeError:
            _silence_stdout()  # `toolpacks toolset --json | head`: the reader has gone
            return 1
        except Exception as exc:
            if args.debug:
                import traceback

                traceback.print_exc()
            release_pack_failures(str(exc))  # but those the error gives the cause of
            report(exc)
            return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
