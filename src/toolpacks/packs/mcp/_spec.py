"""How to reach one MCP server: a command to start (stdio) or a URL (streamable HTTP).

``ServerSpec`` is the resolved form of an ``[mcp_servers.NAME]`` table: environment names
copied, header values read from the environment, paths resolved. Nothing here imports the MCP
SDK, so the configuration can be validated without it.
"""

from __future__ import annotations

import ipaddress
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol
from urllib.parse import urlsplit

from toolpacks.filetools._reviewed import Budget, regular_files, verify_files
from toolpacks.packs._trust import fingerprint
from toolpacks.packs.mcp._args import redact_args
from toolpacks.packs.mcp._credential_headers import header_table_problem

__all__ = [
    "ServerSpec",
    "code_fingerprint",
    "launch",
    "resolve_headers",
    "server_code_files",
    "server_environment",
    "shown_url",
    "spec_code_files",
    "transport_problem",
    "unreviewed_code",
]

_STDIO_ONLY = ("args", "env", "cwd")
"""Keys that only mean something for a server started from ``command``."""


class TransportSettings(Protocol):
    """The keys of an ``[mcp_servers.NAME]`` table that choose and shape the transport."""

    @property
    def command(self) -> str | None:
        """The program to start over stdio."""

    @property
    def url(self) -> str | None:
        """The streamable HTTP endpoint."""

    @property
    def headers(self) -> Mapping[str, str | Mapping[str, str]]:
        """HTTP headers; a value may be ``{ env = "VAR" }``."""


def transport_problem(cfg: TransportSettings) -> str | None:
    """Why ``cfg`` cannot be a server table (for the configuration's validation), or None.

    Exactly one of ``command`` and ``url`` is required; ``url`` must be an ``http(s)://`` URL
    with a host; ``headers`` need ``url``; ``args``, ``env`` and ``cwd`` need ``command``; a
    table as a header value must be ``{ env = "VAR" }`` or ``{ credential = "NAME" }``.
    """
    if cfg.command is not None and cfg.url is not None:
        return (
            "set either `command` (a server started over stdio) or `url` (streamable HTTP), "
            "not both"
        )
    if cfg.command is None and cfg.url is None:
        return (
            "set `command` (a server started over stdio, with `args`) or `url` (a server reached "
            'over streamable HTTP, e.g. url = "https://example.com/mcp")'
        )
    if cfg.command is not None:
        if not cfg.command.strip():
            return "`command` is empty"
        if cfg.headers:
            return "`headers` apply to a `url` server; pass a stdio server what it needs in `env`"
        return None
    url = cfg.url or ""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"`url` must be an http:// or https:// URL with a host, got {shown_url(url)!r}"
    used = [key for key in _STDIO_ONLY if getattr(cfg, key, None)]
    if used:
        return f"{', '.join(used)} only apply to a server started from `command`, not to a `url`"
    for name, value in cfg.headers.items():
        problem = header_table_problem(value) if isinstance(value, Mapping) else None
        if problem:
            return f"headers.{name}: {problem}"
    return None


