"""Isolated packs mounted in the host: a child process per pack, spoken to over MCP stdio.

An isolated pack is the MCP client pack source (``packs.mcp``) pointed at ``toolpacks serve
--pack NAME`` run by the pack's own interpreter, so every guarantee of a mounted server holds
unchanged (the host's one gate, approvals, pinning, result caps). What isolation adds:

- **Lazy start.** The tools are built from the manifest the child wrote the last time it
  started (``_manifest``), with the same exposed names, tags, hints, descriptions, timeouts
  and output schemas as in-process; the child starts at the first call. Without a manifest
  the child is started when the pack loads, to list its tools.
- **Failures stay in the pack.** A child that cannot start (it exits, loops or runs out of
  memory at import) makes each call of its tools an error result saying why, and is tried
  again after a delay that doubles (``restart_delay``); one that crashes later is restarted
  by the connection with the same backoff.
- **Stopped, not abandoned.** A call that overruns its tool's timeout, is cancelled, or uses
  more than ``cpu_seconds`` of CPU kills the child (its whole process group), which starts
  again at a later call: a stuck sync tool is really stopped.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast

from toolpacks.core import _logscrub
from toolpacks.core._context import ToolContext
from toolpacks.core._secrets import secret_values
from toolpacks.core._tool import Tool
from toolpacks.exceptions import PackError, ToolError
from toolpacks.packs._record import LoadedPack, PackInfo
from toolpacks.packs._statefiles import cache_dir
from toolpacks.packs.isolated._child import (
    Runtime,
    child_command,
    child_environment,
    kill,
    pass_settings,
)
from toolpacks.packs.isolated._manifest import (
    Manifest,
    ToolRecord,
    manifest_key,
    masked,
    read_manifest,
)
from toolpacks.packs.isolated._settings import IsolationLimits
from toolpacks.packs.isolated._supervise import await_restart, watched
from toolpacks.packs.isolated._workdirs import forget, track
from toolpacks.packs.mcp._approval import AskApproval, CallTag
from toolpacks.packs.mcp._client import _call_remote, _definition, _Mount
from toolpacks.packs.mcp._connection import McpConnection, ServerGoneError, restart_delay
from toolpacks.packs.mcp._results import result_value
from toolpacks.packs.mcp._spec import ServerSpec

if TYPE_CHECKING:
    import mcp_types

__all__ = ["IsolatedSource", "isolation_report", "load_isolated_pack"]

logger = logging.getLogger("toolpacks.isolated")

_CONTEXT = "_toolpacks_context"
_UNTYPED = inspect.Signature(
    [
        inspect.Parameter(
            _CONTEXT, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=ToolContext
        ),
        inspect.Parameter("arguments", inspect.Parameter.VAR_KEYWORD),
    ]
)
_KILL_NOTICED = 10.0
"""Seconds a call waits for the connection to notice a child the host killed."""


@dataclass(frozen=True, slots=True)
class IsolatedSource:
    """How the host runs one isolated pack (a ``PackSource``'s ``extra``)."""

    name: str
    """The pack name."""
    limits: IsolationLimits = field(default_factory=IsolationLimits)
    """Its limits and environment."""
    requirement: str | None = None
    """What its own environment installs (None: the host's environment, ``isolate = true``)."""
    path: tuple[str, ...] | None = None
    """Where the host discovers packs (its ``path``), passed on to a child of its own
    environment."""
    version: str | None = None
    """The installed distribution's version (host environment), part of the manifest key."""

    def loader(
        self, settings: Mapping[str, Any], secrets: Sequence[str] = ()
    ) -> Callable[..., LoadedPack]:
        """``load_isolated_pack`` with the pack's resolved settings and their secret values.

        It is called as the host calls its MCP loader: ``info, source, base_dir, environ, ask``.
        ``secrets`` are the values the host counts as secret (read from the environment);
        those under secret-looking keys are found in ``settings`` too.
        """
        return partial(load_isolated_pack, settings=settings, secrets=tuple(secrets))


def load_isolated_pack(
    info: PackInfo,
    source: IsolatedSource,
    base_dir: Path,
    environ: Mapping[str, str] | None = None,
    ask: AskApproval | None = None,
    *,
    settings: Mapping[str, Any] | None = None,
    secrets: Sequence[str] = (),
) -> LoadedPack:
    """Mount an isolated pack: its tools from its manifest, its child started on first call.

    Never raises: an environment that cannot be built, or a child that cannot list its
    tools when there is no manifest, gives a ``failed`` pack whose error says why.
    """
    import os

    started = time.perf_counter()
    environ = os.environ if environ is None else environ
    settings = dict(settings or {})
    secrets = list(dict.fromkeys([*secrets, *secret_values(settings)]))

    def failed(error: str) -> LoadedPack:
        logger.warning("%s failed to load: %s", info.describe(), error)
        return LoadedPack(replace(info, status="failed", error=error))

    interpreter = sys.executable
    held = None
    if source.requirement is not None:
        from toolpacks.packs.isolated._env import ensure_env, hold

        try:
            env = ensure_env(source.requirement, base_dir, environ)
        except PackError as exc:
            return failed(str(exc))
        interpreter = str(env.python)
        held = hold(env)  # `toolpacks gc` leaves it alone while this pack is mounted
    key = manifest_key(info.name, interpreter, settings, source.version or "", secrets=secrets)
    manifest = cache_dir(environ) / "isolated" / "manifests" / key
    mount = IsolatedMount(info, source, interpreter, settings, manifest, environ, ask, secrets)
    mount.held = held
    try:
        pack = mount.load(started)
    except PackError as exc:
        mount.close()
        return failed(mount.scrub(str(exc)))
    return pack


@dataclass(frozen=True, slots=True)
class _Cfg:
    """The parts of a server table the MCP mount reads (an isolated pack has no such table)."""

    timeout: float
    headers: Mapping[str, str | Mapping[str, str]] = field(default_factory=dict)
    require_approval: bool = False
    tags: Sequence[str] = ()
    command: str | None = None
    url: str | None = None
    args: Sequence[str] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    max_message_bytes: int = 16 * 1024 * 1024


class IsolatedMount(_Mount):
    """One isolated pack: its child's connection, started lazily, and the pack it feeds."""

    def __init__(
        self,
        info: PackInfo,
        source: IsolatedSource,
        interpreter: str,
        settings: Mapping[str, Any],
        manifest: Path,
        environ: Mapping[str, str],
        ask: AskApproval | None,
        secrets: Sequence[str] = (),
    ) -> None:
        self.runtime = Runtime(info.name)
        self.source = source
        self.interpreter = interpreter
        self.manifest_path = manifest
        self.limits = source.limits
        env, missing = child_environment(source.limits, interpreter, self.runtime, environ)
        self.masking = pass_settings(self.runtime, env, settings, secrets)
        """The secrets the child masks in its manifest."""
        args = child_command(
            interpreter, info.name, source.limits, self.runtime, manifest, source.path
        )
        spec = ServerSpec(
            name=info.name,
            command=interpreter,
            args=tuple(args),
            env=env,
            cwd=self.runtime.work,
            timeout=source.limits.timeout,
        )
        super().__init__(info, _Cfg(timeout=source.limits.timeout), spec, self.runtime.root, ask)
        self.secrets = list(dict.fromkeys([*self.secrets, *self.masking]))
        _logscrub.remember(self, self.secrets)  # the settings' secrets are the pack's too
        self.connection.relays_credentials = True  # our own child: calls' credentials go along
        self.problems = [
            f"environment variable {name!r} listed in the env of isolated pack "
            f"{info.name!r} is not set; the pack runs without it"
            for name in missing
        ]
        self.records: dict[str, ToolRecord] = {}
        self.held: IO[bytes] | None = None
        """The shared lock on the pack's environment, released at ``close``."""
        self.up = False
        """Whether the child was started (a later crash is the connection's to handle)."""
        self.start_failures = 0
        self.retry_at: float | None = None
        self.start_error: str | None = None
        self._start_lock = threading.Lock()
        self.killed = False
        """Whether the host killed the child (its restart is not delayed)."""
        self.code = None  # its code is an installed distribution, not the configuration's
        track(self.runtime.root, self.close)  # removed at exit even without close()

    def may_restart(self) -> str | None:
        """Always: an isolated pack's code is installed, not reviewed from the configuration."""
        return None

    # -- loading ------------------------------------------------------------------------------

    def load(self, started: float) -> LoadedPack:
        """The pack: from the manifest when there is one, else by starting the child now.

        Raises:
            PackError: There is no manifest and the child could not list its tools.
        """
        found = read_manifest(self.manifest_path, self.info.name)
        if found is None or found.masked:  # masked: its definitions are not the child's own
            self._start()
            found = read_manifest(self.manifest_path, self.info.name)
            if found is None:
                raise PackError(
                    f"isolated pack {self.info.name!r} started but wrote no manifest of its tools"
                )
        self._remember(found)
        if self.up:  # as the child lists them (a manifest may mask what they quote)
            remote = list(self.connection.tools.values())
        else:
            remote = [_mcp_tool(r.mcp) for r in found.tools]
            self.connection.tools = {t.name: t for t in remote}
        info = replace(self.info, distribution=found.distribution, version=found.version)
        self.info = info
        pack = self.mounted(remote, list(self.problems), time.perf_counter() - started)
        pack.closer = self.close
        return pack

    def _remember(self, manifest: Manifest) -> None:
        self.records = {r.mcp["name"]: r for r in manifest.tools}

    def _build(self, remote: list[mcp_types.Tool]) -> tuple[dict[str, Tool], list[str]]:
        """The pack's tools for ``remote``, shaped by the manifest's in-process records."""
        if self.up:  # the child rewrote its manifest as it started: it may say more now
            found = read_manifest(self.manifest_path, self.info.name)
            if found is not None:
                self._remember(found)
        approving = frozenset(n for n, r in self.records.items() if r.require_approval)
        self.gate = type(self.gate)(names=approving)
        tools: dict[str, Tool] = {}
        problems: list[str] = []
        for definition in remote:
            named = masked(definition.name, self.masking)  # as the manifest records it
            record = self.records.get(named, ToolRecord(mcp={"name": definition.name}))
            try:
                t = _isolated_tool(self, definition, record)
            except Exception as exc:  # a definition toolpacks cannot accept: that tool only
                problems.append(f"tool {definition.name!r} was skipped: {exc}")
                continue
            t.pack = self.info.name
            tools[f"{self.info.name}.{t.name}"] = t
        return tools, problems

    # -- the child ----------------------------------------------------------------------------

    def _new_connection(self) -> McpConnection:
        connection = McpConnection(
            self.spec,
            on_lost=self.on_lost,
            on_tools=self.on_tools,
            elicit=self.elicit,
            may_restart=self.may_restart,
            scrub=self.scrub,
        )
        connection.relays_credentials = True  # our own child: a call's credentials go along
        return connection

    def _start(self) -> None:
        """Start the child now (blocking); a failure is remembered for the backoff.

        Raises:
            PackError: It could not be started, or may not be tried again yet.
        """
        with self._start_lock:
            if self.up:
                return
            if self.retry_at is not None and time.monotonic() < self.retry_at:
                wait = self.retry_at - time.monotonic()
                raise PackError(f"{self.start_error}; it is tried again in {wait:.1f} s")
            known = dict(self.connection.tools)
            try:
                self.connection.start()
            except PackError as exc:
                self.start_failures += 1
                self.retry_at = time.monotonic() + restart_delay(self.start_failures)
                self.start_error = self.scrub(f"isolated pack {self.info.name!r}: {exc}")
                self.connection = self._new_connection()
                self.connection.tools = known
                raise PackError(self.start_error) from None
            self.up = True
            self.start_failures = 0
            self.retry_at = None

    async def started(self, budget: float) -> McpConnection:
        """The connection, the child started first if it is not yet.

        A call made while a crashed child waits for its restart (the backoff) waits for it
        when it is due within ``budget`` seconds (the call's own timeout).

        Raises:
            ToolError: The child could not be started (the reason, and when it is retried),
                or its restart is due later than ``budget``.
        """
        if not self.up:
            try:
                await asyncio.to_thread(self._start)
            except PackError as exc:
                raise ToolError(str(exc)) from None
        if self.killed:
            await self._after_kill()
        await await_restart(self.info.name, self.connection, budget)
        return self.connection

    async def _after_kill(self) -> None:
        """Once the connection saw the child we killed go, let it start again at once.

        A kill is the host's doing, not a crash, so it does not count toward the backoff.
        """
        connection = self.connection
        deadline = time.monotonic() + _KILL_NOTICED
        while connection.lost_reason is None and time.monotonic() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.02)  # the connection sets no event we could wait on
        if connection.lost_reason is not None:
            with connection._lock:
                connection.failures = max(0, connection.failures - 1)
                connection.retry_at = None
        self.killed = False

    def stop_child(self, why: str) -> None:
        """Kill the child's process group (it starts again at a later call)."""
        pid = self.runtime.pid()
        if pid is None:
            return
        logger.warning("isolated pack %r: stopping its process (%s)", self.info.name, why)
        self.killed = True
        kill(pid)

    def close(self) -> None:
        """Stop the child, remove its private directory and release its environment."""
        self.connection.close()
        self.runtime.close()
        forget(self.runtime.root)
        if self.held is not None:
            self.held.close()
            self.held = None


