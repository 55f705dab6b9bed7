"""Finding installed packs from entry-point metadata, fast, without importing anything.

``discover()`` scans each path entry for ``*.dist-info`` and ``*.egg-info`` directories (and a
``.egg`` directory's ``EGG-INFO``), reads ``entry_points.txt`` where present and parses its
``[toolpacks]`` section by hand. Name and version come from the directory name
(``tp_greeter-0.1.0.dist-info``), the name PEP 503-normalized (``tp-greeter``); ``METADATA``
(``PKG-INFO`` for eggs) is read only for a version the name lacks: reading it for every pack
would double the files opened. As in ``importlib.metadata``, a distribution found again later
on the path is *shadowed*, not a clash. Metadata directories are read in sorted order; a zip
file on the path goes through ``importlib.metadata`` (imported only then).

The cache (one JSON file per path list, pruned after 30 days unwritten) keeps each path
entry's scan with its ``st_mtime_ns``: installing, upgrading or removing a distribution adds or
replaces a directory there, so only that entry is scanned again. An entry changed in the last
2 s is not cached (a change within the same mtime tick would go unseen). Limitation: an in-place
edit of an ``entry_points.txt`` changes no entry's mtime; reinstall, or set
``TOOLPACKS_NO_CACHE=1``.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import sys
import time
import zlib
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from toolpacks.packs._statefiles import atomic_write, cache_dir, private_dir

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs ~10 ms of `toolpacks list`
if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
    from typing import Any

__all__ = [
    "DISABLED_BY_CONFIG",
    "DISABLED_BY_ENV",
    "GROUP",
    "NOT_ALLOWED_BY_ENV",
    "Discovery",
    "PackEntry",
    "cache_file",
    "discover",
    "normalize",
    "parse_entry_points",
    "path_entries",
    "select",
]

GROUP = "toolpacks"
"""The entry-point group that packs declare."""
DISABLED_BY_CONFIG = "disabled by config"
DISABLED_BY_ENV = "disabled by TOOLPACKS_DISABLE"
NOT_ALLOWED_BY_ENV = "not in TOOLPACKS_PACKS"

_FORMAT = 2  # bump when the cache layout changes: old files are then ignored
_RACY_NS = 2_000_000_000
_PRUNE_AFTER_S = 30 * 86400
_META_SUFFIXES = (".dist-info", ".egg-info")
_CHUNK = 16384


@dataclass(frozen=True, slots=True)
class PackEntry:
    """One pack declared by one installed distribution; nothing is imported to know it."""

    name: str
    """The pack name: the entry point's name in the group ``toolpacks``."""
    value: str
    """The entry point's value: the module to import (``module`` or ``module:attr``)."""
    dist_name: str
    """The distribution's PEP 503-normalized name: ``tp-greeter``, ``My.Pkg`` as ``my-pkg``."""
    dist_version: str
    """The distribution's version, or ``"unknown"`` when its metadata has none."""
    location: str
    """The ``sys.path`` entry (an absolute directory, or a zip file) it was found in."""


@dataclass(frozen=True, slots=True)
class Discovery:
    """What ``discover()`` found on a path."""

    entries: tuple[PackEntry, ...]
    """Every visible pack entry, one per (pack, distribution), sorted by pack then distribution;
    a clashing pack name appears once per distribution."""
    clashes: Mapping[str, tuple[PackEntry, ...]]
    """Pack names declared by several distributions, sorted, each with all its entries."""
    shadowed: tuple[PackEntry, ...] = ()
    """Entries of distributions hidden by the same distribution earlier on the path."""
    problems: tuple[str, ...] = ()
    """Things skipped, one message each: malformed ``[toolpacks]`` lines, duplicates."""
    from_cache: bool = False
    """Whether every path entry's scan came from the cache."""
    pydantic_plugins: tuple[str, ...] = ()
    """Distributions that declare pydantic plugins (entry-point group ``pydantic``)."""


def normalize(name: str) -> str:
    """The PEP 503 form of a distribution name: lowercase, runs of ``-_.`` become ``-``."""
    text = name.lower().replace("_", "-").replace(".", "-")
    while "--" in text:
        text = text.replace("--", "-")
    return text