def shown_url(url: str) -> str:
    """``url`` for messages and logs: scheme, host, port and path only (no user, no query)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "<invalid URL>"
    if ":" in host:
        host = f"[{host}]"
    return f"{parts.scheme}://{host}{port}{parts.path}" if parts.scheme else "<invalid URL>"


def _is_loopback(host: str | None) -> bool:
    if host in (None, "localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """How to reach one MCP server: ``command`` (stdio) or ``url`` (streamable HTTP)."""

    name: str
    """The pack name (for messages and logs)."""
    command: str | None = None
    """The program; run directly, never through a shell."""
    args: tuple[str, ...] = ()
    """Its arguments."""
    env: Mapping[str, str] = field(default_factory=dict)
    """The complete environment of the child (see ``server_environment``)."""
    cwd: Path | None = None
    """Its working directory (None: ``base_dir``, see ``launch``)."""
    timeout: float = 30.0
    """Seconds allowed for starting (or connecting), the handshake and listing tools."""
    max_message_bytes: int = 16 * 1024 * 1024
    """The largest message (a result) read from a stdio server; a call answered with a
    longer one fails with an error naming this cap."""
    url: str | None = None
    """The streamable HTTP endpoint (instead of ``command``)."""
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    """HTTP headers sent with every request (values resolved; never shown)."""
    base_dir: Path | None = None
    """The configuration's directory (resolved): relative paths in ``command``, ``args`` and
    ``cwd`` mean files there, and a server without ``cwd`` starts there (None: inherit)."""
    sandbox: str | None = None
    """The sandbox's rules (``toolpacks.packs.sandbox.Rules`` as JSON), or None."""

    def __post_init__(self) -> None:
        if self.base_dir is not None:
            object.__setattr__(self, "base_dir", self.base_dir.resolve())

    @property
    def transport(self) -> Literal["stdio", "http"]:
        """``http`` for a ``url`` server, else ``stdio``."""
        return "http" if self.url is not None else "stdio"

    def describe(self) -> str:
        """``MCP server 'time' (python -m mcp_server_time)``, for messages."""
        if self.url is not None:
            return f"MCP server {self.name!r} ({shown_url(self.url)})"
        shown = " ".join([self.command or "", *redact_args(self.args)])
        if len(shown) > 80:
            shown = shown[:77] + "..."
        return f"MCP server {self.name!r} ({shown})"

    def insecure(self) -> bool:
        """Whether headers would travel unencrypted to another machine (http, not loopback)."""
        if self.url is None or not self.headers:
            return False
        parts = urlsplit(self.url)
        return parts.scheme == "http" and not _is_loopback(parts.hostname)


def server_environment(
    env: Mapping[str, str] | Sequence[str], environ: Mapping[str, str] | None = None
) -> tuple[dict[str, str], list[str]]:
    """The environment a stdio server gets: the SDK's minimal set plus what ``env`` names.

    Args:
        env: Values to set, or names to copy from ``environ``.
        environ: The host environment (``os.environ`` by default).

    Returns:
        The environment, and the names in ``env`` that ``environ`` does not define.
    """
    from mcp.client.stdio import get_default_environment

    source = os.environ if environ is None else environ
    out = dict(get_default_environment())
    missing: list[str] = []
    if isinstance(env, Mapping):
        out.update({str(k): str(v) for k, v in env.items()})
    else:
        for name in env:
            if name in source:
                out[name] = source[name]
            else:
                missing.append(name)
    return out, missing


def resolve_headers(
    headers: Mapping[str, str | Mapping[str, str]], where: str, environ: Mapping[str, str]
) -> dict[str, str]:
    """Header values with ``{ env = "VAR", default = ... }`` read from ``environ``.

    A ``{ credential = ... }`` header is left out: each call sends its principal's own
    (``_per_principal``).

    Raises:
        ValueError: A variable is not set and has no default, or a value holds a line break
            (which would split the HTTP header); the message names the header, never a value.
    """
    out: dict[str, str] = {}
    for name, value in headers.items():
        if isinstance(value, Mapping) and "credential" in value:
            continue
        if isinstance(value, Mapping):
            variable = value["env"]
            if variable in environ:
                value = environ[variable]
            elif "default" in value:
                value = value["default"]
            else:
                raise ValueError(
                    f"{where}.headers.{name}: environment variable {variable!r} is not set "
                    "(and no default is given)"
                )
        if any(ch in value for ch in "\r\n\0") or any(ch in name for ch in "\r\n\0: "):
            raise ValueError(
                f"{where}.headers.{name}: a header name or value holds a line break, NUL or "
                "(in the name) a colon or space"
            )
        out[name] = value
    return out


_PYTHON = re.compile(r"^(?:python|pypy)(?:\d+(?:\.\d+)*)?t?(?:\.exe)?$", re.IGNORECASE)
"""The names of Python interpreters, whose ``-m``/``-c`` runs put the cwd on ``sys.path``."""
_MODULE = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$")
_MAX_CODE_ENTRIES = 10_000
"""Directory entries one server's code walk may visit (see ``server_code_files``)."""