def _mcp_tool(definition: Mapping[str, Any]) -> mcp_types.Tool:
    import mcp_types

    return mcp_types.Tool.model_validate(dict(definition))


class _IsolatedCall:
    """The function behind an isolated tool: start the child if needed, call, watch it."""

    __signature__ = _UNTYPED

    def __init__(self, mount: IsolatedMount, remote: mcp_types.Tool, record: ToolRecord) -> None:
        self.mount = mount
        self.remote_name = remote.name
        self.definition = _definition(remote)
        self.record = record
        self.__name__ = remote.name
        self.__qualname__ = f"isolated:{mount.info.name}.{remote.name}"

    def check(self) -> None:
        """Refuse a call to a tool the child does not list as this toolset knows it."""
        pack, name = self.mount.info.name, self.remote_name
        current = self.mount.connection.tools.get(name)
        if current is None or _definition(current) != self.definition:
            raise ToolError(
                f"The isolated pack '{pack}' no longer offers the tool '{name}' as this "
                "toolset knows it (the pack changed since its manifest was written). Build "
                "the toolset again for its current tools."
            )

    async def __call__(self, **arguments: Any) -> Any:
        context = arguments.pop(_CONTEXT, None)
        mount = self.mount
        pack = mount.info.name
        connection = await mount.started(self.record.timeout or mount.limits.timeout)
        tag = CallTag(pack, self.remote_name, f"{pack}.{self.remote_name}", arguments, context)
        remote = _call_remote(connection, cast(Any, self), arguments, tag)
        call = asyncio.ensure_future(remote)
        try:
            result = await watched(call, mount)
        except asyncio.CancelledError:
            if not call.done():
                call.cancel()
                mount.stop_child(f"a call of {self.remote_name!r} timed out or was cancelled")
            raise
        except ServerGoneError as exc:
            raise ToolError(f"isolated pack '{pack}': {exc}") from None
        return self._unwrapped(result_value(result))

    def _unwrapped(self, value: Any) -> Any:
        from toolpacks.export._mcp import wraps_output

        schema = self.record.output_schema
        if wraps_output(schema) and isinstance(value, dict) and set(value) == {"result"}:
            return value["result"]
        return value


