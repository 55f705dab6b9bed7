"""What a sandboxed child may touch: the grants of ``read``, ``write`` and ``network``.

``checked_grant`` validates one configured path (absolute, existing, not the whole
filesystem nor the home directory or a parent of it) and returns its real path: a symlink
in a grant never widens it. ``Rules`` is what the host hands a launcher (as JSON); the
launcher adds what any Python program needs (``system_grants``) and applies the lot with
``apply``.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from toolpacks.packs.sandbox._landlock import DEVICE, READ, WRITE, restrict

__all__ = ["MODES", "Rules", "apply", "checked_grant", "system_grants"]

MODES = ("auto", "required", "off")
"""``auto``: sandbox where the system can, else run without and say so; ``required``:
refuse to start without it; ``off``: never."""

_SYSTEM_READ = (
    "/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin",
    "/etc/ssl", "/etc/ca-certificates", "/etc/pki", "/etc/ld.so.cache", "/etc/ld.so.conf",
    "/etc/ld.so.conf.d", "/etc/localtime", "/usr/share/zoneinfo", "/etc/mime.types",
)  # fmt: skip
_NETWORK_READ = ("/etc/hosts", "/etc/resolv.conf", "/etc/nsswitch.conf", "/etc/gai.conf")
_DEVICES = ("/dev/null", "/dev/zero", "/dev/urandom", "/dev/random")


def checked_grant(entry: str, key: str) -> str:
    """The real path ``entry`` grants, after checking it may be granted.

    Raises:
        ValueError: ``entry`` is relative, does not exist, or opens the whole filesystem, the
            home directory or a parent of it; the message names ``key`` and the fix.
    """
    if not os.path.isabs(entry):
        raise ValueError(f"{key}: {entry!r} is relative; write an absolute path")
    real = Path(entry).resolve()
    if not real.exists():
        raise ValueError(f"{key}: {entry!r} does not exist; create it or remove the entry")
    home = Path.home().resolve()
    if real == Path(real.anchor) or real == home or real in home.parents:
        raise ValueError(
            f"{key}: {entry!r} would open the whole filesystem or the home directory "
            f"({real}); grant only the directories the pack needs"
        )
    return str(real)


@dataclass
class Rules:
    """One child's grants, as the host passes them to its launcher."""

    read: list[str] = field(default_factory=list)
    """Paths readable (and runnable) beneath."""
    write: list[str] = field(default_factory=list)
    """Paths writable beneath (readable too)."""
    network: bool = True
    """Whether TCP ``connect``/``bind`` are allowed."""
    mode: str = "auto"
    """One of ``MODES``."""
    unavailable: str | None = None
    """Why the host found no sandbox on this system (the launcher then applies none)."""

    def dumps(self) -> str:
        """The rules as JSON for the launcher's command line."""
        return json.dumps(asdict(self))

    @classmethod
    def loads(cls, text: str) -> Rules:
        """Rules from ``dumps``."""
        return cls(**json.loads(text))


def _python_paths() -> list[str]:
    """This interpreter's installation, environment and import path (real paths)."""
    found = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    here = os.getcwd()  # never the working directory ``python -m`` puts first on the path
    found |= {entry for entry in sys.path if entry and os.path.isabs(entry) and entry != here}
    found.add(os.path.dirname(sys.executable))
    return sorted({os.path.realpath(p) for p in found if os.path.exists(p)})


def system_grants(network: bool) -> list[tuple[str, int]]:
    """What every Python program needs: its interpreter, libraries, certificates, devices."""
    grants = [(p, READ) for p in _SYSTEM_READ]
    grants += [(p, READ) for p in _NETWORK_READ if network]
    grants += [(p, READ) for p in _python_paths()]
    grants += [(p, DEVICE) for p in _DEVICES]
    own = os.readlink("/proc/self") if os.path.islink("/proc/self") else str(os.getpid())
    grants.append((f"/proc/{own}", READ))  # its own /proc/self (as /proc numbers it) only
    return grants


def apply(rules: Rules, extra_read: Iterable[str] = ()) -> int:
    """Restrict this process to ``rules`` plus ``system_grants``; the Landlock ABI used.

    Raises:
        toolpacks.packs.sandbox._landlock.LandlockError: The system cannot sandbox.
    """
    grants = system_grants(rules.network)
    grants += [(p, READ) for p in [*rules.read, *extra_read]]
    grants += [(p, WRITE) for p in rules.write]
    return restrict(grants, network=rules.network)
