"""``Toolset.call_sync`` and ``Tool.invoke_sync``: plain code, threads, inside a running loop."""

from __future__ import annotations

import asyncio
import contextvars
import os
import signal
import subprocess
import sys
import textwrap
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from toolpacks import ToolContext, Toolset, tool
from toolpacks.host._approval import ApprovalRequest

LOOP_THREAD = "toolpacks:sync-loop"


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def where() -> dict[str, str]:
    """Name the thread this sync tool runs in."""
    return {"thread": threading.current_thread().name}


@tool
async def where_async() -> dict[str, Any]:
    """Name the thread and loop this async tool runs in."""
    return {"thread": threading.current_thread().name, "loop": id(asyncio.get_running_loop())}


# -- the three situations ----------------------------------------------------------------------


def test_call_sync_from_plain_code() -> None:
    """From code with no event loop, call_sync returns the result of Toolset.call."""
    result = Toolset([add]).call_sync("add", {"a": 1, "b": 2})
    assert (result.value, result.is_error) == (3, False)


def test_invoke_sync_from_plain_code_takes_json_text() -> None:
    """Tool.invoke_sync takes arguments as JSON text too, like invoke."""
    assert add.invoke_sync('{"a": 2, "b": 5}').value == 7


def test_call_sync_from_worker_threads() -> None:
    """Many threads calling at once each get their own result."""
    toolset = Toolset([add])
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda n: toolset.call_sync("add", {"a": n, "b": n}), range(40)))
    assert [r.value for r in results] == [2 * n for n in range(40)]


def test_call_sync_inside_a_running_event_loop() -> None:
    """Sync code inside a coroutine can call: the call runs on the private loop thread."""
    toolset = Toolset([where_async])

    async def main() -> tuple[dict[str, Any], int]:
        return toolset.call_sync("where_async").value, id(asyncio.get_running_loop())

    seen, caller_loop = asyncio.run(main())
    assert seen["thread"] == LOOP_THREAD
    assert seen["loop"] != caller_loop


def test_invoke_sync_inside_a_running_event_loop() -> None:
    """Tool.invoke_sync works inside a running loop too (no asyncio.run error)."""

    async def main() -> int:
        return add.invoke_sync({"a": 20, "b": 22}).value  # type: ignore[no-any-return]

    assert asyncio.run(main()) == 42


def test_sync_tool_still_runs_in_a_worker_thread() -> None:
    """A sync tool whose call has async needs runs neither in the caller's thread nor on the loop.

    Here the need is an ``authorize`` hook; a plain call runs on the caller's thread
    (``tests/integrations/test_adapter_paths.py``).
    """
    seen = Toolset([where], authorizers=[lambda **_: None]).call_sync("where").value["thread"]
    assert seen not in (threading.current_thread().name, LOOP_THREAD)


def test_a_call_from_an_async_tool_on_the_loop_thread_does_not_deadlock() -> None:
    """An async tool that makes a sync call (on the loop thread itself) gets its result."""

    @tool
    async def nested() -> int:
        """Call another tool synchronously."""
        return add.invoke_sync({"a": 1, "b": 1}).value  # type: ignore[no-any-return]

    assert Toolset([nested]).call_sync("nested").value == 2


def test_context_variables_reach_the_tool() -> None:
    """The call runs in a copy of the caller's contextvars context."""
    request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id")

    @tool
    async def read_var() -> str:
        """Read the caller's context variable."""
        return request_id.get("unset")

    request_id.set("r-42")
    assert read_var.invoke_sync().value == "r-42"


# -- behaviour as in async calls -----------------------------------------------------------------


def test_bad_arguments_are_an_error_result_not_an_exception() -> None:
    """As with await call(...), invalid arguments come back as an error result."""
    result = Toolset([add]).call_sync("add", {"a": 1, "b": "x"})
    assert result.error is not None
    assert result.error.kind == "invalid_arguments"


def test_approval_handler_is_asked_and_denial_is_a_result() -> None:
    """A sync approval handler decides; without approval the call is a denied result."""

    @tool(require_approval=True)
    def wipe(path: str) -> str:
        """Remove a path."""
        return f"wiped {path}"

    asked: list[ApprovalRequest] = []

    def handler(request: ApprovalRequest) -> bool:
        asked.append(request)
        return request.arguments["path"] == "/tmp/x"

    toolset = Toolset([wipe], approval=handler)
    assert toolset.call_sync("wipe", {"path": "/tmp/x"}, call_id="c-1").value == "wiped /tmp/x"
    denied = toolset.call_sync("wipe", {"path": "/etc"})
    assert denied.error is not None
    assert denied.error.kind == "denied"
    assert [(r.call_id, r.arguments["path"]) for r in asked][:1] == [("c-1", "/tmp/x")]
    assert len(asked) == 2


def test_timeouts_apply() -> None:
    """A tool's timeout gives a timeout result, and the tool sees its call cancelled."""
    stopped = threading.Event()

    @tool(timeout=0.05)
    def stall(ctx: ToolContext) -> str:
        """Wait until cancelled."""
        if ctx.cancel_event.wait(30):
            stopped.set()
        return "late"

    result = Toolset([stall]).call_sync("stall")
    assert result.error is not None
    assert result.error.kind == "timeout"
    assert stopped.wait(30)