def _isolated_tool(mount: IsolatedMount, remote: mcp_types.Tool, record: ToolRecord) -> Tool:
    hints = remote.annotations
    title = remote.title or (hints.title if hints is not None else None)
    call = _IsolatedCall(mount, remote, record)
    t = Tool(
        call,
        name=remote.name,
        description=remote.description or title or remote.name,
        input_schema=remote.input_schema,
        tags=record.tags,
        title=title,
        read_only=hints.read_only_hint if hints is not None else None,
        destructive=hints.destructive_hint if hints is not None else None,
        idempotent=hints.idempotent_hint if hints is not None else None,
        open_world=hints.open_world_hint if hints is not None else None,
        timeout=record.timeout,
        require_approval=record.require_approval,
        validate_output=False,  # the MCP client checks structured content already
        credentials=record.credentials,  # resolved by the host, relayed with each call
        scopes=record.scopes,  # refused in the host first; the child checks them again
    )
    if record.output_schema is not None:
        t._output_schema = dict(record.output_schema)
    return t


def isolation_report(loaded: LoadedPack) -> str | None:
    """What ``toolpacks doctor`` says of an isolated pack (None for any other pack).

    Its environment, interpreter, state and limits.
    """
    mount = getattr(loaded.closer, "__self__", None)
    if not isinstance(mount, IsolatedMount):
        return None
    source = mount.source
    where = (
        f"its own environment ({Path(mount.interpreter).parent.parent})"
        if source.requirement is not None
        else "the host's environment"
    )
    if mount.up:
        state = "running" if mount.connection.alive else f"stopped ({mount.connection.lost_reason})"
    else:
        state = mount.start_error or "not started (listed from its manifest)"
    limits = mount.limits.shown()
    return (
        f"isolated in {where}; interpreter {mount.interpreter}; state: {state}; limits: "
        f"memory {limits['memory_mb']} MiB, {limits['cpu_seconds']:g} CPU s per call, "
        f"{limits['open_files']} open files, start within {limits['timeout']:g} s, "
        f"environment variables passed: {', '.join(limits['env']) or 'none'}"
    )
