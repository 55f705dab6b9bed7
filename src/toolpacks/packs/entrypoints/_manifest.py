"""Pack manifests: an installed pack's tool definitions, so that listing them imports nothing.

A manifest holds what the packs of one installed distribution register: for each tool its
qualified name, description, tags, hints, input and output schemas, and the rest of its
definition that building a toolset reads. It is written when a pack is imported (``Host.load``,
so also ``toolpacks lock``) into ``$TOOLPACKS_CACHE_DIR/manifests`` (by default
``$XDG_CACHE_HOME/toolpacks/manifests``), one file per distribution version, Python version and
set of installed files, and read when a toolset is built: a pack with a valid manifest is not
imported then. Its tools are placeholders (``ManifestTool``) that import the pack on their
first call and run the real tool, which a toolset then keeps in their place. When the imported
definition is not the one listed, the call is refused (the model was shown something else) and
the manifest is rewritten from the import; building the toolset again shows the new one.

A manifest is checked at every read and ignored when anything does not match:

* the distribution's name and version, and the SHA-256 of its ``RECORD`` (its installed files
  with their hashes; for an editable install also the size and modification time of every file
  of its source package) are those the manifest was written for;
* the toolpacks version and the Python version that wrote it are these;
* its ``checksum``, an HMAC-SHA256 of its content keyed with that RECORD hash, is right, so a
  manifest edited by hand is not used (it is rewritten at the pack's next import). This detects
  edits and damage; it is not a signature (whoever can write the cache can write the packs).

Each pack has a variant per pack name, settings and configuration directory (an alias, or other
settings, may register other tools). Values taken from the environment that are secrets (see
``secret_values``: any under a secret-looking key, and every one of ``MIN_ENV_LEN`` characters
or more) are not part of the key; shorter ones (``region = "eu"``) are. No secret reaches the
cache: a variant whose definition holds a secret setting's value, in any form ``scrub`` finds,
is not written (an earlier entry under its key is dropped), so such a pack is imported at every
start and no other environment is shown what one environment's secret built. A definition that
depends on a secret without quoting it is caught at the first call.

The directory is the user's only (``private_dir``: ``0700``, the user's own, not a symbolic
link) and each manifest ``0600``, written whole (``atomic_write``) under its lock file. When
the directory is refused, manifests are off for the host (packs are imported), which is
logged once per directory.

A pack that implements hooks besides ``register_tools`` is always imported: its hooks apply to
every tool of a toolset. A distribution may also ship a manifest: a ``toolpacks-manifest.json``
among its files, listed in its RECORD with a matching hash, naming its distribution and
version; it stands for each of its packs under its own name with no settings.
``TOOLPACKS_NO_CACHE=1`` turns manifests off (as it does the discovery cache).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolpacks._version import __version__
from toolpacks.core import _logscrub
from toolpacks.core._secrets import holds_secret, secret_values
from toolpacks.packs._record import LoadedPack, PackSource
from toolpacks.packs._statefiles import atomic_write, cache_dir, locked, private_dir
from toolpacks.packs.entrypoints._manifest_tool import (
    ManifestTool,
    canonical,
    listed_pack,
    pack_record,
)

__all__ = [
    "FORMAT",
    "SHIPPED_NAME",
    "Installed",
    "ManifestTool",
    "Manifests",
    "installed",
    "manifest_dir",
    "shippable",
]

FORMAT = 1
"""The manifest layout; a manifest of another format is ignored."""
SHIPPED_NAME = "toolpacks-manifest.json"
"""The file name of a manifest shipped inside a distribution."""
_PYTHON = f"{sys.version_info[0]}.{sys.version_info[1]}"
_SOURCES = ("entry_point", "alias")
"""Pack sources that come from an installed distribution, and so may have a manifest."""
_LOCK_SECONDS = 10.0
"""How long a write waits for another process's; after that the manifest is not written."""

logger = logging.getLogger("toolpacks")
_refused: set[str] = set()
"""Directories already reported as refused (each is reported once per process)."""


