"""``toolpacks list``, ``show``, ``toolset``, ``lock``, ``new`` and ``new-tool``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolpacks.cli._errors import CliError, counted, did_you_mean, report
from toolpacks.cli._toolsets import (
    build_toolset,
    code_host,
    make_host,
    pack_names,
    unknown_pack,
)

if TYPE_CHECKING:
    from toolpacks.cli._logs import LogRedactor

__all__ = [
    "cmd_list",
    "cmd_lock",
    "cmd_new",
    "cmd_new_tool",
    "cmd_show",
    "cmd_toolset",
    "pack_line",
    "print_json",
]

HINTS = ("read_only", "destructive", "idempotent", "open_world")


def print_json(value: Any) -> None:
    """Print ``value`` as indented JSON with sorted keys."""
    print(json.dumps(value, indent=2, sort_keys=True, default=str))


def pack_line(p: dict[str, Any]) -> str:
    """One line of ``list``: name, status, distribution (or source), error."""
    dist = f"{p['distribution']} {p['version']}" if p.get("distribution") else p.get("source", "")
    line = f"{p['name']:<20} {p['status']:<10} {dist}"
    if p.get("error"):
        line += f"  ({p['error']})"
    return line


def cmd_list(args: argparse.Namespace) -> int:
    """``toolpacks list``."""
    if args.tools:
        from toolpacks.cli._logs import pack_failures_shown

        pack_failures_shown()  # each row of a failed pack says why
        host = code_host(args)
        for info in host.packs:
            if info.status == "available":
                host.load(info.name)
        packs = [p.to_dict() for p in host.packs]
        tools = {
            q: {"name": q, "tags": sorted(t.tags), **_access(t)}
            for p in host.packs
            if p.status == "loaded"
            for q, t in host.load(p.name).tools.items()
        }
        host.close()
        if args.json:
            print_json({"packs": packs, "tools": list(tools.values())})
            return 0
        for p in packs:
            print(pack_line(p))
            for q in p["tools"]:
                tags = ", ".join(tools[q]["tags"] if q in tools else [])
                print(f"    {q}" + (f"  [{tags}]" if tags else ""))
        return 0
    from toolpacks.cli._listing import list_packs

    packs = list_packs(args.config)
    if args.json:
        print_json({"packs": packs})
        return 0
    if not packs:
        print("no packs installed (entry point group 'toolpacks')")
    for p in packs:
        print(pack_line(p))
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    """``toolpacks show``; secrets are redacted by key (nested tables included) and by value."""
    from toolpacks.cli._logs import pack_failures_shown, redacted_logs

    with redacted_logs() as logs:
        pack_failures_shown()  # the error line below the pack says why it failed
        return _show(args, logs)


def _show(args: argparse.Namespace, logs: LogRedactor) -> int:
    from toolpacks.cli._doctor import config_secrets

    host = code_host(args)
    try:
        logs.secrets = config_secrets(host)
        names = pack_names(host)
        if args.name in names:
            return _show_pack(host, args, logs.secrets)
        pack = args.name.split(".", 1)[0]
        if pack not in names:
            raise unknown_pack(args.name, host, "pack or tool")
        return _show_tool(host, args, logs.secrets)
    finally:
        host.close()


def _pack_failed(data: dict[str, Any]) -> int:
    """Report a pack that did not load; the exit status of ``show`` (1) for it."""
    report(
        CliError(
            f"pack {data['name']!r} "
            f"{'failed to load' if data['status'] == 'failed' else 'cannot be loaded'}: "
            f"{data['error']}",
            "`toolpacks doctor` checks every pack and the configuration",
        )
    )
    return 1


def _show_pack(host: Any, args: argparse.Namespace, secrets: tuple[str, ...]) -> int:
    from toolpacks.cli._doctor import shown
    from toolpacks.core._secrets import redact

    info = host.load(args.name).info
    data = shown(info.to_dict(), secrets)
    settings = host.config.config.pack_settings().get(args.name, {})
    data["settings"] = redact(settings, secrets)
    if args.json:
        print_json(data)
    else:
        failed = info.status in ("failed", "clash")
        print(pack_line({**data, "error": None} if failed else data))  # the error line says why
        for key, value in data["settings"].items():
            print(f"  setting {key} = {value!r}")
        for q in data["tools"]:
            print(f"  {q}")
    return _pack_failed(data) if info.status in ("failed", "clash") else 0


def _show_tool(host: Any, args: argparse.Namespace, secrets: tuple[str, ...]) -> int:
    from toolpacks.cli._doctor import shown

    pack = args.name.split(".", 1)[0]
    loaded = host.load(pack)
    if loaded.info.status in ("failed", "clash"):
        return _pack_failed(shown(loaded.info.to_dict(), secrets))
    tools = loaded.tools
    if args.name not in tools:
        hint = did_you_mean(args.name, tools)
        raise CliError(
            f"pack {pack!r} has no tool {args.name!r}; it has: {', '.join(tools) or 'none'}",
            *([hint] if hint else []),
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
            "hints": {k: getattr(t.hints, k) for k in HINTS},
            **_access(t),
        },
        secrets,
    )
    if args.json:
        print_json(data)
        return 0
    print(f"{args.name}  [{', '.join(data['tags'])}]")
    print(data["description"])
    print()
    print("hints: " + ", ".join(_hint(k, v) for k, v in data["hints"].items()))
    print(f"requires approval: {'yes' if data['require_approval'] else 'no'}")
    if data["allowed_agents"] is not None:
        print(f"allowed agents: {', '.join(data['allowed_agents']) or 'none'}")
    for key in ("scopes", "credentials"):
        if data[key]:
            print(f"{key}: {', '.join(data[key])}")
    print("input schema:")
    print(json.dumps(data["input_schema"], indent=2))
    if data["output_schema"] is None:
        print("output schema: none")
    else:
        print("output schema:")
        print(json.dumps(data["output_schema"], indent=2))
    return 0


def _access(t: Any) -> dict[str, list[str]]:
    """A tool's scopes and credential names, as sorted lists (names only, never values)."""
    return {"scopes": sorted(t.scopes), "credentials": sorted(t.credentials)}


