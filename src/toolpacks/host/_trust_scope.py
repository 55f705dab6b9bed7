"""What trusting a configuration covers: its parsed bytes and the code it points to.

The code is every regular file under its ``[files]`` directories and, for each MCP server
started from ``command``, the code it runs from inside the configuration's directory
(``packs.mcp._spec.server_code_files``: scripts named in ``command``/``args`` and the targets
of links among them, the modules beside a Python script, a module run with ``-m``).

Each file is read once, bounded (``filetools._reviewed.file_digest``), and trust records one
fingerprint of the configuration's digest and those files' digests. When the host finds a
configuration trusted, the digests are recorded as its ``Review``, so that file tools and
servers run the bytes that were checked and nothing added since.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from toolpacks.filetools._reviewed import Budget, Review, file_digest, record, regular_files
from toolpacks.host.config._load import LoadedConfig, untrusted_keys
from toolpacks.packs._trust import fingerprint, is_trusted
from toolpacks.packs.mcp._spec import server_code_files

__all__ = [
    "MAX_FILES",
    "config_fingerprint",
    "covered_files",
    "needs_trust",
    "refuse_untrusted",
    "settings_withheld",
    "trusted",
]

MAX_FILES = 10_000
"""Directory entries one trust check visits at most; past them nothing more is covered (and
code that was not covered never runs from the configuration)."""


def covered_files(loaded: LoadedConfig) -> list[Path]:
    """The files of code ``loaded`` points to, sorted, each once (regular files only)."""
    return _coverage(loaded)[0]


def _coverage(loaded: LoadedConfig) -> tuple[list[Path], tuple[Path, ...]]:
    """The covered files, and the directories whose every file is covered."""
    base = loaded.base_dir.resolve()
    budget = Budget(MAX_FILES)
    found: set[Path] = set()
    roots: list[Path] = []
    for entry in loaded.config.files.dirs:
        root = (base / entry).resolve()
        if root.is_dir():
            roots.append(root)
            found.update(regular_files(root, budget))
        elif root.is_file():
            found.add(root)
    for server in loaded.config.mcp_servers.values():
        if server.command is None:
            continue
        env = _server_env(server.env)
        found.update(server_code_files(server.command, server.args, server.cwd, env, base, budget))
    # Where a module added later would be imported from: beside the reviewed ones.
    roots.extend(sorted({path.parent for path in found if path.suffix == ".py"}))
    return sorted(found), tuple(roots)


def _server_env(env: Mapping[str, str] | Sequence[str]) -> Mapping[str, str]:
    """The variables a server gets that decide where its modules come from."""
    if isinstance(env, Mapping):
        return env
    return {name: os.environ[name] for name in env if name in os.environ}


def _review(loaded: LoadedConfig) -> tuple[str, Review]:
    """The fingerprint of ``loaded`` and the review behind it, from one read of each file."""
    base = loaded.base_dir.resolve()
    files, roots = _coverage(loaded)
    digests = {path: file_digest(path)[0] for path in files}
    manifest = hashlib.sha256(b"toolpacks-covered-v1")
    for path in files:
        name = str(path.relative_to(base)) if path.is_relative_to(base) else str(path)
        manifest.update(f"\0{name}\0{digests[path]}".encode("utf-8", "surrogateescape"))
    # The files were read here, once; fingerprint() gets their digests, not their paths, so
    # the bytes trust is checked against are the bytes the review records.
    print_ = fingerprint(f"{loaded.digest or ''}\0{manifest.hexdigest()}", (), base)
    return print_, Review(base, roots, digests)


def config_fingerprint(loaded: LoadedConfig) -> str:
    """The fingerprint trust records for ``loaded`` (bytes parsed and code covered)."""
    return _review(loaded)[0]


def needs_trust(loaded: LoadedConfig) -> list[str]:
    """The keys that need trust: those of an implicit, untrusted file that grant capability."""
    if not loaded.implicit or loaded.path is None:
        return []
    keys = untrusted_keys(loaded.raw)
    if not keys or trusted(loaded):
        return []
    return keys


def trusted(loaded: LoadedConfig) -> bool:
    """Whether ``loaded`` may grant capability and run code (explicit, or trusted as is).

    A trusted implicit configuration's review is recorded, so that its code is checked again
    where it runs (``filetools._reviewed``).
    """
    if not loaded.implicit or loaded.path is None:
        return True
    review = _trusted_review(loaded)
    if review is None:
        return False
    record(str(loaded.path.resolve()), review)
    return True


def _trusted_review(loaded: LoadedConfig) -> Review | None:
    """The review of ``loaded`` if it is trusted as it is now (None otherwise)."""
    assert loaded.path is not None
    print_, review = _review(loaded)
    if not is_trusted(loaded.path, print_):
        return None
    return replace(review, recheck=lambda: _trusted_review(loaded))


def refuse_untrusted(loaded: LoadedConfig, is_trusted_now: Callable[[], bool]) -> None:
    """Refuse an implicit configuration that grants capability and is not trusted as it is.

    ``is_trusted_now`` is asked only when the file sets such keys (it fingerprints code).

    Raises:
        UntrustedConfigError: The configuration was found in the working directory, is
            not trusted as it is, and sets keys that grant capability or run code.
    """
    if not loaded.implicit or loaded.path is None:
        return
    keys = untrusted_keys(loaded.raw)
    if not keys or is_trusted_now():
        return
    from toolpacks.exceptions import UntrustedConfigError

    path = loaded.path
    raise UntrustedConfigError(
        f"{path} was found in the working directory and is not trusted (or it, or code it "
        f"points to, changed since it was trusted). It sets {', '.join(keys)}, which can "
        "grant access or run code; untrusted, only [agents.*], packs.disabled and "
        f"packs.priority apply. Review it, then run `toolpacks trust` in {path.parent}, "
        f"or pass it explicitly (--config {path.name} / Host(config=...))."
    )


def settings_withheld(
    loaded: LoadedConfig, pack: str, is_trusted_now: Callable[[], bool]
) -> bool:
    """Whether ``[packs.PACK]`` comes from an implicit, untrusted file (so is withheld).

    Every road that runs pack code loads it through the host, so this is where untrusted
    settings stop, whichever command asked (``toolset`` refuses earlier, as a whole).
    """
    if not loaded.implicit:
        return False
    return f"packs.{pack}" in untrusted_keys(loaded.raw) and not is_trusted_now()