def parse_entry_points(text: str, group: str = GROUP) -> tuple[list[tuple[str, str]], list[str]]:
    """The ``name = value`` pairs of one section of an ``entry_points.txt``.

    Blank lines and comments (``#`` or ``;``) are skipped; a line of the section that is not
    ``name = value``, or that repeats a name, is skipped and described in the problems.

    Args:
        text: The file's text.
        group: The section to read.

    Returns:
        The pairs in file order, and one message per skipped line (``line N: ...``).
    """
    pairs: list[tuple[str, str]] = []
    problems: list[str] = []
    seen: set[str] = set()
    section: str | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line[0] == "[":
            section = line[1:-1] if line.endswith("]") else None  # no inner spaces, as importlib
            if section is None and group in line:
                problems.append(f"line {number}: malformed section header {line!r}")
            continue
        if section != group:
            continue
        name, equals, value = (part.strip() for part in line.partition("="))
        if not (equals and name and value):
            problems.append(f"line {number}: {line!r} is not 'name = module'")
        elif name in seen:
            problems.append(f"line {number}: pack {name!r} declared again; the first is used")
        else:
            seen.add(name)
            pairs.append((name, value))
    return pairs, problems


def _read(path: str, until: bytes = b"") -> bytes:
    """A file's bytes, with few system calls; with ``until``, stop reading once it is seen."""
    fd = os.open(path, os.O_RDONLY)
    try:
        chunks = [os.read(fd, _CHUNK)]
        while len(chunks[-1]) == _CHUNK and not (until and until in chunks[-1]):
            chunks.append(os.read(fd, _CHUNK))
        return b"".join(chunks)
    finally:
        os.close(fd)


def _version(meta_dir: str, stem: str) -> str:
    """The version in a metadata directory's name, else from METADATA (PKG-INFO for eggs)."""
    dist_info = meta_dir.endswith(".dist-info")
    rest = stem.partition("-")[2]
    version = rest if dist_info else rest.partition("-")[0]  # egg: name-version-py3.11
    if version and "-" not in version:
        return version
    try:
        head = _read(meta_dir + ("/METADATA" if dist_info else "/PKG-INFO"), until=b"\n\n")
    except OSError:
        return "unknown"
    for line in head.split(b"\n\n", 1)[0].decode("utf-8", "replace").splitlines():
        if line.startswith("Version:"):
            return line[8:].strip() or "unknown"
    return "unknown"


def _empty(mtime: int | None) -> dict[str, Any]:
    """A path entry's scan: distributions with packs, the others (for shadowing), problems."""
    return {"mtime": mtime, "others": [], "packs": [], "problems": [], "pydantic": []}


def _record(
    scan: dict[str, Any], key: str, text: str, where: str, version: Callable[[], str]
) -> None:
    if "[pydantic]" in text and parse_entry_points(text, "pydantic")[0]:
        scan["pydantic"].append(key)
    pairs, bad = parse_entry_points(text) if GROUP in text else ([], [])
    scan["problems"].extend(f"{where}: {problem}" for problem in bad)
    if pairs:
        scan["packs"].append([key, version(), pairs])
    else:
        scan["others"].append(key)


def _scan_dir(location: str, mtime: int | None) -> dict[str, Any]:
    scan = _empty(mtime)
    base = os.path.basename(location)
    in_egg = base.lower().endswith(".egg")
    try:
        with os.scandir(location) as it:
            found = {
                e.name: e
                for e in it
                if e.name.lower().endswith(_META_SUFFIXES) or (in_egg and e.name == "EGG-INFO")
            }
    except OSError:
        return scan
    first: dict[str, str] = {}
    for name in sorted(found):
        child = found[name]
        stem = name.rpartition(".")[0] if name != "EGG-INFO" else base.rpartition(".")[0]
        key = normalize(stem.partition("-")[0])
        if key in first:
            scan["problems"].append(f"{location}: {name} ignored: {first[key]} comes first")
            continue
        first[key] = name
        where = f"{child.path}/entry_points.txt"
        try:
            text = _read(where).decode("utf-8", "replace") if child.is_dir() else ""
        except OSError:
            text = ""
        _record(scan, key, text, where, partial(_version, child.path, stem))
    return scan


def _scan_zip(location: str, mtime: int | None) -> dict[str, Any]:
    scan = _empty(mtime)
    try:
        from importlib import metadata

        found = [(normalize(d.name or ""), d) for d in metadata.distributions(path=[location])]
        first: set[str] = set()
        for key, dist in sorted(found, key=lambda pair: pair[0]):
            if key not in first:
                first.add(key)
                text = dist.read_text("entry_points.txt") or ""
                where = f"{location}: {dist.name}: entry_points.txt"
                _record(scan, key, text, where, partial(lambda d: d.version or "unknown", dist))
    except Exception as exc:  # a broken archive must not break discovery
        scan["problems"].append(f"{location}: not readable: {exc!r}")
    return scan