def test_a_locked_tool_is_serialized_across_calling_threads() -> None:
    """lock=True holds across threads: every sync call shares one loop, hence one lock."""
    state = {"running": 0, "peak": 0}
    guard = threading.Lock()

    @tool(lock=True)
    def critical(n: int) -> int:
        """Count how many run at once."""
        with guard:
            state["running"] += 1
            state["peak"] = max(state["peak"], state["running"])
        threading.Event().wait(0.005)
        with guard:
            state["running"] -= 1
        return n

    toolset = Toolset([critical])
    with ThreadPoolExecutor(max_workers=4) as pool:
        values = list(pool.map(lambda n: toolset.call_sync("critical", {"n": n}).value, range(12)))
    assert values == list(range(12))
    assert state["peak"] == 1


# -- exceptions and cancellation -----------------------------------------------------------------


def test_a_hook_exception_propagates_to_the_caller() -> None:
    """An exception raised by a hook reaches the sync caller, as it would the awaiting one."""

    def authorize(**_: Any) -> None:
        raise ValueError("policy store unreachable")

    with pytest.raises(ValueError, match="policy store unreachable"):
        Toolset([add], authorizers=[authorize]).call_sync("add", {"a": 1, "b": 2})


def test_keyboard_interrupt_from_a_hook_reaches_the_caller_and_the_loop_survives() -> None:
    """A BaseException from a hook is raised to the caller; later calls still work."""

    def authorize(**_: Any) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        Toolset([add], authorizers=[authorize]).call_sync("add", {"a": 1, "b": 2})
    assert Toolset([add]).call_sync("add", {"a": 1, "b": 2}).value == 3


def test_a_tool_failure_is_a_result_even_for_base_exceptions() -> None:
    """A tool raising SystemExit gives an error result, as in async calls."""

    @tool
    def leave() -> str:
        """Exit."""
        raise SystemExit(3)

    result = leave.invoke_sync()
    assert result.error is not None
    assert result.error.kind == "tool_error"


def test_cancellation_propagates_as_cancelled_error() -> None:
    """A call that ends cancelled raises asyncio.CancelledError to the sync caller."""

    @tool
    async def cancelled() -> str:
        """Behave as if cancelled."""
        raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        cancelled.invoke_sync()


@pytest.mark.skipif(
    threading.current_thread() is not threading.main_thread(), reason="needs the main thread"
)
def test_interrupting_the_waiting_thread_cancels_the_call() -> None:
    """Ctrl-C while waiting raises KeyboardInterrupt and cancels the running call."""
    started = threading.Event()
    cancelled = threading.Event()

    @tool
    async def forever() -> str:
        """Wait until cancelled."""
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    def interrupt() -> None:
        # Interrupt whether or not the tool started: a call that never starts must end the
        # wait too (the assertion below then says what went wrong), never hang the test.
        started.wait(30)
        signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    killer = threading.Thread(target=interrupt)
    killer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            forever.invoke_sync()
    finally:
        killer.join(60)
        signal.signal(signal.SIGINT, previous)
    assert started.is_set(), "the tool never started"
    assert cancelled.wait(30)


_CTRL_C_ELSEWHERE = textwrap.dedent(
    """
    import asyncio, os, signal, threading
    from toolpacks import tool

    started = threading.Event()

    @tool
    async def forever() -> str:
        \"\"\"Wait until cancelled.\"\"\"
        started.set()
        await asyncio.Event().wait()
        return "never"

    def interrupt():
        started.wait(30)
        os.kill(os.getpid(), signal.SIGINT)  # delivered to this thread: it does not block it

    signal.signal(signal.SIGINT, signal.default_int_handler)
    threading.Thread(target=interrupt, daemon=True).start()
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        forever.invoke_sync()
    except KeyboardInterrupt:
        print("interrupted")
    """
)


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="needs POSIX signals")
def test_ctrl_c_delivered_to_another_thread_still_interrupts_the_wait() -> None:
    """The waiting thread is not the one the kernel interrupts: the Ctrl-C is not lost.

    The main thread blocks SIGINT, so the kernel delivers it to another thread; only a wait
    that wakes up by itself lets the main thread run the handler (an untimed one hangs).
    """
    done = subprocess.run(
        [sys.executable, "-c", _CTRL_C_ELSEWHERE],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.stdout.strip() == "interrupted", done.stderr


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_gets_a_loop_thread_of_its_own() -> None:
    """After fork, the child starts its own loop thread instead of waiting on a dead one."""
    assert add.invoke_sync({"a": 1, "b": 1}).value == 2  # the parent's loop thread runs
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, then leave without running pytest's teardown
        try:
            value = add.invoke_sync({"a": 2, "b": 3}).value
            os.write(write, str(value).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        reported = pipe.read()
    os.waitpid(pid, 0)
    assert reported == "5"
