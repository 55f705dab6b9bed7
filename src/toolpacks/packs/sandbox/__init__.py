"""The sandbox of a child process: Landlock file and network rules, and a process-tree guard.

Used by isolated packs (``[isolated.NAME]``, ``[packs.NAME] isolate``) and by stdio MCP
servers with ``sandbox = true``. ``available`` says whether this system can sandbox; the
launchers apply the rules in the child before the pack's code runs.
"""

from __future__ import annotations

import os

from toolpacks.packs.sandbox._landlock import LandlockError, abi
from toolpacks.packs.sandbox._rules import MODES, Rules, checked_grant

__all__ = ["MODES", "UNAVAILABLE_ENV", "LandlockError", "Rules", "available", "checked_grant"]

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