def cache_file(locations: Sequence[str], environ: Mapping[str, str] | None = None) -> str:
    """The cache file of a path list, in the user's cache directory.

    That is ``discovery-<crc32 of locations>.json`` in ``$TOOLPACKS_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/toolpacks``, else ``~/.cache/toolpacks`` on Linux, the platform's cache
    folder elsewhere (``environ``: ``os.environ``; see ``packs._statefiles.cache_dir``).
    """
    digest = zlib.crc32("\0".join(locations).encode("utf-8", "surrogateescape"))
    return os.path.join(cache_dir(environ), f"discovery-{digest:08x}.json")


def _frame(payload: bytes) -> bytes:
    """The cache file: JSON whose ``crc32`` covers the ``scans`` text, so damage is detected."""
    return b'{"format":%d,"crc32":"%08x","scans":%s}' % (_FORMAT, zlib.crc32(payload), payload)


def _load(path: str) -> dict[str, Any]:
    """The cached scans, or ``{}`` if the file is missing, of another format, or damaged.

    The cache names modules to import, so it is read only from a directory that is the
    user's own (``private_dir``: not a link, not someone else's).
    """
    try:
        private_dir(Path(path).parent)
        data = _read(path)
        start = data.find(b',"scans":') + 9
        if start < 9 or _frame(data[start:-1]) != data:
            return {}
        scans = json.loads(data[start:-1])
    except (OSError, ValueError, RecursionError):
        return {}
    return scans if isinstance(scans, dict) else {}


def _save(path: str, scans: dict[str, Any]) -> None:
    """Write the scans atomically, owner-only, in the user's own directory; failures are ignored.

    Concurrent writers each replace the whole file (``atomic_write``), so no lock is needed:
    whichever lands last is a complete scan.
    """
    payload = json.dumps(scans, separators=(",", ":")).encode("utf-8", "surrogateescape")
    try:
        private_dir(Path(path).parent)
        atomic_write(Path(path), _frame(payload), mode=0o600)
    except OSError:  # a cache that cannot be written (or is not ours) is only a slower next run
        return
    _prune(os.path.dirname(path))


_PRUNED = ("discovery-", ".discovery-")
"""Cache files, and temporary files a killed writer left behind (``atomic_write``)."""


def _prune(directory: str) -> None:
    """Remove cache files not rewritten for 30 days (every working directory makes one)."""
    cutoff = time.time() - _PRUNE_AFTER_S
    with contextlib.suppress(OSError), os.scandir(directory) as it:
        for entry in it:
            if entry.name.startswith(_PRUNED) and entry.stat().st_mtime < cutoff:
                os.unlink(entry.path)


def discover(path: Sequence[str] | None = None, *, use_cache: bool = True) -> Discovery:
    """The packs installed on a path, from metadata only; nothing is imported.

    Args:
        path: The path entries to scan, in priority order (default ``sys.path``).
        use_cache: Whether to read and write the cache; ``TOOLPACKS_NO_CACHE=1`` also
            disables it.

    Returns:
        The entries, clashes, shadowed entries and problems, sorted.
    """
    given = sys.path if path is None else path
    locations = list(dict.fromkeys(os.path.abspath(p) for p in given if isinstance(p, str)))
    use_cache = use_cache and os.environ.get("TOOLPACKS_NO_CACHE", "") in ("", "0")
    cache_path = cache_file(locations) if use_cache else ""
    cached = _load(cache_path) if use_cache else {}
    try:
        return _discover(locations, cached, cache_path)
    except (TypeError, ValueError, KeyError, AttributeError):
        if not cached:
            raise
        return _discover(locations, {}, cache_path)  # a checksummed file of the wrong shape


def _discover(locations: list[str], cached: dict[str, Any], cache_path: str) -> Discovery:
    scans: dict[str, Any] = {}
    changed = False
    racy_before = time.time_ns() - _RACY_NS
    for location in locations:
        try:
            st = os.stat(location)
            mtime: int | None = st.st_mtime_ns
        except OSError:
            st, mtime = None, None
        scan = cached.get(location)
        if isinstance(scan, dict) and scan.get("mtime") == mtime:
            scans[location] = scan
            continue
        changed = True
        if st is None:
            scans[location] = _empty(None)
        elif stat.S_ISDIR(st.st_mode):
            scans[location] = _scan_dir(location, mtime)
        else:
            scans[location] = _scan_zip(location, mtime)
    found = _assemble(locations, scans, from_cache=bool(cache_path) and not changed)
    if cache_path and changed:
        _save(cache_path, {k: v for k, v in scans.items() if (v["mtime"] or 0) < racy_before})
    return found


