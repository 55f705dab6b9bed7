"""The child process of one isolated pack: its private directory, environment and command.

Each mounted isolated pack gets a private directory (``0700``, removed when the pack is
closed) holding the child's working directory, ``HOME`` and ``TMPDIR`` and the file the
launcher writes its process id to. Its settings (secrets among them) reach it in one variable
of its environment (``SETTINGS_VAR``, with the values the child masks in its manifest), which
the child removes before the pack is imported: they are never written to a file, unless they
are too large for a variable (``ENV_LIMIT``), when a ``0600`` file in that directory holds
them. The child's environment is minimal: ``PATH``
(the interpreter's directory and the system's), ``LANG``, ``HOME`` and ``TMPDIR`` pointing
into that directory, ``PYTHONSAFEPATH``, fixed ``TERM``, ``SHELL``, ``USER`` and ``LOGNAME``
(the MCP SDK's stdio client would copy the host's), and what the pack's ``env`` names;
nothing else of the host's environment, so a secret reaches a pack only when its settings or
``env`` pass it.

The host stops a child by its process id (a call past its timeout or its CPU seconds), after
checking that the id is a session leader whose parent is this process: the launcher's pid file
is in a directory the child can write, so what it says is verified before anything is killed.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import Any

from toolpacks.core._secrets import MIN_ENCODED_LEN, is_secret_key, is_secret_value
from toolpacks.packs.isolated._settings import IsolationLimits

__all__ = [
    "ENV_LIMIT",
    "SETTINGS_VAR",
    "Runtime",
    "child_command",
    "child_environment",
    "cpu_seconds",
    "kill",
    "pass_settings",
    "received_settings",
]

_SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
SETTINGS_VAR = "TOOLPACKS_PACK_SETTINGS"
"""The variable holding a child's settings: JSON ``{"settings": ..., "secrets": [...]}``, or
``@`` and the path of a file holding it."""
ENV_LIMIT = 96 * 1024
"""Bytes of settings passed in the variable (Linux refuses one string over 128 KiB)."""


class Runtime:
    """The private directory of one isolated pack's child (made now, removed by ``close``)."""

    def __init__(self, name: str) -> None:
        self.root = Path(tempfile.mkdtemp(prefix=f"toolpacks-{name}-"))
        """The directory itself (``0700``)."""
        self.work = self.root / "work"
        """The child's working directory and ``HOME``."""
        self.tmp = self.root / "tmp"
        """The child's ``TMPDIR``."""
        self.pidfile = self.root / "pid"
        """Where the launcher writes the child's process id."""
        self.settings = self.root / "settings.json"
        """Where the pack's settings are written when too large for a variable (else never)."""
        for folder in (self.work, self.tmp):
            folder.mkdir(mode=0o700)

    def write_settings(self, text: str) -> None:
        """Write the pack's settings for the child (``0600``)."""
        fd = os.open(self.settings, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)

    def pid(self) -> int | None:
        """The running child's process id, if the pid file names one that is ours."""
        try:
            pid = int(self.pidfile.read_text(encoding="ascii").strip())
        except (OSError, ValueError):
            return None
        return pid if pid > 1 and _ours(pid) else None

    def close(self) -> None:
        """Remove the directory and everything in it."""
        shutil.rmtree(self.root, ignore_errors=True)


def _ours(pid: int) -> bool:
    """Whether ``pid`` leads its own session and is a child of this process."""
    try:
        if os.getsid(pid) != pid:
            return False
    except (OSError, AttributeError):
        return False
    stat = _stat(pid)
    if stat is None:
        return sys.platform != "linux"  # no /proc: the session check is what can be made
    return int(stat[1]) == os.getpid()


def _stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command name (state first), or None."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    return raw[raw.rfind(")") + 2 :].split()


def cpu_seconds(pid: int) -> float | None:
    """CPU seconds (user and system) ``pid`` and its children used, or None.

    Its live descendants count too (a sandboxed child runs the pack in a process below it),
    each with the children it has reaped: the total only grows while the tree runs, so the
    CPU of threads, grandchildren and awaited subprocesses is seen, and a process reaped
    during a call adds no CPU it used before the call.
    """
    stat = _stat(pid)
    if stat is None:
        return None
    from toolpacks.packs.sandbox._tree import descendants

    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    # utime, stime, cutime, cstime are fields 14-17 of the file: 11-14 after the name.
    used = sum(int(value) for value in stat[11:15])
    for below in descendants(pid):
        more = _stat(below)
        used += sum(int(value) for value in more[11:15]) if more else 0
    return used / ticks