def _hint(key: str, value: bool | None) -> str:
    shown = "not stated" if value is None else ("yes" if value else "no")
    return f"{key.replace('_', '-')} {shown}"


def cmd_toolset(args: argparse.Namespace) -> int:
    """``toolpacks toolset``."""
    host = make_host(args)
    try:
        toolset = build_toolset(host, args.agent, "toolset")
    finally:
        host.close()
    if args.format:
        print_json(toolset.definitions(args.format))
        return 0
    rows: list[dict[str, Any]] = [
        {
            "name": e.exposed,
            "qualified": e.qualified,
            "pack": e.pack,
            "tags": sorted(e.tool.tags),
            "require_approval": e.require_approval,
        }
        for e in toolset.entries()
    ]
    deferred = sorted(toolset.deferred)  # listed only when some are: sent once searched
    left_out = dict(sorted(toolset.left_out.items()))  # which key of the selection, per tool
    if args.json:
        more = {"deferred": deferred} if deferred else {}
        print_json({"agent": args.agent, "tools": rows, **more, "left_out": left_out})
        return 0
    later = f", {len(deferred)} deferred" if deferred else ""
    print(f"toolset for agent {args.agent or '(default)'}: {counted(len(rows), 'tool')}{later}")
    for row in rows:
        extra = "  (approval)" if row["require_approval"] else ""
        extra += "  (deferred)" if row["name"] in toolset.deferred else ""
        print(f"  {row['name']:<28} {row['qualified']:<32} [{', '.join(row['tags'])}]{extra}")
    if left_out:
        print(f"left out: {counted(len(left_out), 'tool')}")
        for qualified, why in left_out.items():
            print(f"  {qualified:<32} by {why}")
    return 0


def cmd_lock(args: argparse.Namespace) -> int:
    """``toolpacks lock``: pins, and the manifests of the packs it imported to pin them."""
    from toolpacks.host._lockfile import write_lock
    from toolpacks.packs.entrypoints._manifest import manifest_dir

    host = code_host(args)
    try:
        path = write_lock(host, args.output)
    finally:
        host.close()
    print(f"wrote {path}")
    print(f"pack manifests (tool definitions listed without importing packs): {manifest_dir()}")
    return 0


def cmd_new(args: argparse.Namespace) -> int:
    """``toolpacks new``: the next step installs the ``test`` extra the tests need."""
    from toolpacks.cli._scaffold import scaffold_pack

    try:
        target = scaffold_pack(args.name, Path(args.dir) if args.dir else None)
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    print(f"created {target}; next: cd {target} && pip install -e '.[test]' && pytest")
    print(
        "toolpacks is not on a package index: install it first, from a checkout or a wheel "
        f"(see {target / 'README.md'})"
    )
    return 0


def cmd_new_tool(args: argparse.Namespace) -> int:
    """``toolpacks new-tool``."""
    from toolpacks.filetools._loader import scaffold_tool

    try:
        target = scaffold_tool(args.name, Path(args.dir))
    except (ValueError, FileExistsError) as exc:
        raise CliError(str(exc)) from exc
    print(f"created {target}; edit its TOOL.md and handler.py")
    print(f'load it with [files] dirs = ["{args.dir}"] in toolpacks.toml (as local.{args.name})')
    return 0