def launch(spec: ServerSpec) -> tuple[str, list[str], dict[str, str], Path | None]:
    """The command, arguments, environment and working directory a stdio server starts with.

    - The working directory is ``cwd`` or else the configuration's directory, never the
      host's own (a cloned repository could shadow the server's modules there).
    - A relative ``command`` holding a path separator, and each argument naming a file
      there, become absolute paths in that directory: the files trust fingerprints.
    - A Python interpreter run with ``-m``, ``-c`` or no script gets ``PYTHONSAFEPATH=1``
      (Python 3.11+), so its working directory is not put first on ``sys.path``; a script's
      own directory stays on it (the script's neighbours are covered by trust).
    """
    where = _where(spec)
    command = spec.command or ""
    if where is not None and _has_separator(command) and not os.path.isabs(command):
        command = str(where / command)
    args = list(spec.args)
    if where is not None:
        args = _absolute_args(args, where)
    env = dict(spec.env)
    if _python_without_script(spec.command or "", spec.args) and "PYTHONSAFEPATH" not in env:
        env["PYTHONSAFEPATH"] = "1"
    if spec.sandbox:  # through the sandbox's launcher; the files it names stay readable
        from toolpacks.packs.sandbox import Rules

        rules = Rules.loads(spec.sandbox)
        rules.read += [a for a in args if os.path.isabs(a) and os.path.isfile(a)]
        wrap = ["-P", "-m", "toolpacks.packs.sandbox._exec", "--rules", rules.dumps()]
        wrap += ["--", command]
        args, command = [*wrap, *args], sys.executable
    return command, args, env, where


def sandbox_rules(cfg: object) -> str | None:
    """The sandbox's rules (JSON) of a server table with ``sandbox = true``, else None."""
    if not getattr(cfg, "sandbox", False):
        return None
    from toolpacks.packs.sandbox import Rules, available

    network = bool(getattr(cfg, "network", True))
    read, write = list(getattr(cfg, "read", ())), list(getattr(cfg, "write", ()))
    rules = Rules(read=read, write=write, network=network, mode="required")
    rules.unavailable = available(network)
    return rules.dumps()


def _where(spec: ServerSpec) -> Path | None:
    if spec.cwd is not None:
        cwd = spec.cwd if spec.base_dir is None else spec.base_dir / spec.cwd
        return Path(os.path.abspath(cwd))
    return spec.base_dir


def _has_separator(word: str) -> bool:
    return os.sep in word or (os.altsep is not None and os.altsep in word)


def _absolute_args(args: list[str], where: Path) -> list[str]:
    out: list[str] = []
    after_flag = False
    for word in args:
        named = not after_flag and word and not word.startswith("-") and not os.path.isabs(word)
        out.append(str(where / word) if named and _is_regular(where / word) else word)
        after_flag = word in ("-m", "-c")  # a module name or code, never a file
    return out


def _python_without_script(command: str, args: Sequence[str]) -> bool:
    """Whether ``command args`` runs Python on ``-m``, ``-c`` or stdin (not a script file)."""
    if not _PYTHON.match(os.path.basename(command)):
        return False
    words = iter(args)
    for word in words:
        if word == "-":
            return True
        if word == "--":
            return next(words, None) is None
        if word == "--check-hash-based-pycs":
            next(words, None)
            continue
        if word.startswith("--"):
            continue
        if not word.startswith("-"):
            return False  # a script
        flags = word[1:]
        for index, flag in enumerate(flags):
            if flag in "mc":
                return True
            if flag in "WX":
                if index == len(flags) - 1:
                    next(words, None)
                break
    return True  # no script: Python reads its program from stdin