def kill(pid: int) -> None:
    """Stop the child's whole process group at once (SIGKILL: a stuck tool cannot refuse)."""
    with contextlib.suppress(ProcessLookupError, PermissionError, AttributeError):
        os.killpg(pid, signal.SIGKILL)


def child_environment(
    limits: IsolationLimits,
    interpreter: str,
    runtime: Runtime,
    environ: Mapping[str, str],
) -> tuple[dict[str, str], list[str]]:
    """The child's complete environment, and the names in ``env`` the host does not define."""
    folder = os.path.dirname(interpreter)
    env = {
        "PATH": f"{folder}{os.pathsep}{_SYSTEM_PATH}" if folder else _SYSTEM_PATH,
        "LANG": "C.UTF-8",
        "HOME": str(runtime.work),
        "TMPDIR": str(runtime.tmp),
        "PYTHONSAFEPATH": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        # The MCP SDK's stdio client adds the host's values of these unless they are given.
        "TERM": "dumb",
        "SHELL": "/bin/sh",
        **dict.fromkeys(("USER", "LOGNAME"), _account()),
    }
    missing: list[str] = []
    if isinstance(limits.env, Mapping):
        env.update({str(k): str(v) for k, v in limits.env.items()})
    else:
        for name in limits.env:
            if name in environ:
                env[name] = environ[name]
            else:
                missing.append(name)
    return env, missing


def pass_settings(
    runtime: Runtime, env: dict[str, str], settings: Mapping[str, Any], secrets: Sequence[str]
) -> list[str]:
    """Add the variable carrying ``settings`` to the child's ``env``; the secrets it masks.

    Those are ``secrets`` and the secret-looking values of ``env``, each of
    ``MIN_ENCODED_LEN`` characters or more. Settings too large for a variable (``ENV_LIMIT``)
    are written to ``runtime.settings`` (``0600``) and the variable names that file.
    """
    shown = [v for k, v in env.items() if is_secret_key(k) or is_secret_value(v)]
    hidden = list(dict.fromkeys(s for s in [*secrets, *shown] if len(s) >= MIN_ENCODED_LEN))
    text = json.dumps({"settings": dict(settings), "secrets": hidden}, default=str)
    if len(text.encode()) <= ENV_LIMIT:
        env[SETTINGS_VAR] = text
    else:
        runtime.write_settings(text)
        env[SETTINGS_VAR] = "@" + str(runtime.settings)
    return hidden


def received_settings(environ: MutableMapping[str, str]) -> tuple[dict[str, Any], list[str]] | None:
    """In the child: the settings and secrets ``pass_settings`` sent, taken out of ``environ``.

    None when the host passed none (``toolpacks serve --pack`` run by hand).
    """
    text = environ.pop(SETTINGS_VAR, None)
    if text is None:
        return None
    if text.startswith("@"):
        text = Path(text[1:]).read_text(encoding="utf-8")
    data = json.loads(text)
    return dict(data["settings"]), [str(s) for s in data["secrets"]]


def _account() -> str:
    """This user's login name from the password database (never the host's ``USER``)."""
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_name
    except (ImportError, KeyError):
        return "toolpacks"


def child_command(
    interpreter: str,
    pack: str,
    limits: IsolationLimits,
    runtime: Runtime,
    manifest: Path,
    path: Sequence[str] | None = None,
) -> list[str]:
    """The child's arguments after the interpreter: the launcher, then ``serve --pack``."""
    shown = json.dumps({"memory_mb": limits.memory_mb, "open_files": limits.open_files})
    args = ["-m", "toolpacks.packs.isolated._launch", "--limits", shown]
    if limits.sandbox != "off":
        from toolpacks.packs._statefiles import private_dir
        from toolpacks.packs.sandbox import Rules, available

        private_dir(manifest.parent)  # made now: a grant names a directory that exists
        given = [str(runtime.settings)] if runtime.settings.exists() else []
        read = [*given, *(path or ()), *limits.read]
        write = [str(runtime.work), str(runtime.tmp), str(manifest.parent), *limits.write]
        rules = Rules(read=read, write=write, network=limits.network, mode=limits.sandbox)
        rules.unavailable = available(limits.network)
        args += ["--sandbox", rules.dumps()]
    args += ["--pidfile", str(runtime.pidfile), "--", "serve", "--pack", pack]
    args += ["--manifest", str(manifest)]
    for entry in path or ():
        args += ["--path", entry]
    return args
