"""``toolpacks serve --pack``, ``install``, ``uninstall`` and ``gc``: packs and their processes.

``serve --pack NAME`` is the child of an isolated pack: it serves exactly that one installed
pack over MCP stdio, with the names, tags, hints and schemas the pack has in-process, and
writes (``--manifest FILE``) or prints (``--print-manifest``) the manifest the host lists the
pack from without starting it. Approval is the host's: the child runs what the host sends.

``install REQUIREMENT`` installs a pack with uv into the host's environment, or (``--isolated``)
into an environment of its own, and can add it to an agent's configuration; ``uninstall`` and
``gc`` undo both.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolpacks.cli._errors import CliError

if TYPE_CHECKING:
    from toolpacks.host._toolset import Toolset
    from toolpacks.packs.isolated._manifest import Manifest

__all__ = ["add_commands", "cmd_gc", "cmd_install", "cmd_uninstall", "manifest_of", "serve_pack"]

_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]*$")


def add_commands(add: Any) -> None:
    """Add ``install``, ``uninstall`` and ``gc`` to the parser (``add`` makes a sub-parser)."""
    p = add(
        "install",
        "Install a pack (into this environment, or --isolated into one of its own).",
        "toolpacks install ./toolpacks-weather --isolated --agent researcher",
    )
    p.add_argument("requirement", help="a pip requirement, a local directory or a wheel")
    p.add_argument("--isolated", action="store_true", help="an environment and process of its own")
    p.add_argument("--agent", help="add the pack to this agent of the configuration file")
    p.add_argument("--name", help="the pack name (default: the one the distribution declares)")
    p = add("uninstall", "Uninstall a pack (or forget an isolated one).", "toolpacks uninstall w")
    p.add_argument("name", help="the pack name (or its distribution)")
    p = add("gc", "Remove isolated environments no configuration uses.", "toolpacks gc --days 0")
    p.add_argument(
        "--days", type=float, default=7.0, help="keep environments used in the last N days"
    )


# -- serve --pack ---------------------------------------------------------------------------


def manifest_of(name: str, toolset: Toolset) -> Manifest:
    """The manifest of pack ``name`` as ``toolset`` (its tools only) serves it over MCP."""
    from toolpacks.packs.isolated._manifest import Manifest, ToolRecord

    definitions = {d["name"]: d for d in toolset.definitions("mcp")}
    records = []
    distribution = version = None
    for entry in toolset.entries():
        tool = entry.tool
        records.append(
            ToolRecord(
                mcp=definitions[entry.exposed],
                tags=tuple(sorted(tool.tags)),
                timeout=tool.timeout,
                require_approval=entry.require_approval,
                output_schema=tool.output_schema,
                credentials=tool.credentials,
                scopes=tuple(sorted(tool.scopes)),
            )
        )
    return Manifest(name, tuple(records), distribution, version)


def serve_pack(args: argparse.Namespace) -> int:
    """``toolpacks serve --pack NAME``: one installed pack over stdio (an isolated child)."""
    from dataclasses import replace

    from toolpacks.core._secrets import secret_values
    from toolpacks.host._host import Host
    from toolpacks.host.credentials._relay import CHILD, relaying
    from toolpacks.mcp._server import _exit_abandoning, _serve_blocking
    from toolpacks.packs.isolated._child import received_settings
    from toolpacks.packs.isolated._manifest import masked, write_manifest

    name = args.pack
    settings: dict[str, Any] = {}
    secrets: list[str] = []
    given = received_settings(os.environ)  # the host's, taken before the pack is imported
    if given is not None:
        settings, secrets = given
    elif args.settings:
        settings = json.loads(Path(args.settings).read_text(encoding="utf-8"))
    secrets = list(dict.fromkeys([*secrets, *secret_values(settings)]))
    path: list[str] | None = args.path or None
    if path:
        sys.path[:0] = path  # the modules of packs found there must import
    with Host({"packs": {name: settings}} if settings else {}, path=path) as host:
        with relaying():  # its tools' credentials come from the host with each call
            toolset = host.toolset(packs=[name], approval=lambda request: True)
        info = host.load(name).info
        manifest = replace(
            manifest_of(name, toolset), distribution=info.distribution, version=info.version
        )
        if args.print_manifest:
            shown = masked(_manifest_json(manifest), secrets)
            print(json.dumps(shown, indent=1, sort_keys=True))
            return 0
        if args.manifest:
            write_manifest(Path(args.manifest), manifest, secrets)  # never a secret in clear
        child = CHILD.set(True)  # the host that started us says who each call is for
        try:
            outcome = _serve_blocking(toolset, args.expose_errors, None, f"toolpacks:{name}")
        finally:
            CHILD.reset(child)
        if outcome.abandoned or outcome.stuck_threads:
            host.close()
            _exit_abandoning(outcome)
    return 0


def _manifest_json(manifest: Manifest) -> dict[str, Any]:
    return {
        "pack": manifest.pack,
        "distribution": manifest.distribution,
        "version": manifest.version,
        "tools": [record.to_dict() for record in manifest.tools],
    }


# -- install, uninstall, gc -----------------------------------------------------------------


def _config_path(args: argparse.Namespace) -> Path:
    """The configuration file ``install --agent`` edits: ``--config``, else ./toolpacks.toml."""
    return Path(args.config) if args.config else Path("toolpacks.toml")


def cmd_install(args: argparse.Namespace) -> int:
    """``toolpacks install REQUIREMENT [--isolated] [--agent A]``."""
    from toolpacks.cli._config_edit import add_isolated, add_to_agent
    from toolpacks.cli._extras import require_extra

    require_extra("isolated", "installing a pack")  # uv, here or on PATH
    base = _config_path(args).resolve().parent
    started = time.perf_counter()
    if args.isolated:
        names = _install_isolated(args.requirement, base)
    else:
        names = _install_here(args.requirement)
    if args.name:
        names = [args.name]
    if not names:
        raise CliError(f"{args.requirement} installed, but it declares no toolpacks pack")
    took = time.perf_counter() - started
    where = "its own environment" if args.isolated else "this environment"
    print(f"installed {', '.join(names)} into {where} ({took:.1f} s)")
    path = _config_path(args)
    if args.isolated or args.agent:
        trusted = _trusted(path)
        for name in names:
            if args.isolated:
                add_isolated(path, name, _shown_requirement(args.requirement, base))
            if args.agent:
                add_to_agent(path, args.agent, name)
        print(f"updated {path}")
        if trusted:
            _trust_again(path)
            print(f"{path} stays trusted: it was, and the only change is the one made here")
    return 0


def _trusted(path: Path) -> bool:
    """Whether the configuration at ``path`` is trusted as it is now (``toolpacks trust``)."""
    from toolpacks.host._trust_scope import config_fingerprint
    from toolpacks.host.config._load import load_config
    from toolpacks.packs._trust import is_trusted

    if not path.is_file():
        return False
    try:
        return is_trusted(path, config_fingerprint(load_config(path)))
    except Exception:  # a file that does not load is not trusted as it is
        return False


def _trust_again(path: Path) -> None:
    """Trust ``path`` as this command left it (it was trusted just before the edit)."""
    from toolpacks.host._trust_scope import config_fingerprint
    from toolpacks.host.config._load import load_config
    from toolpacks.packs._trust import trust

    trust(path, config_fingerprint(load_config(path)))


def _shown_requirement(requirement: str, base: Path) -> str:
    from toolpacks.packs.isolated._env import local_requirement

    local = local_requirement(requirement, base.resolve())
    if local is None:
        return requirement
    try:  # relative to the configuration's directory: the configuration stays portable
        shown = os.path.relpath(local, base.resolve())
    except ValueError:  # another drive
        return str(local)
    return shown if shown.startswith("..") else "./" + shown


def _install_isolated(requirement: str, base: Path) -> list[str]:
    """Build the environment for ``requirement``; the pack names it declares there."""
    import subprocess

    from toolpacks.exceptions import PackError
    from toolpacks.packs.isolated._env import ensure_env

    try:
        env = ensure_env(requirement, base)
    except PackError as exc:
        raise CliError(str(exc)) from exc
    # The packs of the requirement: those its environment has beyond toolpacks' own.
    script = (
        "import json, importlib.metadata as m;"
        "print(json.dumps([[e.name, e.dist.name if e.dist else ''] for e in "
        "m.entry_points(group='toolpacks')]))"
    )
    done = subprocess.run(
        [str(env.python), "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    if done.returncode != 0:
        raise CliError(f"cannot list the packs of {requirement}: {done.stderr.strip()[-500:]}")
    names = sorted({name for name, _ in json.loads(done.stdout)})
    _check_imports(env.python, names, requirement)
    return names


def _check_imports(python: Path, names: list[str], requirement: str) -> None:
    """Import each pack's module in its environment now, not at its first call.

    Raises:
        CliError: A pack cannot be imported (its error, and that nothing was configured).
    """
    import subprocess

    script = (
        "import sys, importlib.metadata as m\n"
        "for e in m.entry_points(group='toolpacks'):\n"
        "    if e.name in sys.argv[1:]:\n"
        "        e.load()\n"
    )
    environ = {"PATH": f"{python.parent}{os.pathsep}/usr/bin:/bin", "LANG": "C.UTF-8"}
    done = subprocess.run(
        [str(python), "-c", script, *names],
        capture_output=True,
        text=True,
        timeout=300,
        env={**environ, "PYTHONSAFEPATH": "1"},
        check=False,
    )
    if done.returncode != 0:
        lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
        error = lines[-1] if lines else f"exit status {done.returncode}"
        raise CliError(
            f"{requirement} installed into its own environment, but its pack "
            f"{', '.join(names)} cannot be imported: {error}. The configuration was not "
            "changed; fix the pack (or its dependencies) and install it again"
        )


def _install_here(requirement: str) -> list[str]:
    """``uv pip install`` into this interpreter's environment; the new pack names."""
    from importlib import metadata

    before = {e.name for e in metadata.entry_points(group="toolpacks")}
    _uv_pip("install", requirement)
    import importlib

    importlib.invalidate_caches()
    after = {e.name for e in metadata.entry_points(group="toolpacks")}
    return sorted(after - before)


