"""The sandbox of a child process: Landlock file and network rules, and a process-tree guard.

Used by isolated packs (``[isolated.NAME]``, ``[packs.NAME] isolate``) and by stdio MCP
servers with ``sandbox = true``. ``available`` says whether this system can sandbox; the
launchers apply the rules in the child before the pack's code runs.
"""

from __future__ import annotations

import os

from toolpacks.packs.sandbox._landlock import LandlockError, abi
from toolpacks.packs.sandbox._rules import MODES, Rules, checked_grant

__all__ = [
    "MODES",
    "UNAVAILABLE_ENV",
    "LandlockError",
    "Rules",
    "available",
    "checked_grant",
    "report",
    "tree_guard",
]

UNAVAILABLE_ENV = "TOOLPACKS_SANDBOX_UNAVAILABLE"
"""Set to ``1`` to make ``available`` answer that no sandbox exists (to test ``required``)."""


def available(network: bool = True) -> str | None:
    """None when this system can apply the sandbox, else why not (one sentence).

    ``network = False`` needs Landlock ABI 4 (Linux 6.7) or later.
    """
    if os.environ.get(UNAVAILABLE_ENV) == "1":
        return f"the sandbox is switched off by {UNAVAILABLE_ENV}=1"
    version = abi()
    if version < 1:
        return "this system offers no Landlock (Linux 5.13 or later is needed)"
    if not network and version < 4:
        return f"Landlock ABI {version} cannot refuse network connections (ABI 4 is needed)"
    return None


def tree_guard() -> str:
    """How a child's descendants would be ended here: what ``guard_tree`` will manage."""
    if not os.path.isdir("/proc/self/ns"):
        return "not in force (no namespaces on this system)"
    if os.geteuid() == 0:
        return "in force (a PID namespace: all end with the child, even if the host is killed)"
    try:
        with open("/proc/sys/user/max_user_namespaces", encoding="ascii") as src:
            allowed = int(src.read().strip()) > 0
    except (OSError, ValueError):
        allowed = False
    if allowed:
        return "in force (a PID namespace in a user namespace), unless the system refuses one"
    return "partly (a subreaper: ended when the child exits, not when it is killed)"


def report(mode: str, network: bool) -> tuple[str, str]:
    """``doctor``'s level and line for a child's sandbox (``info``, or ``warning`` without).

    Args:
        mode: ``auto``, ``required`` or ``off`` (``sandbox = true`` of a server: ``required``).
        network: Whether the child may use TCP.
    """
    if mode == "off":
        return "warning", "sandbox: off (the child reads and writes what its user can)"
    problem = available(network)
    if problem is not None:
        what = "refuses to start" if mode == "required" else "runs WITHOUT a sandbox"
        return "warning", f"sandbox: {mode}, {what}: {problem}"
    net = "allowed" if network else f"TCP connect/bind refused (Landlock ABI {abi()})"
    return "info", (
        f"sandbox: in force (Landlock ABI {abi()}: files limited to its grants); "
        f"network: {net}; process-tree kill: {tree_guard()}"
    )
