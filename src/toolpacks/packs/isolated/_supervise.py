"""Watching one call of an isolated pack: the restart it may wait for, the CPU it may use.

- **A call during a restart waits.** After a crash the connection starts the child again no
  sooner than its backoff (``restart_delay``) allows. A call made meanwhile waits for that
  moment when it comes within the call's own timeout, and is then served by the new child; a
  crash loop still backs off (the delay doubles), and a call that cannot wait so long is
  refused at once with the time the restart is due.
- **CPU seconds per call.** While a call runs, the CPU time of the child's whole process tree
  is read every ``CPU_POLL`` seconds (``_child.cpu_seconds``: the child, every live process
  below it, and the children it has reaped); when the call's share passes ``cpu_seconds`` the
  tree is killed and the call fails saying so.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Protocol

from toolpacks.exceptions import ToolError
from toolpacks.packs.isolated._child import cpu_seconds
from toolpacks.packs.mcp import _connection

if TYPE_CHECKING:
    import mcp_types

    from toolpacks.packs._record import PackInfo
    from toolpacks.packs.isolated._child import Runtime
    from toolpacks.packs.isolated._settings import IsolationLimits
    from toolpacks.packs.mcp._connection import McpConnection

__all__ = ["CPU_POLL", "await_restart", "watched"]

CPU_POLL = 0.2
"""Seconds between two looks at a child's CPU time during a call."""


class Watched(Protocol):
    """What ``watched`` needs of an isolated pack's mount."""

    info: PackInfo
    runtime: Runtime
    limits: IsolationLimits

    def stop_child(self, why: str) -> None:
        """Kill the child's process group."""


async def await_restart(pack: str, connection: McpConnection, budget: float) -> None:
    """Wait for the restart of a crashed child when its backoff ends within ``budget`` s.

    Raises:
        ToolError: The restart is due later than the call may wait (it says when).
    """
    if connection.alive or connection.lost_reason is None or connection.retry_at is None:
        return
    wait = connection.retry_at - _connection._now()  # the connection's own clock
    if wait <= 0:
        return
    if wait > budget:
        raise ToolError(
            f"isolated pack '{pack}' stopped ({connection.lost_reason}) and is started again "
            f"in {wait:.1f} s, later than this call may wait ({budget:g} s); call the tool "
            "again then"
        )
    await asyncio.sleep(wait)


async def watched(
    call: asyncio.Future[mcp_types.CallToolResult], mount: Watched
) -> mcp_types.CallToolResult:
    """``call``'s result; the child is killed when the call uses more than its CPU seconds.

    Raises:
        ToolError: The call used more than ``cpu_seconds`` (its child was stopped).
    """
    pid = mount.runtime.pid()
    start = cpu_seconds(pid) if pid is not None else None
    if pid is None or start is None:
        return await call
    allowed = mount.limits.cpu_seconds
    while True:
        done, _ = await asyncio.wait({call}, timeout=CPU_POLL)
        if done:
            return call.result()
        used = cpu_seconds(pid)
        if used is not None and used - start > allowed:
            call.cancel()
            mount.stop_child(f"a call used more than {allowed:g} CPU seconds")
            raise ToolError(
                f"isolated pack '{mount.info.name}': the call used more than its limit of "
                f"{allowed:g} CPU seconds, so its process was stopped; it starts again at "
                "the next call"
            )