def manifest_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``manifests`` in the cache directory (``$TOOLPACKS_CACHE_DIR``, else the platform's).

    On Linux that is ``$XDG_CACHE_HOME/toolpacks/manifests``, else
    ``~/.cache/toolpacks/manifests`` (see ``cache_dir``).

    Args:
        environ: The environment to read (default ``os.environ``).
    """
    return cache_dir(environ) / "manifests"


# -- the installed distribution ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Installed:
    """An installed distribution's identity, read from its metadata (nothing imported)."""

    distribution: str
    """Its PEP 503-normalized name."""
    version: str
    """Its version."""
    record: str
    """SHA-256 (hex) of its RECORD, and of its source files' sizes and times when editable."""
    shipped: Path | None = None
    """A manifest it ships, present and matching its RECORD entry."""


def installed(
    distribution: str, version: str, module: str, path: Sequence[str]
) -> Installed | None:
    """The identity of an installed distribution, or None when it cannot have a manifest.

    The ``<name>-<version>.dist-info`` directory is looked for on ``path`` in order; without
    one, or without a RECORD in it, there is no manifest.

    Args:
        distribution: The normalized distribution name (``toolpacks-files``).
        version: Its version, as discovery found it.
        module: The module its entry point names (for an editable install's sources).
        path: The path entries to look in.
    """
    stem = f"{distribution.replace('-', '_')}-{version}.dist-info"
    for location in path:
        meta = os.path.join(location, stem)
        try:
            record = Path(meta, "RECORD").read_bytes()
        except OSError:
            continue
        digest = hashlib.sha256(record)
        if _editable(meta):
            digest.update(b"\0" + _source_listing(module))
        return Installed(distribution, version, digest.hexdigest(), _shipped(location, record))
    return None


def _editable(meta: str) -> bool:
    try:
        data = json.loads(Path(meta, "direct_url.json").read_bytes())
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and bool((data.get("dir_info") or {}).get("editable"))


def _source_listing(module: str) -> bytes:
    """Each file under the module's top-level package: path, size, mtime (no import)."""
    import importlib.util

    top = module.partition(":")[0].strip().partition(".")[0]
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        return b"?"
    roots = list(spec.submodule_search_locations or ([spec.origin] if spec.origin else []))
    lines: list[str] = []
    for root in roots:
        walked = os.walk(root) if os.path.isdir(root) else [("", [], [root])]
        for folder, dirs, files in walked:
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                full = os.path.join(folder, name)
                try:
                    st = os.stat(full)
                except OSError:
                    continue
                lines.append(f"{full}\t{st.st_size}\t{st.st_mtime_ns}")
    return "\n".join(lines).encode("utf-8", "surrogateescape")


def _shipped(location: str, record: bytes) -> Path | None:
    """The shipped manifest listed in ``record``, when its hash there matches the file."""
    for line in record.decode("utf-8", "replace").splitlines():
        name, _, rest = line.partition(",")
        if os.path.basename(name) != SHIPPED_NAME or not rest.startswith("sha256="):
            continue
        path = Path(location, name)
        try:
            digest = hashlib.sha256(path.read_bytes()).digest()
        except OSError:
            return None
        expected = rest[7:].partition(",")[0]
        actual = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        return path if hmac.compare_digest(actual, expected) else None
    return None


# -- reading and writing ----------------------------------------------------------------------


class Manifests:
    """The manifests a host reads when it builds toolsets and writes when it imports packs.

    Args:
        path: Where the host discovers packs (default ``sys.path``).
        environ: The host's environment (``TOOLPACKS_CACHE_DIR``, ``TOOLPACKS_NO_CACHE``,
            ``XDG_CACHE_HOME``, and the values of ``{ env = ... }`` settings).
        config_path: The configuration file, whose directory pack settings are relative to.
    """

    def __init__(
        self,
        path: Sequence[str] | None,
        environ: Mapping[str, str],
        config_path: Path | None = None,
    ) -> None:
        self._path = path
        self._environ = environ
        self._config_dir = str(config_path.parent) if config_path is not None else None
        self.enabled = environ.get("TOOLPACKS_NO_CACHE", "") in ("", "0")
        """Whether manifests are read and written (``TOOLPACKS_NO_CACHE`` unset or 0)."""
        self.directory = manifest_dir(environ)
        """Where manifests are written."""
        self._listed: dict[tuple[Any, ...], LoadedPack] = {}
        self._private: bool | None = None

    def _usable(self) -> bool:
        """Whether the directory is the user's only (checked, and created, once).

        A refused directory (a link, another user's) turns manifests off for this host: what
        is there could be read by others or planted by them. That is logged once.
        """
        if self._private is None:
            try:
                private_dir(self.directory.parent)
                private_dir(self.directory)
            except OSError as exc:  # StateFileError (a link, a stranger's), or cannot be made
                self._private = False
                if str(self.directory) not in _refused:
                    _refused.add(str(self.directory))
                    logger.warning(
                        "pack manifests are off (packs are imported at every start): %s", exc
                    )
            else:
                self._private = True
        return self._private

    # -- identity ----------------------------------------------------------------------------

    def _installed(self, source: PackSource) -> Installed | None:
        info = source.info
        if not self.enabled or info.source not in _SOURCES or not info.distribution:
            return None
        if not self._usable():
            return None
        path = sys.path if self._path is None else self._path
        locations = [os.path.abspath(p) for p in path if isinstance(p, str)]
        return installed(info.distribution, info.version or "", info.module or "", locations)

    def _secrets(self, source: PackSource) -> list[str]:
        """The secret values of the pack's settings, those from the environment included."""
        return secret_values(dict(source.settings), environ=self._environ)

    def _variant(self, source: PackSource) -> str:
        """The key of the pack's entry: its name, code, settings and configuration directory.

        Values read from the environment that are not secrets are part of it; secrets, read
        or written in the configuration, are not (the cache holds no secret, not even hashed).
        """
        settings = dict(source.settings)
        key = {
            "pack": source.info.name,
            "module": source.info.module,
            "base": source.base,
            "settings": _keyed(settings, self._environ, set(self._secrets(source))),
            "config_dir": self._config_dir if settings else None,
        }
        return hashlib.sha256(json.dumps(key, sort_keys=True, default=repr).encode()).hexdigest()

    def file(self, found: Installed) -> Path:
        """The manifest file of an installed distribution."""
        tag = f"py{_PYTHON.replace('.', '')}-{found.record[:16]}"
        return self.directory / f"{found.distribution}-{found.version}-{tag}.json"

    # -- reading -----------------------------------------------------------------------------

    def read(self, found: Installed) -> dict[str, Any] | None:
        """The valid manifest of ``found``, or None (missing, stale, damaged or edited).

        The file is ``{"checksum":"<hex>","body":<JSON>}``; the checksum covers the body's
        bytes as they are, so checking it needs no second serialization.
        """
        try:
            data = self.file(found).read_bytes()
        except OSError:
            return None
        checksum, body_bytes = data[13:77], data[86:-1]
        framed = data[:13] == _HEAD and data[77:86] == _BODY and data[-1:] == b"}"
        if not framed or not hmac.compare_digest(checksum, _checksum(found.record, body_bytes)):
            return None
        try:
            body = json.loads(body_bytes)
        except (ValueError, RecursionError):
            return None
        if not isinstance(body, dict) or not isinstance(body.get("packs"), dict):
            return None
        expected = {
            "format": FORMAT,
            "distribution": found.distribution,
            "version": found.version,
            "record": found.record,
            "toolpacks": __version__,
            "python": _PYTHON,
        }
        if any(body.get(k) != v for k, v in expected.items()):
            return None
        return body

    def _shipped_variant(self, source: PackSource, found: Installed) -> Any:
        """A shipped manifest's entry for ``source``: its own name, no settings, same dist."""
        if found.shipped is None or source.settings or source.info.source != "entry_point":
            return None
        try:
            data = json.loads(found.shipped.read_bytes())
        except (OSError, ValueError, RecursionError):
            return None
        if not isinstance(data, dict) or not isinstance(data.get("packs"), dict):
            return None
        if (data.get("format"), data.get("distribution"), data.get("version")) != (
            FORMAT,
            found.distribution,
            found.version,
        ):
            return None
        return data["packs"].get(source.info.name)

    def listed(
        self, source: PackSource, load: Callable[[str], LoadedPack], lazy: bool = True
    ) -> LoadedPack:
        """The pack's tools from its manifest, nothing imported; else ``load(name)``.

        The pack is loaded instead when ``lazy`` is false, or it is not from an installed
        distribution, has no valid manifest, implements hooks, or names an environment
        variable in its settings that is not set (loading reports that). ``load`` must return
        the same pack on every call (``Host.load``): placeholders call it to import the pack.
        """
        name = source.info.name
        if not lazy or source.info.status != "available":
            return load(name)
        found = self._installed(source)
        if found is None or _missing_env(source.settings, self._environ):
            return load(name)
        key = (name, self._variant(source), found)
        cached = self._listed.get(key)
        if cached is not None:
            return cached
        data = self.read(found)
        variant = (data or {}).get("packs", {}).get(key[1]) or self._shipped_variant(source, found)
        pack = listed_pack(source.info, variant, lambda: load(name))
        if pack is None:
            return load(name)
        pack.secrets = tuple(self._secrets(source))
        _logscrub.remember(self, pack.secrets)  # masked in log records, as for an imported pack
        self._listed[key] = pack
        return pack

    # -- writing -----------------------------------------------------------------------------

    def remember(self, source: PackSource, loaded: LoadedPack) -> Path | None:
        """Write (or update) the manifest of a pack just imported; the file, or None.

        Nothing is written for a pack that did not load, is not from an installed
        distribution, or registers something a manifest cannot hold (a schema that is not
        JSON); a manifest that already says the same is left as it is. A definition that
        holds a secret value of the pack's settings is not written, and an entry of the same
        key is removed: the pack is imported at every start instead.
        """
        if loaded.info.status != "loaded":
            return None
        found = self._installed(source)
        if found is None:
            return None
        try:
            text = canonical(pack_record(source.info.name, loaded))
        except (TypeError, ValueError):
            return None
        secret = holds_secret(text, [*self._secrets(source), *loaded.secrets])
        secret = secret or bool(loaded.prompts or loaded.resources)  # code a manifest lacks
        key = self._variant(source)
        try:
            with locked(self.file(found), _LOCK_SECONDS):
                return self._update(found, key, None if secret else text)
        except OSError:  # a manifest that cannot be written only means an import next time
            return None

    def _update(self, found: Installed, key: str, text: str | None) -> Path | None:
        """Set (``text``) or drop (None) the entry ``key`` of ``found``'s manifest."""
        current = self.read(found)
        if text is None:
            if current is None or key not in current["packs"]:
                return None
            del current["packs"][key]
            self._listed.clear()
            self._write(found, current)
            return None
        body = current or {
            "format": FORMAT,
            "distribution": found.distribution,
            "version": found.version,
            "record": found.record,
            "toolpacks": __version__,
            "python": _PYTHON,
            "packs": {},
        }
        if key in body["packs"] and canonical(body["packs"][key]) == text:
            return self.file(found)
        body["packs"][key] = json.loads(text)
        self._listed.clear()  # what was listed from the old manifest is not listed again
        return self._write(found, body)

    def _write(self, found: Installed, body: dict[str, Any]) -> Path | None:
        """Replace ``found``'s manifest with ``body`` (owner-only); None if it cannot be."""
        if not self._usable():
            return None
        path = self.file(found)
        text = canonical(body).encode()
        data = _HEAD + _checksum(found.record, text) + _BODY + text + b"}"
        try:
            atomic_write(path, data, mode=0o600)
        except OSError:  # a manifest that cannot be written only means an import next time
            return None
        return path


_HEAD = b'{"checksum":"'
_BODY = b'","body":'


def _checksum(record: str, body: bytes) -> bytes:
    """HMAC-SHA256 (hex) of a manifest's body, keyed with the RECORD hash it belongs to."""
    return hmac.new(record.encode(), body, hashlib.sha256).hexdigest().encode()


def _keyed(value: Any, environ: Mapping[str, str], secrets: set[str]) -> Any:
    """``value`` with each ``{ env = ... }`` holding what it reads, and secrets replaced."""
    if isinstance(value, Mapping):
        if set(value) <= {"env", "default"} and isinstance(value.get("env"), str):
            found = environ.get(value["env"])
            if found is None or found in secrets:
                return dict(value)
            return {**value, "value": found}
        return {k: _keyed(v, environ, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [_keyed(v, environ, secrets) for v in value]
    return "<secret>" if isinstance(value, str) and value in secrets else value


def _missing_env(value: Any, environ: Mapping[str, str]) -> bool:
    """Whether ``value`` names an environment variable that is unset and has no default."""
    if isinstance(value, Mapping):
        if set(value) <= {"env", "default"} and isinstance(value.get("env"), str):
            return value["env"] not in environ and "default" not in value
        return any(_missing_env(v, environ) for v in value.values())
    if isinstance(value, list):
        return any(_missing_env(v, environ) for v in value)
    return False


def shippable(loaded: LoadedPack) -> dict[str, Any]:
    """A manifest to ship inside the pack's distribution (as ``toolpacks-manifest.json``).

    It describes ``loaded`` (an installed pack, loaded with no settings) under its own name;
    a toolset uses it while no valid manifest of the cache (a first import writes one) does.

    Raises:
        ValueError: The pack is not from an installed distribution, or did not load.
    """
    info = loaded.info
    if info.status != "loaded" or not info.distribution or not info.version:
        raise ValueError(f"{info.describe()} is not a loaded pack of an installed distribution")
    return {
        "format": FORMAT,
        "distribution": info.distribution,
        "version": info.version,
        "toolpacks": __version__,
        "packs": {
            loaded.info.name: pack_record(loaded.info.name, loaded),
        },
    }
