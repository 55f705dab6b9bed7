"""The environments of isolated packs: one per requirement and Python, made with uv, shared.

``[isolated.NAME] requirement = "..."`` names what to install: a pip requirement, a local
directory or a wheel. Its environment lives in ``<cache>/envs/<key>`` (``_statefiles.cache_dir``)
where the key digests the requirement (for a local directory or wheel also its contents), the
Python version and the toolpacks the host runs, so that every host on the machine asking for
the same thing shares one environment, and a changed requirement (or local source) gets a new
one. It is built once: the builder holds ``<key>.lock`` and writes ``toolpacks-env.json`` into
the environment last, so a half-built environment is never used (it is built again).

toolpacks itself is installed into each environment at the host's version and from where the
host got it, read from its installation metadata (``direct_url.json``): the checkout it was
installed from (editable or not), a wheel or URL, or else the package index. So a pack whose
requirements name ``toolpacks`` installs from a checkout with no index that holds toolpacks.
It is installed without the ``mcp`` extra (the child serves stdio without the SDK), so a pack
may pin the ``mcp`` the host's extra refuses.
``toolpacks gc`` removes environments no configuration in use names (``remove_unused``), and
never one that is in use or that belongs to another project: a host holds a shared lock on
each environment it runs a pack from for as long as the pack is mounted (``hold``), and each
environment records the configuration directories that used it (``users.json``); ``gc`` removes
an environment only when no process holds it and no other configuration directory that used
it still exists.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any
from urllib.parse import unquote, urlsplit

from toolpacks._version import __version__
from toolpacks.exceptions import PackError
from toolpacks.packs._statefiles import (
    StateFileError,
    cache_dir,
    locked,
    private_dir,
    read_json,
    update_json,
)

__all__ = [
    "Env",
    "ensure_env",
    "env_for",
    "environments",
    "hold",
    "local_requirement",
    "remove_unused",
    "toolpacks_requirement",
    "uv_command",
]

MARKER = "toolpacks-env.json"
"""Written into an environment once it is complete."""
IN_USE = "toolpacks-in-use.lock"
"""Held (shared) by every host running a pack from the environment; ``gc`` skips it then."""
USERS = "toolpacks-users.json"
"""The configuration directories that used the environment, with when they last did."""
_BUILD_SECONDS = 900.0
"""The longest one build (or the wait for another builder) may take."""
_MAX_SOURCE_FILES = 5000
"""Files of a local source directory digested at most."""
_SKIPPED = frozenset({".git", "__pycache__", ".venv", "build", "dist", ".mypy_cache", ".tox"})


@dataclass(frozen=True, slots=True)
class Env:
    """One isolated environment (built or not)."""

    root: Path
    """Its directory."""
    requirement: str
    """The requirement it installs (a local path made absolute)."""

    @property
    def python(self) -> Path:
        """Its interpreter."""
        folder = "Scripts" if os.name == "nt" else "bin"
        return self.root / folder / ("python.exe" if os.name == "nt" else "python")

    @property
    def ready(self) -> bool:
        """Whether it was built completely."""
        return (self.root / MARKER).is_file() and self.python.exists()

    def record(self) -> dict[str, Any]:
        """What its marker says (requirement, Python, toolpacks, when built and last used)."""
        try:
            return read_json(self.root / MARKER)
        except StateFileError:
            return {}


def uv_command() -> list[str]:
    """How to run uv: the ``uv`` package's binary, else ``uv`` on the PATH."""
    try:
        from uv import find_uv_bin

        return [find_uv_bin()]
    except (ImportError, FileNotFoundError):
        found = shutil.which("uv")
        if found is None:
            raise PackError(
                "isolated packs need uv to make their environments: pip install uv"
            ) from None
        return [found]


def local_requirement(requirement: str, base_dir: Path) -> Path | None:
    """The local directory or wheel ``requirement`` names (relative to ``base_dir``), or None."""
    text = requirement.strip()
    if text.startswith("file://"):
        return Path(unquote(urlsplit(text).path))
    looks_local = text.startswith((".", "/", "~")) or text.endswith((".whl", ".tar.gz", ".zip"))
    candidate = (base_dir / os.path.expanduser(text)).resolve()
    if looks_local or (os.sep in text and candidate.exists()):
        return candidate
    return None


