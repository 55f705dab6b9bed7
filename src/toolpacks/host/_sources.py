"""The packs a host knows: installed ones, and those its configuration declares.

Installed packs come from discovery (entry points, never imported here); the configuration
adds remote MCP servers, a pack of file tools and aliases (a second instance of a pack with
other settings). ``[packs] disabled`` and the ``TOOLPACKS_*`` controls mark packs disabled.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from toolpacks.exceptions import ConfigError
from toolpacks.packs._record import PackInfo, PackSource
from toolpacks.packs.mcp._spec import shown_url

if TYPE_CHECKING:
    from toolpacks.host.config._load import Config, LoadedConfig

__all__ = ["compose", "installed"]

_CONFIGURED = ("alias", "mcp", "files", "isolated")
"""Sources of packs the configuration declares."""


def installed(
    cfg: Config, path: Sequence[str] | None, environ: Mapping[str, str]
) -> tuple[dict[str, PackSource], tuple[str, ...]]:
    """Installed packs (entry points, and ``[llm] plugins``), disabled and clashing marked.

    Returns:
        The packs by name, and the malformed entry-point metadata discovery skipped (and
        the llm plugins ``"*"`` left out).

    Raises:
        ConfigError: ``[llm] plugins`` names a plugin that is not installed or cannot be a
            pack.
    """
    settings = cfg.pack_settings()
    sources: dict[str, PackSource] = {}
    from toolpacks.packs.entrypoints._discovery import discover, select

    found = discover(path)
    for entry in found.entries:
        info = PackInfo(entry.name, entry.dist_name, entry.dist_version, entry.value, "available")
        sources[entry.name] = PackSource(info, settings=settings.get(entry.name, {}))
    for name, clashing in found.clashes.items():
        dists = ", ".join(f"{e.dist_name} {e.dist_version}" for e in clashing)
        error = (
            f"pack name {name!r} is declared by several distributions ({dists}); "
            "neither is loaded until all but one are uninstalled"
        )
        first = clashing[0]
        sources[name] = PackSource(
            PackInfo(name, first.dist_name, first.dist_version, first.value, "clash", error)
        )
    problems = list(found.problems)
    if cfg.llm.plugins:  # installed llm tool plugins the configuration mounts as packs
        from toolpacks.packs.llm._plugins import llm_sources

        llm_packs, skipped = llm_sources(cfg.llm.plugins, path, sources, settings)
        sources.update(llm_packs)
        problems.extend(skipped)
    verdicts = select(sorted(sources), cfg.disabled, environ)
    for name, reason in verdicts.items():
        source = sources.get(name)
        if reason is not None and source is not None and source.info.status == "available":
            info = replace(source.info, status="disabled", error=reason)
            sources[name] = replace(source, info=info)
    return sources, tuple(problems)


def compose(
    config: LoadedConfig,
    discovered: Mapping[str, PackSource],
    in_process: Mapping[str, PackSource],
    environ: Mapping[str, str],
    path: Sequence[str] | None = None,
) -> dict[str, PackSource]:
    """Every pack: installed, in-process, aliases, MCP servers, isolated and file tools, sorted.

    ``path`` is where the host discovers packs, passed to isolated children of its environment.

    Raises:
        ConfigError: A configured name (alias, MCP server, file tools) is already taken.
    """
    cfg = config.config
    where = config.source
    sources = dict(discovered)
    sources.update(in_process)

    def claim(name: str, key: str) -> None:
        if name in sources:
            raise ConfigError(
                f"{where}: {key}: the name {name!r} is already used by "
                f"{sources[name].info.describe()}; choose another name"
            )

    for name, server in cfg.mcp_servers.items():
        claim(name, f"mcp_servers.{name}")
        command = server.command or (shown_url(server.url) if server.url else None)
        info = PackInfo(name, None, None, command, "available", source="mcp")
        sources[name] = PackSource(info, extra=server)
    if cfg.isolated or any("isolate" in t for t in cfg.pack_settings().values()):
        from toolpacks.packs.isolated._sources import isolated_sources

        sources.update(isolated_sources(cfg.isolated, cfg.pack_settings(), sources, path, claim))
    if cfg.files.dirs:
        claim(cfg.files.pack, "files.pack")
        dirs = [config.base_dir / d for d in cfg.files.dirs]
        info = PackInfo(cfg.files.pack, None, None, None, "available", source="files")
        sources[cfg.files.pack] = PackSource(info, extra=dirs)
    aliases = {name: table for name, table in cfg.pack_settings().items() if "pack" in table}
    for name in aliases:
        claim(name, f"packs.{name}")
    for name, table in aliases.items():
        base = table["pack"]
        origin = sources.get(base)
        settings = {k: v for k, v in table.items() if k != "pack"}
        if origin is None or origin.info.source not in ("entry_point", "in_process"):
            what = "is not a pack" if origin is None else f"is {origin.info.describe()}"
            error = (
                f"{where}: packs.{name}.pack = {base!r}, but {base!r} {what}; an alias "
                f"instantiates an installed or added pack again. Known packs: "
                f"{', '.join(sorted(n for n in sources if n not in aliases)) or 'none'}"
            )
            info = PackInfo(name, None, None, None, "failed", error, source="alias", alias_of=base)
            sources[name] = PackSource(info, settings=settings, base=base)
            continue
        info = replace(origin.info, name=name, source="alias", alias_of=base)
        sources[name] = PackSource(info, origin.obj, settings, origin.base or base)
    configured = [n for n, src in sources.items() if src.info.source in _CONFIGURED]
    if configured:
        # `[packs] disabled` and TOOLPACKS_DISABLE/TOOLPACKS_PACKS cover every pack the
        # configuration defines too (an MCP server is a pack); in-process packs are the
        # application's own choice.
        from toolpacks.packs.entrypoints._discovery import select

        for name, reason in select(configured, cfg.disabled, environ).items():
            source = sources[name]
            if reason is not None and source.info.status == "available":
                info = replace(source.info, status="disabled", error=reason)
                sources[name] = replace(source, info=info)
    return dict(sorted(sources.items()))
