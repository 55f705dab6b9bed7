"""``python -m toolpacks.packs.isolated._launch``: limit this process, then serve one pack.

The host starts an isolated pack's child as ``PYTHON -m toolpacks.packs.isolated._launch
--limits JSON --pidfile FILE -- serve --pack NAME ...``. Before anything of the pack is
imported, this sets the child's resource limits (``RLIMIT_AS``, ``RLIMIT_NOFILE``, and
``RLIMIT_CORE`` to 0), writes its process id where the host reads it (to stop a call that
overran its timeout), then runs ``python -m toolpacks`` with the arguments after ``--`` in
this same interpreter: limits without a ``preexec_fn`` and without a second interpreter start.
With ``--sandbox JSON`` (``toolpacks.packs.sandbox.Rules``) it then guards its process tree
and restricts itself to the granted paths (and network) before the pack is imported.
"""

from __future__ import annotations

import json
import os
import runpy
import sys
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["apply_limits", "main"]

_MIB = 1024 * 1024


def apply_limits(limits: Mapping[str, Any]) -> list[str]:
    """Set this process's limits from ``limits`` (``memory_mb``, ``open_files``).

    A limit is only ever lowered (never above the current hard limit). Returns what could
    not be set, one message each (a platform without ``resource`` sets none).
    """
    try:
        import resource
    except ImportError:  # not on POSIX: nothing to set
        return ["resource limits are not available on this platform"]
    problems: list[str] = []
    wanted = [(resource.RLIMIT_CORE, 0)]
    if limits.get("memory_mb"):
        wanted.append((resource.RLIMIT_AS, int(limits["memory_mb"]) * _MIB))
    if limits.get("open_files"):
        wanted.append((resource.RLIMIT_NOFILE, int(limits["open_files"])))
    for which, value in wanted:
        try:
            _, hard = resource.getrlimit(which)
            value = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(which, (value, value))
        except (OSError, ValueError) as exc:
            problems.append(f"limit {which} = {value} not set: {exc}")
    return problems


def _split(argv: Sequence[str]) -> tuple[dict[str, Any], str | None, list[str], str | None]:
    """The limits, the pid file, the ``toolpacks`` arguments and the sandbox's rules."""
    limits: dict[str, Any] = {}
    pidfile: str | None = None
    sandbox: str | None = None
    words = list(argv)
    rest: list[str] = []
    while words:
        word = words.pop(0)
        if word == "--":
            rest = words
            break
        if word == "--limits" and words:
            limits = json.loads(words.pop(0))
        elif word == "--pidfile" and words:
            pidfile = words.pop(0)
        elif word == "--sandbox" and words:
            sandbox = words.pop(0)
        else:
            raise SystemExit(f"toolpacks isolated launcher: unexpected argument {word!r}")
    return limits, pidfile, rest, sandbox


def main(argv: Sequence[str] | None = None) -> None:
    """Apply the limits, write the pid file, and run ``toolpacks`` with the rest."""
    limits, pidfile, rest, sandbox = _split(sys.argv[1:] if argv is None else argv)
    for problem in apply_limits(limits):
        print(f"toolpacks isolated launcher: {problem}", file=sys.stderr)
    if pidfile:
        with open(pidfile, "w", encoding="ascii") as out:
            out.write(str(os.getpid()))
    if sandbox:
        from toolpacks.packs.sandbox._exec import sandbox_self
        from toolpacks.packs.sandbox._rules import Rules

        unsafe = sandbox_self(Rules.loads(sandbox))
        if unsafe:
            print(f"toolpacks isolated launcher: {unsafe}", file=sys.stderr)
    sys.argv = ["toolpacks", *rest]
    runpy.run_module("toolpacks", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