def _source_digest(path: Path) -> str:
    """A digest of a local source: a file's bytes, or a directory's file names, sizes, times."""
    digest = hashlib.sha256()
    if path.is_file():
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()
    seen = 0
    for folder, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED and not d.endswith(".egg-info"))
        for name in sorted(files):
            seen += 1
            if seen > _MAX_SOURCE_FILES:
                return digest.hexdigest()
            try:
                stat = os.stat(os.path.join(folder, name))
            except OSError:
                continue
            rel = os.path.relpath(os.path.join(folder, name), path)
            digest.update(f"{rel}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def toolpacks_requirement() -> list[str]:
    """``uv pip install`` arguments for toolpacks as the host has it, without the MCP extra.

    The child serves stdio with toolpacks' own protocol modules, so it needs no MCP SDK; with
    the extra (``mcp>=2.3``) a pack pinning an older ``mcp`` (strands-agents: ``mcp<2.2``)
    could not be installed beside it.
    """
    from importlib import metadata

    try:
        dist = metadata.distribution("toolpacks")
        raw = dist.read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        raw = None
    if raw:
        data = json.loads(raw)
        url = str(data.get("url", ""))
        if "vcs_info" in data:
            vcs = data["vcs_info"]
            at = f"@{vcs['commit_id']}" if vcs.get("commit_id") else ""
            return [f"toolpacks @ {vcs.get('vcs', 'git')}+{url}{at}"]
        if url.startswith("file://"):
            path = unquote(urlsplit(url).path)
            if data.get("dir_info", {}).get("editable"):
                return ["-e", path]
            return [f"toolpacks @ {url}"]
        if url:
            return [f"toolpacks @ {url}"]
    return [f"toolpacks=={__version__}"]


def _python_tag() -> str:
    return f"{sys.implementation.name}-{sys.version_info[0]}.{sys.version_info[1]}"


def env_for(requirement: str, base_dir: Path, environ: Mapping[str, str] | None = None) -> Env:
    """The environment ``requirement`` gets (a local path resolved against ``base_dir``)."""
    local = local_requirement(requirement, base_dir)
    shown = str(local) if local is not None else requirement.strip()
    source = _source_digest(local) if local is not None and local.exists() else ""
    key = json.dumps([shown, source, _python_tag(), __version__, toolpacks_requirement()])
    digest = hashlib.sha256(key.encode()).hexdigest()[:20]
    return Env(cache_dir(environ) / "envs" / digest, shown)


_BUILD_PASSED = frozenset(
    {"PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TEMP", "TMP", "XDG_CACHE_HOME"}
    | {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR"}
    | {"http_proxy", "https_proxy", "all_proxy", "no_proxy", "PIP_INDEX_URL", "PIP_CERT"}
)
"""Host variables uv gets (where to find programs, its cache, the index, proxies); with
those starting ``UV_`` (its own configuration). uv hands its environment to a build backend,
so a pack's build code sees these and nothing else of the host's."""


def _uv_environ(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment uv (and the build code it runs) gets: the few variables it needs."""
    env = {k: v for k, v in environ.items() if k in _BUILD_PASSED or k.startswith("UV_")}
    env.setdefault("UV_NO_PROGRESS", "1")
    return env


def _run(args: list[str], environ: Mapping[str, str], what: str) -> None:
    try:
        done = subprocess.run(
            args,
            capture_output=True,
            text=True,
            env=_uv_environ(environ),
            timeout=_BUILD_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PackError(f"{what} failed: {exc}") from None
    if done.returncode != 0:
        tail = "\n  ".join(done.stderr.strip().splitlines()[-12:])
        raise PackError(f"{what} failed (uv exited with {done.returncode}):\n  {tail}")


def build(env: Env, environ: Mapping[str, str]) -> None:
    """Make ``env`` with uv: a virtual environment, the requirement and toolpacks in it.

    Raises:
        PackError: uv is missing or failed (its last lines of output say why).
    """
    uv = uv_command()
    shutil.rmtree(env.root, ignore_errors=True)
    what = f"making the environment for {env.requirement!r}"
    started = time.time()
    _run([*uv, "venv", str(env.root), "--python", sys.executable, "--quiet"], environ, what)
    install = [*uv, "pip", "install", "--python", str(env.python), "--quiet"]
    try:
        _run([*install, *toolpacks_requirement(), env.requirement], environ, what)
    except PackError:
        shutil.rmtree(env.root, ignore_errors=True)
        raise
    marker = {
        "requirement": env.requirement,
        "python": _python_tag(),
        "toolpacks": __version__,
        "built": started,
        "build_seconds": round(time.time() - started, 3),
        "used": time.time(),
    }
    (env.root / MARKER).write_text(json.dumps(marker, indent=1) + "\n", encoding="utf-8")


def ensure_env(requirement: str, base_dir: Path, environ: Mapping[str, str] | None = None) -> Env:
    """The environment for ``requirement``, built first if it is not (once, machine-wide).

    Raises:
        PackError: It cannot be built (uv failed, the cache is not usable, or another builder
            held it longer than the build may take).
    """
    source = os.environ if environ is None else environ
    env = env_for(requirement, base_dir, source)
    if env.ready:
        _touch(env)
    else:
        try:
            private_dir(env.root.parent)
            with locked(env.root, timeout=_BUILD_SECONDS):
                if not env.ready:
                    build(env, source)
        except StateFileError as exc:
            raise PackError(f"the environment for {requirement!r} cannot be made: {exc}") from None
    _record_user(env, base_dir)
    return env


def _record_user(env: Env, base_dir: Path) -> None:
    """Note that the configuration in ``base_dir`` uses ``env`` (``gc`` keeps it for them)."""

    def add(users: dict[str, Any]) -> None:
        users[str(base_dir.resolve())] = time.time()

    with contextlib.suppress(OSError, StateFileError):
        update_json(env.root / USERS, add)


def hold(env: Env) -> IO[bytes] | None:
    """A shared lock on ``env`` while the returned file stays open (close it to release).

    ``gc`` leaves an environment alone while any host holds it. None when the lock cannot
    be taken (the environment then has no protection beyond its age).
    """
    try:
        handle = open(env.root / IN_USE, "ab")  # noqa: SIM115 (held open on purpose)
    except OSError:
        return None
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_SH)
    except OSError:
        handle.close()
        return None
    return handle


def _held(env: Env) -> bool:
    """Whether a host holds ``env`` (its shared lock cannot be taken exclusively now)."""
    try:
        with open(env.root / IN_USE, "ab") as handle:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
    except OSError:
        return False
    return False


def _other_users(env: Env, base_dir: Path | None) -> list[str]:
    """Configuration directories, other than ``base_dir``, that used ``env`` and still exist."""
    try:
        users = read_json(env.root / USERS)
    except StateFileError:
        return []
    mine = str(base_dir.resolve()) if base_dir is not None else None
    return sorted(u for u in users if u != mine and Path(u).is_dir())


def _touch(env: Env) -> None:
    """Record that ``env`` was used now (``gc`` keeps recently used environments)."""
    with contextlib.suppress(OSError):
        os.utime(env.root / MARKER)


def environments(environ: Mapping[str, str] | None = None) -> list[Env]:
    """Every environment in the cache (complete or not)."""
    root = cache_dir(environ) / "envs"
    try:
        entries = sorted(p for p in root.iterdir() if p.is_dir())
    except OSError:
        return []
    found = []
    for path in entries:
        requirement = Env(path, "").record().get("requirement", "")
        found.append(Env(path, str(requirement)))
    return found


def remove_unused(
    keep: Iterable[Env],
    older_than: float,
    environ: Mapping[str, str] | None = None,
    base_dir: Path | None = None,
) -> list[Env]:
    """Remove environments not in ``keep`` unused for ``older_than`` seconds; the removed.

    An environment is skipped while a host runs a pack from it (``hold``), while another
    process holds its build lock, and while another configuration directory that used it
    still exists (another project's); ``base_dir`` is the directory of the configuration
    ``gc`` was asked for.
    """
    kept = {env.root for env in keep}
    removed: list[Env] = []
    now = time.time()
    for env in environments(environ):
        if env.root in kept or _held(env) or _other_users(env, base_dir):
            continue
        try:
            used = (env.root / MARKER).stat().st_mtime
        except OSError:
            used = 0.0
        if now - used < older_than:
            continue
        try:
            with locked(env.root, timeout=0.1):
                shutil.rmtree(env.root, ignore_errors=True)
        except StateFileError:
            continue
        removed.append(env)
    return removed
