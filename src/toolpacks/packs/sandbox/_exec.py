"""``python -m toolpacks.packs.sandbox._exec --rules JSON -- COMMAND ARGS``: sandbox, then exec.

The launcher of a stdio MCP server with ``sandbox = true``: it guards the process tree,
applies the rules (the command's own directory is readable) and replaces itself with the
command, which keeps the restrictions. When the sandbox cannot be applied and the rules'
mode is ``required``, it exits with status 126 and says why on stderr.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import sys
from collections.abc import Sequence
from typing import NoReturn

from toolpacks.packs.sandbox._landlock import LandlockError
from toolpacks.packs.sandbox._rules import Rules, apply
from toolpacks.packs.sandbox._tree import _die_with_parent, _libc, guard_tree, kill_descendants

__all__ = ["main", "sandbox_self"]

_TREE = "process-tree guard: "


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
    problem = None if tree == "pid namespace" else f"{_TREE}{tree}"
    try:
        apply(rules, extra_read)
    except LandlockError as exc:
        if rules.mode == "required":
            print(f"toolpacks sandbox: required but not applied: {exc}", file=sys.stderr)
            os._exit(126)
        return f"sandbox not applied: {exc}"
    return problem


def _run_below(program: str, command: list[str]) -> NoReturn:
    """Run the command as a child and stay its subreaper: orphans end when it exits.

    ``exec`` would drop the ``atexit`` that ends them; the child dies with this process
    (``PR_SET_PDEATHSIG``), and the signals the host sends to stop it are passed on.
    """
    pid = os.fork()
    if pid == 0:  # pragma: no cover - replaced by the command
        _die_with_parent(_libc())
        os.execv(program, command)

    def pass_on(number: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):  # it may have exited already
            os.kill(pid, number)

    for stop in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(stop, pass_on)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    kill_descendants()
    code = os.waitstatus_to_exitcode(status)
    os._exit(code if code >= 0 else 128 - code)


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
    if problem == f"{_TREE}subreaper":
        _run_below(program, command)
    os.execv(program, command)


if __name__ == "__main__":
    main()