def _assemble(locations: list[str], scans: dict[str, Any], *, from_cache: bool) -> Discovery:
    seen: set[str] = set()
    entries: list[PackEntry] = []
    shadowed: list[PackEntry] = []
    problems: list[str] = []
    for location in locations:
        scan = scans[location]
        problems.extend(scan["problems"])
        for key, version, pairs in scan["packs"]:
            bucket = shadowed if key in seen else entries
            bucket.extend(PackEntry(n, v, key, version, location) for n, v in pairs)
            seen.add(key)
        seen.update(scan["others"])
    entries.sort(key=lambda e: (e.name, e.dist_name))
    shadowed.sort(key=lambda e: (e.name, e.dist_name, e.location))
    by_name: dict[str, list[PackEntry]] = {}
    for entry in entries:
        by_name.setdefault(entry.name, []).append(entry)
    clashes = {name: tuple(group) for name, group in by_name.items() if len(group) > 1}
    plugins = tuple(sorted({key for scan in scans.values() for key in scan["pydantic"]}))
    return Discovery(tuple(entries), clashes, tuple(shadowed), tuple(problems), from_cache, plugins)


def path_entries(path: Iterable[str | os.PathLike[str]] | None) -> list[str] | None:
    """The directories a host discovers packs in (``Host(path=...)``), as strings.

    Raises:
        TypeError: ``path`` is one string or path rather than a list: ``Host(path=
            "toolpacks.toml")`` reads like a configuration file but would be searched for
            packs, and the file ignored.
    """
    if path is None:
        return None
    if isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(
            f"Host(path={os.fsdecode(path)!r}): path is the list of directories to discover "
            "packs in (sys.path entries), not one path; for a configuration file use "
            f"Host(config={os.fsdecode(path)!r}) (or Host({os.fsdecode(path)!r})), and for "
            f"one directory path=[{os.fsdecode(path)!r}]"
        )
    return [os.fspath(entry) for entry in path]


def spare_pydantic_plugin_scan() -> None:
    """Spare pydantic its scan for plugins when discovery found none on ``sys.path``.

    pydantic looks for plugins (entry-point group ``pydantic``) when it builds its first
    validator, through ``importlib.metadata``: about 55 ms with 1,000 distributions installed.
    Discovery's cached scan already reads every ``entry_points.txt``; when none declares the
    group, pydantic is told its plugins are none, which is what its own scan would find. With
    a plugin installed, or ``PYDANTIC_DISABLE_PLUGINS`` set, or the plugins already loaded,
    nothing changes.
    """
    loader = sys.modules.get("pydantic.plugin._loader")
    if getattr(loader, "_plugins", None) is not None:
        return  # pydantic has looked already
    if os.environ.get("PYDANTIC_DISABLE_PLUGINS") is not None or discover().pydantic_plugins:
        return
    try:
        from pydantic.plugin import _loader

        if _loader._plugins is None and not _loader._loading_plugins:
            _loader._plugins = {}
    except (ImportError, AttributeError):  # another pydantic: it scans as it always did
        return


def _names(value: str) -> frozenset[str]:
    return frozenset(part.strip() for part in value.split(",") if part.strip())


def select(
    packs: Iterable[str | PackEntry],
    disabled: Collection[str] = (),
    environ: Mapping[str, str] | None = None,
) -> dict[str, str | None]:
    """Which packs may be imported, and why the others may not; imports nothing.

    Controls, first match wins: the configuration's ``[packs] disabled`` list,
    ``TOOLPACKS_DISABLE`` (comma-separated names), and ``TOOLPACKS_PACKS`` (comma-separated
    allow-list: unset allows all, set but empty allows none).

    Args:
        packs: Pack names, or entries from ``discover()``.
        disabled: Pack names disabled by the configuration.
        environ: The environment (default ``os.environ``).

    Returns:
        Pack name -> ``None`` when enabled, else the reason (``DISABLED_BY_CONFIG``,
        ``DISABLED_BY_ENV`` or ``NOT_ALLOWED_BY_ENV``), sorted by name.
    """
    env = os.environ if environ is None else environ
    blocked = _names(env.get("TOOLPACKS_DISABLE", ""))
    allow = env.get("TOOLPACKS_PACKS")
    allowed = None if allow is None else _names(allow)
    verdicts: dict[str, str | None] = {}
    for pack in packs:
        name = pack if isinstance(pack, str) else pack.name
        if name in disabled:
            verdicts[name] = DISABLED_BY_CONFIG
        elif name in blocked:
            verdicts[name] = DISABLED_BY_ENV
        elif allowed is not None and name not in allowed:
            verdicts[name] = NOT_ALLOWED_BY_ENV
        else:
            verdicts[name] = None
    return dict(sorted(verdicts.items()))