def _uv_pip(*args: str) -> None:
    import os
    import subprocess

    from toolpacks.exceptions import PackError
    from toolpacks.packs.isolated._env import _uv_environ, uv_command

    try:
        uv = uv_command()
    except PackError as exc:
        raise CliError(str(exc)) from exc
    command = [*uv, "pip", *args, "--python", sys.executable, "--quiet"]
    env = _uv_environ(os.environ)  # a pack's build code gets none of the host's secrets
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=900)
    if done.returncode != 0:
        raise CliError(f"uv pip {args[0]} failed:\n  {done.stderr.strip()[-2000:]}")


def cmd_uninstall(args: argparse.Namespace) -> int:
    """``toolpacks uninstall NAME``: an isolated pack leaves the configuration; else uv."""
    from toolpacks.cli._config_edit import remove_isolated

    name = args.name
    if not _NAME.match(name):
        raise CliError(f"{name!r} is not a pack or distribution name")
    path = _config_path(args)
    if path.is_file() and remove_isolated(path, name):
        print(f"removed [isolated.{name}] from {path} (`toolpacks gc` removes its environment)")
        return 0
    from importlib import metadata

    dists = {
        e.dist.name for e in metadata.entry_points(group="toolpacks") if e.name == name and e.dist
    }
    for dist in sorted(dists) or [name]:
        _uv_pip("uninstall", dist)
        print(f"uninstalled {dist}")
    return 0


def cmd_gc(args: argparse.Namespace) -> int:
    """``toolpacks gc``: remove isolated environments the configuration does not name."""
    from toolpacks.host.config._load import load_config
    from toolpacks.packs.isolated._env import env_for, remove_unused

    keep = []
    config = load_config(args.config)
    for table in config.config.isolated.values():
        keep.append(env_for(table.requirement, config.base_dir))
    removed = remove_unused(keep, args.days * 86400.0, base_dir=config.base_dir)
    for env in removed:
        print(f"removed {env.root} ({env.requirement or 'incomplete'})")
    from toolpacks.packs.isolated._workdirs import remove_stale

    for stale in remove_stale():
        print(f"removed {stale} (the private directory of a host that is gone)")
    print(
        f"{len(removed)} environment(s) removed, {len(keep)} in use kept (environments a "
        "running host holds, or another project's configuration used, are never removed)"
    )
    return 0