def _is_regular(path: Path) -> bool:
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def server_code_files(
    command: str | None,
    args: Sequence[str],
    cwd: str | Path | None,
    env: Mapping[str, str],
    base: Path,
    budget: Budget | None = None,
) -> set[Path]:
    """The files of code a stdio server runs from inside the configuration's directory.

    - each file ``command`` or an argument names there (a link's target too, wherever it
      leads: the link is in the directory, so what it leads to is reviewed code);
    - for a Python script, the modules beside it (its directory is first on its ``sys.path``):
      ``*.py`` there and packages (folders with ``__init__.py``) under it;
    - for ``-m module``, the module found in the working directory or a ``PYTHONPATH`` entry
      inside the configuration's directory, with the modules beside it.

    Programs and modules outside the directory (``python``, installed servers) are what the
    user installed, and not covered. Only regular files are listed, and at most
    ``_MAX_CODE_ENTRIES`` directory entries are visited (or what ``budget`` allows).

    Args:
        command: The program.
        args: Its arguments.
        cwd: Its configured working directory (relative to ``base``), if any.
        env: The variables it gets (``PYTHONPATH`` is read).
        base: The configuration's directory.
        budget: Entries the walks may still visit (shared by a whole trust check).
    """
    base = base.resolve()
    budget = budget if budget is not None else Budget(_MAX_CODE_ENTRIES)
    where = (base / cwd).resolve() if cwd else base
    found: set[Path] = set()
    for word in (command or "", *args):
        if not word or word.startswith("-"):
            continue
        real = _local_file(where / word, base)
        if real is None:
            continue
        found.add(real)
        if real.suffix == ".py":
            found.update(_python_dir(real.parent, budget))
    module = _module_argument(args)
    if module is not None:
        found.update(_module_files(module, where, env, base, budget))
    return found


def _local_file(path: Path, base: Path) -> Path | None:
    """The real file ``path`` names, when ``path`` itself (a file or a link) is in ``base``."""
    try:
        location = path.parent.resolve() / path.name
        if path.name in ("", ".", "..") or not location.is_relative_to(base):
            return None
        return location.resolve() if _is_regular(location) else None
    except (OSError, ValueError, RuntimeError):
        return None


def _python_dir(folder: Path, budget: Budget) -> set[Path]:
    """``*.py`` directly in ``folder``, and every ``*.py`` of the packages in it."""
    found: set[Path] = set()
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return found
    for entry in entries:
        if not budget.take():
            break
        path = Path(entry.path)
        try:
            if entry.name.endswith(".py") and entry.is_file():
                found.add(path.resolve())
            elif entry.is_dir(follow_symlinks=False) and (path / "__init__.py").is_file():
                found.update(p.resolve() for p in regular_files(path, budget, suffix=".py"))
        except OSError:
            continue
    return found


def _module_argument(args: Sequence[str]) -> str | None:
    for index, word in enumerate(args):
        name = args[index + 1] if word == "-m" and index + 1 < len(args) else None
        if name is None and word.startswith("-m") and len(word) > 2:
            name = word[2:]
        if name is not None and _MODULE.match(name):
            return name
    return None


def _module_files(
    module: str, where: Path, env: Mapping[str, str], base: Path, budget: Budget
) -> set[Path]:
    """The module's code when it is found in a directory inside ``base`` the child searches."""
    top = module.split(".")[0]
    searched = [where]
    searched += [where / entry for entry in env.get("PYTHONPATH", "").split(os.pathsep) if entry]
    found: set[Path] = set()
    for folder in searched:
        try:
            folder = folder.resolve()
            if not folder.is_relative_to(base):
                continue
            package = folder / top
            if package.is_dir():
                found.update(p.resolve() for p in regular_files(package, budget, suffix=".py"))
            elif not (folder / f"{top}.py").is_file():
                continue
        except (OSError, RuntimeError):
            continue
        found.update(_python_dir(folder, budget))
    return found


def spec_code_files(spec: ServerSpec) -> set[Path]:
    """``server_code_files`` of a stdio spec (its ``base_dir``, else where it starts)."""
    base = spec.base_dir or _where(spec) or Path.cwd()
    return server_code_files(spec.command, spec.args, spec.cwd, spec.env, base)


def unreviewed_code(spec: ServerSpec) -> str | None:
    """Why ``spec``'s code may not start: a file differs from what trust reviewed (or None).

    Checked just before the server starts, so a file swapped after the host's trust check
    is refused; the file can still change between this check and the child reading it.
    """
    if spec.url is not None:
        return None
    return verify_files(sorted(spec_code_files(spec)))


def code_fingerprint(spec: ServerSpec, base_dir: Path) -> str:
    """A fingerprint of the code ``spec`` runs from inside ``base_dir`` (``server_code_files``).

    This is the code that trusting a configuration covers; a restart compares the fingerprint
    with the one taken at the first start, so a crashed server is never restarted from code
    that changed since (``Host.reload()`` starts the new code).
    """
    base = base_dir.resolve()
    files = server_code_files(spec.command, spec.args, spec.cwd, spec.env, base)
    return fingerprint("", files, base)
