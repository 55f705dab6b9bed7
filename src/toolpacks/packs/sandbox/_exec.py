"""``python -m toolpacks.packs.sandbox._exec --rules JSON -- COMMAND ARGS``: sandbox, then exec.

The launcher of a stdio MCP server with ``sandbox = true``: it guards the process tree,
applies the rules (the command's own directory is readable) and replaces itself with the
command, which keeps the restrictions. When the sandbox cannot be applied and the rules'
mode is ``required``, it exits with status 126 and says why on stderr.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
from collections.abc import Sequence

from toolpacks.packs.sandbox._landlock import LandlockError
from toolpacks.packs.sandbox._rules import Rules, apply
from toolpacks.packs.sandbox._tree import guard_tree, kill_descendants

__all__ = ["main", "sandbox_self"]


def sandbox_self(rules: Rules, extra_read: Sequence[str] = ()) -> str | None:
    """Guard the tree and apply ``rules`` to this process; None, or what was not applied.

    Exits (status 126) when the mode is ``required`` and the sandbox cannot be applied.
    """
    if rules.mode == "off":
        return None
    if rules.unavailable:
        if rules.mode == "required":
            print(f"toolpacks sandbox: required but {rules.unavailable}", file=sys.stderr)
            os._exit(126)
        return f"running without a sandbox: {rules.unavailable}"
    tree = guard_tree()
    if tree == "subreaper":  # orphans stay below this process: end them when it exits
        atexit.register(kill_descendants)
    problem = None if tree == "pid namespace" else f"process-tree guard: {tree}"
    try:
        apply(rules, extra_read)
    except LandlockError as exc:
        if rules.mode == "required":
            print(f"toolpacks sandbox: required but not applied: {exc}", file=sys.stderr)
            os._exit(126)
        return f"sandbox not applied: {exc}"
    return problem


def main(argv: Sequence[str] | None = None) -> None:
    """Apply the rules after ``--rules``, then exec the command after ``--``."""
    words = list(sys.argv[1:] if argv is None else argv)
    if len(words) < 4 or words[0] != "--rules" or words[2] != "--":
        raise SystemExit("usage: python -m toolpacks.packs.sandbox._exec --rules JSON -- CMD")
    rules, command = Rules.loads(words[1]), words[3:]
    program = shutil.which(command[0]) or command[0]
    folders = [os.path.dirname(os.path.realpath(program))]
    venv = os.path.dirname(os.path.dirname(os.path.abspath(program)))
    if os.path.isfile(os.path.join(venv, "pyvenv.cfg")):  # a virtual environment's program
        folders.append(venv)
    problem = sandbox_self(rules, [*folders, os.path.realpath(program)])
    if problem:
        print(f"toolpacks sandbox: {problem}", file=sys.stderr)
    os.execv(program, command)


if __name__ == "__main__":
    main()
